//! The segment log on the filesystem matrix: commits, group commit,
//! recycling, options, sync methods, ENOSPC. (Damage: wal_damage.rs;
//! kill -9: wal_kill.rs; injected faults: the library's own tests, src/wal/tests/faults.rs.)
//! Each case also runs on the matrix's fast mounts, `ext4-fast` and
//! `xfs-fast` (on a device where a durable write costs microseconds, the
//! log's races take other turns), wherever it runs on ext4 or xfs.

mod wal_common;
use fspace_test_kit as common;

use wal_common::*;

use fspace::wal::{DirectIoChoice, IoRefusal, Record, SyncChoice, Wal};
use fspace::{Error, Lsn, SyncMethod};
use std::collections::HashMap;
use std::time::Duration;

common::per_fs! {
    /// Commits across several segments, reads back, reopens, reads back again
    /// and continues the LSN sequence, on every filesystem.
    fn commit_read_reopen(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        assert!(wal.recovery().created);
        let mut want = vec![];
        for n in 0..40 {
            let p = payload(1, 0, n);
            let lsn = wal
                .commit(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
            assert_eq!(lsn, Lsn(n + 1));
            want.push(p);
        }
        // Buffered appends become durable with sync.
        for n in 40..50 {
            let p = payload(1, 0, n);
            wal.append(&p).unwrap();
            want.push(p);
        }
        assert_eq!(wal.sync().unwrap(), Lsn(50));
        let got = read_all(&wal);
        assert_eq!(got.len(), 50, "{}", fs.name);
        for (i, r) in got.iter().enumerate() {
            assert_eq!(r.lsn, Lsn(i as u64 + 1));
            assert_eq!(r.data, want[i], "{}: record {}", fs.name, i + 1);
        }
        let from = wal.read_from(Lsn(17)).unwrap().next().unwrap().unwrap();
        assert_eq!(from.lsn, Lsn(17));
        let st = wal.stats();
        assert!(st.switches >= 3, "{}: {st:?}", fs.name);
        wal.close().unwrap();

        let wal = Wal::open(&d, opts()).unwrap();
        let rep = wal.recovery().clone();
        assert!(!rep.created);
        assert_eq!(rep.records, 50, "{}: {rep:?}", fs.name);
        assert_eq!(rep.next_lsn, Lsn(51));
        assert_eq!(wal.commit(b"after reopen").unwrap(), Lsn(51));
        let got = read_all(&wal);
        assert_eq!(got.len(), 51);
        assert_eq!(got[50].data, b"after reopen");
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// Many threads commit at once; fewer fdatasyncs than commits (one per
    /// group), and every record is there, once.
    fn group_commit_shares_fdatasync(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let wal = Wal::open(dir.path().join("wal"), opts()).unwrap();
        let threads = 8u64;
        let per = 60u64;
        let acked: Vec<Vec<(Lsn, u64)>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let wal = &wal;
                    s.spawn(move || {
                        (0..per)
                            .map(|n| {
                                let p = payload(2, t, n);
                                (wal.commit(&p).unwrap(), hash(&p))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let st = wal.stats();
        let total = threads * per;
        assert!(
            st.syncs < total,
            "{}: {} fdatasyncs for {total} commits: no group commit",
            fs.name,
            st.syncs
        );
        let got: HashMap<Lsn, u64> = read_all(&wal)
            .iter()
            .map(|r| (r.lsn, hash(&r.data)))
            .collect();
        assert_eq!(got.len() as u64, total);
        for (lsn, h) in acked.iter().flatten() {
            assert_eq!(got.get(lsn), Some(h), "{}: LSN {lsn}", fs.name);
        }
        eprintln!(
            "{}: {total} commits by {threads} threads, {} fdatasyncs",
            fs.name, st.syncs
        );
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// Released segments go to the pool (bounded; the rest are deleted) and
    /// come back renamed as new segments; their old records never reappear.
    fn release_recycles_and_old_records_never_return(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut o = opts();
        o.recycle_pool = 2;
        let wal = Wal::open(&d, o.clone()).unwrap();
        // Fill 6+ segments with large records.
        let mut n = 0;
        while wal.stats().switches < 6 {
            wal.commit(&vec![0xAB; 60_000]).unwrap();
            n += 1;
        }
        let last = wal.commit(b"keep").unwrap();
        let rel = wal.release_before(last).unwrap();
        assert_eq!(rel.recycled, 2, "{}: {rel:?}", fs.name);
        assert!(rel.deleted >= 3, "{}: {rel:?}", fs.name);
        let segs = wal.segments();
        assert_eq!(segs.len(), 1, "{}: only the current segment stays", fs.name);
        // Small records into recycled segments.
        let before = wal.stats().prepared_recycled;
        let mut small = vec![];
        while wal.stats().prepared_recycled < before + 2 || wal.stats().switches < 9 {
            let p = payload(3, 0, small.len() as u64);
            small.push((wal.commit(&p).unwrap(), p));
        }
        let recs = wal
            .read_from(last)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(recs[0].data, b"keep");
        for (r, (lsn, p)) in recs[1..].iter().zip(&small) {
            assert_eq!((r.lsn, &r.data), (*lsn, p));
        }
        assert_eq!(recs.len(), small.len() + 1, "{}", fs.name);
        drop(wal); // like a crash for anything unsynced; all was committed
        let wal = Wal::open(&d, o).unwrap();
        let all = read_all(&wal);
        // Records before `last` share its segment (same life); from `last`
        // on, only what was written after the release.
        let after: Vec<&Record> = all.iter().filter(|r| r.lsn >= last).collect();
        assert_eq!(after.len(), small.len() + 1, "{}", fs.name);
        assert_eq!(after[0].data, b"keep");
        for (r, (lsn, p)) in after[1..].iter().zip(&small) {
            assert_eq!((r.lsn, &r.data), (*lsn, p), "{}: stale record", fs.name);
        }
        for (i, r) in all.iter().enumerate() {
            assert_eq!(r.lsn.0, all[0].lsn.0 + i as u64);
        }
        let _ = n;
        wal.close().unwrap();
    }
}

/// Reading from a released LSN is a clear error, not a silent skip.
#[test]
fn reading_released_records_is_refused() {
    let fs = &common::all()[0];
    let _g = fs.lock();
    let dir = fs.tempdir();
    let wal = Wal::open(dir.path().join("wal"), opts()).unwrap();
    while wal.stats().switches < 3 {
        wal.commit(&[1u8; 30_000]).unwrap();
    }
    let lsn = wal.commit(b"x").unwrap();
    wal.release_before(lsn).unwrap();
    let e = wal.read_from(Lsn(1)).unwrap_err();
    assert!(e.to_string().contains("was released"), "{e}");
    assert_eq!(e.raw_os_error(), Some(libc::ERANGE));
}

/// Open refuses a second opener, a file in place of the directory, and
/// bad options, changing nothing.
#[test]
fn bad_input_is_refused() {
    let fs = &common::all()[0];
    let _g = fs.lock();
    let dir = fs.tempdir();
    let d = dir.path().join("wal");
    let wal = Wal::open(&d, opts()).unwrap();
    let e = Wal::open(&d, opts()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EWOULDBLOCK), "{e}");
    assert!(e.to_string().contains("another process"), "{e}");
    let big = vec![0u8; wal.max_record() + 1];
    let e = wal.append(&big).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EMSGSIZE), "{e}");
    assert!(wal.append(&vec![0u8; wal.max_record()]).is_ok());
    wal.close().unwrap();
    let f = dir.path().join("file");
    std::fs::write(&f, b"data").unwrap();
    let e = Wal::open(&f, opts()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR), "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), b"data");
    let mut o = opts();
    o.segment_size = 1000;
    let e = Wal::open(dir.path().join("other"), o).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    assert!(!dir.path().join("other").exists() || seg_files(&dir.path().join("other")).is_empty());
    // Missing parents are created; a parent that is a file is refused.
    let wal = Wal::open(dir.path().join("new/parents/wal"), opts()).unwrap();
    wal.close().unwrap();
    assert!(dir.path().join("new/parents/wal").is_dir());
    let e = Wal::open(f.join("below/wal"), opts()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR), "{e}");
    assert!(e.to_string().contains("file"), "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), b"data");
}

common::per_fs! {
    /// Real ENOSPC on the small loop filesystems: the commit that needs a new
    /// segment fails clearly; everything committed stays readable; after
    /// space is freed, commits resume.
    fn enospc_while_preparing(fs) on [ext4, xfs, ext4_noextents, tmpfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut o = opts();
        o.segment_size = 1 << 20;
        o.prepare_ahead = 1;
        let wal = Wal::open(&d, o.clone()).unwrap();
        wal.wait_prepared().unwrap();
        // Take (almost) all the space.
        let ballast = dir.path().join("ballast");
        let free = common::free_after_sync(dir.path());
        let gopts = fspace::GrowOptions::default().intent(fspace::Intent::Bulk).create(true).check_free_space(false);
        let mut target = free.saturating_sub(256 << 10);
        while fspace::grow(&ballast, target, &gopts).is_err() {
            target -= 1 << 20;
        }
        let mut acked = vec![];
        let e = loop {
            let p = payload(5, 0, acked.len() as u64);
            match wal.commit(&p) {
                Ok(l) => acked.push((l, p)),
                Err(e) => break e,
            }
            assert!(acked.len() < 1000, "{}: never ran out", fs.name);
        };
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{}: {e}", fs.name);
        assert!(e.to_string().contains("no segment ready"), "{e}");
        let got = read_all(&wal);
        assert_eq!(got.len(), acked.len());
        for (r, (l, p)) in got.iter().zip(&acked) {
            assert_eq!((&r.lsn, &r.data), (l, p));
        }
        std::fs::remove_file(&ballast).unwrap();
        let _ = common::free_after_sync(dir.path());
        let l = wal
            .commit(&payload(5, 0, 9999))
            .unwrap_or_else(|e| panic!("{}: commits did not resume: {e}", fs.name));
        assert_eq!(l.0, acked.len() as u64 + 1);
        wal.close().unwrap();
        eprintln!("{}: ENOSPC after {} commits: {e}", fs.name, acked.len());
    }
}

common::per_fs! {
    /// On a filesystem filled up until the log's next segment cannot be
    /// made, a writable open fails with ENOSPC and its error says that the
    /// records are intact, verified by that open, and how to read them;
    /// the read-only view then reads every acknowledged record.
    fn full_filesystem_open_says_intact_and_the_view_reads_all(fs) on [ext4, xfs, ext4_noextents, tmpfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut o = opts();
        o.segment_size = 1 << 20;
        o.prepare_ahead = 1;
        let wal = Wal::open(&d, o.clone()).unwrap();
        wal.wait_prepared().unwrap();
        let ballast = dir.path().join("ballast");
        let free = common::free_after_sync(dir.path());
        let gopts = fspace::GrowOptions::default().intent(fspace::Intent::Bulk).create(true).check_free_space(false);
        let mut target = free.saturating_sub(256 << 10);
        while fspace::grow(&ballast, target, &gopts).is_err() {
            target -= 1 << 20;
        }
        let mut acked = vec![];
        loop {
            let p = payload(6, 0, acked.len() as u64);
            match wal.commit(&p) {
                Ok(l) => acked.push((l, p)),
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{}: {e}", fs.name);
                    break;
                }
            }
            assert!(acked.len() < 1000, "{}: never ran out", fs.name);
        }
        wal.close().unwrap();
        let e = Wal::open(&d, o.clone()).unwrap_err();
        let msg = e.to_string();
        eprintln!("{}: {msg}", fs.name);
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{}: {msg}", fs.name);
        assert_eq!(e.kind(), fspace::ErrorKind::NoSpace, "{msg}");
        assert_eq!((e.op(), e.path()), ("open log", d.as_path()), "{msg}");
        let n = acked.len();
        let says = format!("its {n} records (LSN 1 to {n}) are intact, verified by this open");
        assert!(msg.contains(&says), "{}: {msg}", fs.name);
        assert!(msg.contains("WalView"), "{msg}");
        assert!(msg.contains(&format!("`fspace wal verify {}`", d.display())), "{msg}");
        // The step that failed keeps its own operation and errno.
        let Error::Context { source, .. } = &e else { panic!("{msg}") };
        assert_eq!(source.raw_os_error(), Some(libc::ENOSPC), "{msg}");
        // Still full (the failed open left no space taken), the view reads
        // every acknowledged record.
        let view = fspace::wal::WalView::open(&d).unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        assert_eq!(view.recovery().records, n as u64, "{}", fs.name);
        assert_eq!(view.next_lsn(), Lsn(n as u64 + 1));
        let got = view
            .read_from(view.first_lsn())
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(got.len(), n, "{}", fs.name);
        for (r, (l, p)) in got.iter().zip(&acked) {
            assert_eq!((&r.lsn, &r.data), (l, p));
        }
        std::fs::remove_file(&ballast).unwrap();
    }
}

common::per_fs! {
    /// Each sync method commits, reads back, and survives a reopen; the
    /// per-write methods issue no `fdatasync` for commits (each write is
    /// durable when it returns), `fdatasync` one per commit; the stats say
    /// which method ran and why.
    fn each_sync_method_commits_and_reads_back(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for method in SyncMethod::ALL {
            let d = dir.path().join(method.name());
            let o = opts().sync_method(Some(method));
            let wal = Wal::open(&d, o.clone()).unwrap();
            let io = wal.stats().io;
            assert_eq!(io.sync_chosen_by, SyncChoice::Asked, "{}: {io}", fs.name);
            let used = if method == SyncMethod::DirectDsync && !io.direct_io {
                // O_DIRECT refused (FUSE): the writes still carry RWF_DSYNC.
                let f = &io.fallbacks[..];
                assert!(matches!(f, [f] if f.refused == IoRefusal::ODirect), "{}: {io}", fs.name);
                assert_eq!((f[0].before, f[0].after), (method, SyncMethod::Dsync), "{}: {io}", fs.name);
                SyncMethod::Dsync
            } else {
                assert!(io.fallbacks.is_empty(), "{}: {io}", fs.name);
                method
            };
            assert_eq!(io.sync_method, used, "{}: {io}", fs.name);
            let before = wal.stats().syncs;
            let mut want = vec![];
            for n in 0..60 {
                let p = payload(11, 0, n);
                wal.commit(&p).unwrap();
                want.push(p);
            }
            let syncs = wal.stats().syncs - before;
            if used.per_write() {
                assert_eq!(syncs, 0, "{} {method}: fdatasync calls", fs.name);
            } else {
                assert!(syncs >= 60, "{} {method}: {syncs} fdatasync calls for 60 commits", fs.name);
            }
            assert!(wal.stats().switches >= 3, "{}", fs.name);
            wal.close().unwrap();
            let wal = Wal::open(&d, o).unwrap();
            let got: Vec<Vec<u8>> = read_all(&wal).into_iter().map(|r| r.data).collect();
            assert_eq!(got, want, "{} {method}: after reopen", fs.name);
            wal.close().unwrap();
        }
    }
}

common::per_fs! {
    /// With `direct_io` on, records go out with O_DIRECT where the filesystem
    /// allows it (and say why not where it does not); the log reads back the
    /// same, also after a reopen.
    fn direct_io_writes_read_back(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut o = opts();
        o.direct_io = Some(true);
        let wal = Wal::open(&d, o.clone()).unwrap();
        let io = wal.stats().io;
        assert_eq!(io.direct_io_by, DirectIoChoice::CallerOn, "{}: {io}", fs.name);
        if fs.is(&["ext4", "xfs", "btrfs", "ext4-noextents", "tmpfs"]) {
            assert!(io.direct_io, "{}: {io}", fs.name);
            assert!(io.fallbacks.is_empty(), "{}: {io}", fs.name);
        } else if !io.direct_io {
            // Refused (sshfs accepts it on this matrix; a FUSE server may
            // not): said as a fallback, writes buffered.
            assert!(matches!(&io.fallbacks[..], [f] if f.refused == IoRefusal::ODirect), "{}: {io}", fs.name);
        }
        let mut want = vec![];
        for n in 0..60 {
            let p = payload(9, 0, n);
            if n % 3 == 0 {
                wal.append(&p).unwrap();
            } else {
                wal.commit(&p).unwrap();
            }
            want.push(p);
        }
        wal.sync().unwrap();
        assert!(wal.stats().switches >= 3);
        let got: Vec<Vec<u8>> = read_all(&wal).into_iter().map(|r| r.data).collect();
        assert_eq!(got, want, "{}", fs.name);
        wal.close().unwrap();
        let wal = Wal::open(&d, o).unwrap();
        let got: Vec<Vec<u8>> = read_all(&wal).into_iter().map(|r| r.data).collect();
        assert_eq!(got, want, "{}: after reopen", fs.name);
        wal.close().unwrap();
        eprintln!("{}: {io}", fs.name);
    }
}

/// Regression (review): impossible numbers in a checksummed header and a
/// write buffer smaller than a page are refused, not a panic or a hang.
#[test]
fn impossible_numbers_are_refused() {
    use fspace::internals::SegmentHeader;
    let fs = &common::all()[0];
    let _g = fs.lock();
    let dir = fs.tempdir();
    let d = dir.path().join("wal");
    std::fs::create_dir(&d).unwrap();
    let h = SegmentHeader {
        version: fspace::internals::FORMAT_VERSION,
        log_id: [1; 16],
        seq: 1,
        size: SEG,
        first_lsn: u64::MAX,
        nonce: 0,
    };
    let mut b = h.encode().to_vec();
    b.resize(SEG as usize, 0);
    let p = d.join("000000000001.seg");
    std::fs::write(&p, &b).unwrap();
    let e = Wal::open(&d, opts()).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    let mut o = opts();
    o.write_buffer = 1000;
    let e = Wal::open(dir.path().join("other"), o).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
}

/// Regression (second review): after a burst of concurrent commits, a lone
/// committer is not made to wait for a group (counted, not timed); a tiny
/// duty cycle is refused; a segment truncated under a reader ends the read
/// with an error instead of spinning.
#[test]
fn lone_committer_after_a_burst_and_odd_options() {
    let fs = &common::all()[0];
    let _g = fs.lock();
    let dir = fs.tempdir();
    let wal = Wal::open(dir.path().join("wal"), opts()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    wal.commit(&[1u8; 100]).unwrap();
                }
            });
        }
    });
    std::thread::sleep(Duration::from_millis(120)); // past the peak window
    let before = wal.stats().group.gather_waits;
    for _ in 0..300 {
        wal.commit(&[2u8; 100]).unwrap();
    }
    assert_eq!(
        wal.stats().group.gather_waits,
        before,
        "a lone committer waited for a group"
    );
    // A segment cut short under a reader: an error, not a hang.
    let cur = wal.segments().last().unwrap().path.clone();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cur)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let r: Vec<_> = wal.read_from(Lsn(0)).unwrap().collect();
    assert!(r.last().unwrap().is_err(), "truncation not reported");
    drop(wal);

    let mut o = opts();
    o.prepare_duty_cycle = 1e-300;
    let e = Wal::open(dir.path().join("other"), o).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
    let mut o = opts();
    o.write_buffer = usize::MAX;
    let e = Wal::open(dir.path().join("other"), o).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
}

common::per_fs! {
    /// A saved probe that measured the sync methods decides the log's
    /// `auto` method when the log follows saved measurements (and only
    /// then); a method asked for still wins.
    fn saved_probe_chooses_the_sync_method(fs) on [ext4, btrfs, ext4_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let state = tempfile::tempdir().unwrap();
        let store = fspace::SavedResults::in_dir(state.path());
        let info = fspace::fs_info(dir.path()).unwrap();
        // Built as the saved file spells it (the types are #[non_exhaustive]).
        let saved: fspace::probe::SavedPolicy = serde_json::from_value(serde_json::json!({
            "schema": fspace::probe::SAVED_SCHEMA,
            "measured_utc": "2026-11-26 00:00:00 UTC",
            "measured_by": "test",
            "key": fspace::probe::FsKey::of(&info),
            "recommendations": [{
                "intent": fspace::Intent::Log,
                "strategy": fspace::internals::built_in(&info, fspace::Intent::Log).first(),
                "recycle": false,
                "summary": "test",
                "reason": "test",
                "figure": 1.0,
                "measured": true,
                "too_noisy": false,
                "sync_method": SyncMethod::Dsync,
                "sync_reason": "dsync: test",
            }],
        }))
        .unwrap();
        store.save(&saved).unwrap();
        let auto = opts().prepare(fspace::StrategyChoice::auto(store.clone()));
        let wal = Wal::open(dir.path().join("a"), auto.clone()).unwrap();
        let io = wal.stats().io;
        assert_eq!(io.sync_method, SyncMethod::Dsync, "{}: {io}", fs.name);
        match &io.sync_chosen_by {
            SyncChoice::Saved { measured_utc, path } => {
                assert_eq!(measured_utc, "2026-11-26 00:00:00 UTC", "{}: {io}", fs.name);
                assert!(path.starts_with(state.path()), "{}: {io}", fs.name);
            }
            other => panic!("{}: chosen by {other:?}", fs.name),
        }
        wal.commit(b"x").unwrap();
        wal.close().unwrap();
        let built_in = Wal::open(dir.path().join("b"), opts()).unwrap();
        let io = built_in.stats().io;
        assert!(matches!(io.sync_chosen_by, SyncChoice::Policy { .. }), "{}: {io}", fs.name);
        built_in.close().unwrap();
        let asked = auto.sync_method(Some(SyncMethod::Fdatasync));
        let wal = Wal::open(dir.path().join("c"), asked).unwrap();
        let io = wal.stats().io;
        assert_eq!((io.sync_method, &io.sync_chosen_by), (SyncMethod::Fdatasync, &SyncChoice::Asked), "{io}");
        wal.close().unwrap();
    }
}
