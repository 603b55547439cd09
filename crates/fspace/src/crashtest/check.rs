//! Runs a checker on every distinct crash state and reports the failures,
//! the smallest story first.

use super::effects::{effects, Effect};
use super::image::Image;
use super::model::Model;
use super::states::{durability, points, states_at, Bounds, CrashPoint, State};
use super::trace::Trace;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How `check` explores and runs.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The models to build states under (all four by default).
    pub models: Vec<Model>,
    /// At most this many states per crash point and model (64).
    pub per_point: usize,
    /// Crash points sampled between two durability points or
    /// acknowledgements (1).
    pub between: usize,
    /// Checkers run at once (the number of CPUs).
    pub jobs: usize,
    /// A checker still running after this long has failed (60 s).
    pub timeout: Duration,
    /// Leave the failing states' directories for a debugger.
    pub keep: bool,
    /// Where the states are written (a new directory in the system's
    /// temporary directory by default).
    pub work_dir: Option<PathBuf>,
    /// At most this many distinct failures are described (20).
    pub max_failures: usize,
    /// The checker's exit status for "consistent, but acknowledged data
    /// is missing": a durability loss rather than corruption (3).
    pub loss_status: Option<i32>,
    /// Set (by a signal handler) to stop: no further checker starts, the
    /// states are removed, and `check` fails with an EINTR error.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            models: Model::ALL.to_vec(),
            per_point: 64,
            between: 1,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: Duration::from_secs(60),
            keep: false,
            work_dir: None,
            max_failures: 20,
            loss_status: Some(3),
            cancel: None,
        }
    }
}

/// How a checker ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "ended", rename_all = "kebab-case")]
pub enum CheckerExit {
    /// It exited with this status.
    Code {
        /// The status.
        code: i32,
    },
    /// A signal ended it.
    Signal {
        /// The signal's number.
        signal: i32,
    },
    /// It ran past the timeout and was killed.
    TimedOut,
}

impl CheckerExit {
    fn passed(self) -> bool {
        self == CheckerExit::Code { code: 0 }
    }
}

/// What kind of failure a rejected state is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The checker found the state inconsistent (any exit status but 0
    /// and the loss status): corruption.
    Inconsistent,
    /// The checker was killed by a signal.
    #[serde(rename = "checker-crashed")]
    Crashed,
    /// The checker ran past the timeout.
    TimedOut,
    /// The checker exited with the loss status: the state is consistent
    /// but acknowledged data is missing (a durability loss).
    #[serde(rename = "lost-acknowledged")]
    Lost,
}

impl FailureKind {
    /// Its name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Inconsistent => "inconsistent",
            FailureKind::Crashed => "checker-crashed",
            FailureKind::TimedOut => "timed-out",
            FailureKind::Lost => "lost-acknowledged",
        }
    }
}

/// A write that persisted only in part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TornWrite {
    /// The write's operation number.
    pub op: usize,
    /// The bytes of the file that got the new data.
    pub persisted: std::ops::Range<u64>,
    /// The write's whole range.
    pub range: std::ops::Range<u64>,
    /// The file's size grew to the write's end without its data (zeros).
    pub size_without_data: bool,
}

/// A crash state the checker rejected, as a story: the point, what
/// persisted of what was pending there, and what the checker said.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    /// Corruption or a durability loss (or a checker that crashed or hung).
    pub kind: FailureKind,
    /// The model it was built under (the first of them, when several
    /// models allow the same state).
    pub model: Model,
    /// Every model that allows it.
    pub models: Vec<Model>,
    /// Where the power failed.
    pub point: CrashPoint,
    /// Operations not yet durable there that persisted.
    pub persisted: Vec<usize>,
    /// Operations not yet durable there that did not persist.
    pub lost: Vec<usize>,
    /// A write that persisted in part.
    pub torn: Option<TornWrite>,
    /// How the checker ended.
    pub exit: CheckerExit,
    /// What it printed (stdout then stderr, at most 4 KiB).
    pub output: String,
    /// States (over all models and points) with the same contents and
    /// acknowledgements.
    pub same_states: usize,
    /// The state's directory, when kept.
    pub state_dir: Option<PathBuf>,
}

/// What `check` found.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The models explored.
    pub models: Vec<Model>,
    /// Operations in the trace.
    pub ops: usize,
    /// Crash points.
    pub points: usize,
    /// Crash states built (over all models and points).
    pub states: usize,
    /// Distinct states (contents and acknowledgements): the checker runs.
    pub distinct: usize,
    /// States the checker rejected.
    pub failed_states: usize,
    /// Of those, states it called inconsistent (or crashed or hung on).
    pub inconsistent_states: usize,
    /// Of those, states that lost acknowledged data but were consistent.
    pub lost_states: usize,
    /// Distinct states the checker rejected.
    pub failed_distinct: usize,
    /// The first `max_failures` of them, the smallest story first.
    pub failures: Vec<Failure>,
    /// Wall time of the whole check, seconds.
    pub seconds: f64,
    /// Mean wall time per checker run (building the state included),
    /// milliseconds.
    pub ms_per_state: f64,
    /// What the recorder could not see: operation numbers of its limits.
    pub limits: Vec<usize>,
    /// Where the states were written, when kept.
    pub work_dir: Option<PathBuf>,
}

impl CheckReport {
    /// No state failed.
    pub fn passed(&self) -> bool {
        self.failed_states == 0
    }
}

struct Prepared<'a> {
    trace: &'a Trace,
    effects: Vec<Effect>,
    initial: Image,
}

impl Prepared<'_> {
    fn image(&self, s: &State) -> Image {
        let mut img = self.initial.clone();
        let mut keep = vec![false; self.effects.len()];
        for &e in s.durable.iter().chain(s.kept.iter()) {
            keep[e] = true;
        }
        for (i, e) in self.effects.iter().enumerate() {
            if keep[i] {
                let tear = s.tear.as_ref().filter(|t| t.effect == i);
                img.apply(self.trace, e, tear);
            }
        }
        img
    }
}

/// Builds the crash states of `trace` and runs `checker` (a program and
/// its arguments) on each distinct one, `progress(done, total)` after
/// each run. An error means the check could not run (the trace could not
/// be read, a state could not be written, the checker could not start).
pub fn check(
    trace: &Trace,
    checker: &[OsString],
    opts: &CheckOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<CheckReport> {
    let started = Instant::now();
    let Some(program) = checker.first() else {
        return Err(Error::refused(
            "crashtest check",
            &trace.dir,
            22,
            "no checker program given",
        ));
    };
    let fx = effects(trace);
    let op_ino = fx.op_ino;
    let prepared = Prepared {
        trace,
        effects: fx.list,
        initial: Image::initial(trace)?,
    };
    let pts = points(trace, opts.between);
    let bounds = Bounds {
        per_point: opts.per_point.max(2),
    };
    let mut states: Vec<State> = Vec::new();
    for &model in &opts.models {
        let durable_at = durability(trace, &prepared.effects, &op_ino, model);
        for &p in &pts {
            states.extend(states_at(&prepared.effects, &durable_at, model, p, bounds));
        }
    }
    // Distinct states: same contents and same acknowledgements.
    let acks_len: Vec<usize> = (0..=trace.ops.len())
        .map(|n| trace.stdout_before(n).len())
        .collect();
    let keys: Vec<(u64, usize)> = parallel_map(states.len(), opts.jobs, |i| {
        (
            prepared.image(&states[i]).fingerprint(),
            acks_len[states[i].point.after],
        )
    });
    let mut groups: HashMap<(u64, usize), Vec<usize>> = HashMap::new();
    let mut order: Vec<(u64, usize)> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let g = groups.entry(*k).or_default();
        if g.is_empty() {
            order.push(*k);
        }
        g.push(i);
    }
    // The representative of a group: its smallest story.
    let size = |s: &State| s.lost.len() + usize::from(s.tear.is_some());
    let reps: Vec<usize> = order
        .iter()
        .map(|k| {
            *groups[k]
                .iter()
                .min_by_key(|&&i| (size(&states[i]), states[i].point.after))
                .unwrap_or(&groups[k][0])
        })
        .collect();
    let work = match &opts.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::from_io("crashtest check", d, None, e))?;
            d.clone()
        }
        None => {
            let d = std::env::temp_dir().join(format!(
                "fspace-crashtest-{}-{}",
                std::process::id(),
                started.elapsed().as_nanos()
                    ^ (std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos()))
            ));
            std::fs::create_dir(&d).map_err(|e| Error::from_io("crashtest check", &d, None, e))?;
            d
        }
    };
    // A relative program path names a file where `check` runs, not in
    // each state (the checker's working directory).
    let program_path = Path::new(program);
    let program = &if program_path.is_relative() && program_path.components().count() > 1 {
        std::path::absolute(program_path).map_or_else(|_| program.clone(), PathBuf::into_os_string)
    } else {
        program.clone()
    };
    // First, the state the program left when nothing crashed (every
    // operation persisted): a checker that rejects it is wrong, or the
    // recorder missed writes (its LIMITs), and no verdict can be trusted.
    let complete = (0..reps.len()).find(|&j| {
        groups[&order[j]].iter().any(|&i| {
            let s = &states[i];
            s.point.after == trace.ops.len()
                && s.point.kind != super::states::PointKind::DuringSyncWrite
                && s.lost.is_empty()
                && s.tear.is_none()
        })
    });
    let mut pre = None;
    if let Some(j0) = complete {
        let r = run_one(
            &prepared,
            &states[reps[j0]],
            j0,
            &work,
            checker,
            program,
            opts,
        );
        let _ = std::fs::remove_dir_all(work.join(format!("state-{j0}")));
        let (exit, output) = match r {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&work);
                return Err(e);
            }
        };
        if !exit.passed() {
            let _ = std::fs::remove_dir_all(&work);
            let limits = trace.limits();
            let why = if limits.is_empty() {
                String::new()
            } else {
                let mut kinds: Vec<&str> = limits
                    .iter()
                    .filter_map(|o| match &o.kind {
                        super::trace::OpKind::Limit { what, .. } => Some(what.as_str()),
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
            return Err(Error::refused(
                "crashtest check",
                &trace.dir,
                22,
                format!(
                    "the checker rejects the state the program left when nothing crashed (every operation persisted): {}{}{why}; it runs inside each state, so give it absolute paths",
                    match exit {
                        CheckerExit::Code { code } => format!("exit status {code}"),
                        CheckerExit::Signal { signal } => format!("killed by signal {signal}"),
                        CheckerExit::TimedOut => "timed out".to_string(),
                    },
                    if said.is_empty() { String::new() } else { format!(", saying: {said}") },
                ),
            ));
        }
        pre = complete.map(|j| (j, (exit, output)));
    }
    let done = AtomicUsize::new(0);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let total = reps.len();
    let results: Vec<Option<(CheckerExit, String)>> = parallel_map(total, opts.jobs, |j| {
        if first_error.lock().map(|e| e.is_some()).unwrap_or(true) {
            return None;
        }
        if opts
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            if let Ok(mut f) = first_error.lock() {
                f.get_or_insert(interrupted(&trace.dir));
            }
            return None;
        }
        if let Some((j0, r)) = &pre {
            if *j0 == j {
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                return Some(r.clone());
            }
        }
        let s = &states[reps[j]];
        let r = run_one(&prepared, s, j, &work, checker, program, opts);
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(n, total);
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
    if let Some(e) = first_error.into_inner().ok().flatten() {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    let mut failures = Vec::new();
    let mut failed_states = 0;
    let mut lost_states = 0;
    for (j, r) in results.iter().enumerate() {
        let Some((exit, output)) = r else { continue };
        let dir = work.join(format!("state-{j}"));
        if exit.passed() {
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        let group = &groups[&order[j]];
        failed_states += group.len();
        let kind = match *exit {
            CheckerExit::Code { code } if Some(code) == opts.loss_status => FailureKind::Lost,
            CheckerExit::Code { .. } => FailureKind::Inconsistent,
            CheckerExit::Signal { .. } => FailureKind::Crashed,
            CheckerExit::TimedOut => FailureKind::TimedOut,
        };
        if kind == FailureKind::Lost {
            lost_states += group.len();
        }
        let s = &states[reps[j]];
        let mut models: Vec<Model> = group.iter().map(|&i| states[i].model).collect();
        models.sort();
        models.dedup();
        failures.push(failure(
            &prepared,
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
    failures.sort_by_key(|f| {
        (
            f.kind,
            f.lost.len() + usize::from(f.torn.is_some()),
            f.point.after,
        )
    });
    for (k, f) in failures.iter_mut().enumerate() {
        let Some(dir) = f.state_dir.take() else {
            continue;
        };
        if opts.keep && k < opts.max_failures {
            f.state_dir = Some(dir);
        } else {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    // Keep the smallest of each kind, then the rest in order.
    if failures.len() > opts.max_failures {
        let mut kept: Vec<Failure> = Vec::new();
        let mut rest: Vec<Failure> = Vec::new();
        for f in failures {
            if kept.iter().all(|k| k.kind != f.kind) {
                kept.push(f);
            } else {
                rest.push(f);
            }
        }
        rest.truncate(opts.max_failures.saturating_sub(kept.len()));
        kept.extend(rest);
        kept.sort_by_key(|f| {
            (
                f.kind,
                f.lost.len() + usize::from(f.torn.is_some()),
                f.point.after,
            )
        });
        failures = kept;
    }
    let kept_any = failures.iter().any(|f| f.state_dir.is_some());
    if !kept_any && opts.work_dir.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(CheckReport {
        models: opts.models.clone(),
        ops: trace.ops.len(),
        points: pts.len(),
        states: states.len(),
        distinct: total,
        failed_states,
        inconsistent_states: failed_states - lost_states,
        lost_states,
        failed_distinct,
        failures,
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

#[allow(clippy::too_many_arguments)]
fn failure(
    p: &Prepared,
    s: &State,
    models: Vec<Model>,
    kind: FailureKind,
    exit: CheckerExit,
    output: String,
    same: usize,
    dir: PathBuf,
) -> Failure {
    let numbers = |v: &[usize]| {
        // ext4's close-after-truncate marker changes nothing itself.
        let mut n: Vec<usize> = v
            .iter()
            .filter(|&&e| p.effects[e].change != super::effects::Change::CloseAfterTruncate)
            .map(|&e| p.trace.ops[p.effects[e].op].number)
            .collect();
        n.dedup();
        n
    };
    let torn = s.tear.as_ref().and_then(|t| {
        let e = &p.effects[t.effect];
        let super::effects::Change::Write { offset, len } = e.change else {
            return None;
        };
        Some(TornWrite {
            op: p.trace.ops[e.op].number,
            persisted: offset + t.keep.start..offset + t.keep.end,
            range: offset..offset + len,
            size_without_data: t.size_anyway,
        })
    });
    let kept: Vec<usize> = s
        .kept
        .iter()
        .copied()
        .filter(|&e| s.tear.as_ref().is_none_or(|t| t.effect != e))
        .collect();
    Failure {
        kind,
        model: s.model,
        models,
        point: s.point,
        persisted: numbers(&kept),
        lost: numbers(&s.lost),
        torn,
        exit,
        output,
        same_states: same,
        state_dir: Some(dir),
    }
}

fn run_one(
    p: &Prepared,
    s: &State,
    j: usize,
    work: &Path,
    checker: &[OsString],
    program: &OsString,
    opts: &CheckOptions,
) -> Result<(CheckerExit, String)> {
    use std::os::unix::process::CommandExt;
    let dir = work.join(format!("state-{j}"));
    let acks = work.join(format!("acks-{j}"));
    std::fs::create_dir(&dir).map_err(|e| Error::from_io("crashtest check", &dir, None, e))?;
    p.image(s).write_to(&dir)?;
    std::fs::write(&acks, p.trace.stdout_before(s.point.after))
        .map_err(|e| Error::from_io("crashtest check", &acks, None, e))?;
    let out_path = work.join(format!("output-{j}"));
    let out = std::fs::File::create(&out_path)
        .map_err(|e| Error::from_io("crashtest check", &out_path, None, e))?;
    let err = out
        .try_clone()
        .map_err(|e| Error::from_io("crashtest check", &out_path, None, e))?;
    let mut child = Command::new(program)
        .args(&checker[1..])
        .current_dir(&dir)
        .env("FSPACE_CRASH_STATE", &dir)
        .env("FSPACE_CRASH_ACKS", &acks)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // A group of its own: a timeout or a cancel kills what it started
        // too, and the terminal's Ctrl-C reaches fspace, which stops it.
        .process_group(0)
        .spawn()
        .map_err(|e| {
            Error::from_io(
                "crashtest check: start the checker",
                Path::new(program),
                None,
                e,
            )
        })?;
    let group = rustix::process::Pid::from_child(&child);
    let kill_group = || {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    };
    let started = Instant::now();
    let exit = loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                use std::os::unix::process::ExitStatusExt;
                break match (st.code(), st.signal()) {
                    (Some(code), _) => CheckerExit::Code { code },
                    (None, Some(signal)) => CheckerExit::Signal { signal },
                    _ => CheckerExit::Code { code: -1 },
                };
            }
            Ok(None)
                if opts
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(Ordering::Relaxed)) =>
            {
                kill_group();
                let _ = child.wait();
                return Err(interrupted(&p.trace.dir));
            }
            Ok(None) if started.elapsed() > opts.timeout => {
                kill_group();
                let _ = child.wait();
                break CheckerExit::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                kill_group();
                return Err(Error::from_io(
                    "crashtest check: wait for the checker",
                    Path::new(program),
                    None,
                    e,
                ));
            }
        }
    };
    // What it left running (a background job) goes with it.
    kill_group();
    let mut output = std::fs::read(&out_path).unwrap_or_default();
    output.truncate(4096);
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&acks);
    Ok((exit, String::from_utf8_lossy(&output).into_owned()))
}

/// `f(0..n)` on `jobs` threads, results in order.
fn parallel_map<T: Send, F: Fn(usize) -> T + Sync>(n: usize, jobs: usize, f: F) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..jobs.max(1).min(n.max(1)) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let v = f(i);
                if let Ok(mut s) = slots[i].lock() {
                    *s = Some(v);
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

impl Failure {
    /// The failure as a story for people: one line per fact.
    pub fn story(&self, trace: &Trace) -> Vec<String> {
        let ops = super::effects::describe_ops(trace);
        let describe = |n: usize| -> String {
            ops.get(n.wrapping_sub(1))
                .cloned()
                .unwrap_or_else(|| format!("#{n}"))
        };
        let mut lines = Vec::new();
        let at = match (self.point.after, self.point.kind) {
            (0, _) => "before the first operation".to_string(),
            (n, super::states::PointKind::DuringSyncWrite) => format!("during {}", describe(n)),
            (n, _) => format!("after {}", describe(n)),
        };
        lines.push(format!(
            "power cut {at} ({}), under {}",
            match self.point.kind {
                super::states::PointKind::BeforeSync => "just before a durability call",
                super::states::PointKind::AfterAck => "just after an acknowledgement",
                super::states::PointKind::DuringSyncWrite =>
                    "while this synchronous write was in flight",
                super::states::PointKind::Between => "between durability points",
                super::states::PointKind::End => "at the end of the run",
            },
            self.models
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if self.persisted.len() <= 3 {
            for &n in &self.persisted {
                lines.push(format!("  persisted:     {}", describe(n)));
            }
        } else {
            lines.push(format!(
                "  persisted:     {} pending operations ({})",
                self.persisted.len(),
                ranges(&self.persisted)
            ));
        }
        for &n in &self.lost {
            lines.push(format!("  NOT persisted: {}", describe(n)));
        }
        if let Some(t) = &self.torn {
            if t.size_without_data {
                lines.push(format!(
                    "  TORN:          {}: the file's size grew to {}, none of the data reached the disk (zeros)",
                    describe(t.op),
                    t.range.end
                ));
            } else {
                lines.push(format!(
                    "  TORN:          {}: only bytes {}..{} of {}..{} reached the disk",
                    describe(t.op),
                    t.persisted.start,
                    t.persisted.end,
                    t.range.start,
                    t.range.end
                ));
            }
        }
        let exit = match self.exit {
            CheckerExit::Code { code } => format!("exit status {code}"),
            CheckerExit::Signal { signal } => format!("killed by signal {signal}"),
            CheckerExit::TimedOut => "timed out".to_string(),
        };
        lines.push(format!(
            "  checker: {exit}: {}",
            match self.kind {
                FailureKind::Lost =>
                    "consistent, but acknowledged data is missing (a durability loss)",
                FailureKind::Inconsistent => "the state is inconsistent (corruption)",
                FailureKind::Crashed => "the checker crashed on the state",
                FailureKind::TimedOut => "the checker hung on the state",
            }
        ));
        for l in self.output.lines().take(12) {
            lines.push(format!("    | {l}"));
        }
        lines
    }
}

/// `#4-#12, #19`: operation numbers as ranges.
fn ranges(ns: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ns.len() {
        let mut j = i;
        while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("#{}-#{}", ns[i], ns[j])
        } else {
            format!("#{}", ns[i])
        });
        i = j + 1;
    }
    out.join(", ")
}

fn interrupted(dir: &Path) -> Error {
    Error::refused(
        "crashtest check",
        dir,
        4,
        "interrupted: the states checked so far are discarded",
    )
}
