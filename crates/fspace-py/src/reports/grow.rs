//! What growing a file or allocating a range did (`fspace.grow`,
//! `fspace.allocate`), and the strategies they fell back from.

use super::common::{json_of, notes, os, report, secs};
use super::untorn::UntornReady;
use pyo3::prelude::*;
use std::ffi::OsString;

report! {
    /// A strategy tried and abandoned for the next one.
    Fallback {
        /// The strategy tried (`"allocate"`, ...).
        strategy: String,
        /// Why it was abandoned: the failed call, its errno and kind.
        error: super::common::Reason,
        /// Its errno.
        errno: i32,
    }
}

fn fallbacks(f: &[fspace::Fallback]) -> Vec<Fallback> {
    f.iter()
        .map(|f| Fallback {
            strategy: f.strategy.name().into(),
            error: super::common::reason(&f.error),
            errno: f.errno(),
        })
        .collect()
}

report! {
    /// What a growth did (`fspace.grow`).
    GrowReport + json {
        /// The file grown.
        path: OsString,
        /// The filesystem's name.
        filesystem: String,
        /// The intent given.
        intent: String,
        /// The strategy asked for; `None` means `"auto"`.
        requested: Option<String>,
        /// The strategy that did the work.
        strategy: String,
        /// Why that ladder was chosen.
        reason: String,
        /// The saved probe measurement `auto` followed, if any.
        saved_probe: Option<OsString>,
        /// Strategies tried before it, with their errors.
        fallbacks: Vec<Fallback>,
        /// Other things worth knowing, in words.
        notes: Vec<super::common::Note>,
        /// Length before.
        old_len: u64,
        /// Length after (unchanged by `reserve`).
        new_len: u64,
        /// The length asked for.
        target_len: u64,
        /// Bytes written (zero-fill only).
        bytes_written: u64,
        /// Syscalls the growth issued.
        syscalls: u64,
        /// Of those, the write-type ones.
        write_syscalls: u64,
        /// Whether the result was made durable.
        synced: bool,
        /// Whether the file was created.
        created: bool,
        /// Wall time in seconds.
        elapsed: f64,
        /// With `untorn_unit`: the extent-size hint and the layout of
        /// every unit afterwards; `None` otherwise.
        untorn: Option<UntornReady>,
        /// Whether the file is no-copy-on-write for this growth (log
        /// space on btrfs: made NOCOW while empty, then zero-filled).
        nocow: bool,
    }
}

impl GrowReport {
    pub(crate) fn from(r: &fspace::GrowReport) -> Self {
        GrowReport {
            path: os(&r.path),
            filesystem: r.filesystem.clone(),
            intent: r.intent.name().into(),
            requested: r.requested.map(|s| s.name().into()),
            strategy: r.strategy.name().into(),
            reason: r.reason.clone(),
            saved_probe: r.saved_probe.as_deref().map(os),
            fallbacks: fallbacks(&r.fallbacks),
            notes: notes(&r.notes),
            old_len: r.old_len,
            new_len: r.new_len,
            target_len: r.target_len,
            bytes_written: r.bytes_written,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            synced: r.synced,
            created: r.created,
            elapsed: secs(r.elapsed),
            untorn: r.untorn.as_ref().map(UntornReady::from),
            nocow: r.nocow,
            json: json_of(r),
        }
    }
}

report! {
    /// What `fspace.allocate` did.
    RangeReport + json {
        /// The file, as named (a descriptor by its `/proc/self/fd` link).
        path: OsString,
        /// The range's first byte.
        offset: u64,
        /// The range's length.
        length: u64,
        /// `"allocate"` (one fallocate) or `"zero-fill"` (zero writes of
        /// the holes and of the part beyond EOF).
        strategy: String,
        /// `allocate`, with its error, when the fill was used instead.
        fallbacks: Vec<Fallback>,
        /// Length before.
        old_len: u64,
        /// Length after: `max(old_len, offset + length)`.
        new_len: u64,
        /// Bytes of holes inside the old length that were filled.
        holes_filled: u64,
        /// Zero bytes written.
        bytes_written: u64,
        /// False when `SEEK_HOLE` could not show the holes (sshfs): the
        /// blocks that read as zeros were written instead.
        holes_known: bool,
        /// Syscalls issued.
        syscalls: u64,
        /// Of which change the file.
        write_syscalls: u64,
        /// Wall time in seconds.
        elapsed: f64,
    }
}

impl RangeReport {
    pub(crate) fn from(r: &fspace::RangeReport) -> Self {
        RangeReport {
            path: os(&r.path),
            offset: r.range.start,
            length: r.range.end - r.range.start,
            strategy: r.strategy.name().into(),
            fallbacks: fallbacks(&r.fallbacks),
            old_len: r.old_len,
            new_len: r.new_len,
            holes_filled: r.holes_filled,
            bytes_written: r.bytes_written,
            holes_known: r.holes_known,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            elapsed: secs(r.elapsed),
            json: json_of(r),
        }
    }
}
