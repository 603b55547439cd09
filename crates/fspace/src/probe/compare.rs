//! `fspace probe --compare-saved`: the recommended log setup measured again
//! and compared with what `fspace probe --save` measured for it, so that a
//! fleet notices a disk (or a kernel, or a mount option) that got slower.
//!
//! Only the measurement the comparison needs is made: commits through
//! fspace's log set up as saved (preparation, sync method, record and
//! segment size, time per run), in [`COMPARE_ROUNDS`] runs, whose median
//! is compared with the saved median.

use super::busy::{Busy, Snapshot};
use super::entry::check_dir;
use super::plan::summarize;
use super::schema::{ProbeProgress, StateResult};
use super::stats::{p_greater, range, utc, ALPHA};
use crate::bench::{run_commit, CommitBenchOptions, SpaceState};
use crate::error::{Error, Result};
use crate::fs_info::fs_info;
use crate::note::{Note, NoteKind};
use crate::policy::{Expected, FsKey, LogVsAppend, SavedResults, StrategyChoice};
use crate::sys::Errno;
use crate::units::format_human;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The JSON schema of a [`Comparison`]: a name and a major version, bumped
/// when a field changes meaning or goes away (fields may be added).
pub const COMPARE_SCHEMA: &str = "fspace-probe-compare/1";

/// How far below the saved median the fresh median may fall before the
/// comparison says "regressed": 20%. Repeated runs of the same state on
/// the test machine differ by 5-10% (the probe's `TIE_MARGIN` of 10% is
/// set from that), so an alarm at twice that margin is not raised by
/// ordinary noise, while a disk that lost a fifth of its commit rate is
/// worth a look.
pub const DEFAULT_THRESHOLD: f64 = 0.20;

/// Runs measured afresh: 5, the full probe's number of rounds (its median
/// is robust to two outliers, where the quick probe's three runs bear one).
pub const COMPARE_ROUNDS: usize = 5;

/// Shortest time one fresh run is given: 1 s, even where the saved probe
/// gave its runs less (a quick probe on the test matrix: 0.25 s). Runs that
/// short of the log on the matrix's loop devices, whose images share the
/// host's disk, ranged from 89 to 2,626 commits/s within one comparison
/// while a neighbour built code; a longer run averages such bursts, and the
/// rate it measures is the same quantity (commits over time, one writer).
const MIN_RUN: Duration = Duration::from_secs(1);

/// Longest time one run is given, whatever the saved probe gave its runs
/// (a full probe's 3 s): the comparison is meant to be cheap enough for a
/// timer.
const MAX_RUN: Duration = Duration::from_secs(3);

/// How to compare.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct CompareOptions<'a> {
    /// The share of the saved median the fresh median may fall below it
    /// without counting as a regression (0.2: 20%).
    pub threshold: f64,
    /// Runs to measure (at least 1).
    pub rounds: usize,
    /// Checked between and inside runs: when it becomes true the
    /// comparison stops and fails with `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called when each run starts.
    pub progress: Option<&'a dyn Fn(&ProbeProgress)>,
}

impl Default for CompareOptions<'_> {
    fn default() -> Self {
        CompareOptions {
            threshold: DEFAULT_THRESHOLD,
            rounds: COMPARE_ROUNDS,
            cancel: None,
            progress: None,
        }
    }
}

impl std::fmt::Debug for CompareOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompareOptions")
            .field("threshold", &self.threshold)
            .field("rounds", &self.rounds)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

setters!(CompareOptions<'a> { threshold: f64, rounds: usize, cancel: Option<&'a AtomicBool>, progress: Option<&'a dyn Fn(&ProbeProgress)> });

/// The recommended log setup measured again against its saved measurement.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// [`COMPARE_SCHEMA`].
    pub schema: &'static str,
    /// The directory measured in.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub directory: PathBuf,
    /// When the fresh runs started, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The same as `YYYY-MM-DD HH:MM:SS UTC`.
    pub started_utc: String,
    /// How long the fresh runs took, preparation included.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
    /// The filesystem's key (what the saved file was found by).
    pub key: FsKey,
    /// The saved file.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub saved_path: PathBuf,
    /// When the saved probe measured (`YYYY-MM-DD HH:MM:SS UTC`).
    pub measured_utc: String,
    /// What measured it (`fspace probe --save (quick)`).
    pub measured_by: String,
    /// What was compared, in words.
    pub compared: String,
    /// The saved measurement: its median, setup and runs.
    pub saved: Expected,
    /// The fresh runs (state `wal`).
    pub fresh: StateResult,
    /// The fresh median ÷ the saved median.
    pub ratio: f64,
    /// The threshold (0.2: the fresh median may be up to 20% below the
    /// saved one).
    pub threshold: f64,
    /// True if and only if `ratio` is below `1 - threshold`.
    pub regressed: bool,
    /// The one-sided rank test's p-value that the saved runs are larger
    /// than the fresh ones: how clearly the runs separate, beside the
    /// medians that decide (small: all saved runs above all fresh ones).
    pub p_value: f64,
    /// What the saved probe found of fspace's log against plain appending
    /// (its log recommendation's [`LogVsAppend`]; `None` in files saved
    /// before it existed). Appending is not measured again: the comparison
    /// measures the log alone.
    pub saved_log_vs_append: Option<LogVsAppend>,
    /// What the rest of the machine did while the fresh runs were measured
    /// (as the probe's `machine`).
    pub machine: Busy,
    /// What qualifies the fresh figures: a busy machine, runs measured
    /// again before a regression was called, few commits.
    pub notes: Vec<Note>,
}

impl Comparison {
    /// The slowest and fastest saved run, commits/s.
    pub fn saved_range(&self) -> (f64, f64) {
        range(&self.saved.setup.runs)
    }
}

/// Measures commits through fspace's log in `dir`, set up as the
/// measurement saved in `store` for `dir`'s filesystem says (the probe's
/// prediction: preparation, sync method, record size, segment size, time
/// per run), in `opts.rounds` runs, and compares their median with the
/// saved one. Returns `None`, having measured nothing, when nothing
/// comparable is saved for this filesystem (no saved file, or one saved
/// without the log's measurement: by an earlier version, or where the log
/// could not be measured).
///
/// Refuses, as [`probe`](super::probe) does, a directory that is missing,
/// not a directory, read-only or not writable; a saved file that cannot be
/// read is an error.
pub fn compare_saved(
    dir: impl AsRef<Path>,
    store: &SavedResults,
    opts: &CompareOptions<'_>,
) -> Result<Option<Comparison>> {
    let dir = dir.as_ref();
    let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !(opts.threshold > 0.0 && opts.threshold < 1.0) {
        return Err(Error::refused_errno(
            "probe --compare-saved",
            dir,
            Errno::INVAL,
            format!(
                "threshold {} is not between 0 and 1 (0.2 is 20%)",
                opts.threshold
            ),
        ));
    }
    check_dir(dir)?;
    let info = fs_info(dir)?;
    let Some(saved) = store.load(&info)? else {
        return Ok(None);
    };
    let Some(expected) = saved.policy.expected.clone() else {
        return Ok(None);
    };
    let setup = &expected.setup;
    // A hand-edited file may hold anything: NaN, negative or huge times
    // become the bounds.
    let per_run = Duration::try_from_secs_f64(setup.seconds_per_run)
        .unwrap_or(MAX_RUN)
        .clamp(MIN_RUN, MAX_RUN);
    // Watched as the probe watches: others' CPU judged on idle windows
    // before and after, others' writes to the devices under the filesystem.
    let devices: Vec<String> = match &info.clone().with_block_devices().block_devices {
        Ok(d) => d.iter().map(|d| d.name.clone()).collect(),
        Err(_) => vec![],
    };
    let (_, before, idle_before) = Snapshot::idle_window(&devices);
    let start = Instant::now();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let bopts = CommitBenchOptions {
        record_size: setup.record_size,
        // The log's own files are its segments; the file size only has to
        // hold a record.
        file_size: setup.segment_size.max(setup.record_size as u64),
        segment_size: setup.segment_size,
        duration: per_run,
        prepare: StrategyChoice::with_fallbacks(setup.strategy),
        sync_methods: vec![setup.sync_method],
        stop_at_end: true,
        ..Default::default()
    };
    let rounds = opts.rounds.max(1);
    let cancelled = || opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let mut runs = vec![];
    // Measures `n` more runs; `total` is how many the comparison plans.
    let measure = |n: usize, total: usize, runs: &mut Vec<_>| -> Result<()> {
        for _ in 0..n {
            if cancelled() {
                return Err(interrupted(dir));
            }
            if let Some(p) = opts.progress {
                p(&ProbeProgress {
                    step: runs.len() + 1,
                    steps: total,
                    what: format!(
                        "8 KiB commits through fspace's log, {} (run {} of {total})",
                        setup.words(),
                        runs.len() + 1
                    ),
                    elapsed: start.elapsed(),
                    budget: per_run * total as u32,
                });
            }
            let r = run_commit(dir, SpaceState::Wal, &bopts, opts.cancel);
            if cancelled() {
                return Err(interrupted(dir));
            }
            runs.push(r?);
        }
        Ok(())
    };
    measure(rounds, rounds, &mut runs)?;
    let mut notes = vec![];
    let first = verdict(
        &expected,
        &summarize(SpaceState::Wal, &runs),
        opts.threshold,
    );
    if first.regressed && first.p_value > ALPHA {
        // Confirm before alarming: a neighbour's burst of writes can
        // depress a few seconds of runs (see MIN_RUN). The median of
        // twice the runs decides.
        measure(rounds, 2 * rounds, &mut runs)?;
        let all = verdict(
            &expected,
            &summarize(SpaceState::Wal, &runs),
            opts.threshold,
        );
        notes.push(Note::new(
            NoteKind::TooCloseToCall,
            format!(
                "the first {rounds} runs were {:.0}% below the saved median but overlapped the saved runs (rank test p = {:.2}, {ALPHA} needed), so {rounds} more were measured: {}",
                (1.0 - first.ratio) * 100.0,
                first.p_value,
                if all.regressed {
                    format!("the median of all {} is still {:.0}% below", runs.len(), (1.0 - all.ratio) * 100.0)
                } else {
                    format!("the median of all {} is within the threshold", runs.len())
                }
            ),
        ));
    }
    let (end, _, idle_after) = Snapshot::idle_window(&devices);
    let machine = before.until_judged(&end, idle_before.max(idle_after));
    if machine.busy {
        notes.push(Note::new(
            NoteKind::BusyMachine,
            format!(
                "the machine was busy while measuring ({}): the fresh figures are noisier",
                machine.reasons.join("; ")
            ),
        ));
    }
    let fresh = summarize(SpaceState::Wal, &runs);
    if let Some(why) = &fresh.unsupported {
        return Err(Error::refused_errno(
            "probe --compare-saved",
            dir,
            Errno::OPNOTSUPP,
            format!("the saved setup ({}) cannot run here: {why}", setup.words()),
        ));
    }
    let v = verdict(&expected, &fresh, opts.threshold);
    let compared = format!(
        "commits through fspace's log ({}; one writer, {} records, {} segments): the median of {} fresh runs of up to {:.2} s each against the saved median of {} runs",
        setup.words(),
        format_human(setup.record_size as u64),
        format_human(setup.segment_size),
        fresh.runs.len(),
        per_run.as_secs_f64(),
        setup.runs.len()
    );
    notes.extend(fresh.notes.iter().cloned());
    Ok(Some(Comparison {
        schema: COMPARE_SCHEMA,
        directory: dir.to_path_buf(),
        started_unix: started,
        started_utc: utc(started),
        elapsed: start.elapsed(),
        key: FsKey::of(&info),
        saved_path: saved.path.clone(),
        measured_utc: saved.policy.measured_utc.clone(),
        measured_by: saved.policy.measured_by.clone(),
        compared,
        p_value: v.p_value,
        saved: expected,
        fresh,
        ratio: v.ratio,
        threshold: opts.threshold,
        regressed: v.regressed,
        saved_log_vs_append: saved
            .recommendation(crate::strategy::Intent::Log)
            .and_then(|r| r.log_vs_append.clone()),
        machine,
        notes,
    }))
}

/// The ratio of the medians, whether it is below `1 - threshold`, and the
/// rank test's p-value that the saved runs are larger.
struct Verdict {
    ratio: f64,
    regressed: bool,
    p_value: f64,
}

fn verdict(saved: &Expected, fresh: &StateResult, threshold: f64) -> Verdict {
    let ratio = if saved.commits_per_sec > 0.0 {
        fresh.commits_per_sec / saved.commits_per_sec
    } else {
        1.0
    };
    Verdict {
        ratio,
        regressed: ratio < 1.0 - threshold,
        p_value: p_greater(&saved.setup.runs, &fresh.runs),
    }
}

fn interrupted(dir: &Path) -> Error {
    Error::refused_errno("probe --compare-saved", dir, Errno::CANCELED, "interrupted")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::LogSetup;
    use crate::strategy::{Strategy, SyncMethod};

    fn saved(median: f64, runs: &[f64]) -> Expected {
        Expected {
            commits_per_sec: median,
            setup: LogSetup {
                strategy: Strategy::ZeroFill,
                sync_method: SyncMethod::DirectDsync,
                record_size: 8192,
                segment_size: 16 << 20,
                seconds_per_run: 0.25,
                runs: runs.to_vec(),
            },
        }
    }

    fn fresh(runs: &[f64]) -> StateResult {
        let mut s = summarize(SpaceState::Wal, &[]);
        s.runs = runs.to_vec();
        s.commits_per_sec = super::super::stats::median(&mut runs.to_vec());
        s
    }

    /// The medians decide: regressed below 1 - threshold, not at it.
    #[test]
    fn the_medians_decide_against_the_threshold() {
        let s = saved(1000.0, &[900.0, 1000.0, 1100.0]);
        let v = verdict(&s, &fresh(&[700.0, 790.0, 795.0, 900.0, 2000.0]), 0.2);
        assert!((v.ratio - 0.795).abs() < 1e-12);
        assert!(v.regressed);
        let v = verdict(&s, &fresh(&[700.0, 790.0, 800.0, 900.0, 2000.0]), 0.2);
        assert!((v.ratio - 0.8).abs() < 1e-12);
        assert!(!v.regressed, "exactly at the threshold is not below it");
        let v = verdict(&s, &fresh(&[400.0, 450.0, 500.0, 550.0, 600.0]), 0.5);
        assert!(!v.regressed);
        let v = verdict(&s, &fresh(&[400.0, 450.0, 499.0, 550.0, 600.0]), 0.5);
        assert!(v.regressed);
    }

    /// The rank test: all saved runs above all fresh ones is the most
    /// one-sided split of 3 against 5 (1 of 56); overlapping runs are not.
    #[test]
    fn the_rank_test_says_how_clearly_the_runs_separate() {
        let s = saved(1000.0, &[900.0, 1000.0, 1100.0]);
        let v = verdict(&s, &fresh(&[400.0, 450.0, 500.0, 550.0, 600.0]), 0.2);
        assert!((v.p_value - 1.0 / 56.0).abs() < 1e-12, "{}", v.p_value);
        assert!(v.p_value <= ALPHA);
        let v = verdict(&s, &fresh(&[400.0, 450.0, 500.0, 550.0, 1200.0]), 0.2);
        assert!(v.regressed && v.p_value > ALPHA, "{}", v.p_value);
    }

    /// A saved median of 0 (nothing measured) never counts as regressed.
    #[test]
    fn a_zero_saved_rate_is_no_regression() {
        let v = verdict(&saved(0.0, &[]), &fresh(&[10.0]), 0.2);
        assert_eq!(v.ratio, 1.0);
        assert!(!v.regressed);
    }
}
