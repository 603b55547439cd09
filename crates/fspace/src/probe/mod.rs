//! The measurements behind `fspace probe`: what each way of preparing space
//! is worth on one filesystem, measured in one run, and the policy that
//! follows from them.
//!
//! A probe works in a scratch directory inside the directory given, which is
//! removed afterwards, also after an error or a cancel. It measures:
//!
//! - the filesystem's facts and capabilities ([`fs_info_uncached`]);
//! - growth of a fresh file by each [`Strategy`] that works here (256 MiB,
//!   `fdatasync` included);
//! - 8 KiB commits (`pwrite` + `fdatasync`) into space in each
//!   [`SpaceState`] and through the [`Wal`](crate::Wal), with the
//!   [`bench`](crate::bench) engine, in alternating rounds;
//! - with [`Level::Full`], a record-size sweep.
//!
//! From those it [recommends](decide) a strategy per [`Intent`] with the
//! measured reason, and [`save`] keeps the recommendations in a
//! [`SavedResults`] store, where the policy finds them for that filesystem
//! ([`crate::policy`]).
//!
//! The JSON form ([`ProbeResult`]) is versioned by [`SCHEMA`]; its fields
//! are documented in `docs/probe-json.md`.

pub mod decide;

pub use crate::policy::FsKey;
pub use decide::{recommend, Recommendation, TIE_MARGIN};

use crate::bench::{run_commit, CommitBenchOptions, CommitMode, WalFigures};
use crate::error::{Error, Result};
use crate::fs_info::{fs_info_uncached, identify, FsInfo};
use crate::grow::{grow, GrowOptions, Intent, Strategy};
use crate::policy::{SavedPolicy, SavedRecommendation, SavedResults, StrategyChoice};
use crate::sys::{self, Errno};
use crate::units::format_human;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The JSON schema of [`ProbeResult`] (and of saved measurements): a name
/// and a major version, bumped when a field changes meaning or goes away
/// (fields may be added within a version).
pub const SCHEMA: &str = "fspace-probe/1";

/// How thorough a probe is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// At most about 10 s: one round of each measurement.
    Quick,
    /// At most about 30 s: two alternating rounds of the commit measurements.
    #[default]
    Standard,
    /// Three rounds, larger files, and a record-size sweep (512 B, 8 KiB,
    /// 64 KiB, 1 MiB) of the appended, recycled and log states.
    Full,
}

impl Level {
    /// Returns the name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Standard => "standard",
            Level::Full => "full",
        }
    }

    fn budget(self) -> Budget {
        match self {
            Level::Quick => Budget {
                total: Duration::from_secs(10),
                rounds: 1,
                max_mode: Duration::from_millis(1000),
                file_size: 32 << 20,
                growth_cap: Duration::from_millis(2500),
                sweep: false,
            },
            Level::Standard => Budget {
                total: Duration::from_secs(30),
                rounds: 2,
                max_mode: Duration::from_millis(1800),
                file_size: 64 << 20,
                growth_cap: Duration::from_secs(5),
                sweep: false,
            },
            Level::Full => Budget {
                total: Duration::from_secs(180),
                rounds: 3,
                max_mode: Duration::from_millis(3000),
                file_size: 128 << 20,
                growth_cap: Duration::from_secs(20),
                sweep: true,
            },
        }
    }
}

/// What a level may spend.
struct Budget {
    /// The whole run's target.
    total: Duration,
    /// Alternating rounds of the commit measurements.
    rounds: usize,
    /// Longest time per commit mode and round (shortened to fit `total`).
    max_mode: Duration,
    /// The file each overwrite mode commits into (one pass, no wrap).
    file_size: u64,
    /// Longest time the zero-fill growth may take; past it the throughput
    /// is measured on what was written.
    growth_cap: Duration,
    /// Whether to run the record-size sweep.
    sweep: bool,
}

/// Bytes per record in the commit measurements: 8 KiB, the page size of
/// PostgreSQL's WAL and a common database page.
pub const RECORD_SIZE: usize = 8 << 10;

/// Growth measured per strategy: 256 MiB (scaled down when the filesystem
/// has less free space, and said so).
pub const GROWTH_SIZE: u64 = 256 << 20;

/// Record sizes of the [`Level::Full`] sweep.
pub const SWEEP_RECORDS: [usize; 4] = [512, 8 << 10, 64 << 10, 1 << 20];

/// Zero-fill growth is measured in synced steps (so that it can stop at the
/// time cap with an honest figure: the data is on disk) of at most this
/// size...
const ZERO_FILL_STEP: u64 = 32 << 20;

/// ...starting with this one, then sized to take about
/// [`ZERO_FILL_STEP_TIME`] at the rate measured so far.
const ZERO_FILL_FIRST_STEP: u64 = 1 << 20;

/// Target time of one zero-fill step.
const ZERO_FILL_STEP_TIME: Duration = Duration::from_millis(250);

/// Smallest commit file (on slow devices the files shrink to keep the
/// budget).
const MIN_FILE: u64 = 1 << 20;

/// Time per sweep point.
const SWEEP_TIME: Duration = Duration::from_millis(1500);

/// Copy-on-write filesystems smaller than this (8 GiB) get a run scaled to
/// one [`SMALL_COW_SHARE`]th of their size.
const SMALL_COW: u64 = 8 << 30;

/// One eighth.
const SMALL_COW_SHARE: u64 = 8;

/// Smallest growth measured when space is short.
const MIN_GROWTH: u64 = 32 << 20;

/// Room kept free besides the measured files (metadata, journals, the
/// capability probe's scratch files).
const MARGIN: u64 = 32 << 20;

/// Shortest time per commit mode when the budget is tight: below this the
/// percentiles mean little.
const MIN_MODE: Duration = Duration::from_millis(250);

/// Most runs of one state in one round (see [`Run::commit`]).
const MAX_RUNS: usize = 32;

/// Most extra rounds for a close call (see [`Run::commit`]).
const MAX_EXTRA_ROUNDS: usize = 4;

/// Share of the budget the main rounds leave for a close call: 15%.
const CLOSE_CALL_SHARE: f64 = 0.15;

/// Returns (the fastest preparation, the recommended one) when the log
/// recommendation on `states` is not within [`TIE_MARGIN`] of the fastest
/// preparation measured.
fn close_call(info: &FsInfo, states: &[StateResult]) -> Option<(SpaceState, SpaceState)> {
    let log = decide::log(info, states);
    let fastest = decide::fastest_preparation(states)?;
    if !log.measured || fastest.0 == log.strategy || log.figure >= (1.0 - TIE_MARGIN) * fastest.1 {
        return None;
    }
    Some((
        SpaceState::of_strategy(fastest.0)?,
        SpaceState::of_strategy(log.strategy)?,
    ))
}

/// Marker in the name of the probe's scratch directory:
/// `.fspace-probe-HOST-PID-SEQ`. A directory left by a killed probe on this
/// host is removed by the next probe of the same directory.
pub const PROBE_MARKER: &str = ".fspace-probe-";

/// How to probe.
#[derive(Clone, Copy, Default)]
pub struct ProbeOptions<'a> {
    /// How thorough.
    pub level: Level,
    /// Checked between and inside measurements: when it becomes true the
    /// probe stops, removes its scratch directory and fails with
    /// `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called when each measurement starts.
    pub progress: Option<&'a dyn Fn(&ProbeProgress)>,
}

impl std::fmt::Debug for ProbeOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeOptions")
            .field("level", &self.level)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Where a probe is.
#[derive(Debug, Clone)]
pub struct ProbeProgress {
    /// The measurement starting (1-based).
    pub step: usize,
    /// Measurements in the run.
    pub steps: usize,
    /// What it measures, in words.
    pub what: String,
    /// Time since the probe started.
    pub elapsed: Duration,
    /// The level's time budget.
    pub budget: Duration,
}

/// A state the space a commit overwrites can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
        }
    }

    /// Returns the benchmark mode that measures this state.
    pub fn mode(self) -> CommitMode {
        match self {
            SpaceState::Appended => CommitMode::Append,
            SpaceState::Sparse => CommitMode::Sparse,
            SpaceState::Allocated => CommitMode::Allocate,
            SpaceState::WriteZeroed => CommitMode::WriteZeroes,
            SpaceState::ZeroFilled => CommitMode::ZeroFillNow,
            SpaceState::Recycled => CommitMode::Overwrite,
            SpaceState::Wal => CommitMode::Wal,
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

/// Commits into one space state, over all rounds.
#[derive(Debug, Clone, Serialize)]
pub struct StateResult {
    /// The state.
    pub state: SpaceState,
    /// The benchmark mode that measured it.
    pub mode: CommitMode,
    /// Why it could not be measured here (e.g. no `fallocate`), if so.
    pub unsupported: Option<String>,
    /// Median commits per second over the rounds.
    pub commits_per_sec: f64,
    /// Commits per second of each run, in order: one per round, more
    /// where the prepared file was used up early and the state ran again
    /// on a freshly prepared one.
    pub runs: Vec<f64>,
    /// Median over the rounds of the median commit latency, µs.
    pub p50_us: f64,
    /// Median over the rounds of the 99th percentile latency, µs.
    pub p99_us: f64,
    /// Commits measured in all rounds.
    pub commits: u64,
    /// `commits_per_sec` ÷ the appended state's.
    pub vs_append: Option<f64>,
    /// The log's figures from the last round (`wal` only).
    pub wal: Option<WalFigures>,
    /// What qualifies the figures (each note once).
    pub notes: Vec<String>,
}

impl StateResult {
    /// Returns true if and only if the state was measured with commits.
    pub fn measured(&self) -> bool {
        self.unsupported.is_none() && self.commits > 0
    }
}

/// The commit measurements.
#[derive(Debug, Clone, Serialize)]
pub struct CommitSection {
    /// Bytes per record.
    pub record_size: usize,
    /// Alternating rounds (the order of the states rotates each round).
    pub rounds: usize,
    /// Time per state and round, seconds (a state stops early when its
    /// prepared file is used up).
    pub seconds_per_mode: f64,
    /// Size of the file each overwrite state commits into.
    pub file_size: u64,
    /// One entry per state, in [`SpaceState::ALL`] order.
    pub states: Vec<StateResult>,
}

/// Growth of a fresh file by one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct GrowthResult {
    /// The strategy.
    pub strategy: Strategy,
    /// Why it does not work here, if so.
    pub unsupported: Option<String>,
    /// Its errno, if unsupported.
    pub errno: Option<i32>,
    /// Bytes grown (less than the target when the time cap stopped a
    /// zero-fill; `reserve` reserves them past the length).
    pub bytes: u64,
    /// Time including `fdatasync`, seconds.
    pub seconds: f64,
    /// `bytes` ÷ `seconds`.
    pub bytes_per_sec: f64,
    /// Bytes the file had allocated afterwards (`st_blocks`).
    pub allocated_bytes: u64,
    /// True if the time cap stopped it before the target.
    pub capped: bool,
}

/// The growth measurements.
#[derive(Debug, Clone, Serialize)]
pub struct GrowthSection {
    /// Bytes each strategy grows a fresh file to.
    pub target_size: u64,
    /// One entry per strategy, in [`Strategy::ALL`] order.
    pub results: Vec<GrowthResult>,
}

/// One point of the record-size sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    /// Bytes per record.
    pub record_size: usize,
    /// The state.
    pub state: SpaceState,
    /// Why it could not be measured, if so.
    pub unsupported: Option<String>,
    /// Commits per second.
    pub commits_per_sec: f64,
    /// Payload throughput, MiB/s.
    pub mib_per_sec: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
}

/// Everything one probe measured and concluded (the JSON document).
#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The fspace version that measured.
    pub fspace_version: &'static str,
    /// How thorough the run was.
    pub level: Level,
    /// The directory probed.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub directory: PathBuf,
    /// When the probe started, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The same as `YYYY-MM-DD HH:MM:SS UTC`.
    pub started_utc: String,
    /// How long it took.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
    /// The level's time budget, seconds.
    pub budget_seconds: f64,
    /// The filesystem and its measured capabilities.
    pub filesystem: FsInfo,
    /// What identifies this filesystem for saved measurements.
    pub key: FsKey,
    /// Commit rate and latency per space state.
    pub commit: CommitSection,
    /// Growth time per strategy.
    pub growth: GrowthSection,
    /// The record-size sweep ([`Level::Full`] only).
    pub sweep: Option<Vec<SweepPoint>>,
    /// One recommendation per intent (log, bulk, sparse).
    pub recommendations: Vec<Recommendation>,
    /// What qualifies the run (scaled down, over budget, ...).
    pub notes: Vec<String>,
}

impl ProbeResult {
    /// Returns the measurements of `state`.
    pub fn state(&self, state: SpaceState) -> Option<&StateResult> {
        self.commit.states.iter().find(|s| s.state == state)
    }

    /// Returns the recommendation for `intent`.
    pub fn recommendation(&self, intent: Intent) -> Option<&Recommendation> {
        self.recommendations.iter().find(|r| r.intent == intent)
    }
}

/// The scratch directory, removed with everything in it when dropped.
struct ScratchDir {
    path: PathBuf,
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl ScratchDir {
    /// Returns the path; dropping no longer removes it.
    fn disarm(mut self) -> PathBuf {
        std::mem::take(&mut self.path)
    }
}

/// Probes the filesystem holding directory `dir` (see the module docs).
///
/// Refuses, creating nothing, when `dir` is missing, not a directory, on a
/// read-only mount, not writable, or on a filesystem with less free space
/// than the smallest run needs (the message says how much); with less than
/// a full run needs, the growth measurement is scaled down and a note says
/// so.
pub fn probe(dir: &Path, opts: &ProbeOptions<'_>) -> Result<ProbeResult> {
    let start = Instant::now();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let budget = opts.level.budget();
    // Reports and saved results name the directory, not `.`.
    let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let info = check_dir(dir)?;
    let mut notes = vec![];
    let growth_size = size_run(dir, &info, &budget, opts.level, &mut notes)?;
    crate::stale::remove_stale(dir, PROBE_MARKER);
    let path = dir.join(crate::stale::unique_name("", PROBE_MARKER));
    std::fs::create_dir(&path).map_err(|e| {
        let e = Error::from_io("mkdir", &path, None, e);
        if e.raw_os_error() == Some(Errno::ACCESS.raw_os_error()) {
            Error::refused(
                "probe",
                dir,
                Errno::ACCESS,
                "cannot create a scratch directory here: permission denied",
            )
        } else {
            e
        }
    })?;
    // Armed only once the directory is ours.
    let scratch = ScratchDir { path };
    let mut run = Run {
        dir: &scratch.path,
        opts,
        budget: &budget,
        start,
        step: 0,
        steps: 0,
    };
    let mut result = run.all(growth_size, &mut notes);
    if result.is_err() && opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        // Whatever the signal interrupted (a growth, a commit), say what
        // the user did, in the probe's words.
        result = Err(run.interrupted());
    }
    // Removed here rather than by the guard (which covers a panic), so
    // that a failure is reported.
    let path = scratch.disarm();
    if let Err(e) = std::fs::remove_dir_all(&path) {
        // Something (an immutable file, a busy mount) prevented it: say so,
        // with its errno, rather than leave it silently.
        let removal = Error::from_io("remove scratch directory", &path, None, e);
        return Err(match result {
            Err(first) => Error::refused(
                "probe",
                dir,
                Errno::from_raw_os_error(
                    first
                        .raw_os_error()
                        .or(removal.raw_os_error())
                        .unwrap_or(Errno::IO.raw_os_error()),
                ),
                format!("{first}; and the scratch directory could not be removed: {removal}"),
            ),
            Ok(_) => removal,
        });
    }
    let (filesystem, commit, growth, sweep) = result?;
    let elapsed = start.elapsed();
    if elapsed > budget.total + Duration::from_secs(2) {
        let fill = growth
            .results
            .iter()
            .find(|g| g.strategy == Strategy::ZeroFill && g.unsupported.is_none())
            .map(|g| {
                format!(
                    " (zeros were written at {}/s)",
                    format_human(g.bytes_per_sec as u64)
                )
            })
            .unwrap_or_default();
        notes.push(format!(
            "took {:.1} s, over the {} run's {} s budget: preparing files and syncing took longer here than the plan allows{fill}",
            elapsed.as_secs_f64(),
            opts.level.name(),
            budget.total.as_secs()
        ));
    }
    if matches!(
        filesystem.kind,
        crate::fs_info::FsKind::Tmpfs | crate::fs_info::FsKind::Ramfs
    ) {
        notes.push(format!(
            "{} is memory: fdatasync writes nothing, so the commit figures measure memory copies, and nothing here survives a reboot",
            filesystem.display_name()
        ));
    }
    let recommendations = recommend(&filesystem, &commit.states, &growth.results);
    let mut filesystem = filesystem;
    // The scratch directory is gone: describe the directory asked about.
    filesystem.path = dir.to_path_buf();
    Ok(ProbeResult {
        schema: SCHEMA,
        fspace_version: env!("CARGO_PKG_VERSION"),
        level: opts.level,
        directory: dir.to_path_buf(),
        started_unix: started,
        started_utc: utc(started),
        elapsed,
        budget_seconds: budget.total.as_secs_f64(),
        key: FsKey::of(&filesystem),
        filesystem,
        commit,
        growth,
        sweep,
        recommendations,
        notes,
    })
}

/// Checks `dir` before anything is created; returns its filesystem.
fn check_dir(dir: &Path) -> Result<FsInfo> {
    let st = match sys::stat(dir) {
        Ok(st) => st,
        Err(e) if e == Errno::NOENT => {
            return Err(Error::refused(
                "probe",
                dir,
                e,
                "no such directory (the probe measures inside an existing directory)",
            ))
        }
        Err(e) => return Err(Error::io("stat", dir, None, e)),
    };
    if !st.is_dir() {
        return Err(Error::refused(
            "probe",
            dir,
            Errno::NOTDIR,
            format!(
                "is a {}, not a directory; give the directory the files live in",
                st.type_name()
            ),
        ));
    }
    let info = identify(dir)?;
    if info.read_only {
        return Err(Error::refused(
            "probe",
            dir,
            Errno::ROFS,
            format!(
                "is on a read-only mount ({}); nothing can be measured without writing",
                info.mount_point
                    .as_deref()
                    .map_or_else(|| "?".into(), |m| m.display().to_string())
            ),
        ));
    }
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    if let Err(e) = accessat(
        CWD,
        dir,
        Access::WRITE_OK | Access::EXEC_OK,
        AtFlags::EACCESS,
    ) {
        return Err(Error::refused(
            "probe",
            dir,
            e,
            format!(
                "is not writable by this user (uid {}): the probe needs to create scratch files there",
                rustix::process::geteuid().as_raw()
            ),
        ));
    }
    Ok(info)
}

/// Bytes the log may hold at once in the probe: a segment being written,
/// the ones prepared ahead and the recycle pool.
fn wal_need() -> u64 {
    crate::wal::DEFAULT_SEGMENT_SIZE
        * (1 + crate::wal::DEFAULT_PREPARE_AHEAD + crate::wal::DEFAULT_RECYCLE_POOL) as u64
}

/// Returns the growth size for the free space available, or refuses.
fn size_run(
    dir: &Path,
    info: &FsInfo,
    budget: &Budget,
    level: Level,
    notes: &mut Vec<String>,
) -> Result<u64> {
    let free = if crate::grow::usable_by_root(info.magic) {
        info.free_bytes_root.max(info.free_bytes)
    } else {
        info.free_bytes
    };
    let others = budget.file_size.max(wal_need()) + MARGIN;
    let least = MIN_GROWTH + others;
    if info.total_bytes > 0 && free < least {
        return Err(Error::refused(
            "probe",
            dir,
            Errno::NOSPC,
            format!(
                "a {} run needs at least {} free; this filesystem has {} free. Nothing was written",
                level.name(),
                format_human(least),
                format_human(free)
            ),
        ));
    }
    let mut target = GROWTH_SIZE;
    if info.copy_on_write && info.total_bytes > 0 && info.total_bytes < SMALL_COW {
        // btrfs hands out space in chunks and keeps emptied data chunks: a
        // few probes of a small one left no room for metadata (transaction
        // abort, forced read-only) on the 512 MB test btrfs. Stay small.
        let cap = (info.total_bytes / SMALL_COW_SHARE) >> 20 << 20;
        target = cap.clamp(MIN_GROWTH, GROWTH_SIZE);
        if target < GROWTH_SIZE {
            notes.push(format!(
                "small copy-on-write filesystem ({}): growth measured on {} and files kept to {} or less, \
                 so that the probe does not use up its chunk space",
                format_human(info.total_bytes),
                format_human(target),
                format_human(cap.max(MIN_FILE))
            ));
        }
    }
    if info.total_bytes > 0 && free < target + others {
        let g = ((free - others) / ZERO_FILL_STEP * ZERO_FILL_STEP).clamp(MIN_GROWTH, target);
        notes.push(format!(
            "scaled down: growth measured on {} instead of {} ({} free)",
            format_human(g),
            format_human(target),
            format_human(free)
        ));
        return Ok(g);
    }
    Ok(target)
}

type Sections = (
    FsInfo,
    CommitSection,
    GrowthSection,
    Option<Vec<SweepPoint>>,
);

struct Run<'a> {
    dir: &'a Path,
    opts: &'a ProbeOptions<'a>,
    budget: &'a Budget,
    start: Instant,
    step: usize,
    steps: usize,
}

impl Run<'_> {
    fn interrupted(&self) -> Error {
        Error::refused(
            "probe",
            self.dir.parent().unwrap_or(self.dir),
            Errno::CANCELED,
            "interrupted",
        )
    }

    fn cancelled(&self) -> Result<()> {
        if self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(self.interrupted());
        }
        Ok(())
    }

    fn begin(&mut self, what: String) -> Result<()> {
        self.cancelled()?;
        self.step += 1;
        if let Some(p) = self.opts.progress {
            p(&ProbeProgress {
                step: self.step,
                steps: self.steps.max(self.step),
                what,
                elapsed: self.start.elapsed(),
                budget: self.budget.total,
            });
        }
        Ok(())
    }

    fn all(&mut self, growth_size: u64, notes: &mut Vec<String>) -> Result<Sections> {
        let b = self.budget;
        let sweep_steps = if b.sweep { SWEEP_RECORDS.len() * 3 } else { 0 };
        self.steps = 1 + Strategy::ALL.len() + b.rounds * SpaceState::ALL.len() + sweep_steps;
        self.begin("filesystem facts and capabilities".into())?;
        let info = fs_info_uncached(self.dir)?;
        let growth = self.growth(growth_size)?;
        let commit = self.commit(&info, &growth, notes)?;
        let sweep = if b.sweep {
            Some(self.sweep(commit.file_size, notes)?)
        } else {
            None
        };
        Ok((info, commit, growth, sweep))
    }

    fn growth(&mut self, size: u64) -> Result<GrowthSection> {
        let mut results = vec![];
        for s in Strategy::ALL {
            self.begin(format!("growth of {} by {s}", format_human(size)))?;
            results.push(self.grow_one(s, size)?);
        }
        Ok(GrowthSection {
            target_size: size,
            results,
        })
    }

    fn grow_one(&self, s: Strategy, size: u64) -> Result<GrowthResult> {
        let p = self.dir.join(format!("grow-{}", s.name()));
        let _ = std::fs::File::create(&p).map_err(|e| Error::from_io("create", &p, None, e))?;
        let r = self.grow_timed(&p, s, size);
        let allocated = sys::stat(&p).map(|st| st.blocks * 512).unwrap_or(0);
        let _ = std::fs::remove_file(&p);
        let (bytes, secs, capped) = match r {
            Ok(x) => x,
            Err(e)
                if crate::errno::unsupported_raw(
                    crate::errno::Call::Fallocate,
                    e.raw_os_error(),
                ) =>
            {
                return Ok(GrowthResult {
                    strategy: s,
                    errno: e.raw_os_error(),
                    unsupported: Some(e.to_string()),
                    bytes: 0,
                    seconds: 0.0,
                    bytes_per_sec: 0.0,
                    allocated_bytes: 0,
                    capped: false,
                })
            }
            Err(e) => return Err(e),
        };
        Ok(GrowthResult {
            strategy: s,
            unsupported: None,
            errno: None,
            bytes,
            seconds: secs,
            bytes_per_sec: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
            allocated_bytes: allocated,
            capped,
        })
    }

    /// Grows `p` from empty by `s` with `fdatasync`; zero-fill goes in
    /// synced steps sized to take about [`ZERO_FILL_STEP_TIME`] each and
    /// stops at the time cap. Returns (bytes, seconds, capped).
    fn grow_timed(&self, p: &Path, s: Strategy, size: u64) -> Result<(u64, f64, bool)> {
        let opts = GrowOptions {
            choice: StrategyChoice::exactly(s),
            intent: Intent::Bulk,
            sync: true,
            cancel: self.opts.cancel,
            ..Default::default()
        };
        let t0 = Instant::now();
        if s != Strategy::ZeroFill {
            grow(p, size, &opts)?;
            return Ok((size, t0.elapsed().as_secs_f64(), false));
        }
        let mut len = 0;
        let mut step = ZERO_FILL_FIRST_STEP;
        while len < size {
            let next = (len + step).min(size);
            let ts = Instant::now();
            grow(p, next, &opts)?;
            let rate = (next - len) as f64 / ts.elapsed().as_secs_f64().max(1e-6);
            len = next;
            if len < size && t0.elapsed() >= self.budget.growth_cap {
                return Ok((len, t0.elapsed().as_secs_f64(), true));
            }
            // The next step takes about ZERO_FILL_STEP_TIME at this rate,
            // in whole MiB, so a slow device cannot blow the cap by much.
            let want = (rate * ZERO_FILL_STEP_TIME.as_secs_f64()) as u64;
            step = (want >> 20 << 20).clamp(ZERO_FILL_FIRST_STEP, ZERO_FILL_STEP);
        }
        Ok((len, t0.elapsed().as_secs_f64(), false))
    }

    /// The rate zeros were written at in the growth step (bytes/s), or a
    /// guess when zero-fill could not run.
    fn fill_rate(growth: &GrowthSection) -> f64 {
        growth
            .results
            .iter()
            .find(|g| g.strategy == Strategy::ZeroFill && g.unsupported.is_none())
            .map_or(100e6, |g| g.bytes_per_sec.max(1e6))
    }

    /// Time for the next state so that the states still to run fit what
    /// is left of the budget, counting each one's preparation at the
    /// measured zero-fill rate.
    fn state_time(&self, left_states: usize, setup: Duration, reserve: Duration) -> Duration {
        let left = self
            .budget
            .total
            .saturating_sub(self.start.elapsed())
            .saturating_sub(reserve)
            .mul_f64(0.9);
        let per = left
            .checked_div(left_states.max(1) as u32)
            .unwrap_or(MIN_MODE)
            .saturating_sub(setup);
        per.clamp(MIN_MODE, self.budget.max_mode)
    }

    /// Runs `state` for `per_state`, again on a freshly prepared file
    /// while its file is used up early (a fast device, tmpfs) and time
    /// lasts: more samples, never a wrap into written blocks.
    fn run_state(
        &self,
        state: SpaceState,
        bopts: &mut CommitBenchOptions,
        per_state: Duration,
    ) -> Result<Vec<crate::bench::CommitResult>> {
        let slots = bopts.file_size / bopts.record_size as u64;
        let t0 = Instant::now();
        let mut out = vec![];
        for _ in 0..MAX_RUNS {
            bopts.duration = per_state.saturating_sub(t0.elapsed());
            let r = run_commit(self.dir, state.mode(), bopts, self.opts.cancel)?;
            self.cancelled()?;
            let used_up = r.unsupported.is_none() && r.commits >= slots;
            out.push(r);
            if !used_up || per_state.saturating_sub(t0.elapsed()) < MIN_MODE {
                break;
            }
        }
        Ok(out)
    }

    fn commit(
        &mut self,
        info: &FsInfo,
        growth: &GrowthSection,
        notes: &mut Vec<String>,
    ) -> Result<CommitSection> {
        let b = self.budget;
        let fill = Self::fill_rate(growth);
        // Files sized so that preparing one takes at most a twentieth of
        // the budget at the measured rate (a slow disk or NFS), within the
        // level's size; the log's segments follow (at most its default).
        let mut file_size =
            ((fill * b.total.as_secs_f64() / 20.0) as u64 >> 20 << 20).clamp(MIN_FILE, b.file_size);
        let mut segment_size = (file_size / 2).clamp(1 << 20, crate::wal::DEFAULT_SEGMENT_SIZE);
        if info.copy_on_write && info.total_bytes > 0 && info.total_bytes < SMALL_COW {
            // See `size_run`: the log may hold seven segments at once.
            let cap = ((info.total_bytes / SMALL_COW_SHARE) >> 20 << 20).max(MIN_FILE);
            file_size = file_size.min(cap);
            segment_size = segment_size.min((cap / 8).max(1 << 20));
        }
        if file_size < b.file_size {
            notes.push(format!(
                "slow writes ({}/s): commit files of {} and log segments of {} instead of {} and {}",
                format_human(fill as u64),
                format_human(file_size),
                format_human(segment_size),
                format_human(b.file_size),
                format_human(crate::wal::DEFAULT_SEGMENT_SIZE)
            ));
        }
        let setup_of = |st: SpaceState| -> Duration {
            let bytes = match st {
                SpaceState::ZeroFilled | SpaceState::Recycled => file_size,
                SpaceState::Wal => segment_size * (1 + crate::wal::DEFAULT_PREPARE_AHEAD as u64),
                _ => 0,
            };
            Duration::from_secs_f64(bytes as f64 / fill + 0.02)
        };
        // A state whose preparation failed in the growth step (no
        // fallocate, no WRITE_ZEROES) is reported with that reason and not
        // run: the same classification for both steps.
        let unsupported_here = |st: SpaceState| -> Option<String> {
            let need = st.needs()?;
            growth
                .results
                .iter()
                .find(|g| g.strategy == need)
                .and_then(|g| g.unsupported.clone())
        };
        let running: Vec<usize> = (0..SpaceState::ALL.len())
            .filter(|&i| unsupported_here(SpaceState::ALL[i]).is_none())
            .collect();
        // Time kept back from the main rounds: the sweep (each point with
        // its preparation) and a share for a close call.
        let sweep_reserve = if b.sweep {
            (SWEEP_TIME * 3 + setup_of(SpaceState::Recycled) + setup_of(SpaceState::Wal))
                * SWEEP_RECORDS.len() as u32
        } else {
            Duration::ZERO
        };
        let reserve = sweep_reserve + b.total.mul_f64(CLOSE_CALL_SHARE);
        let mut bopts = CommitBenchOptions {
            record_size: RECORD_SIZE,
            file_size,
            segment_size,
            stop_at_end: true,
            ..Default::default()
        };
        let n = SpaceState::ALL.len();
        let mut runs: Vec<Vec<crate::bench::CommitResult>> = vec![vec![]; n];
        let mut shortest = b.max_mode;
        let mut longest = Duration::ZERO;
        let mut to_run = b.rounds * running.len();
        for round in 0..b.rounds {
            // Rotate the order each round so that no state always runs
            // first (or right after the same neighbour).
            for k in 0..n {
                let i = (k + round * 3) % n;
                let state = SpaceState::ALL[i];
                let into = if state == SpaceState::Wal {
                    "through fspace's log".to_string()
                } else {
                    format!("into {} space", state.name())
                };
                self.begin(format!(
                    "8 KiB commits {into} (round {} of {})",
                    round + 1,
                    b.rounds
                ))?;
                if !running.contains(&i) {
                    continue;
                }
                let per_state = self.state_time(to_run, setup_of(state), reserve);
                to_run = to_run.saturating_sub(1);
                shortest = shortest.min(per_state);
                longest = longest.max(per_state);
                let rs = self.run_state(state, &mut bopts, per_state)?;
                runs[i].extend(rs);
            }
        }
        let summarize_all = |runs: &[Vec<crate::bench::CommitResult>]| -> Vec<StateResult> {
            SpaceState::ALL
                .iter()
                .zip(runs)
                .map(|(&state, rs)| {
                    let mut r = summarize(state, rs);
                    if let Some(u) = unsupported_here(state) {
                        r.unsupported = Some(u);
                    }
                    r
                })
                .collect()
        };
        // A close call: when the log recommendation is not within the
        // margin of the fastest preparation measured (noise, most often on
        // a copy-on-write filesystem where the fastest is ruled out), the
        // two are measured again, alternating, while the budget lasts, and
        // the decision is made on the medians of all their runs.
        let mut extra = 0;
        let mut pair = None;
        while extra < MAX_EXTRA_ROUNDS {
            let Some((fast, chosen)) = close_call(info, &summarize_all(&runs)) else {
                break;
            };
            pair = Some((fast, chosen));
            let left = b
                .total
                .saturating_sub(self.start.elapsed())
                .saturating_sub(sweep_reserve + Duration::from_secs(1));
            let setup = setup_of(fast).max(setup_of(chosen));
            let per_state = (left / 2).saturating_sub(setup).min(b.max_mode);
            if per_state < MIN_MODE {
                break;
            }
            let order = if extra % 2 == 0 {
                [chosen, fast]
            } else {
                [fast, chosen]
            };
            for st in order {
                self.steps += 1;
                self.begin(format!(
                    "close call: 8 KiB commits into {} space again",
                    st.name()
                ))?;
                let i = SpaceState::ALL.iter().position(|x| *x == st).unwrap_or(0);
                let rs = self.run_state(st, &mut bopts, per_state)?;
                runs[i].extend(rs);
            }
            extra += 1;
        }
        if let Some((fast, chosen)) = pair {
            let outcome = if close_call(info, &summarize_all(&runs)).is_some() {
                "the gap stayed above the 10% margin"
            } else {
                "the medians of all runs are within the 10% margin"
            };
            notes.push(if extra == 0 {
                format!(
                    "close call between {} and {} space: no time was left to measure them again",
                    fast.name(),
                    chosen.name()
                )
            } else {
                format!(
                    "close call between {} and {} space: measured both {extra} more time{} (alternating); {outcome}",
                    fast.name(),
                    chosen.name(),
                    if extra == 1 { "" } else { "s" }
                )
            });
        }
        let mut states = summarize_all(&runs);
        let append = states
            .iter()
            .find(|s| s.state == SpaceState::Appended && s.measured())
            .map(|s| s.commits_per_sec);
        for s in &mut states {
            if let Some(a) = append.filter(|a| *a > 0.0) {
                if s.measured() {
                    s.vs_append = Some(s.commits_per_sec / a);
                }
            }
        }
        if shortest <= MIN_MODE {
            notes.push(format!(
                "the budget left {} ms for some states: their commit figures are rough",
                MIN_MODE.as_millis()
            ));
        }
        Ok(CommitSection {
            record_size: RECORD_SIZE,
            rounds: b.rounds,
            seconds_per_mode: longest.as_secs_f64(),
            file_size,
            states,
        })
    }

    fn sweep(&mut self, file_size: u64, notes: &mut Vec<String>) -> Result<Vec<SweepPoint>> {
        let mut out = vec![];
        let mut skipped = 0;
        for rec in SWEEP_RECORDS {
            for state in [SpaceState::Appended, SpaceState::Recycled, SpaceState::Wal] {
                self.begin(format!(
                    "record-size sweep: {} commits {}",
                    format_human(rec as u64),
                    if state == SpaceState::Wal {
                        "through fspace's log".to_string()
                    } else {
                        format!("into {} space", state.name())
                    }
                ))?;
                if self.start.elapsed() >= self.budget.total {
                    skipped += 1;
                    continue;
                }
                let o = CommitBenchOptions {
                    record_size: rec,
                    duration: SWEEP_TIME,
                    file_size: file_size.max(rec as u64 * 64),
                    segment_size: (file_size / 2)
                        .clamp(1 << 20, crate::wal::DEFAULT_SEGMENT_SIZE)
                        .max(rec as u64 * 16),
                    stop_at_end: true,
                    ..Default::default()
                };
                let r = run_commit(self.dir, state.mode(), &o, self.opts.cancel)?;
                self.cancelled()?;
                let lat = r.latency.clone().unwrap_or_default();
                out.push(SweepPoint {
                    record_size: rec,
                    state,
                    unsupported: r.unsupported.clone(),
                    commits_per_sec: r.commits_per_sec,
                    mib_per_sec: r.mib_per_sec,
                    p50_us: lat.p50_us,
                    p99_us: lat.p99_us,
                });
            }
        }
        if skipped > 0 {
            notes.push(format!(
                "the budget ran out: {skipped} of {} sweep points were not measured",
                SWEEP_RECORDS.len() * 3
            ));
        }
        Ok(out)
    }
}

impl SpaceState {
    /// Returns the strategy whose support this state needs, if any.
    fn needs(self) -> Option<Strategy> {
        match self {
            SpaceState::Allocated => Some(Strategy::Allocate),
            SpaceState::WriteZeroed => Some(Strategy::WriteZeroes),
            _ => None,
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn summarize(state: SpaceState, rs: &[crate::bench::CommitResult]) -> StateResult {
    let mut notes: Vec<String> = vec![];
    for r in rs {
        // Each run ends when its file is used up: that is the design here
        // (see `runs`), not worth a note per run.
        for n in r
            .notes
            .iter()
            .filter(|n| !n.starts_with("stopped after one pass"))
        {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let unsupported = rs.iter().find_map(|r| r.unsupported.clone());
    let ok: Vec<&crate::bench::CommitResult> =
        rs.iter().filter(|r| r.unsupported.is_none()).collect();
    let rounds: Vec<f64> = ok.iter().map(|r| r.commits_per_sec).collect();
    let mut p50: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency.as_ref().map(|l| l.p50_us))
        .collect();
    let mut p99: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency.as_ref().map(|l| l.p99_us))
        .collect();
    StateResult {
        state,
        mode: state.mode(),
        unsupported,
        commits_per_sec: median(&mut rounds.clone()),
        runs: rounds,
        p50_us: median(&mut p50),
        p99_us: median(&mut p99),
        commits: ok.iter().map(|r| r.commits).sum(),
        vs_append: None,
        wal: ok.last().and_then(|r| r.wal.clone()),
        notes,
    }
}

/// Saves `result`'s measured recommendations in `store` for its filesystem
/// (replacing an earlier one; [`SavedResults::save`] says what a power cut
/// may leave), where the policy follows them. Returns the file's path.
pub fn save(result: &ProbeResult, store: &SavedResults) -> Result<PathBuf> {
    store.save(&saved_policy(result))
}

/// The part of `result` that is saved: the key and the recommendations a
/// measurement decided.
pub fn saved_policy(result: &ProbeResult) -> SavedPolicy {
    SavedPolicy {
        schema: crate::policy::SCHEMA.to_string(),
        measured_utc: result.started_utc.clone(),
        measured_by: format!("fspace probe --save ({})", result.level.name()),
        key: result.key.clone(),
        recommendations: result
            .recommendations
            .iter()
            .filter(|r| r.measured)
            .map(|r| SavedRecommendation {
                intent: r.intent,
                strategy: r.strategy,
                recycle: r.recycle,
                summary: r.summary.clone(),
                reason: r.reason.clone(),
            })
            .collect(),
    }
}

/// Formats Unix seconds as `YYYY-MM-DD HH:MM:SS UTC` (civil-from-days,
/// proleptic Gregorian).
pub(crate) fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_342_923), "2026-11-22 10:22:03 UTC");
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut []), 0.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0]), 2.5);
    }
}
