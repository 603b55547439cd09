//! The commit measurements of a probe run: time per state, alternating
//! rounds per space state, close-call extra rounds, and the record-size
//! sweep.

use super::run::*;
use super::schema::*;
use super::stats::*;
use crate::bench::SpaceState;
use crate::bench::{run_commit, CommitBenchOptions, CommitResult};
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::grow::Strategy;
use crate::strategy::SyncMethod;
use crate::units::format_human;
use std::time::{Duration, Instant};

/// One measurement of the rounds: a space state, or commits into written
/// (recycled) space made durable by a sync method other than `fdatasync`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Case {
    pub(super) state: SpaceState,
    /// `None`: `fdatasync` (the log: its own choice).
    pub(super) method: Option<SyncMethod>,
}

impl Case {
    /// Every case, in order: the states in [`SpaceState::ALL`] order, then
    /// recycled space with each sync method but `fdatasync` (which is the
    /// recycled state itself).
    pub(super) fn all() -> Vec<Case> {
        let states = SpaceState::ALL.iter().map(|&state| Case {
            state,
            method: None,
        });
        let methods = SyncMethod::ALL
            .iter()
            .filter(|&&m| m != SyncMethod::Fdatasync)
            .map(|&m| Case {
                state: SpaceState::Recycled,
                method: Some(m),
            });
        states.chain(methods).collect()
    }

    /// The state, or the method, in a few words.
    fn name(self) -> String {
        match self.method {
            None => format!("{} space", self.state.name()),
            Some(m) => m.name().to_string(),
        }
    }

    pub(super) fn label(self) -> String {
        match (self.state, self.method) {
            (SpaceState::Wal, _) => "through fspace's log".into(),
            (st, None) => format!("into {} space", st.name()),
            (st, Some(m)) => format!("into {} space with {m}", st.name()),
        }
    }
}

impl Run<'_> {
    /// The rate zeros were written at in the growth step (bytes/s), or a
    /// guess when zero-fill could not run.
    pub(super) fn fill_rate(growth: &GrowthSection) -> f64 {
        growth
            .results
            .iter()
            .find(|g| g.strategy == Strategy::ZeroFill && g.unsupported.is_none())
            .map_or(100e6, |g| g.bytes_per_sec.max(1e6))
    }

    /// Time for the next state so that the states still to run fit what
    /// is left of the budget, counting each one's preparation at the
    /// measured zero-fill rate.
    pub(super) fn state_time(
        &self,
        left_states: usize,
        setup: Duration,
        reserve: Duration,
    ) -> Duration {
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
    pub(super) fn run_state(
        &self,
        case: Case,
        bopts: &mut CommitBenchOptions,
        per_state: Duration,
    ) -> Result<Vec<crate::bench::CommitResult>> {
        let state = case.state;
        bopts.sync_methods = case.method.into_iter().collect();
        let slots = bopts.file_size / bopts.record_size as u64;
        let t0 = Instant::now();
        let mut out = vec![];
        for _ in 0..MAX_RUNS {
            bopts.duration = per_state.saturating_sub(t0.elapsed());
            let r = run_commit(self.dir, state, bopts, self.opts.cancel)?;
            self.cancelled()?;
            let used_up = r.unsupported.is_none() && r.commits >= slots;
            out.push(r);
            if !used_up || per_state.saturating_sub(t0.elapsed()) < MIN_MODE {
                break;
            }
        }
        Ok(out)
    }

    /// Measures commits into every space state in alternating rounds,
    /// then measures a close call again (see [`Run::close_call_rounds`]).
    pub(super) fn commit(
        &mut self,
        info: &FsInfo,
        growth: &GrowthSection,
        notes: &mut Vec<String>,
    ) -> Result<CommitSection> {
        let b = self.budget;
        let plan = CommitPlan::new(info, growth, self.budget, notes);
        let mut bopts = CommitBenchOptions {
            record_size: RECORD_SIZE,
            file_size: plan.file_size,
            segment_size: plan.segment_size,
            stop_at_end: true,
            ..Default::default()
        };
        let mut runs: Vec<Vec<CommitResult>> = vec![vec![]; Case::all().len()];
        let (shortest, longest) = self.main_rounds(&plan, &mut bopts, &mut runs)?;
        self.close_call_rounds(info, &plan, &mut bopts, &mut runs, notes)?;
        let mut states = plan.summarize_all(&runs);
        let sync_methods = plan.summarize_methods(&runs);
        let rec = super::decide::recommend(info, &states, &sync_methods, &growth.results, None);
        let (prediction, log_check) = match rec
            .iter()
            .find(|r| r.intent == crate::strategy::Intent::Log && r.measured)
        {
            Some(log) => self.predict(info, &plan, &states, log, &mut bopts, notes)?,
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
            notes.push(format!(
                "the budget left {} ms for some states: their commit figures are rough",
                MIN_MODE.as_millis()
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
        })
    }

    /// What the recommended log setup should reach: the log state's runs
    /// when the recommendation is the built-in setup the log state ran
    /// (the usual case: a choice stands unless beaten). Else the log is
    /// measured both ways now, alternating ([`LogCheck`]): the suggested
    /// setup must beat the built-in one in the log itself, and the
    /// prediction comes from the setup that is then recommended.
    fn predict(
        &mut self,
        info: &FsInfo,
        plan: &CommitPlan,
        states: &[StateResult],
        log: &crate::policy::Recommendation,
        bopts: &mut CommitBenchOptions,
        notes: &mut Vec<String>,
    ) -> Result<(Option<Prediction>, Option<LogCheck>)> {
        let built_in = crate::policy::built_in(info, crate::strategy::Intent::Log).first();
        let remote = crate::policy::rules::is_remote(info);
        let (built_in_sync, _) = crate::policy::rules::log_sync_method(Some(info.kind), remote);
        let sync = log.sync_method.unwrap_or(built_in_sync);
        let setup = format!("{} segments, {sync}", log.strategy);
        let built_in_setup = format!("{built_in} segments, {built_in_sync}");
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
            return Ok((wal.map(|w| prediction(w, &setup, basis(w))), None));
        }
        let k = wal.map_or(3, |w| w.runs.len()).clamp(3, 4);
        let left = self
            .budget
            .total
            .saturating_sub(self.start.elapsed())
            .saturating_sub(plan.sweep_reserve + Duration::from_secs(1));
        let per = (left / (2 * k as u32)).min(self.budget.max_mode);
        if per < MIN_MODE {
            notes.push(format!(
                "no time was left to measure fspace's log set up as suggested ({setup}) against its built-in setup ({built_in_setup}); the suggestion is not confirmed in the log itself"
            ));
            return Ok((None, None));
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
                self.steps += 1;
                self.begin(format!(
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
            && matches!(
                super::verdict::verdict(&recommended, &built),
                super::verdict::Verdict::Faster { .. }
            );
        let p = if confirmed {
            prediction(
                &recommended,
                &setup,
                format!(
                    "{} runs of the log set up as recommended, alternating with its built-in setup",
                    recommended.runs.len()
                ),
            )
        } else {
            prediction(
                &built,
                &built_in_setup,
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
        plan: &CommitPlan,
        bopts: &mut CommitBenchOptions,
        runs: &mut [Vec<CommitResult>],
    ) -> Result<(Duration, Duration)> {
        let b = self.budget;
        let cases = Case::all();
        let n = cases.len();
        let mut shortest = b.max_mode;
        let mut longest = Duration::ZERO;
        let running = (0..n).filter(|&i| plan.unsupported[i].is_none()).count();
        let mut to_run = b.rounds * running;
        for round in 0..b.rounds {
            for k in 0..n {
                let i = (k + round * 3) % n;
                let case = cases[i];
                self.begin(format!(
                    "8 KiB commits {} (round {} of {})",
                    case.label(),
                    round + 1,
                    b.rounds
                ))?;
                if plan.unsupported[i].is_some() {
                    continue;
                }
                let per_state = self.state_time(to_run, plan.setup_of(case.state), plan.reserve);
                to_run = to_run.saturating_sub(1);
                shortest = shortest.min(per_state);
                longest = longest.max(per_state);
                let rs = self.run_state(case, bopts, per_state)?;
                runs[i].extend(rs);
            }
        }
        Ok((shortest, longest))
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
        notes: &mut Vec<String>,
    ) -> Result<()> {
        let b = self.budget;
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
                .saturating_sub(self.start.elapsed())
                .saturating_sub(plan.sweep_reserve + Duration::from_secs(1));
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
                self.steps += 1;
                self.begin(format!(
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
        notes.push(if extra == 0 {
            format!(
                "too close to call between {fast_name} and {standing_name}: no time was left to measure them again"
            )
        } else {
            format!(
                "too close to call between {fast_name} and {standing_name}: measured both {extra} more time{} (alternating); {outcome}",
                if extra == 1 { "" } else { "s" }
            )
        });
        Ok(())
    }

    pub(super) fn sweep(
        &mut self,
        file_size: u64,
        notes: &mut Vec<String>,
    ) -> Result<Vec<SweepPoint>> {
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
                let r = run_commit(self.dir, state, &o, self.opts.cancel)?;
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

/// A prediction from the runs of `s`.
fn prediction(s: &StateResult, setup: &str, basis: String) -> Prediction {
    let (low, high) = range(&s.runs);
    Prediction {
        commits_per_sec: s.commits_per_sec,
        low,
        high,
        setup: setup.to_string(),
        basis,
    }
}

/// How the commit measurements of one run are sized, and what they cannot
/// measure here.
struct CommitPlan {
    /// The rate the growth step wrote zeros at, bytes/s.
    fill: f64,
    file_size: u64,
    segment_size: u64,
    /// Per case (in [`Case::all`] order): why it cannot be made here, when
    /// its preparation failed in the growth step (no fallocate, no
    /// WRITE_ZEROES): the same classification for both steps.
    unsupported: Vec<Option<String>>,
    /// Time kept back for the sweep (each point with its preparation).
    sweep_reserve: Duration,
    /// Time kept back from the main rounds: the sweep and a share for a
    /// close call.
    reserve: Duration,
}

impl CommitPlan {
    fn new(info: &FsInfo, growth: &GrowthSection, b: &Budget, notes: &mut Vec<String>) -> Self {
        let fill = Run::fill_rate(growth);
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
        let unsupported = Case::all()
            .iter()
            .map(|c| {
                let need = c.state.needs()?;
                growth
                    .results
                    .iter()
                    .find(|g| g.strategy == need)
                    .and_then(|g| g.unsupported.clone())
            })
            .collect();
        let mut plan = CommitPlan {
            fill,
            file_size,
            segment_size,
            unsupported,
            sweep_reserve: Duration::ZERO,
            reserve: Duration::ZERO,
        };
        if b.sweep {
            plan.sweep_reserve = (SWEEP_TIME * 3
                + plan.setup_of(SpaceState::Recycled)
                + plan.setup_of(SpaceState::Wal))
                * SWEEP_RECORDS.len() as u32;
        }
        plan.reserve = plan.sweep_reserve + b.total.mul_f64(CLOSE_CALL_SHARE);
        plan
    }

    /// The time preparing `st`'s space takes at the measured fill rate.
    fn setup_of(&self, st: SpaceState) -> Duration {
        let bytes = match st {
            SpaceState::ZeroFilled | SpaceState::Recycled => self.file_size,
            SpaceState::Wal => self.segment_size * (1 + crate::wal::DEFAULT_PREPARE_AHEAD as u64),
            _ => 0,
        };
        Duration::from_secs_f64(bytes as f64 / self.fill + 0.02)
    }

    /// Each sync method's summary of `runs` (`fdatasync`: the recycled
    /// state's), in [`SyncMethod::ALL`] order.
    fn summarize_methods(&self, runs: &[Vec<CommitResult>]) -> Vec<SyncMethodResult> {
        let cases = Case::all();
        SyncMethod::ALL
            .iter()
            .filter_map(|&m| {
                let i = cases.iter().position(|c| {
                    c.state == SpaceState::Recycled
                        && c.method.unwrap_or(SyncMethod::Fdatasync) == m
                })?;
                let mut figures = summarize(SpaceState::Recycled, &runs[i]);
                if let Some(u) = &self.unsupported[i] {
                    figures.unsupported = Some(u.clone());
                }
                Some(SyncMethodResult { method: m, figures })
            })
            .collect()
    }

    /// Every state's summary of `runs`, with its reason where it could not
    /// be made here.
    fn summarize_all(&self, runs: &[Vec<CommitResult>]) -> Vec<StateResult> {
        SpaceState::ALL
            .iter()
            .zip(runs)
            .zip(&self.unsupported)
            .map(|((&state, rs), unsupported)| {
                let mut r = summarize(state, rs);
                if let Some(u) = unsupported {
                    r.unsupported = Some(u.clone());
                }
                r
            })
            .collect()
    }
}
