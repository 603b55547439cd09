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
//!   where filling cannot pay off ([`crate::policy::rules::COW_LOG_STRATEGY`]), created under
//!   a temporary name, synced, renamed, and its directory synced.
//! - Records are written as whole pages from an in-memory tail page: no
//!   read-before-write of a partial page, no `O_DSYNC`.
//! - Many threads commit at once; one `fdatasync` serves the whole group.
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
mod flush;
pub mod format;
mod open;
mod options;
mod preparer;
mod reader;
mod recovery;
mod scan;
mod storage;
mod view;
mod writer;

#[cfg(test)]
mod fallback_tests;
#[cfg(test)]
mod model;
#[cfg(test)]
mod power_cut;

pub use options::*;
pub use reader::{Record, WalReader};
pub use recovery::{RecoveryReport, TailReport};
pub use view::{WalFollower, WalView};
use writer::{poisoned, prepare_error, Shared};

use crate::error::Result;
use format::{encode_record, record_span, RecordKey, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A log sequence number: records are numbered 1, 2, 3, ... in the order
/// they were appended, across segments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Lsn(pub u64);

impl std::fmt::Display for Lsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A live segment.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentInfo {
    /// Its sequence number.
    pub seq: u64,
    /// The LSN of its first record (of the next record, if it has none).
    pub first_lsn: Lsn,
    /// Its file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// Counters of what a [`Wal`] has done since it was opened.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct WalStats {
    /// Records appended.
    pub records: u64,
    /// Payload bytes appended.
    pub payload_bytes: u64,
    /// Write calls (`pwrite`, or `pwritev2` with a per-write sync method)
    /// issued by the writer.
    pub writes: u64,
    /// `fdatasync` calls issued by the writer.
    pub syncs: u64,
    /// Segment switches.
    pub switches: u64,
    /// Switches that found no segment ready and waited for the preparer.
    pub switch_waits: u64,
    /// Flushes that waited for their group to gather ([`GROUP_COMMIT_WAIT`]).
    pub gather_waits: u64,
    /// Segments the preparer created (grown) and recycled (renamed).
    pub prepared_created: u64,
    /// Segments the preparer took from the recycle pool.
    pub prepared_recycled: u64,
    /// Released segments put in the recycle pool.
    pub released_to_pool: u64,
    /// Released segments deleted (pool full).
    pub released_deleted: u64,
    /// Strategy used for the last segment created, with its fallbacks.
    pub last_prepare: Option<String>,
    /// Why the policy prepares segments that way here (its reason).
    pub last_prepare_reason: Option<String>,
    /// Last preparation failure, if any.
    pub last_prepare_error: Option<String>,
    /// Whether records are written with `O_DIRECT`, and why (or why not).
    pub direct_io: String,
    /// How commits are made durable ([`SyncMethod`](crate::SyncMethod)),
    /// and why this one.
    pub sync_method: String,
}

/// What [`Wal::release_before`] did.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct ReleaseReport {
    /// Segments moved to the recycle pool.
    pub recycled: usize,
    /// Segments deleted because the pool was full.
    pub deleted: usize,
}

/// A segmented durable log. All methods take `&self`; share it between
/// threads with `Arc` or scoped threads. See the [module docs](self).
pub struct Wal {
    shared: Arc<Shared>,
    preparer: Option<JoinHandle<()>>,
    recovery: RecoveryReport,
}

impl Wal {
    /// Returns what opening found and did.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// Returns the log's directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Appends a record to the in-memory tail and returns its LSN. It is
    /// not durable until a [`sync`](Self::sync) or [`commit`](Self::commit)
    /// covering it returns. Records larger than a segment's room
    /// ([`max_record`](Self::max_record)) are refused with `EMSGSIZE`.
    pub fn append(&self, data: &[u8]) -> Result<Lsn> {
        self.shared.append(data)
    }

    /// Appends a record and returns once it (and everything before it) is
    /// durable. Concurrent commits share one `fdatasync`.
    pub fn commit(&self, data: &[u8]) -> Result<Lsn> {
        let sh = &self.shared;
        sh.committers.fetch_add(1, Ordering::SeqCst);
        let r = sh
            .append(data)
            .and_then(|lsn| sh.sync_to(lsn.0).map(|()| lsn));
        sh.committers.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// Makes everything appended so far durable; returns the last LSN
    /// covered (0 if the log is empty).
    pub fn sync(&self) -> Result<Lsn> {
        let target = self.shared.lock().next_lsn - 1;
        self.shared.sync_to(target)?;
        Ok(Lsn(target))
    }

    /// Makes every record up to `lsn` durable (everything appended, if
    /// `lsn` is beyond it).
    pub fn sync_to(&self, lsn: Lsn) -> Result<()> {
        self.shared.sync_to(lsn.0)
    }

    /// Returns the LSN up to which records are durable.
    pub fn durable_lsn(&self) -> Lsn {
        Lsn(self.shared.lock().durable_lsn)
    }

    /// Returns the LSN the next appended record will get.
    pub fn next_lsn(&self) -> Lsn {
        Lsn(self.shared.lock().next_lsn)
    }

    /// Returns the largest payload a record can have: a segment minus its
    /// header and one record header.
    pub fn max_record(&self) -> usize {
        max_record(self.shared.opts.segment_size)
    }

    /// Returns a reader of the durable records from `from` on (verified as
    /// they are read). Records appended later are not included.
    pub fn read_from(&self, from: Lsn) -> Result<WalReader> {
        let st = self.shared.lock();
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        let segments: Vec<SegmentInfo> = st.live.iter().cloned().collect();
        let end = st.durable_lsn;
        drop(st);
        reader::WalReader::new(
            self.shared.io.clone(),
            self.shared.log_id,
            segments,
            from.0,
            end,
        )
    }

    /// Returns a follower of the durable records from `from` on: each
    /// returned once its commit is durable, waiting for new ones (see
    /// [`WalFollower::next_timeout`]). `Lsn(0)` starts at the oldest
    /// record kept.
    pub fn follow(&self, from: Lsn) -> Result<WalFollower> {
        let st = self.shared.lock();
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        let first = st.live.front().map_or(st.next_lsn, |s| s.first_lsn.0);
        drop(st);
        if from.0 != 0 && from.0 < first {
            return Err(crate::error::Error::refused_errno(
                "follow",
                &self.shared.dir,
                crate::sys::Errno::RANGE,
                format!("LSN {from} was released; the log starts at LSN {first}"),
            ));
        }
        Ok(WalFollower {
            shared: Arc::downgrade(&self.shared),
            io: self.shared.io.clone(),
            log_id: self.shared.log_id,
            dir: self.shared.dir.clone(),
            next: from.0.max(first),
            reader: None,
        })
    }

    /// Returns the live segments, oldest first.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.shared.lock().live.iter().cloned().collect()
    }

    /// Returns the counters of what the log has done.
    pub fn stats(&self) -> WalStats {
        self.shared.lock().stats.clone()
    }

    /// Waits until the preparer has [`WalOptions::prepare_ahead`] segments
    /// ready, or fails with its error.
    pub fn wait_prepared(&self) -> Result<()> {
        let sh = &self.shared;
        let mut st = sh.lock();
        let epoch = st.prep_failures;
        st.prep_blocked = false;
        sh.prep_cv.notify_all();
        loop {
            if st.ready.len() >= sh.opts.prepare_ahead {
                return Ok(());
            }
            if st.prep_failures > epoch {
                return Err(prepare_error(&st));
            }
            st = sh.wait(st);
        }
    }

    /// Releases every whole segment whose records all come before `lsn`
    /// (never the segment being written): up to
    /// [`WalOptions::recycle_pool`] go to the recycle pool, the rest are
    /// deleted. Oldest first, each followed by a directory `fsync`, so a
    /// crash leaves a prefix released. Readers must not read what they
    /// release.
    pub fn release_before(&self, lsn: Lsn) -> Result<ReleaseReport> {
        self.shared.release_before(lsn.0)
    }

    /// Makes everything appended durable and stops the preparer. Returns
    /// the sync's error, if any (the log is closed either way).
    pub fn close(mut self) -> Result<()> {
        let r = self.sync().map(|_| ());
        self.stop_preparer();
        r
    }

    fn stop_preparer(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        {
            let mut st = self.shared.lock();
            st.closed = true;
        }
        self.shared.prep_cv.notify_all();
        self.shared.cv.notify_all();
        if let Some(h) = self.preparer.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Wal {
    /// Stops the preparer, without syncing: as after a crash, records only
    /// appended may or may not survive (the write buffer may already have
    /// written some of them out); only what a sync covered is durable. Use
    /// [`close`](Wal::close) to sync first.
    fn drop(&mut self) {
        self.stop_preparer();
    }
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("dir", &self.shared.dir)
            .finish()
    }
}

/// Returns the largest record payload a segment of `segment_size` bytes
/// holds: the size minus the segment header and one record header, rounded
/// down to a multiple of 8.
pub fn max_record(segment_size: u64) -> usize {
    let room = (segment_size as usize).saturating_sub(SEGMENT_HEADER_LEN + RECORD_HEADER_LEN);
    room.min(u32::MAX as usize) / format::RECORD_ALIGN * format::RECORD_ALIGN
}

/// Serialises a `Duration` as seconds (f64).
pub(crate) mod duration_secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}
