//! [`copy()`]: a file copy that keeps holes, shares or offloads where it can,
//! and only then reads and writes.

mod alloc;
mod device;
mod job;
mod shared;
mod stream;
mod types;

#[cfg(feature = "internals")]
pub use shared::COPY_WRITE_SIZE;
pub use types::{CopyFallback, CopyMethod, CopyOptions, CopyReport, ReflinkMode, SparseMode};

use crate::durable::{Steps, TempFile};
use crate::error::{Error, Result};
use crate::fs_info::FsKind;
use crate::note::{Note, NoteKind};
use crate::sys::{self, Errno};
use job::Job;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::OFlags;
use shared::{length_now, looks_sparse};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Says when the source's holes could not be seen: a network or FUSE
/// filesystem whose `SEEK_HOLE` (usually the kernel's generic one, as on
/// sshfs) reported every byte as data, in a copy that did not read for
/// zeros. Without it such a copy would look complete and lose the holes
/// silently.
fn blind_source_note(
    sfd: BorrowedFd<'_>,
    report: &CopyReport,
    opts: &CopyOptions<'_>,
) -> Option<Note> {
    if opts.sparse != SparseMode::Auto
        || report.zero_bytes_holed > 0
        || report.holes.is_some_and(|h| h > 0)
        || report.len == 0
        || report.bytes_cloned > 0
    {
        return None;
    }
    let kind = FsKind::from_magic(sys::fstatfs(sfd).ok()?.magic);
    kind.seek_hole_may_be_blind().then(|| {
        Note::new(
            NoteKind::HolesUnseen,
            format!(
                "the source is on {}, whose SEEK_HOLE reports every byte as data: any holes in it could not be seen \
                 and would have been copied as zeros; sparse mode `always` finds zero blocks by reading them",
                kind.name()
            ),
        )
    })
}

/// Copies the regular file `src` to `dst` (see [`CopyOptions`]), keeping
/// holes, and returns what it did.
///
/// The ladder: `FICLONE` when allowed (`reflink` auto with `sparse` auto,
/// or `reflink` always) → `copy_file_range` per data extent (found with
/// `SEEK_DATA`/`SEEK_HOLE`) when no zero scan is needed → `pread` +
/// [`SparseWriter`](crate::sparse::SparseWriter). A rung falls to the next only when nothing has been
/// copied yet; each fallback is in the report.
///
/// When `dst` is a directory the copy goes into it under the source's name.
/// The copy is made under a temporary name in the destination's directory
/// and renamed into place only when complete (replacing an existing file
/// only with `force`; a symbolic link at the destination is replaced, its
/// target untouched), so the destination never holds a partial copy; on
/// any error the temporary file is removed. Refuses, changing nothing: a
/// source that is not a regular file, a destination that is the source
/// (also through a hard or symbolic link), an existing destination without
/// `force`, and a destination that is a directory or special file.
///
/// The copy holds the source's first `len` bytes, `len` being its length
/// when the copy began: bytes appended meanwhile are not copied (the
/// report notes it); a source that shrinks meanwhile fails the copy.
pub fn copy(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    opts: &CopyOptions<'_>,
) -> Result<CopyReport> {
    let src = src.as_ref();
    let dst = dst.as_ref();
    let start = Instant::now();
    let before = sys::counters();
    opts.validate()
        .map_err(|e| Error::refused_errno("copy", src, Errno::INVAL, e.message))?;
    let (sfd, sst) = open_source(src)?;
    let stream = stream::stream_reason(sfd.as_fd(), &sst);
    let dst = resolve_destination(src, dst)?;
    let source = (sfd.as_fd(), &sst);
    let mut report = match open_special_destination(src, &sst, &dst, opts)? {
        Some((out, true)) => copy_onto_device(src, &dst, source, stream, out.as_fd(), opts)?,
        Some((out, false)) => copy_into_stream(src, &dst, source, stream, out.as_fd(), opts)?,
        None => copy_to_file(src, &dst, source, stream, opts)?,
    };
    let cost = sys::counters().since(before);
    report.syscalls = cost.total;
    report.write_syscalls = cost.writes;
    report.elapsed = start.elapsed();
    Ok(report)
}

/// The copy into a new file under a temporary name, renamed into place.
fn copy_to_file(
    src: &Path,
    dst: &Path,
    (sfd, sst): (BorrowedFd<'_>, &sys::Stat),
    stream: Option<Note>,
    opts: &CopyOptions<'_>,
) -> Result<CopyReport> {
    let replaced = check_destination(src, sst, dst, opts.force)?;
    let mut tmp = TempFile::create("copy", dst, sst.mode & 0o777)?;
    let mut report = CopyReport::new(src, dst, sst, opts, replaced);
    let scan =
        opts.sparse == SparseMode::Always || (opts.sparse == SparseMode::Auto && looks_sparse(sst));
    let job = Job::new((src, sfd), (dst, tmp.fd.as_fd()), sst.size, opts, scan);
    match stream {
        Some(why) => {
            job.stream_to_file(sst.is_fifo(), &mut report)?;
            read_to_end(&mut report, sst, why);
        }
        None => job.run(&mut report)?,
    }
    if opts.keep_allocation {
        job.keep_allocation(&mut report)?;
    }
    finish_copy(&job, sst, true, &mut report)?;
    let steps = publish_steps(opts, replaced, dst, &mut report);
    // A cancellation that came in after the last chunk still counts: the
    // destination has not appeared yet.
    job.check_cancel()?;
    report.notes.extend(tmp.publish(steps)?);
    report.synced = opts.sync;
    Ok(report)
}

/// Records that the source was read to its end because `why`; an empty
/// file that read as empty is just an empty file (method `none`, its size
/// confirmed).
fn read_to_end(report: &mut CopyReport, sst: &sys::Stat, why: Note) {
    if report.len == 0 && sst.is_regular() && sst.size == 0 {
        report.method = CopyMethod::None;
        return;
    }
    report.size_reliable = false;
    report.notes.push(why);
}

/// The copy into a pipe, FIFO or character device: written in order, holes
/// as zeros; nothing to rename, no attributes to give.
fn copy_into_stream(
    src: &Path,
    dst: &Path,
    (sfd, sst): (BorrowedFd<'_>, &sys::Stat),
    stream: Option<Note>,
    out: BorrowedFd<'_>,
    opts: &CopyOptions<'_>,
) -> Result<CopyReport> {
    let mut report = CopyReport::new(src, dst, sst, opts, false);
    report.dst_allocated = None;
    let job = Job::new((src, sfd), (dst, out), sst.size, opts, false);
    let mut sink = stream::StreamSink {
        fd: out,
        path: dst,
        written: 0,
        zeros_written: 0,
    };
    let fifo = stream.as_ref().map(|_| sst.is_fifo());
    job.copy_to_stream(&mut sink, fifo, &mut report)?;
    if let Some(why) = stream {
        read_to_end(&mut report, sst, why);
    } else {
        finish_copy(&job, sst, false, &mut report)?;
    }
    if opts.preserve {
        report.notes.push(Note::new(
            NoteKind::NotPreserved,
            "mode, owner and times not preserved: the destination is not a file",
        ));
    }
    if opts.sync {
        match sys::fsync(out) {
            Ok(()) => report.synced = true,
            Err(Errno::INVAL | Errno::ROFS) => report.notes.push(Note::new(
                NoteKind::NotSynced,
                "not synced: the destination (a pipe or device) cannot be synced",
            )),
            Err(e) => return Err(Error::io("fsync", dst, None, e)),
        }
    }
    Ok(report)
}

impl CopyReport {
    /// The report of a copy that has not started.
    fn new(
        src: &Path,
        dst: &Path,
        sst: &sys::Stat,
        opts: &CopyOptions<'_>,
        replaced: bool,
    ) -> CopyReport {
        CopyReport {
            src: src.to_path_buf(),
            dst: dst.to_path_buf(),
            len: sst.size,
            method: CopyMethod::None,
            fallbacks: Vec::new(),
            sparse: opts.sparse,
            reflink: opts.reflink,
            bytes_cloned: 0,
            bytes_offloaded: 0,
            bytes_copied: 0,
            data_extents: Some(0),
            holes: Some(0),
            hole_bytes: Some(0),
            zero_bytes_holed: 0,
            bytes_kept_allocated: 0,
            bytes_zeroed: 0,
            src_allocated: None,
            dst_allocated: None,
            size_reliable: true,
            syscalls: 0,
            write_syscalls: 0,
            replaced,
            preserved: false,
            synced: false,
            notes: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }
}

/// Bytes allocated to the open file `fd` (`st_blocks`), or `None` where
/// `st_blocks` does not measure allocation: pipes, and FUSE and network
/// filesystems (sshfs reports `st_size / 512` whatever the file holds).
fn allocation(fd: BorrowedFd<'_>, st: &sys::Stat) -> Option<u64> {
    if !st.is_regular() {
        return None;
    }
    let kind = FsKind::from_magic(sys::fstatfs(fd).ok()?.magic);
    let measured = kind.st_blocks_measures_allocation();
    measured.then_some(st.blocks * 512)
}

/// After the data is in the copy: notes on what could not be seen, refuses a
/// source that shrank, notes one that grew, preserves attributes when asked
/// and records what the copy allocated.
fn finish_copy(
    job: &Job<'_>,
    sst: &sys::Stat,
    into_file: bool,
    report: &mut CopyReport,
) -> Result<()> {
    if let Some(note) = blind_source_note(job.sfd, report, job.opts) {
        report.notes.push(note);
    }
    if report.size_reliable {
        let now = job.current_len(sst.size);
        if now < sst.size {
            return Err(job.shrank(now, now));
        }
        if now > sst.size {
            report.notes.push(Note::new(
                NoteKind::SourceGrew,
                format!(
                    "the source grew by {} bytes during the copy; the copy holds its first {} bytes (its length when the copy began)",
                    now - sst.size,
                    sst.size
                ),
            ));
        }
    }
    if report.size_reliable {
        report.src_allocated = allocation(job.sfd, sst);
    }
    if into_file {
        if job.opts.preserve {
            preserve(job.tfd, job.dst, sst, report)?;
        }
        let dst_st = sys::fstat(job.tfd).map_err(|e| Error::io("fstat", job.dst, None, e))?;
        report.dst_allocated = allocation(job.tfd, &dst_st);
    }
    Ok(())
}

/// How the copy is renamed into place, and what a power cut may leave
/// (PostgreSQL's durable_rename reasons):
/// - the copy is fsynced before the rename with `sync`, and also without it
///   when it replaces an existing file: otherwise the rename can reach the
///   disk before the copy's data, and a cut leaves the name holding a short
///   or empty file while the old file is gone (ext4 does the same for
///   renames over a file, auto_da_alloc; xfs and btrfs do not). With the
///   fsync, the name holds the complete old file or the complete copy.
/// - a new name without `sync`: the name may survive a cut while the data
///   did not (a short or empty file), or not survive.
/// - the directory is fsynced after the rename only with `sync`; without it
///   a cut may undo the rename (the old file, or no file, comes back).
///
/// Replacing: the destination found at the start, or one that appeared
/// since (`force` replaces it too).
fn publish_steps(
    opts: &CopyOptions<'_>,
    replaced: bool,
    dst: &Path,
    report: &mut CopyReport,
) -> Steps {
    let replacing = replaced || (opts.force && sys::lstat(dst).is_ok());
    if replacing && !opts.sync {
        report.notes.push(Note::new(
            NoteKind::DirectoryNotSynced,
            "the copy was fsynced before it replaced the existing file, so a power cut leaves either file whole under the name; the directory was not synced (sync off): the old file may come back",
        ));
    }
    Steps {
        fsync_before: opts.sync || replacing,
        replace: opts.force,
        fsync_after: false,
        sync_dir: opts.sync,
    }
}

/// Refuses special files other than pipes and FIFOs before opening them
/// (opening a device can have effects: a watchdog starts, a tape rewinds on
/// close), opens the source and checks again what was opened.
fn open_source(src: &Path) -> Result<(OwnedFd, sys::Stat)> {
    let readable = |st: &sys::Stat| st.is_regular() || st.is_fifo() || st.is_block_device();
    if let Ok(st) = sys::stat(src) {
        if !readable(&st) {
            return Err(not_copyable(src, &st));
        }
    }
    let sfd = open_source_fd(src)?;
    let mut sst = sys::fstat(&sfd).map_err(|e| Error::io("fstat", src, None, e))?;
    if !readable(&sst) {
        return Err(not_copyable(src, &sst));
    }
    sst.size = length_now(sfd.as_fd(), &sst)
        .map_err(|e| Error::io("ioctl(BLKGETSIZE64)", src, None, e))?;
    Ok((sfd, sst))
}

fn not_copyable(src: &Path, st: &sys::Stat) -> Error {
    if st.is_dir() {
        return Error::not_regular("copy", src, st, None);
    }
    Error::refused_errno(
        "copy",
        src,
        Errno::INVAL,
        format!(
            "is a {}; fspace copy reads regular files, block devices, pipes and FIFOs",
            st.type_name()
        ),
    )
}

/// Opens the source for reading. `O_NONBLOCK` keeps `open` from waiting
/// for a FIFO's writer: the copy then waits in `poll`, where it stays
/// cancellable.
fn open_source_fd(src: &Path) -> Result<OwnedFd> {
    sys::open(src, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY, 0)
        .map_err(|e| Error::io("open", src, None, e))
}

/// Opens a destination that is not a file to replace: a pipe, FIFO or
/// character device (such as `/dev/stdout` or `/dev/null`), which the copy
/// writes into in order, or a block device (`true`), which it writes at
/// offsets. `None` for anything else. Opening a FIFO waits for its reader,
/// as it does for `cp`. A block device needs `force` (its contents are
/// overwritten) and is opened `O_EXCL`, so one that is mounted or in use
/// is refused (`EBUSY`).
fn open_special_destination(
    src: &Path,
    sst: &sys::Stat,
    dst: &Path,
    opts: &CopyOptions<'_>,
) -> Result<Option<(OwnedFd, bool)>> {
    let Ok(st) = sys::stat(dst) else {
        return Ok(None);
    };
    let device = st.is_block_device();
    if !st.is_fifo() && !st.is_char_device() && !device {
        return Ok(None);
    }
    let same_device = device && sst.is_block_device() && st.rdev == sst.rdev;
    if same_device || (st.dev == sst.dev && st.ino == sst.ino) {
        return Err(Error::refused_errno(
            "copy",
            dst,
            Errno::INVAL,
            format!("is the same file as {}; nothing was copied", src.display()),
        ));
    }
    if device && !opts.force {
        return Err(Error::refused_errno(
            "copy",
            dst,
            Errno::EXIST,
            "is a block device: the copy would overwrite its contents; nothing was written (add the force option, CLI: --force)",
        ));
    }
    let flags = if device {
        OFlags::WRONLY | OFlags::EXCL
    } else {
        OFlags::WRONLY | OFlags::NOCTTY
    };
    let fd = sys::open(dst, flags, 0).map_err(|e| Error::io("open", dst, None, e))?;
    if device {
        let size = sys::block_device_size(&fd)
            .map_err(|e| Error::io("ioctl(BLKGETSIZE64)", dst, None, e))?;
        if sst.size > size && !sst.is_fifo() {
            return Err(Error::refused_errno(
                "copy",
                dst,
                Errno::NOSPC,
                format!(
                    "is a block device of {size} bytes, too small for the {} bytes of {}; nothing was written",
                    sst.size,
                    src.display()
                ),
            ));
        }
    }
    Ok(Some((fd, device)))
}

/// The copy onto a block device (see `device.rs`): data written at its
/// offsets, zero ranges zeroed or skipped, the device synced with `sync`.
fn copy_onto_device(
    src: &Path,
    dst: &Path,
    (sfd, sst): (BorrowedFd<'_>, &sys::Stat),
    stream: Option<Note>,
    out: BorrowedFd<'_>,
    opts: &CopyOptions<'_>,
) -> Result<CopyReport> {
    let mut report = CopyReport::new(src, dst, sst, opts, true);
    let scan = opts.sparse != SparseMode::Never;
    let job = Job::new((src, sfd), (dst, out), sst.size, opts, scan);
    let mut sink = device::DeviceSink::new(
        out,
        dst,
        opts.target_is_zero,
        opts.sparse != SparseMode::Never,
    );
    let fifo = stream.as_ref().map(|_| sst.is_fifo());
    job.copy_onto_device(&mut sink, fifo, &mut report)?;
    match stream {
        Some(why) => read_to_end(&mut report, sst, why),
        None => finish_copy(&job, sst, false, &mut report)?,
    }
    if opts.sync {
        sys::fsync(out).map_err(|e| Error::io("fsync", dst, None, e))?;
        report.synced = true;
    }
    Ok(report)
}

/// A destination that is a directory (or a symbolic link to one) means
/// "inside it, under the source's name".
fn resolve_destination(src: &Path, dst: &Path) -> Result<PathBuf> {
    match sys::stat(dst) {
        Ok(st) if st.is_dir() => {
            let name = src.file_name().ok_or_else(|| {
                Error::refused_errno("copy", src, Errno::INVAL, "has no file name to copy under")
            })?;
            Ok(dst.join(name))
        }
        _ => {
            if dst.as_os_str().as_encoded_bytes().ends_with(b"/") {
                // "dst/" names a directory that does not exist.
                return Err(Error::refused_errno(
                    "copy",
                    dst,
                    Errno::NOENT,
                    "is not an existing directory",
                ));
            }
            Ok(dst.to_path_buf())
        }
    }
}

/// Refuses a destination that is the source or, without `force`, exists;
/// returns whether one will be replaced.
fn check_destination(src: &Path, sst: &sys::Stat, dst: &Path, force: bool) -> Result<bool> {
    if let Ok(t) = sys::stat(dst) {
        // Inode numbers catch hard links; resolved paths catch the same name
        // and symbolic links where inode numbers are not stable (sshfs).
        let same_path = match (std::fs::canonicalize(src), std::fs::canonicalize(dst)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same_path || (t.dev == sst.dev && t.ino == sst.ino) {
            return Err(Error::refused_errno(
                "copy",
                dst,
                Errno::INVAL,
                format!(
                    "is the same file as {} (the same name, a hard link or a symbolic link to it); nothing was changed",
                    src.display()
                ),
            ));
        }
    }
    let Ok(l) = sys::lstat(dst) else {
        return Ok(false);
    };
    if l.is_dir() {
        return Err(Error::refused_errno(
            "copy",
            dst,
            Errno::ISDIR,
            "is a directory; fspace copy does not replace directories",
        ));
    }
    if !l.is_regular() && !l.is_symlink() {
        return Err(Error::refused_errno(
            "copy",
            dst,
            Errno::EXIST,
            format!(
                "exists and is a {}; fspace copy replaces only regular files and symbolic links",
                l.type_name()
            ),
        ));
    }
    if !force {
        return Err(Error::refused_errno(
            "copy",
            dst,
            Errno::EXIST,
            "already exists; replace it with the force option (CLI: --force)",
        ));
    }
    Ok(true)
}

/// Gives the copy the source's owner, mode and times (in that order: a
/// change of owner clears setuid bits, and times go last).
fn preserve(
    tfd: BorrowedFd<'_>,
    dst: &Path,
    sst: &sys::Stat,
    report: &mut CopyReport,
) -> Result<()> {
    match sys::fchown(tfd, sst.uid, sst.gid) {
        Ok(()) => {}
        Err(Errno::PERM) => report.notes.push(Note::new(
            NoteKind::OwnerNotPreserved,
            format!(
                "owner {}:{} not preserved: only root may give files away (EPERM)",
                sst.uid, sst.gid
            ),
        )),
        Err(e) => return Err(Error::io("fchown", dst, None, e)),
    }
    sys::fchmod(tfd, sst.mode & 0o7777).map_err(|e| Error::io("fchmod", dst, None, e))?;
    sys::futimens(tfd, sst.atime, sst.mtime).map_err(|e| Error::io("futimens", dst, None, e))?;
    report.preserved = true;
    Ok(())
}
