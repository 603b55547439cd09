//! Looking into a log without changing it (`WalView`) and following it
//! (`Wal::follow`), on the filesystem matrix.

use fspace_test_kit as common;

use fspace::wal::{StopReason, Wal, WalOptions, WalView};
use fspace::{Error, Lsn};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

fn opts() -> WalOptions {
    WalOptions::default().segment_size(64 << 10)
}

fn payload(n: u64) -> Vec<u8> {
    let len = 50 + (n * 7919 % 9000) as usize;
    (0..len)
        .map(|i| (i as u64 ^ n.wrapping_mul(131)) as u8)
        .collect()
}

/// Every entry of `dir` with its length, content hash and mtime: proof
/// that nothing changed.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, u64, SystemTime)> {
    use std::hash::{Hash, Hasher};
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let md = std::fs::metadata(&p).unwrap();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        if md.is_file() {
            std::fs::read(&p).unwrap().hash(&mut h);
        }
        m.insert(p, (md.len(), h.finish(), md.modified().unwrap()));
    }
    m
}

common::per_fs! {
    /// A view of a live log (its writer open in this process, holding the
    /// lock) reads every committed record with its segment and offset, and
    /// changes nothing in the directory.
    fn view_of_a_live_log_reads_and_changes_nothing(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        let mut want = vec![];
        for n in 0..80 {
            let p = payload(n);
            let l = wal.commit(&p).unwrap();
            want.push((l, p));
        }
        assert!(wal.stats().switches >= 2, "{}", fs.name);
        wal.wait_prepared().unwrap();
        let before = listing(&d);
        let v = WalView::open(&d).unwrap();
        assert!(v.recovery().read_only);
        assert_eq!(v.first_lsn(), want[0].0);
        assert_eq!(v.next_lsn(), Lsn(want.last().unwrap().0 .0 + 1), "{}", fs.name);
        let got: Vec<_> = v.read_from(Lsn(0)).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), want.len());
        for (r, (l, p)) in got.iter().zip(&want) {
            assert_eq!((&r.lsn, &r.data), (l, p));
            let seg = v.segments().iter().find(|s| s.seq == r.segment).unwrap();
            // The record's bytes are where the view says they are.
            let bytes = std::fs::read(&seg.path).unwrap();
            let at = r.offset as usize;
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            assert_eq!(len, p.len(), "{}: length at {} of segment {}", fs.name, at, r.segment);
        }
        let from: Vec<_> = v.read_from(want[50].0).unwrap().map(|r| r.unwrap().lsn).collect();
        assert_eq!(from.first(), Some(&want[50].0));
        drop(v);
        assert_eq!(listing(&d), before, "{}: the view changed the directory", fs.name);
        // The writer goes on.
        wal.commit(b"more").unwrap();
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// A log a killed writer left with leftovers (a temporary file, a torn
    /// tail): the view reports what a writable open would clean up and
    /// removes nothing; then the writable open does.
    fn view_reports_leftovers_without_removing_them(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        for n in 0..10 {
            wal.commit(&payload(n)).unwrap();
        }
        let last = wal.segments().last().unwrap().clone();
        let end = wal.durable_lsn();
        drop(wal); // as after a crash: no close
        let tmp = d.join(".000000000099.seg.fspace-tmp-host-1-1");
        std::fs::write(&tmp, b"half made").unwrap();
        // A torn tail: garbage after the last record of the last segment.
        let seg = std::fs::read(&last.path).unwrap();
        let used = seg.iter().rposition(|b| *b != 0).unwrap() + 1;
        let at = used.div_ceil(4096) * 4096;
        let f = std::fs::OpenOptions::new().write(true).open(&last.path).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[0xA5; 700], at as u64).unwrap();
        drop(f);
        let before = listing(&d);
        let v = WalView::open(&d).unwrap();
        let r = v.recovery();
        assert_eq!(r.removed_temp_files, 1, "{}", fs.name);
        assert!(r.tail.is_some(), "{}", fs.name);
        assert_eq!(v.next_lsn(), Lsn(end.0 + 1));
        assert_eq!(listing(&d), before, "{}: the view changed the directory", fs.name);
        let wal = Wal::open(&d, opts()).unwrap();
        assert!(!tmp.exists());
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// Damage in a complete segment: the view refuses with the segment and
    /// the offset, and changes nothing.
    fn view_of_a_damaged_log_names_the_offset(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        let mut offsets = vec![];
        for n in 0..80 {
            wal.commit(&payload(n)).unwrap();
        }
        for r in wal.read_from(Lsn(0)).unwrap() {
            let r = r.unwrap();
            offsets.push((r.segment, r.offset));
        }
        let first = wal.segments()[0].clone();
        wal.close().unwrap();
        let (_, off) = *offsets.iter().filter(|(s, _)| *s == first.seq).nth(3).unwrap();
        let mut bytes = std::fs::read(&first.path).unwrap();
        bytes[off as usize + 40] ^= 0xFF;
        std::fs::write(&first.path, &bytes).unwrap();
        let before = listing(&d);
        let e = WalView::open(&d).unwrap_err();
        match &e {
            Error::Corrupt { path, offset, .. } => {
                assert_eq!(path, &first.path);
                assert_eq!(*offset, off, "{}: {e}", fs.name);
            }
            other => panic!("{}: expected Corrupt, got {other}", fs.name),
        }
        assert_eq!(listing(&d), before);
    }
}

#[test]
fn view_of_no_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = WalView::open(dir.path().join("missing")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
    let e = WalView::open(dir.path()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
    assert!(e.to_string().contains("no log"), "{e}");
    let f = dir.path().join("f");
    std::fs::write(&f, b"x").unwrap();
    let e = WalView::open(&f).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A view works on a read-only mount (a read-only bind mount of the log).
#[test]
fn view_on_a_read_only_mount() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("wal");
    let wal = Wal::open(&d, opts()).unwrap();
    for n in 0..30 {
        wal.commit(&payload(n)).unwrap();
    }
    wal.close().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let Some(_m) = common::bind_mount(&d, &ro, true) else {
        assert!(
            !common::require_matrix(),
            "a read-only bind mount needs root"
        );
        common::skipped("view_on_a_read_only_mount", "-", "not root: no bind mount");
        return;
    };
    let v = WalView::open(&ro).unwrap();
    assert_eq!(v.read_from(Lsn(0)).unwrap().count(), 30);
    // A writable open is refused there, with the errno.
    let e = Wal::open(&ro, opts()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EROFS), "{e}");
}

common::per_fs! {
    /// A follower returns each record once it is durable, in order, waits
    /// for new ones (returning None at its timeout), and fails once the log
    /// is closed.
    fn follower_sees_each_durable_record_once(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        let first = wal.commit(b"before").unwrap();
        let mut f = wal.follow(Lsn(0)).unwrap();
        let r = f.next_timeout(Duration::from_secs(5)).unwrap().unwrap();
        assert_eq!((r.lsn, r.data.as_slice()), (first, &b"before"[..]));
        let t = Instant::now();
        assert!(f.next_timeout(Duration::from_millis(50)).unwrap().is_none());
        assert!(t.elapsed() >= Duration::from_millis(45));
        // Appended, not synced: not returned.
        let appended = wal.append(b"appended").unwrap();
        assert!(f.next_timeout(Duration::from_millis(30)).unwrap().is_none(), "{}", fs.name);
        std::thread::scope(|s| {
            s.spawn(|| {
                for n in 0..60 {
                    wal.commit(&payload(n)).unwrap();
                    if n % 10 == 0 {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            });
            let r = f.next_timeout(Duration::from_secs(10)).unwrap().unwrap();
            assert_eq!((r.lsn, r.data.as_slice()), (appended, &b"appended"[..]));
            for n in 0..60 {
                let r = f.next_timeout(Duration::from_secs(10)).unwrap().unwrap();
                assert_eq!(r.lsn, Lsn(appended.0 + 1 + n), "{}", fs.name);
                assert_eq!(r.data, payload(n));
            }
        });
        assert!(wal.stats().switches >= 2);
        // Released records cannot be followed.
        let end = wal.durable_lsn();
        wal.release_before(end).unwrap();
        let e = wal.follow(Lsn(1)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ERANGE), "{e}");
        wal.close().unwrap();
        let e = f.next_timeout(Duration::from_millis(10)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{e}");
        // A follower left alive holds neither the log's lock nor the log.
        let again = Wal::open(&d, opts()).unwrap();
        again.close().unwrap();
        drop(f);
    }
}

common::per_fs! {
    /// Views opened again and again beside a writer that commits, switches
    /// segments and releases them all the time: every open succeeds (no
    /// false damage from a segment going live or away between two reads)
    /// and sees a growing log.
    fn views_beside_a_busy_writer_open(fs) on [ext4, xfs, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for n in 0..3000u64 {
                    let l = wal.commit(&payload(n)).unwrap();
                    if n % 40 == 39 {
                        wal.release_before(Lsn(l.0.saturating_sub(20))).unwrap();
                    }
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let mut last = Lsn(0);
            let mut opened = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let v = WalView::open(&d).unwrap_or_else(|e| panic!("{}: view {opened}: {e}", fs.name));
                assert!(v.next_lsn() >= last, "{}", fs.name);
                assert!(v.first_lsn() <= v.next_lsn());
                last = v.next_lsn();
                opened += 1;
                // Reading up to damage finds none either: what looks like
                // damage while the writer changes the directory is retried
                // as a strict open's error is.
                let v = WalView::open_to_damage(&d)
                    .unwrap_or_else(|e| panic!("{}: view to damage {opened}: {e}", fs.name));
                assert_eq!(v.damage(), None, "{}: false damage beside the writer", fs.name);
                assert!(v.next_lsn() >= last, "{}", fs.name);
                last = v.next_lsn();
            }
            eprintln!("{}: {opened} views beside the writer", fs.name);
        });
        assert!(wal.stats().switches > 20, "{}", fs.name);
        wal.close().unwrap();
    }
}

/// A closed log of 80 records in 64 KiB segments (at least 3), and where
/// each record is: (LSN, segment, offset, payload length).
fn three_segments(d: &Path) -> Vec<(Lsn, u64, u64, usize)> {
    let wal = Wal::open(d, opts()).unwrap();
    for n in 0..80 {
        wal.commit(&payload(n)).unwrap();
    }
    let at: Vec<_> = wal
        .read_from(Lsn(0))
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (r.lsn, r.segment, r.offset, r.data.len())
        })
        .collect();
    assert!(wal.segments().len() >= 3);
    wal.close().unwrap();
    at
}

fn flip(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 0x5A;
    std::fs::write(path, &bytes).unwrap();
}

fn seg_path(d: &Path, seq: u64) -> PathBuf {
    d.join(format!("{seq:012}.seg"))
}

common::per_fs! {
    /// A byte flipped in the middle of segment 2 of 3: the strict view
    /// refuses; the view to damage returns exactly the records before the
    /// damaged one, and the damage as values: the segment, the record's
    /// start and extent, the LSN expected, the reason. Nothing changes.
    fn view_to_damage_reads_up_to_mid_log_damage(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let at = three_segments(&d);
        let in2: Vec<_> = at.iter().filter(|r| r.1 == 2).collect();
        let &&(bad, _, off, len) = &in2[in2.len() / 2];
        let seg = seg_path(&d, 2);
        flip(&seg, off + 16 + len as u64 / 2);
        let before = listing(&d);

        let e = WalView::open(&d).unwrap_err();
        assert!(matches!(e, Error::Corrupt { offset, .. } if offset == off), "{}: {e}", fs.name);
        let v = WalView::open_to_damage(&d).unwrap();
        let got: Vec<_> = v.read_from(Lsn(0)).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(got.len() as u64, bad.0 - 1, "{}", fs.name);
        for (r, n) in got.iter().zip(0..) {
            assert_eq!((r.lsn, &r.data), (Lsn(n + 1), &payload(n)), "{}", fs.name);
        }
        assert_eq!(v.next_lsn(), bad);
        assert_eq!(v.segments().last().map(|s| s.seq), Some(2));
        let dmg = v.damage().expect("damage").clone();
        assert_eq!(dmg.segment, seg);
        assert_eq!(dmg.seq, 2);
        assert_eq!(dmg.offset, off, "{}", fs.name);
        assert_eq!(dmg.record_end, Some(off + (16 + len as u64).div_ceil(16) * 16));
        assert_eq!(dmg.expected_lsn, Some(bad));
        assert_eq!(dmg.found_lsn, Some(bad));
        assert_eq!(dmg.reason, StopReason::ChecksumMismatch);
        assert_eq!(dmg.reason.name(), "checksum-mismatch");
        assert!(!dmg.reason.is_unwritten_end());
        // The strict open's error is the same damage.
        assert_eq!(dmg.to_error("recover").to_string(), e.to_string());
        assert_eq!(v.recovery().damage.as_ref(), Some(&dmg));
        assert!(v.recovery().tail.is_none(), "{}", fs.name);
        // Reading from past the damage returns nothing.
        assert_eq!(v.read_from(Lsn(bad.0 + 5)).unwrap().count(), 0);
        drop(v);
        assert_eq!(listing(&d), before, "{}: the view changed the directory", fs.name);
        // A writable open still refuses, changing nothing it reads.
        assert!(matches!(Wal::open(&d, opts()), Err(Error::Corrupt { .. })));
    }
}

common::per_fs! {
    /// Damage to the chain of segments: a missing middle segment (the
    /// records of the first are returned, the damage names the missing
    /// file and the LSN expected) and a damaged first header (no record,
    /// no LSN known).
    fn view_to_damage_of_a_broken_chain(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let at = three_segments(&d);
        let first2 = at.iter().find(|r| r.1 == 2).unwrap().0;
        let gone = dir.path().join("seg2");
        std::fs::rename(seg_path(&d, 2), &gone).unwrap();
        let v = WalView::open_to_damage(&d).unwrap();
        assert_eq!(v.read_from(Lsn(0)).unwrap().count() as u64, first2.0 - 1, "{}", fs.name);
        let dmg = v.damage().unwrap();
        assert_eq!(dmg.reason, StopReason::MissingSegment);
        assert_eq!((dmg.segment.as_path(), dmg.seq, dmg.offset), (seg_path(&d, 2).as_path(), 2, 0));
        assert_eq!(dmg.expected_lsn, Some(first2));
        assert!(WalView::open(&d).is_err());
        std::fs::rename(&gone, seg_path(&d, 2)).unwrap();

        flip(&seg_path(&d, 1), 20);
        let v = WalView::open_to_damage(&d).unwrap();
        assert_eq!(v.read_from(v.first_lsn()).unwrap().count(), 0);
        let dmg = v.damage().unwrap();
        assert_eq!((dmg.reason, dmg.seq, dmg.offset, dmg.expected_lsn), (StopReason::SegmentHeader, 1, 0, None));
        assert!(v.segments().is_empty());
    }
}

common::per_fs! {
    /// The end of the log as values: zeros after a clean close (an end
    /// where nothing was written), a checksum mismatch at the last record
    /// when a byte of it is flipped (its extent and its LSN field given),
    /// a cut-short file when the last segment is truncated. None of them is
    /// damage: the strict view opens.
    fn tail_report_says_how_the_log_ends(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let at = three_segments(&d);
        let &(last, seq, off, len) = at.last().unwrap();
        let v = WalView::open(&d).unwrap();
        let t = v.recovery().tail.clone().unwrap();
        assert_eq!((t.reason, t.seq, t.expected_lsn), (StopReason::Zeros, seq, Lsn(last.0 + 1)), "{}", fs.name);
        assert!(t.reason.is_unwritten_end());
        assert_eq!((t.record_end, t.found_lsn), (None, None));

        flip(&seg_path(&d, seq), off + 16 + len as u64 - 1);
        let v = WalView::open(&d).unwrap();
        assert_eq!(v.next_lsn(), last);
        let t = v.recovery().tail.clone().unwrap();
        assert_eq!((t.reason, t.offset, t.expected_lsn, t.found_lsn), (StopReason::ChecksumMismatch, off, last, Some(last)), "{}", fs.name);
        assert_eq!(t.record_end, Some(off + (16 + len as u64).div_ceil(16) * 16));
        assert!(!t.reason.is_unwritten_end());
        assert!(WalView::open_to_damage(&d).unwrap().damage().is_none());

        let f = std::fs::OpenOptions::new().write(true).open(seg_path(&d, seq)).unwrap();
        f.set_len(off + 20).unwrap();
        drop(f);
        let t = WalView::open(&d).unwrap().recovery().tail.clone().unwrap();
        assert_eq!((t.reason, t.offset), (StopReason::Truncated, off), "{}", fs.name);
        assert_eq!(t.reason.name(), "truncated");
    }
}
