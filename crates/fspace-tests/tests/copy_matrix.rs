//! Copies on the filesystem matrix and across filesystems: byte-identical
//! in every sparse and reflink mode, no more allocated than `cp`, holes for
//! zero blocks, a file past 4 GiB, a source that changes under the copy, a
//! cancelled copy.

mod copy_common;
use fspace_test_kit as common;

use common::Fs;
use copy_common::{assert_same, make, Case, CASES, MIB, MODES};
use fspace::{copy, CopyMethod, CopyOptions, NoteKind, ReflinkMode, SparseMode};
use std::os::unix::fs::FileExt;
use std::process::Command;

/// Every case in every mode, from `sfs` to `dfs`: byte-identical, every
/// byte accounted for by one rung of the ladder, and no more write calls
/// than the extents call for.
fn copies_are_byte_identical(sfs: &Fs, dfs: &Fs) {
    let _g = common::lock_pair(sfs, dfs);
    let sdir = sfs.tempdir();
    let ddir = dfs.tempdir();
    let what = format!("{} -> {}", sfs.name, dfs.name);
    for case in CASES {
        let src = make(sdir.path(), case);
        let len = std::fs::metadata(&src).unwrap().len();
        for (sparse, reflink) in MODES {
            let dst = ddir.path().join(format!("{case:?}-{sparse}-{reflink}"));
            let opts = CopyOptions::default().sparse(sparse).reflink(reflink);
            let r = copy(&src, &dst, &opts)
                .unwrap_or_else(|e| panic!("{what} {case:?} {sparse}/{reflink}: {e}"));
            let label = format!("{what} {case:?} --sparse {sparse} --reflink {reflink}");
            assert_same(&src, &dst, &label);
            assert_eq!(r.len, len, "{label}");
            assert_eq!(std::fs::metadata(&dst).unwrap().len(), len, "{label}");
            assert_eq!(r.dst, dst);
            // Every byte is accounted for by exactly one rung.
            let moved = r.bytes_cloned + r.bytes_offloaded + r.bytes_copied;
            match r.method {
                CopyMethod::None => assert_eq!(len, 0, "{label}"),
                CopyMethod::Clone => {
                    assert_eq!(r.bytes_cloned, len, "{label}");
                    // A clone does not visit the extents to count them.
                    assert_eq!((r.holes, r.hole_bytes, r.data_extents), (None, None, None));
                }
                _ => assert_eq!(moved + r.hole_bytes.unwrap(), len, "{label}: {r:?}"),
            }
            if sparse == SparseMode::Never && len > 0 {
                assert_eq!(r.method, CopyMethod::ReadWrite, "{label}");
                assert_eq!(
                    r.bytes_copied + r.bytes_offloaded,
                    len,
                    "{label}: never writes everything"
                );
                assert_eq!(r.holes, Some(0), "{label}");
            }
            if reflink == ReflinkMode::Never {
                assert_ne!(r.method, CopyMethod::Clone, "{label}");
            }
            if sfs.name != dfs.name && len > 0 {
                assert_ne!(
                    r.method,
                    CopyMethod::Clone,
                    "{label}: no clone across filesystems"
                );
            }
            // The report's syscall count bounds the writes: one per
            // COPY_WRITE_SIZE (512 KiB; cp writes 128 KiB) at most, plus
            // one per extent, hole and setup call.
            let bound = len / fspace::internals::COPY_WRITE_SIZE as u64
                + 2 * r.data_extents.unwrap_or(0)
                + 2 * r.holes.unwrap_or(0)
                + 8;
            if r.method == CopyMethod::ReadWrite && sparse != SparseMode::Always {
                assert!(
                    r.write_syscalls <= bound,
                    "{label}: {} write syscalls > {bound}",
                    r.write_syscalls
                );
            }
            assert!(common::temp_files(ddir.path()).is_empty(), "{label}");
            // Keep the footprint small: the matrix's filesystems are small.
            std::fs::remove_file(&dst).unwrap();
        }
        std::fs::remove_file(&src).unwrap();
    }
}

common::per_fs! {
    fn copies_are_byte_identical_on_one_filesystem(fs) {
        copies_are_byte_identical(fs, fs);
    }
}

common::per_fs! {
    fn copies_are_byte_identical_across_filesystems(src, dst) on pairs [
        ext4_to_xfs: (ext4, xfs),
        xfs_to_btrfs: (xfs, btrfs),
        tmpfs_to_sshfs: (tmpfs, sshfs),
        sshfs_to_tmpfs: (sshfs, tmpfs),
        btrfs_to_ext4_noextents: (btrfs, ext4_noextents),
        ext4_noextents_to_ext4: (ext4_noextents, ext4),
    ] {
        copies_are_byte_identical(src, dst);
    }
}

common::per_fs! {
    /// A copy allocates no more than `cp --sparse=always` of the same file on
    /// the same filesystem.
    fn copies_allocate_no_more_than_cp_sparse_always(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for case in [
            Case::HalfHoles,
            Case::VmImage,
            Case::AllZeros,
            Case::Unaligned,
            Case::TrailingHole,
            Case::Random,
        ] {
            let src = make(dir.path(), case);
            let cp_dst = dir.path().join(format!("{case:?}.cp"));
            let st = Command::new("cp")
                .args(["--sparse=always", "--reflink=never"])
                .arg(&src)
                .arg(&cp_dst)
                .status()
                .expect("cp");
            assert!(st.success());
            let cp_alloc = common::allocated(&cp_dst);
            for sparse in [SparseMode::Always, SparseMode::Auto] {
                let dst = dir.path().join(format!("{case:?}.{sparse}"));
                let opts = CopyOptions::default().sparse(sparse).reflink(ReflinkMode::Never);
                copy(&src, &dst, &opts).unwrap();
                assert_same(&src, &dst, &format!("{} {case:?}", fs.name));
                let ours = common::allocated(&dst);
                // --sparse auto keeps only the source's holes: it must match cp
                // where the source has no zero runs inside its data.
                let zero_runs_in_data =
                    matches!(case, Case::VmImage | Case::AllZeros | Case::Unaligned);
                if sparse == SparseMode::Always || !zero_runs_in_data {
                    assert!(
                        ours <= cp_alloc,
                        "{} {case:?} --sparse {sparse}: {ours} bytes allocated, cp --sparse=always {cp_alloc}",
                        fs.name
                    );
                }
            }
        }
    }
}

common::per_fs! {
    fn sparse_always_turns_zero_blocks_into_holes(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = make(dir.path(), Case::AllZeros);
        let dst = dir.path().join("z");
        let opts = CopyOptions::default().sparse(SparseMode::Always);
        let r = copy(&src, &dst, &opts).unwrap();
        assert_same(&src, &dst, &fs.name);
        assert_eq!(r.zero_bytes_holed, 4 * MIB, "{}: {r:?}", fs.name);
        assert_eq!(r.bytes_copied, 0, "{}: {r:?}", fs.name);
        assert_eq!(r.holes, Some(1), "{}: {r:?}", fs.name);
        if fs.name != "sshfs" {
            // sshfs's server-side allocation is not ours to decide.
            assert!(
                common::allocated(&dst) < 64 << 10,
                "{}: {} bytes allocated for a file of zeros",
                fs.name,
                common::allocated(&dst)
            );
        }
        // The VM image: fewer bytes written than the data holds.
        let src = make(dir.path(), Case::VmImage);
        let dst = dir.path().join("vm");
        let r = copy(&src, &dst, &opts).unwrap();
        assert_same(&src, &dst, &fs.name);
        assert!(r.zero_bytes_holed > MIB, "{}: {r:?}", fs.name);
        assert!(r.holes.unwrap() > 20, "{}: {r:?}", fs.name);
    }
}

common::per_fs! {
    fn a_sparse_file_larger_than_4_gib(fs) on [ext4, xfs, btrfs, tmpfs, ext4_noextents] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = dir.path().join("big");
        let f = std::fs::File::create(&src).unwrap();
        let len = 5 * (1u64 << 30) + 4097;
        for (i, off) in [0, 2 << 30, (4u64 << 30) + 512, len - 100]
            .into_iter()
            .enumerate()
        {
            f.write_all_at(&common::random_bytes(i as u64 + 10, 100), off)
                .unwrap();
        }
        f.set_len(len).unwrap();
        drop(f);
        for (sparse, reflink) in [
            (SparseMode::Auto, ReflinkMode::Auto),
            (SparseMode::Always, ReflinkMode::Never),
        ] {
            let dst = dir.path().join(format!("copy-{sparse}"));
            let opts = CopyOptions::default().sparse(sparse).reflink(reflink);
            let r = copy(&src, &dst, &opts).unwrap();
            assert_same(&src, &dst, &format!("{} {sparse}", fs.name));
            assert_eq!(r.len, len);
            assert!(
                common::allocated(&dst) < 64 * MIB,
                "{}: a 5 GiB sparse copy allocated {}",
                fs.name,
                common::allocated(&dst)
            );
            std::fs::remove_file(&dst).unwrap();
        }
    }
}

common::per_fs! {
    /// Defined behaviour: the copy holds the source's bytes up to its length
    /// when the copy began; growth is reported; shrinking fails the copy.
    fn a_source_that_changes_during_the_copy(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        for (sparse, reflink) in MODES {
            let src = make(dir.path(), Case::HalfHoles);
            let len = std::fs::metadata(&src).unwrap().len();
            let original = common::read(&src);
            let dst = dir.path().join("grown");
            let appender = std::fs::OpenOptions::new().append(true).open(&src).unwrap();
            let grow = |_p: fspace::Progress| {
                use std::io::Write;
                (&appender).write_all(&[7u8; 10000]).unwrap();
            };
            let opts = CopyOptions::default().sparse(sparse).reflink(reflink).progress(Some(&grow));
            let r = copy(&src, &dst, &opts).unwrap();
            let label = format!("{} {sparse}/{reflink}", fs.name);
            assert_eq!(r.len, len, "{label}");
            assert_eq!(common::read(&dst), original, "{label}");
            assert!(
                r.notes.iter().any(|n| n.kind == NoteKind::SourceGrew),
                "{label}: {:?}",
                r.notes
            );
            std::fs::remove_file(&dst).unwrap();
            std::fs::remove_file(&src).unwrap();
        }
        // Shrinking to the end of the first extent: the copy finds no more
        // data (SEEK_DATA) and must not take that for a trailing hole.
        for (sparse, reflink) in MODES {
            let src = make(dir.path(), Case::HalfHoles);
            let dst = dir.path().join("cut");
            let victim = std::fs::OpenOptions::new().write(true).open(&src).unwrap();
            let cut = |_p: fspace::Progress| victim.set_len(MIB).unwrap();
            let opts = CopyOptions::default().sparse(sparse).reflink(reflink).progress(Some(&cut));
            let label = format!("{} {sparse}/{reflink}", fs.name);
            match copy(&src, &dst, &opts) {
                Err(e) => {
                    assert!(e.to_string().contains("shrank"), "{label}: {e}");
                    assert!(!dst.exists(), "{label}");
                }
                Ok(r) => {
                    // Only a clone is instantaneous: it copied the file whole
                    // before the first progress report.
                    assert_eq!(r.method, CopyMethod::Clone, "{label}: {r:?}");
                    std::fs::remove_file(&dst).unwrap();
                }
            }
            assert!(common::temp_files(dir.path()).is_empty(), "{label}");
            std::fs::remove_file(&src).unwrap();
        }
        // Shrinking under a reading copy fails it and leaves nothing.
        let src = make(dir.path(), Case::Random);
        let dst = dir.path().join("shrunk");
        let victim = std::fs::OpenOptions::new().write(true).open(&src).unwrap();
        let cut = |_p: fspace::Progress| victim.set_len(4096).unwrap();
        let opts = CopyOptions::default().sparse(SparseMode::Always).progress(Some(&cut));
        let e = copy(&src, &dst, &opts).expect_err("a shrinking source fails the copy");
        assert!(e.to_string().contains("shrank"), "{}: {e}", fs.name);
        assert!(!dst.exists());
        assert!(common::temp_files(dir.path()).is_empty(), "{}", fs.name);
    }
}

common::per_fs! {
    fn cancelled_copy_leaves_nothing(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = make(dir.path(), Case::Random);
        let dst = dir.path().join("cancelled");
        let flag = std::sync::atomic::AtomicBool::new(false);
        let stop = |_p: fspace::Progress| flag.store(true, std::sync::atomic::Ordering::Relaxed);
        let opts = CopyOptions::default().reflink(ReflinkMode::Never).cancel(Some(&flag)).progress(Some(&stop));
        let e = copy(&src, &dst, &opts).expect_err("cancelled");
        assert_eq!(e.raw_os_error(), Some(125), "{}: {e}", fs.name);
        assert!(!dst.exists());
        assert!(common::temp_files(dir.path()).is_empty(), "{}", fs.name);
    }
}
