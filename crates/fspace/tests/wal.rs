//! The segment log on the filesystem matrix: commits, group commit,
//! recycling, recovery from kill -9, stale data, damage, ENOSPC, poison.

use fspace_test_kit as common;

use fspace::wal::{Record, Wal, WalOptions};
use fspace::{Error, Lsn, SyncMethod};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SEG: u64 = 256 << 10;

fn opts() -> WalOptions {
    WalOptions {
        segment_size: SEG,
        ..Default::default()
    }
}

/// xorshift64*: deterministic test randomness.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The payload a writer (`run`, `thread`) commits as its `n`th record:
/// 1 B to 64 KiB, content fixed by the three numbers.
fn payload(run: u64, thread: u64, n: u64) -> Vec<u8> {
    let mut r = Rng::new(run.wrapping_mul(1_000_003) ^ (thread << 40) ^ n);
    let len = 1 + r.below(64 << 10) as usize;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

fn hash(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

fn read_all(wal: &Wal) -> Vec<Record> {
    wal.read_from(Lsn(0))
        .expect("reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("read back")
}

fn seg_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    v.sort();
    v
}

common::per_fs! {
    /// Commits across several segments, reads back, reopens, reads back again
    /// and continues the LSN sequence, on every filesystem.
    fn commit_read_reopen(fs) {
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
    fn group_commit_shares_fdatasync(fs) {
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
    fn release_recycles_and_old_records_never_return(fs) {
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

/// Opens a log with committed records spread over 4 segments and closes
/// it; returns the records.
fn build_log(d: &Path) -> Vec<Record> {
    let wal = Wal::open(d, opts()).unwrap();
    while wal.stats().switches < 3 {
        let n = wal.next_lsn().0;
        wal.commit(&payload(4, 0, n)).unwrap();
    }
    for _ in 0..3 {
        let n = wal.next_lsn().0;
        wal.commit(&payload(4, 0, n)).unwrap();
    }
    let recs = read_all(&wal);
    wal.close().unwrap();
    recs
}

fn modify(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    std::fs::write(path, &b).unwrap();
}

/// Offset of the record with `lsn` in a segment file (scanning headers).
fn record_offset(path: &Path, lsn: u64) -> Option<usize> {
    let b = std::fs::read(path).unwrap();
    let mut off = 64;
    while off + 16 <= b.len() {
        let len = u32::from_le_bytes(b[off..off + 4].try_into().unwrap()) as usize;
        let l = u64::from_le_bytes(b[off + 8..off + 16].try_into().unwrap());
        if l == lsn {
            return Some(off);
        }
        if len == 0 && l == 0 {
            return None;
        }
        off += (16 + len).div_ceil(8) * 8;
    }
    None
}

fn expect_corrupt(e: Error, path: &Path) {
    match &e {
        Error::Corrupt { path: p, .. } => assert_eq!(p, path, "{e}"),
        other => panic!("expected Corrupt naming {}: {other}", path.display()),
    }
    assert_eq!(e.raw_os_error(), Some(libc::EUCLEAN));
    assert!(e.to_string().contains("offset"), "{e}");
}

common::per_fs! {
    /// Torn and corrupt tails, damage in older segments, truncation, gaps and
    /// foreign files: each handled as documented, never a panic.
    fn torn_and_corrupt_segments(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        // 1. Bytes flipped inside a record of the last written segment:
        //    the log ends just before it; earlier records are intact.
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs = build_log(&d);
        let segs = seg_files(&d);
        let last = &segs[segs.len() - 2]; // the final one was started by close? no: by open
        let victim = recs[recs.len() - 2].lsn.0;
        let (path, off) = segs
            .iter()
            .find_map(|p| record_offset(p, victim).map(|o| (p.clone(), o)))
            .expect("record found");
        modify(&path, |b| b[off + 20] ^= 0x55);
        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let tail = wal.recovery().tail.clone().expect("tail report");
        assert_eq!(tail.segment, path, "{name}");
        assert_eq!(tail.offset, off as u64);
        assert!(tail.stopped_at.contains("checksum"), "{}", tail.stopped_at);
        assert!(tail.discarded_bytes > 0, "{name}: {tail:?}");
        let got = read_all(&wal);
        assert_eq!(got.len() as u64, victim - 1, "{name}");
        assert!(got.iter().zip(&recs).all(|(a, b)| a == b));
        // The log continues after the discarded tail.
        assert_eq!(wal.commit(b"next").unwrap(), Lsn(victim));
        wal.close().unwrap();
        let _ = last;

        // 2. A page zeroed in the last segment.
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs = build_log(&d);
        let segs = seg_files(&d);
        let victim = recs[recs.len() - 2].lsn.0;
        let (path, off) = segs
            .iter()
            .find_map(|p| record_offset(p, victim).map(|o| (p.clone(), o)))
            .unwrap();
        modify(&path, |b| {
            let page = off / 4096 * 4096;
            b[page..page + 4096].fill(0);
        });
        let wal = Wal::open(&d, opts()).unwrap();
        let n = read_all(&wal).len() as u64;
        assert!(n < victim, "{name}: zeroed page not detected");
        assert!(read_all(&wal).iter().zip(&recs).all(|(a, b)| a == b));
        wal.close().unwrap();

        // 3. Bytes flipped in an older, complete segment: an error naming
        //    the segment and the offset.
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs = build_log(&d);
        let segs = seg_files(&d);
        let (path, off) = segs
            .iter()
            .find_map(|p| record_offset(p, recs[1].lsn.0).map(|o| (p.clone(), o)))
            .unwrap();
        modify(&path, |b| b[off + 30] ^= 1);
        let e = Wal::open(&d, opts()).unwrap_err();
        expect_corrupt(e, &path);
        let msg = Wal::open(&d, opts()).unwrap_err().to_string();
        assert!(msg.contains(&format!("offset {off}")), "{name}: {msg}");
        // The header of an older segment, too.
        modify(&path, |b| b[off + 30] ^= 1);
        modify(&path, |b| b[33] ^= 1);
        expect_corrupt(Wal::open(&d, opts()).unwrap_err(), &path);

        // 4. A truncated older segment is an error; a truncated last one
        //    loses only its tail.
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs = build_log(&d);
        let segs = seg_files(&d);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&segs[0])
            .unwrap();
        f.set_len(8192).unwrap();
        expect_corrupt(Wal::open(&d, opts()).unwrap_err(), &segs[0]);
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs2 = build_log(&d);
        let segs = seg_files(&d);
        let victim = recs2[recs2.len() - 2].lsn.0;
        let (path, off) = segs
            .iter()
            .find_map(|p| record_offset(p, victim).map(|o| (p.clone(), o)))
            .unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(off as u64 + 100).unwrap();
        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(read_all(&wal).len() as u64, victim - 1);
        wal.close().unwrap();
        let _ = recs;

        // 5. A segment missing in the middle.
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        build_log(&d);
        let segs = seg_files(&d);
        std::fs::remove_file(&segs[1]).unwrap();
        let e = Wal::open(&d, opts()).unwrap_err();
        assert!(e.to_string().contains("missing"), "{name}: {e}");
        assert_eq!(e.path(), segs[1]);

        // 6. Foreign files are reported and left alone.
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs = build_log(&d);
        std::fs::write(d.join("notes.txt"), b"mine").unwrap();
        std::fs::write(d.join("12.seg"), b"not a segment name").unwrap();
        std::fs::create_dir(d.join("subdir")).unwrap();
        let wal = Wal::open(&d, opts()).unwrap();
        assert_eq!(wal.recovery().foreign_files.len(), 3, "{name}");
        assert_eq!(read_all(&wal), recs);
        wal.close().unwrap();
        assert_eq!(std::fs::read(d.join("notes.txt")).unwrap(), b"mine");
        assert!(d.join("12.seg").exists() && d.join("subdir").is_dir());

        // 7. Leftover temporary files of an interrupted creation go.
        std::fs::write(d.join(".000000000099.seg.fspace-tmp-otherhost-1-1"), b"x").unwrap();
        let wal = Wal::open(&d, opts()).unwrap();
        assert_eq!(wal.recovery().removed_temp_files, 1);
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// A power cut while the newest segment's header was being written can
    /// leave a header that fails its checksum (its fdatasync never returned,
    /// so nothing in it was acknowledged): the log ends before it, the file is
    /// set aside (not deleted), and the log opens and continues. The same
    /// damage on an older segment still refuses, naming the file (case 3 of
    /// `torn_and_corrupt_segments`).
    fn torn_header_on_the_newest_segment_ends_the_log(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let recs = build_log(&d);
        let last_lsn = recs.last().expect("records").lsn.0;
        let segs = seg_files(&d);
        let last = segs
            .iter()
            .rposition(|p| record_offset(p, last_lsn).is_some())
            .expect("the last record's segment");
        let newest = segs
            .get(last + 1)
            .unwrap_or_else(|| panic!("{name}: no prepared segment after the last live one"))
            .clone();
        // Half a header reached the device: magic, version and log id of
        // a real one, the rest (sequence, LSN, checksum) still zeros.
        let real = std::fs::read(&segs[last]).unwrap();
        modify(&newest, |b| b[..32].copy_from_slice(&real[..32]));

        // A file set aside by an earlier torn header of the same name is
        // never replaced: this one goes to `.torn-header.2`.
        let mut earlier = newest.clone().into_os_string();
        earlier.push(".torn-header");
        let earlier = PathBuf::from(earlier);
        std::fs::write(&earlier, b"set aside before").unwrap();

        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(read_all(&wal), recs, "{name}");
        let mut aside = earlier.clone().into_os_string();
        aside.push(".2");
        let aside = PathBuf::from(aside);
        assert_eq!(
            std::fs::read(&earlier).unwrap(),
            b"set aside before",
            "{name}"
        );
        assert_eq!(
            wal.recovery().torn_header.as_deref(),
            Some(aside.as_path()),
            "{name}"
        );
        let kept = std::fs::read(&aside).unwrap();
        assert_eq!(
            &kept[..32],
            &real[..32],
            "{name}: the torn file was changed"
        );
        assert_eq!(wal.commit(b"after").unwrap(), Lsn(last_lsn + 1), "{name}");
        wal.close().unwrap();

        // Reopened: everything is there; the set-aside file is foreign now,
        // reported and left alone.
        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = read_all(&wal);
        assert_eq!(&got[..recs.len()], &recs[..], "{name}");
        assert_eq!(got[recs.len()].data, b"after", "{name}");
        assert!(wal.recovery().foreign_files.contains(&aside), "{name}");
        assert!(wal.recovery().foreign_files.contains(&earlier), "{name}");
        assert_eq!(wal.recovery().torn_header, None, "{name}");
        wal.close().unwrap();
        assert_eq!(std::fs::read(&aside).unwrap(), kept, "{name}");
    }
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
    fn enospc_while_preparing(fs) on [ext4, xfs, ext4_noextents, tmpfs] {
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
        let gopts = fspace::GrowOptions {
            intent: fspace::Intent::Bulk,
            create: true,
            check_free_space: false,
            ..Default::default()
        };
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

/// Property test: arbitrary damage to a log's files never panics recovery
/// or reading, and every record returned is one that was written.
#[test]
fn arbitrary_damage_never_returns_a_bad_record() {
    let fs = &common::all()[0];
    let _g = fs.lock();
    let base = fs.tempdir();
    let pristine = base.path().join("pristine");
    let recs = build_log(&pristine);
    let by_lsn: HashMap<Lsn, Vec<u8>> = recs.iter().map(|r| (r.lsn, r.data.clone())).collect();
    let files: Vec<PathBuf> = seg_files(&pristine);
    let mut rng = Rng::new(77);
    for case in 0..64 {
        let d = base.path().join(format!("case{case}"));
        std::fs::create_dir(&d).unwrap();
        for f in &files {
            std::fs::copy(f, d.join(f.file_name().unwrap())).unwrap();
        }
        let copies = seg_files(&d);
        for _ in 0..1 + rng.below(4) {
            let f = &copies[rng.below(copies.len() as u64) as usize];
            modify(f, |b| match rng.below(4) {
                0 => {
                    let i = rng.below(b.len() as u64) as usize;
                    b[i] ^= 1 << rng.below(8);
                }
                1 => {
                    let i = rng.below(b.len() as u64) as usize;
                    let n = (rng.below(512) as usize).min(b.len() - i);
                    for x in &mut b[i..i + n] {
                        *x = rng.next() as u8;
                    }
                }
                2 => {
                    let len = rng.below(b.len() as u64) as usize;
                    b.truncate(len);
                }
                _ => {
                    let page = rng.below(b.len() as u64 / 4096) as usize * 4096;
                    b[page..page + 4096].fill(0);
                }
            });
        }
        let r = std::panic::catch_unwind(|| match Wal::open(&d, opts()) {
            Ok(wal) => {
                let mut n = 0;
                if let Ok(reader) = wal.read_from(Lsn(0)) {
                    for r in reader {
                        match r {
                            Ok(rec) => {
                                assert_eq!(by_lsn.get(&rec.lsn), Some(&rec.data), "case {case}");
                                n += 1;
                            }
                            Err(e) => panic!("case {case}: recovered log unreadable: {e}"),
                        }
                    }
                }
                let _ = wal.close();
                Ok(n)
            }
            Err(e) => Err(e.to_string()),
        });
        assert!(r.is_ok(), "case {case} panicked");
    }
}

/// Arbitrary bytes after a valid header never panic recovery, and every
/// record read verifies (the reader only returns verified records; here
/// the test checks the CRC itself).
#[test]
fn arbitrary_bytes_as_a_segment() {
    use fspace::wal::format::{record_crc, RecordKey, SegmentHeader};
    let fs = &common::all()[0];
    let _g = fs.lock();
    let base = fs.tempdir();
    let mut rng = Rng::new(5);
    for case in 0..64 {
        let d = base.path().join(format!("c{case}"));
        std::fs::create_dir(&d).unwrap();
        let id = [case as u8; 16];
        let h = SegmentHeader {
            log_id: id,
            seq: 1,
            size: SEG,
            first_lsn: 1,
            nonce: case as u32,
        };
        let key = RecordKey::from(&h);
        let mut b = h.encode().to_vec();
        // (LSN, payload, CRC valid) of every record put in the segment.
        let mut written = vec![];
        while (b.len() as u64) < SEG {
            // Mostly valid-looking record headers with random contents.
            let len = rng.below(300) as usize;
            let lsn = if rng.below(2) == 0 {
                written.len() as u64 + 1 - rng.below(2)
            } else {
                rng.next()
            };
            let body: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let good = rng.below(4) != 0;
            let crc = if good {
                record_crc(&key, lsn, &body)
            } else {
                record_crc(&key, lsn, &body) ^ (1 + rng.below(u32::MAX as u64) as u32)
            };
            b.extend_from_slice(&(len as u32).to_le_bytes());
            b.extend_from_slice(&crc.to_le_bytes());
            b.extend_from_slice(&lsn.to_le_bytes());
            b.extend_from_slice(&body);
            b.resize(b.len().div_ceil(8) * 8, 0);
            written.push((lsn, body, good));
        }
        b.truncate(SEG as usize);
        std::fs::write(d.join("000000000001.seg"), &b).unwrap();
        let wal = match Wal::open(&d, opts()) {
            Ok(w) => w,
            Err(e) => panic!("case {case}: {e}"),
        };
        let got: Vec<Record> = wal.read_from(Lsn(0)).unwrap().map(|r| r.unwrap()).collect();
        // What comes back is exactly the leading run of records with a
        // valid CRC and the next LSN, in order.
        let valid = written
            .iter()
            .enumerate()
            .take_while(|(i, (lsn, _, good))| *good && *lsn == *i as u64 + 1)
            .count();
        // (The last record may be cut by the segment's end.)
        assert!(
            got.len() == valid || (got.len() + 1 == valid && valid == written.len()),
            "case {case}: {} records read, {valid} valid",
            got.len()
        );
        for (r, (lsn, body, good)) in got.iter().zip(&written) {
            assert!(*good, "case {case}: a record with a bad CRC was returned");
            assert_eq!((r.lsn.0, &r.data), (*lsn, body), "case {case}");
        }
        wal.close().unwrap();
    }
}

// ---------------------------------------------------------------------
// kill -9

/// The child side of the kill tests: runs only when spawned by them.
#[test]
fn wal_kill_child() {
    let Ok(spec) = std::env::var("FSPACE_WAL_CHILD") else {
        return;
    };
    let parts: Vec<&str> = spec.split(',').collect();
    let (dir, run, threads, mode) = (
        PathBuf::from(parts[0]),
        parts[1].parse::<u64>().unwrap(),
        parts[2].parse::<u64>().unwrap(),
        parts[3],
    );
    let mut o = opts();
    o.recycle_pool = 2;
    o.sync_method = parts.get(4).map(|m| m.parse().unwrap());
    let wal = Wal::open(&dir, o).unwrap();
    let start = wal.recovery().next_lsn;
    // Keep the log short: release what earlier runs wrote.
    wal.release_before(start).unwrap();
    println!("START {}", start.0);
    if mode == "stale" {
        // Fill several segments, release them, and let them be recycled;
        // then write fewer, smaller records and wait to be killed.
        let mut n = 0;
        while wal.stats().switches < 5 {
            let p = payload(run, 7, n);
            let l = wal.commit(&p).unwrap();
            println!("ACK {} {} 7 {}", l.0, hash(&p), n);
            n += 1;
        }
        let l = wal.commit(b"mark").unwrap();
        println!("ACK {} {} 9 0", l.0, hash(b"mark"));
        wal.release_before(l).unwrap();
        let mut m = 0;
        while wal.stats().prepared_recycled < 2 {
            let p = vec![m as u8; 100];
            let l = wal.commit(&p).unwrap();
            println!("ACK {} {} 8 {}", l.0, hash(&p), m);
            m += 1;
        }
        println!("STALE-READY");
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    std::thread::scope(|s| {
        for t in 0..threads {
            let wal = &wal;
            s.spawn(move || {
                for n in 0.. {
                    let p = payload(run, t, n);
                    let l = wal.commit(&p).unwrap();
                    println!("ACK {} {} {t} {n}", l.0, hash(&p));
                }
            });
        }
    });
}

struct Model {
    acked: HashMap<u64, u64>,
    /// Hashes of every payload a child may have committed without
    /// acknowledging it (in flight at the kill).
    possible: HashSet<u64>,
}

fn spawn_child(dir: &Path, run: u64, threads: u64, mode: &str) -> std::process::Child {
    spawn_child_with(dir, run, threads, mode, SyncMethod::Fdatasync)
}

/// A child that commits with sync method `method`.
fn spawn_child_with(
    dir: &Path,
    run: u64,
    threads: u64,
    mode: &str,
    method: SyncMethod,
) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "wal_kill_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            "FSPACE_WAL_CHILD",
            format!("{},{run},{threads},{mode},{method}", dir.display()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Reads the child's lines until `stop` says so; returns (lines, STARTed).
fn ack_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn absorb(model: &mut Model, run: u64, line: &str, last_n: &mut HashMap<u64, u64>) {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.first() == Some(&"ACK") && f.len() == 5 {
        let (lsn, h, t, n): (u64, u64, u64, u64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
        );
        model.acked.insert(lsn, h);
        let e = last_n.entry(t).or_insert(0);
        *e = (*e).max(n);
        let _ = run;
    }
}

/// Reopens the log after a kill and checks it against the model: every
/// acknowledged record present and identical, nothing else but payloads
/// the child could have committed; then commits one more.
fn verify_after_kill(d: &Path, model: &mut Model, fsname: &str, iter: u64) {
    let wal = Wal::open(d, opts()).unwrap_or_else(|e| panic!("{fsname} kill {iter}: reopen: {e}"));
    let recs = read_all(&wal);
    let first = recs.first().map_or(wal.recovery().next_lsn.0, |r| r.lsn.0);
    let mut seen = HashSet::new();
    for r in &recs {
        let h = hash(&r.data);
        match model.acked.get(&r.lsn.0) {
            Some(want) => assert_eq!(*want, h, "{fsname} kill {iter}: LSN {} changed", r.lsn),
            None => assert!(
                model.possible.contains(&h),
                "{fsname} kill {iter}: LSN {} holds a record nobody wrote ({} bytes)",
                r.lsn,
                r.data.len()
            ),
        }
        seen.insert(r.lsn.0);
    }
    for lsn in model.acked.keys().filter(|l| **l >= first) {
        assert!(
            seen.contains(lsn),
            "{fsname} kill {iter}: acknowledged LSN {lsn} lost"
        );
    }
    // Commits continue.
    let p = format!("parent {iter}").into_bytes();
    let l = wal.commit(&p).unwrap();
    model.acked.insert(l.0, hash(&p));
    wal.close().unwrap();
}

common::per_fs! {
    /// kill -9 at random moments, at least 50 times on each of ext4, xfs,
    /// btrfs and tmpfs (200+ kills per run), the children taking the sync
    /// methods in turn.
    fn kill_9_keeps_every_acknowledged_record(fs) on [ext4, xfs, btrfs, tmpfs] {
        let kills: u64 = std::env::var("FSPACE_WAL_KILLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50);
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut model = Model {
            acked: HashMap::new(),
            possible: HashSet::new(),
        };
        let mut rng = Rng::new(fs.name.len() as u64 * 31 + 7);
        let t0 = Instant::now();
        let mut total_acked = 0;
        for iter in 0..kills {
            let run = 1000 + iter;
            let threads = 1 + rng.below(3);
            let method = SyncMethod::ALL[iter as usize % SyncMethod::ALL.len()];
            let mut child = spawn_child_with(&d, run, threads, "commit", method);
            let rx = ack_lines(&mut child);
            // Half the kills land during open/recovery or right after.
            let delay = if rng.below(2) == 0 {
                Duration::from_millis(rng.below(15))
            } else {
                Duration::from_millis(10 + rng.below(80))
            };
            std::thread::sleep(delay);
            child.kill().unwrap();
            child.wait().unwrap();
            let mut last_n = HashMap::new();
            for line in rx.iter() {
                absorb(&mut model, run, &line, &mut last_n);
                total_acked += 1;
            }
            for t in 0..threads {
                let upto = last_n.get(&t).map_or(0, |n| n + 1);
                for n in 0..=upto {
                    model.possible.insert(hash(&payload(run, t, n)));
                }
            }
            verify_after_kill(&d, &mut model, &fs.name, iter);
        }
        eprintln!(
            "{}: {kills} kills, {total_acked} lines acknowledged, {:.1} s",
            fs.name,
            t0.elapsed().as_secs_f64()
        );
    }
}

common::per_fs! {
    /// Stale data: segments filled, released, recycled; fewer records written
    /// into them; kill -9: no record of a segment's earlier life comes back.
    fn kill_9_after_recycling_returns_no_stale_record(fs) on [ext4, xfs, btrfs, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut model = Model {
            acked: HashMap::new(),
            possible: HashSet::new(),
        };
        for iter in 0..3 {
            let run = 2000 + iter;
            let mut child = spawn_child(&d, run, 1, "stale");
            let rx = ack_lines(&mut child);
            let mut last_n = HashMap::new();
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let line = rx
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    .unwrap_or_else(|_| panic!("{}: child never got ready", fs.name));
                if line == "STALE-READY" {
                    break;
                }
                absorb(&mut model, run, &line, &mut last_n);
            }
            child.kill().unwrap();
            child.wait().unwrap();
            for line in rx.iter() {
                absorb(&mut model, run, &line, &mut last_n);
            }
            // Nothing was in flight at the kill (the child was sleeping):
            // every record read back must be an acknowledged one.
            verify_after_kill(&d, &mut model, &fs.name, iter);
        }
        // Everything read back is acknowledged, and recycling happened.
        let wal = Wal::open(&d, opts()).unwrap();
        for r in read_all(&wal) {
            assert_eq!(
                model.acked.get(&r.lsn.0),
                Some(&hash(&r.data)),
                "{}",
                fs.name
            );
        }
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// Each sync method commits, reads back, and survives a reopen; the
    /// per-write methods issue no `fdatasync` for commits (each write is
    /// durable when it returns), `fdatasync` one per commit; the stats say
    /// which method ran and why.
    fn each_sync_method_commits_and_reads_back(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for method in SyncMethod::ALL {
            let d = dir.path().join(method.name());
            let o = WalOptions { sync_method: Some(method), ..opts() };
            let wal = Wal::open(&d, o.clone()).unwrap();
            let stats = wal.stats();
            let used = if method == SyncMethod::DirectDsync && stats.direct_io != "yes" {
                // O_DIRECT refused (FUSE): the writes still carry RWF_DSYNC.
                assert!(stats.sync_method.starts_with("dsync (direct-dsync asked for"), "{}: {}", fs.name, stats.sync_method);
                SyncMethod::Dsync
            } else {
                assert!(stats.sync_method.starts_with(&format!("{method} (asked for")), "{}: {}", fs.name, stats.sync_method);
                method
            };
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
    fn direct_io_writes_read_back(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut o = opts();
        o.direct_io = Some(true);
        let wal = Wal::open(&d, o.clone()).unwrap();
        let direct = wal.stats().direct_io;
        if fs.is(&["ext4", "xfs", "btrfs", "ext4-noextents", "tmpfs"]) {
            assert_eq!(direct, "yes", "{}", fs.name);
        } else {
            assert!(!direct.is_empty(), "{}", fs.name);
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
        eprintln!("{}: O_DIRECT {direct}", fs.name);
    }
}

common::per_fs! {
    /// Regression (review): a power cut after a switch can leave a segment's
    /// later pages on disk without its first page (header). Recovery treats it
    /// as prepared and the log reuses it under the same sequence; the records
    /// of its cut-short first run must never verify in the new one.
    fn segment_reused_after_lost_header_returns_no_old_record(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        for n in 0..200u64 {
            wal.commit(&n.to_le_bytes().repeat(8)).unwrap(); // 64-byte records
        }
        let segs = wal.segments();
        let last = segs.last().unwrap().clone();
        wal.close().unwrap();
        // The last segment's header page never reached the disk.
        modify(&last.path, |b| b[..4096].fill(0));
        let wal = Wal::open(&d, opts()).unwrap();
        let start = wal.recovery().next_lsn;
        assert_eq!(start, last.first_lsn, "{}", fs.name);
        // 63 records of 64 bytes: the new run ends on the page boundary
        // where the old run's next record sits.
        let mut mine = vec![];
        for n in 0..63u64 {
            let p = (1000 + n).to_le_bytes().repeat(8);
            mine.push((wal.commit(&p).unwrap(), p));
        }
        wal.close().unwrap();
        let wal = Wal::open(&d, opts()).unwrap();
        let after: Vec<Record> = read_all(&wal)
            .into_iter()
            .filter(|r| r.lsn >= start)
            .collect();
        assert_eq!(
            after.len(),
            mine.len(),
            "{}: records of the lost run came back",
            fs.name
        );
        for (r, (l, p)) in after.iter().zip(&mine) {
            assert_eq!((&r.lsn, &r.data), (l, p));
        }
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// Regression (review): releasing up to a record whose segment header is
    /// not yet durable, then crashing, must not leave the log without a live
    /// segment (it would restart at LSN 1 under a new log id).
    fn release_then_crash_keeps_the_log(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        let mut last = Lsn(0);
        while wal.stats().switches == 0 {
            last = wal.append(&[3u8; 20_000]).unwrap();
        }
        // Everything before the switch is durable; the new segment's header
        // is only in memory.
        wal.sync_to(Lsn(last.0 - 1)).unwrap();
        let segs_before = wal.segments().len();
        wal.release_before(last).unwrap();
        drop(wal); // a crash: nothing more is synced
        let wal = Wal::open(&d, opts()).unwrap();
        assert!(
            !wal.recovery().created,
            "{}: the log was lost ({segs_before} segments)",
            fs.name
        );
        assert!(
            wal.recovery().next_lsn.0 >= last.0,
            "{}: {:?}",
            fs.name,
            wal.recovery()
        );
        wal.close().unwrap();
    }
}

/// Regression (review): impossible numbers in a checksummed header and a
/// write buffer smaller than a page are refused, not a panic or a hang.
#[test]
fn impossible_numbers_are_refused() {
    use fspace::wal::format::SegmentHeader;
    let fs = &common::all()[0];
    let _g = fs.lock();
    let dir = fs.tempdir();
    let d = dir.path().join("wal");
    std::fs::create_dir(&d).unwrap();
    let h = SegmentHeader {
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
    let before = wal.stats().gather_waits;
    for _ in 0..300 {
        wal.commit(&[2u8; 100]).unwrap();
    }
    assert_eq!(
        wal.stats().gather_waits,
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
    fn saved_probe_chooses_the_sync_method(fs) on [ext4, btrfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let state = tempfile::tempdir().unwrap();
        let store = fspace::SavedResults::in_dir(state.path());
        let info = fspace::fs_info(dir.path()).unwrap();
        let rec = fspace::policy::Recommendation {
            intent: fspace::Intent::Log,
            strategy: fspace::policy::built_in(&info, fspace::Intent::Log).first(),
            recycle: Some(false),
            summary: "test".into(),
            reason: "test".into(),
            figure: 1.0,
            baseline: None,
            baseline_label: None,
            measured: true,
            too_noisy: false,
            sync_method: Some(SyncMethod::Dsync),
            sync_reason: Some("dsync: test".into()),
            sync_too_noisy: false,
        };
        store
            .save(&fspace::policy::SavedPolicy {
                schema: fspace::policy::SCHEMA.into(),
                measured_utc: "2026-11-26 00:00:00 UTC".into(),
                measured_by: "test".into(),
                key: fspace::policy::FsKey::of(&info),
                recommendations: vec![rec],
            })
            .unwrap();
        let auto = WalOptions {
            prepare: fspace::StrategyChoice::auto(store.clone()),
            ..opts()
        };
        let wal = Wal::open(dir.path().join("a"), auto.clone()).unwrap();
        let m = wal.stats().sync_method;
        assert!(m.starts_with("dsync (auto: measured fastest by `fspace probe --save`"), "{}: {m}", fs.name);
        wal.commit(b"x").unwrap();
        wal.close().unwrap();
        let built_in = Wal::open(dir.path().join("b"), opts()).unwrap();
        let m = built_in.stats().sync_method;
        assert!(!m.contains("fspace probe"), "{}: {m}", fs.name);
        built_in.close().unwrap();
        let asked = WalOptions { sync_method: Some(SyncMethod::Fdatasync), ..auto };
        let wal = Wal::open(dir.path().join("c"), asked).unwrap();
        assert!(wal.stats().sync_method.starts_with("fdatasync (asked for"), "{}", wal.stats().sync_method);
        wal.close().unwrap();
    }
}
