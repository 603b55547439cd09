//! The log under injected faults (`WalOptions::faults`): a failed
//! fdatasync, a failed write and a failed prepare.

mod wal_common;
use fspace_test_kit as common;

use wal_common::*;

use fspace::wal::{Faults, Wal, WalOptions};
use fspace::{Error, Lsn, SyncMethod};
use std::sync::atomic::Ordering;
use std::sync::Arc;

common::per_fs! {
    /// A failed fdatasync poisons the log: that commit and every later call
    /// fail, the errno is kept, and a reopen finds everything acknowledged.
    fn fdatasync_failure_poisons(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let faults = Arc::new(Faults::default());
        let mut o = opts();
        o.faults = Some(faults.clone());
        o.sync_method = Some(SyncMethod::Fdatasync);
        let wal = Wal::open(&d, o).unwrap();
        let a = wal.commit(b"acknowledged").unwrap();
        faults.fdatasync.store(libc::EIO, Ordering::SeqCst);
        let e = wal.commit(b"lost").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
        assert!(e.to_string().starts_with("fdatasync("), "{e}");
        // Never retried: later calls fail without syncing again.
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
        let wal = Wal::open(&d, opts()).unwrap();
        let got = read_all(&wal);
        assert_eq!(got[0].lsn, a);
        assert_eq!(got[0].data, b"acknowledged");
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// With a per-write sync method a failed write poisons the log the same
    /// way: the commit fails with the errno, later calls are refused, and a
    /// reopen finds everything acknowledged.
    fn dsync_write_failure_poisons(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for method in [SyncMethod::Dsync, SyncMethod::DirectDsync] {
            let d = dir.path().join(method.name());
            let faults = Arc::new(Faults::default());
            let o = WalOptions { faults: Some(faults.clone()), sync_method: Some(method), ..opts() };
            let wal = Wal::open(&d, o).unwrap();
            let a = wal.commit(b"acknowledged").unwrap();
            faults.write.store(libc::EIO, Ordering::SeqCst);
            let e = wal.commit(b"lost").unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EIO), "{}: {e}", fs.name);
            assert!(e.to_string().starts_with("pwritev2(RWF_DSYNC)"), "{}: {e}", fs.name);
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

common::per_fs! {
    /// A failed preparation fails the commit that needs the segment, with the
    /// preparation's errno; the next commit tries again and succeeds.
    fn prepare_failure_fails_only_the_commit_that_needs_it(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let faults = Arc::new(Faults::default());
        let mut o = opts();
        o.faults = Some(faults.clone());
        o.prepare_ahead = 1;
        let wal = Wal::open(&d, o).unwrap();
        wal.wait_prepared().unwrap();
        faults.prepare.store(libc::ENOSPC, Ordering::SeqCst);
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
        faults.prepare.store(0, Ordering::SeqCst);
        wal.commit(&[8u8; 50_000])
            .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        wal.close().unwrap();
    }
}
