//! The values the log hands out and counts: [`Lsn`], [`SegmentInfo`],
//! [`WalStats`], [`ReleaseReport`], and the record size limit.

use super::format::{RECORD_ALIGN, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN};
use serde::Serialize;
use std::path::PathBuf;

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

/// Counters of what a [`Wal`](crate::wal::Wal) has done since it was opened.
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
    /// Flushes that waited for their group to gather ([`GROUP_COMMIT_WAIT`](crate::wal::GROUP_COMMIT_WAIT)).
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

/// What [`Wal::release_before`](crate::wal::Wal::release_before) did.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct ReleaseReport {
    /// Segments moved to the recycle pool.
    pub recycled: usize,
    /// Segments deleted because the pool was full.
    pub deleted: usize,
}

/// Returns the largest record payload a segment of `segment_size` bytes
/// holds: the size minus the segment header and one record header, rounded
/// down to a multiple of 8.
pub fn max_record(segment_size: u64) -> usize {
    let room = (segment_size as usize).saturating_sub(SEGMENT_HEADER_LEN + RECORD_HEADER_LEN);
    room.min(u32::MAX as usize) / RECORD_ALIGN * RECORD_ALIGN
}

/// Serialises a `Duration` as seconds (f64).
pub(crate) mod duration_secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}
