//! MariaDB 10.11's InnoDB redo log: one file (`ib_logfile0`, made with
//! `fallocate`, then written around in circles), each commit a write of
//! the log's new blocks and an `fdatasync`. The log is written with
//! `O_DIRECT` (`innodb_log_file_buffering=OFF`) only where InnoDB finds
//! the device's `queue/physical_block_size` in sysfs for the file's
//! device number (or its parent's, for a partition): not on btrfs or
//! tmpfs, whose device numbers are not block devices (seen in
//! bench/runs/2026-11-27-engines-strace/). `innodb_flush_method=O_DSYNC` opens the log `O_DSYNC`
//! (with `O_DIRECT` where it is used) and drops the `fdatasync`.

use super::common::{beats, case, comment, expect, explain, keep, untorn_offer};
use super::types::{AdviceKind, CaseSpec, EngineAdvice, Gain, Plan, Setting};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;
use crate::untorn::{Answer, IoPath};
use std::path::Path;

/// InnoDB's log block where it buffers the log (its error log says
/// "Buffered log writes (block size=512 bytes)"): each commit of a small
/// transaction writes its new blocks, one or two, rewriting the partial
/// last one (bench/runs/2026-11-27-engines-strace/).
const BUFFERED_BLOCK: usize = 512;

pub(super) const DEFAULT_CASE: &str = "innodb_flush_method=O_DIRECT";
pub(super) const DSYNC_CASE: &str = "innodb_flush_method=O_DSYNC";
pub(super) const BUFFERED_CASE: &str = "innodb_flush_method=O_DIRECT, innodb_log_file_buffering=ON";

/// The block size InnoDB writes its log in with `O_DIRECT` on the
/// filesystem of `dir`, where it can: the device's
/// `queue/physical_block_size` in sysfs for the directory's device number
/// (or its parent's, for a partition), the two paths InnoDB tries. `None`
/// where neither can be read (btrfs, tmpfs) or the size is one InnoDB does
/// not take (outside 64..=4096, or not a power of two): InnoDB then
/// buffers its log.
pub(super) fn log_direct_block(dir: &Path) -> Option<usize> {
    let st = crate::sys::stat(dir).ok()?;
    let (major, minor) = (rustix::fs::major(st.dev), rustix::fs::minor(st.dev));
    // As os0file.cc: the parent's entry only when the device's cannot be
    // read; a size outside 64..=4096 or not a power of two makes InnoDB
    // buffer its log.
    let read = |q: &str| {
        std::fs::read_to_string(format!(
            "/sys/dev/block/{major}:{minor}/{q}/physical_block_size"
        ))
    };
    let text = read("queue").or_else(|_| read("../queue")).ok()?;
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|b| (64..=4096).contains(b) && b.is_power_of_two())
}

/// Whether InnoDB can write its log with `O_DIRECT` on the filesystem of
/// `dir` (see [`log_direct_block`]).
pub(super) fn log_direct_possible(dir: &Path) -> bool {
    log_direct_block(dir).is_some()
}

pub(super) fn plan(info: &FsInfo, file_size: u64) -> Plan {
    let block = log_direct_block(&info.path);
    let direct = block.is_some();
    // Every case writes InnoDB's block: the device's physical block with
    // O_DIRECT (its writes must be whole blocks), 512 B where it buffers.
    let size = block.unwrap_or(BUFFERED_BLOCK);
    let bytes = crate::units::format_human(size as u64);
    let case = |settings, how: String, method, direct_io| CaseSpec {
        settings,
        how,
        state: SpaceState::Recycled,
        method,
        direct_io,
        new_file_each: false,
    };
    let how_default = if direct {
        format!("{bytes} writes with O_DIRECT into the written log, fdatasync")
    } else {
        format!("{bytes} buffered writes into the written log, fdatasync (InnoDB buffers the log here whatever innodb_log_file_buffering says)")
    };
    let mut cases = vec![
        case(DEFAULT_CASE, how_default, SyncMethod::Fdatasync, direct),
        case(
            DSYNC_CASE,
            format!(
                "{bytes} writes into the written log, O_DSYNC{}",
                if direct { " with O_DIRECT" } else { "" }
            ),
            if direct {
                SyncMethod::DirectDsync
            } else {
                SyncMethod::Dsync
            },
            direct,
        ),
    ];
    if direct {
        cases.push(case(
            BUFFERED_CASE,
            format!("{bytes} buffered writes into the written log, fdatasync"),
            SyncMethod::Fdatasync,
            false,
        ));
    }
    Plan {
        record_size: size,
        file_size,
        cases,
    }
}

pub(super) fn decide(info: &FsInfo, a: &mut EngineAdvice, untorn: &[Answer]) {
    let Some(default) = case(a, DEFAULT_CASE).cloned() else {
        return;
    };
    let mut settings = vec![];
    let mut expected = default.clone();
    match case(a, DSYNC_CASE).cloned() {
        Some(dsync) => {
            let (faster, words) = beats(&dsync.figures, &default.figures);
            if faster {
                settings.push(Setting {
                    name: "innodb_flush_method".into(),
                    value: "O_DSYNC".into(),
                    default: "O_DIRECT".into(),
                    kind: AdviceKind::Change,
                    reason: format!(
                        "the redo log opened O_DSYNC against a write + fdatasync per commit, {words}; O_DSYNC also leaves the data files' page writes buffered (measured here: the log)"
                    ),
                    gain: Gain::of(&dsync.figures, &default.figures),
                    requires: vec![],
                });
                expected = dsync;
            } else {
                settings.push(keep(
                    "innodb_flush_method",
                    "O_DIRECT",
                    format!("O_DSYNC on the redo log was {words}"),
                ));
            }
        }
        None => settings.push(keep(
            "innodb_flush_method",
            "O_DIRECT",
            "O_DSYNC was not measured".into(),
        )),
    }
    match case(a, BUFFERED_CASE).cloned() {
        Some(buffered) => {
            let (faster, words) = beats(&buffered.figures, &default.figures);
            if faster && expected.settings == DEFAULT_CASE {
                settings.push(Setting {
                    name: "innodb_log_file_buffering".into(),
                    value: "ON".into(),
                    default: "OFF".into(),
                    kind: AdviceKind::Change,
                    reason: format!("buffered log writes against O_DIRECT ones, {words}"),
                    gain: Gain::of(&buffered.figures, &default.figures),
                    requires: vec![],
                });
                expected = buffered;
            } else {
                settings.push(keep(
                    "innodb_log_file_buffering",
                    "OFF",
                    format!("buffered log writes were {words}"),
                ));
            }
        }
        None => settings.push(Setting {
            name: "innodb_log_file_buffering".into(),
            value: "OFF".into(),
            default: "OFF".into(),
            kind: AdviceKind::NotMeasured,
            reason: format!(
                "InnoDB buffers its log on {} whatever this says: the device number of its files has no queue/physical_block_size in sysfs",
                info.display_name()
            ),
            gain: None,
            requires: vec![],
        }),
    }
    settings.push(Setting {
        name: "innodb_doublewrite".into(),
        value: "ON".into(),
        default: "ON".into(),
        kind: AdviceKind::KeepForSafety,
        reason: doublewrite_reason(&settings, untorn),
        gain: None,
        requires: vec![],
    });
    settings.push(Setting {
        name: "innodb_flush_log_at_trx_commit".into(),
        value: "1".into(),
        default: "1".into(),
        kind: AdviceKind::KeepForSafety,
        reason: "every commit durable when it returns: 0 and 2 are faster because they lose the last second of commits in a crash, which no measurement of this filesystem changes".into(),
        gain: None,
        requires: vec![],
    });
    if !log_direct_possible(&info.path) {
        a.notes.push(Note::new(
            NoteKind::EngineOverrides,
            "InnoDB keeps its redo log buffered here (innodb_log_file_buffering reads ON or OFF, the writes are buffered): the cases measured buffered writes",
        ));
    }
    a.expected = expect(&expected, &format!("the case {}", expected.settings));
    a.settings = settings;
}

/// InnoDB's data page (`innodb_page_size`'s default).
const DATA_PAGE: u64 = 16 << 10;

/// Why the doublewrite buffer stays on: MariaDB 10.11 asks for no untorn
/// writes, and what the filesystem offers for its 16 KiB data pages
/// (the probe's answer, `untorn`) through the path InnoDB writes them:
/// `O_DIRECT` with `innodb_flush_method=O_DIRECT` (the default), the page
/// cache with `O_DSYNC` (when the advice changes to it).
pub(super) fn doublewrite_reason(settings: &[Setting], untorn: &[Answer]) -> String {
    let dsync = settings.iter().any(|s| {
        s.name == "innodb_flush_method" && s.kind == AdviceKind::Change && s.value == "O_DSYNC"
    });
    let (io, how) = if dsync {
        (
            IoPath::Buffered,
            "(through the page cache, as innodb_flush_method=O_DSYNC writes them)",
        )
    } else {
        (
            IoPath::Direct,
            "(with O_DIRECT, as innodb_flush_method=O_DIRECT writes them)",
        )
    };
    let (offered, offer) = untorn_offer(untorn, DATA_PAGE, io, how);
    let then = if offered == Some(true) {
        "; the filesystem could keep them whole, but only for writes that ask, and MariaDB 10.11's do not"
    } else {
        ""
    };
    format!(
        "MariaDB 10.11 does not ask the kernel for untorn 16 KiB page writes (no RWF_ATOMIC), so a power cut can tear a page; the doublewrite buffer holds the whole copy that repairs it. {offer}{then}"
    )
}

pub(super) fn fragment(a: &EngineAdvice) -> String {
    let mut o = comment(&format!(
        "my.cnf: fspace's advice for {} on {} ({} rounds)",
        a.versions, a.filesystem, a.rounds
    ));
    o.push_str("[mysqld]\n");
    for s in &a.settings {
        o.push_str(&explain(s));
        if s.kind == AdviceKind::TradeOff {
            o.push_str(&format!("#{} = {}\n", s.name, s.value));
        } else {
            o.push_str(&format!("{} = {}\n", s.name, s.value));
        }
    }
    o
}
