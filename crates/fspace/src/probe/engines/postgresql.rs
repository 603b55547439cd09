//! PostgreSQL 15's WAL: 16 MiB segments written in 8 KiB pages, each
//! commit a `pwrite` of the current page and a sync by `wal_sync_method`.
//! A new segment is written full of zeros first (`wal_init_zero=on`, 8 KiB
//! writes and an `fsync`) or gets one byte at its end (`off`: a sparse
//! file); old segments are renamed for reuse (`wal_recycle=on`) or deleted.
//! `open_datasync` opens the WAL with `O_DSYNC`, and with `O_DIRECT` only
//! under `wal_level=minimal` (no replication or archiving).

use super::common::{beats, case, comment, expect, explain, keep, untorn_offer};
use super::types::{AdviceKind, CaseSpec, EngineAdvice, EngineCase, Gain, Plan, Setting};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;
use crate::units::format_count as commas;
use crate::untorn::{Answer, IoPath};

/// PostgreSQL's WAL page (`XLOG_BLCKSZ`).
const PAGE: usize = 8 << 10;

/// PostgreSQL's WAL segment (`wal_segment_size` as `initdb` makes it).
const SEGMENT: u64 = 16 << 20;

pub(super) const DEFAULT_CASE: &str = "wal_recycle=on, wal_sync_method=fdatasync";
pub(super) const DSYNC_CASE: &str = "wal_recycle=on, wal_sync_method=open_datasync";
pub(super) const DIRECT_CASE: &str =
    "wal_recycle=on, wal_sync_method=open_datasync, wal_level=minimal";
pub(super) const SPARSE_CASE: &str = "wal_recycle=off, wal_init_zero=off";
pub(super) const ZEROED_CASE: &str = "wal_recycle=off, wal_init_zero=on";

pub(super) fn plan(_info: &FsInfo) -> Plan {
    let case = |settings, how: &str, state, method, direct_io, new_file_each| CaseSpec {
        settings,
        how: how.to_string(),
        state,
        method,
        direct_io,
        new_file_each,
    };
    Plan {
        record_size: PAGE,
        file_size: SEGMENT,
        cases: vec![
            case(
                DEFAULT_CASE,
                "8 KiB pages into a recycled (written) 16 MiB segment, fdatasync",
                SpaceState::Recycled,
                SyncMethod::Fdatasync,
                false,
                false,
            ),
            case(
                DSYNC_CASE,
                "8 KiB pages into a recycled segment, each write O_DSYNC",
                SpaceState::Recycled,
                SyncMethod::Dsync,
                false,
                false,
            ),
            case(
                DIRECT_CASE,
                "8 KiB pages into a recycled segment, O_DIRECT + O_DSYNC",
                SpaceState::Recycled,
                SyncMethod::DirectDsync,
                true,
                false,
            ),
            case(
                SPARSE_CASE,
                "8 KiB pages into a new sparse segment each 16 MiB, fdatasync",
                SpaceState::Sparse,
                SyncMethod::Fdatasync,
                false,
                true,
            ),
            case(
                ZEROED_CASE,
                "8 KiB pages into a new zero-filled segment each 16 MiB (its zeros written and synced first, counted), fdatasync",
                SpaceState::ZeroFilled,
                SyncMethod::Fdatasync,
                false,
                true,
            ),
        ],
    }
}

pub(super) fn decide(info: &FsInfo, a: &mut EngineAdvice, untorn: &[Answer]) {
    let (Some(default), Some(dsync), Some(direct), Some(sparse), Some(zeroed)) = (
        case(a, DEFAULT_CASE).cloned(),
        case(a, DSYNC_CASE).cloned(),
        case(a, DIRECT_CASE).cloned(),
        case(a, SPARSE_CASE).cloned(),
        case(a, ZEROED_CASE).cloned(),
    ) else {
        return;
    };
    let mut settings = vec![];
    // The sync method, in recycled segments (the steady state).
    let sync = sync_method(&default, &dsync, &mut settings);
    let expected = match new_segments(&default, &sparse, &zeroed, &mut settings) {
        Some(new) => {
            if sync.settings != default.settings {
                a.notes.push(Note::new(
                    NoteKind::CombinationNotMeasured,
                    "open_datasync and new segments each measured faster alone; together they were not measured: the expected rate is the segments' with fdatasync",
                ));
            }
            new
        }
        None => sync,
    };
    settings.push(Setting {
        name: "full_page_writes".into(),
        value: "on".into(),
        default: "on".into(),
        kind: AdviceKind::KeepForSafety,
        reason: safety_reason(info, untorn),
        gain: None,
        requires: vec![],
    });
    // O_DIRECT on the WAL: only with wal_level=minimal, against the best
    // of the rest.
    direct_io(&direct, expected, &mut settings, &mut a.notes);
    a.expected = expect(expected, &format!("the case {}", expected.settings));
    a.settings = settings;
}

/// `wal_sync_method`: `open_datasync` where its O_DSYNC writes beat a
/// write + `fdatasync` per commit, else the default. Returns the case of
/// the method kept.
fn sync_method<'a>(
    default: &'a EngineCase,
    dsync: &'a EngineCase,
    settings: &mut Vec<Setting>,
) -> &'a EngineCase {
    let (faster, words) = beats(&dsync.figures, &default.figures);
    if faster {
        settings.push(Setting {
            name: "wal_sync_method".into(),
            value: "open_datasync".into(),
            default: "fdatasync".into(),
            kind: AdviceKind::Change,
            reason: format!("O_DSYNC writes against a write + fdatasync per commit, {words}"),
            gain: Gain::of(&dsync.figures, &default.figures),
            requires: vec![],
        });
        dsync
    } else {
        settings.push(keep(
            "wal_sync_method",
            "fdatasync",
            format!("open_datasync (O_DSYNC writes) was {words}"),
        ));
        default
    }
}

/// `wal_recycle` and `wal_init_zero`: new segments instead of recycled
/// ones, zero-filled (the default `wal_init_zero=on`) unless sparse ones
/// beat them by the same rule, each with its segment's preparation
/// counted. Returns the case of the new segments where they beat
/// recycling (`None`: recycling stays).
fn new_segments<'a>(
    default: &EngineCase,
    sparse: &'a EngineCase,
    zeroed: &'a EngineCase,
    settings: &mut Vec<Setting>,
) -> Option<&'a EngineCase> {
    let (sparse_wins, sparse_words) = beats(&sparse.figures, &zeroed.figures);
    let new = if sparse_wins { sparse } else { zeroed };
    let (faster, words) = beats(&new.figures, &default.figures);
    if !faster {
        settings.push(keep(
            "wal_recycle",
            "on",
            format!("new segments (the faster of sparse and zero-filled, preparation counted) were {words}"),
        ));
        settings.push(keep(
            "wal_init_zero",
            "on",
            format!(
                "with recycling, segments are made new only until the pool fills; zero-filled ones then take overwrites as recycled ones do (sparse: {} commits/s, zero-filled with its zeros: {})",
                commas(sparse.figures.commits_per_sec),
                commas(zeroed.figures.commits_per_sec)
            ),
        ));
        return None;
    }
    settings.push(Setting {
        name: "wal_recycle".into(),
        value: "off".into(),
        default: "on".into(),
        kind: AdviceKind::Change,
        reason: format!(
            "a new segment for every 16 MiB ({}) against reusing written ones, {words}",
            if sparse_wins { "sparse" } else { "zero-filled" }
        ),
        gain: Gain::of(&new.figures, &default.figures),
        requires: vec![],
    });
    settings.push(if sparse_wins {
        Setting {
            name: "wal_init_zero".into(),
            value: "off".into(),
            default: "on".into(),
            kind: AdviceKind::Change,
            reason: format!(
                "new segments left sparse against zero-filled ones (their zeros counted), {sparse_words}"
            ),
            gain: Gain::of(&sparse.figures, &zeroed.figures),
            requires: vec![],
        }
    } else {
        keep(
            "wal_init_zero",
            "on",
            format!("new segments left sparse were, against zero-filled ones (their zeros counted), {sparse_words}"),
        )
    });
    Some(new)
}

/// O_DIRECT on the WAL, which PostgreSQL uses only under
/// `wal_level=minimal`: a trade-off where it beat `best`, else a note that
/// it is not worth its cost here.
fn direct_io(
    direct: &EngineCase,
    best: &EngineCase,
    settings: &mut Vec<Setting>,
    notes: &mut Vec<Note>,
) {
    let (faster, words) = beats(&direct.figures, &best.figures);
    if !faster {
        notes.push(Note::new(
            NoteKind::TradeOffNotFaster,
            format!("the WAL with O_DIRECT (open_datasync under wal_level=minimal, which gives up replication) was {words}: not worth its cost here"),
        ));
        return;
    }
    settings.push(Setting {
        name: "wal_sync_method".into(),
        value: "open_datasync".into(),
        default: "fdatasync".into(),
        kind: AdviceKind::TradeOff,
        reason: format!(
            "with wal_level=minimal PostgreSQL writes the WAL with O_DIRECT, {words} (against {}); minimal gives up streaming replication, WAL archiving and point-in-time recovery",
            best.settings
        ),
        gain: Gain::of(&direct.figures, &best.figures),
        requires: vec![
            "wal_level=minimal".into(),
            "max_wal_senders=0".into(),
            "archive_mode=off".into(),
        ],
    });
}

/// Why the page-image protection stays on: PostgreSQL 15 asks for no
/// untorn writes, and what the filesystem offers for its data pages (8 KiB
/// through the page cache: the probe's answer, `untorn`).
pub(super) fn safety_reason(info: &FsInfo, untorn: &[Answer]) -> String {
    let cow = if info.copy_on_write {
        " (copy-on-write does not change this: a page write can still be cut short)"
    } else {
        ""
    };
    let (offered, offer) = untorn_offer(
        untorn,
        PAGE as u64,
        IoPath::Buffered,
        "(through the page cache, as PostgreSQL 15 writes them)",
    );
    let then = if offered == Some(true) {
        "; the filesystem could keep them whole, but only for writes that ask, and PostgreSQL 15's do not"
    } else {
        ""
    };
    format!(
        "PostgreSQL 15 does not ask the kernel for untorn 8 KiB page writes (no RWF_ATOMIC), so a power cut can leave a torn page that only the full page image repairs{cow}. {offer}{then}"
    )
}

pub(super) fn fragment(a: &EngineAdvice) -> String {
    let mut o = comment(&format!(
        "postgresql.conf: fspace's advice for {} on {} ({} rounds)",
        a.versions, a.filesystem, a.rounds
    ));
    for s in &a.settings {
        o.push_str(&explain(s));
        if s.kind == AdviceKind::TradeOff {
            for r in &s.requires {
                o.push_str(&format!("#{}\n", r.replacen('=', " = ", 1)));
            }
            o.push_str(&format!("#{} = {}\n", s.name, s.value));
        } else {
            o.push_str(&format!("{} = {}\n", s.name, s.value));
        }
    }
    o
}
