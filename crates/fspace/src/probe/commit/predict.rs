//! The log's expected rate after the commit rounds: from the log state's
//! runs where the recommendation keeps the built-in setup the log state
//! ran; else from a check of the log both ways ([`LogCheck`]), the setup
//! the states suggest against the built-in one, alternating, in the log
//! itself.

use super::super::busy::IDLE_WINDOW;
use super::super::decide::log_contest;
use super::super::plan::{prediction, summarize, Case, CommitPlan};
use super::super::run::Run;
use super::super::schema::{LogCheck, Prediction, StateResult, SyncMethodResult};
use super::super::verdict::{sync_choice, verdict, Verdict};
use super::case::{run_case, MIN_MODE};
use crate::bench::{CommitBenchOptions, CommitResult, SpaceState};
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::policy::{LogSetup, Recommendation, StrategyChoice};
use crate::strategy::SyncMethod;
use std::time::Duration;

/// What the recommended log setup should reach: the log state's runs
/// when the recommendation is the built-in setup the log state ran
/// (the usual case: a choice stands unless beaten). Else the log is
/// measured both ways now, alternating ([`LogCheck`]): the suggested
/// setup must beat the built-in one in the log itself, and the
/// prediction comes from the setup that is then recommended.
#[allow(clippy::too_many_arguments)]
pub(super) fn predict(
    run: &mut Run<'_>,
    info: &FsInfo,
    plan: &CommitPlan,
    states: &[StateResult],
    methods: &[SyncMethodResult],
    log: &Recommendation,
    bopts: &mut CommitBenchOptions,
    longest: Duration,
) -> Result<(Option<Prediction>, Option<LogCheck>)> {
    // What stands unless beaten: the built-in choices, or their
    // fallbacks where those could not be measured here.
    let built_in = log_contest(info, states).map_or(log.strategy, |c| c.standing.0);
    let built_in_sync =
        sync_choice(info, methods, true).map_or(SyncMethod::Fdatasync, |c| c.standing);
    let sync = log.sync_method.unwrap_or(built_in_sync);
    // The main rounds' log: its time was at most the longest a state
    // got.
    let main = |strategy, sync_method| LogSetup {
        strategy,
        sync_method,
        record_size: bopts.record_size,
        segment_size: bopts.segment_size,
        seconds_per_run: longest.as_secs_f64(),
        writers: 1,
        runs: vec![],
    };
    let (suggested, built_in_log) = (main(log.strategy, sync), main(built_in, built_in_sync));
    let wal = states
        .iter()
        .find(|s| s.state == SpaceState::Wal && s.measured());
    if log.strategy == built_in && sync == built_in_sync {
        let basis = |w: &StateResult| {
            format!(
                "the log's {} runs above (the built-in setup, which the recommendation keeps)",
                w.runs.len()
            )
        };
        return Ok((
            wal.map(|w| prediction(w, suggested.clone(), basis(w))),
            None,
        ));
    }
    let k = wal.map_or(3, |w| w.runs.len()).clamp(3, 4);
    let per = check_time(run, plan, k);
    if per < MIN_MODE {
        return Ok(unconfirmed(wal, &suggested, &built_in_log));
    }
    let (a, b) = both_ways(run, bopts, &suggested, &built_in_log, k, per)?;
    Ok(checked(&suggested, &built_in_log, &a, &b, per))
}

/// Time per run of a check with `k` runs of each setup: what the budget
/// has left after the measurements still to come, shared among the runs.
fn check_time(run: &Run<'_>, plan: &CommitPlan, k: usize) -> Duration {
    let left = run
        .budget
        .total
        .saturating_sub(run.start.elapsed())
        .saturating_sub(plan.later_reserve + Duration::from_secs(1) + IDLE_WINDOW * 2);
    // Each run opens a log, which prepares its first segments.
    (left / (2 * k as u32))
        .saturating_sub(plan.setup_of(SpaceState::Wal))
        .min(run.budget.max_mode)
}

/// No time left for the check: unconfirmed, the suggestion does not
/// stand, and the log's runs above (its built-in setup) predict.
fn unconfirmed(
    wal: Option<&StateResult>,
    suggested: &LogSetup,
    built_in: &LogSetup,
) -> (Option<Prediction>, Option<LogCheck>) {
    let none = summarize(SpaceState::Wal, &[]);
    (
        wal.map(|w| {
            prediction(
                w,
                built_in.clone(),
                "the log's runs above (its built-in setup)".into(),
            )
        }),
        Some(LogCheck {
            setup: suggested.words(),
            built_in_setup: built_in.words(),
            recommended: none.clone(),
            built_in: none,
            confirmed: false,
        }),
    )
}

/// `k` runs of `per` of each setup, alternating which goes first: the
/// suggested setup's runs and the built-in one's.
fn both_ways(
    run: &mut Run<'_>,
    bopts: &mut CommitBenchOptions,
    suggested: &LogSetup,
    built_in: &LogSetup,
    k: usize,
    per: Duration,
) -> Result<(Vec<CommitResult>, Vec<CommitResult>)> {
    let (mut a, mut b) = (vec![], vec![]);
    let saved = bopts.prepare.clone();
    for i in 0..k {
        for first in [i % 2 == 0, i % 2 == 1] {
            let (setup, out) = if first {
                (suggested, &mut a)
            } else {
                (built_in, &mut b)
            };
            let case = Case {
                state: SpaceState::Wal,
                method: Some(setup.sync_method),
            };
            run.steps += 1;
            run.begin(format!(
                "8 KiB commits through fspace's log, {} ({} of {k})",
                setup.words(),
                i + 1
            ))?;
            bopts.prepare = StrategyChoice::exactly(setup.strategy);
            let rs = run_case(run, case, bopts, per);
            bopts.prepare = saved.clone();
            out.extend(rs?);
        }
    }
    Ok((a, b))
}

/// The check's outcome from the runs both ways (`a` of the suggested
/// setup, `b` of the built-in one, `per` each): the suggested setup
/// predicts only where it beat the built-in one.
fn checked(
    suggested: &LogSetup,
    built_in: &LogSetup,
    a: &[CommitResult],
    b: &[CommitResult],
    per: Duration,
) -> (Option<Prediction>, Option<LogCheck>) {
    let recommended = summarize(SpaceState::Wal, a);
    let built = summarize(SpaceState::Wal, b);
    let confirmed = recommended.measured()
        && built.measured()
        && matches!(verdict(&recommended, &built), Verdict::Faster { .. });
    let timed = |s: &LogSetup| LogSetup {
        seconds_per_run: per.as_secs_f64(),
        ..s.clone()
    };
    let p = if confirmed {
        prediction(
            &recommended,
            timed(suggested),
            format!(
                "{} runs of the log set up as recommended, alternating with its built-in setup",
                recommended.runs.len()
            ),
        )
    } else {
        prediction(
            &built,
            timed(built_in),
            format!(
                "{} runs of the log's built-in setup, alternating with the suggested one",
                built.runs.len()
            ),
        )
    };
    (
        Some(p).filter(|p| p.commits_per_sec > 0.0),
        Some(LogCheck {
            setup: suggested.words(),
            built_in_setup: built_in.words(),
            recommended,
            built_in: built,
            confirmed,
        }),
    )
}
