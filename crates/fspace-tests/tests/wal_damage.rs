//! The log's recovery from damage on the filesystem matrix: torn and
//! corrupt segments, lost headers, arbitrary damage and bytes; on the six
//! filesystems and the fast mounts `ext4-fast` and `xfs-fast`.

mod wal_common;
use fspace_test_kit as common;

use wal_common::*;

use fspace::wal::{Record, Wal};
use fspace::Lsn;
use std::collections::HashMap;
use std::path::PathBuf;

common::per_fs! {
    /// Torn and corrupt tails, damage in older segments, truncation, gaps and
    /// foreign files: each handled as documented, never a panic.
    fn torn_and_corrupt_segments(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
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
    fn torn_header_on_the_newest_segment_ends_the_log(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
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

/// Property test: arbitrary damage to a log's files never panics recovery
/// or reading, and every record returned is one that was written; half
/// the cases damage a log written with padded flushes.
#[test]
fn arbitrary_damage_never_returns_a_bad_record() {
    let fs = &common::all()[0];
    let _g = fs.lock();
    let base = fs.tempdir();
    let mut pristine = vec![];
    for pad in [false, true] {
        let p = base.path().join(format!("pristine-{pad}"));
        let recs = build_log_with(&p, opts().pad_flushes(Some(pad)));
        let by_lsn: HashMap<Lsn, Vec<u8>> = recs.iter().map(|r| (r.lsn, r.data.clone())).collect();
        pristine.push((seg_files(&p), by_lsn));
    }
    let mut rng = Rng::new(77);
    for case in 0..128 {
        let (files, by_lsn) = &pristine[case % 2];
        let d = base.path().join(format!("case{case}"));
        std::fs::create_dir(&d).unwrap();
        for f in files {
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
/// the test checks the CRC itself). Even cases are format 2 segments with
/// padding records among the records, odd ones format 1.
#[test]
fn arbitrary_bytes_as_a_segment() {
    use fspace::internals::{encode_padding, record_crc, RecordKey, SegmentHeader};
    use fspace::internals::{FORMAT_V1, FORMAT_VERSION};
    let fs = &common::all()[0];
    let _g = fs.lock();
    let base = fs.tempdir();
    let mut rng = Rng::new(5);
    for case in 0..128 {
        let d = base.path().join(format!("c{case}"));
        std::fs::create_dir(&d).unwrap();
        let id = [case as u8; 16];
        let v2 = case % 2 == 0;
        let align = if v2 { 16 } else { 8 };
        let h = SegmentHeader {
            version: if v2 { FORMAT_VERSION } else { FORMAT_V1 },
            log_id: id,
            seq: 1,
            size: SEG,
            first_lsn: 1,
            nonce: case as u32,
        };
        let key = RecordKey::from(&h);
        let mut b = h.encode().to_vec();
        // (LSN, payload, CRC valid) of every record put in the segment,
        // and whether the run of readable records ended before it (at a
        // bad padding record).
        let mut written = vec![];
        let mut broken_at = None;
        while (b.len() as u64) < SEG {
            if v2 && rng.below(6) == 0 {
                // Padding carrying the next LSN (or not), verifying (or not).
                let next = written.len() as u64 + 1;
                let lsn = next - rng.below(2).min(next - 1);
                let span = 16 * (1 + rng.below(40) as usize);
                let at = b.len();
                encode_padding(&mut b, &key, lsn, span);
                let good = rng.below(4) != 0;
                if !good {
                    b[at + 4] ^= 1 << rng.below(8);
                }
                if (!good || lsn != next) && broken_at.is_none() {
                    broken_at = Some(written.len());
                }
                continue;
            }
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
                record_crc(&key, lsn, &body) ^ (1 + rng.below(u64::from(u32::MAX)) as u32)
            };
            b.extend_from_slice(&(len as u32).to_le_bytes());
            b.extend_from_slice(&crc.to_le_bytes());
            b.extend_from_slice(&lsn.to_le_bytes());
            b.extend_from_slice(&body);
            b.resize(b.len().div_ceil(align) * align, 0);
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
            .count()
            .min(broken_at.unwrap_or(usize::MAX));
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

common::per_fs! {
    /// Regression (review): a power cut after a switch can leave a segment's
    /// later pages on disk without its first page (header). Recovery treats it
    /// as prepared and the log reuses it under the same sequence; the records
    /// of its cut-short first run must never verify in the new one.
    fn segment_reused_after_lost_header_returns_no_old_record(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
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
    fn release_then_crash_keeps_the_log(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
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

common::per_fs! {
    /// A group written while an earlier one was still in flight can reach
    /// the disk when the earlier one does not (the pipeline writes group
    /// N+1 while group N syncs; the device may keep either). Its records
    /// sit after a gap: they are never read back, neither by the open
    /// that finds them nor by any later open, even after new records took
    /// their LSNs.
    fn a_record_after_a_gap_is_never_read_back(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let name = &fs.name;
        // Records of a few hundred bytes: all in one segment, several to
        // a page.
        let small = |run: u64, n: u64| format!("run {run} record {n} ").repeat(20).into_bytes();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let wal = Wal::open(&d, opts()).unwrap();
        for n in 1..=12u64 {
            wal.commit(&small(7, n)).unwrap();
        }
        wal.close().unwrap();
        // The group holding LSN 9 never reached the disk: its bytes are
        // zeros (never written), LSNs 10-12 after it are intact.
        let (seg, off) = seg_files(&d)
            .into_iter()
            .find_map(|p| record_offset(&p, 9).map(|o| (p, o)))
            .expect("record 9");
        let end = record_offset(&seg, 10).expect("record 10");
        modify(&seg, |b| b[off..end].fill(0));
        assert!(record_offset(&seg, 11).is_none(), "{name}: the scan helper stops at the gap");

        let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let tail = wal.recovery().tail.clone().expect("tail report");
        assert_eq!(tail.expected_lsn, Lsn(9), "{name}: {tail:?}");
        assert_eq!(
            tail.later_record.map(|(_, l)| l),
            Some(Lsn(10)),
            "{name}: the records beyond the gap are reported: {tail:?}"
        );
        let got = read_all(&wal);
        assert_eq!(got.iter().map(|r| r.lsn.0).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>(), "{name}");
        // New records take LSNs 9.. (the stale 10-12 too), in a new segment.
        for n in 9..=11u64 {
            assert_eq!(wal.commit(&small(8, n)).unwrap(), Lsn(n), "{name}");
        }
        wal.close().unwrap();
        for round in 0..2 {
            let wal = Wal::open(&d, opts()).unwrap_or_else(|e| panic!("{name}: reopen {round}: {e}"));
            let got = read_all(&wal);
            assert_eq!(got.len(), 11, "{name}: reopen {round}");
            for r in &got {
                let run = if r.lsn.0 <= 8 { 7 } else { 8 };
                assert_eq!(r.data, small(run, r.lsn.0), "{name}: reopen {round}: LSN {}", r.lsn);
            }
            wal.close().unwrap();
        }
    }
}
