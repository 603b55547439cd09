//! The probe's entry point, [`probe`]: the checks made before anything is
//! written, how large a run can be on the free space, the scratch
//! directory, the measurements in order, and the result with its notes.

use super::busy::{Busy, Snapshot};
use super::commit;
use super::commit::concurrency::{self, AtWriters, ConcurrencySection};
use super::decide::recommend;
use super::engines::{self, EngineAdvice};
use super::plan::{
    budget, fill_rate, Budget, Case, MIN_FILE, SMALL_COW, SMALL_COW_SHARE, SWEEP_RECORDS,
};
use super::result::ProbeResult;
use super::run::{ProbeOptions, Run, ZERO_FILL_STEP};
use super::schema::{CommitSection, GrowthSection, Level, SweepPoint, SCHEMA};
use super::stats::utc;
use super::untorn::{self, UntornSection};
use crate::error::{Error, Result};
use crate::fs_info::{fs_info_uncached, identify, FsInfo};
use crate::grow::Strategy;
use crate::note::{Note, NoteKind};
use crate::policy::FsKey;
use crate::sys::{self, Errno};
use crate::units::format_human;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Growth measured per strategy: 256 MiB (scaled down when the filesystem
/// has less free space, and said so).
pub const GROWTH_SIZE: u64 = 256 << 20;

/// Smallest growth measured when space is short.
pub(super) const MIN_GROWTH: u64 = 32 << 20;

/// Room kept free besides the measured files (metadata, journals, the
/// capability probe's scratch files).
pub(super) const MARGIN: u64 = 32 << 20;

/// Marker in the name of the probe's scratch directory:
/// `.fspace-probe-HOST-PID-SEQ`. A directory left by a killed probe on this
/// host is removed by the next probe of the same directory.
pub const PROBE_MARKER: &str = ".fspace-probe-";

/// The scratch directory, removed with everything in it when dropped.
struct ScratchDir {
    path: PathBuf,
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl ScratchDir {
    /// Returns the path; dropping no longer removes it.
    fn disarm(mut self) -> PathBuf {
        std::mem::take(&mut self.path)
    }
}

/// Probes the filesystem holding directory `dir` (see the module docs).
///
/// Refuses, creating nothing, when `dir` is missing, not a directory, on a
/// read-only mount, not writable, or on a filesystem with less free space
/// than the smallest run needs (the message says how much); with less than
/// a full run needs, the growth measurement is scaled down and a note says
/// so.
pub fn probe(dir: impl AsRef<Path>, opts: &ProbeOptions<'_>) -> Result<ProbeResult> {
    let dir = dir.as_ref();
    let start = Instant::now();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut budget = budget(opts.level);
    // The engines' measurements come after the probe's, in time of their
    // own: the main rounds do not shrink for them.
    let engine_time: Duration = opts
        .engines
        .iter()
        .map(|&e| engines::engine_time(e, opts.level))
        .sum::<Duration>()
        // So does the concurrency curve.
        + concurrency::concurrency_time(opts.level, opts.writers);
    // Reports and saved results name the directory, not `.`.
    let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    check_writers(dir, opts.writers)?;
    let info = check_dir(dir)?;
    let mut notes = vec![];
    let growth_size = size_run(dir, &info, &budget, opts.level, &mut notes)?;
    let scratch = make_scratch(dir)?;
    let mut run = Run {
        dir: &scratch.path,
        opts,
        budget: &budget,
        start,
        step: 0,
        steps: 0,
    };
    let mut result = measure(&mut run, growth_size, &mut notes);
    if result.is_err() && opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        // Whatever the signal interrupted (a growth, a commit), say what
        // the user did, in the probe's words.
        result = Err(run.interrupted());
    }
    let (filesystem, mut commit, growth, sweep, machine, engines, untorn, (concurrency, at)) =
        remove_scratch(dir, scratch, result)?;
    let elapsed = start.elapsed();
    budget.total += engine_time;
    notes.extend(over_budget_note(elapsed, &budget, opts.level, &growth));
    notes.extend(memory_note(&filesystem));
    let mut recommendations = recommend(
        &filesystem,
        &commit.states,
        &commit.sync_methods,
        &growth.results,
        commit.log_check.as_ref(),
    );
    if let Some(at) = at {
        at.apply(
            &mut recommendations,
            &mut commit,
            concurrency.curve(crate::bench::SpaceState::Wal),
        );
    }
    let mut filesystem = filesystem;
    // The scratch directory is gone: describe the directory asked about.
    filesystem.path.clone_from(dir);
    Ok(ProbeResult {
        schema: SCHEMA,
        fspace_version: env!("CARGO_PKG_VERSION"),
        level: opts.level,
        directory: dir.clone(),
        started_unix: started,
        started_utc: utc(started),
        elapsed,
        budget_seconds: budget.total.as_secs_f64(),
        key: FsKey::of(&filesystem),
        filesystem,
        commit,
        growth,
        sweep,
        concurrency,
        machine,
        recommendations,
        engines,
        untorn,
        notes,
    })
}

/// Refuses a writer count the commit benchmark cannot run.
fn check_writers(dir: &Path, writers: usize) -> Result<()> {
    if writers == 0 || writers > crate::bench::MAX_WRITERS {
        return Err(Error::refused_errno(
            "probe",
            dir,
            Errno::INVAL,
            format!(
                "writers {writers}: the writer count must be from 1 to {}",
                crate::bench::MAX_WRITERS
            ),
        ));
    }
    Ok(())
}

/// A note on a memory filesystem: its commit figures measure memory
/// copies.
fn memory_note(filesystem: &FsInfo) -> Option<Note> {
    matches!(
        filesystem.kind,
        crate::fs_info::FsKind::Tmpfs | crate::fs_info::FsKind::Ramfs
    )
    .then(|| {
        Note::new(
            NoteKind::MemoryFilesystem,
            format!(
                "{} is memory: fdatasync writes nothing, so the commit figures measure memory copies, and nothing here survives a reboot",
                filesystem.display_name()
            ),
        )
    })
}

/// Makes the probe's scratch directory in `dir`, after removing those of
/// killed probes on this host; it is removed when dropped unless disarmed.
fn make_scratch(dir: &Path) -> Result<ScratchDir> {
    crate::stale::remove_stale(dir, PROBE_MARKER);
    let path = dir.join(crate::stale::unique_name("", PROBE_MARKER));
    sys::mkdir(&path, 0o777).map_err(|e| {
        if e == Errno::ACCESS {
            Error::refused_errno(
                "probe",
                dir,
                Errno::ACCESS,
                "cannot create a scratch directory here: permission denied",
            )
        } else {
            Error::io("mkdir", &path, None, e)
        }
    })?;
    // Armed only once the directory is ours.
    Ok(ScratchDir { path })
}

/// Removes the scratch directory here rather than by its guard (which
/// covers a panic), so that a failure is reported: with its errno, beside
/// the run's own error if there was one, rather than left silently.
fn remove_scratch(dir: &Path, scratch: ScratchDir, result: Result<Sections>) -> Result<Sections> {
    let path = scratch.disarm();
    let Err(e) = std::fs::remove_dir_all(&path) else {
        return result;
    };
    let removal = Error::from_io("remove scratch directory", &path, None, e);
    Err(match result {
        Err(first) => Error::refused_errno(
            "probe",
            dir,
            Errno::from_raw_os_error(
                first
                    .raw_os_error()
                    .or(removal.raw_os_error())
                    .unwrap_or(Errno::IO.raw_os_error()),
            ),
            format!(
                "{first}; and the scratch directory could not be removed: {removal}; remove it by hand once the filesystem is writable again"
            ),
        ),
        Ok(_) => removal,
    })
}

/// A note when the run took more than its level's budget (and 2 s).
fn over_budget_note(
    elapsed: Duration,
    budget: &Budget,
    level: Level,
    growth: &GrowthSection,
) -> Option<Note> {
    if elapsed <= budget.total + Duration::from_secs(2) {
        return None;
    }
    let fill = growth
        .results
        .iter()
        .find(|g| g.strategy == Strategy::ZeroFill && g.unsupported.is_none())
        .map(|g| {
            format!(
                " (zeros were written at {}/s)",
                format_human(g.bytes_per_sec as u64)
            )
        })
        .unwrap_or_default();
    Some(Note::new(
        NoteKind::OverBudget,
        format!(
            "took {:.1} s, over the {} run's {} s budget: preparing files and syncing took longer here than the plan allows{fill}",
            elapsed.as_secs_f64(),
            level.name(),
            budget.total.as_secs()
        ),
    ))
}

/// Checks `dir` before anything is created; returns its filesystem.
pub(super) fn check_dir(dir: &Path) -> Result<FsInfo> {
    let st = match sys::stat(dir) {
        Ok(st) => st,
        Err(e) if e == Errno::NOENT => {
            return Err(Error::refused_errno(
                "probe",
                dir,
                e,
                "no such directory (the probe measures inside an existing directory)",
            ))
        }
        Err(e) => return Err(Error::io("stat", dir, None, e)),
    };
    if !st.is_dir() {
        return Err(Error::refused_errno(
            "probe",
            dir,
            Errno::NOTDIR,
            format!(
                "is a {}, not a directory; give the directory the files live in",
                st.type_name()
            ),
        ));
    }
    let info = identify(dir)?;
    if info.read_only {
        return Err(Error::refused_errno(
            "probe",
            dir,
            Errno::ROFS,
            format!(
                "is on a read-only mount ({}); nothing can be measured without writing",
                info.mount_point
                    .as_deref()
                    .map_or_else(|| "?".into(), |m| m.display().to_string())
            ),
        ));
    }
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    if let Err(e) = accessat(
        CWD,
        dir,
        Access::WRITE_OK | Access::EXEC_OK,
        AtFlags::EACCESS,
    ) {
        return Err(Error::refused_errno(
            "probe",
            dir,
            e,
            format!(
                "is not writable by this user (uid {}): the probe needs to create scratch files there",
                rustix::process::geteuid().as_raw()
            ),
        ));
    }
    Ok(info)
}

/// Bytes the log may hold at once in the probe: a segment being written,
/// the ones prepared ahead and the recycle pool.
pub(super) fn wal_need() -> u64 {
    crate::wal::DEFAULT_SEGMENT_SIZE
        * (1 + crate::wal::DEFAULT_PREPARE_AHEAD + crate::wal::DEFAULT_RECYCLE_POOL) as u64
}

/// Returns the growth size for the free space available, or refuses.
fn size_run(
    dir: &Path,
    info: &FsInfo,
    budget: &Budget,
    level: Level,
    notes: &mut Vec<Note>,
) -> Result<u64> {
    let free = if info.kind.reserve_usable_by_this_process() {
        info.free_bytes_root.max(info.free_bytes)
    } else {
        info.free_bytes
    };
    let others = budget.file_size.max(wal_need()) + MARGIN;
    let least = MIN_GROWTH + others;
    if info.total_bytes > 0 && free < least {
        return Err(Error::refused_errno(
            "probe",
            dir,
            Errno::NOSPC,
            format!(
                "a {} run needs at least {} free; this filesystem has {} free. Nothing was written",
                level.name(),
                format_human(least),
                format_human(free)
            ),
        ));
    }
    let mut target = GROWTH_SIZE;
    if info.copy_on_write && info.total_bytes > 0 && info.total_bytes < SMALL_COW {
        // btrfs hands out space in chunks and keeps emptied data chunks: a
        // few probes of a small one left no room for metadata (transaction
        // abort, forced read-only) on the 512 MB test btrfs. Stay small.
        let cap = (info.total_bytes / SMALL_COW_SHARE) >> 20 << 20;
        target = cap.clamp(MIN_GROWTH, GROWTH_SIZE);
        if target < GROWTH_SIZE {
            notes.push(Note::new(
                NoteKind::SmallCopyOnWrite,
                format!(
                    "small copy-on-write filesystem ({}): growth measured on {} and files kept to {} or less, \
                     so that the probe does not use up its chunk space",
                    format_human(info.total_bytes),
                    format_human(target),
                    format_human(cap.max(MIN_FILE))
                ),
            ));
        }
    }
    if info.total_bytes > 0 && free < target + others {
        let g = ((free - others) / ZERO_FILL_STEP * ZERO_FILL_STEP).clamp(MIN_GROWTH, target);
        notes.push(Note::new(
            NoteKind::ScaledDown,
            format!(
                "scaled down: growth measured on {} instead of {} ({} free)",
                format_human(g),
                format_human(target),
                format_human(free)
            ),
        ));
        return Ok(g);
    }
    Ok(target)
}

type Sections = (
    FsInfo,
    CommitSection,
    GrowthSection,
    Option<Vec<SweepPoint>>,
    Busy,
    Vec<EngineAdvice>,
    UntornSection,
    (ConcurrencySection, Option<AtWriters>),
);

/// The measurements in order: the filesystem's facts, growth, commits, the
/// sweep and the engines' cases, with what the rest of the machine did
/// meanwhile.
fn measure(run: &mut Run<'_>, growth_size: u64, notes: &mut Vec<Note>) -> Result<Sections> {
    let b = run.budget;
    let sweep_steps = if b.sweep { SWEEP_RECORDS.len() * 3 } else { 0 };
    run.steps = 1
        + b.rounds * Strategy::ALL.len()
        + b.rounds * Case::all().len()
        + sweep_steps
        + concurrency::steps(run.opts.writers)
        + engines::steps(run.opts.level, run.opts.engines);
    run.begin("filesystem facts and capabilities".into())?;
    let info = fs_info_uncached(run.dir)?.with_block_devices();
    // Untorn writes: the facts now (a scratch file, a few trial writes),
    // so that the commit rounds keep time back for their cost where there
    // is one to measure.
    let (untorn_facts, untorn_error) = match crate::untorn::facts_of_fs_with(run.dir, &info) {
        Ok(f) => (Some(f), None),
        Err(e) => (None, Some(crate::reason::Reason::from(&e))),
    };
    let untorn_sizes = untorn::sizes(untorn_facts.as_ref(), untorn_error.as_ref());
    run.steps += untorn::steps(b.rounds, &untorn_sizes);
    let devices: Vec<String> = match &info.block_devices {
        Ok(d) => d.iter().map(|d| d.name.clone()).collect(),
        Err(_) => vec![],
    };
    let (_, before, idle_before) = Snapshot::idle_window(&devices);
    let growth = run.growth(growth_size)?;
    notes.extend(allocation_notes(&info, &growth));
    let untorn_time = untorn::reserve(run.opts.level, b.rounds, &untorn_sizes, fill_rate(&growth));
    let commit = commit::measure(run, &info, &growth, untorn_time, notes)?;
    let untorn = untorn::measure(run, untorn_facts, untorn_error, untorn_sizes)?;
    let sweep = if b.sweep {
        Some(commit::sweep(run, commit.file_size, notes)?)
    } else {
        None
    };
    let concurrency = concurrency::measure(run, &commit, run.opts.writers)?;
    let mut engines = engines::measure(run, &info, run.opts.engines, b.file_size, &untorn.answers)?;
    // Advice drawn from commits that never reached the device is not
    // advice for durable commits: each engine's says so.
    if let Some(n) = commit.durability.as_ref().and_then(|d| d.note()) {
        for a in &mut engines {
            a.notes.push(n.clone());
            a.config = a.fragment();
        }
    }
    // The window ends after the last measurement, the engines' included:
    // their advice rests on rounds as noisy as the probe's own.
    let (end, _, idle_after) = Snapshot::idle_window(&devices);
    let busy = before.until_judged(&end, idle_before.max(idle_after));
    if busy.busy {
        notes.push(Note::new(
            NoteKind::BusyMachine,
            format!(
                "the machine was busy while measuring ({}): the figures are noisier, and a choice is made only where the runs separate",
                busy.reasons.join("; ")
            ),
        ));
    }
    Ok((
        info,
        commit,
        growth,
        sweep,
        busy,
        engines,
        untorn,
        concurrency,
    ))
}

/// Explains growth that left more allocated than the file's size (xfs,
/// and others, preallocate beyond the end of a file that grows by writes:
/// speculative preallocation, given back later), and says where a
/// strategy that promises reserved space reserved less than half of it
/// (`st_blocks`; a `fallocate` that succeeds and reserves nothing).
fn allocation_notes(info: &FsInfo, growth: &GrowthSection) -> Vec<Note> {
    let short = growth
        .results
        .iter()
        .filter(|g| {
            info.st_blocks_measures_allocation
                && g.unsupported.is_none()
                && matches!(g.strategy, Strategy::Allocate | Strategy::Reserve | Strategy::WriteZeroes | Strategy::ZeroFill)
                && g.allocated_bytes < g.bytes / 2
        })
        .map(|g| {
            Note::new(
                NoteKind::SpaceNotReserved,
                format!(
                    "{} succeeded but only {} of {} is allocated afterwards (st_blocks): this filesystem did not reserve the space",
                    g.strategy,
                    format_human(g.allocated_bytes),
                    format_human(g.bytes)
                ),
            )
        });
    let over = growth
        .results
        .iter()
        .filter(|g| g.unsupported.is_none() && g.allocated_bytes > g.bytes + (1 << 20))
        .map(|g| {
            let why = if info.kind == crate::fs_info::FsKind::Xfs {
                "xfs preallocates beyond the end of a file that grows by writes (speculative preallocation, up to the file's size again) and trims it when the file is closed for good or the inode is reclaimed: the extra is not the file's data and was not written"
            } else {
                "the filesystem preallocated beyond the end of the growing file (speculative preallocation); the extra is not the file's data and is given back later"
            };
            Note::new(
                NoteKind::SpeculativePreallocation,
                format!(
                    "{}: {} allocated right after growing {}: {why}",
                    g.strategy,
                    format_human(g.allocated_bytes),
                    format_human(g.bytes)
                ),
            )
        });
    short.chain(over).collect()
}
