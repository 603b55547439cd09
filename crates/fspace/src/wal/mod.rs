//! A segmented durable log: prepared and recycled segments, group commit,
//! crash recovery.
//!
//! Small records committed with `fdatasync` run much faster when
//! they overwrite blocks that are already **written** than when they append
//! or land in unwritten (fallocated) space on ext4 and xfs
//! (bench/runs/2026-11-22-probe/, bench/runs/2026-11-22-commit/). [`Wal`]
//! keeps every commit in written space without paying for the preparation
//! on the commit path:
//!
//! - The log is a directory of fixed-size segments (`NNNNNNNNNNNN.seg`,
//!   format in `docs/wal-format.md`). A background *preparer* keeps the
//!   next segments ready: a released segment from the recycle pool
//!   (renamed; its blocks are already written, so no I/O), else a new one
//!   grown with the `auto` policy for [`Intent::Log`](crate::Intent::Log)
//!   (zero-fill on ext4 and xfs), or sparse on copy-on-write filesystems,
//!   where filling cannot pay off (`crate::policy::rules::COW_LOG_STRATEGY`), created under
//!   a temporary name, synced, renamed, and its directory synced.
//! - Records are written as whole pages from an in-memory tail page: no
//!   read-before-write of a partial page.
//! - Many threads commit at once; one sync serves the whole group: one
//!   `fdatasync`, or, with `direct-dsync` (the auto choice on ext4 and
//!   xfs), one `O_DIRECT` + `RWF_DSYNC` write of the group's pages.
//! - Opening recovers: verifies every live segment, stops the last one at
//!   its first invalid record, and never returns a record of a segment's
//!   previous life (the record CRC covers the segment sequence).
//! - A failed `fdatasync` or write poisons the log (docs/design.md rule 6).
//!
//! ```no_run
//! use fspace::wal::{Wal, WalOptions};
//! # fn main() -> fspace::Result<()> {
//! let wal = Wal::open("db/wal", WalOptions::default())?;
//! let lsn = wal.commit(b"first record")?; // durable when it returns
//! for rec in wal.read_from(lsn)? {
//!     let rec = rec?;
//!     println!("{}: {} bytes", rec.lsn, rec.data.len());
//! }
//! wal.release_before(lsn)?; // older segments go to the recycle pool
//! wal.close()?;
//! # Ok(()) }
//! ```

mod crc;
mod damage;
mod flush;
pub(crate) mod format;
mod group;
mod log;
mod measure;
mod open;
mod options;
mod preparer;
mod reader;
mod recovery;
mod recovery_report;
mod scan;
mod site;
mod storage;
mod types;
mod view;
mod writer;

#[cfg(test)]
mod tests;

pub use damage::{StopReason, WalDamage};
pub use format::FORMAT_VERSION;
pub use log::Wal;
pub use options::{
    WalOptions, DEFAULT_PREPARE_AHEAD, DEFAULT_PREPARE_DUTY_CYCLE, DEFAULT_RECYCLE_POOL,
    DEFAULT_SEGMENT_SIZE, DEFAULT_WRITES_IN_FLIGHT, DEFAULT_WRITE_BUFFER, DIRECT_IO_ON_LOCAL_FS,
    GATHER_FRACTION, GATHER_MIN_FLUSH, LOCK_NAME, MAX_WRITES_IN_FLIGHT, MAX_WRITE_BUFFER,
    MIN_DUTY_CYCLE, PREPARE_STEP, SPIN_MAX_FLUSH, WRITE_PAGE,
};
pub use reader::{Record, WalReader};
pub use recovery_report::{RecoveryReport, TailReport};
pub use types::{
    max_record, DirectIoChoice, GroupStats, IoFallback, IoRefusal, Lsn, ReleaseReport,
    SegmentGrowth, SegmentInfo, SyncChoice, WalIo, WalStats,
};
pub use view::{WalFollower, WalView};
