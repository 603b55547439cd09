//! The commit rounds of a probe run: the main rounds (every case of
//! [`Case::all`], alternating, each within the time left for it, files cut
//! where preparing them ran slower than planned), then a close call
//! measured again and the log's expected rate, and the section that sums
//! them up with the durability of the commits.

use super::super::decide::recommend;
use super::super::durability::{self, CaseRuns};
use super::super::plan::{decisive, Case, CommitPlan, CLOSE_CALL_SHARE, RECORD_SIZE};
use super::super::run::Run;
use super::super::schema::{CommitSection, GrowthSection, StateResult};
use super::case::{run_case, MIN_MODE};
use super::close_call::close_call_rounds;
use super::predict::predict;
use crate::bench::{CommitBenchOptions, CommitResult, SpaceState};
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::units::format_human;
use std::time::{Duration, Instant};

/// Measures commits into every space state in alternating rounds,
/// then measures a close call again (see [`close_call_rounds`]),
/// keeping `later` of the budget for what is measured after them
/// besides the sweep.
pub(crate) fn measure(
    run: &mut Run<'_>,
    info: &FsInfo,
    growth: &GrowthSection,
    later: Duration,
    notes: &mut Vec<Note>,
) -> Result<CommitSection> {
    let b = run.budget;
    let mut plan = CommitPlan::new(info, growth, run.budget, later, notes);
    let mut bopts = CommitBenchOptions {
        record_size: RECORD_SIZE,
        file_size: plan.file_size,
        segment_size: plan.segment_size,
        stop_at_end: true,
        ..Default::default()
    };
    let mut runs: Vec<Vec<CommitResult>> = vec![vec![]; Case::all().len()];
    let (shortest, longest) = main_rounds(run, info, &mut plan, &mut bopts, &mut runs, notes)?;
    close_call_rounds(run, info, &plan, &mut bopts, &mut runs, notes)?;
    let cases: Vec<CaseRuns<'_>> = Case::all()
        .iter()
        .zip(&runs)
        .map(|(c, rs)| (c.state, c.method, rs.as_slice()))
        .collect();
    let durability = durability::durability(&cases);
    notes.extend(durability.as_ref().and_then(|d| d.note()));
    let mut states = plan.summarize_all(&runs);
    let sync_methods = plan.summarize_methods(&runs);
    let log_space = Case::all()
        .iter()
        .position(|c| c.state == SpaceState::Wal)
        .and_then(|i| {
            runs[i]
                .iter()
                .rev()
                .find_map(|r| r.wal.as_ref()?.space.clone())
        });
    let rec = recommend(info, &states, &sync_methods, &growth.results, None);
    let (prediction, log_check) = match rec
        .iter()
        .find(|r| r.intent == crate::strategy::Intent::Log && r.measured)
    {
        Some(log) => predict(
            run,
            info,
            &plan,
            &states,
            &sync_methods,
            log,
            &mut bopts,
            longest,
        )?,
        None => (None, None),
    };
    vs_append(&mut states);
    if shortest <= MIN_MODE {
        notes.push(Note::new(
            NoteKind::RoughFigures,
            format!(
                "the budget left {} ms for some states: their commit figures are rough",
                MIN_MODE.as_millis()
            ),
        ));
    }
    Ok(CommitSection {
        record_size: RECORD_SIZE,
        rounds: b.rounds,
        seconds_per_mode: longest.as_secs_f64(),
        file_size: plan.file_size,
        states,
        sync_methods,
        prediction,
        log_check,
        log_space,
        baseline: None,
        durability,
    })
}

/// Sets each measured state's rate against plain appending's.
fn vs_append(states: &mut [StateResult]) {
    let append = states
        .iter()
        .find(|s| s.state == SpaceState::Appended && s.measured())
        .map(|s| s.commits_per_sec);
    for s in states {
        if let Some(a) = append.filter(|a| *a > 0.0) {
            if s.measured() {
                s.vs_append = Some(s.commits_per_sec / a);
            }
        }
    }
}

/// The main rounds: every state that can be made here, in an order
/// rotated by three each round so that no state always runs first (or
/// right after the same neighbour). Returns the shortest and longest
/// time a state got.
fn main_rounds(
    run: &mut Run<'_>,
    info: &FsInfo,
    plan: &mut CommitPlan,
    bopts: &mut CommitBenchOptions,
    runs: &mut [Vec<CommitResult>],
    notes: &mut Vec<Note>,
) -> Result<(Duration, Duration)> {
    let b = run.budget;
    let cases = Case::all();
    let n = cases.len();
    let mut shortest = b.max_mode;
    let mut longest = Duration::ZERO;
    let running = (0..n).filter(|&i| plan.unsupported[i].is_none()).count();
    let mut to_run = b.rounds * running;
    let mut t_run: Vec<Duration> = vec![];
    let mut skipped: Vec<String> = vec![];
    for round in 0..b.rounds {
        for k in 0..n {
            let i = (k + round * 3) % n;
            let case = cases[i];
            run.begin(format!(
                "8 KiB commits {} (round {} of {})",
                case.label(),
                round + 1,
                b.rounds
            ))?;
            if plan.unsupported[i].is_some() {
                continue;
            }
            if round > 0 && !decisive(info, case) && short_of_time(run, to_run, &t_run) {
                // Short of time: later rounds keep to the cases that
                // decide something (one run of the others is shown).
                skipped.push(case.label());
                to_run = to_run.saturating_sub(1);
                continue;
            }
            let t0 = Instant::now();
            let per_state = state_time(run, to_run, plan.setup_of(case.state), plan.reserve);
            to_run = to_run.saturating_sub(1);
            shortest = shortest.min(per_state);
            longest = longest.max(per_state);
            let rs = run_case(run, case, bopts, per_state)?;
            let prepared = rs
                .iter()
                .filter(|r| r.unsupported.is_none())
                .map(|r| r.setup_seconds)
                .fold(0.0, f64::max);
            runs[i].extend(rs);
            t_run.push(t0.elapsed());
            if matches!(case.state, SpaceState::ZeroFilled | SpaceState::Recycled) {
                shrink_files(run, plan, bopts, prepared, to_run, notes);
            }
        }
    }
    if !skipped.is_empty() {
        skipped.sort();
        skipped.dedup();
        notes.push(Note::new(
            NoteKind::MeasuredOnce,
            format!(
                "short of time: after the first round only the cases that decide something ran again; measured once: {}",
                skipped.join(", ")
            ),
        ));
    }
    Ok((shortest, longest))
}

/// Whether the runs still to go, at the mean wall time of those so
/// far (preparation and clean-up included), overrun the budget.
fn short_of_time(run: &Run<'_>, to_run: usize, t_run: &[Duration]) -> bool {
    if t_run.is_empty() {
        return false;
    }
    let mean = t_run.iter().sum::<Duration>() / t_run.len() as u32;
    let left = run.budget.total.saturating_sub(run.start.elapsed());
    mean * to_run as u32 > left.mul_f64(1.0 - CLOSE_CALL_SHARE)
}

/// When preparing a commit file took longer than the growth step's
/// rate promised (sshfs: writes land in the page cache fast, reach the
/// server slowly), shrinks the files still to be prepared so that the
/// rest of the rounds fits the budget; a note says so.
fn shrink_files(
    run: &Run<'_>,
    plan: &mut CommitPlan,
    bopts: &mut CommitBenchOptions,
    setup_seconds: f64,
    runs_left: usize,
    notes: &mut Vec<Note>,
) {
    if setup_seconds <= 0.0 {
        return;
    }
    let rate = plan.file_size as f64 / setup_seconds;
    if rate >= plan.fill * 0.7 {
        return;
    }
    let was = plan.fill;
    plan.fill = rate;
    let cases = Case::all();
    let prepared_share = cases
        .iter()
        .filter(|c| matches!(c.state, SpaceState::ZeroFilled | SpaceState::Recycled))
        .count() as f64
        / cases.len() as f64;
    let left = run
        .budget
        .total
        .saturating_sub(run.start.elapsed())
        .saturating_sub(plan.reserve)
        .saturating_sub(MIN_MODE * runs_left as u32)
        .as_secs_f64();
    let prepared_left = (runs_left as f64 * prepared_share).max(1.0);
    // Never below a quarter (nor 4 MiB): smaller files measure little.
    let floor = (plan.file_size / 4).max(4 << 20).min(plan.file_size);
    let want =
        ((rate * left * 0.8 / prepared_left) as u64 >> 20 << 20).clamp(floor, plan.file_size);
    if want < plan.file_size {
        notes.push(Note::new(
            NoteKind::SlowWrites,
            format!(
                "preparing commit files ran at {}/s, slower than the growth step's {}/s: the files still to prepare were cut from {} to {}",
                format_human(rate as u64),
                format_human(was as u64),
                format_human(plan.file_size),
                format_human(want)
            ),
        ));
        plan.file_size = want;
        plan.segment_size = plan.segment_size.min((want / 2).max(1 << 20));
        bopts.file_size = want;
        bopts.segment_size = plan.segment_size;
    }
}

/// Time for the next state so that the states still to run fit what
/// is left of the budget, counting each one's preparation at the
/// measured zero-fill rate.
fn state_time(run: &Run<'_>, left_states: usize, setup: Duration, reserve: Duration) -> Duration {
    let left = run
        .budget
        .total
        .saturating_sub(run.start.elapsed())
        .saturating_sub(reserve)
        .mul_f64(0.9);
    let per = left
        .checked_div(left_states.max(1) as u32)
        .unwrap_or(MIN_MODE)
        .saturating_sub(setup);
    per.clamp(MIN_MODE, run.budget.max_mode)
}
