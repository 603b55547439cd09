//! The extent map's fallbacks after growth, and `allocate_range` (what the
//! `posix_fallocate` preload and `fspace_allocate_range` use), on the matrix.

use fspace_test_kit as common;

use fspace::{grow, GrowOptions, Strategy, StrategyChoice};
use fspace::{map_file, ExtentState, MapOptions};

const ENOSPC: i32 = 28;

common::per_fs! {
    /// The map falls back to SEEK_DATA/SEEK_HOLE where FIEMAP is missing and
    /// agrees with FIEMAP on holes where both exist.
    fn extent_map_seek_fallback_agrees_on_holes(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("holey");
        {
            use std::os::unix::fs::FileExt;
            let f = std::fs::File::create(&p).unwrap();
            f.write_all_at(&[1u8; 65536], 0).unwrap();
            f.write_all_at(&[2u8; 65536], 1 << 20).unwrap();
            f.set_len(2 << 20).unwrap();
            f.sync_all().unwrap();
        }
        let info = fspace::fs_info(&p).unwrap();
        let caps = info.caps().unwrap();
        let seek = map_file(
            &p,
            MapOptions::default().force_seek(true),
        )
        .unwrap();
        assert_eq!(seek.summary.size, 2 << 20);
        assert!(seek.summary.written.is_none() && seek.note.is_some());
        let auto = map_file(&p, MapOptions::default()).unwrap();
        if !caps.fiemap.supported {
            assert_eq!(auto.method, fspace::MapMethod::Seek, "{}", fs.name);
        }
        if caps.seek_hole.supported {
            assert!(
                seek.summary.holes.unwrap_or(0) >= (2 << 20) - (3 << 17),
                "{}: {seek:?}",
                fs.name
            );
            assert_eq!(seek.bytes_in(ExtentState::Data, 0..65536), 65536);
            assert_eq!(
                seek.bytes_in(ExtentState::Data, 1 << 20..(1 << 20) + 65536),
                65536
            );
        } else {
            common::skipped(
                "extent_map_holes",
                &fs.name,
                "SEEK_HOLE measured unsupported",
            );
        }
        if caps.fiemap.supported && caps.seek_hole.supported {
            assert_eq!(
                Some(auto.bytes_in(ExtentState::Hole, 0..2 << 20)),
                seek.summary.holes,
                "{}",
                fs.name
            );
        }
    }
}

common::per_fs! {
    /// Without FIEMAP the map takes allocation from st_blocks on tmpfs (an
    /// allocated file is not reported as unallocated), and reports it as unknown
    /// on sshfs, whose st_blocks is made up.
    fn seek_map_allocation_comes_from_st_blocks_or_is_unknown(fs) on [tmpfs, sshfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for (strategy, bytes) in [(Strategy::Allocate, 8u64 << 20), (Strategy::Sparse, 0)] {
            let p = dir.path().join(strategy.name());
            let opts = GrowOptions::default().create(true).choice(StrategyChoice::with_fallbacks(strategy));
            let r = grow(&p, 8 << 20, &opts).unwrap();
            let m = map_file(&p, MapOptions::default()).unwrap();
            assert_eq!(m.method, fspace::MapMethod::Seek, "{}", fs.name);
            let expect = if fs.name == "sshfs" {
                None
            } else {
                Some(bytes)
            };
            assert_eq!(
                m.summary.allocated, expect,
                "{} {}: {m:?}",
                fs.name, r.strategy
            );
        }
    }
}

common::per_fs! {
    /// `allocate_range` (the library under `posix_fallocate`'s preload and
    /// `fspace_allocate_range`): a range over data, holes and beyond EOF keeps
    /// every data byte, ends allocated, uses `fallocate` where it works and fills
    /// only holes and the tail elsewhere; a fill that cannot fit fails with
    /// ENOSPC before writing anything.
    fn allocate_range_keeps_data_fills_holes_and_refuses_what_cannot_fit(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let _g = fs.lock();
        let dir = fs.tempdir();
        let path = dir.path().join("range");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        let a = common::pattern(1, 64 << 10);
        let b = common::pattern(2, (64 << 10) + 100);
        f.write_all_at(&a, 0).unwrap();
        f.write_all_at(&b, 1 << 20).unwrap();
        let old_len = (1 << 20) + b.len() as u64;
        let (start, len) = (32u64 << 10, 3u64 << 20);
        let r = fspace::allocate_range(&f, &path, start, len).unwrap();
        let fallocate_works = !fs.is(&["ext4-noextents", "sshfs"]);
        assert_eq!(
            r.strategy,
            if fallocate_works {
                Strategy::Allocate
            } else {
                Strategy::ZeroFill
            },
            "{}: {r:?}",
            fs.name
        );
        assert_eq!(
            (r.old_len, r.new_len),
            (old_len, start + len),
            "{}",
            fs.name
        );
        let bytes = common::read(&path);
        assert_eq!(bytes.len() as u64, start + len, "{}", fs.name);
        assert_eq!(&bytes[..a.len()], &a[..], "{}: first data changed", fs.name);
        assert_eq!(
            &bytes[1 << 20..(1 << 20) + b.len()],
            &b[..],
            "{}: second data changed",
            fs.name
        );
        let zeros = |r: std::ops::Range<usize>| bytes[r].iter().all(|&x| x == 0);
        assert!(
            zeros(a.len()..1 << 20) && zeros((1 << 20) + b.len()..bytes.len()),
            "{}",
            fs.name
        );
        let allocated = f.metadata().unwrap().blocks() * 512;
        assert!(
            allocated >= start + len - (64 << 10),
            "{}: {allocated} allocated",
            fs.name
        );
        if !fallocate_works {
            // One hole inside (64 KiB..1 MiB) and the tail; nothing else.
            // ext3 shows the hole with SEEK_HOLE; sshfs cannot, so the range
            // was read and its zero blocks written.
            // (The pattern has zero blocks of its own: on sshfs they are
            // written too, with the zeros they hold.)
            let hole_and_tail = ((1 << 20) - (64 << 10)) + (start + len - old_len);
            if fs.is(&["ext4-noextents"]) {
                assert!(r.holes_known, "{r:?}");
                assert_eq!(r.holes_filled, 1, "{r:?}");
                assert_eq!(r.bytes_written, hole_and_tail, "{r:?}");
            } else {
                assert!(!r.holes_known, "{r:?}");
                assert!(r.holes_filled >= 1, "{r:?}");
                assert!(r.bytes_written >= hole_and_tail, "{r:?}");
            }
            assert!(r.write_syscalls <= 16, "{r:?}");
        }
        if !fallocate_works && fs.is(&common::BOUNDED) {
            // Far more than the filesystem holds: refused before writing.
            let before = common::read(&path);
            let e = fspace::allocate_range(&f, &path, 0, 64 << 30).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(ENOSPC), "{e}");
            assert!(e.to_string().contains("nothing was written"), "{e}");
            assert_eq!(common::read(&path), before, "{}", fs.name);
        }
        if fs.is(&["sshfs"]) {
            // A write-only descriptor cannot be read for zero blocks: the
            // tail is written, the interior left, and it says so.
            let wo_path = dir.path().join("write-only");
            std::fs::write(&wo_path, &a).unwrap();
            let wo = std::fs::OpenOptions::new()
                .write(true)
                .open(&wo_path)
                .unwrap();
            let r = fspace::allocate_range(&wo, &wo_path, 0, 1 << 20).unwrap();
            assert!(!r.holes_known, "{r:?}");
            assert_eq!(r.bytes_written, (1 << 20) - a.len() as u64, "{r:?}");
            assert_eq!(&common::read(&wo_path)[..a.len()], &a[..]);
        }
        // Argument errors keep the kernel's errno.
        let e = fspace::allocate_range(&f, &path, 0, 0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(22), "{e}");
        let ro = std::fs::File::open(&path).unwrap();
        let e = fspace::allocate_range(&ro, &path, 0, 4096).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(9), "{e}");
    }
}
