//! What recovery reports: [`RecoveryReport`] (what `Wal::open` found and
//! did) and [`TailReport`] (the discarded tail of the last segment).

use super::damage::{StopReason, WalDamage};
use super::types::Lsn;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// What [`Wal::open`](crate::wal::Wal::open) found and did.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// A read-only look ([`WalView`](crate::wal::WalView)): nothing was changed,
    /// and the fields that say what was removed or set aside say what a
    /// writable open would remove or set aside.
    pub read_only: bool,
    /// True if the directory held no live segment: a new log was started
    /// (by a read-only look: the directory holds no log).
    pub created: bool,
    /// Live segments verified.
    pub segments: usize,
    /// Records verified (every live segment is read in full).
    pub records: u64,
    /// The LSN of the oldest record kept (or the next LSN if none).
    pub first_lsn: Lsn,
    /// The LSN the next appended record gets.
    pub next_lsn: Lsn,
    /// Where the records of the last segment ended, if there was one.
    pub tail: Option<TailReport>,
    /// Temporary files of interrupted segment creation, removed.
    pub removed_temp_files: usize,
    /// Segment files that were neither live nor usable (a prepared segment
    /// of another size, or out of sequence), removed.
    pub removed_files: Vec<PathBuf>,
    /// Files in the directory that are not the log's; left untouched.
    pub foreign_files: Vec<PathBuf>,
    /// The segment after the last live one, whose header failed its
    /// checksum: the header write that would have made it live was cut
    /// short (its `fdatasync` never returned, so none of its records was
    /// acknowledged). The log ends before it, and the file is kept aside
    /// under this name (`NNNNNNNNNNNN.seg.torn-header`), never read again.
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub torn_header: Option<PathBuf>,
    /// Damage before the log's end, where reading stopped: only in a
    /// look that reads up to the damage
    /// ([`WalView::open_to_damage`](crate::wal::WalView::open_to_damage));
    /// every other open refuses such a log.
    pub damage: Option<WalDamage>,
    /// Prepared segments found ready for use.
    pub prepared: usize,
    /// Segments found in the recycle pool.
    pub recycle_pool: usize,
    /// Time spent recovering.
    #[serde(with = "super::types::duration_secs")]
    pub elapsed: Duration,
}

/// How the last segment's records ended.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct TailReport {
    /// The segment file.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub segment: PathBuf,
    /// Its sequence number.
    pub seq: u64,
    /// Offset where the first position that holds no valid record starts
    /// (a CRC cannot say which byte of a record is wrong).
    pub offset: u64,
    /// Where the invalid record there ends (exclusive), when its length
    /// field is plausible; `None` for zeros, a bad length, the segment's
    /// end.
    pub record_end: Option<u64>,
    /// The LSN a record there would have carried: the next LSN.
    pub expected_lsn: Lsn,
    /// The LSN field of the invalid record there, unverified, when it has
    /// a plausible length.
    pub found_lsn: Option<Lsn>,
    /// Why reading stopped there, as a value
    /// ([`TailReport::is_clean`] tells a clean end from non-zero
    /// bytes where the records end).
    pub reason: StopReason,
    /// Why reading stopped there, in words.
    pub stopped_at: String,
    /// Bytes of non-zero data after the last valid record (a torn write,
    /// or a recycled segment's earlier contents), up to the first all-zero
    /// page: discarded, never returned.
    pub discarded_bytes: u64,
    /// A record of this segment's current life that verifies after the
    /// stop, with a later LSN (the first one found: its offset and LSN).
    /// Records were written beyond the stop, so it is not simply where the
    /// writing ended: either a flush whose pages reached the disk out of
    /// order before a power cut (its commits never returned: harmless), or
    /// damage to acknowledged records (a changed LSN field, a zeroed page:
    /// a writable open loses the records from `expected_lsn` on).
    pub later_record: Option<(u64, Lsn)>,
}

impl TailReport {
    /// Whether the log ends where nothing of the next record was written:
    /// zeros, the segment's end, or bytes that do not claim to be the next
    /// record. These are a recycled segment's earlier contents (met after
    /// a flush that ended on a page boundary, which is every flush when
    /// flushes are padded), or what lay under a record whose header never
    /// reached the disk (its commit never returned). Not clean: bytes that
    /// carry the expected LSN and fail (a torn last write, or damage to an
    /// acknowledged record: they cannot be told apart), a valid record
    /// that breaks the sequence, a file cut short, and any stop with a
    /// record of this segment's life verifying after it
    /// ([`later_record`](Self::later_record): a flush torn out of order,
    /// or damage to written records, a changed LSN field or a zeroed page
    /// among them). Damage to the
    /// very last record's LSN field still reads as clean: nothing written
    /// after it says otherwise. In the other direction, a segment reused
    /// under the same sequence after a crash (its header lost) may hold
    /// its first life's records at the same offsets with the same LSNs:
    /// they fail the CRC (a new nonce) and read as a torn write.
    pub fn is_clean(&self) -> bool {
        if self.later_record.is_some() {
            return false;
        }
        match self.reason {
            r if r.is_unwritten_end() => true,
            StopReason::ChecksumMismatch | StopReason::BadLength => {
                self.found_lsn != Some(self.expected_lsn)
            }
            _ => false,
        }
    }
}
