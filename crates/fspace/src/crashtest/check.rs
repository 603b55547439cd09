//! Runs a checker on every distinct crash state and reports the failures,
//! the smallest story of each kind first.

use super::effects::effects;
use super::image::Image;
use super::model::Model;
use super::report::{CheckOptions, CheckReport, CheckerExit, Failure, FailureKind};
use super::runner::{failure, interrupted, parallel_map, run_one, Prepared};
use super::states::{durability, points, states_at, Bounds, PointKind, State};
use super::trace::{OpKind, Trace};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A checker's verdict on one distinct state.
type Verdict = (CheckerExit, String);

/// Builds the crash states of `trace` and runs `checker` (a program and
/// its arguments) on each distinct one, `progress(done, total)` after
/// each run. An error means the check could not run (the trace could not
/// be read, a state could not be written, the checker could not start,
/// or rejects the state the program left when nothing crashed).
pub fn check(
    trace: &Trace,
    checker: &[OsString],
    opts: &CheckOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<CheckReport> {
    let started = Instant::now();
    let program = program_of(trace, checker)?;
    let fx = effects(trace);
    let prepared = Prepared {
        trace,
        effects: fx.list,
        initial: Image::initial(trace)?,
    };
    let pts = points(trace, opts.between);
    // In the models' own order (the worst case first), each once, however
    // the caller listed them.
    let mut models = opts.models.clone();
    models.sort();
    models.dedup();
    let mut states: Vec<State> = Vec::new();
    for &model in &models {
        let durable_at = durability(trace, &prepared.effects, &fx.op_ino, model);
        let bounds = Bounds {
            per_point: opts.per_point.max(2),
        };
        for &p in &pts {
            states.extend(states_at(&prepared.effects, &durable_at, model, p, bounds));
        }
    }
    let distinct = Distinct::of(&prepared, &states, opts.jobs);
    let work = work_dir(opts)?;
    let run = Run {
        prepared: &prepared,
        states: &states,
        distinct: &distinct,
        work: &work,
        checker,
        program: &program,
        opts,
    };
    let outcome = run.precheck().and_then(|pre| run.all(pre, progress));
    let results = match outcome {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&work);
            return Err(e);
        }
    };
    let found = run.failures(&results);
    let kept_any = found.failures.iter().any(|f| f.state_dir.is_some());
    if !kept_any {
        let _ = std::fs::remove_dir_all(&work);
    }
    let seconds = started.elapsed().as_secs_f64();
    let total = distinct.reps.len();
    Ok(CheckReport {
        models,
        ops: trace.ops.len(),
        points: pts.len(),
        states: states.len(),
        distinct: total,
        failed_states: found.failed_states,
        inconsistent_states: found.failed_states - found.lost_states,
        lost_states: found.lost_states,
        failed_distinct: found.failed_distinct,
        failures: found.failures,
        seconds,
        ms_per_state: if total > 0 {
            seconds * 1000.0 * opts.jobs.max(1) as f64 / total as f64
        } else {
            0.0
        },
        limits: trace.limits().iter().map(|o| o.number).collect(),
        work_dir: kept_any.then_some(work),
    })
}

/// The checker's program: a relative path names a file where `check`
/// runs, not in each state (the checker's working directory).
fn program_of(trace: &Trace, checker: &[OsString]) -> Result<OsString> {
    let Some(program) = checker.first() else {
        return Err(Error::refused(
            "crashtest check",
            &trace.dir,
            22,
            "no checker program given",
        ));
    };
    let p = Path::new(program);
    Ok(if p.is_relative() && p.components().count() > 1 {
        std::path::absolute(p).map_or_else(|_| program.clone(), PathBuf::into_os_string)
    } else {
        program.clone()
    })
}

/// Where the states are written: a new directory of this check's own,
/// inside `--work-dir` (made when missing) or the system's temporary
/// directory. Only that new directory is ever removed: a work directory
/// the caller named may hold other files (their home directory, a
/// project), and a failed or cancelled check must not touch them.
fn work_dir(opts: &CheckOptions) -> Result<PathBuf> {
    let parent = match &opts.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::from_io("crashtest check", d, None, e))?;
            d.clone()
        }
        None => std::env::temp_dir(),
    };
    let d = parent.join(crate::stale::unique_name("fspace-crashtest", "-"));
    std::fs::create_dir(&d).map_err(|e| Error::from_io("crashtest check", &d, None, e))?;
    Ok(d)
}

/// States grouped by what a checker sees: the same contents and the same
/// acknowledgements. `reps[j]` is group `j`'s smallest story.
struct Distinct {
    groups: Vec<Vec<usize>>,
    reps: Vec<usize>,
}

impl Distinct {
    fn of(p: &Prepared, states: &[State], jobs: usize) -> Distinct {
        let acks_len: Vec<usize> = (0..=p.trace.ops.len())
            .map(|n| p.trace.stdout_before(n).len())
            .collect();
        let keys: Vec<(u64, usize)> = parallel_map(states.len(), jobs, |i| {
            (
                p.image(&states[i]).fingerprint(),
                acks_len[states[i].point.after],
            )
        });
        let mut index: HashMap<(u64, usize), usize> = HashMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let g = *index.entry(*k).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        let size = |s: &State| s.lost.len() + usize::from(s.tear.is_some());
        let reps = groups
            .iter()
            .map(|g| {
                g.iter()
                    .copied()
                    .min_by_key(|&i| (size(&states[i]), states[i].point.after))
                    .unwrap_or(g[0])
            })
            .collect();
        Distinct { groups, reps }
    }
}

/// One check's run over its distinct states.
struct Run<'a> {
    prepared: &'a Prepared<'a>,
    states: &'a [State],
    distinct: &'a Distinct,
    work: &'a Path,
    checker: &'a [OsString],
    program: &'a OsString,
    opts: &'a CheckOptions,
}

/// What the failing states add up to.
struct Found {
    failures: Vec<Failure>,
    failed_states: usize,
    lost_states: usize,
    failed_distinct: usize,
}

impl Run<'_> {
    /// The checker on the state the program left when nothing crashed
    /// (every operation persisted): a checker that rejects it is wrong, or
    /// the recorder missed writes (its LIMITs), and no verdict could be
    /// trusted. Returns that group's verdict.
    fn precheck(&self) -> Result<Option<(usize, Verdict)>> {
        let trace = self.prepared.trace;
        let complete = (0..self.distinct.reps.len()).find(|&j| {
            self.distinct.groups[j].iter().any(|&i| {
                let s = &self.states[i];
                s.point.after == trace.ops.len()
                    && s.point.kind != PointKind::DuringSyncWrite
                    && s.lost.is_empty()
                    && s.tear.is_none()
            })
        });
        let Some(j0) = complete else { return Ok(None) };
        let s = &self.states[self.distinct.reps[j0]];
        let (exit, output) = run_one(
            self.prepared,
            s,
            j0,
            self.work,
            self.checker,
            self.program,
            self.opts,
        )?;
        let _ = std::fs::remove_dir_all(self.work.join(format!("state-{j0}")));
        if exit.passed() {
            return Ok(Some((j0, (exit, output))));
        }
        let limits = trace.limits();
        let why = if limits.is_empty() {
            String::new()
        } else {
            let mut kinds: Vec<&str> = limits
                .iter()
                .filter_map(|o| match &o.kind {
                    OpKind::Limit { what, .. } => Some(what.as_str()),
                    _ => None,
                })
                .collect();
            kinds.sort_unstable();
            kinds.dedup();
            format!(
                "; the trace has {} LIMITs ({}): writes the recorder could not see are missing from every state, which may be why",
                limits.len(),
                kinds.join(", ")
            )
        };
        let said = output.lines().take(3).collect::<Vec<_>>().join(" / ");
        let ended = match exit {
            CheckerExit::Code { code } => format!("exit status {code}"),
            CheckerExit::Signal { signal } => format!("killed by signal {signal}"),
            CheckerExit::TimedOut => "timed out".to_string(),
        };
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(", saying: {said}")
        };
        Err(Error::refused(
            "crashtest check",
            &trace.dir,
            22,
            format!(
                "the checker rejects the state the program left when nothing crashed (every operation persisted): {ended}{said}{why}; it runs inside each state, so give it absolute paths"
            ),
        ))
    }

    /// The checker on every distinct state, `jobs` at a time.
    fn all(
        &self,
        pre: Option<(usize, Verdict)>,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Vec<Option<Verdict>>> {
        let done = AtomicUsize::new(0);
        let first_error: Mutex<Option<Error>> = Mutex::new(None);
        let total = self.distinct.reps.len();
        let trace = self.prepared.trace;
        let results = parallel_map(total, self.opts.jobs, |j| {
            if first_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                return None;
            }
            if self
                .opts
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
            {
                if let Ok(mut f) = first_error.lock() {
                    f.get_or_insert(interrupted(&trace.dir));
                }
                return None;
            }
            let r = match &pre {
                Some((j0, v)) if *j0 == j => Ok(v.clone()),
                _ => {
                    let s = &self.states[self.distinct.reps[j]];
                    run_one(
                        self.prepared,
                        s,
                        j,
                        self.work,
                        self.checker,
                        self.program,
                        self.opts,
                    )
                }
            };
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            match r {
                Ok(x) => Some(x),
                Err(e) => {
                    if let Ok(mut f) = first_error.lock() {
                        f.get_or_insert(e);
                    }
                    None
                }
            }
        });
        match first_error.into_inner().ok().flatten() {
            Some(e) => Err(e),
            None => Ok(results),
        }
    }

    /// The failures, the smallest story of each kind first; the passing
    /// states' directories removed, the failing ones' kept with `--keep`.
    fn failures(&self, results: &[Option<Verdict>]) -> Found {
        let mut failures = Vec::new();
        let (mut failed_states, mut lost_states) = (0, 0);
        for (j, r) in results.iter().enumerate() {
            let Some((exit, output)) = r else { continue };
            let dir = self.work.join(format!("state-{j}"));
            if exit.passed() {
                let _ = std::fs::remove_dir_all(&dir);
                continue;
            }
            let group = &self.distinct.groups[j];
            failed_states += group.len();
            let kind = match *exit {
                CheckerExit::Code { code } if Some(code) == self.opts.loss_status => {
                    FailureKind::Lost
                }
                CheckerExit::Code { .. } => FailureKind::Inconsistent,
                CheckerExit::Signal { .. } => FailureKind::Crashed,
                CheckerExit::TimedOut => FailureKind::TimedOut,
            };
            if kind == FailureKind::Lost {
                lost_states += group.len();
            }
            let s = &self.states[self.distinct.reps[j]];
            let mut models: Vec<Model> = group.iter().map(|&i| self.states[i].model).collect();
            models.sort();
            models.dedup();
            failures.push(failure(
                self.prepared,
                s,
                models,
                kind,
                *exit,
                output.clone(),
                group.len(),
                dir,
            ));
        }
        let failed_distinct = failures.len();
        Found {
            failures: self.trim(failures),
            failed_states,
            lost_states,
            failed_distinct,
        }
    }

    /// At most `max_failures`, the smallest of each kind kept first; the
    /// directories of the rest (and of all, without `--keep`) removed.
    fn trim(&self, mut failures: Vec<Failure>) -> Vec<Failure> {
        let order = |f: &Failure| {
            (
                f.kind,
                f.lost.len() + usize::from(f.torn.is_some()),
                f.point.after,
            )
        };
        failures.sort_by_key(order);
        let mut kept: Vec<Failure> = Vec::new();
        let mut rest: Vec<Failure> = Vec::new();
        for f in failures {
            if kept.iter().all(|k| k.kind != f.kind) {
                kept.push(f);
            } else {
                rest.push(f);
            }
        }
        kept.extend(rest);
        for (k, f) in kept.iter_mut().enumerate() {
            let Some(dir) = f.state_dir.take() else {
                continue;
            };
            if self.opts.keep && k < self.opts.max_failures {
                f.state_dir = Some(dir);
            } else {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        kept.truncate(self.opts.max_failures);
        kept.sort_by_key(order);
        kept
    }
}
