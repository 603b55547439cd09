//! The probe's result, as the JSON schema [`SCHEMA`] describes it
//! (`docs/probe-json.md`), and what of it is saved for the policy.

use crate::bench::{SpaceState, WalFigures};
use crate::grow::Strategy;
use crate::note::Note;
use crate::policy::LogSetup;
use crate::strategy::SyncMethod;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The JSON schema of [`ProbeResult`](super::ProbeResult) (and of saved measurements): a name
/// and a major version, bumped when a field changes meaning or goes away
/// (fields may be added within a version).
pub const SCHEMA: &str = "fspace-probe/4";

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
}

/// Where a probe is.
#[derive(Debug, Clone)]
#[non_exhaustive]
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

/// Commits into one space state, over all rounds.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct StateResult {
    /// The state.
    pub state: SpaceState,
    /// Why it could not be measured here (e.g. no `fallocate`), if so.
    pub unsupported: Option<crate::reason::Reason>,
    /// Median commits per second over the rounds.
    pub commits_per_sec: f64,
    /// Commits per second of each run, in order: one per round (and per
    /// extra round of a close call). Where the prepared file was used up
    /// early and the state ran again on a freshly prepared one within the
    /// round, those runs count as one (commits and time summed): they
    /// share the round's conditions, and the rank test needs independent
    /// samples.
    pub runs: Vec<f64>,
    /// Median over the rounds of the median commit latency, µs.
    pub p50_us: f64,
    /// The median commit latency of each run, µs, in the order of `runs`.
    pub runs_p50_us: Vec<f64>,
    /// Median over the rounds of the 99th percentile latency, µs.
    pub p99_us: f64,
    /// Commits measured in all rounds.
    pub commits: u64,
    /// `commits_per_sec` ÷ the appended state's.
    pub vs_append: Option<f64>,
    /// The log's figures from the last round (`wal` only).
    pub wal: Option<WalFigures>,
    /// What qualifies the figures (each note once).
    pub notes: Vec<Note>,
}

impl StateResult {
    /// Returns true if and only if the state was measured with commits.
    pub fn measured(&self) -> bool {
        self.unsupported.is_none() && self.commits > 0
    }

    /// The slowest and fastest of its runs, commits/s (zeros without runs).
    pub fn range(&self) -> (f64, f64) {
        super::stats::range(&self.runs)
    }
}

/// Commits into written (recycled) space made durable by one
/// [`SyncMethod`], measured in the same rounds as the space states.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SyncMethodResult {
    /// The method.
    pub method: SyncMethod,
    /// Its figures (`state` is `recycled`; for `fdatasync` they are the
    /// recycled state's own).
    #[serde(flatten)]
    pub figures: StateResult,
}

/// What fspace's log, set up as recommended, should reach here: one
/// writer, 8 KiB records.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Prediction {
    /// Commits per second: the median of the runs of the log with the
    /// recommended setup.
    pub commits_per_sec: f64,
    /// The slowest and fastest of those runs.
    pub low: f64,
    /// See `low`.
    pub high: f64,
    /// The setup: preparation and sync method.
    pub setup: String,
    /// Which runs it comes from.
    pub basis: String,
    /// For fspace's log (`commit.prediction`): how it was set up and run,
    /// what `fspace probe --save` keeps for `--compare-saved`; `None` for
    /// an engine's expected rate.
    #[serde(flatten)]
    pub log: Option<LogSetup>,
}

/// fspace's log set up as the space states and sync methods suggest, against
/// its built-in setup, in alternating runs: a recommendation that leaves
/// the built-in setup must make the log itself faster.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct LogCheck {
    /// The suggested setup: preparation and sync method.
    pub setup: String,
    /// The built-in setup.
    pub built_in_setup: String,
    /// The log's runs with the suggested setup.
    pub recommended: StateResult,
    /// The log's runs with the built-in setup, alternating with those.
    pub built_in: StateResult,
    /// Whether the suggested setup beat the built-in one across the runs
    /// (more than 10% in the medians, rank test p <= 0.05).
    pub confirmed: bool,
}

/// The commit measurements.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
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
    /// One entry per sync method, in [`SyncMethod::ALL`] order.
    pub sync_methods: Vec<SyncMethodResult>,
    /// What the recommended log setup should reach (`None` when the log
    /// could not be measured).
    pub prediction: Option<Prediction>,
    /// When the states suggested leaving the log's built-in setup: the log
    /// measured both ways.
    pub log_check: Option<LogCheck>,
    /// The space the log's files took after its last run: their length,
    /// what they reference, and on btrfs the disk extents they pin
    /// (copy-on-write keeps an overwritten page's old extent while any of
    /// it is referenced).
    pub log_space: Option<crate::extents::SpaceUse>,
    /// The runs `fspace probe --compare-saved` will compare with, measured
    /// after the probe by [`measure_baseline`](super::measure_baseline)
    /// when the result is to be saved (`fspace probe --save`); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<crate::policy::Baseline>,
    /// Whether the commits reached stable storage: the cache flushes the
    /// devices under the filesystem completed around the rounds' runs,
    /// per sync method, and the verdict (`None` when no run counted).
    pub durability: Option<super::durability::Durability>,
}

/// Growth of a fresh file by one strategy.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct GrowthResult {
    /// The strategy.
    pub strategy: Strategy,
    /// Why it does not work here, if so.
    pub unsupported: Option<crate::reason::Reason>,
    /// Bytes grown (less than the target when the time cap stopped a
    /// zero-fill; `reserve` reserves them past the length).
    pub bytes: u64,
    /// Time including `fdatasync`, seconds.
    pub seconds: f64,
    /// `bytes` ÷ `seconds`: the median of `runs` (the lower middle one for
    /// an even count).
    pub bytes_per_sec: f64,
    /// Each round's rate, bytes/s, in the order measured: the probe grows a
    /// fresh file by every strategy once per round, in its level's number
    /// of alternating rounds. `bytes`, `seconds`, `bytes_per_sec`,
    /// `allocated_bytes` and `capped` are those of the round with the
    /// median rate.
    pub runs: Vec<f64>,
    /// Bytes the file had allocated afterwards (`st_blocks`).
    pub allocated_bytes: u64,
    /// True if the time cap stopped it before the target.
    pub capped: bool,
}

/// The growth measurements.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct GrowthSection {
    /// Bytes each strategy grows a fresh file to.
    pub target_size: u64,
    /// One entry per strategy, in [`Strategy::ALL`] order.
    pub results: Vec<GrowthResult>,
}

/// One point of the record-size sweep.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SweepPoint {
    /// Bytes per record.
    pub record_size: usize,
    /// The state.
    pub state: SpaceState,
    /// Why it could not be measured, if so.
    pub unsupported: Option<crate::reason::Reason>,
    /// Commits per second.
    pub commits_per_sec: f64,
    /// Payload throughput, MiB/s.
    pub mib_per_sec: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
}
