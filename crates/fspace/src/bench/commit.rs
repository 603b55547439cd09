//! One run of one mode in a scratch file or directory, removed afterwards.

use super::file_mode::run_file;
use super::types::{CommitBenchOptions, CommitResult, SpaceState};
use super::wal_mode::run_wal;
use crate::error::{Error, Result};
use crate::sys::{self, Errno};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Runs one mode in `dir`. `cancel` stops the run early (the partial
/// figures are returned; scratch files are removed either way).
pub fn run_commit(
    dir: impl AsRef<Path>,
    mode: SpaceState,
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
) -> Result<CommitResult> {
    let dir = dir.as_ref();
    if opts.record_size == 0
        || opts.writers == 0
        || opts.writers > super::curve::MAX_WRITERS
        || opts.record_size as u64 > opts.file_size
    {
        return Err(Error::refused_errno(
            "bench commit",
            dir,
            Errno::INVAL,
            format!(
                "record size ({}) and writers ({}) must be positive, writers at most {}, and the record no larger than the file ({})",
                opts.record_size, opts.writers, super::curve::MAX_WRITERS, opts.file_size
            ),
        ));
    }
    let st = sys::stat(dir).map_err(|e| Error::io("stat", dir, None, e))?;
    if !st.is_dir() {
        return Err(Error::refused_errno(
            "bench commit",
            dir,
            Errno::NOTDIR,
            format!("is a {}, not a directory", st.type_name()),
        ));
    }
    let scratch = dir.join(crate::stale::unique_name(
        &format!(".{}", mode.name()),
        BENCH_MARKER,
    ));
    crate::stale::remove_stale(dir, BENCH_MARKER);
    let r = match mode {
        SpaceState::Wal => run_wal(&scratch, opts, cancel),
        _ => run_file(&scratch, mode, opts, cancel),
    };
    match r {
        // Only a finished run is kept: a failed one has no report to say
        // where, and a mode unsupported here wrote nothing worth keeping.
        Ok(mut r) if opts.keep && r.unsupported.is_none() => {
            let kept = keep_scratch(dir, &scratch, mode, opts);
            if kept.is_err() {
                remove_scratch(&scratch);
            }
            r.kept = Some(kept?);
            Ok(r)
        }
        r => {
            remove_scratch(&scratch);
            r
        }
    }
}

/// Renames a run's scratch file or log directory to
/// `fspace-bench-MODE[-METHOD]` in `dir` (`.2`, `.3`, ... when taken):
/// a name without [`BENCH_MARKER`], so that no later run removes it as a
/// dead process's leftover. Never replaces anything.
fn keep_scratch(
    dir: &Path,
    scratch: &Path,
    mode: SpaceState,
    opts: &CommitBenchOptions,
) -> Result<std::path::PathBuf> {
    let base = match opts.sync_methods.first() {
        Some(m) => format!("fspace-bench-{}-{m}", mode.name()),
        None => format!("fspace-bench-{}", mode.name()),
    };
    // Bounded: a directory holding a thousand kept runs is a mistake.
    for n in 1..=1000 {
        let to = dir.join(match n {
            1 => base.clone(),
            _ => format!("{base}.{n}"),
        });
        match crate::durable::rename_noreplace(scratch, &to) {
            Ok(_) => return Ok(to),
            Err(e) if e.raw_os_error() == Some(Errno::EXIST.raw_os_error()) => {}
            Err(e) => return Err(e),
        }
    }
    Err(Error::refused_errno(
        "bench commit",
        dir,
        Errno::EXIST,
        format!("{base} and {base}.2 to {base}.1000 are all taken; remove kept runs"),
    ))
}

/// Marker in the names of the benchmark's scratch files:
/// `.MODE.fspace-bench-HOST-PID-SEQ`; leftovers of dead
/// processes are removed by the next run in the same directory.
pub const BENCH_MARKER: &str = ".fspace-bench-";

fn remove_scratch(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}
