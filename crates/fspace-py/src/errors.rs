//! The library's errors as Python exceptions, and Ctrl-C during a long call.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// EIO: the errno given when an error carries none (it always does today:
/// `fspace::Error::raw_os_error` is `None` only for an `io::Error` made
/// without one).
const EIO: i32 = 5;

/// Turns an fspace error into `OSError(errno, message, filename)`.
///
/// Python's `OSError` constructor picks the subclass from the errno
/// (`FileNotFoundError` for ENOENT, `PermissionError` for EACCES/EPERM,
/// `IsADirectoryError`, ...), so callers can catch those; `errno` keeps the
/// library's errno, `strerror` its whole message (the operation, the path,
/// the range: `open(/x/y): No such file or directory (os error 2)`), and
/// `filename` the path the failed operation was about.
pub(crate) fn os_error(e: fspace::Error) -> PyErr {
    let errno = e.raw_os_error().unwrap_or(EIO);
    let filename = e.path().as_os_str().to_owned();
    PyOSError::new_err((errno, e.to_string(), filename))
}

/// How often a long call looks for a pending Ctrl-C (a signal Python has
/// caught but not yet acted on): at most every 100 ms, because each look
/// takes the GIL back from the other threads for a moment.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// Lets a long call (grow, copy, dig, probe) be stopped by Ctrl-C although
/// it runs without the GIL: its progress callback calls [`Interrupt::poll`],
/// which runs Python's signal handlers (on the main thread; elsewhere that
/// is a no-op) and, when one raises (`KeyboardInterrupt`), keeps the
/// exception and sets the library's cancel flag. The library then stops
/// cleanly (rolling back as it documents) and fails with ECANCELED, and
/// [`Interrupt::result`] raises the kept exception instead.
pub(crate) struct Interrupt {
    /// Shared: `crashtest_check` hands it to the library (`CheckOptions`
    /// takes an `Arc`); the other calls borrow it.
    pub(crate) cancel: Arc<AtomicBool>,
    raised: Mutex<Option<PyErr>>,
    last_check: Mutex<Instant>,
}

impl Interrupt {
    pub(crate) fn new() -> Self {
        Interrupt {
            cancel: Arc::new(AtomicBool::new(false)),
            raised: Mutex::new(None),
            last_check: Mutex::new(Instant::now()),
        }
    }

    /// Called from the library's progress callback, without the GIL.
    pub(crate) fn poll(&self) {
        {
            let Ok(mut last) = self.last_check.lock() else {
                return;
            };
            if last.elapsed() < SIGNAL_CHECK_INTERVAL {
                return;
            }
            *last = Instant::now();
        }
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            if let Ok(mut r) = self.raised.lock() {
                r.get_or_insert(e);
            }
            self.cancel.store(true, Ordering::SeqCst);
        }
    }

    /// The call's result for Python: the exception a signal handler raised,
    /// if one did, else the report or the library's error.
    pub(crate) fn result<T>(&self, r: fspace::Result<T>) -> PyResult<T> {
        if let Some(e) = self.raised.lock().ok().and_then(|mut r| r.take()) {
            return Err(e);
        }
        r.map_err(os_error)
    }
}
