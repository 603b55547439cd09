//! The log's only way to storage: a narrow seam.
//!
//! Every call the log makes to the filesystem goes through [`Storage`]
//! (directory operations) and [`SegmentFile`] (one open segment): create,
//! open, read, `pwrite`/`pwritev`, `fdatasync`, `fsync`, growth, rename,
//! unlink and directory `fsync`. [`Real`] issues them through [`crate::sys`]; the
//! power-cut tests put a model behind the same seam that keeps a *live* and
//! a *durable* image of the directory, so that a cut can be taken at any
//! call and recovery run on what a real power loss could leave (see
//! `docs/wal.md`, "What survives a power cut").
//!
//! Calls return the bare errno; the callers name the operation and the
//! path (rule 7 of `docs/design.md`).

use crate::durable::{self, Steps};
use crate::error::{Error, Result};
use crate::grow::GrowOptions;
use crate::policy::StrategyChoice;
use crate::strategy::{Intent, Strategy};
use crate::sys::{self, Errno};
use rustix::fd::OwnedFd;
use rustix::fs::OFlags;
use rustix::io::IoSlice;
use std::ffi::OsString;
use std::path::Path;

/// How [`Storage::open`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenMode {
    /// An existing file, for reading.
    Read,
    /// An existing file, for reading and writing.
    ReadWrite,
    /// A new file (`O_CREAT | O_EXCL`), for reading and writing.
    CreateNew,
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub name: OsString,
    pub is_file: bool,
}

/// An open segment file.
pub(crate) trait SegmentFile: Send + Sync {
    /// `pread`: fills `buf` from `offset`; fewer bytes only at end of file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::result::Result<usize, Errno>;
    /// `pwritev` of `bufs` at `offset` (`pwrite` for one buffer); may
    /// write fewer bytes.
    fn write_at(&self, bufs: &[IoSlice<'_>], offset: u64) -> std::result::Result<usize, Errno>;
    /// `pwritev2(RWF_DSYNC)` of `bufs` at `offset`: these bytes (and the
    /// size, if they extend the file) are durable when it returns; earlier
    /// unsynced writes elsewhere in the file are not. May write fewer bytes.
    fn write_at_dsync(
        &self,
        bufs: &[IoSlice<'_>],
        offset: u64,
    ) -> std::result::Result<usize, Errno>;
    /// `fdatasync`: the data written so far, and the size, are durable.
    fn fdatasync(&self) -> std::result::Result<(), Errno>;
    /// `fsync`: as `fdatasync`, and the rest of the inode.
    fn fsync(&self) -> std::result::Result<(), Errno>;
    /// `fstat`: the file's type if it is not a regular file, and its size.
    fn stat(&self) -> std::result::Result<(Option<&'static str>, u64), Errno>;
    /// Turns `O_DIRECT` on (or off) for later reads and writes.
    fn set_direct(&self, on: bool) -> std::result::Result<(), Errno>;
    /// Grows the file to `target` bytes with the library's growth (`path`
    /// names it in errors, `probe_path` is where it is now); returns the
    /// strategy used, with the fallbacks tried before it.
    fn grow(
        &self,
        path: &Path,
        probe_path: &Path,
        target: u64,
        opts: &GrowOptions<'_>,
    ) -> Result<String>;
}

/// The directory operations of the log.
pub(crate) trait Storage: Send + Sync {
    /// `mkdir` (not its parents); `Ok(false)` if it already existed.
    fn create_dir(&self, dir: &Path) -> std::result::Result<bool, Errno>;
    /// Whether `path` is a directory (`stat`); the type's name if not.
    fn dir_kind(&self, path: &Path) -> std::result::Result<Option<&'static str>, Errno>;
    /// Opens and `flock`s (exclusive, non-blocking) the file `path`,
    /// creating it; the lock lasts as long as the returned guard.
    fn lock(&self, path: &Path) -> std::result::Result<Box<dyn Send + Sync>, Errno>;
    /// Lists `dir`.
    fn list(&self, dir: &Path) -> std::result::Result<Vec<Entry>, Errno>;
    /// Opens `path`.
    fn open(&self, path: &Path, mode: OpenMode)
        -> std::result::Result<Box<dyn SegmentFile>, Errno>;
    /// `rename(2)`, replacing `to` if it exists.
    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno>;
    /// Renames without replacing (`RENAME_NOREPLACE`, or a checked rename
    /// where the filesystem lacks it); a note says when it was the latter.
    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<String>>;
    /// `unlink(2)`.
    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno>;
    /// `fsync` of directory `dir`: names created, renamed or removed in it
    /// become durable. Returns which step failed.
    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)>;
    /// Whether `dir` is on a network or FUSE filesystem (true when unknown).
    fn is_network(&self, dir: &Path) -> bool;
    /// The kind of filesystem `dir` is on, when known.
    fn fs_kind(&self, dir: &Path) -> Option<crate::fs_info::FsKind>;
    /// Asks the policy how a segment of `size` bytes is prepared here and
    /// returns its reason; checks, before the segment is grown in steps,
    /// that the space is free when the plan prepares it with holes (which
    /// reserve none): ENOSPC must show here, not in a commit.
    fn segment_plan(
        &self,
        dir: &Path,
        path: &Path,
        size: u64,
        choice: &StrategyChoice,
    ) -> Result<Option<String>>;
}

/// The real filesystem, through [`crate::sys`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Real;

struct RealFile(OwnedFd);

impl SegmentFile for RealFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::result::Result<usize, Errno> {
        let mut got = 0;
        while got < buf.len() {
            match sys::pread(&self.0, &mut buf[got..], offset + got as u64)? {
                0 => break,
                n => got += n,
            }
        }
        Ok(got)
    }

    fn write_at(&self, bufs: &[IoSlice<'_>], offset: u64) -> std::result::Result<usize, Errno> {
        match bufs {
            [one] => sys::pwrite(&self.0, one, offset),
            _ => sys::pwritev(&self.0, bufs, offset),
        }
    }

    fn write_at_dsync(
        &self,
        bufs: &[IoSlice<'_>],
        offset: u64,
    ) -> std::result::Result<usize, Errno> {
        sys::pwritev_dsync(&self.0, bufs, offset)
    }

    fn fdatasync(&self) -> std::result::Result<(), Errno> {
        sys::fdatasync(&self.0)
    }

    fn fsync(&self) -> std::result::Result<(), Errno> {
        sys::fsync(&self.0)
    }

    fn stat(&self) -> std::result::Result<(Option<&'static str>, u64), Errno> {
        let st = sys::fstat(&self.0)?;
        Ok(((!st.is_regular()).then(|| st.type_name()), st.size))
    }

    fn set_direct(&self, on: bool) -> std::result::Result<(), Errno> {
        let flags = sys::status_flags(&self.0)?;
        let flags = if on {
            flags | OFlags::DIRECT
        } else {
            flags - OFlags::DIRECT
        };
        sys::set_status_flags(&self.0, flags)
    }

    fn grow(
        &self,
        path: &Path,
        probe_path: &Path,
        target: u64,
        opts: &GrowOptions<'_>,
    ) -> Result<String> {
        let r = crate::grow::grow_fd_named(&self.0, path, probe_path, target, opts)?;
        let mut what = r.strategy.name().to_string();
        for f in &r.fallbacks {
            what.push_str(&format!(" (after {}: {})", f.strategy, f.error));
        }
        Ok(what)
    }
}

impl Storage for Real {
    fn create_dir(&self, dir: &Path) -> std::result::Result<bool, Errno> {
        match sys::mkdir(dir, 0o777) {
            Ok(()) => Ok(true),
            Err(e) if e == Errno::EXIST => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn dir_kind(&self, path: &Path) -> std::result::Result<Option<&'static str>, Errno> {
        let st = sys::stat(path)?;
        Ok((!st.is_dir()).then(|| st.type_name()))
    }

    fn lock(&self, path: &Path) -> std::result::Result<Box<dyn Send + Sync>, Errno> {
        let fd = sys::open(path, OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC, 0o644)?;
        sys::flock_exclusive_nonblocking(&fd)?;
        Ok(Box::new(fd))
    }

    fn list(&self, dir: &Path) -> std::result::Result<Vec<Entry>, Errno> {
        Ok(sys::read_dir(dir)?
            .into_iter()
            .map(|e| Entry {
                is_file: e.file_type == rustix::fs::FileType::RegularFile,
                name: e.name,
            })
            .collect())
    }

    fn open(
        &self,
        path: &Path,
        mode: OpenMode,
    ) -> std::result::Result<Box<dyn SegmentFile>, Errno> {
        let (flags, perm) = match mode {
            OpenMode::Read => (OFlags::RDONLY | OFlags::NOCTTY, 0),
            OpenMode::ReadWrite => (OFlags::RDWR | OFlags::NOCTTY, 0),
            OpenMode::CreateNew => (OFlags::RDWR | OFlags::CREATE | OFlags::EXCL, 0o644),
        };
        let fd = sys::open(path, flags | OFlags::CLOEXEC, perm)?;
        Ok(Box::new(RealFile(fd)))
    }

    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno> {
        sys::rename(from, to)
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<String>> {
        durable::rename_noreplace(from, to)
    }

    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno> {
        sys::unlink(path)
    }

    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        sys::fsync_dir(dir)
    }

    fn is_network(&self, dir: &Path) -> bool {
        crate::fs_info::identify(dir).map_or(true, |i| i.network || i.kind.is_network())
    }

    fn fs_kind(&self, dir: &Path) -> Option<crate::fs_info::FsKind> {
        crate::fs_info::identify(dir).ok().map(|i| i.kind)
    }

    fn segment_plan(
        &self,
        dir: &Path,
        path: &Path,
        size: u64,
        choice: &StrategyChoice,
    ) -> Result<Option<String>> {
        segment_plan(dir, path, size, choice).map(Some)
    }
}

/// `fsync`s directory `dir`, making names created, renamed or removed in
/// it durable; the error names the step and the directory.
pub(crate) fn sync_dir(io: &dyn Storage, dir: &Path) -> Result<()> {
    io.sync_dir(dir)
        .map_err(|(op, e)| Error::io(op, dir, None, e))
}

/// Renames `file`, open as `from`, to `to` in `dir`, so that a crash at
/// any point leaves the complete file under one of the two names, and the
/// rename durable when this returns (PostgreSQL's `durable_rename`). Each
/// step, and the crash state it prevents:
///
/// 1. `fsync` the file: its data and size are durable before any name
///    says it is complete; without it a power cut could leave `to` naming
///    a short or empty file.
/// 2. Rename (`RENAME_NOREPLACE` unless `replace`). `after_rename` runs
///    here (fault injection).
/// 3. `fsync` the file again, under its new name: filesystems that record
///    the rename in the inode (its change time, a parent pointer) get that
///    durable too, so that no later step depends on it.
/// 4. `fsync` the directory: the rename itself is durable. Until then a
///    power cut may undo it. That is what lost acknowledged records: a new
///    segment used before this step came back after a cut under its
///    temporary name, and recovery removed it as an unfinished creation.
///
/// Returns a note when the filesystem lacked `RENAME_NOREPLACE` and a
/// checked rename was used. An error says whether the rename had happened
/// (`true`: the file is under `to` now, its syncs failed).
pub(crate) fn durable_rename(
    io: &dyn Storage,
    file: &dyn SegmentFile,
    from: &Path,
    to: &Path,
    dir: &Path,
    replace: bool,
    after_rename: impl FnOnce(),
) -> std::result::Result<Option<String>, (Error, bool)> {
    let steps = Steps {
        replace,
        ..Steps::DURABLE
    };
    durable::publish(
        &Seam { io, file },
        (from, to, from),
        dir,
        steps,
        after_rename,
    )
}

/// The log's storage as [`durable::publish`] sees it.
struct Seam<'a> {
    io: &'a dyn Storage,
    file: &'a dyn SegmentFile,
}

impl durable::Namespace for Seam<'_> {
    fn fsync_file(&self) -> std::result::Result<(), Errno> {
        self.file.fsync()
    }

    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno> {
        self.io.rename(from, to)
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<String>> {
        self.io.rename_noreplace(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        self.io.sync_dir(dir)
    }
}

/// The policy's plan for log space in `dir`, as its reason. When it (or the
/// caller) prepares log space with holes
/// (copy-on-write filesystems, [`crate::policy::rules::COW_LOG_STRATEGY`]),
/// checks that the whole segment's `size` is free before the first step: a
/// sparse file reserves nothing, so ENOSPC must be found here, not in a
/// commit. Elsewhere the growth itself reserves the space.
fn segment_plan(dir: &Path, path: &Path, size: u64, choice: &StrategyChoice) -> Result<String> {
    // Measured (once per device, then cached), as the growth that follows
    // asks it: the same plan and reason.
    let info = if choice.is_policy() {
        crate::fs_info::fs_info(dir)?
    } else {
        crate::fs_info::identify(dir)?
    };
    let plan = crate::policy::plan(&info, Intent::Log, choice);
    if plan.first() != Strategy::Sparse {
        return Ok(plan.reason);
    }
    // Copy-on-write: f_bavail is what data can use (f_bfree is raw space).
    let free = info.free_bytes;
    if free < size {
        return Err(Error::refused(
            "prepare",
            path,
            Errno::NOSPC,
            format!(
                "a {} segment needs that much free space; the filesystem has {}",
                crate::units::format_human(size),
                crate::units::format_human(free)
            ),
        ));
    }
    Ok(plan.reason)
}
