//! Where and why reading a log's records stopped, as values a tool can
//! act on: the end of the log ([`TailReport`](crate::wal::TailReport)) or
//! damage before it ([`WalDamage`]).
//!
//! A CRC says that a record's bytes are wrong, not which byte: what is
//! known is where the invalid record starts and, when its length field is
//! plausible, where it ends.

use super::format::{
    align_of, decode_record, span_in, Decoded, EndReason, RecordKey, SegmentHeader, FORMAT_V1,
    PAD_FLAG, RECORD_HEADER_LEN,
};
use super::scan::{open_segment, read_at, SCAN_READ};
use super::storage::Storage;
use super::types::Lsn;
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why reading stopped at a position of a segment, or why a segment could
/// not be followed. [`name`](Self::name) is the stable word (JSON, scripts);
/// `Display` words it for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// An all-zero record header: nothing was written there (the clean end
    /// of the records).
    Zeros,
    /// The record's length field runs past the end of the segment.
    BadLength,
    /// The record fails its checksum: a torn write, damage, or a recycled
    /// segment's earlier contents.
    ChecksumMismatch,
    /// The record's checksum holds but it does not carry the next LSN.
    LsnBreak {
        /// The LSN it carries.
        found: Lsn,
    },
    /// The segment has no room for another record.
    EndOfSegment,
    /// The file ends before the segment does (cut short).
    Truncated,
    /// A segment's header is invalid, or absent, where the log needs it.
    SegmentHeader,
    /// A segment of the chain is missing.
    MissingSegment,
    /// A segment belongs to another log (another log id).
    OtherLog,
    /// A segment's first LSN is before the previous segment's.
    LsnGoesBack,
}

impl StopReason {
    /// The stable name: `zeros`, `bad-length`, `checksum-mismatch`,
    /// `lsn-break`, `end-of-segment`, `truncated`, `segment-header`,
    /// `missing-segment`, `other-log`, `lsn-goes-back`.
    pub fn name(&self) -> &'static str {
        match self {
            StopReason::Zeros => "zeros",
            StopReason::BadLength => "bad-length",
            StopReason::ChecksumMismatch => "checksum-mismatch",
            StopReason::LsnBreak { .. } => "lsn-break",
            StopReason::EndOfSegment => "end-of-segment",
            StopReason::Truncated => "truncated",
            StopReason::SegmentHeader => "segment-header",
            StopReason::MissingSegment => "missing-segment",
            StopReason::OtherLog => "other-log",
            StopReason::LsnGoesBack => "lsn-goes-back",
        }
    }

    /// True where nothing was written: zeros, or the end of the segment.
    /// That is how a log ends after a clean close or a crash between
    /// writes. Any other reason at the log's end means bytes that are not a
    /// valid record where the records end (a torn last write, damage to an
    /// acknowledged record, a recycled segment's earlier contents: they
    /// cannot be told apart), or a segment file cut short.
    pub fn is_unwritten_end(&self) -> bool {
        matches!(self, StopReason::Zeros | StopReason::EndOfSegment)
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The record reasons keep the words recovery has always used.
            StopReason::Zeros => write!(f, "zeros (end of records)"),
            StopReason::BadLength => write!(f, "record length runs past the segment end"),
            StopReason::ChecksumMismatch => write!(f, "record checksum mismatch"),
            StopReason::LsnBreak { found } => write!(f, "record LSN {found} breaks the sequence"),
            StopReason::EndOfSegment => write!(f, "end of segment"),
            StopReason::Truncated => {
                write!(f, "the file ends before the segment does (truncated)")
            }
            StopReason::SegmentHeader => write!(f, "invalid segment header"),
            StopReason::MissingSegment => write!(f, "segment missing"),
            StopReason::OtherLog => write!(f, "segment of another log"),
            StopReason::LsnGoesBack => write!(f, "first LSN goes back"),
        }
    }
}

/// As its [`name`](StopReason::name): one word a script can match.
impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl From<EndReason> for StopReason {
    fn from(r: EndReason) -> StopReason {
        match r {
            EndReason::Zero => StopReason::Zeros,
            EndReason::BadLength => StopReason::BadLength,
            EndReason::BadCrc => StopReason::ChecksumMismatch,
            EndReason::LsnBreak { found } => StopReason::LsnBreak { found: Lsn(found) },
            EndReason::EndOfSegment => StopReason::EndOfSegment,
            EndReason::FileEnds => StopReason::Truncated,
        }
    }
}

/// Damage before the end of a log: where reading had to stop although
/// the log goes on (a later segment is live), so records after it are
/// lost. A writable open refuses such a log with the same place and words
/// ([`to_error`](Self::to_error)); [`WalView::open_to_damage`](crate::wal::WalView::open_to_damage)
/// hands it out as a value instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WalDamage {
    /// The file holding it (for a missing segment, the name it should have).
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub segment: PathBuf,
    /// That segment's sequence number.
    pub seq: u64,
    /// Byte offset in that file where the invalid record starts (for a
    /// segment's header: of the field at fault, 0 for the whole header).
    /// A CRC cannot say which byte of a record is wrong.
    pub offset: u64,
    /// Where the invalid record ends (exclusive) when its length field is
    /// plausible, so that `offset..record_end` is its extent; `None` when
    /// there is no record to measure (zeros, a bad length, a header).
    pub record_end: Option<u64>,
    /// The LSN the log expected there (`None` where it cannot be known: a
    /// bad header of the first segment).
    pub expected_lsn: Option<Lsn>,
    /// The LSN field of the invalid record, unverified (what its bytes
    /// say), when it has a plausible length.
    pub found_lsn: Option<Lsn>,
    /// What is wrong.
    pub reason: StopReason,
    /// The same in words, with the context (the segment that follows).
    pub message: String,
}

impl WalDamage {
    /// The error a strict open returns for this damage (`op` names the
    /// operation): [`Error::Corrupt`] with the file, the offset and the
    /// message.
    pub fn to_error(&self, op: &'static str) -> Error {
        Error::Corrupt {
            op,
            path: self.segment.clone(),
            offset: self.offset,
            message: self.message.clone(),
        }
    }
}

/// What the bytes of an invalid record at `offset` say: its end when its
/// length field is plausible (within `seg_end`, the end of the segment),
/// and its LSN field. Read separately from the scan that found it: the
/// scan reports only the reason, and damage is rare enough that a second
/// read of 16 bytes costs nothing.
pub(crate) fn inspect_record(
    io: &dyn Storage,
    path: &Path,
    seg_end: u64,
    offset: u64,
    reason: EndReason,
    version: u32,
) -> Result<(Option<u64>, Option<Lsn>)> {
    match reason {
        // Nothing there to measure.
        EndReason::Zero | EndReason::EndOfSegment => return Ok((None, None)),
        EndReason::BadCrc
        | EndReason::BadLength
        | EndReason::LsnBreak { .. }
        | EndReason::FileEnds => {}
    }
    let (fd, _) = open_segment(io, path)?;
    let mut b = [0u8; RECORD_HEADER_LEN];
    let n = read_at(&*fd, path, &mut b, offset)?;
    if n < RECORD_HEADER_LEN {
        return Ok((None, None));
    }
    let mut len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if version != FORMAT_V1 {
        // A padding record's length word counts the bytes it skips.
        len &= !PAD_FLAG;
    }
    let lsn = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    let room = seg_end.saturating_sub(offset);
    if u64::from(len) > room.saturating_sub(RECORD_HEADER_LEN as u64) {
        // A length that cannot be believed: the LSN field is reported
        // (whether these bytes claim to be the next record decides what
        // the end means, `TailReport::is_clean`), no extent.
        return Ok((None, Some(Lsn(lsn))));
    }
    let end = (offset + span_in(version, len as usize) as u64).min(seg_end);
    Ok((Some(end), Some(Lsn(lsn))))
}

/// Looks after the position where the last segment's records stop (`from`,
/// where LSN `expected` was due) for a record of this segment's current
/// life that verifies with a later LSN: proof that the stop is not simply
/// where the writing ended (a flush torn out of order by a power cut, or
/// damage to written records: a changed LSN field, a zeroed page).
/// Reads the rest of the segment once; only positions whose LSN field
/// lies above `expected` are decoded (a recycled segment's earlier
/// contents carry older LSNs, and fail the CRC anyway: it covers the
/// segment's sequence and nonce). Returns the first one's offset and LSN.
pub(crate) fn later_record(
    io: &dyn Storage,
    path: &Path,
    header: &SegmentHeader,
    from: u64,
    expected: u64,
) -> Result<Option<(u64, Lsn)>> {
    let align = align_of(header.version) as u64;
    let end = header.size;
    let key = RecordKey::from(header);
    let (fd, len) = open_segment(io, path)?;
    let end = end.min(len);
    let mut buf = vec![0u8; SCAN_READ];
    // The first candidate is after the invalid record's header.
    let mut pos = (from + align).div_ceil(align) * align;
    while pos + RECORD_HEADER_LEN as u64 <= end {
        let want = ((end - pos) as usize).min(buf.len());
        let got = read_at(&*fd, path, &mut buf[..want], pos)?;
        if got < RECORD_HEADER_LEN {
            break;
        }
        let mut i = 0usize;
        while i + RECORD_HEADER_LEN <= got {
            let h = &buf[i..i + RECORD_HEADER_LEN];
            let lsn = u64::from_le_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]);
            if lsn > expected && lsn - expected < 1 << 32 {
                let at = pos + i as u64;
                if verifies(&*fd, path, &key, header.version, at, end, lsn)? {
                    return Ok(Some((at, Lsn(lsn))));
                }
            }
            i += align as usize;
        }
        // Headers never straddle two reads: `i` stops where a whole one
        // no longer fits, and the next read starts there.
        pos += i as u64;
    }
    Ok(None)
}

/// Whether the record at `at` (LSN field `lsn`) verifies under `key`.
fn verifies(
    fd: &dyn crate::wal::storage::SegmentFile,
    path: &Path,
    key: &RecordKey,
    version: u32,
    at: u64,
    end: u64,
    lsn: u64,
) -> Result<bool> {
    let mut h = [0u8; RECORD_HEADER_LEN];
    if read_at(fd, path, &mut h, at)? < RECORD_HEADER_LEN {
        return Ok(false);
    }
    let mut len = u64::from(u32::from_le_bytes([h[0], h[1], h[2], h[3]]));
    if version != FORMAT_V1 && len & u64::from(PAD_FLAG) != 0 {
        len = 0; // padding: its CRC covers its header only
    }
    let room = end - at;
    if len > room - RECORD_HEADER_LEN as u64 {
        return Ok(false);
    }
    let mut b = vec![0u8; RECORD_HEADER_LEN + len as usize];
    if read_at(fd, path, &mut b, at)? < b.len() {
        return Ok(false);
    }
    Ok(matches!(
        decode_record(&b, room as usize, key, lsn, version),
        Decoded::Record { .. } | Decoded::Padding { .. }
    ))
}
