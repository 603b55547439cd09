//! What a failure tells the user: the error, a hint chosen by the command
//! and the error's kind ([`fspace::ErrorKind`]), the JSON form, and the exit
//! code. No errno numbers and no message text are matched here: the library
//! classifies, this file only words the advice.

use crate::output::{emit, REPORTED, STDOUT_CLOSED};
use fspace::ErrorKind as K;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// Exit code when the operation failed (usage errors exit 2, from clap).
pub(crate) const EXIT_FAILED: u8 = 1;

/// Exit code when a signal stopped the work (128 + SIGINT, as shells
/// report it).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// Exit code of `probe --compare-saved` when the fresh median fell more
/// than the threshold below the saved one (the same as a failure: an alarm
/// either way).
pub(crate) const EXIT_REGRESSED: u8 = 1;

/// Exit code of `probe --compare-saved` when nothing comparable is saved
/// for the filesystem (1 is a regression, or a failure).
pub(crate) const EXIT_NOTHING_SAVED: u8 = 3;

/// Exit code of `probe --compare-saved` when the fresh runs looked slower
/// but the comparison could not tell whether the disk is: the machine was
/// busy, or the runs are too few for the rank test. Not 1: a monitor must
/// not page anyone on it, and may run the comparison again later.
pub(crate) const EXIT_COULD_NOT_TELL: u8 = 4;

/// Exit code of `wal verify --strict` when the log ends in bytes that are
/// not a valid record (a record failing its checksum, a bad length, a
/// wrong LSN) or in a segment file cut short: a torn last write or damage
/// to an acknowledged record, which it cannot tell apart. Not 1 (damage
/// before the end, or a failure: records are certainly lost) nor 2 (clap's
/// usage error).
pub(crate) const EXIT_UNCLEAN_END: u8 = 3;

/// Fields a command adds to its JSON error object (`damage`, for a damaged
/// log), set just before it returns the error: the error itself carries
/// only the operation, the path, the offset and words.
static ERROR_DETAILS: std::sync::Mutex<Vec<(&'static str, serde_json::Value)>> =
    std::sync::Mutex::new(Vec::new());

/// Adds `key: value` to the JSON error object `report` prints.
pub(crate) fn add_error_detail(key: &'static str, value: serde_json::Value) {
    ERROR_DETAILS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((key, value));
}

/// The exit code a command asked for beside its result (0: none asked):
/// `probe --compare-saved` exits 1 on a regression after printing its
/// figures, 3 when nothing is saved and 4 when it could not tell.
static EXIT_STATUS: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Asks for exit code `code` whatever the command returns.
pub(crate) fn set_exit_status(code: u8) {
    EXIT_STATUS.store(code, Ordering::Relaxed);
}

/// The exit code of a command that returned `Ok`: 0 unless it asked for
/// another one.
pub(crate) fn success_status() -> ExitCode {
    ExitCode::from(EXIT_STATUS.load(Ordering::Relaxed))
}

/// The command that failed, as far as the advice depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmd {
    Info,
    Probe,
    /// `probe --compare-saved`.
    ProbeCompare,
    /// `grow`, and whether `--create` was given.
    Grow {
        create: bool,
    },
    Copy,
    Dig,
    Map,
    Bench,
    Wal,
    Generate,
    Crashtest,
}

/// Returns advice for errors whose message alone leaves the user guessing.
pub(crate) fn hint(cmd: Cmd, kind: K) -> Option<&'static str> {
    Some(match (cmd, kind) {
        (_, K::ReadOnly) => "the filesystem is mounted read-only",
        (Cmd::Grow { create: false }, K::NotFound) => {
            "the file does not exist; pass --create to create it"
        }
        (Cmd::Grow { create: true }, K::NotFound) => {
            "the directory to create the file in does not exist"
        }
        (Cmd::Grow { .. }, K::Permission) => {
            "you lack write permission on the file or its directory, or the file is immutable or \
             append-only (see lsattr; chattr -i or -a removes the flag)"
        }
        (Cmd::Grow { .. }, K::NoSpace) => {
            "not enough free space; nothing was changed (an existing file keeps its length, a new one is not created)"
        }
        (Cmd::ProbeCompare, K::NotFound) => {
            "give an existing directory; when nothing is saved for its filesystem, run `fspace probe --save DIR` there first, with the same FSPACE_STATE_DIR (or XDG_STATE_HOME, HOME)"
        }
        (Cmd::Probe, K::NotFound) => {
            "give an existing directory on the filesystem to measure (and, with --report, an existing directory for the page)"
        }
        (Cmd::Probe | Cmd::ProbeCompare, K::Permission) => {
            "run as a user who may create files in the directory, or pick another directory on the same filesystem"
        }
        (Cmd::Probe, K::NoSpace) => {
            "free some space or probe another directory (the error says whether the scratch directory was removed)"
        }
        (Cmd::Copy, K::NotFound) => "the source or the directory to copy into does not exist",
        (Cmd::Copy, K::Permission) => {
            "you lack permission to read the source or write the destination's directory"
        }
        (Cmd::Copy, K::NoSpace) => {
            "not enough free space; the partial copy was removed and nothing else changed"
        }
        (Cmd::Dig, K::Permission) => "you lack write permission on the file",
        (Cmd::Dig, K::NoSpace) => {
            "punching a hole needed metadata space; the file reads back the same, holes punched so far stay"
        }
        (Cmd::Dig, K::Unsupported) => "this filesystem has no hole punching (sshfs, NFS before 4.2)",
        (Cmd::Wal, K::NotFound) => {
            "give the directory of a log (the one the program passed to Wal::open)"
        }
        (Cmd::Wal, K::Corrupt) => {
            "the log is damaged at that offset; a writable open refuses it too (nothing was changed)"
        }
        (Cmd::Bench, K::NoSpace) => "lower --file-size or measure on a filesystem with more free space",
        _ => return None,
    })
}

/// Reports `e` on stderr (and as JSON on stdout with `--json`, unless a
/// JSON report carrying it was printed) and returns the exit code.
pub(crate) fn report(e: &fspace::Error, cmd: Cmd, json: bool) -> ExitCode {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        // stdout was closed (`| head`): nothing left to tell anyone.
        return ExitCode::from(EXIT_FAILED);
    }
    let kind = e.kind();
    let hint = hint(cmd, kind);
    // Wrapped to 80 columns: a long path the user typed goes on over
    // continuation lines, whole (rule 7: the operation, the path and the
    // errno stay).
    let mut msg = String::new();
    crate::fmt::labelled(&mut msg, "fspace: error: ", &e.to_string());
    if let Some(h) = hint {
        crate::fmt::labelled(&mut msg, "fspace: hint: ", h);
    }
    eprint!("{msg}");
    if json && !REPORTED.load(Ordering::Relaxed) {
        let mut v = serde_json::json!({
            "error": e.to_string(),
            "errno": e.raw_os_error(),
            "kind": kind.name(),
            "op": e.op(),
            "path": e.path().to_string_lossy(),
            "fallbacks": e.fallbacks(),
            "hint": hint,
        });
        if let Some(obj) = v.as_object_mut() {
            let details = std::mem::take(
                &mut *ERROR_DETAILS
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            for (key, value) in details {
                obj.insert(key.to_string(), value);
            }
        }
        let _ = emit(&format!("{v}\n"));
    }
    if kind == K::Interrupted {
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    match EXIT_STATUS.load(Ordering::Relaxed) {
        0 => ExitCode::from(EXIT_FAILED),
        asked => ExitCode::from(asked),
    }
}
