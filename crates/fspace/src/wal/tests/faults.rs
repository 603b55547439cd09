//! Faults injected through the storage seam, on the filesystem matrix: a
//! failed `fdatasync` or write poisons the log (docs/design.md rule 6); a
//! failed preparation fails only the commit that needs the segment.
//!
//! [`Faulty`] is the real filesystem, except for the calls a test arms.
//! The killed-rename power cut (`killed_rename.rs`) uses it too.
//!
//! The storage seam is the library's inside, so these stay unit tests; the
//! library has no build script to mark the test of an unmounted
//! filesystem ignored (a dependent would build it), so each looks for its
//! filesystem when it runs (`per_fs_at_run_time!`): a missing one fails
//! under `FSPACE_REQUIRE_MATRIX=1`, else is reported as skipped.

use crate::error::{Error, Result};
use crate::grow::GrowOptions;
use crate::note::Note;
use crate::strategy::SyncMethod;
use crate::sys::Errno;
use crate::wal::format::segment_name;
use crate::wal::log::Wal;
use crate::wal::options::WalOptions;
use crate::wal::reader::Record;
use crate::wal::site::Site;
use crate::wal::storage::{Entry, Grown, OpenMode, Real, SegmentFile, Storage};
use crate::wal::types::Lsn;
use fspace_test_kit as common;
use rustix::io::IoSlice;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

/// The calls to fail: while a field holds a non-zero errno, such calls
/// fail with it instead of being issued.
#[derive(Debug, Default)]
pub(super) struct Faults {
    /// Fails `fdatasync` of segment files.
    pub fdatasync: AtomicI32,
    /// Fails writes to segment files (`pwrite`, `pwritev2(RWF_DSYNC)`).
    pub write: AtomicI32,
    /// Fails `pwritev2(RWF_DSYNC)` writes only (a filesystem or kernel
    /// without it).
    pub dsync_write: AtomicI32,
    /// Fails writes made while `O_DIRECT` is on (a filesystem that accepts
    /// the flag but refuses the write).
    pub direct_write: AtomicI32,
    /// Fails turning `O_DIRECT` on (a filesystem that refuses the flag).
    pub set_direct: AtomicI32,
    /// Fails the creation of new files (a new segment's temporary file):
    /// preparation fails before any I/O.
    pub create: AtomicI32,
    /// Fails taking the log's `LOCK` (creating it on a full filesystem).
    pub lock: AtomicI32,
    /// When non-zero, aborts the process right after a file is renamed to
    /// the segment of this sequence number (new or recycled), before the
    /// directory `fsync`: the window a power cut can undo.
    pub abort_after_rename_to: AtomicU64,
    /// `fdatasync` calls that reached the filesystem (or their fault).
    pub fdatasyncs: AtomicU64,
}

impl Faults {
    fn armed(slot: &AtomicI32) -> Option<Errno> {
        match slot.load(Ordering::SeqCst) {
            0 => None,
            e => Some(Errno::from_raw_os_error(e)),
        }
    }

    fn after_rename(&self, to: &Path) {
        let seq = self.abort_after_rename_to.load(Ordering::SeqCst);
        if seq != 0 && to.file_name() == Some(segment_name(seq).as_ref()) {
            std::process::abort();
        }
    }
}

/// The real filesystem, with [`Faults`].
pub(super) struct Faulty(pub Arc<Faults>);

struct FaultyFile {
    inner: Box<dyn SegmentFile>,
    faults: Arc<Faults>,
    /// Whether `O_DIRECT` is on (for [`Faults::direct_write`]).
    direct: AtomicBool,
}

impl FaultyFile {
    /// The armed fault for a write (`dsync`: with `RWF_DSYNC`), if any.
    fn write_fault(&self, dsync: bool) -> Option<Errno> {
        let f = &self.faults;
        Faults::armed(&f.write)
            .or_else(|| {
                self.direct
                    .load(Ordering::SeqCst)
                    .then(|| Faults::armed(&f.direct_write))
                    .flatten()
            })
            .or_else(|| dsync.then(|| Faults::armed(&f.dsync_write)).flatten())
    }
}

impl SegmentFile for FaultyFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::result::Result<usize, Errno> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, bufs: &[IoSlice<'_>], offset: u64) -> std::result::Result<usize, Errno> {
        match self.write_fault(false) {
            Some(e) => Err(e),
            None => self.inner.write_at(bufs, offset),
        }
    }
    fn write_at_dsync(
        &self,
        bufs: &[IoSlice<'_>],
        offset: u64,
    ) -> std::result::Result<usize, Errno> {
        match self.write_fault(true) {
            Some(e) => Err(e),
            None => self.inner.write_at_dsync(bufs, offset),
        }
    }
    fn fdatasync(&self) -> std::result::Result<(), Errno> {
        self.faults.fdatasyncs.fetch_add(1, Ordering::SeqCst);
        match Faults::armed(&self.faults.fdatasync) {
            Some(e) => Err(e),
            None => self.inner.fdatasync(),
        }
    }
    fn fsync(&self) -> std::result::Result<(), Errno> {
        self.inner.fsync()
    }
    fn stat(&self) -> std::result::Result<(Option<&'static str>, u64), Errno> {
        self.inner.stat()
    }
    fn set_direct(&self, on: bool) -> std::result::Result<(), Errno> {
        if let (true, Some(e)) = (on, Faults::armed(&self.faults.set_direct)) {
            return Err(e);
        }
        self.inner.set_direct(on)?;
        self.direct.store(on, Ordering::SeqCst);
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

impl Storage for Faulty {
    fn create_dir(&self, dir: &Path) -> std::result::Result<bool, Errno> {
        Real.create_dir(dir)
    }
    fn dir_kind(&self, path: &Path) -> std::result::Result<Option<&'static str>, Errno> {
        Real.dir_kind(path)
    }
    fn lock(&self, path: &Path) -> std::result::Result<Box<dyn Send + Sync>, Errno> {
        if let Some(e) = Faults::armed(&self.0.lock) {
            return Err(e);
        }
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
        if mode == OpenMode::CreateNew {
            if let Some(e) = Faults::armed(&self.0.create) {
                return Err(e);
            }
        }
        Ok(Box::new(FaultyFile {
            inner: Real.open(path, mode)?,
            faults: self.0.clone(),
            direct: AtomicBool::new(false),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno> {
        Real.rename(from, to)?;
        self.0.after_rename(to);
        Ok(())
    }
    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>> {
        let note = Real.rename_noreplace(from, to)?;
        self.0.after_rename(to);
        Ok(note)
    }
    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno> {
        Real.unlink(path)
    }
    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        Real.sync_dir(dir)
    }
}

/// Opens the log in `dir` on the real filesystem with `faults`.
pub(super) fn open_faulty(dir: &Path, opts: WalOptions, faults: &Arc<Faults>) -> Result<Wal> {
    Wal::open_on(
        dir,
        opts,
        Arc::new(Faulty(faults.clone())),
        Site::Filesystem,
    )
}

const SEG: u64 = 256 << 10;

fn opts() -> WalOptions {
    WalOptions {
        segment_size: SEG,
        ..Default::default()
    }
}

fn read_all(wal: &Wal) -> Vec<Record> {
    wal.read_from(Lsn(0))
        .expect("reader")
        .collect::<Result<Vec<_>>>()
        .expect("read back")
}

common::per_fs_at_run_time! {
    /// A failed fdatasync poisons the log: that commit and every later call
    /// fail, the errno is kept, the fdatasync is never issued again, and a
    /// reopen finds everything acknowledged.
    fn fdatasync_failure_poisons(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let faults = Arc::new(Faults::default());
        let mut o = opts();
        o.sync_method = Some(SyncMethod::Fdatasync);
        let wal = open_faulty(&d, o, &faults).unwrap();
        let a = wal.commit(b"acknowledged").unwrap();
        faults.fdatasync.store(libc::EIO, Ordering::SeqCst);
        let e = wal.commit(b"lost").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
        assert!(e.to_string().starts_with("fdatasync("), "{e}");
        // Never retried: later calls fail without syncing again, also once
        // the fault is gone.
        faults.fdatasync.store(0, Ordering::SeqCst);
        let syncs = faults.fdatasyncs.load(Ordering::SeqCst);
        for e in [
            wal.commit(b"after").unwrap_err(),
            wal.append(b"after").unwrap_err(),
            wal.sync().unwrap_err(),
            wal.read_from(Lsn(1)).map(|_| ()).unwrap_err(),
        ] {
            assert!(matches!(e, Error::Poisoned { .. }), "{}: {e}", fs.name);
            assert_eq!(e.raw_os_error(), Some(libc::EIO));
            assert!(e.to_string().contains("poisoned"), "{e}");
        }
        assert!(wal.close().is_err());
        assert_eq!(
            faults.fdatasyncs.load(Ordering::SeqCst),
            syncs,
            "{}: an fdatasync was issued after the failed one",
            fs.name
        );
        let wal = Wal::open(&d, opts()).unwrap();
        let got = read_all(&wal);
        assert_eq!(got[0].lsn, a);
        assert_eq!(got[0].data, b"acknowledged");
        wal.close().unwrap();
    }
}

common::per_fs_at_run_time! {
    /// With a per-write sync method a failed write poisons the log the same
    /// way: the commit fails with the errno, later calls are refused, and a
    /// reopen finds everything acknowledged.
    fn dsync_write_failure_poisons(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for method in [SyncMethod::Dsync, SyncMethod::DirectDsync] {
            let d = dir.path().join(method.name());
            let faults = Arc::new(Faults::default());
            let o = WalOptions { sync_method: Some(method), ..opts() };
            let wal = open_faulty(&d, o, &faults).unwrap();
            let a = wal.commit(b"acknowledged").unwrap();
            faults.write.store(libc::EIO, Ordering::SeqCst);
            let e = wal.commit(b"lost").unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EIO), "{}: {e}", fs.name);
            assert!(e.to_string().starts_with("pwritev2(RWF_DSYNC)"), "{}: {e}", fs.name);
            faults.write.store(0, Ordering::SeqCst);
            let e = wal.commit(b"after").unwrap_err();
            assert!(matches!(e, Error::Poisoned { .. }), "{}: {e}", fs.name);
            assert!(wal.close().is_err());
            let wal = Wal::open(&d, opts()).unwrap();
            let got = read_all(&wal);
            assert_eq!(got[0].lsn, a);
            assert_eq!(got[0].data, b"acknowledged");
            wal.close().unwrap();
        }
    }
}

common::per_fs_at_run_time! {
    /// A failed preparation fails the commit that needs the segment, with the
    /// preparation's errno; the next commit tries again and succeeds.
    fn prepare_failure_fails_only_the_commit_that_needs_it(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let faults = Arc::new(Faults::default());
        let mut o = opts();
        o.prepare_ahead = 1;
        let wal = open_faulty(&d, o, &faults).unwrap();
        wal.wait_prepared().unwrap();
        faults.create.store(libc::ENOSPC, Ordering::SeqCst);
        let mut acked = vec![];
        let e = loop {
            match wal.commit(&[7u8; 50_000]) {
                Ok(l) => acked.push(l),
                Err(e) => break e,
            }
            assert!(acked.len() < 100, "{}: never needed a segment", fs.name);
        };
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
        assert!(e.to_string().contains("no segment ready"), "{e}");
        assert_eq!(read_all(&wal).len(), acked.len());
        // The same again for the next commit that needs it; then the fault
        // goes away and the next commit gets a segment.
        let e = wal.commit(&[7u8; 50_000]).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
        faults.create.store(0, Ordering::SeqCst);
        wal.commit(&[8u8; 50_000])
            .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        wal.close().unwrap();
    }
}

common::per_fs_at_run_time! {
    /// A writable open that cannot make its segment for want of space says
    /// the records are intact, verified by that open (all six
    /// filesystems, btrfs and sshfs included, where the real ENOSPC test
    /// does not run); one that fails before recovery (taking the `LOCK`)
    /// says they were not read. Either way the errno is ENOSPC, and the
    /// read-only view reads every record.
    fn open_failing_for_space_says_what_is_known(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let faults = Arc::new(Faults::default());
        let wal = open_faulty(&d, opts(), &faults).unwrap();
        let want: Vec<Vec<u8>> = (0..12u8).map(|i| vec![i; 40_000]).collect();
        for p in &want {
            wal.commit(p).unwrap();
        }
        wal.close().unwrap();
        // No prepared segment left for the next open: it must create one.
        let view = crate::wal::WalView::open(&d).unwrap();
        assert!(view.pool().is_empty(), "{}", fs.name);
        for p in view.prepared() {
            std::fs::remove_file(p).unwrap();
        }
        faults.create.store(libc::ENOSPC, Ordering::SeqCst);
        let e = open_faulty(&d, opts(), &faults).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{}: {msg}", fs.name);
        assert_eq!((e.op(), e.path()), ("open log", d.as_path()), "{msg}");
        assert!(msg.contains("its 12 records (LSN 1 to 12) are intact"), "{}: {msg}", fs.name);
        faults.create.store(0, Ordering::SeqCst);
        faults.lock.store(libc::ENOSPC, Ordering::SeqCst);
        let e = open_faulty(&d, opts(), &faults).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{}: {msg}", fs.name);
        assert!(msg.contains("its records were not read"), "{}: {msg}", fs.name);
        assert!(!msg.contains("intact"), "{}: {msg}", fs.name);
        let view = crate::wal::WalView::open(&d).unwrap();
        let got: Vec<Vec<u8>> = view
            .read_from(view.first_lsn())
            .unwrap()
            .map(|r| r.unwrap().data)
            .collect();
        assert_eq!(got, want, "{}", fs.name);
    }
}
