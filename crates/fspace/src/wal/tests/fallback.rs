//! The sync method confirmed at open (`confirm_io`): a filesystem that
//! refuses `RWF_DSYNC` or `O_DIRECT` writes gets the next method, said in
//! the stats; any other error fails the open.

use crate::error::Result;
use crate::grow::GrowOptions;
use crate::strategy::SyncMethod;
use crate::sys::Errno;
use crate::wal::log::Wal;
use crate::wal::options::WalOptions;
use crate::wal::site::Site;
use crate::wal::storage::{Entry, Grown, OpenMode, Real, SegmentFile, Storage};
use rustix::io::IoSlice;
use std::path::Path;
use std::sync::Arc;

/// The real filesystem, except that `RWF_DSYNC` writes fail with
/// `dsync_errno`, and writes while `O_DIRECT` is on with `direct_errno`.
struct Refusing {
    dsync_errno: Option<Errno>,
    direct_errno: Option<Errno>,
}

struct RefusingFile {
    inner: Box<dyn SegmentFile>,
    dsync_errno: Option<Errno>,
    direct_errno: Option<Errno>,
    direct: std::sync::atomic::AtomicBool,
}

impl RefusingFile {
    fn refused(&self, dsync: bool) -> Option<Errno> {
        if self.direct.load(std::sync::atomic::Ordering::SeqCst) && self.direct_errno.is_some() {
            return self.direct_errno;
        }
        if dsync {
            self.dsync_errno
        } else {
            None
        }
    }
}

impl SegmentFile for RefusingFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::result::Result<usize, Errno> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, bufs: &[IoSlice<'_>], offset: u64) -> std::result::Result<usize, Errno> {
        match self.refused(false) {
            Some(e) => Err(e),
            None => self.inner.write_at(bufs, offset),
        }
    }
    fn write_at_dsync(
        &self,
        bufs: &[IoSlice<'_>],
        offset: u64,
    ) -> std::result::Result<usize, Errno> {
        match self.refused(true) {
            Some(e) => Err(e),
            None => self.inner.write_at_dsync(bufs, offset),
        }
    }
    fn fdatasync(&self) -> std::result::Result<(), Errno> {
        self.inner.fdatasync()
    }
    fn fsync(&self) -> std::result::Result<(), Errno> {
        self.inner.fsync()
    }
    fn stat(&self) -> std::result::Result<(Option<&'static str>, u64), Errno> {
        self.inner.stat()
    }
    fn set_direct(&self, on: bool) -> std::result::Result<(), Errno> {
        self.inner.set_direct(on)?;
        self.direct.store(on, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
    fn grow(
        &self,
        path: &Path,
        probe_path: &Path,
        target: u64,
        opts: &GrowOptions<'_>,
    ) -> Result<Grown> {
        self.inner.grow(path, probe_path, target, opts)
    }
}

impl Storage for Refusing {
    fn create_dir(&self, dir: &Path) -> std::result::Result<bool, Errno> {
        Real.create_dir(dir)
    }
    fn dir_kind(&self, path: &Path) -> std::result::Result<Option<&'static str>, Errno> {
        Real.dir_kind(path)
    }
    fn lock(&self, path: &Path) -> std::result::Result<Box<dyn Send + Sync>, Errno> {
        Real.lock(path)
    }
    fn list(&self, dir: &Path) -> std::result::Result<Vec<Entry>, Errno> {
        Real.list(dir)
    }
    fn open(
        &self,
        path: &Path,
        mode: OpenMode,
    ) -> std::result::Result<Box<dyn SegmentFile>, Errno> {
        Ok(Box::new(RefusingFile {
            inner: Real.open(path, mode)?,
            dsync_errno: self.dsync_errno,
            direct_errno: self.direct_errno,
            direct: std::sync::atomic::AtomicBool::new(false),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno> {
        Real.rename(from, to)
    }
    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<String>> {
        Real.rename_noreplace(from, to)
    }
    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno> {
        Real.unlink(path)
    }
    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        Real.sync_dir(dir)
    }
}

fn opts(method: SyncMethod) -> WalOptions {
    WalOptions {
        segment_size: 1 << 20,
        sync_method: Some(method),
        ..WalOptions::default()
    }
}

/// Opens a log on `io` with `method`, commits one record, and returns the
/// sync method and the O_DIRECT use the stats name; the record reads back
/// through a plain open.
fn open_commit(io: Refusing, method: SyncMethod) -> Result<(String, String)> {
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = dir.path().join("wal");
    let wal = Wal::open_on(&path, opts(method), Arc::new(io), Site::Filesystem)?;
    let lsn = wal.commit(b"after the fallback")?;
    let said = (wal.stats().sync_method, wal.stats().direct_io);
    wal.close()?;
    let wal = Wal::open(&path, WalOptions::default())?;
    let got: Vec<_> = wal.read_from(lsn)?.collect::<Result<Vec<_>>>()?;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, b"after the fallback");
    Ok(said)
}

#[test]
fn refused_dsync_falls_back_to_fdatasync() {
    for errno in [Errno::NOSYS, Errno::OPNOTSUPP, Errno::INVAL] {
        let io = Refusing {
            dsync_errno: Some(errno),
            direct_errno: None,
        };
        let (said, _) = open_commit(io, SyncMethod::Dsync).unwrap();
        assert!(
            said.starts_with("fdatasync (pwritev2 with RWF_DSYNC refused"),
            "{errno:?}: {said}"
        );
    }
}

#[test]
fn refused_direct_write_falls_back_to_buffered() {
    let io = Refusing {
        dsync_errno: None,
        direct_errno: Some(Errno::INVAL),
    };
    let (said, direct) = open_commit(io, SyncMethod::DirectDsync).unwrap();
    if direct.starts_with("no: the filesystem refused O_DIRECT") {
        // O_DIRECT refused at open (tmpfs): the write-time fallback is not
        // reached here.
        eprintln!("skipped: {direct}");
        return;
    }
    // The O_DIRECT write refused: buffered RWF_DSYNC writes, not fdatasync.
    assert!(
        said.starts_with("direct-dsync") && said.contains("without O_DIRECT"),
        "{said}"
    );
    assert!(
        direct.starts_with("no: an O_DIRECT write was refused"),
        "{direct}"
    );
}

#[test]
fn other_write_errors_fail_the_open() {
    let io = Refusing {
        dsync_errno: Some(Errno::IO),
        direct_errno: None,
    };
    let e = open_commit(io, SyncMethod::Dsync).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(Errno::IO.raw_os_error()), "{e}");
}
