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
//! path (rule 7 of `docs/design.md`). The seam does I/O only: what the log
//! asks about the filesystem (its kind, the policy's plan) is asked above
//! it, in `site.rs`.

use crate::durable::{self, Steps};
use crate::error::{Error, Result};
use crate::grow::GrowOptions;
use crate::note::Note;
use crate::strategy::{Fallback, Strategy};
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

/// What [`SegmentFile::grow`] did.
#[derive(Debug, Clone)]
pub(crate) struct Grown {
    /// The strategy that did the work.
    pub strategy: Strategy,
    /// Strategies tried before it, with their errors.
    pub fallbacks: Vec<Fallback>,
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
    /// Sets the no-copy-on-write attribute (`FS_NOCOW_FL`, `chattr +C`)
    /// of an empty file, so that its blocks are overwritten in place; the
    /// error where the filesystem has no such attribute. Storage with no
    /// filesystem behind it has none.
    fn set_nocow(&self) -> std::result::Result<(), Errno> {
        Err(Errno::NOTSUP)
    }
    /// Whether the file is no-copy-on-write (`None`: not known, as for
    /// storage with no filesystem behind it).
    fn is_nocow(&self) -> Option<bool> {
        None
    }
    /// Grows the file to `target` bytes with the library's growth (`path`
    /// names it in errors, `probe_path` is where it is now).
    fn grow(
        &self,
        path: &Path,
        probe_path: &Path,
        target: u64,
        opts: &GrowOptions<'_>,
    ) -> Result<Grown>;
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
    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>>;
    /// `unlink(2)`.
    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno>;
    /// `fsync` of directory `dir`: names created, renamed or removed in it
    /// become durable. Returns which step failed.
    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)>;
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

    fn set_nocow(&self) -> std::result::Result<(), Errno> {
        sys::set_nocow(&self.0)
    }

    fn is_nocow(&self) -> Option<bool> {
        rustix::fs::ioctl_getflags(&self.0)
            .ok()
            .map(|f| f.contains(rustix::fs::IFlags::NOCOW))
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
    ) -> Result<Grown> {
        let r = crate::grow::grow_fd_named(&self.0, path, probe_path, target, opts)?;
        Ok(Grown {
            strategy: r.strategy,
            fallbacks: r.fallbacks,
        })
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

    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>> {
        durable::rename_noreplace(from, to)
    }

    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno> {
        sys::unlink(path)
    }

    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        sys::fsync_dir(dir)
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
/// 2. Rename (`RENAME_NOREPLACE` unless `replace`).
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
) -> std::result::Result<Option<Note>, (Error, bool)> {
    let steps = Steps {
        replace,
        ..Steps::DURABLE
    };
    durable::publish(&Seam { io, file }, (from, to, from), dir, steps)
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

    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>> {
        self.io.rename_noreplace(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        self.io.sync_dir(dir)
    }
}
