//! Formats of the log on the filesystem matrix: a log written in format 1
//! (recorded in `tests/data/wal-v1`, written by `tests/data/wal-v1-gen.rs.txt`
//! with fspace at commit bb0fe1a) opens, recovers, reads and goes on in
//! format 2; padded flushes leave nothing between commits but padding.

use fspace_test_kit as common;

use fspace::wal::{Wal, WalOptions, WalView};
use fspace::Lsn;
use std::path::{Path, PathBuf};

/// The recorded log: LSN 15 to 60 in segments 2 to 5 (segment 1 was
/// released into the pool and recycled as segment 6, prepared, not live).
const FIRST: u64 = 15;
const LAST: u64 = 60;

/// The payload of record `i`, as the generator wrote it.
fn payload_of(i: u64) -> Vec<u8> {
    let sizes = [0usize, 1, 7, 100, 512, 4080, 8192, 20000];
    let len = sizes[(i as usize) % sizes.len()];
    (0..len)
        .map(|k| ((i as usize * 131 + k * 7) % 251) as u8)
        .collect()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wal-v1")
}

/// Copies the recorded log into `to`.
fn copy_fixture(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(fixture()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn opts() -> WalOptions {
    WalOptions::default()
        .segment_size(64 << 10)
        .prepare_ahead(1)
        .recycle_pool(2)
}

fn read_all(wal: &Wal, from: u64) -> Vec<(u64, Vec<u8>)> {
    wal.read_from(Lsn(from))
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (r.lsn.0, r.data)
        })
        .collect()
}

fn formats(segs: &[fspace::wal::SegmentInfo]) -> Vec<u32> {
    segs.iter().map(|s| s.format).collect()
}

common::per_fs! {
    /// The format-1 log reads as written through a view and through a
    /// writable open; new records go into format-2 segments after it; the
    /// mixed log reopens and reads whole; released format-1 segments are
    /// recycled into format-2 ones.
    fn format_1_log_opens_recovers_and_goes_on(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        copy_fixture(&d);

        let v = WalView::open(&d).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((v.first_lsn(), v.next_lsn()), (Lsn(FIRST), Lsn(LAST + 1)));
        assert_eq!(formats(v.segments()), vec![1, 1, 1, 1], "{name}");
        let got: Vec<_> = v
            .read_from(Lsn(FIRST))
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| (r.lsn.0, r.data))
            .collect();
        let want: Vec<_> = (FIRST..=LAST).map(|i| (i, payload_of(i))).collect();
        assert_eq!(got, want, "{name}: view");
        drop(v);

        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(wal.recovery().next_lsn, Lsn(LAST + 1));
        assert_eq!(read_all(&wal, FIRST), want, "{name}: open");
        let segs = wal.segments();
        assert_eq!(formats(&segs[..4]), vec![1, 1, 1, 1]);
        assert_eq!(segs[4].format, 2, "{name}: the open starts a format-2 segment");
        let mut want = want;
        for i in LAST + 1..=LAST + 40 {
            assert_eq!(wal.commit(&payload_of(i)).unwrap(), Lsn(i));
            want.push((i, payload_of(i)));
        }
        wal.close().unwrap();

        let wal = Wal::open(&d, opts()).unwrap();
        assert_eq!(read_all(&wal, FIRST), want, "{name}: mixed log reopened");
        let f = formats(&wal.segments());
        assert!(f.starts_with(&[1, 1, 1, 1]) && f[4..].iter().all(|v| *v == 2), "{f:?}");
        // Release the format-1 segments; the pool recycles them as format 2.
        let last = wal.next_lsn().0 - 1;
        wal.release_before(Lsn(last)).unwrap();
        for i in last + 1..=last + 60 {
            assert_eq!(wal.commit(&payload_of(i)).unwrap(), Lsn(i));
        }
        assert!(wal.stats().prepared_recycled > 0, "{name}: {:?}", wal.stats());
        assert!(formats(&wal.segments()).iter().all(|v| *v == 2));
        let tail = read_all(&wal, last + 1);
        assert_eq!(tail.len(), 60);
        assert!(tail.iter().all(|(i, p)| *p == payload_of(*i)));
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// With padding on, every commit of a lone writer starts on a page
    /// boundary (the records' offsets say so), the bytes between commits
    /// are padding, and everything reads back and survives a reopen with
    /// padding off (one log, both ways of writing).
    fn padded_commits_start_on_pages(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts().pad_flushes(Some(true))).unwrap();
        assert!(wal.stats().io.pad_flushes);
        let mut want = vec![];
        for i in 1..=50u64 {
            assert_eq!(wal.commit(&payload_of(i)).unwrap(), Lsn(i));
            want.push((i, payload_of(i)));
        }
        let st = wal.stats();
        assert!(st.padding_bytes > 0, "{name}: {st:?}");
        wal.close().unwrap();
        let v = WalView::open(&d).unwrap();
        let mut first_in_segment = true;
        let mut seg = 0;
        for r in v.read_from(Lsn(1)).unwrap() {
            let r = r.unwrap();
            if r.segment != seg {
                seg = r.segment;
                first_in_segment = true;
            }
            // The first record of a segment follows its 64-byte header.
            if !first_in_segment {
                assert_eq!(r.offset % 4096, 0, "{name}: LSN {} at {}", r.lsn, r.offset);
            }
            first_in_segment = false;
        }
        drop(v);
        let wal = Wal::open(&d, opts().pad_flushes(Some(false))).unwrap();
        assert!(!wal.stats().io.pad_flushes);
        for i in 51..=80u64 {
            assert_eq!(wal.commit(&payload_of(i)).unwrap(), Lsn(i));
            want.push((i, payload_of(i)));
        }
        assert_eq!(wal.stats().padding_bytes, 0);
        wal.close().unwrap();
        let wal = Wal::open(&d, opts()).unwrap();
        assert_eq!(read_all(&wal, 1), want, "{name}");
        wal.close().unwrap();
    }
}

/// The file's inode flags (`FS_IOC_GETFLAGS`), where the filesystem has
/// them.
fn inode_flags(p: &Path) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(p).ok()?;
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long through the pointer given.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) };
    (r == 0).then_some(flags as u32)
}

const FS_NOCOW_FL: u32 = 0x0080_0000;

common::per_fs! {
    /// The policy's layout per filesystem: on btrfs, new segments are
    /// NOCOW (the attribute is on the files) and zero-filled (no holes),
    /// flushes not padded; elsewhere neither. Asked for NOCOW where the
    /// filesystem has no such attribute, the log says so and works.
    fn layout_follows_the_policy(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        let btrfs = name == "btrfs";
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        let io = wal.stats().io;
        assert_eq!(io.nocow, btrfs, "{name}: {io}");
        assert!(!io.pad_flushes, "{name}: {io}");
        for i in 1..=40u64 {
            wal.commit(&payload_of(i)).unwrap();
        }
        wal.wait_prepared().unwrap();
        let st = wal.stats();
        for s in wal.segments() {
            let flags = inode_flags(&s.path);
            if btrfs {
                assert_eq!(flags.map(|f| f & FS_NOCOW_FL), Some(FS_NOCOW_FL), "{name}");
                let map = fspace::map_file(&s.path, Default::default()).unwrap();
                let sum = &map.summary;
                assert_eq!((sum.holes, sum.unwritten), (Some(0), Some(0)), "{name}: {sum:?}");
            } else {
                assert!(flags.is_none_or(|f| f & FS_NOCOW_FL == 0), "{name}");
            }
        }
        if btrfs {
            let why = st.last_prepare_reason.clone().unwrap_or_default();
            assert!(why.contains("NOCOW"), "{name}: {why}");
        }
        wal.close().unwrap();

        // Asked for where it cannot be had: refused, said, and harmless.
        if !btrfs && name != "sshfs" {
            let d = dir.path().join("wal-asked");
            let wal = Wal::open(&d, opts().nocow(Some(true))).unwrap();
            for i in 1..=40u64 {
                wal.commit(&payload_of(i)).unwrap();
            }
            let why = wal.stats().last_prepare_reason.unwrap_or_default();
            assert!(why.contains("refused"), "{name}: {why}");
            assert_eq!(read_all(&wal, 1).len(), 40);
            wal.close().unwrap();
        }
    }
}

common::per_fs! {
    /// Where NOCOW is refused (a directory with btrfs's compression
    /// attribute: new files inherit it, and btrfs refuses NOCOW beside it),
    /// the log does what the policy says for copy-on-write files: sparse
    /// segments after a free-space check, flushes padded, and it says so.
    fn nocow_refused_gives_padded_copy_on_write(fs) on [btrfs] {
        use std::os::fd::AsRawFd;
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("compressed");
        std::fs::create_dir(&d).unwrap();
        let f = std::fs::File::open(&d).unwrap();
        let compress: libc::c_long = 0x0000_0004; // FS_COMPR_FL, chattr +c
        // SAFETY: FS_IOC_SETFLAGS reads one long through the pointer given.
        let r = unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_SETFLAGS, &compress) };
        assert_eq!(r, 0, "chattr +c: {}", std::io::Error::last_os_error());
        let wal = Wal::open(&d, opts()).unwrap();
        let io = wal.stats().io;
        assert!(!io.nocow, "{io}");
        assert!(io.pad_flushes, "{io}");
        for i in 1..=40u64 {
            wal.commit(&payload_of(i)).unwrap();
        }
        wal.wait_prepared().unwrap();
        let st = wal.stats();
        assert!(st.padding_bytes > 0, "{st:?}");
        let how = st.last_prepare.clone().expect("a segment was prepared");
        assert_eq!(how.strategy, fspace::Strategy::Sparse, "{how}");
        let why = st.last_prepare_reason.clone().unwrap_or_default();
        assert!(why.contains("NOCOW attribute was refused"), "{why}");
        for s in wal.segments() {
            let flags = inode_flags(&s.path).unwrap();
            assert_eq!(flags & FS_NOCOW_FL, 0, "{}", s.path.display());
        }
        assert_eq!(read_all(&wal, 1).len(), 40);
        wal.close().unwrap();
    }
}

common::per_fs! {
    /// A padded log whose segments were recycled ends, after a clean
    /// close, where the last flush's padding ends: on a page boundary,
    /// followed by the recycled segment's earlier contents. That is a
    /// clean end (the bytes do not claim the next LSN), not a torn write;
    /// a byte flipped in the last record then is not clean.
    fn padded_recycled_log_ends_cleanly(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let o = opts().pad_flushes(Some(true)).nocow(Some(false));
        let wal = Wal::open(&d, o.clone()).unwrap();
        let mut i = 1u64;
        while wal.stats().prepared_recycled < 3 {
            wal.commit(&payload_of(i)).unwrap();
            i += 1;
            if i.is_multiple_of(8) {
                wal.release_before(wal.durable_lsn()).unwrap();
            }
            assert!(i < 5000, "{name}: no recycling");
        }
        // Commit until the log ends inside a recycled segment: on a page
        // boundary (padded), before bytes of the segment's earlier life.
        let last = loop {
            let l = wal.commit(&payload_of(i)).unwrap();
            i += 1;
            let v = WalView::open(&d).unwrap();
            let t = v.recovery().tail.clone().expect("tail");
            if t.offset.is_multiple_of(4096) && !t.reason.is_unwritten_end() {
                break l;
            }
            assert!(i < 5000, "{name}: never ended before stale bytes: {t:?}");
        };
        wal.close().unwrap();
        let v = WalView::open(&d).unwrap();
        assert_eq!(v.next_lsn(), Lsn(last.0 + 1), "{name}");
        let t = v.recovery().tail.clone().expect("tail");
        assert!(t.is_clean(), "{name}: {t:?}");
        drop(v);

        // The last record damaged: not clean, and says which LSN.
        let seg = WalView::open(&d).unwrap().segments().last().unwrap().path.clone();
        let off = {
            let v = WalView::open(&d).unwrap();
            v.read_from(last).unwrap().next().unwrap().unwrap().offset
        };
        let mut b = std::fs::read(&seg).unwrap();
        b[off as usize + 5] ^= 0x40; // its CRC: the record may be empty
        std::fs::write(&seg, &b).unwrap();
        let v = WalView::open(&d).unwrap();
        let t = v.recovery().tail.clone().expect("tail");
        assert!(!t.is_clean(), "{name}: {t:?}");
        assert_eq!((t.expected_lsn, t.found_lsn), (last, Some(last)), "{name}");
    }
}

common::per_fs! {
    /// Damage among written records of the last segment that the tail's
    /// own bytes cannot tell from an end (an LSN field changed, a page
    /// zeroed) is found by the records that verify after it: not clean.
    /// A log that ends cleanly has none.
    fn damage_before_written_records_is_not_clean(fs) {
        let _g = fs.lock();
        let name = &fs.name;
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let o = WalOptions::default().segment_size(1 << 20);
        let wal = Wal::open(&d, o).unwrap();
        let mut at = vec![];
        for i in 1..=40u64 {
            wal.commit(&vec![i as u8; 3000]).unwrap();
        }
        for r in wal.read_from(Lsn(1)).unwrap() {
            let r = r.unwrap();
            at.push((r.lsn, r.offset));
        }
        let seg = wal.segments().last().unwrap().path.clone();
        wal.close().unwrap();
        let v = WalView::open(&d).unwrap();
        let t = v.recovery().tail.clone().expect("tail");
        assert!(t.is_clean() && t.later_record.is_none(), "{name}: {t:?}");
        drop(v);
        let pristine = std::fs::read(&seg).unwrap();

        // LSN 20's LSN field changed: it reads as bytes of another LSN.
        let (lsn, off) = at[19];
        let mut b = pristine.clone();
        b[off as usize + 8] ^= 0x01;
        std::fs::write(&seg, &b).unwrap();
        let v = WalView::open(&d).unwrap();
        let t = v.recovery().tail.clone().expect("tail");
        assert_eq!((t.offset, t.expected_lsn), (off, lsn), "{name}");
        assert_ne!(t.found_lsn, Some(lsn), "{name}");
        assert_eq!(t.later_record, Some((at[20].1, at[20].0)), "{name}");
        assert!(!t.is_clean(), "{name}: {t:?}");
        drop(v);

        // A page zeroed in the middle of the records.
        let mut b = pristine.clone();
        let page = (at[25].1 as usize / 4096 + 1) * 4096;
        b[page..page + 4096].fill(0);
        std::fs::write(&seg, &b).unwrap();
        let v = WalView::open(&d).unwrap();
        let t = v.recovery().tail.clone().expect("tail");
        assert!(t.later_record.is_some(), "{name}: {t:?}");
        assert!(!t.is_clean(), "{name}: {t:?}");
    }
}
