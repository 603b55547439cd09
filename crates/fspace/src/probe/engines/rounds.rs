//! The measurement behind `fspace probe --for ENGINE`: each engine's cases
//! ([`advice::plan`]) in alternating rounds, the order rotated each round,
//! then the advice ([`advice::advise`]). It runs after the probe's own
//! measurements, in time of its own ([`engine_time`]).

use super::super::plan::{merge, summarize};
use super::super::run::Run;
use super::super::schema::Level;
use super::advice;
use super::types::{CaseSpec, Engine, EngineAdvice, EngineCase};
use crate::bench::{run_commit, CommitBenchOptions, CommitResult};
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::units::format_human;
use crate::untorn::Answer;
use std::time::{Duration, Instant};

/// Rounds, and commit time per case and round, at each level.
fn engine_budget(level: Level) -> (usize, Duration) {
    match level {
        Level::Quick => (3, Duration::from_millis(400)),
        Level::Standard => (4, Duration::from_millis(700)),
        Level::Full => (5, Duration::from_millis(1500)),
    }
}

/// Largest file an engine's case commits into (its own segment size
/// where it has one): big enough for a round's commits at the level's
/// time, small enough to prepare quickly.
const MAX_ENGINE_FILE: u64 = 32 << 20;

/// Most runs of one case in one round (each on a fresh file).
const MAX_RUNS: usize = 32;

/// About how long `--for` adds for `engine` at `level` (commit time; each
/// file's preparation comes on top): what `--help` and the docs state.
pub fn engine_time(engine: Engine, level: Level) -> Duration {
    let (rounds, per) = engine_budget(level);
    per * (rounds * cases(engine)) as u32
}

/// The progress steps the engines' measurements take.
pub(crate) fn steps(level: Level, engines: &[Engine]) -> usize {
    let (rounds, _) = engine_budget(level);
    engines.iter().map(|&e| rounds * cases(e)).sum()
}

/// How many cases `engine` measures at most.
fn cases(engine: Engine) -> usize {
    match engine {
        Engine::Postgresql => 5,
        Engine::Mariadb => 3,
        Engine::Rocksdb => 3,
    }
}

/// Measures each engine's cases and returns its advice, in `engines`'
/// order; `untorn` holds the probe's answers on untorn page writes, which
/// the safety settings' reasons quote.
pub(crate) fn measure(
    run: &mut Run<'_>,
    info: &FsInfo,
    engines: &[Engine],
    file_size: u64,
    untorn: &[Answer],
) -> Result<Vec<EngineAdvice>> {
    let (rounds, per) = engine_budget(run.opts.level);
    let mut out = vec![];
    for &engine in engines {
        let plan = advice::plan(engine, info, file_size.min(MAX_ENGINE_FILE));
        let n = plan.cases.len();
        // The total counted `cases(engine)`, the most there can be: fewer
        // here (MariaDB without O_DIRECT) take their steps off.
        run.steps = run
            .steps
            .saturating_sub(rounds * cases(engine).saturating_sub(n));
        let mut runs: Vec<Vec<CommitResult>> = vec![vec![]; n];
        for round in 0..rounds {
            for k in 0..n {
                let i = (k + round) % n;
                let spec = &plan.cases[i];
                run.begin(format!(
                    "{engine}: {} ({} of {rounds})",
                    spec.settings,
                    round + 1
                ))?;
                let bopts = CommitBenchOptions {
                    record_size: plan.record_size,
                    file_size: plan.file_size,
                    direct_io: Some(spec.direct_io),
                    sync_methods: vec![spec.method],
                    stop_at_end: true,
                    // The engines' own files are copy-on-write on btrfs:
                    // no NOCOW for their zero-filled or recycled cases.
                    nocow: Some(false),
                    ..Default::default()
                };
                runs[i].extend(run_case(run, spec, bopts, per)?);
            }
        }
        let cases = plan
            .cases
            .iter()
            .zip(&runs)
            .map(|(spec, rs)| EngineCase {
                settings: spec.settings.to_string(),
                how: format!(
                    "{} ({} records, {} files)",
                    spec.how,
                    format_human(plan.record_size as u64),
                    format_human(plan.file_size)
                ),
                direct_io: spec.direct_io,
                figures: summarize(spec.state, rs),
            })
            .collect();
        out.push(advice::advise(engine, info, &plan, cases, rounds, untorn));
    }
    Ok(out)
}

/// One case for `per` of commit time: again on a fresh file while its
/// file is used up early, the runs of the round merged into one sample
/// (they share its conditions). Where the engine makes a new file for
/// every file's worth of commits, each run's preparation is counted in
/// its time, in proportion to the share of the file it used.
fn run_case(
    run: &Run<'_>,
    spec: &CaseSpec,
    mut bopts: CommitBenchOptions,
    per: Duration,
) -> Result<Option<CommitResult>> {
    let slots = (bopts.file_size / bopts.record_size as u64).max(1);
    let t0 = Instant::now();
    let mut out = vec![];
    for _ in 0..MAX_RUNS {
        bopts.duration = per.saturating_sub(t0.elapsed());
        let mut r = run_commit(run.dir, spec.state, &bopts, run.opts.cancel)?;
        run.cancelled()?;
        let used_up = r.unsupported.is_none() && r.commits >= slots;
        if spec.new_file_each && r.unsupported.is_none() && r.commits > 0 {
            let share = (r.commits as f64 / slots as f64).min(1.0);
            r.seconds += r.setup_seconds * share;
            r.commits_per_sec = r.commits as f64 / r.seconds.max(f64::MIN_POSITIVE);
            r.mib_per_sec = r.commits_per_sec * bopts.record_size as f64 / f64::from(1 << 20);
        }
        out.push(r);
        if !used_up || t0.elapsed() >= per {
            break;
        }
    }
    Ok(merge(out))
}
