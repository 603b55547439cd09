//! What the commit benchmark measures and reports: the space states, the
//! options of a run, and its result.

use crate::grow::Strategy;
use crate::note::Note;
use crate::policy::StrategyChoice;
use crate::strategy::SyncMethod;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A state the space a commit overwrites can be in: what `fspace bench
/// commit --mode` measures and what the probe reports, one vocabulary.
/// The benchmark's older mode names are accepted as input (`append`,
/// `allocate`, `write-zeroes`, `zero-fill-now`, `overwrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SpaceState {
    /// No space prepared: each commit appends (`O_APPEND`) and allocates.
    Appended,
    /// A hole (`ftruncate`): each commit allocates.
    Sparse,
    /// Unwritten extents (`fallocate`): each commit converts one.
    Allocated,
    /// Written zeroed blocks made without moving data
    /// (`FALLOC_FL_WRITE_ZEROES`).
    WriteZeroed,
    /// Written blocks made by writing zeros (fspace `zero-fill`).
    ZeroFilled,
    /// Blocks written by earlier records (a recycled log segment).
    Recycled,
    /// fspace's segment log: prepared and recycled segments, group commit.
    Wal,
    /// Space reserved past the end (`fallocate(FALLOC_FL_KEEP_SIZE)`):
    /// each commit appends (`O_APPEND`) into unwritten extents, as
    /// RocksDB writes its WAL (`allow_fallocate`, its default). Not one
    /// of the probe's states ([`SpaceState::ALL`]); measured for
    /// `fspace probe --for rocksdb` and by `fspace bench commit --mode
    /// preallocated`.
    Preallocated,
}

impl SpaceState {
    /// Every state, baseline first.
    pub const ALL: [SpaceState; 7] = [
        SpaceState::Appended,
        SpaceState::Sparse,
        SpaceState::Allocated,
        SpaceState::WriteZeroed,
        SpaceState::ZeroFilled,
        SpaceState::Recycled,
        SpaceState::Wal,
    ];

    /// States measured only when asked for: not in the probe's rounds.
    pub const EXTRA: [SpaceState; 1] = [SpaceState::Preallocated];

    /// Whether commits append to the file (`O_APPEND`) rather than
    /// overwrite prepared space.
    pub fn appends(self) -> bool {
        matches!(self, SpaceState::Appended | SpaceState::Preallocated)
    }

    /// Returns the name used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            SpaceState::Appended => "appended",
            SpaceState::Sparse => "sparse",
            SpaceState::Allocated => "allocated",
            SpaceState::WriteZeroed => "write-zeroed",
            SpaceState::ZeroFilled => "zero-filled",
            SpaceState::Recycled => "recycled",
            SpaceState::Wal => "wal",
            SpaceState::Preallocated => "preallocated",
        }
    }

    /// Returns a label for tables: the name and what it means.
    pub fn label(self) -> &'static str {
        match self {
            SpaceState::Appended => "appended (no preparation)",
            SpaceState::Sparse => "sparse (holes)",
            SpaceState::Allocated => "allocated (unwritten)",
            SpaceState::WriteZeroed => "write-zeroed",
            SpaceState::ZeroFilled => "zero-filled",
            SpaceState::Recycled => "recycled (written before)",
            SpaceState::Wal => "fspace wal",
            SpaceState::Preallocated => "preallocated (KEEP_SIZE, appended)",
        }
    }

    /// Returns the state a growth strategy leaves new space in.
    pub fn of_strategy(s: Strategy) -> Option<SpaceState> {
        match s {
            Strategy::Sparse => Some(SpaceState::Sparse),
            Strategy::Allocate => Some(SpaceState::Allocated),
            Strategy::WriteZeroes => Some(SpaceState::WriteZeroed),
            Strategy::ZeroFill => Some(SpaceState::ZeroFilled),
            Strategy::Reserve => None,
        }
    }
}

impl std::fmt::Display for SpaceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SpaceState {
    type Err = crate::invalid::ParseError;
    fn from_str(s: &str) -> std::result::Result<Self, crate::invalid::ParseError> {
        let old = match s {
            "append" => Some(SpaceState::Appended),
            "allocate" => Some(SpaceState::Allocated),
            "write-zeroes" => Some(SpaceState::WriteZeroed),
            "zero-fill-now" => Some(SpaceState::ZeroFilled),
            "overwrite" => Some(SpaceState::Recycled),
            _ => None,
        };
        let known = || SpaceState::ALL.into_iter().chain(SpaceState::EXTRA);
        old.or_else(|| known().find(|m| m.name() == s))
            .ok_or_else(|| {
                crate::invalid::ParseError::new("mode", s, known().map(SpaceState::name))
            })
    }
}

/// How to run the commit benchmark.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommitBenchOptions {
    /// Bytes per record.
    pub record_size: usize,
    /// Threads committing at once in one run ([`run_commit`](super::run_commit)).
    pub writers: usize,
    /// Writer counts [`run_suite`](super::run_suite) runs every mode at, in
    /// this order (each from 1 to [`MAX_WRITERS`](super::MAX_WRITERS));
    /// empty: `writers` alone.
    pub writer_counts: Vec<usize>,
    /// Time per mode.
    pub duration: Duration,
    /// Size of the file the overwrite modes cycle through (append mode
    /// truncates its file when it reaches it).
    pub file_size: u64,
    /// Segment size of the log in `wal` mode.
    pub segment_size: u64,
    /// `O_DIRECT` for the log in `wal` mode (`None`: the log's own choice);
    /// in the file modes `Some(true)` writes every record with `O_DIRECT`
    /// whatever the sync method (as InnoDB writes its redo log with
    /// `innodb_flush_method=O_DIRECT`; else only `direct-dsync` does).
    pub direct_io: Option<bool>,
    /// How the log prepares new segments in `wal` mode
    /// ([`WalOptions::prepare`](crate::wal::WalOptions::prepare)).
    pub prepare: StrategyChoice,
    /// Sync methods to measure ([`SyncMethod`]). [`run_commit`](super::run_commit) uses the
    /// first; [`run_suite`](super::run_suite) runs each mode once per method, in this order.
    /// Empty: `fdatasync` for the file modes, the log's own choice
    /// ([`WalOptions::sync_method`](crate::wal::WalOptions::sync_method) `None`) for `wal`.
    pub sync_methods: Vec<SyncMethod>,
    /// Stop a file mode when its prepared space is used up (one pass
    /// through `file_size`) instead of wrapping around: later passes would
    /// overwrite written blocks and measure another state. The probe sets
    /// it; `bench commit` wraps and says so.
    pub stop_at_end: bool,
    /// Padding of the log's flushes in `wal` mode
    /// ([`WalOptions::pad_flushes`](crate::wal::WalOptions::pad_flushes);
    /// `None`: the policy's choice).
    pub pad_flushes: Option<bool>,
    /// NOCOW segments in `wal` mode
    /// ([`WalOptions::nocow`](crate::wal::WalOptions::nocow); `None`: the
    /// policy's choice), and NOCOW files in the zero-filled and recycled
    /// modes (`None`: as the log's segments, NOCOW on btrfs,
    /// `policy::rules::LOG_NOCOW_ON`).
    pub nocow: Option<bool>,
    /// Keep what each run wrote instead of removing it: the log's
    /// directory in `wal` mode, the file in the others, renamed to
    /// `fspace-bench-MODE` (`-METHOD` when a sync method was named; `.2`,
    /// `.3`, ... when the name is taken) in the directory measured, where
    /// later runs do not remove it; [`CommitResult::kept`] says where. For
    /// looking into them afterwards (`fspace wal verify`, `fspace map`).
    pub keep: bool,
}

impl Default for CommitBenchOptions {
    fn default() -> Self {
        CommitBenchOptions {
            record_size: 8192,
            writers: 1,
            writer_counts: vec![],
            duration: Duration::from_secs(5),
            file_size: 256 << 20,
            segment_size: crate::wal::DEFAULT_SEGMENT_SIZE,
            direct_io: None,
            prepare: StrategyChoice::built_in(),
            sync_methods: vec![],
            stop_at_end: false,
            pad_flushes: None,
            nocow: None,
            keep: false,
        }
    }
}

/// Latency figures, in microseconds.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

/// The log's side of a `wal` run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct WalFigures {
    /// `fdatasync` calls (fewer than commits when groups form).
    pub syncs: u64,
    /// Segment switches during the run.
    pub switches: u64,
    /// Switches that waited for the preparer.
    pub switch_waits: u64,
    /// How the run's commits shared writes and syncs: groups and their
    /// sizes, the flush time the log measured, the waits.
    pub group: crate::wal::GroupStats,
    /// Commits whose record opened a new segment.
    pub switch_commits: u64,
    /// Their mean latency in microseconds.
    pub switch_mean_us: f64,
    /// Segments created by the preparer during the run.
    pub prepared_created: u64,
    /// Segments recycled during the run.
    pub prepared_recycled: u64,
    /// How the preparer grew new segments (the last one it created).
    pub prepare_strategy: Option<crate::wal::SegmentGrowth>,
    /// Why the policy prepares the log's segments that way here.
    #[serde(default)]
    pub prepare_reason: Option<String>,
    /// How records went out and were made durable when the run ended,
    /// why, and what the filesystem refused on the way.
    pub io: crate::wal::WalIo,
    /// The space the log's files took when the run ended: their length,
    /// what they reference and, on btrfs, the disk extents they pin.
    #[serde(default)]
    pub space: Option<crate::extents::SpaceUse>,
}

/// The result of one mode.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CommitResult {
    /// The mode.
    pub state: SpaceState,
    /// The sync method measured; `None` for the log's own choice (its
    /// [`WalFigures::io`] says which it made).
    pub sync_method: Option<SyncMethod>,
    /// Threads that committed at once.
    pub writers: usize,
    /// Whether a file mode wrote its records with `O_DIRECT` (`direct-dsync`,
    /// or [`CommitBenchOptions::direct_io`] on); false for the log, whose
    /// [`WalFigures::io`] says it.
    pub direct_io: bool,
    /// Commits completed.
    pub commits: u64,
    /// Measured time in seconds.
    pub seconds: f64,
    /// Commits per second.
    pub commits_per_sec: f64,
    /// Payload throughput in MiB/s.
    pub mib_per_sec: f64,
    /// Commit latency (`None` when no commit completed).
    pub latency: Option<Latency>,
    /// Time spent preparing the file or log before the run, in seconds.
    pub setup_seconds: f64,
    /// Log figures (`wal` mode).
    pub wal: Option<WalFigures>,
    /// Anything that qualifies the figures.
    pub notes: Vec<Note>,
    /// Why the mode could not run here (e.g. no `fallocate` on this
    /// filesystem), if so; the figures are then zero.
    pub unsupported: Option<crate::reason::Reason>,
    /// Where the run's file or log directory was kept
    /// ([`CommitBenchOptions::keep`]); `None` when it was removed.
    #[serde(serialize_with = "ser_opt_path")]
    pub kept: Option<std::path::PathBuf>,
    /// The cache flushes the devices under the filesystem completed
    /// during the commits, against the durable syncs made: whether the
    /// commits reached stable storage. `None` when the mode did not run.
    pub flushes: Option<crate::fs_info::Flushes>,
}

setters!(CommitBenchOptions { record_size: usize, writers: usize, writer_counts: Vec<usize>, duration: Duration, file_size: u64, segment_size: u64, direct_io: Option<bool>, prepare: StrategyChoice, sync_methods: Vec<SyncMethod>, stop_at_end: bool, pad_flushes: Option<bool>, nocow: Option<bool>, keep: bool });
/// A kept path as a string, bytes that are not UTF-8 replaced (the report
/// must not fail after the run it reports).
fn ser_opt_path<S: serde::Serializer>(
    p: &Option<std::path::PathBuf>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => crate::units::ser_path_lossy(p, s),
        None => s.serialize_none(),
    }
}
