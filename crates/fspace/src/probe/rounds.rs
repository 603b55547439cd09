//! The commit measurements of a probe run: time per state, alternating
//! rounds per space state, close-call extra rounds, the check of the log
//! both ways, and the record-size sweep.

use super::busy::IDLE_WINDOW;
use super::decide::{log_contest, recommend};
use super::plan::{
    decisive, merge, prediction, summarize, Case, CommitPlan, CLOSE_CALL_SHARE, RECORD_SIZE,
    SWEEP_RECORDS, SWEEP_TIME,
};
use super::run::Run;
use super::schema::{
    CommitSection, GrowthSection, LogCheck, Prediction, StateResult, SweepPoint, SyncMethodResult,
};
use super::verdict::{sync_choice, verdict, Verdict};
use crate::bench::{run_commit, CommitBenchOptions, CommitResult, SpaceState};
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::grow::Strategy;
use crate::note::{Note, NoteKind};
use crate::policy::LogSetup;
use crate::strategy::SyncMethod;
use crate::units::format_human;
use std::time::{Duration, Instant};

/// Shortest time per commit mode when the budget is tight: below this the
/// percentiles mean little.
const MIN_MODE: Duration = Duration::from_millis(250);

/// Most runs of one state in one round (see [`Rounds::commit`]).
const MAX_RUNS: usize = 32;

/// Most extra rounds for a close call (see [`Rounds::commit`]).
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

/// The commit measurements of one run, made through its progress steps.
pub(super) struct Rounds<'r, 'a> {
    run: &'r mut Run<'a>,
}

impl<'r, 'a> Rounds<'r, 'a> {
    pub(super) fn new(run: &'r mut Run<'a>) -> Self {
        Rounds { run }
    }

    /// Time for the next state so that the states still to run fit what
    /// is left of the budget, counting each one's preparation at the
    /// measured zero-fill rate.
    fn state_time(&self, left_states: usize, setup: Duration, reserve: Duration) -> Duration {
        let left = self
            .run
            .budget
            .total
            .saturating_sub(self.run.start.elapsed())
            .saturating_sub(reserve)
            .mul_f64(0.9);
        let per = left
            .checked_div(left_states.max(1) as u32)
            .unwrap_or(MIN_MODE)
            .saturating_sub(setup);
        per.clamp(MIN_MODE, self.run.budget.max_mode)
    }

    /// Runs `state` for `per_state`, again on a freshly prepared file
    /// while its file is used up early (a fast device, tmpfs) and time
    /// lasts: more samples, never a wrap into written blocks.
    fn run_state(
        &self,
        case: Case,
        bopts: &mut CommitBenchOptions,
        per_state: Duration,
    ) -> Result<Vec<CommitResult>> {
        let state = case.state;
        bopts.sync_methods = case.method.into_iter().collect();
        let slots = bopts.file_size / bopts.record_size as u64;
        let t0 = Instant::now();
        let mut out = vec![];
        for _ in 0..MAX_RUNS {
            bopts.duration = per_state.saturating_sub(t0.elapsed());
            let r = run_commit(self.run.dir, state, bopts, self.run.opts.cancel)?;
            self.run.cancelled()?;
            let used_up = r.unsupported.is_none() && r.commits >= slots;
            out.push(r);
            if !used_up || per_state.saturating_sub(t0.elapsed()) < MIN_MODE {
                break;
            }
        }
        // One sample per state and round: runs again within a round share
        // that round's conditions, so the rank test must not count them
        // as independent.
        Ok(merge(out).into_iter().collect())
    }

    /// Measures commits into every space state in alternating rounds,
    /// then measures a close call again (see [`Run::close_call_rounds`]),
    /// keeping `later` of the budget for what is measured after them
    /// besides the sweep.
    pub(super) fn commit(
        &mut self,
        info: &FsInfo,
        growth: &GrowthSection,
        later: Duration,
        notes: &mut Vec<Note>,
    ) -> Result<CommitSection> {
        let b = self.run.budget;
        let mut plan = CommitPlan::new(info, growth, self.run.budget, later, notes);
        let mut bopts = CommitBenchOptions {
            record_size: RECORD_SIZE,
            file_size: plan.file_size,
            segment_size: plan.segment_size,
            stop_at_end: true,
            ..Default::default()
        };
        let mut runs: Vec<Vec<CommitResult>> = vec![vec![]; Case::all().len()];
        let (shortest, longest) =
            self.main_rounds(info, &mut plan, &mut bopts, &mut runs, notes)?;
        self.close_call_rounds(info, &plan, &mut bopts, &mut runs, notes)?;
        let cases: Vec<super::durability::CaseRuns<'_>> = Case::all()
            .iter()
            .zip(&runs)
            .map(|(c, rs)| (c.state, c.method, rs.as_slice()))
            .collect();
        let durability = super::durability::durability(&cases);
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
            Some(log) => self.predict(
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

    /// What the recommended log setup should reach: the log state's runs
    /// when the recommendation is the built-in setup the log state ran
    /// (the usual case: a choice stands unless beaten). Else the log is
    /// measured both ways now, alternating ([`LogCheck`]): the suggested
    /// setup must beat the built-in one in the log itself, and the
    /// prediction comes from the setup that is then recommended.
    #[allow(clippy::too_many_arguments)]
    fn predict(
        &mut self,
        info: &FsInfo,
        plan: &CommitPlan,
        states: &[StateResult],
        methods: &[SyncMethodResult],
        log: &crate::policy::Recommendation,
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
        let (suggested_setup, built_in_log) =
            (main(log.strategy, sync), main(built_in, built_in_sync));
        let setup = suggested_setup.words();
        let built_in_setup = built_in_log.words();
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
                wal.map(|w| prediction(w, suggested_setup.clone(), basis(w))),
                None,
            ));
        }
        let k = wal.map_or(3, |w| w.runs.len()).clamp(3, 4);
        let left = self
            .run
            .budget
            .total
            .saturating_sub(self.run.start.elapsed())
            .saturating_sub(plan.later_reserve + Duration::from_secs(1) + IDLE_WINDOW * 2);
        // Each run opens a log, which prepares its first segments.
        let per = (left / (2 * k as u32))
            .saturating_sub(plan.setup_of(SpaceState::Wal))
            .min(self.run.budget.max_mode);
        if per < MIN_MODE {
            // Unconfirmed, the suggestion does not stand.
            let none = summarize(SpaceState::Wal, &[]);
            return Ok((
                wal.map(|w| {
                    prediction(
                        w,
                        built_in_log.clone(),
                        "the log's runs above (its built-in setup)".into(),
                    )
                }),
                Some(LogCheck {
                    setup,
                    built_in_setup,
                    recommended: none.clone(),
                    built_in: none,
                    confirmed: false,
                }),
            ));
        }
        let suggested = Case {
            state: SpaceState::Wal,
            method: Some(sync),
        };
        let standing = Case {
            state: SpaceState::Wal,
            method: Some(built_in_sync),
        };
        let (mut a, mut b) = (vec![], vec![]);
        let saved = bopts.prepare.clone();
        for i in 0..k {
            for first in [i % 2 == 0, i % 2 == 1] {
                let (case, choice, out) = if first {
                    (
                        suggested,
                        crate::policy::StrategyChoice::exactly(log.strategy),
                        &mut a,
                    )
                } else {
                    (
                        standing,
                        crate::policy::StrategyChoice::exactly(built_in),
                        &mut b,
                    )
                };
                self.run.steps += 1;
                self.run.begin(format!(
                    "8 KiB commits through fspace's log, {} ({} of {k})",
                    if first { &setup } else { &built_in_setup },
                    i + 1
                ))?;
                bopts.prepare = choice;
                let rs = self.run_state(case, bopts, per);
                bopts.prepare = saved.clone();
                out.extend(rs?);
            }
        }
        let recommended = summarize(SpaceState::Wal, &a);
        let built = summarize(SpaceState::Wal, &b);
        let confirmed = recommended.measured()
            && built.measured()
            && matches!(verdict(&recommended, &built), Verdict::Faster { .. });
        let checked = |s: &LogSetup| LogSetup {
            seconds_per_run: per.as_secs_f64(),
            ..s.clone()
        };
        let p = if confirmed {
            prediction(
                &recommended,
                checked(&suggested_setup),
                format!(
                    "{} runs of the log set up as recommended, alternating with its built-in setup",
                    recommended.runs.len()
                ),
            )
        } else {
            prediction(
                &built,
                checked(&built_in_log),
                format!(
                    "{} runs of the log's built-in setup, alternating with the suggested one",
                    built.runs.len()
                ),
            )
        };
        Ok((
            Some(p).filter(|p| p.commits_per_sec > 0.0),
            Some(LogCheck {
                setup,
                built_in_setup,
                recommended,
                built_in: built,
                confirmed,
            }),
        ))
    }

    /// The main rounds: every state that can be made here, in an order
    /// rotated by three each round so that no state always runs first (or
    /// right after the same neighbour). Returns the shortest and longest
    /// time a state got.
    fn main_rounds(
        &mut self,
        info: &FsInfo,
        plan: &mut CommitPlan,
        bopts: &mut CommitBenchOptions,
        runs: &mut [Vec<CommitResult>],
        notes: &mut Vec<Note>,
    ) -> Result<(Duration, Duration)> {
        let b = self.run.budget;
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
                self.run.begin(format!(
                    "8 KiB commits {} (round {} of {})",
                    case.label(),
                    round + 1,
                    b.rounds
                ))?;
                if plan.unsupported[i].is_some() {
                    continue;
                }
                if round > 0 && !decisive(info, case) && self.short_of_time(to_run, &t_run) {
                    // Short of time: later rounds keep to the cases that
                    // decide something (one run of the others is shown).
                    skipped.push(case.label());
                    to_run = to_run.saturating_sub(1);
                    continue;
                }
                let t0 = Instant::now();
                let per_state = self.state_time(to_run, plan.setup_of(case.state), plan.reserve);
                to_run = to_run.saturating_sub(1);
                shortest = shortest.min(per_state);
                longest = longest.max(per_state);
                let rs = self.run_state(case, bopts, per_state)?;
                let prepared = rs
                    .iter()
                    .filter(|r| r.unsupported.is_none())
                    .map(|r| r.setup_seconds)
                    .fold(0.0, f64::max);
                runs[i].extend(rs);
                t_run.push(t0.elapsed());
                if matches!(case.state, SpaceState::ZeroFilled | SpaceState::Recycled) {
                    self.shrink_files(plan, bopts, prepared, to_run, notes);
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
    fn short_of_time(&self, to_run: usize, t_run: &[Duration]) -> bool {
        if t_run.is_empty() {
            return false;
        }
        let mean = t_run.iter().sum::<Duration>() / t_run.len() as u32;
        let left = self
            .run
            .budget
            .total
            .saturating_sub(self.run.start.elapsed());
        mean * to_run as u32 > left.mul_f64(1.0 - CLOSE_CALL_SHARE)
    }

    /// When preparing a commit file took longer than the growth step's
    /// rate promised (sshfs: writes land in the page cache fast, reach the
    /// server slowly), shrinks the files still to be prepared so that the
    /// rest of the rounds fits the budget; a note says so.
    fn shrink_files(
        &self,
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
        let left = self
            .run
            .budget
            .total
            .saturating_sub(self.run.start.elapsed())
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

    /// A decision too noisy to make (the log's preparation or its sync
    /// method, [`undecided`]): the two contenders are measured again,
    /// alternating, while the budget lasts or until the runs decide, and
    /// the decision is made on all their runs. A note says what happened.
    fn close_call_rounds(
        &mut self,
        info: &FsInfo,
        plan: &CommitPlan,
        bopts: &mut CommitBenchOptions,
        runs: &mut [Vec<CommitResult>],
        notes: &mut Vec<Note>,
    ) -> Result<()> {
        let b = self.run.budget;
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
                .saturating_sub(self.run.start.elapsed())
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
                self.run.steps += 1;
                self.run.begin(format!(
                    "too close to call: 8 KiB commits {} again",
                    case.label()
                ))?;
                let i = cases.iter().position(|x| *x == case).unwrap_or(0);
                let rs = self.run_state(case, bopts, per_state)?;
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
        notes.push(Note::new(NoteKind::TooCloseToCall, text));
        Ok(())
    }

    pub(super) fn sweep(
        &mut self,
        file_size: u64,
        notes: &mut Vec<Note>,
    ) -> Result<Vec<SweepPoint>> {
        let mut out = vec![];
        let mut skipped = 0;
        for rec in SWEEP_RECORDS {
            for state in [SpaceState::Appended, SpaceState::Recycled, SpaceState::Wal] {
                self.run.begin(format!(
                    "record-size sweep: {} commits {}",
                    format_human(rec as u64),
                    if state == SpaceState::Wal {
                        "through fspace's log".to_string()
                    } else {
                        format!("into {} space", state.name())
                    }
                ))?;
                if self.run.start.elapsed() >= self.run.budget.total {
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
                let r = run_commit(self.run.dir, state, &o, self.run.opts.cancel)?;
                self.run.cancelled()?;
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
            notes.push(Note::new(
                NoteKind::SweepCut,
                format!(
                    "the budget ran out: {skipped} of {} sweep points were not measured",
                    SWEEP_RECORDS.len() * 3
                ),
            ));
        }
        Ok(out)
    }
}
