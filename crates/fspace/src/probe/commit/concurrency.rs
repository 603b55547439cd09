//! The probe's concurrency curve: 8 KiB commits through fspace's log (set
//! up as recommended), by plain appending and into recycled space (the
//! overwrite ceiling) at 1, 2, 4, 8, 16 and 64 writers, the three modes of
//! one writer count next to each other (the machine is noisy), and where
//! each stops scaling. On fast storage a log's behaviour changes
//! completely with the number of threads committing at once (group
//! commit shares one sync among them; appending serialises on the
//! inode), and the main rounds measure one writer only.
//!
//! With [`ProbeOptions::writers`](super::super::ProbeOptions::writers) N above
//! one, the log and appending are measured [`AT_WRITERS_RUNS`] times each
//! at N, alternating: the log's expected rate (`commit.prediction`) and
//! its comparison with appending then hold at N writers.

use super::super::plan::{prediction, summarize, RECORD_SIZE};
use super::super::run::Run;
use super::super::schema::{CommitSection, Level, Prediction};
use super::super::versus_append::{self, log_vs_append_at};
use crate::bench::{
    run_commit, CommitBenchOptions, CommitResult, CurvePoint, SpaceState, WriterCurve,
    CURVE_WRITERS,
};
use crate::error::Result;
use crate::policy::{LogSetup, LogVsAppend, StrategyChoice};
use serde::Serialize;
use std::time::Duration;

/// The modes of the curve, in the order they run at each writer count:
/// the log, plain appending, the overwrite ceiling.
pub const CONCURRENCY_STATES: [SpaceState; 3] =
    [SpaceState::Wal, SpaceState::Appended, SpaceState::Recycled];

/// Runs of the log and of appending each at the writer count asked for,
/// when above one: the least the rank test of the log against appending
/// can separate at p <= 0.05 (3 against 3 gives p = 0.05).
pub const AT_WRITERS_RUNS: usize = 3;

/// Time per point of the curve: short, as each point is one run; the
/// curve shows a shape (where the rate stops rising), not a decision.
fn point_time(level: Level) -> Duration {
    match level {
        Level::Quick => Duration::from_millis(250),
        Level::Standard => Duration::from_millis(1000),
        Level::Full => Duration::from_millis(1500),
    }
}

/// Allowance per run for preparing its file or the log's first segments
/// and removing them, in [`concurrency_time`]'s estimate.
const SETUP_ALLOWANCE: Duration = Duration::from_millis(250);

/// The writer counts measured: [`CURVE_WRITERS`] and `at`, fewest first.
fn counts(at: usize) -> Vec<usize> {
    let mut w: Vec<usize> = CURVE_WRITERS.to_vec();
    w.push(at.max(1));
    w.sort_unstable();
    w.dedup();
    w
}

/// Runs of the curve with `at` writers asked for: one per mode and count,
/// and at `at` (above one) the extra runs of the log and appending.
pub(crate) fn steps(at: usize) -> usize {
    let extra = if at > 1 { (AT_WRITERS_RUNS - 1) * 2 } else { 0 };
    counts(at).len() * CONCURRENCY_STATES.len() + extra
}

/// About how long the concurrency curve adds to a probe of `level` with
/// `writers` asked for (its runs at their time each, with their
/// preparation): about 9 s with `--quick`, 22 s, or 31 s with `--full`,
/// more on a slow disk where preparing files takes longer. It comes on top
/// of the level's budget.
pub fn concurrency_time(level: Level, writers: usize) -> Duration {
    (point_time(level) + SETUP_ALLOWANCE) * steps(writers) as u32
}

/// The concurrency curve (`concurrency` in the JSON).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ConcurrencySection {
    /// Bytes per record.
    pub record_size: usize,
    /// Time each run was given, seconds (one run per point; the writer
    /// count asked for gets [`AT_WRITERS_RUNS`] of the log and appending).
    pub seconds_per_point: f64,
    /// The file the recycled and appended modes commit into (recycled
    /// wraps around it, overwriting written blocks, which is its state).
    pub file_size: u64,
    /// How the log was set up: as recommended, when it was measured.
    pub log_setup: Option<String>,
    /// The writer counts measured, fewest first.
    pub writers: Vec<usize>,
    /// The writer count the log's expected rate holds at
    /// ([`ProbeOptions::writers`](super::super::ProbeOptions::writers)).
    pub at_writers: usize,
    /// One curve per mode, in [`CONCURRENCY_STATES`] order.
    pub curves: Vec<WriterCurve>,
}

impl ConcurrencySection {
    /// Returns the curve of `state`, if measured.
    pub fn curve(&self, state: SpaceState) -> Option<&WriterCurve> {
        self.curves.iter().find(|c| c.state == state)
    }
}

/// What the runs at the writer count asked for (above one) say.
pub(crate) struct AtWriters {
    /// The writer count.
    writers: usize,
    /// The log's expected rate at that count (`None`: the log was not
    /// measured with a recommended setup).
    prediction: Option<Prediction>,
    /// The log against appending at that count.
    vs_append: LogVsAppend,
}

/// The run with the median rate of `rs` (the lower middle one).
fn median_run(rs: &[CommitResult]) -> Option<&CommitResult> {
    let mut v: Vec<&CommitResult> = rs.iter().collect();
    v.sort_by(|a, b| a.commits_per_sec.total_cmp(&b.commits_per_sec));
    v.get(v.len().saturating_sub(1) / 2).copied()
}

/// Measures the curve after the main rounds (`commit`: its file size and
/// the log's recommended setup), `at` writers asked for.
pub(crate) fn measure(
    run: &mut Run<'_>,
    commit: &CommitSection,
    at: usize,
) -> Result<(ConcurrencySection, Option<AtWriters>)> {
    let at = at.max(1);
    let level = run.opts.level;
    let per = point_time(level);
    let log: Option<&LogSetup> = commit.prediction.as_ref().and_then(|p| p.log.as_ref());
    let segment_size = log.map_or(
        (commit.file_size / 2).clamp(1 << 20, crate::wal::DEFAULT_SEGMENT_SIZE),
        |l| l.segment_size,
    );
    let base = CommitBenchOptions {
        record_size: RECORD_SIZE,
        duration: per,
        file_size: commit.file_size,
        segment_size,
        ..Default::default()
    };
    let counts = counts(at);
    let runs = curve_runs(run, &base, log, &counts, at)?;
    let curves = CONCURRENCY_STATES
        .iter()
        .zip(&runs)
        .map(|(&state, per_count)| {
            let points = per_count
                .iter()
                .filter_map(|rs| median_run(rs).map(CurvePoint::of))
                .collect();
            WriterCurve::new(state, None, points)
        })
        .collect();
    let k = counts.iter().position(|&w| w == at).unwrap_or(0);
    let at_writers = (at > 1).then(|| AtWriters::of(&runs[0][k], &runs[1][k], log, at, per));
    Ok((
        ConcurrencySection {
            record_size: RECORD_SIZE,
            seconds_per_point: per.as_secs_f64(),
            file_size: commit.file_size,
            log_setup: log.map(|l| l.words()),
            writers: counts,
            at_writers: at,
            curves,
        },
        at_writers,
    ))
}

/// The curve's runs, per mode (in [`CONCURRENCY_STATES`] order) and
/// writer count (in `counts` order): one of each mode at every count,
/// the log set up as `log` where it was measured; at the count asked for
/// (`at`, above one), more of the log and appending.
fn curve_runs(
    run: &mut Run<'_>,
    base: &CommitBenchOptions,
    log: Option<&LogSetup>,
    counts: &[usize],
    at: usize,
) -> Result<Vec<Vec<Vec<CommitResult>>>> {
    let mut runs: Vec<Vec<Vec<CommitResult>>> =
        vec![vec![vec![]; counts.len()]; CONCURRENCY_STATES.len()];
    let total = steps(at);
    let mut n = 0;
    for (k, &writers) in counts.iter().enumerate() {
        // The first round at every count; at the count asked for, more
        // rounds of the log and appending, in alternating order.
        let rounds = if writers == at && at > 1 {
            AT_WRITERS_RUNS
        } else {
            1
        };
        for round in 0..rounds {
            let mut order: Vec<usize> = if round == 0 {
                (0..CONCURRENCY_STATES.len()).collect()
            } else {
                vec![0, 1]
            };
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let state = CONCURRENCY_STATES[i];
                n += 1;
                run.begin(format!(
                    "concurrency: 8 KiB commits {} at {writers} writer{} ({n} of {total})",
                    what(state),
                    if writers == 1 { "" } else { "s" }
                ))?;
                let mut o = CommitBenchOptions {
                    writers,
                    ..base.clone()
                };
                if let (SpaceState::Wal, Some(l)) = (state, log) {
                    o.prepare = StrategyChoice::exactly(l.strategy);
                    o.sync_methods = vec![l.sync_method];
                }
                let r = run_commit(run.dir, state, &o, run.opts.cancel)?;
                run.cancelled()?;
                runs[i][k].push(r);
            }
        }
    }
    Ok(runs)
}

/// A mode in a few words, for the progress line.
fn what(state: SpaceState) -> String {
    match state {
        SpaceState::Wal => "through fspace's log".into(),
        s => format!("into {} space", s.name()),
    }
}

impl AtWriters {
    /// What the runs at `at` writers (above one) say: the log's expected
    /// rate from its runs (`wal`, set up as `log`, `per` each) and the
    /// log against appending (`append`).
    fn of(
        wal: &[CommitResult],
        append: &[CommitResult],
        log: Option<&LogSetup>,
        at: usize,
        per: Duration,
    ) -> AtWriters {
        let wal = summarize(SpaceState::Wal, wal);
        let append = summarize(SpaceState::Appended, append);
        let vs_append = log_vs_append_at(&[append, wal.clone()], None, at);
        let prediction = log
            .filter(|_| wal.measured() && wal.commits_per_sec > 0.0)
            .map(|l| {
                prediction(
                    &wal,
                    LogSetup {
                        seconds_per_run: per.as_secs_f64(),
                        writers: at,
                        runs: vec![],
                        ..l.clone()
                    },
                    format!(
                        "{} runs of the log set up as recommended at {at} writers, alternating with appending's",
                        wal.runs.len()
                    ),
                )
            });
        AtWriters {
            writers: at,
            prediction,
            vs_append,
        }
    }

    /// Makes the log recommendation in `recs` and the expected rate in
    /// `commit` hold at this writer count: the prediction measured at it
    /// replaces the one-writer one, the comparison with appending is the
    /// one at it, and the reason says so with the figures.
    pub(crate) fn apply(
        self,
        recs: &mut [crate::policy::Recommendation],
        commit: &mut CommitSection,
        curve: Option<&WriterCurve>,
    ) {
        let w = self.writers;
        if let Some(p) = self.prediction {
            commit.prediction = Some(p);
        }
        let Some(log) = recs
            .iter_mut()
            .find(|r| r.intent == crate::strategy::Intent::Log && r.measured)
        else {
            return;
        };
        versus_append::apply(log, self.vs_append);
        let figures = match (&commit.prediction, curve.and_then(|c| c.at(w))) {
            (Some(p), Some(pt)) if p.log.as_ref().is_some_and(|l| l.writers == w) => {
                let one = pt
                    .vs_one_writer
                    .map(|x| format!(", {x:.2}x its rate at one writer"))
                    .unwrap_or_default();
                format!(
                    "at {w} writers (--writers {w}) the log set up so reached {} commits/s (median of {} runs){one}",
                    crate::units::format_count(p.commits_per_sec),
                    p.log.as_ref().map_or(0, |l| l.runs.len()),
                )
            }
            _ => format!(
                "at {w} writers (--writers {w}) the log's rate could not be measured; the figures are at one writer"
            ),
        };
        log.reason = format!("{}; {figures}", log.reason);
    }
}
