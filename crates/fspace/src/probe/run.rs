//! A probe run: budgets per level, the scratch directory, growth, commits
//! per space state in alternating rounds, the sweep, and the close-call
//! extra rounds.

use super::decide::{self, recommend};
use super::plan::Case;
use super::schema::*;
use super::stats::*;
use crate::bench::SpaceState;
use crate::error::{Error, Result};
use crate::fs_info::{fs_info_uncached, identify, FsInfo};
use crate::grow::{grow, GrowOptions, Intent, Strategy};
use crate::policy::{FsKey, StrategyChoice};
use crate::strategy::SyncMethod;
use crate::sys::{self, Errno};
use crate::units::format_human;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a level may spend.
pub(super) struct Budget {
    /// The whole run's target.
    pub(super) total: Duration,
    /// Alternating rounds of the commit measurements.
    pub(super) rounds: usize,
    /// Longest time per commit mode and round (shortened to fit `total`).
    pub(super) max_mode: Duration,
    /// The file each overwrite mode commits into (one pass, no wrap).
    pub(super) file_size: u64,
    /// Longest time the zero-fill growth may take; past it the throughput
    /// is measured on what was written.
    pub(super) growth_cap: Duration,
    /// Whether to run the record-size sweep.
    pub(super) sweep: bool,
}

/// Bytes per record in the commit measurements: 8 KiB, the page size of
/// PostgreSQL's WAL and a common database page.
pub const RECORD_SIZE: usize = 8 << 10;

/// Growth measured per strategy: 256 MiB (scaled down when the filesystem
/// has less free space, and said so).
pub const GROWTH_SIZE: u64 = 256 << 20;

/// Record sizes of the [`Level::Full`] sweep.
pub const SWEEP_RECORDS: [usize; 4] = [512, 8 << 10, 64 << 10, 1 << 20];

/// Zero-fill growth is measured in synced steps (so that it can stop at the
/// time cap with an honest figure: the data is on disk) of at most this
/// size...
pub(super) const ZERO_FILL_STEP: u64 = 32 << 20;

/// ...starting with this one, then sized to take about
/// [`ZERO_FILL_STEP_TIME`] at the rate measured so far.
pub(super) const ZERO_FILL_FIRST_STEP: u64 = 1 << 20;

/// Target time of one zero-fill step.
pub(super) const ZERO_FILL_STEP_TIME: Duration = Duration::from_millis(250);

/// Smallest commit file (on slow devices the files shrink to keep the
/// budget).
pub(super) const MIN_FILE: u64 = 1 << 20;

/// Time per sweep point.
pub(super) const SWEEP_TIME: Duration = Duration::from_millis(1500);

/// Copy-on-write filesystems smaller than this (8 GiB) get a run scaled to
/// one [`SMALL_COW_SHARE`]th of their size.
pub(super) const SMALL_COW: u64 = 8 << 30;

/// One eighth.
pub(super) const SMALL_COW_SHARE: u64 = 8;

/// Smallest growth measured when space is short.
pub(super) const MIN_GROWTH: u64 = 32 << 20;

/// Room kept free besides the measured files (metadata, journals, the
/// capability probe's scratch files).
pub(super) const MARGIN: u64 = 32 << 20;

/// Shortest time per commit mode when the budget is tight: below this the
/// percentiles mean little.
pub(super) const MIN_MODE: Duration = Duration::from_millis(250);

/// Most runs of one state in one round (see [`Run::commit`]).
pub(super) const MAX_RUNS: usize = 32;

/// Most extra rounds for a close call (see [`Run::commit`]).
pub(super) const MAX_EXTRA_ROUNDS: usize = 4;

/// Share of the budget the main rounds leave for a close call: 15%.
pub(super) const CLOSE_CALL_SHARE: f64 = 0.15;

/// The two cases to measure again when a decision was too noisy (the
/// challenger, the standing choice): the log's preparation first, else
/// its sync method.
pub(super) fn undecided(
    info: &FsInfo,
    states: &[StateResult],
    methods: &[SyncMethodResult],
) -> Option<(Case, Case)> {
    let state = |s: Strategy| {
        SpaceState::of_strategy(s).map(|state| Case {
            state,
            method: None,
        })
    };
    if let Some(c) = decide::log_contest(info, states) {
        if matches!(c.verdict, super::verdict::Verdict::TooNoisy { .. }) {
            return Some((state(c.challenger.0)?, state(c.standing.0)?));
        }
    }
    let s = super::verdict::sync_choice(info, methods, true)?;
    let method = |m: SyncMethod| Case {
        state: SpaceState::Recycled,
        method: (m != SyncMethod::Fdatasync).then_some(m),
    };
    s.too_noisy
        .then(|| (method(s.challenger), method(s.standing)))
}

/// Marker in the name of the probe's scratch directory:
/// `.fspace-probe-HOST-PID-SEQ`. A directory left by a killed probe on this
/// host is removed by the next probe of the same directory.
pub const PROBE_MARKER: &str = ".fspace-probe-";

/// How to probe.
#[derive(Clone, Copy, Default)]
pub struct ProbeOptions<'a> {
    /// How thorough.
    pub level: Level,
    /// Checked between and inside measurements: when it becomes true the
    /// probe stops, removes its scratch directory and fails with
    /// `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called when each measurement starts.
    pub progress: Option<&'a dyn Fn(&ProbeProgress)>,
}

impl std::fmt::Debug for ProbeOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeOptions")
            .field("level", &self.level)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

fn budget(level: Level) -> Budget {
    match level {
        Level::Quick => Budget {
            total: Duration::from_secs(10),
            rounds: 3,
            max_mode: Duration::from_millis(1000),
            file_size: 32 << 20,
            growth_cap: Duration::from_millis(2500),
            sweep: false,
        },
        Level::Standard => Budget {
            total: Duration::from_secs(30),
            rounds: 4,
            max_mode: Duration::from_millis(1800),
            file_size: 64 << 20,
            growth_cap: Duration::from_secs(5),
            sweep: false,
        },
        Level::Full => Budget {
            total: Duration::from_secs(180),
            rounds: 5,
            max_mode: Duration::from_millis(3000),
            file_size: 128 << 20,
            growth_cap: Duration::from_secs(20),
            sweep: true,
        },
    }
}

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
pub fn probe(dir: &Path, opts: &ProbeOptions<'_>) -> Result<ProbeResult> {
    let start = Instant::now();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let budget = budget(opts.level);
    // Reports and saved results name the directory, not `.`.
    let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
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
    let mut result = run.all(growth_size, &mut notes);
    if result.is_err() && opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        // Whatever the signal interrupted (a growth, a commit), say what
        // the user did, in the probe's words.
        result = Err(run.interrupted());
    }
    let (filesystem, commit, growth, sweep, machine) = remove_scratch(dir, scratch, result)?;
    let elapsed = start.elapsed();
    notes.extend(over_budget_note(elapsed, &budget, opts.level, &growth));
    if matches!(
        filesystem.kind,
        crate::fs_info::FsKind::Tmpfs | crate::fs_info::FsKind::Ramfs
    ) {
        notes.push(format!(
            "{} is memory: fdatasync writes nothing, so the commit figures measure memory copies, and nothing here survives a reboot",
            filesystem.display_name()
        ));
    }
    let recommendations = recommend(
        &filesystem,
        &commit.states,
        &commit.sync_methods,
        &growth.results,
        commit.log_check.as_ref(),
    );
    let mut filesystem = filesystem;
    // The scratch directory is gone: describe the directory asked about.
    filesystem.path = dir.to_path_buf();
    Ok(ProbeResult {
        schema: SCHEMA,
        fspace_version: env!("CARGO_PKG_VERSION"),
        level: opts.level,
        directory: dir.to_path_buf(),
        started_unix: started,
        started_utc: utc(started),
        elapsed,
        budget_seconds: budget.total.as_secs_f64(),
        key: FsKey::of(&filesystem),
        filesystem,
        commit,
        growth,
        sweep,
        machine,
        recommendations,
        notes,
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
) -> Option<String> {
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
    Some(format!(
        "took {:.1} s, over the {} run's {} s budget: preparing files and syncing took longer here than the plan allows{fill}",
        elapsed.as_secs_f64(),
        level.name(),
        budget.total.as_secs()
    ))
}

/// Checks `dir` before anything is created; returns its filesystem.
fn check_dir(dir: &Path) -> Result<FsInfo> {
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
    notes: &mut Vec<String>,
) -> Result<u64> {
    let free = if crate::grow::usable_by_root(info.magic) {
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
            notes.push(format!(
                "small copy-on-write filesystem ({}): growth measured on {} and files kept to {} or less, \
                 so that the probe does not use up its chunk space",
                format_human(info.total_bytes),
                format_human(target),
                format_human(cap.max(MIN_FILE))
            ));
        }
    }
    if info.total_bytes > 0 && free < target + others {
        let g = ((free - others) / ZERO_FILL_STEP * ZERO_FILL_STEP).clamp(MIN_GROWTH, target);
        notes.push(format!(
            "scaled down: growth measured on {} instead of {} ({} free)",
            format_human(g),
            format_human(target),
            format_human(free)
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
    super::busy::Busy,
);

pub(super) struct Run<'a> {
    pub(super) dir: &'a Path,
    pub(super) opts: &'a ProbeOptions<'a>,
    pub(super) budget: &'a Budget,
    pub(super) start: Instant,
    pub(super) step: usize,
    pub(super) steps: usize,
}

impl Run<'_> {
    pub(super) fn interrupted(&self) -> Error {
        Error::refused_errno(
            "probe",
            self.dir.parent().unwrap_or(self.dir),
            Errno::CANCELED,
            "interrupted",
        )
    }

    pub(super) fn cancelled(&self) -> Result<()> {
        if self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(self.interrupted());
        }
        Ok(())
    }

    pub(super) fn begin(&mut self, what: String) -> Result<()> {
        self.cancelled()?;
        self.step += 1;
        if let Some(p) = self.opts.progress {
            p(&ProbeProgress {
                step: self.step,
                steps: self.steps.max(self.step),
                what,
                elapsed: self.start.elapsed(),
                budget: self.budget.total,
            });
        }
        Ok(())
    }

    pub(super) fn all(&mut self, growth_size: u64, notes: &mut Vec<String>) -> Result<Sections> {
        let b = self.budget;
        let sweep_steps = if b.sweep { SWEEP_RECORDS.len() * 3 } else { 0 };
        self.steps =
            1 + Strategy::ALL.len() + b.rounds * super::plan::Case::all().len() + sweep_steps;
        self.begin("filesystem facts and capabilities".into())?;
        let info = fs_info_uncached(self.dir)?.with_block_devices();
        let devices: Vec<String> = match &info.block_devices {
            Ok(d) => d.iter().map(|d| d.name.clone()).collect(),
            Err(_) => vec![],
        };
        let (_, before, idle_before) = super::busy::Snapshot::idle_window(&devices);
        let growth = self.growth(growth_size)?;
        notes.extend(allocation_notes(&info, &growth));
        let commit = self.commit(&info, &growth, notes)?;
        let (end, _, idle_after) = super::busy::Snapshot::idle_window(&devices);
        let busy = before.until_judged(&end, idle_before.max(idle_after));
        if busy.busy {
            notes.push(format!(
                "the machine was busy while measuring ({}): the figures are noisier, and a choice is made only where the runs separate",
                busy.reasons.join("; ")
            ));
        }
        let sweep = if b.sweep {
            Some(self.sweep(commit.file_size, notes)?)
        } else {
            None
        };
        Ok((info, commit, growth, sweep, busy))
    }

    pub(super) fn growth(&mut self, size: u64) -> Result<GrowthSection> {
        let mut results = vec![];
        for s in Strategy::ALL {
            self.begin(format!("growth of {} by {s}", format_human(size)))?;
            results.push(self.grow_one(s, size)?);
        }
        Ok(GrowthSection {
            target_size: size,
            results,
        })
    }

    pub(super) fn grow_one(&self, s: Strategy, size: u64) -> Result<GrowthResult> {
        let p = self.dir.join(format!("grow-{}", s.name()));
        let _ = std::fs::File::create(&p).map_err(|e| Error::from_io("create", &p, None, e))?;
        let r = self.grow_timed(&p, s, size);
        let allocated = sys::stat(&p).map(|st| st.blocks * 512).unwrap_or(0);
        let _ = std::fs::remove_file(&p);
        let (bytes, secs, capped) = match r {
            Ok(x) => x,
            Err(e)
                if crate::errno::unsupported_raw(
                    crate::errno::Call::Fallocate,
                    e.raw_os_error(),
                ) =>
            {
                return Ok(GrowthResult {
                    strategy: s,
                    errno: e.raw_os_error(),
                    unsupported: Some(e.to_string()),
                    bytes: 0,
                    seconds: 0.0,
                    bytes_per_sec: 0.0,
                    allocated_bytes: 0,
                    capped: false,
                })
            }
            Err(e) => return Err(e),
        };
        Ok(GrowthResult {
            strategy: s,
            unsupported: None,
            errno: None,
            bytes,
            seconds: secs,
            bytes_per_sec: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
            allocated_bytes: allocated,
            capped,
        })
    }

    /// Grows `p` from empty by `s` with `fdatasync`; zero-fill goes in
    /// synced steps sized to take about [`ZERO_FILL_STEP_TIME`] each and
    /// stops at the time cap. Returns (bytes, seconds, capped).
    pub(super) fn grow_timed(&self, p: &Path, s: Strategy, size: u64) -> Result<(u64, f64, bool)> {
        let opts = GrowOptions {
            choice: StrategyChoice::exactly(s),
            intent: Intent::Bulk,
            sync: true,
            cancel: self.opts.cancel,
            ..Default::default()
        };
        let t0 = Instant::now();
        if s != Strategy::ZeroFill {
            grow(p, size, &opts)?;
            return Ok((size, t0.elapsed().as_secs_f64(), false));
        }
        let mut len = 0;
        let mut step = ZERO_FILL_FIRST_STEP;
        while len < size {
            let next = (len + step).min(size);
            let ts = Instant::now();
            grow(p, next, &opts)?;
            let rate = (next - len) as f64 / ts.elapsed().as_secs_f64().max(1e-6);
            len = next;
            if len < size && t0.elapsed() >= self.budget.growth_cap {
                return Ok((len, t0.elapsed().as_secs_f64(), true));
            }
            // The next step takes about ZERO_FILL_STEP_TIME at this rate,
            // in whole MiB, so a slow device cannot blow the cap by much.
            let want = (rate * ZERO_FILL_STEP_TIME.as_secs_f64()) as u64;
            step = (want >> 20 << 20).clamp(ZERO_FILL_FIRST_STEP, ZERO_FILL_STEP);
        }
        Ok((len, t0.elapsed().as_secs_f64(), false))
    }
}

/// Explains growth that left more allocated than the file's size (xfs,
/// and others, preallocate beyond the end of a file that grows by writes:
/// speculative preallocation, given back later), and says where a
/// strategy that promises reserved space reserved less than half of it
/// (`st_blocks`; a `fallocate` that succeeds and reserves nothing).
fn allocation_notes(info: &FsInfo, growth: &GrowthSection) -> Vec<String> {
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
            format!(
                "{} succeeded but only {} of {} is allocated afterwards (st_blocks): this filesystem did not reserve the space",
                g.strategy,
                format_human(g.allocated_bytes),
                format_human(g.bytes)
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
            format!(
                "{}: {} allocated right after growing {}: {why}",
                g.strategy,
                format_human(g.allocated_bytes),
                format_human(g.bytes)
            )
        });
    short.chain(over).collect()
}

impl SpaceState {
    /// Returns the strategy whose support this state needs, if any.
    pub(super) fn needs(self) -> Option<Strategy> {
        match self {
            SpaceState::Allocated => Some(Strategy::Allocate),
            SpaceState::WriteZeroed => Some(Strategy::WriteZeroes),
            _ => None,
        }
    }
}
