//! The values the log hands out and counts: [`Lsn`], [`SegmentInfo`],
//! [`WalStats`] with how records go out ([`WalIo`]), [`ReleaseReport`],
//! and the record size limit.

use super::format::{MAX_PAYLOAD, RECORD_ALIGN, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN};
use super::options::DIRECT_IO_ON_LOCAL_FS;
use crate::strategy::{Fallback, Strategy, SyncMethod};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

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
#[non_exhaustive]
pub struct SegmentInfo {
    /// Its sequence number.
    pub seq: u64,
    /// The LSN of its first record (of the next record, if it has none).
    pub first_lsn: Lsn,
    /// Its file.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The format its header and records are written in: 2 for segments
    /// this version writes, 1 for segments of a log written before it
    /// (docs/wal-format.md).
    pub format: u32,
}

/// How the preparer grew a segment it created: the strategy that did it,
/// and the ones tried before it with why each was abandoned. `Display`
/// says it in words (`zero-fill (after write-zeroes: ...)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SegmentGrowth {
    /// The strategy that grew the segment.
    pub strategy: Strategy,
    /// The strategies tried before it, in order.
    pub fallbacks: Vec<Fallback>,
}

impl fmt::Display for SegmentGrowth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.strategy.name())?;
        for b in &self.fallbacks {
            write!(f, " (after {}: {})", b.strategy, b.error)?;
        }
        Ok(())
    }
}

/// Counters of what a [`Wal`](crate::wal::Wal) has done since it was
/// opened, and how its records go out ([`WalStats::io`]).
#[derive(Debug, Clone, Serialize)]
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
    /// Bytes of padding records written to end flushes on a page boundary
    /// ([`WalIo::pad_flushes`]).
    pub padding_bytes: u64,
    /// Segment switches.
    pub switches: u64,
    /// Switches that found no segment ready and waited for the preparer.
    pub switch_waits: u64,
    /// How concurrent commits shared writes and syncs.
    pub group: GroupStats,
    /// Segments the preparer created (grown) and recycled (renamed).
    pub prepared_created: u64,
    /// Segments the preparer took from the recycle pool.
    pub prepared_recycled: u64,
    /// Released segments put in the recycle pool.
    pub released_to_pool: u64,
    /// Released segments deleted (pool full).
    pub released_deleted: u64,
    /// How the last segment created was grown: the strategy, with the
    /// fallbacks tried before it.
    pub last_prepare: Option<SegmentGrowth>,
    /// Why the policy prepares segments that way here (its reason).
    pub last_prepare_reason: Option<String>,
    /// Last preparation failure, if any.
    pub last_prepare_error: Option<crate::reason::Reason>,
    /// How records are written and made durable now, why, and what the
    /// filesystem refused on the way.
    pub io: WalIo,
}

impl WalStats {
    /// Zero counters, with the I/O the open chose.
    pub(super) fn new(io: WalIo) -> WalStats {
        WalStats {
            records: 0,
            payload_bytes: 0,
            writes: 0,
            syncs: 0,
            padding_bytes: 0,
            switches: 0,
            switch_waits: 0,
            group: GroupStats::default(),
            prepared_created: 0,
            prepared_recycled: 0,
            released_to_pool: 0,
            released_deleted: 0,
            last_prepare: None,
            last_prepare_reason: None,
            last_prepare_error: None,
            io,
        }
    }
}

/// How a log's concurrent commits shared writes and syncs (group commit):
/// [`WalStats::group`], and a benchmark run's share of it
/// ([`WalFigures::group`](crate::bench::WalFigures::group)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct GroupStats {
    /// Commit groups: syncs (or durable writes) that made records durable.
    pub groups: u64,
    /// Records those groups made durable.
    pub group_records: u64,
    /// Groups by size: `[1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, more]`
    /// records ([`GroupStats::SIZE_BOUNDS`]).
    pub group_sizes: [u64; 8],
    /// The largest group since the log opened (also in
    /// [`since`](Self::since)).
    pub largest_group: u64,
    /// The log's running average of a durable flush's I/O (the write and
    /// the sync, or the sync alone while the next group is written), in
    /// ns; 0 before the first. Group commit decides with it.
    pub flush_time_ns: u64,
    /// Flushes that waited for their group to gather: only where the
    /// measured flush time says a wait can pay
    /// ([`GATHER_MIN_FLUSH`](crate::wal::GATHER_MIN_FLUSH)).
    pub gather_waits: u64,
    /// Time those flushes waited in all, in ns (each at most
    /// [`GATHER_FRACTION`](crate::wal::GATHER_FRACTION) of a flush).
    pub gather_wait_ns: u64,
    /// Waits for another thread's flush that spun (where flushes take
    /// less than [`SPIN_MAX_FLUSH`](crate::wal::SPIN_MAX_FLUSH)); a commit
    /// may wait more than once.
    pub follower_spins: u64,
    /// Waits for another thread's flush that blocked until a flush stage
    /// ended; a commit may wait more than once.
    pub follower_waits: u64,
    /// Group writes that ran while the previous group's sync did, or
    /// beside another durable write in flight
    /// ([`WalOptions::writes_in_flight`](crate::wal::WalOptions::writes_in_flight)).
    pub overlapped_writes: u64,
}

impl GroupStats {
    /// The largest size of each bucket of [`GroupStats::group_sizes`]; the
    /// last bucket holds every larger group.
    pub const SIZE_BOUNDS: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];

    /// Mean records per group (0 without groups).
    pub fn mean_size(&self) -> f64 {
        if self.groups == 0 {
            0.0
        } else {
            self.group_records as f64 / self.groups as f64
        }
    }

    /// What happened since `before` (counters subtracted; the flush time
    /// and the largest group are this one's).
    pub fn since(&self, before: &GroupStats) -> GroupStats {
        let mut sizes = self.group_sizes;
        for (s, b) in sizes.iter_mut().zip(before.group_sizes) {
            *s = s.saturating_sub(b);
        }
        GroupStats {
            groups: self.groups.saturating_sub(before.groups),
            group_records: self.group_records.saturating_sub(before.group_records),
            group_sizes: sizes,
            largest_group: self.largest_group,
            flush_time_ns: self.flush_time_ns,
            gather_waits: self.gather_waits.saturating_sub(before.gather_waits),
            gather_wait_ns: self.gather_wait_ns.saturating_sub(before.gather_wait_ns),
            follower_spins: self.follower_spins.saturating_sub(before.follower_spins),
            follower_waits: self.follower_waits.saturating_sub(before.follower_waits),
            overlapped_writes: self
                .overlapped_writes
                .saturating_sub(before.overlapped_writes),
        }
    }
}

/// How a log's records go out and are made durable, and why: what
/// [`WalStats::io`] and [`WalFigures::io`](crate::bench::WalFigures::io)
/// report. Its `Display` words it in one line, e.g.
/// `direct-dsync (auto: ...); O_DIRECT on: direct-dsync writes with O_DIRECT`
/// (the CLI prints the parts on lines of their own).
///
/// The method and `O_DIRECT` are decided at open ([`WalStats::io`]'s
/// `sync_chosen_by` and `direct_io_by`); where the filesystem refuses one
/// of them then or on a later segment, the log falls back and says so in
/// `fallbacks`, and `sync_method` and `direct_io` are what it uses since.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WalIo {
    /// The method commits are made durable with now.
    pub sync_method: SyncMethod,
    /// Why that method was chosen at open.
    pub sync_chosen_by: SyncChoice,
    /// Whether records go out with `O_DIRECT` now.
    pub direct_io: bool,
    /// Why `O_DIRECT` was wanted at open, or not.
    pub direct_io_by: DirectIoChoice,
    /// What the filesystem refused since the open, oldest first: each
    /// moved the log to the next way of writing.
    pub fallbacks: Vec<IoFallback>,
    /// Whether every flush ends on a page boundary with a padding record
    /// ([`WalOptions::pad_flushes`](crate::wal::WalOptions::pad_flushes)).
    pub pad_flushes: bool,
    /// Why: `"asked"` when the caller chose, else the policy's reason.
    pub pad_flushes_by: String,
    /// Whether new segments are made no-copy-on-write and zero-filled
    /// ([`WalOptions::nocow`](crate::wal::WalOptions::nocow)); segments
    /// made before (or recycled from before) keep their attribute.
    pub nocow: bool,
    /// Why: `"asked"` when the caller chose, else the policy's reason.
    pub nocow_by: String,
}

impl WalIo {
    /// Records that the filesystem refused `refused` on `path` with
    /// `errno`, and moves to the next way of writing: without `O_DIRECT`
    /// (`direct-dsync` becomes `dsync`), or from `RWF_DSYNC` to
    /// `fdatasync`.
    pub(super) fn fall_back(&mut self, refused: IoRefusal, path: &Path, errno: i32) {
        let before = self.sync_method;
        let after = match refused {
            IoRefusal::ODirect | IoRefusal::ODirectWrite => {
                self.direct_io = false;
                if before == SyncMethod::DirectDsync {
                    SyncMethod::Dsync
                } else {
                    before
                }
            }
            IoRefusal::RwfDsync => SyncMethod::Fdatasync,
        };
        self.sync_method = after;
        self.fallbacks.push(IoFallback {
            refused,
            path: path.to_path_buf(),
            errno,
            before,
            after,
        });
    }
}

impl fmt::Display for WalIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}); ", self.sync_method, self.sync_chosen_by)?;
        match (self.direct_io, self.direct_io_by.wants()) {
            (true, _) => write!(f, "O_DIRECT on: {}", self.direct_io_by)?,
            (false, true) => write!(f, "O_DIRECT off: refused (wanted: {})", self.direct_io_by)?,
            (false, false) => write!(f, "O_DIRECT off: {}", self.direct_io_by)?,
        }
        for fb in &self.fallbacks {
            write!(f, "; {fb}")?;
        }
        let pad = if self.pad_flushes { "on" } else { "off" };
        write!(f, "; page padding {pad}: {}", self.pad_flushes_by)?;
        if self.nocow {
            write!(f, "; NOCOW segments: {}", self.nocow_by)?;
        }
        Ok(())
    }
}

/// Why the log's sync method ([`WalIo::sync_method`]) was chosen at open.
/// `Display` renders the reason, as the CLI prints it after the method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SyncChoice {
    /// The caller asked for it ([`WalOptions::sync_method`](crate::wal::WalOptions::sync_method)).
    Asked,
    /// The caller asked for `dsync` with `O_DIRECT` on: that is
    /// `direct-dsync`.
    AskedDsyncWithDirectIo,
    /// `auto`: a probe saved by `fspace probe --save` measured it fastest
    /// on this filesystem.
    Saved {
        /// When it was measured (`YYYY-MM-DD HH:MM:SS UTC`).
        measured_utc: String,
        /// The saved file.
        path: PathBuf,
    },
    /// `auto`: the policy's rule for this filesystem
    /// (`LOG_DIRECT_DSYNC_ON`, see `docs/wal.md` "Sync methods").
    Policy {
        /// The rule's reason.
        reason: String,
    },
    /// `auto` would have been `direct-dsync`, which needs `O_DIRECT`, and
    /// the caller turned `O_DIRECT` off: `fdatasync` instead.
    DirectIoOff,
}

impl fmt::Display for SyncChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyncChoice::Asked => f.write_str("asked for"),
            SyncChoice::AskedDsyncWithDirectIo => f.write_str("dsync asked for, with O_DIRECT"),
            SyncChoice::Saved { measured_utc, path } => write!(
                f,
                "auto: measured fastest by `fspace probe --save` on {measured_utc} ({})",
                path.display()
            ),
            SyncChoice::Policy { reason } => write!(f, "auto: {reason}"),
            SyncChoice::DirectIoOff => {
                f.write_str("auto: O_DIRECT turned off by the caller, so not direct-dsync")
            }
        }
    }
}

/// Why the log wanted records to go out with `O_DIRECT` at open, or not
/// ([`WalIo::direct_io`] says whether they do). `Display` renders the
/// reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DirectIoChoice {
    /// The caller turned it on ([`WalOptions::direct_io`](crate::wal::WalOptions::direct_io)).
    CallerOn,
    /// The caller turned it off.
    CallerOff,
    /// The sync method is `direct-dsync`, which writes with `O_DIRECT`.
    SyncMethod,
    /// Off: a network or FUSE filesystem (`O_DIRECT` there is the
    /// server's).
    NetworkFs,
    /// A local filesystem and a sync method without `O_DIRECT`:
    /// [`DIRECT_IO_ON_LOCAL_FS`] decides.
    LocalFsDefault,
}

impl DirectIoChoice {
    /// Whether this choice asks for `O_DIRECT`.
    pub fn wants(self) -> bool {
        match self {
            DirectIoChoice::CallerOn | DirectIoChoice::SyncMethod => true,
            DirectIoChoice::CallerOff | DirectIoChoice::NetworkFs => false,
            DirectIoChoice::LocalFsDefault => DIRECT_IO_ON_LOCAL_FS,
        }
    }
}

impl fmt::Display for DirectIoChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DirectIoChoice::CallerOn => "turned on by the caller",
            DirectIoChoice::CallerOff => "turned off by the caller",
            DirectIoChoice::SyncMethod => "direct-dsync writes with O_DIRECT",
            DirectIoChoice::NetworkFs => "network or FUSE filesystem",
            DirectIoChoice::LocalFsDefault if DIRECT_IO_ON_LOCAL_FS => {
                "on by default on local filesystems (DIRECT_IO_ON_LOCAL_FS)"
            }
            DirectIoChoice::LocalFsDefault => {
                "off by default (DIRECT_IO_ON_LOCAL_FS: no gain measured at 8 KiB, slower at 1 MiB)"
            }
        })
    }
}

/// What the filesystem refused ([`IoFallback::refused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum IoRefusal {
    /// Turning `O_DIRECT` on for a segment (`fcntl(F_SETFL)`).
    ODirect,
    /// A write with `O_DIRECT` on (`EINVAL`): the flag was accepted, the
    /// write was not.
    ODirectWrite,
    /// `pwritev2` with `RWF_DSYNC` (`ENOSYS`, `EOPNOTSUPP` or `EINVAL`).
    RwfDsync,
}

impl fmt::Display for IoRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoRefusal::ODirect => "the filesystem refused O_DIRECT",
            IoRefusal::ODirectWrite => "an O_DIRECT write was refused",
            IoRefusal::RwfDsync => "pwritev2 with RWF_DSYNC refused",
        })
    }
}

/// One refusal the log fell back from ([`WalIo::fallbacks`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IoFallback {
    /// What was refused.
    pub refused: IoRefusal,
    /// The segment it was refused on.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// The error number the kernel returned.
    pub errno: i32,
    /// The sync method before.
    pub before: SyncMethod,
    /// The sync method after (the same when only `O_DIRECT` went:
    /// writes then go through the page cache).
    pub after: SyncMethod,
}

impl fmt::Display for IoFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on {} ({}): ",
            self.refused,
            self.path.display(),
            std::io::Error::from_raw_os_error(self.errno)
        )?;
        if self.before == self.after {
            write!(f, "{} without O_DIRECT", self.after)
        } else {
            write!(f, "{} became {}", self.before, self.after)
        }
    }
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
/// down to a multiple of 16 (and below 2 GiB, what the format's length
/// field describes).
pub fn max_record(segment_size: u64) -> usize {
    let room = (segment_size as usize).saturating_sub(SEGMENT_HEADER_LEN + RECORD_HEADER_LEN);
    room.min(MAX_PAYLOAD) / RECORD_ALIGN * RECORD_ALIGN
}

/// Serialises a `Duration` as seconds (f64).
pub(crate) mod duration_secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}
