//! A close call: a decision too noisy to make (the log's preparation or
//! its sync method) after the main rounds, its two contenders measured
//! again, alternating, while the budget lasts or until the runs decide.

use super::super::decide::log_contest;
use super::super::plan::{Case, CommitPlan};
use super::super::run::Run;
use super::super::schema::{StateResult, SyncMethodResult};
use super::super::verdict::{sync_choice, Verdict};
use super::case::{run_case, MIN_MODE};
use crate::bench::{CommitBenchOptions, CommitResult, SpaceState};
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::grow::Strategy;
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;
use std::time::Duration;

/// Most extra rounds for a close call (see [`close_call_rounds`]).
const MAX_EXTRA_ROUNDS: usize = 4;

/// The two cases to measure again when a decision was too noisy (the
/// challenger, the standing choice): the log's preparation first, else
/// its sync method.
fn undecided(
    info: &FsInfo,
    states: &[StateResult],
    methods: &[SyncMethodResult],
) -> Option<(Case, Case)> {
    let state = |s: Strategy| {
        SpaceState::of_strategy(s).map(|state| Case {
            state,
            method: None,
        })
    };
    if let Some(c) = log_contest(info, states) {
        if matches!(c.verdict, Verdict::TooNoisy { .. }) {
            return Some((state(c.challenger.0)?, state(c.standing.0)?));
        }
    }
    let s = sync_choice(info, methods, true)?;
    let method = |m: SyncMethod| Case {
        state: SpaceState::Recycled,
        method: (m != SyncMethod::Fdatasync).then_some(m),
    };
    s.too_noisy
        .then(|| (method(s.challenger), method(s.standing)))
}

/// A decision too noisy to make (the log's preparation or its sync
/// method, [`undecided`]): the two contenders are measured again,
/// alternating, while the budget lasts or until the runs decide, and
/// the decision is made on all their runs. A note says what happened.
pub(super) fn close_call_rounds(
    run: &mut Run<'_>,
    info: &FsInfo,
    plan: &CommitPlan,
    bopts: &mut CommitBenchOptions,
    runs: &mut [Vec<CommitResult>],
    notes: &mut Vec<Note>,
) -> Result<()> {
    let b = run.budget;
    let cases = Case::all();
    let mut extra = 0;
    let mut pair = None;
    while extra < MAX_EXTRA_ROUNDS {
        let undecided = undecided(
            info,
            &plan.summarize_all(runs),
            &plan.summarize_methods(runs),
        );
        let Some((fast, standing)) = undecided.filter(|p| pair.is_none_or(|q| q == *p)) else {
            break;
        };
        pair = Some((fast, standing));
        let left = b
            .total
            .saturating_sub(run.start.elapsed())
            .saturating_sub(plan.later_reserve + Duration::from_secs(1))
            // Kept for a check of the log both ways (`predict`).
            .saturating_sub((MIN_MODE + plan.setup_of(SpaceState::Wal)) * 6);
        let setup = plan.setup_of(fast.state).max(plan.setup_of(standing.state));
        let per_state = (left / 2).saturating_sub(setup).min(b.max_mode);
        if per_state < MIN_MODE {
            break;
        }
        let order = if extra % 2 == 0 {
            [standing, fast]
        } else {
            [fast, standing]
        };
        for case in order {
            run.steps += 1;
            run.begin(format!(
                "too close to call: 8 KiB commits {} again",
                case.label()
            ))?;
            let i = cases.iter().position(|x| *x == case).unwrap_or(0);
            let rs = run_case(run, case, bopts, per_state)?;
            runs[i].extend(rs);
        }
        extra += 1;
    }
    let Some((fast, standing)) = pair else {
        return Ok(());
    };
    let still = undecided(
        info,
        &plan.summarize_all(runs),
        &plan.summarize_methods(runs),
    ) == Some((fast, standing));
    notes.push(close_call_note(fast, standing, extra, still));
    Ok(())
}

/// What a close call between `fast` and `standing` came to, in words:
/// how many more times both were measured, and whether that decided it.
fn close_call_note(fast: Case, standing: Case, extra: usize, still: bool) -> Note {
    // In a sync-method contest the recycled state is fdatasync.
    let name = |c: Case, other: Case| {
        if c.method.is_none() && other.method.is_some() {
            SyncMethod::Fdatasync.name().to_string()
        } else {
            c.name()
        }
    };
    let (fast_name, standing_name) = (name(fast, standing), name(standing, fast));
    let outcome = if still {
        "still too noisy to decide"
    } else {
        "that decided it"
    };
    let text = if extra == 0 {
        format!(
            "too close to call between {fast_name} and {standing_name}: no time was left to measure them again"
        )
    } else {
        format!(
            "too close to call between {fast_name} and {standing_name}: measured both {extra} more time{} (alternating); {outcome}",
            if extra == 1 { "" } else { "s" }
        )
    };
    Note::new(NoteKind::TooCloseToCall, text)
}
