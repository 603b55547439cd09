//! Durable creation (docs/design.md rule 5), one implementation for every
//! feature that makes a file appear under a name: `grow --create`, `copy`,
//! the log's new and recycled segments, and the saved-measurement store.
//!
//! The steps, each with the crash state it prevents (PostgreSQL's
//! `durable_rename` reasoning):
//!
//! 1. the file is made under a temporary name in the target directory
//!    ([`TempFile::create`]: `.NAME.fspace-tmp-HOST-PID-N`, `O_EXCL`;
//!    leftovers of dead processes on this host are removed first), so that
//!    the name never holds a partial file;
//! 2. `fsync` of the file before the rename ([`Steps::fsync_before`]):
//!    without it the rename can reach the disk before the data, and a power
//!    cut leaves the name holding a short or empty file;
//! 3. the rename, without replacing (`RENAME_NOREPLACE`; where the
//!    filesystem refuses the flag, a checked plain rename with a note; never
//!    link + unlink, which leaves two names after a crash) or replacing;
//! 4. `fsync` of the file under its new name ([`Steps::fsync_after`]; the
//!    log does it, as PostgreSQL does, for filesystems that tie the rename
//!    to the inode's metadata);
//! 5. `fsync` of the directory ([`Steps::sync_dir`]): until then a power cut
//!    may undo the rename.
//!
//! A failure before the rename removes the temporary file; one after it is
//! reported with whether the rename happened, since the file is then at its
//! name whatever the error says.

use crate::error::{Error, Result};
use crate::note::{Note, NoteKind};
use crate::sys::{self, Errno};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::OFlags;
use std::path::{Path, PathBuf};

/// Marker in the names of temporary files: `.NAME.fspace-tmp-HOST-PID-SEQ`.
/// Leftovers of dead processes on this host are removed by the next creation
/// in the same directory (and by the log's recovery).
pub const TEMP_MARKER: &str = ".fspace-tmp-";

/// Which of the optional steps a publication takes (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Steps {
    /// `fsync` the file before the rename.
    pub fsync_before: bool,
    /// Replace an existing file at the name (plain `rename`).
    pub replace: bool,
    /// `fsync` the file again after the rename.
    pub fsync_after: bool,
    /// `fsync` the directory after the rename.
    pub sync_dir: bool,
}

impl Steps {
    /// Every step: the name holds the whole file, durably, when it returns.
    pub const DURABLE: Steps = Steps {
        fsync_before: true,
        replace: false,
        fsync_after: true,
        sync_dir: true,
    };
}

/// What publication needs of a filesystem: the real one ([`Real`]) or the
/// log's storage seam, whose power-cut model checks these steps.
pub(crate) trait Namespace {
    /// `fsync` of the file being published.
    fn fsync_file(&self) -> std::result::Result<(), Errno>;
    /// `rename(2)`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno>;
    /// `RENAME_NOREPLACE`, or a checked rename where the filesystem refuses
    /// the flag (the note says so).
    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>>;
    /// `fsync` of directory `dir`; which step failed.
    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)>;
}

/// The real filesystem, for a file open as `fd`.
pub(crate) struct Real<'a>(pub rustix::fd::BorrowedFd<'a>);

impl Namespace for Real<'_> {
    fn fsync_file(&self) -> std::result::Result<(), Errno> {
        sys::fsync(self.0)
    }

    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno> {
        sys::rename(from, to)
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>> {
        rename_noreplace(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        sys::fsync_dir(dir)
    }
}

/// Renames `from` to `to` in `dir` taking `steps`. Errors before the rename name `named`:
/// the name the caller knows the file by (the final name of a file being
/// created, the live name of a log segment being renamed). Returns the
/// rename's note, or the error with whether the rename had already happened
/// (the file is then at `to`).
pub(crate) fn publish(
    ns: &dyn Namespace,
    (from, to, named): (&Path, &Path, &Path),
    dir: &Path,
    steps: Steps,
) -> std::result::Result<Option<Note>, (Error, bool)> {
    if steps.fsync_before {
        ns.fsync_file()
            .map_err(|e| (Error::io("fsync", named, None, e), false))?;
    }
    let note = if steps.replace {
        ns.rename(from, to)
            .map_err(|e| (Error::io("rename", named, None, e), false))?;
        None
    } else {
        ns.rename_noreplace(from, to).map_err(|e| (e, false))?
    };
    if steps.fsync_after {
        ns.fsync_file()
            .map_err(|e| (Error::io("fsync", to, None, e), true))?;
    }
    if steps.sync_dir {
        ns.sync_dir(dir).map_err(|(op, e)| {
            let why = format!(
                "{}; {} is in place, but its name may not survive a crash",
                std::io::Error::from_raw_os_error(e.raw_os_error()),
                to.display()
            );
            (Error::refused_errno(op, dir, e, why), true)
        })?;
    }
    Ok(note)
}

/// Renames without replacing an existing file (`RENAME_NOREPLACE`). Where
/// the filesystem refuses the flag (FUSE, NFS), checks that `to` is absent
/// and renames plainly, returning a note that says so; never link + unlink,
/// which leaves two names after a crash.
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> Result<Option<Note>> {
    match sys::rename_noreplace(from, to) {
        Ok(()) => Ok(None),
        Err(e) if crate::errno::unsupported(crate::errno::Call::RenameNoReplace, e) => {
            if sys::lstat(to).is_ok() {
                return Err(Error::refused_errno(
                    "rename",
                    to,
                    Errno::EXIST,
                    "appeared while it was being created",
                ));
            }
            sys::rename(from, to).map_err(|e| Error::io("rename", to, None, e))?;
            Ok(Some(Note::new(
                NoteKind::CheckedRename,
                "RENAME_NOREPLACE is not supported here: checked that the name was free, then renamed",
            )))
        }
        Err(e) => Err(Error::io("rename", to, None, e)),
    }
}

/// A file being made under a temporary name beside its final one; removed
/// when dropped unless [`TempFile::publish`] renamed it into place.
pub(crate) struct TempFile {
    /// The open file.
    pub fd: OwnedFd,
    /// Its temporary path.
    pub tmp: PathBuf,
    /// The name it will have.
    pub path: PathBuf,
    /// The directory of both.
    pub dir: PathBuf,
    published: bool,
}

impl TempFile {
    /// Creates the temporary file for `path` (mode `mode`, before umask),
    /// after removing dead processes' leftovers in its directory (the first
    /// time this process creates there). `op` names
    /// the operation in errors, which name `path`.
    pub fn create(op: &'static str, path: &Path, mode: u32) -> Result<TempFile> {
        let name = path.file_name().ok_or_else(|| {
            Error::refused_errno(op, path, Errno::INVAL, "has no file name to create")
        })?;
        let dir = parent_dir(path);
        crate::stale::remove_stale_once(&dir, TEMP_MARKER);
        let tmp = dir.join(crate::stale::temp_name(name, TEMP_MARKER));
        let fd = sys::open(&tmp, OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL, mode)
            .map_err(|e| Error::io("create", path, None, e))?;
        Ok(TempFile {
            fd,
            tmp,
            path: path.to_path_buf(),
            dir,
            published: false,
        })
    }

    /// Renames the file into place taking `steps` ([`publish`]). Returns the
    /// rename's note. After an error the temporary file is removed if the
    /// rename had not happened.
    pub fn publish(&mut self, steps: Steps) -> Result<Option<Note>> {
        let r = publish(
            &Real(self.fd.as_fd()),
            (&self.tmp, &self.path, &self.path),
            &self.dir,
            steps,
        );
        match r {
            Ok(note) => {
                self.published = true;
                Ok(note)
            }
            Err((e, renamed)) => {
                self.published = renamed;
                Err(e)
            }
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.published {
            let _ = sys::unlink(&self.tmp);
        }
    }
}

/// Replaces (or creates) the file at `path` with `contents`, atomically and
/// durably: written under a temporary name in the same directory
/// (`.NAME.fspace-tmp-...`, removed on error, and by a later call when the
/// process that made it died), fsynced, renamed over `path`, the directory
/// fsynced. A reader sees the old file or the new one, whole, at any
/// moment; after a power cut the same holds (a cut before the directory
/// fsync may bring the old one back). `mode` is a new file's mode before
/// the umask (`0o644`). On an error `path` is as it was, unless the error
/// is the directory's fsync: the new file is then in place, and the error
/// says its name may not survive a crash.
///
/// For files other programs read while they change: a Prometheus textfile,
/// a configuration fragment, a saved policy.
///
/// ```no_run
/// fspace::replace_file("/var/lib/node_exporter/fspace.prom", b"fspace_up 1\n", 0o644)?;
/// # Ok::<(), fspace::Error>(())
/// ```
pub fn replace_file(path: impl AsRef<Path>, contents: &[u8], mode: u32) -> Result<()> {
    let path = path.as_ref();
    let mut tmp = TempFile::create("replace", path, mode)?;
    sys::pwrite_all(&tmp.fd, contents, 0)
        .map_err(|(e, at)| Error::io("write", &tmp.tmp, Some(at..contents.len() as u64), e))?;
    tmp.publish(Steps {
        replace: true,
        fsync_after: false,
        ..Steps::DURABLE
    })?;
    Ok(())
}

/// Returns the directory holding `path` (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `mkdir -p` that makes each directory it creates durable: its parent is
/// fsynced after the `mkdir` (a directory's own entry is durable only once
/// its parent is synced, and a file saved into a directory whose entry a
/// power cut removes is lost with it).
pub(crate) fn create_dir_all(dir: &Path) -> Result<()> {
    let mut missing = vec![];
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.as_os_str().is_empty() || sys::stat(d).is_ok_and(|s| s.is_dir()) {
            break;
        }
        missing.push(d);
        cur = d.parent();
    }
    for d in missing.into_iter().rev() {
        match sys::mkdir(d, 0o777) {
            Ok(()) => {}
            // Made by someone else meanwhile: theirs to sync.
            Err(Errno::EXIST) if sys::stat(d).is_ok_and(|s| s.is_dir()) => continue,
            Err(e) => return Err(Error::io("mkdir", d, None, e)),
        }
        let parent = parent_dir(d);
        sys::fsync_dir(&parent).map_err(|(op, e)| Error::io(op, &parent, None, e))?;
    }
    Ok(())
}
