//! RocksDB 7.8's write-ahead log: a new `*.log` file per memtable, space
//! reserved past its end with `fallocate(FALLOC_FL_KEEP_SIZE)`
//! (`allow_fallocate`, on by default; a failure is ignored), each write a
//! `write()` appended to it and, with `sync=true`, an `fdatasync`.
//! `recycle_log_file_num` reuses old log files, but RocksDB silently sets
//! it to 0 unless `wal_recovery_mode` is one that may skip damaged
//! records (`kSkipAnyCorruptedRecords`): it reads back 0 in the OPTIONS
//! file the database writes.

use super::common::{beats, case, comment, expect, explain, keep};
use super::types::{AdviceKind, CaseSpec, EngineAdvice, Gain, Plan, Setting};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;

/// Bytes per commit: one `db_bench` write (16-byte key, 100-byte value)
/// with its batch and record headers, rounded up.
const RECORD: usize = 128;

pub(super) const DEFAULT_CASE: &str = "allow_fallocate=true";
pub(super) const NO_FALLOCATE_CASE: &str = "allow_fallocate=false";
pub(super) const RECYCLE_CASE: &str =
    "recycle_log_file_num=4, wal_recovery_mode=kSkipAnyCorruptedRecords";

pub(super) fn plan(file_size: u64) -> Plan {
    let case = |settings, how: &str, state| CaseSpec {
        settings,
        how: how.to_string(),
        state,
        method: SyncMethod::Fdatasync,
        direct_io: false,
        new_file_each: false,
    };
    Plan {
        record_size: RECORD,
        file_size,
        cases: vec![
            case(
                DEFAULT_CASE,
                "128-byte writes appended into space reserved with fallocate(KEEP_SIZE), fdatasync",
                SpaceState::Preallocated,
            ),
            case(
                NO_FALLOCATE_CASE,
                "128-byte writes appended to a file with nothing reserved, fdatasync",
                SpaceState::Appended,
            ),
            case(
                RECYCLE_CASE,
                "128-byte writes over a recycled (written) log file, fdatasync",
                SpaceState::Recycled,
            ),
        ],
    }
}

pub(super) fn decide(_info: &FsInfo, a: &mut EngineAdvice) {
    let (Some(default), Some(plain), Some(recycled)) = (
        case(a, DEFAULT_CASE).cloned(),
        case(a, NO_FALLOCATE_CASE).cloned(),
        case(a, RECYCLE_CASE).cloned(),
    ) else {
        return;
    };
    let mut settings = vec![];
    let standing = if !default.figures.measured() {
        // No fallocate here: RocksDB ignores the failure and appends.
        settings.push(keep(
            "allow_fallocate",
            "true",
            format!(
                "fallocate does not work here ({}), so RocksDB already appends without reserving space",
                default
                    .figures
                    .unsupported
                    .as_ref()
                    .map_or("no commit completed", |r| r.text.as_str())
            ),
        ));
        plain.clone()
    } else {
        let (faster, words) = beats(&plain.figures, &default.figures);
        if faster {
            settings.push(Setting {
                name: "allow_fallocate".into(),
                value: "false".into(),
                default: "true".into(),
                kind: AdviceKind::Change,
                reason: format!(
                    "appending with nothing reserved against appending into fallocate(KEEP_SIZE) space, {words}"
                ),
                gain: Gain::of(&plain.figures, &default.figures),
                requires: vec![],
            });
            plain.clone()
        } else {
            settings.push(keep(
                "allow_fallocate",
                "true",
                format!("appending with nothing reserved was {words}"),
            ));
            default.clone()
        }
    };
    settings.push(Setting {
        name: "wal_bytes_per_sync".into(),
        value: "0".into(),
        default: "0".into(),
        kind: AdviceKind::NotMeasured,
        reason: "RocksDB starts background write-back every that many bytes only for writes that are not synced; with sync=true every write is synced, so it changes nothing".into(),
        gain: None,
        requires: vec![],
    });
    settings.push(Setting {
        name: "use_direct_io_for_flush_and_compaction".into(),
        value: "false".into(),
        default: "false".into(),
        kind: AdviceKind::NotMeasured,
        reason: "it changes how memtables are flushed and files compacted (SST writes), not how commits reach the log; the probe measures commits".into(),
        gain: None,
        requires: vec![],
    });
    let (faster, words) = beats(&recycled.figures, &standing.figures);
    if faster {
        settings.push(Setting {
            name: "recycle_log_file_num".into(),
            value: "4".into(),
            default: "0".into(),
            kind: AdviceKind::TradeOff,
            reason: format!(
                "writes over a recycled log file against {}, {words}; RocksDB keeps recycling only with wal_recovery_mode=kSkipAnyCorruptedRecords, which may skip damaged records on recovery instead of stopping at them",
                standing.settings
            ),
            gain: Gain::of(&recycled.figures, &standing.figures),
            requires: vec!["wal_recovery_mode=kSkipAnyCorruptedRecords".into()],
        });
    } else {
        settings.push(keep(
            "recycle_log_file_num",
            "0",
            format!(
                "recycled log files (which need wal_recovery_mode=kSkipAnyCorruptedRecords) were {words}"
            ),
        ));
    }
    if settings.iter().all(|s| s.kind != AdviceKind::TradeOff) && !faster {
        a.notes.push(Note::new(
            NoteKind::TradeOffNotFaster,
            "recycling log files would cost recovery's strictness and measured no faster here: not offered",
        ));
    }
    a.expected = expect(&standing, &format!("the case {}", standing.settings));
    a.settings = settings;
}

pub(super) fn fragment(a: &EngineAdvice) -> String {
    let mut o = comment(&format!(
        "RocksDB OPTIONS file: fspace's advice for {} on {} ({} rounds).",
        a.versions, a.filesystem, a.rounds
    ));
    o.push_str(&comment(
        "Load it with DB::Open after LoadOptionsFromFile, or db_bench --options_file; the database writes the options it took effect with to OPTIONS-* in its directory.",
    ));
    o.push_str("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n\n[DBOptions]\n");
    for s in &a.settings {
        for line in explain(s).lines() {
            o.push_str(&format!("  {line}\n"));
        }
        if s.kind == AdviceKind::TradeOff {
            for r in &s.requires {
                o.push_str(&format!("  #{r}\n"));
            }
            o.push_str(&format!("  #{}={}\n", s.name, s.value));
        } else {
            o.push_str(&format!("  {}={}\n", s.name, s.value));
        }
    }
    o.push_str("\n[CFOptions \"default\"]\n\n[TableOptions/BlockBasedTable \"default\"]\n");
    o
}

pub(super) fn db_bench_flags(a: &EngineAdvice) -> String {
    let flags: Vec<String> = a
        .settings
        .iter()
        .filter(|s| {
            s.kind != AdviceKind::TradeOff
                && matches!(
                    s.name.as_str(),
                    "wal_bytes_per_sync" | "use_direct_io_for_flush_and_compaction"
                )
        })
        .map(|s| format!("--{}={}", s.name, s.value))
        .collect();
    format!(
        "db_bench --options_file=rocksdb.options.fspace --sync=1 (db_bench 7.8 has no flag for allow_fallocate or recycle_log_file_num, and takes its options from the file alone when given one); without the file: {}",
        flags.join(" ")
    )
}
