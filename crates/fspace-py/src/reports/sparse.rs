//! What a copy (`fspace.copy`) and a dig (`fspace.dig`) did.

use super::common::{json_of, notes, os, report, secs};
use pyo3::prelude::*;
use std::ffi::OsString;

report! {
    /// A copy method tried or ruled out before the one that did the work.
    CopyFallback {
        /// The method (`"clone"`, `"copy_file_range"`, ...).
        method: String,
        /// Why it was not used.
        reason: String,
        /// The errno of the failed call, if one failed.
        errno: Option<i32>,
    }
}

report! {
    /// What a copy did (`fspace.copy`).
    CopyReport + json {
        /// The source.
        src: OsString,
        /// The file written (inside `dst` when `dst` is a directory).
        dst: OsString,
        /// Bytes in the copy.
        len: u64,
        /// How the data moved: `"clone"`, `"copy_file_range"`,
        /// `"read_write"`, `"stream"`, `"device"` or `"none"`.
        method: String,
        /// Methods tried or ruled out before it, and why.
        fallbacks: Vec<CopyFallback>,
        /// The sparse mode used.
        sparse: String,
        /// The reflink mode used.
        reflink: String,
        /// Bytes shared with the source (FICLONE).
        bytes_cloned: u64,
        /// Bytes moved by `copy_file_range`.
        bytes_offloaded: u64,
        /// Bytes written.
        bytes_copied: u64,
        /// Data extents of the source visited; `None` after a clone.
        data_extents: Option<u64>,
        /// Hole ranges in the copy; `None` after a clone.
        holes: Option<u64>,
        /// Bytes in those holes; `None` after a clone.
        hole_bytes: Option<u64>,
        /// Of those, zeros found inside the source's data.
        zero_bytes_holed: u64,
        /// Bytes of unwritten extents kept unwritten (`keep_allocation`).
        bytes_kept_allocated: u64,
        /// Bytes the source has allocated; `None` where `st_blocks` does
        /// not measure allocation (FUSE, network filesystems).
        src_allocated: Option<u64>,
        /// Bytes the copy has allocated; `None` as above.
        dst_allocated: Option<u64>,
        /// Syscalls issued.
        syscalls: u64,
        /// Of those, the write-type ones.
        write_syscalls: u64,
        /// Whether an existing destination was replaced.
        replaced: bool,
        /// Whether mode, owner and times were copied.
        preserved: bool,
        /// Whether the copy was made durable.
        synced: bool,
        /// Other things worth knowing, in words.
        notes: Vec<super::common::Note>,
        /// Wall time in seconds.
        elapsed: f64,
    }
}

impl CopyReport {
    pub(crate) fn from(r: &fspace::CopyReport) -> Self {
        CopyReport {
            src: os(&r.src),
            dst: os(&r.dst),
            len: r.len,
            method: r.method.name().into(),
            fallbacks: r
                .fallbacks
                .iter()
                .map(|f| CopyFallback {
                    method: f.method.name().into(),
                    reason: f.reason.clone(),
                    errno: f.errno,
                })
                .collect(),
            sparse: r.sparse.name().into(),
            reflink: r.reflink.name().into(),
            bytes_cloned: r.bytes_cloned,
            bytes_offloaded: r.bytes_offloaded,
            bytes_copied: r.bytes_copied,
            data_extents: r.data_extents,
            holes: r.holes,
            hole_bytes: r.hole_bytes,
            zero_bytes_holed: r.zero_bytes_holed,
            bytes_kept_allocated: r.bytes_kept_allocated,
            src_allocated: r.src_allocated,
            dst_allocated: r.dst_allocated,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            replaced: r.replaced,
            preserved: r.preserved,
            synced: r.synced,
            notes: notes(&r.notes),
            elapsed: secs(r.elapsed),
            json: json_of(r),
        }
    }
}

report! {
    /// What `fspace.dig` did.
    DigReport + json {
        /// The file.
        path: OsString,
        /// Its length (unchanged).
        len: u64,
        /// The block size zero runs were looked for in.
        block_size: u64,
        /// The allocation unit punches were aligned to, when known.
        allocation_unit: Option<u64>,
        /// Data bytes read and scanned.
        bytes_scanned: u64,
        /// Zero runs punched.
        holes_punched: u64,
        /// Bytes in the ranges punched.
        bytes_punched: u64,
        /// Zero bytes left because they do not fill an allocation unit.
        zero_bytes_kept: u64,
        /// Bytes allocated before; `None` where unknown (FUSE, network).
        allocated_before: Option<u64>,
        /// Bytes allocated after; `None` where unknown.
        allocated_after: Option<u64>,
        /// Bytes freed, measured; `None` where unknown.
        bytes_freed: Option<u64>,
        /// Syscalls issued.
        syscalls: u64,
        /// Whether the result was made durable.
        synced: bool,
        /// Wall time in seconds.
        elapsed: f64,
    }
}

impl DigReport {
    pub(crate) fn from(r: &fspace::DigReport) -> Self {
        DigReport {
            path: os(&r.path),
            len: r.len,
            block_size: r.block_size,
            allocation_unit: r.allocation_unit.as_ref().map(|u| u.bytes),
            bytes_scanned: r.bytes_scanned,
            holes_punched: r.holes_punched,
            bytes_punched: r.bytes_punched,
            zero_bytes_kept: r.zero_bytes_kept,
            allocated_before: r.allocated_before,
            allocated_after: r.allocated_after,
            bytes_freed: r.bytes_freed,
            syscalls: r.syscalls,
            synced: r.synced,
            elapsed: secs(r.elapsed),
            json: json_of(r),
        }
    }
}
