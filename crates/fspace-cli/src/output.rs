//! Output: stdout in one piece, JSON, and the one progress display every
//! long command uses (stderr, on a terminal only, cleared on every exit).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::cell::OnceCell;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Writes `text` to stdout in one piece; a closed pipe or a full disk is
/// an error (exit 1), not a panic.
pub(crate) fn emit(text: &str) -> fspace::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
            }
            fspace::Error::from_io("write", Path::new("<stdout>"), None, e)
        })
}

/// Set when stdout was closed under us (`| head`): nothing is left to tell
/// anyone, so the error is not printed.
pub(crate) static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Set once a JSON document that carries the error was printed, so that the
/// error is not printed as a second JSON document.
pub(crate) static REPORTED: AtomicBool = AtomicBool::new(false);

/// A path in JSON, bytes that are not UTF-8 replaced (output must not fail
/// after the work was done).
pub(crate) fn ser_path<S: serde::Serializer>(p: &&Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

pub(crate) fn print_json<T: Serialize>(v: &T) -> fspace::Result<()> {
    match serde_json::to_string_pretty(v) {
        Ok(s) => emit(&(s + "\n")),
        Err(e) => Err(fspace::Error::Refused {
            op: "json",
            path: PathBuf::from("-"),
            message: e.to_string(),
            errno: 22,
        }),
    }
}

pub(crate) fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Files at least this large get a byte progress bar (on a terminal only).
pub(crate) const PROGRESS_FROM: u64 = 64 << 20;

/// What a [`Progress`] shows.
enum Shape {
    /// Bytes done of a total, for work of at least [`PROGRESS_FROM`].
    Bytes(&'static str),
    /// Steps done of a total, with what the current one does.
    Steps(&'static str),
    /// A spinner with a message.
    Spinner,
}

/// The progress display of a long command: on stderr, drawn only when
/// stderr is a terminal (and not `--quiet`), created on the first update,
/// and cleared when dropped, so that an error or Ctrl-C leaves no stale
/// line behind.
pub(crate) struct Progress {
    shape: Shape,
    enabled: bool,
    bar: OnceCell<Option<ProgressBar>>,
}

impl Progress {
    fn new(shape: Shape, quiet: bool) -> Progress {
        Progress {
            shape,
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: OnceCell::new(),
        }
    }

    /// A byte bar labelled `label` (`copy`, `dig`, `zero-fill`).
    pub(crate) fn bytes(label: &'static str) -> Progress {
        Progress::new(Shape::Bytes(label), false)
    }

    /// A step bar labelled `label`.
    pub(crate) fn steps(label: &'static str, quiet: bool) -> Progress {
        Progress::new(Shape::Steps(label), quiet)
    }

    /// A spinner.
    pub(crate) fn spinner() -> Progress {
        Progress::new(Shape::Spinner, false)
    }

    /// Whether anything is drawn.
    pub(crate) fn drawn(&self) -> bool {
        self.enabled
    }

    fn bar(&self, len: u64) -> Option<&ProgressBar> {
        self.bar
            .get_or_init(|| {
                if !self.enabled {
                    return None;
                }
                let (template, tick) = match self.shape {
                    Shape::Bytes(label) if len >= PROGRESS_FROM => (
                        format!("{label} {{bar:30}} {{binary_bytes}}/{{binary_total_bytes}} {{binary_bytes_per_sec}} eta {{eta}}"),
                        false,
                    ),
                    Shape::Bytes(_) => return None,
                    Shape::Steps(label) => {
                        (format!("{label} {{bar:24}} {{pos}}/{{len}} {{elapsed:>3}} {{msg}}"), true)
                    }
                    Shape::Spinner => ("{spinner} {msg}".to_string(), true),
                };
                let b = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
                if let Ok(style) = ProgressStyle::with_template(&template) {
                    b.set_style(style);
                }
                if tick {
                    b.enable_steady_tick(std::time::Duration::from_millis(150));
                }
                Some(b)
            })
            .as_ref()
    }

    /// Shows bytes done (a [`Progress::bytes`] bar).
    pub(crate) fn update(&self, p: fspace::Progress) {
        if let Some(b) = self.bar(p.total) {
            b.set_position(p.done);
        }
    }

    /// Shows step `step` (1-based) of `steps`, doing `what`.
    pub(crate) fn step(&self, step: usize, steps: usize, what: &str) {
        if let Some(b) = self.bar(steps as u64) {
            b.set_length(steps as u64);
            b.set_position(step.saturating_sub(1) as u64);
            b.set_message(what.to_string());
        }
    }

    /// Shows a spinner message.
    pub(crate) fn message(&self, what: String) {
        if let Some(b) = self.bar(0) {
            b.set_message(what);
        }
    }

    /// Removes the display.
    pub(crate) fn clear(&self) {
        if let Some(Some(b)) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// A flag raised by SIGINT, SIGTERM or SIGHUP: the operation stops at its
/// next check and cleans up. If the handlers cannot be installed the
/// default behaviour (exit) stays.
pub(crate) fn cancel_on_signals() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    cancel
}
