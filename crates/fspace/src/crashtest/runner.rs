//! Running the checker: a state written out, the checker started in it
//! (in a process group of its own), waited for, killed on a timeout or a
//! cancel; and the parallel map the check runs on.

use super::effects::{Change, Effect};
use super::image::Image;
use super::model::Model;
use super::report::{CheckOptions, CheckerExit, Failure, FailureKind, TornWrite};
use super::states::State;
use super::trace::Trace;
use crate::error::{Error, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub(crate) struct Prepared<'a> {
    pub trace: &'a Trace,
    pub effects: Vec<Effect>,
    pub initial: Image,
}

impl Prepared<'_> {
    pub(crate) fn image(&self, s: &State) -> Image {
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

#[allow(clippy::too_many_arguments)]
pub(crate) fn failure(
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
            .filter(|&&e| p.effects[e].change != Change::CloseAfterTruncate)
            .map(|&e| p.trace.ops[p.effects[e].op].number)
            .collect();
        n.dedup();
        n
    };
    let torn = s.tear.as_ref().and_then(|t| {
        let e = &p.effects[t.effect];
        let Change::Write { offset, len } = e.change else {
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

pub(crate) fn run_one(
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
pub(crate) fn parallel_map<T: Send, F: Fn(usize) -> T + Sync>(
    n: usize,
    jobs: usize,
    f: F,
) -> Vec<T> {
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

pub(crate) fn interrupted(dir: &Path) -> Error {
    Error::refused(
        "crashtest check",
        dir,
        4,
        "interrupted: the states checked so far are discarded",
    )
}
