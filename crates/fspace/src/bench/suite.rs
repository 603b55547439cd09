//! The commit benchmark as a suite: several modes measured one after the
//! other in one run, with the ratios to the baselines of the same run
//! (`append` and `overwrite`), which are what a noisy machine lets anyone
//! compare. Given several writer counts, it runs every mode at each (the
//! modes at one count next to each other) and draws each mode's
//! [`WriterCurve`]. `fspace bench commit` prints it; library users get the
//! same figures.

use super::commit::run_commit;
use super::curve::{writer_curves, WriterCurve, MAX_WRITERS};
use super::engine::peak_rss_kib;
use super::types::{CommitBenchOptions, CommitResult, SpaceState};
use crate::error::{Error, Result};
use crate::invalid::InvalidOption;
use crate::strategy::SyncMethod;
use crate::sys::Errno;
use crate::units::format_human;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// One mode's figures with its ratios to the baselines of the same run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SuiteRow {
    /// The mode's figures.
    #[serde(flatten)]
    pub result: CommitResult,
    /// commits/s ÷ `append`'s, when both ran.
    pub vs_append: Option<f64>,
    /// commits/s ÷ `overwrite`'s, when both ran.
    pub vs_overwrite: Option<f64>,
    /// commits/s ÷ the same mode's with `fdatasync`, when several sync
    /// methods ran.
    pub vs_fdatasync: Option<f64>,
    /// commits/s ÷ the same mode's (and sync method's) at one writer, when
    /// several writer counts ran, one among them.
    pub vs_one_writer: Option<f64>,
}

/// One run of a suite: a mode, at a writer count, with a sync method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SuiteRun {
    /// The mode.
    pub state: SpaceState,
    /// The sync method (`None`: the mode's default).
    pub sync_method: Option<SyncMethod>,
    /// Threads committing at once.
    pub writers: usize,
}

/// What a suite measured (the JSON of `fspace bench commit --json`).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SuiteReport {
    /// The fspace that measured.
    pub fspace_version: &'static str,
    /// The directory measured in.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub dir: PathBuf,
    /// Its filesystem.
    pub filesystem: String,
    /// Its mount point, when known.
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub mount_point: Option<PathBuf>,
    /// The mounted source, when known.
    pub source: Option<String>,
    /// Bytes per record.
    pub record_size: u64,
    /// The writer counts every mode ran at, in order.
    pub writers: Vec<usize>,
    /// Time per mode.
    pub seconds_per_mode: f64,
    /// The file the overwrite modes cycle through.
    pub file_size: u64,
    /// The log's segment size.
    pub segment_size: u64,
    /// `O_DIRECT` for the log as asked: `None` for the log's own choice,
    /// or forced on or off. In JSON `auto`, `on` or `off`.
    #[serde(serialize_with = "auto_on_off")]
    pub direct_io: Option<bool>,
    /// The sync methods measured, in order (empty: each mode's default).
    pub sync_methods: Vec<SyncMethod>,
    /// One row per run, in order (each with its writer count).
    pub results: Vec<SuiteRow>,
    /// Per mode and sync method, its rate at each writer count, and where
    /// it stopped scaling; empty when one writer count ran.
    pub curves: Vec<WriterCurve>,
    /// Peak resident memory of the whole run (Linux `VmHWM`), KiB.
    pub peak_rss_kib: Option<u64>,
    /// Set when the run stopped early; `results` holds the modes finished.
    pub error: Option<crate::reason::Reason>,
}

/// Checks that `o` can run `modes`: the error names the field at fault,
/// and its message the CLI's option (printed as a usage error).
pub fn check_suite(
    modes: &[SpaceState],
    o: &CommitBenchOptions,
) -> std::result::Result<(), InvalidOption> {
    if let Some(w) = writer_counts(o)
        .into_iter()
        .find(|w| *w == 0 || *w > MAX_WRITERS)
    {
        return Err(InvalidOption::new(
            "writers",
            format!("--writers {w}: each writer count must be from 1 to {MAX_WRITERS}"),
        ));
    }
    let files = modes.iter().any(|m| *m != SpaceState::Wal);
    if files && o.record_size as u64 > o.file_size {
        return Err(InvalidOption::new(
            "file_size",
            format!(
                "--record {} is larger than --file-size {}; raise --file-size",
                format_human(o.record_size as u64),
                format_human(o.file_size)
            ),
        ));
    }
    if modes.contains(&SpaceState::Wal) {
        let wal = crate::wal::WalOptions {
            segment_size: o.segment_size,
            ..Default::default()
        };
        if let Err(m) = wal.validate() {
            return Err(InvalidOption::new(
                "segment_size",
                format!("--segment-size {}: {m}", format_human(o.segment_size)),
            ));
        }
        let max = crate::wal::max_record(o.segment_size);
        if o.record_size > max {
            return Err(InvalidOption::new(
                "record_size",
                format!(
                    "--record {} does not fit a {} segment (at most {max} bytes); raise --segment-size or leave out --mode wal",
                    format_human(o.record_size as u64),
                    format_human(o.segment_size)
                ),
            ));
        }
    }
    Ok(())
}

/// Returns true if and only if `mode` commits into a prepared file of
/// [`CommitBenchOptions::file_size`] bytes (which must fit the free space).
pub fn needs_file(mode: SpaceState) -> bool {
    matches!(
        mode,
        SpaceState::Recycled
            | SpaceState::ZeroFilled
            | SpaceState::Allocated
            | SpaceState::WriteZeroed
    )
}

/// The writer counts of a suite: [`CommitBenchOptions::writer_counts`],
/// or [`CommitBenchOptions::writers`] alone when that is empty.
fn writer_counts(o: &CommitBenchOptions) -> Vec<usize> {
    if o.writer_counts.is_empty() {
        vec![o.writers]
    } else {
        o.writer_counts.clone()
    }
}

/// The runs of a suite: at each writer count (outermost, so that the
/// modes compared at one count run next to each other on a noisy
/// machine), each mode once per sync method (methods inner, so that the
/// methods of one mode run back to back), or once when no method is
/// named.
pub fn suite_runs(modes: &[SpaceState], o: &CommitBenchOptions) -> Vec<SuiteRun> {
    let methods: Vec<Option<SyncMethod>> = if o.sync_methods.is_empty() {
        vec![None]
    } else {
        o.sync_methods.iter().copied().map(Some).collect()
    };
    let mut runs = vec![];
    for writers in writer_counts(o) {
        for &state in modes {
            for &sync_method in &methods {
                runs.push(SuiteRun {
                    state,
                    sync_method,
                    writers,
                });
            }
        }
    }
    runs
}

/// Runs `modes` in `dir`, one after the other (each once per sync method
/// of `o`, see [`suite_runs`]), and returns the report with the ratios;
/// `started(i, run)` is called before each run. Refuses before
/// measuring anything when the modes that need a file cannot fit it. A mode
/// that fails, or a cancel, ends the run: the report holds the modes
/// finished, and the error is returned beside it.
pub fn run_suite(
    dir: impl AsRef<Path>,
    modes: &[SpaceState],
    o: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
    started: &dyn Fn(usize, SuiteRun),
) -> Result<(SuiteReport, Option<Error>)> {
    let dir = dir.as_ref();
    let fs = crate::fs_info::fs_info(dir)?;
    let needs = if modes.iter().any(|m| needs_file(*m)) {
        o.file_size
    } else {
        0
    };
    let free = fs.free_bytes_root.max(fs.free_bytes);
    if needs > free && !fs.network {
        return Err(Error::refused_errno(
            "bench commit",
            dir,
            Errno::NOSPC,
            format!(
                "--file-size {} needs that much free space, the filesystem has {}; lower --file-size",
                format_human(needs),
                format_human(free)
            ),
        ));
    }
    let mut results = vec![];
    let mut failure = None;
    for (i, run) in suite_runs(modes, o).into_iter().enumerate() {
        started(i, run);
        let m = run.state;
        let one = CommitBenchOptions {
            sync_methods: run.sync_method.into_iter().collect(),
            writers: run.writers,
            writer_counts: vec![],
            ..o.clone()
        };
        let r = run_commit(dir, m, &one, cancel);
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            let done = if results.is_empty() {
                ""
            } else {
                "; the modes finished are shown"
            };
            failure = Some(Error::refused_errno(
                "bench commit",
                dir,
                Errno::INTR,
                format!("interrupted during {m}; scratch files removed{done}"),
            ));
            break;
        }
        match r {
            Ok(r) => results.push(r),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let report = SuiteReport {
        fspace_version: env!("CARGO_PKG_VERSION"),
        dir: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
        filesystem: fs.kind.name(),
        mount_point: fs.mount_point.clone(),
        source: fs.source.clone(),
        record_size: o.record_size as u64,
        writers: writer_counts(o),
        seconds_per_mode: o.duration.as_secs_f64(),
        file_size: o.file_size,
        segment_size: o.segment_size,
        direct_io: o.direct_io,
        sync_methods: o.sync_methods.clone(),
        results: with_ratios(&results),
        curves: if writer_counts(o).len() > 1 {
            writer_curves(&results)
        } else {
            vec![]
        },
        peak_rss_kib: peak_rss_kib(),
        error: failure.as_ref().map(crate::reason::Reason::from),
    };
    Ok((report, failure))
}

/// Each result with its ratios to the run's `append` and `overwrite` at
/// the same writer count, to `fdatasync` and to one writer.
pub fn with_ratios(results: &[CommitResult]) -> Vec<SuiteRow> {
    let of = |b: &CommitResult, r: &CommitResult| -> Option<f64> {
        (b.unsupported.is_none() && r.unsupported.is_none() && b.commits > 0)
            .then(|| r.commits_per_sec / b.commits_per_sec)
    };
    // The baseline with the same sync method, else the first one that
    // ran; always at the same writer count.
    let ratio = |r: &CommitResult, base: SpaceState| -> Option<f64> {
        let at = |x: &&CommitResult| x.state == base && x.writers == r.writers;
        let b = results
            .iter()
            .filter(at)
            .find(|x| x.sync_method == r.sync_method)
            .or_else(|| results.iter().find(at))?;
        of(b, r)
    };
    let several = results
        .iter()
        .any(|x| x.sync_method != results[0].sync_method);
    let vs_fdatasync = |r: &CommitResult| -> Option<f64> {
        let b = results.iter().find(|x| {
            several
                && x.state == r.state
                && x.writers == r.writers
                && x.sync_method == Some(SyncMethod::Fdatasync)
        })?;
        of(b, r)
    };
    let counts = results.iter().any(|x| x.writers != results[0].writers);
    let vs_one_writer = |r: &CommitResult| -> Option<f64> {
        let b = results.iter().find(|x| {
            counts && x.writers == 1 && x.state == r.state && x.sync_method == r.sync_method
        })?;
        of(b, r)
    };
    results
        .iter()
        .map(|r| SuiteRow {
            vs_append: ratio(r, SpaceState::Appended),
            vs_overwrite: ratio(r, SpaceState::Recycled),
            vs_fdatasync: vs_fdatasync(r),
            vs_one_writer: vs_one_writer(r),
            result: r.clone(),
        })
        .collect()
}

/// `auto`, `on` or `off`: how the suite's JSON says the `O_DIRECT` asked.
#[allow(clippy::ref_option)] // serde's serialize_with passes a reference
fn auto_on_off<S: serde::Serializer>(
    v: &Option<bool>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(match v {
        None => "auto",
        Some(true) => "on",
        Some(false) => "off",
    })
}
