//! Growing files: five strategies, a fallback ladder, and the `auto` policy.
//!
//! Every call returns a [`GrowReport`] saying what it did: the strategy used,
//! each fallback tried with its errno, the old and new length, the bytes
//! written and the syscalls issued (docs/design.md rule 3). Growth never changes
//! existing bytes and never shrinks a file; on failure the file is put back
//! to its old length and blocks allocated past it are released (rule 2).

mod failure;
mod range;
mod rollback;
mod types;
mod untorn;

use failure::{check_free_space, classify, Failure};
use rollback::{rollback, state_before, Before};

pub use crate::policy::StrategyChoice;
pub use crate::strategy::{Fallback, Intent, Progress, Strategy};
pub use range::{allocate_range, RangeReport};
pub use types::{GrowOptions, GrowReport};

use crate::durable::{Steps, TempFile};
use crate::error::{Error, Result};
use crate::fs_info;
use crate::policy;
use crate::sys::{self, Errno, FallocMode};
use crate::units::{format_human, MAX_FILE_SIZE};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::OFlags;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Grows the file at `path` to `target` bytes (see [`GrowOptions`]).
///
/// Refuses, changing nothing, when the path is not a regular file or
/// `target` is smaller than the current length or larger than Linux's
/// largest file (`MAX_FILE_SIZE`). A created file appears at `path` only
/// once fully grown.
///
/// fspace assumes no other process changes the file's length while it
/// grows it: a concurrent appender's bytes past the old length may be
/// overwritten by a zero-fill, or cut by a rollback.
pub fn grow(path: impl AsRef<Path>, target: u64, opts: &GrowOptions<'_>) -> Result<GrowReport> {
    let path = path.as_ref();
    let start = Instant::now();
    let before = sys::counters();
    match open_existing(path) {
        Ok(fd) => {
            make_ready(&fd, path)?;
            let mut r = grow_open(&fd, path, path, target, opts, before)?.report;
            r.elapsed = start.elapsed();
            Ok(r)
        }
        Err(Errno::NOENT) if opts.create => create_grown(path, target, opts, before, start),
        Err(e) => Err(open_error(path, e)),
    }
}

/// Opens an existing regular file for growing; the errno of a failed
/// `open` is returned bare so that `grow` can tell ENOENT (create) apart.
fn open_existing(path: &Path) -> std::result::Result<OwnedFd, Errno> {
    // O_NONBLOCK keeps open() from hanging on a FIFO without a reader.
    sys::open(path, OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY, 0)
}

/// Refuses anything but a regular file, then clears the O_NONBLOCK that
/// only served `open`.
fn make_ready(fd: &OwnedFd, path: &Path) -> Result<()> {
    check_regular(fd, path)?;
    sys::set_status_flags(fd, OFlags::empty()).map_err(|e| Error::io("fcntl", path, None, e))
}

/// Explains a failed `open`: a FIFO without a reader (ENXIO), a device
/// without a driver (ENODEV), a directory (EISDIR) in words, keeping the
/// errno; anything else as the failed syscall.
fn open_error(path: &Path, errno: Errno) -> Error {
    if matches!(
        errno,
        Errno::NXIO | Errno::ISDIR | Errno::NODEV | Errno::OPNOTSUPP
    ) {
        if let Ok(st) = sys::stat(path) {
            if !st.is_regular() {
                return Error::not_regular("grow", path, &st, Some(errno));
            }
        }
    }
    Error::io("open", path, None, errno)
}

/// Grows an already open regular file; `path` names it in errors and the
/// report, and locates the filesystem for the `auto` policy. `create` is
/// ignored.
pub fn grow_fd<Fd: AsFd>(
    fd: Fd,
    path: impl AsRef<Path>,
    target: u64,
    opts: &GrowOptions<'_>,
) -> Result<GrowReport> {
    let path = path.as_ref();
    let start = Instant::now();
    let before = sys::counters();
    let fd = fd.as_fd();
    check_regular(fd, path)?;
    let mut r = grow_open(fd, path, path, target, opts, before)?.report;
    r.elapsed = start.elapsed();
    Ok(r)
}

/// Grows an open file that is not yet at its final name: errors and the
/// report name `path`; the filesystem is found through `probe_path`, which
/// exists (the segment log's preparer uses this for its temporary files).
pub(crate) fn grow_fd_named<Fd: AsFd>(
    fd: Fd,
    path: &Path,
    probe_path: &Path,
    target: u64,
    opts: &GrowOptions<'_>,
) -> Result<GrowReport> {
    let start = Instant::now();
    let before = sys::counters();
    let mut r = grow_open(fd.as_fd(), path, probe_path, target, opts, before)?.report;
    r.elapsed = start.elapsed();
    Ok(r)
}

/// Refuses anything but a regular file open for writing: a read-only
/// descriptor is `EBADF` whichever strategy would run (`ftruncate` alone
/// would say `EINVAL`, `fallocate` `EBADF`).
fn check_regular<Fd: AsFd>(fd: Fd, path: &Path) -> Result<()> {
    let fd = fd.as_fd();
    let st = sys::fstat(fd).map_err(|e| Error::io("fstat", path, None, e))?;
    if !st.is_regular() {
        return Err(Error::not_regular("grow", path, &st, None));
    }
    let flags = sys::status_flags(fd).map_err(|e| Error::io("fcntl", path, None, e))?;
    if !flags.intersects(OFlags::WRONLY | OFlags::RDWR) {
        return Err(Error::refused_errno(
            "grow",
            path,
            Errno::BADF,
            "the descriptor is not open for writing".to_string(),
        ));
    }
    Ok(())
}

pub use crate::durable::TEMP_MARKER;

fn create_grown(
    path: &Path,
    target: u64,
    opts: &GrowOptions<'_>,
    before: sys::Counters,
    start: Instant,
) -> Result<GrowReport> {
    // open() said ENOENT: a dangling symbolic link would make the final
    // no-replace rename fail after all the work; refuse it now.
    if sys::lstat(path).is_ok_and(|st| st.is_symlink()) {
        return Err(Error::refused_errno(
            "grow",
            path,
            Errno::NOENT,
            "is a dangling symbolic link; create its target or remove the link",
        ));
    }
    if target > MAX_FILE_SIZE {
        return Err(too_large(path, target));
    }
    let mut tmp = TempFile::create("grow", path, 0o666)?;
    // Errors name the path the user asked for; the filesystem is probed
    // through the temporary file, which exists.
    let mut r = grow_open(&tmp.fd, path, &tmp.tmp, target, opts, before)?;
    // With `sync` the data was fdatasync'ed by grow_open; the fsync before
    // the rename adds the inode metadata (mode, times), and the directory
    // fsync makes the name durable. Without it, what a power cut may leave
    // is documented on [`GrowOptions::sync`].
    let steps = Steps {
        fsync_before: opts.sync,
        replace: false,
        fsync_after: false,
        sync_dir: opts.sync,
    };
    r.notes.extend(tmp.publish(steps)?);
    r.path = path.to_path_buf();
    r.created = true;
    let cost = sys::counters().since(before);
    r.syscalls = cost.total.saturating_sub(r.probe_cost.total);
    r.write_syscalls = cost.writes.saturating_sub(r.probe_cost.writes);
    r.elapsed = start.elapsed();
    Ok(r.report)
}

fn too_large(path: &Path, target: u64) -> Error {
    Error::refused_errno(
        "grow",
        path,
        Errno::FBIG,
        format!(
            "{target} bytes ({}) is larger than the largest file Linux allows ({MAX_FILE_SIZE} bytes, 8 EiB - 1)",
            format_human(target)
        ),
    )
}

/// A report under construction, with the syscalls spent describing the
/// filesystem (subtracted from the report's count).
struct Draft {
    report: GrowReport,
    probe_cost: sys::Counters,
}

impl std::ops::Deref for Draft {
    type Target = GrowReport;
    fn deref(&self) -> &GrowReport {
        &self.report
    }
}

impl std::ops::DerefMut for Draft {
    fn deref_mut(&mut self) -> &mut GrowReport {
        &mut self.report
    }
}

fn grow_open<Fd: AsFd>(
    fd: Fd,
    path: &Path,
    probe_path: &Path,
    target: u64,
    opts: &GrowOptions<'_>,
    before: sys::Counters,
) -> Result<Draft> {
    let fd = fd.as_fd();
    let st = sys::fstat(fd).map_err(|e| Error::io("fstat", path, None, e))?;
    let old_len = st.size;
    check_target(path, old_len, target)?;
    if let Some(unit) = opts.untorn_unit {
        untorn::refuse_early(fd, path, unit, opts.choice.named())?;
    }
    // Describing (and, the first time per device, probing) the filesystem
    // issues syscalls that are not this growth's: they are subtracted.
    let probe_start = sys::counters();
    let info = if opts.choice.is_policy() {
        fs_info::fs_info(probe_path)?
    } else {
        fs_info::identify(probe_path)?
    };
    // Untorn writes want written extents: intent log's plan.
    let intent = if opts.untorn_unit.is_some() {
        Intent::Log
    } else {
        opts.intent
    };
    let mut plan = policy::plan(&info, intent, &opts.choice);
    let nocow = make_nocow(fd, &info, intent, opts, old_len, &mut plan);
    let notes = std::mem::take(&mut plan.notes);
    let probe_cost = sys::counters().since(probe_start);
    let prior = state_before(fd, &st);
    let (hint_note, aligned) = match opts.untorn_unit {
        Some(unit) => untorn::prepare(fd, path, &info, old_len..target, unit, &prior)?,
        None => (None, None),
    };
    // The space is allocated already: counting it again as needed would
    // refuse a growth into half the free space.
    let unchecked;
    let opts = if aligned.is_some() {
        unchecked = opts.clone().check_free_space(false);
        &unchecked
    } else {
        opts
    };
    let (strategy, bytes_written, fallbacks) =
        climb(fd, path, &plan.ladder, old_len..target, opts, &prior)?;
    settle(fd, path, strategy, old_len..target, opts, &prior).map_err(|e| {
        // A cancel is the user's doing, reported bare as before; a failed
        // sync lists the strategies abandoned before it.
        if e.kind() == crate::errno::ErrorKind::Interrupted {
            e
        } else {
            with_fallbacks(e, &fallbacks)
        }
    })?;
    let new_len = sys::fstat(fd)
        .map_err(|e| Error::io("fstat", path, None, e))?
        .size;
    let cost = sys::counters().since(before);
    let untorn = opts
        .untorn_unit
        .map(|unit| untorn::report(fd, path, new_len, unit, aligned, hint_note));
    Ok(Draft {
        report: GrowReport {
            path: path.to_path_buf(),
            filesystem: info.display_name(),
            // With an untorn unit, the intent followed (log), not the one
            // given.
            intent,
            requested: opts.choice.named(),
            strategy,
            reason: plan.reason,
            saved_probe: plan.saved,
            fallbacks,
            notes,
            old_len,
            new_len,
            target_len: target,
            bytes_written,
            syscalls: cost.total.saturating_sub(probe_cost.total),
            write_syscalls: cost.writes.saturating_sub(probe_cost.writes),
            synced: opts.sync,
            created: false,
            elapsed: Duration::ZERO,
            untorn,
            nocow,
        },
        probe_cost,
    })
}

/// Refuses a target below the current length (fspace never shrinks a
/// file) or above Linux's largest file, before anything is issued.
fn check_target(path: &Path, old_len: u64, target: u64) -> Result<()> {
    if target < old_len {
        return Err(Error::refused_errno(
            "grow",
            path,
            Errno::INVAL,
            format!(
                "the requested size {} ({}) is smaller than the current length {} ({}); fspace never shrinks a file",
                target,
                format_human(target),
                old_len,
                format_human(old_len)
            ),
        ));
    }
    if target > MAX_FILE_SIZE {
        return Err(too_large(path, target));
    }
    Ok(())
}

/// `err`, with the strategies abandoned before it when there were any.
fn with_fallbacks(err: Error, fallbacks: &[Fallback]) -> Error {
    if fallbacks.is_empty() {
        err
    } else {
        Error::AfterFallbacks {
            source: Box::new(err),
            tried: fallbacks.to_vec(),
        }
    }
}

/// Tries the ladder's strategies in order over `range` until one works;
/// returns it, the bytes it wrote and the ones abandoned before it. On
/// failure the file is rolled back ([`rollback`]).
fn climb(
    fd: BorrowedFd<'_>,
    path: &Path,
    ladder: &[Strategy],
    range: std::ops::Range<u64>,
    opts: &GrowOptions<'_>,
    prior: &Before,
) -> Result<(Strategy, u64, Vec<Fallback>)> {
    let mut fallbacks: Vec<Fallback> = Vec::new();
    let mut last_err = None;
    for &strategy in ladder {
        match run(fd, path, strategy, range.start, range.end, opts) {
            Ok(written) => return Ok((strategy, written, fallbacks)),
            Err(Failure::Unsupported(err)) => {
                fallbacks.push(Fallback::new(strategy, err.unsupported_reason()));
                last_err = Some(err);
            }
            Err(Failure::Fatal(err)) => {
                rollback(fd, prior, range.end);
                return Err(with_fallbacks(err, &fallbacks));
            }
        }
    }
    rollback(fd, prior, range.end);
    let err = last_err
        .unwrap_or_else(|| Error::refused_errno("grow", path, Errno::INVAL, "no strategy to try"));
    let earlier = &fallbacks[..fallbacks.len().saturating_sub(1)];
    Err(with_fallbacks(err, earlier))
}

/// After the strategy ran: honours a cancel that came in during a syscall
/// that cannot be interrupted (a fallocate) before anything is made
/// durable, then syncs when asked (and drops a log's filled pages). Rolls
/// back on failure.
fn settle(
    fd: BorrowedFd<'_>,
    path: &Path,
    strategy: Strategy,
    range: std::ops::Range<u64>,
    opts: &GrowOptions<'_>,
    prior: &Before,
) -> Result<()> {
    if opts
        .cancel
        .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    {
        rollback(fd, prior, range.end);
        return Err(Error::refused_errno(
            "grow",
            path,
            Errno::CANCELED,
            "interrupted; nothing was kept (an existing file is put back to its old length, \
             a file being created is removed)",
        ));
    }
    if !opts.sync {
        return Ok(());
    }
    if let Err(e) = sys::fdatasync(fd) {
        rollback(fd, prior, range.end);
        return Err(Error::io("fdatasync", path, None, e));
    }
    if strategy == Strategy::ZeroFill
        && (opts.intent == Intent::Log || opts.untorn_unit.is_some())
        && opts.drop_filled_pages
        && !range.is_empty()
    {
        // Advisory: failure changes nothing the caller relies on.
        let _ = sys::fadvise_dontneed(fd, range.start, range.end - range.start);
    }
    Ok(())
}

/// Makes log space no-copy-on-write before it grows, where the plan (or
/// the caller, [`GrowOptions::nocow`]) asks; returns whether the file is.
/// Where the attribute is refused (btrfs ignores it on a file that holds
/// data, and refuses it beside compression) or the caller keeps the file
/// copy-on-write, the policy's copy-on-write plan replaces a plan of the
/// policy's; a named strategy stays, the reason saying so.
fn make_nocow(
    fd: BorrowedFd<'_>,
    info: &fs_info::FsInfo,
    intent: Intent,
    opts: &GrowOptions<'_>,
    old_len: u64,
    plan: &mut policy::Plan,
) -> bool {
    if intent != Intent::Log || !opts.nocow.unwrap_or(plan.nocow) {
        if plan.nocow && opts.choice.is_policy() {
            *plan = policy::rules::log_if_nocow_refused(
                info,
                "the caller keeps the file copy-on-write",
            );
        }
        return false;
    }
    match sys::set_nocow(fd) {
        Ok(()) => {
            if !plan.nocow && opts.choice.is_policy() {
                // Asked for where the policy planned copy-on-write space:
                // overwritten in place now, so written ahead, as on ext4.
                *plan = policy::rules::explicit(Strategy::ZeroFill, false);
                plan.reason =
                    "NOCOW file as asked: overwritten in place, so zero-filled".to_string();
            }
            plan.nocow = true;
            true
        }
        Err(e) => {
            let why = if e == Errno::NOTSUP && old_len > 0 {
                "the NOCOW attribute did not stick: the file already holds data".to_string()
            } else {
                format!("the NOCOW attribute was refused ({e})")
            };
            if opts.choice.is_policy() {
                *plan = policy::rules::log_if_nocow_refused(info, &why);
            } else {
                plan.reason = format!("{}; {why}: copy-on-write", plan.reason);
                plan.nocow = false;
            }
            false
        }
    }
}

/// Runs one strategy; returns the bytes written.
fn run(
    fd: BorrowedFd<'_>,
    path: &Path,
    strategy: Strategy,
    old_len: u64,
    target: u64,
    opts: &GrowOptions<'_>,
) -> std::result::Result<u64, Failure> {
    let range = old_len..target;
    let len = target - old_len;
    let falloc = |mode: FallocMode| {
        if len == 0 {
            return Ok(0);
        }
        sys::fallocate(fd, mode, old_len, len)
            .map(|()| 0)
            .map_err(|e| {
                classify(Error::io_flags(
                    "fallocate",
                    mode.flag_names(),
                    path,
                    Some(range.clone()),
                    e,
                ))
            })
    };
    match strategy {
        Strategy::Sparse => {
            if len > 0
                && opts.choice.is_policy()
                && opts.intent != Intent::Sparse
                && opts.check_free_space
            {
                // `auto` chose holes for space that will be written (a log
                // on a copy-on-write filesystem): a full disk must show
                // here, not in a later commit.
                check_free_space(fd, path, range.clone(), "sparse growth")?;
            }
            if len > 0 {
                sys::ftruncate(fd, target)
                    .map_err(|e| classify(Error::io("ftruncate", path, Some(range.clone()), e)))?;
            }
            Ok(0)
        }
        Strategy::Reserve => falloc(FallocMode::KeepSize),
        Strategy::Allocate => falloc(FallocMode::Allocate),
        Strategy::WriteZeroes => falloc(FallocMode::WriteZeroes),
        Strategy::ZeroFill => {
            if len == 0 {
                return Ok(0);
            }
            if opts.check_free_space {
                check_free_space(fd, path, range.clone(), "zero-fill")?;
            }
            crate::zeros::fill(fd, old_len, target, opts.cancel, opts.progress).map_err(
                |(e, reached)| {
                    if e == Errno::CANCELED {
                        return Failure::Fatal(Error::refused_errno(
                            "grow",
                            path,
                            e,
                            format!(
                            "interrupted after {} of {}; nothing was kept (an existing file is put back \
                             to its old length, a file being created is removed)",
                            format_human(reached - old_len),
                            format_human(len)
                        ),
                        ));
                    }
                    // Only ENOSPC/EDQUOT and real I/O errors can stop a write;
                    // none of them means "try another strategy".
                    Failure::Fatal(Error::io("pwritev", path, Some(reached..target), e))
                },
            )
        }
    }
}

setters!(GrowOptions<'a> { choice: StrategyChoice, intent: Intent, sync: bool, create: bool, check_free_space: bool, drop_filled_pages: bool, cancel: Option<&'a AtomicBool>, progress: Option<&'a dyn Fn(Progress)>, untorn_unit: Option<u32>, nocow: Option<bool> });
