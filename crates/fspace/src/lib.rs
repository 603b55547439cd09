//! fspace: file space management for storage software on Linux.
//!
//! How a file is grown decides how fast later durable writes are and what a
//! copy costs. This crate:
//!
//! - describes the filesystem under a path and **measures** what it can do
//!   ([`fs_info()`]);
//! - grows files with one of five [`Strategy`]s, or lets the `auto` policy
//!   pick by filesystem and [`Intent`], falling back visibly ([`grow()`]);
//! - maps a file's extents as holes, unwritten, written and shared ranges
//!   ([`map_file`]);
//! - copies files without losing their holes, sharing or offloading blocks
//!   where the filesystem can, and digs holes in place ([`copy()`],
//!   [`SparseWriter`], [`dig()`]);
//! - keeps a segmented durable log whose commits overwrite prepared,
//!   written space, with group commit and crash recovery ([`Wal`]);
//! - measures what each way of preparing space is worth on a filesystem,
//!   recommends a policy per intent, and saves it so that `auto` follows
//!   it there ([`probe::probe`]).
//!
//! ```no_run
//! use fspace::{grow, GrowOptions, Intent};
//! # fn main() -> fspace::Result<()> {
//! let opts = GrowOptions::default().intent(Intent::Log).create(true).sync(true);
//! let report = grow("wal/000001.seg", 16 << 20, &opts)?;
//! println!("{} via {} ({} syscalls)", report.new_len, report.strategy, report.syscalls);
//! # Ok(()) }
//! ```
//!
//! It never calls glibc's `posix_fallocate`, which silently writes one byte
//! per block where `fallocate` is unsupported.

#![deny(missing_docs)]

#[macro_use]
mod setters;

pub mod bench;
pub mod crashtest;
mod durable;
mod errno;
mod error;
mod extents;
mod fs_info;
mod grow;
mod invalid;
mod note;
mod policy;
pub mod probe;
mod reason;
mod runs;
mod sparse;
mod stale;
mod strategy;
mod sys;
mod units;
pub mod untorn;
pub mod wal;
mod zeros;

pub use durable::replace_file;
pub use error::{errno_of, Error, ErrorKind, Result};
pub use extents::{
    map_file, space_use, Extent, ExtentMap, ExtentState, MapMethod, MapOptions, SpaceUse, Summary,
};
pub use fs_info::{
    fs_info, AllocUnit, AllocUnitSource, BlockDevice, Capabilities, Capability, FsInfo, FsKind,
};
pub use fs_info::{
    DeviceFlushCount, FlushCounter, FlushSnapshot, FlushVerdict, Flushes, WriteCache,
};
pub use grow::{allocate_range, grow, grow_fd, GrowOptions, GrowReport, RangeReport, TEMP_MARKER};
pub use invalid::{InvalidOption, ParseError};
pub use note::{Note, NoteKind};
pub use policy::{plan, Plan, SavedProbe, SavedResults, StrategyChoice};
pub use reason::Reason;
pub use sparse::{
    copy, dig, CopyFallback, CopyMethod, CopyOptions, CopyReport, DigOptions, DigReport,
    ReflinkMode, SparseMode, SparseStats, SparseWriter, SparseWriterOptions,
};
pub use strategy::{Fallback, Intent, Progress, Strategy, SyncMethod};
pub use units::{Count, Seconds, Size, SizeError};
pub use wal::{Lsn, Wal, WalOptions};

/// Internals that fspace's own benchmark programs (`bench/`) and tests
/// reach into: the zero scan and the record CRC they time, the per-thread
/// syscall counters, the log's on-disk encoder (to write damaged logs),
/// the built-in policy and the probe's decision. Only with the `internals`
/// feature, which nothing but fspace's tests and `fspace-bench` turn on;
/// not part of the API promise (docs/api.md).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::fs_info::{block_devices, SCRATCH_PREFIX};
    pub use crate::policy::built_in;
    pub use crate::policy::saved::parse_saved;
    pub use crate::probe::decide::recommend;
    pub use crate::sparse::COPY_WRITE_SIZE;
    pub use crate::sys::{counters, Counters};
    pub use crate::wal::format::{
        crc32c_append, decode_record, encode_padding, encode_record, record_crc, record_span,
        segment_name, Decoded, EndReason, HeaderProblem, RecordKey, SegmentHeader, FORMAT_V1,
        FORMAT_VERSION, RECORD_ALIGN, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN,
    };
    pub use crate::zeros::is_zero;
}
