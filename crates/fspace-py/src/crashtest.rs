//! Crash testing from Python: the crash states of a recorded trace, each
//! checked by the caller's checker (`crashtest_check`), and the static
//! rules a trace breaks (`crashtest_lint`). Recording stays the CLI's
//! (`fspace crashtest record`): it runs the program under a preload the
//! `fspace` binary carries.

use crate::args;
use crate::errors::{os_error, Interrupt};
use crate::reports::{CrashCheckReport, LintReport};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

/// The checker: a program and its arguments (a list of `str`, `bytes` or
/// `os.PathLike`). A single string is refused rather than split: which
/// words it holds is the caller's to say.
fn checker(obj: &Bound<'_, PyAny>) -> PyResult<Vec<OsString>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "checker is a list of the program and its arguments, not a str \
             (e.g. [\"python3\", \"/abs/path/check.py\"])",
        ));
    }
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        out.push(args::path(&item?)?.into_os_string());
    }
    if out.is_empty() {
        return Err(PyValueError::new_err(
            "checker is empty: give the program to run in each crash state",
        ));
    }
    Ok(out)
}

/// crashtest_check(trace, checker, *, models=None, states_per_point=64,
///                 between=1, jobs=None, timeout=60.0, keep=False,
///                 work_dir=None, max_failures=20, loss_status=3)
///     -> CrashCheckReport
///
/// Builds the crash states a power cut may leave during the run recorded
/// in `trace` (a directory made by `fspace crashtest record`) and runs
/// `checker` (a list: the program and its arguments) in each distinct one,
/// as `fspace crashtest check` does. The checker runs with the state as its
/// working directory (`FSPACE_CRASH_STATE`) and the acknowledgements the
/// program had made in `FSPACE_CRASH_ACKS`; it exits 0 to accept,
/// `loss_status` for "consistent, but acknowledged data is missing", and
/// anything else for "inconsistent". `models` names the persistence models
/// ("posix", "ext4", "xfs", "btrfs"; all four by default); `jobs` checkers
/// run at once (the number of CPUs by default); `keep` leaves the failing
/// states for a debugger. `report.passed` is True when no state failed;
/// each failure has its `story`.
///
/// Raises ValueError for an unknown model, a count below its minimum or a
/// timeout outside (0, 86400]; TypeError for a checker given as a str;
/// OSError with the errno and path when the check cannot run (the trace
/// cannot be read, the checker cannot start or rejects the state the
/// program left when nothing crashed, a state cannot be written). Ctrl-C
/// stops it (running checkers are killed, no new one starts, the states
/// are removed) and raises KeyboardInterrupt. `work_dir` gets a new
/// directory of the check's own; nothing else in it is touched.
#[pyfunction]
#[pyo3(signature = (trace, checker, *, models = None, states_per_point = 64, between = 1,
                    jobs = None, timeout = 60.0, keep = false, work_dir = None,
                    max_failures = 20, loss_status = Some(3)),
       text_signature = "(trace, checker, *, models=None, states_per_point=64, between=1, \
                         jobs=None, timeout=60.0, keep=False, work_dir=None, max_failures=20, \
                         loss_status=3)")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn crashtest_check(
    py: Python<'_>,
    trace: &Bound<'_, PyAny>,
    checker: &Bound<'_, PyAny>,
    models: Option<Vec<String>>,
    states_per_point: i64,
    between: i64,
    jobs: Option<i64>,
    timeout: f64,
    keep: bool,
    work_dir: Option<&Bound<'_, PyAny>>,
    max_failures: i64,
    loss_status: Option<i32>,
) -> PyResult<CrashCheckReport> {
    let path = args::path(trace)?;
    let program = self::checker(checker)?;
    let mut opts = fspace::crashtest::CheckOptions::default();
    if let Some(models) = models {
        if models.is_empty() {
            return Err(PyValueError::new_err(
                "models is empty: name at least one of posix, ext4, xfs, btrfs (None: all)",
            ));
        }
        opts.models = models
            .iter()
            .map(|m| args::named::<fspace::crashtest::Model>(m))
            .collect::<PyResult<_>>()?;
    }
    // As the CLI's: `between` may be 0 (no sampled points), the others
    // start at 1. Taken as i64 so that a negative one is a ValueError too.
    let states_per_point = count(states_per_point, "states_per_point", 1)?;
    let between = count(between, "between", 0)?;
    let jobs = jobs.map(|j| count(j, "jobs", 1)).transpose()?;
    let max_failures = count(max_failures, "max_failures", 1)?;
    if !(timeout > 0.0 && timeout <= 86_400.0) {
        return Err(PyValueError::new_err(format!(
            "timeout must be a number of seconds above 0 and at most 86400, not {timeout}"
        )));
    }
    opts.per_point = states_per_point;
    opts.between = between;
    if let Some(j) = jobs {
        opts.jobs = j;
    }
    opts.timeout = Duration::from_secs_f64(timeout);
    opts.keep = keep;
    opts.work_dir = work_dir.map(args::path).transpose()?;
    opts.max_failures = max_failures;
    opts.loss_status = loss_status;
    let stop = Interrupt::new();
    opts.cancel = Some(Arc::clone(&stop.cancel));
    let r = py.detach(|| -> fspace::Result<CrashCheckReport> {
        let t = fspace::crashtest::Trace::load(&path)?;
        // The library reports progress from its worker threads, where
        // Python runs no signal handler: the check runs in a thread of its
        // own while this (the caller's) thread looks for Ctrl-C, which sets
        // the cancel flag the check reads.
        let report = std::thread::scope(|s| {
            let worker = s.spawn(|| fspace::crashtest::check(&t, &program, &opts, &|_, _| {}));
            while !worker.is_finished() {
                stop.poll();
                std::thread::sleep(Duration::from_millis(20));
            }
            // A panic in the check goes on as one (PyO3 raises it as
            // PanicException); it never crosses into Python unwinding.
            worker
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })?;
        Ok(CrashCheckReport::from(&path, &t, &report))
    });
    stop.result(r)
}

/// `v` as a count of at least `min`, or a ValueError naming `what`.
fn count(v: i64, what: &str, min: usize) -> PyResult<usize> {
    usize::try_from(v)
        .ok()
        .filter(|&n| n >= min)
        .ok_or_else(|| PyValueError::new_err(format!("{what} must be at least {min}, not {v}")))
}

/// crashtest_lint(trace) -> LintReport
///
/// Checks the run recorded in `trace` against static rules, without
/// building a crash state (as `fspace crashtest lint`): a name not made
/// durable by an fsync of its directory, a rename over a file whose data
/// was not synced, an acknowledgement before its fsync, an fsync retried
/// after it failed, O_DIRECT writes with no fsync, glibc's emulated
/// posix_fallocate, sync_file_range alone. Each finding names the
/// operations and the rule's source; `crashtest_check` is the verdict.
///
/// Raises OSError with the errno and path when the trace cannot be read.
#[pyfunction]
pub(crate) fn crashtest_lint(py: Python<'_>, trace: &Bound<'_, PyAny>) -> PyResult<LintReport> {
    let path = args::path(trace)?;
    py.detach(|| -> fspace::Result<LintReport> {
        let t = fspace::crashtest::Trace::load(&path)?;
        let findings = fspace::crashtest::lint(&t);
        Ok(LintReport::from(&path, &t, &findings))
    })
    .map_err(os_error)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(crashtest_check, m)?)?;
    m.add_function(wrap_pyfunction!(crashtest_lint, m)?)?;
    Ok(())
}
