//! `fspace probe --compare-saved`: the recommended log setup measured again
//! and compared with what `fspace probe --save` measured for it, so that a
//! fleet notices a disk (or a kernel, or a mount option) that got slower.
//!
//! Only the measurement the comparison needs is made: commits through
//! fspace's log set up as saved (preparation, sync method, record and
//! segment size), one run after another. The saved side is the baseline
//! [`measure_baseline`] took right after the probe, measured the same way;
//! files saved without one fall back on the probe's own runs.
//!
//! The verdict needs evidence, as the probe's decisions do: "regressed"
//! only when a batch of fresh runs is slower than the saved median by
//! more than the threshold *and* the rank test separates it from the
//! saved runs, and a second, independent batch says the same; "could not
//! tell" when the runs cannot separate (too few of them) or the machine
//! was busy while they looked slower; "no evidence of a change" otherwise.
//! The verdict's values and rules are `conclude.rs`.

mod conclude;

use super::busy::{Busy, Snapshot};
use super::entry::check_dir;
use super::plan::summarize;
use super::result::ProbeResult;
use super::schema::{ProbeProgress, StateResult};
use super::stats::{p_greater, range, smallest_p, utc, ALPHA};
use crate::bench::{run_commit, CommitBenchOptions, CommitResult, SpaceState};
use crate::error::{Error, Result};
use crate::fs_info::fs_info;
use crate::note::{Note, NoteKind};
use crate::policy::{
    Baseline, Expected, FsKey, LogSetup, LogVsAppend, SavedResults, StrategyChoice,
};
use crate::sys::Errno;
use crate::units::format_human;
use conclude::{conclude, needs_confirmation, ratio_of, Rule};
pub use conclude::{Batch, CompareVerdict, CouldNotTell};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The JSON schema of a [`Comparison`]: a name and a major version, bumped
/// when a field changes meaning or goes away (fields may be added).
pub const COMPARE_SCHEMA: &str = "fspace-probe-compare/1";

/// How far below the saved median the fresh median may fall before the
/// comparison looks for evidence of a regression: 20%. Repeated runs of
/// the same state on the test machine differ by 5-10% (the probe's
/// `TIE_MARGIN` of 10% is set from that), so twice that margin is not
/// reached by ordinary noise, while a disk that lost a fifth of its commit
/// rate is worth a look.
pub const DEFAULT_THRESHOLD: f64 = 0.20;

/// Fresh runs per batch: 5. A first batch decides whether the disk looks
/// slower; a second batch of as many, measured only then, must say it
/// again before the comparison says "regressed" (see [`Comparison::batches`]).
pub const COMPARE_ROUNDS: usize = 5;

/// Runs the baseline keeps: 8. With a batch of [`COMPARE_ROUNDS`], the
/// rank test can then reach 1/1287 (all runs of one side above all of
/// the other), far below [`ALPHA`], so a batch that is clearly slower is
/// evidence on its own even when a run or two overlap.
pub const BASELINE_ROUNDS: usize = 8;

/// Time each run of the baseline and of the comparison is given: 1 s.
/// Runs of a quarter of a second (a quick probe's) of the log on the
/// matrix's loop devices, whose images share the host's disk, ranged from
/// 89 to 2,626 commits/s within one comparison while a neighbour built
/// code; a second averages such bursts, and is short enough for a timer.
pub const COMPARE_RUN: Duration = Duration::from_secs(1);

/// The shortest and longest time a fresh run is given when the saved file
/// has no baseline and the comparison falls back on the probe's runs:
/// their own length, within these bounds.
const MIN_RUN: Duration = Duration::from_millis(250);
const MAX_RUN: Duration = Duration::from_secs(3);

/// How to compare.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct CompareOptions<'a> {
    /// The share of the saved median the fresh median may fall below it
    /// without counting as slower (0.2: 20%).
    pub threshold: f64,
    /// Fresh runs per batch (at least 1; fewer than the rank test needs
    /// make every slowdown "could not tell").
    pub rounds: usize,
    /// Runs [`measure_baseline`] measures (at least 1).
    pub baseline_rounds: usize,
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
            baseline_rounds: BASELINE_ROUNDS,
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
            .field("baseline_rounds", &self.baseline_rounds)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

setters!(CompareOptions<'a> { threshold: f64, rounds: usize, baseline_rounds: usize, cancel: Option<&'a AtomicBool>, progress: Option<&'a dyn Fn(&ProbeProgress)> });

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
    /// The saved measurement: its median, setup, runs and baseline.
    pub saved: Expected,
    /// Whether the saved side is the save's [`Baseline`] (true) or, in a
    /// file saved without one, the probe's own runs of the setup.
    pub from_baseline: bool,
    /// The saved runs compared with (the baseline's, or the probe's).
    pub saved_runs: Vec<f64>,
    /// Their median, commits/s.
    pub saved_commits_per_sec: f64,
    /// Time each fresh run was given, seconds.
    pub seconds_per_run: f64,
    /// All fresh runs (state `wal`).
    pub fresh: StateResult,
    /// The fresh runs batch by batch: one, or two when the first was
    /// slower and a second was measured to confirm it.
    pub batches: Vec<Batch>,
    /// The median of all fresh runs ÷ the saved median.
    pub ratio: f64,
    /// The threshold (0.2: the fresh median may be up to 20% below the
    /// saved one).
    pub threshold: f64,
    /// The conclusion.
    pub verdict: CompareVerdict,
    /// Why the comparison could not tell, when it could not.
    pub could_not_tell: Option<CouldNotTell>,
    /// True if and only if `verdict` is [`CompareVerdict::Regressed`].
    pub regressed: bool,
    /// The one-sided rank test's p-value that the saved runs are larger
    /// than all fresh ones.
    pub p_value: f64,
    /// The smallest p-value the rank test can give for the saved runs
    /// against one batch (all of one side above all of the other); above
    /// [`ALPHA`], no batch can be evidence.
    pub smallest_p_value: f64,
    /// What the saved probe found of fspace's log against plain appending
    /// (its log recommendation's [`LogVsAppend`]; `None` in files saved
    /// before it existed). Appending is not measured again: the comparison
    /// measures the log alone.
    pub saved_log_vs_append: Option<LogVsAppend>,
    /// What the rest of the machine did while the fresh runs were measured
    /// (as the probe's `machine`, with the CPU pressure judged too).
    pub machine: Busy,
    /// What qualifies the fresh figures: a busy machine, a batch not
    /// confirmed, a file saved without a baseline, few commits.
    pub notes: Vec<Note>,
}

impl Comparison {
    /// The slowest and fastest saved run compared with, commits/s.
    pub fn saved_range(&self) -> (f64, f64) {
        range(&self.saved_runs)
    }
}

/// Runs of the log as the comparison and its baseline measure them.
struct Runner<'a> {
    dir: &'a Path,
    setup: &'a LogSetup,
    bopts: CommitBenchOptions,
    opts: &'a CompareOptions<'a>,
    start: Instant,
    per_run: Duration,
}

impl Runner<'_> {
    fn new<'a>(
        dir: &'a Path,
        setup: &'a LogSetup,
        per_run: Duration,
        opts: &'a CompareOptions<'a>,
    ) -> Runner<'a> {
        Runner {
            dir,
            setup,
            bopts: CommitBenchOptions {
                record_size: setup.record_size,
                // The log's own files are its segments; the file size only
                // has to hold a record.
                file_size: setup.segment_size.max(setup.record_size as u64),
                segment_size: setup.segment_size,
                duration: per_run,
                prepare: StrategyChoice::with_fallbacks(setup.strategy),
                sync_methods: vec![setup.sync_method],
                writers: setup.writers,
                stop_at_end: true,
                ..Default::default()
            },
            opts,
            start: Instant::now(),
            per_run,
        }
    }

    fn cancelled(&self) -> bool {
        self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Measures `n` more runs into `runs`; `total` is how many are planned.
    fn measure(&self, n: usize, total: usize, runs: &mut Vec<CommitResult>) -> Result<()> {
        for _ in 0..n {
            if self.cancelled() {
                return Err(interrupted(self.dir));
            }
            if let Some(p) = self.opts.progress {
                p(&ProbeProgress {
                    step: runs.len() + 1,
                    steps: total,
                    what: format!(
                        "8 KiB commits through fspace's log, {} (run {} of {total})",
                        self.setup.words(),
                        runs.len() + 1
                    ),
                    elapsed: self.start.elapsed(),
                    budget: self.per_run * total as u32,
                });
            }
            let r = run_commit(self.dir, SpaceState::Wal, &self.bopts, self.opts.cancel);
            if self.cancelled() {
                return Err(interrupted(self.dir));
            }
            let r = r?;
            if let Some(why) = &r.unsupported {
                return Err(Error::refused_errno(
                    "probe --compare-saved",
                    self.dir,
                    Errno::OPNOTSUPP,
                    format!(
                        "the saved setup ({}) cannot run here: {why}",
                        self.setup.words()
                    ),
                ));
            }
            runs.push(r);
        }
        Ok(())
    }
}

/// The block devices under `info`'s filesystem, by kernel name.
fn devices_of(info: &crate::fs_info::FsInfo) -> Vec<String> {
    match &info.clone().with_block_devices().block_devices {
        Ok(d) => d.iter().map(|d| d.name.clone()).collect(),
        Err(_) => vec![],
    }
}

/// Measures the baseline a later `--compare-saved` compares with: the
/// recommended log setup of `result` (its prediction), in its directory,
/// in `opts.baseline_rounds` runs of [`COMPARE_RUN`] each, measured as the
/// comparison measures them. Keeps it in `result.commit.baseline`, where
/// [`save`](super::save) finds it. Returns `false`, having measured
/// nothing, when the probe could not measure the log (no prediction).
pub fn measure_baseline(result: &mut ProbeResult, opts: &CompareOptions<'_>) -> Result<bool> {
    let Some(setup) = result
        .commit
        .prediction
        .as_ref()
        .and_then(|p| p.log.clone())
    else {
        return Ok(false);
    };
    let dir = result.directory.clone();
    check_dir(&dir)?;
    let info = fs_info(&dir)?;
    let devices = devices_of(&info);
    let (_, before, idle_before) = Snapshot::idle_window(&devices);
    let runner = Runner::new(&dir, &setup, COMPARE_RUN, opts);
    let n = opts.baseline_rounds.max(1);
    let mut runs = vec![];
    runner.measure(n, n, &mut runs)?;
    let (end, _, idle_after) = Snapshot::idle_window(&devices);
    let mut machine = before.until_judged(&end, idle_before.max(idle_after));
    machine.judge_cpu_pressure();
    let s = summarize(SpaceState::Wal, &runs);
    result.commit.baseline = Some(Baseline {
        commits_per_sec: s.commits_per_sec,
        seconds_per_run: COMPARE_RUN.as_secs_f64(),
        runs: s.runs,
        machine_busy: machine.busy,
    });
    Ok(true)
}

/// Measures commits through fspace's log in `dir`, set up as the
/// measurement saved in `store` for `dir`'s filesystem says (the probe's
/// prediction: preparation, sync method, record size, segment size), and
/// compares them with the saved baseline ([`Comparison`] says how the
/// verdict is reached). Returns `None`, having measured nothing, when
/// nothing comparable is saved for this filesystem (no saved file, or one
/// saved without the log's measurement: by an earlier version, or where
/// the log could not be measured).
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
    let mut notes = vec![];
    let side = saved_side(&expected, &mut notes);
    // Watched as the probe watches: others' CPU judged on idle windows
    // before, between the batches and after; others' writes to the
    // devices under the filesystem; and, here only, the CPU pressure
    // over the whole comparison.
    let devices = devices_of(&info);
    let (_, before, idle_before) = Snapshot::idle_window(&devices);
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let runner = Runner::new(dir, setup, side.per_run, opts);
    let busy_baseline =
        side.from_baseline && expected.baseline.as_ref().is_some_and(|b| b.machine_busy);
    let (runs, batches, machine, rule) = fresh_batches(
        &runner,
        &devices,
        (&before, idle_before),
        &side,
        busy_baseline,
    )?;
    let (verdict, could_not_tell, note) = conclude(&batches, &rule);
    notes.extend(note.map(|n| Note::new(NoteKind::TooCloseToCall, n)));
    notes.extend(machine_notes(&machine));
    let fresh = summarize(SpaceState::Wal, &runs);
    let ratio = ratio_of(fresh.commits_per_sec, side.median);
    let p_value = p_greater(&side.runs, &fresh.runs);
    let compared = compared(setup, fresh.runs.len(), &side, expected.baseline.is_some());
    notes.extend(fresh.notes.iter().cloned());
    Ok(Some(Comparison {
        schema: COMPARE_SCHEMA,
        directory: dir.clone(),
        started_unix: started,
        started_utc: utc(started),
        elapsed: runner.start.elapsed(),
        key: FsKey::of(&info),
        saved_path: saved.path.clone(),
        measured_utc: saved.policy.measured_utc.clone(),
        measured_by: saved.policy.measured_by.clone(),
        compared,
        from_baseline: side.from_baseline,
        saved_runs: side.runs,
        saved_commits_per_sec: side.median,
        seconds_per_run: side.per_run.as_secs_f64(),
        p_value,
        smallest_p_value: rule.smallest,
        saved: expected,
        fresh,
        batches,
        ratio,
        threshold: opts.threshold,
        regressed: verdict == CompareVerdict::Regressed,
        verdict,
        could_not_tell,
        saved_log_vs_append: saved
            .recommendation(crate::strategy::Intent::Log)
            .and_then(|r| r.log_vs_append.clone()),
        machine,
        notes,
    }))
}

/// The saved side of a comparison.
struct SavedSide {
    /// The runs compared with, commits/s each.
    runs: Vec<f64>,
    /// Their median.
    median: f64,
    /// Time each fresh run is given.
    per_run: Duration,
    /// The runs are the save's baseline, measured as the fresh runs are.
    from_baseline: bool,
}

/// The saved side: the baseline, measured as the fresh runs are; else
/// the probe's runs, with fresh runs of their length (a hand-edited file
/// may hold anything: NaN, negative or huge times become bounds). Notes
/// say where it is weaker.
fn saved_side(expected: &Expected, notes: &mut Vec<Note>) -> SavedSide {
    let side = match &expected.baseline {
        Some(b) if !b.runs.is_empty() => SavedSide {
            runs: b.runs.clone(),
            median: b.commits_per_sec,
            per_run: Duration::try_from_secs_f64(b.seconds_per_run)
                .unwrap_or(COMPARE_RUN)
                .clamp(MIN_RUN, MAX_RUN),
            from_baseline: true,
        },
        _ => {
            notes.push(Note::new(
                NoteKind::MeasuredOnce,
                "the saved file has no baseline for comparisons (saved by an earlier fspace): compared with the probe's own runs, measured among other states; save again for a baseline",
            ));
            SavedSide {
                runs: expected.setup.runs.clone(),
                median: expected.commits_per_sec,
                per_run: Duration::try_from_secs_f64(expected.setup.seconds_per_run)
                    .unwrap_or(MAX_RUN)
                    .clamp(MIN_RUN, MAX_RUN),
                from_baseline: false,
            }
        }
    };
    if expected.baseline.as_ref().is_some_and(|b| b.machine_busy) {
        notes.push(Note::new(
            NoteKind::BusyMachine,
            "the machine was busy while the baseline was measured: a slow baseline can hide a slowdown; save again on a quiet machine",
        ));
    }
    side
}

/// The fresh runs, batch by batch: a first batch, and a second one where
/// the first is evidence of a slowdown (against a baseline, on a machine
/// not busy so far). Returns all the runs, the batches, what the rest of
/// the machine did from the snapshot and idle share taken `before`, and
/// the rule the verdict follows.
fn fresh_batches(
    runner: &Runner<'_>,
    devices: &[String],
    (before, idle_before): (&Snapshot, f64),
    side: &SavedSide,
    busy_baseline: bool,
) -> Result<(Vec<CommitResult>, Vec<Batch>, Busy, Rule)> {
    let threshold = runner.opts.threshold;
    let rounds = runner.opts.rounds.max(1);
    let mut runs = vec![];
    runner.measure(rounds, rounds, &mut runs)?;
    let mut batches = vec![batch(&runs, side, threshold)];
    // Judged so far: the window before the first batch and one now.
    let (mid, _, idle_mid) = Snapshot::idle_window(devices);
    let idle = idle_before.max(idle_mid);
    let mut machine = before.until_judged(&mid, idle);
    machine.judge_cpu_pressure();
    let mut rule = Rule {
        threshold,
        smallest: smallest_p(side.runs.len(), rounds),
        busy: machine.busy,
        from_baseline: side.from_baseline,
        busy_baseline,
    };
    if needs_confirmation(&batches[0], &rule) {
        let mut second = vec![];
        runner.measure(rounds, 2 * rounds, &mut second)?;
        batches.push(batch(&second, side, threshold));
        runs.extend(second);
        let (end, _, idle_after) = Snapshot::idle_window(devices);
        machine = before.until_judged(&end, idle.max(idle_after));
        machine.judge_cpu_pressure();
        rule.busy = machine.busy;
    }
    Ok((runs, batches, machine, rule))
}

/// `runs` as a batch against the saved side: slower when its median falls
/// below the saved one by more than `threshold` and the rank test
/// separates it from the saved runs.
fn batch(runs: &[CommitResult], side: &SavedSide, threshold: f64) -> Batch {
    let s = summarize(SpaceState::Wal, runs);
    let ratio = ratio_of(s.commits_per_sec, side.median);
    let p_value = p_greater(&side.runs, &s.runs);
    Batch {
        slower: ratio < 1.0 - threshold && p_value <= ALPHA,
        runs: s.runs,
        commits_per_sec: s.commits_per_sec,
        ratio,
        p_value,
    }
}

/// What qualifies the fresh figures as the rest of the machine goes: a
/// kernel that reports no CPU pressure, a busy machine.
fn machine_notes(machine: &Busy) -> Vec<Note> {
    let mut notes = vec![];
    if machine.cpu_pressure.is_none() {
        notes.push(Note::new(
            NoteKind::BusyMachine,
            "this kernel reports no CPU pressure (/proc/pressure/cpu; booted with psi=0?): a busy machine was judged on idle windows only, which a bursty load can slip between",
        ));
    }
    if machine.busy {
        notes.push(Note::new(
            NoteKind::BusyMachine,
            format!(
                "the machine was busy while measuring ({}): the fresh figures are noisier",
                machine.reasons.join("; ")
            ),
        ));
    }
    notes
}

/// What was compared, in words: the log's setup, `fresh` runs against
/// the saved side's (`baseline`: the save has a baseline).
fn compared(setup: &LogSetup, fresh: usize, side: &SavedSide, baseline: bool) -> String {
    format!(
        "commits through fspace's log ({}; {}, {} records, {} segments): {} fresh runs of up to {:.2} s each against {} {} runs",
        setup.words(),
        match setup.writers {
            1 => "one writer".to_string(),
            w => format!("{w} writers"),
        },
        format_human(setup.record_size as u64),
        format_human(setup.segment_size),
        fresh,
        side.per_run.as_secs_f64(),
        side.runs.len(),
        if baseline { "saved baseline" } else { "saved probe" },
    )
}

fn interrupted(dir: &Path) -> Error {
    Error::refused_errno("probe --compare-saved", dir, Errno::CANCELED, "interrupted")
}

#[cfg(test)]
mod tests;
