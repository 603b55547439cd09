//! Sparse writing, copying and digging on the filesystem matrix, including
//! copies from one filesystem to another. (Named to run after the wal tests:
//! with it first, the 512 MB btrfs ended up refusing a wal test's fdatasync
//! with ENOSPC in CI; not understood, see docs/copy.md.)

use fspace_test_kit as common;

use common::Fs;
use fspace::sparse::{
    copy, dig, CopyMethod, CopyOptions, DigOptions, ReflinkMode, SparseMode, SparseWriter,
    SparseWriterOptions,
};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

/// The source files every copy is tested with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Random,
    HalfHoles,
    VmImage,
    AllZeros,
    Empty,
    OneByte,
    Unaligned,
    TrailingHole,
}

const CASES: [Case; 8] = [
    Case::Random,
    Case::HalfHoles,
    Case::VmImage,
    Case::AllZeros,
    Case::Empty,
    Case::OneByte,
    Case::Unaligned,
    Case::TrailingHole,
];

fn make(dir: &Path, case: Case) -> PathBuf {
    let p = dir.join(format!("{case:?}"));
    let f = std::fs::File::create(&p).unwrap();
    match case {
        Case::Random => f
            .write_all_at(&common::random_bytes(1, 3 * MIB as usize + 4096), 0)
            .unwrap(),
        Case::HalfHoles => {
            // 1 MiB data, 1 MiB hole, ... over 8 MiB (ends in a hole).
            for i in (0..8).step_by(2) {
                f.write_all_at(&common::random_bytes(i + 2, MIB as usize), i * MIB)
                    .unwrap();
            }
            f.set_len(8 * MIB).unwrap();
        }
        Case::VmImage => {
            // 6 MiB of data with written zero runs of 4-64 KiB, and a real hole.
            let mut v = common::random_bytes(3, 6 * MIB as usize);
            let mut x = 12345u64;
            let mut off = 8192usize;
            while off < v.len() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let run = 4096 * (1 + (x >> 33) as usize % 16);
                let end = (off + run).min(v.len());
                v[off..end].fill(0);
                off = end + 4096 * (1 + (x >> 40) as usize % 8) + (x >> 50) as usize % 100;
            }
            f.write_all_at(&v[..4 * MIB as usize], 0).unwrap();
            f.write_all_at(&v[4 * MIB as usize..], 5 * MIB).unwrap();
        }
        Case::AllZeros => f.write_all_at(&vec![0u8; 4 * MIB as usize], 0).unwrap(),
        Case::Empty => {}
        Case::OneByte => f.write_all_at(b"x", 0).unwrap(),
        Case::Unaligned => f
            .write_all_at(&common::pattern(5, MIB as usize + 12345), 0)
            .unwrap(),
        Case::TrailingHole => {
            f.write_all_at(&common::random_bytes(6, MIB as usize), 0)
                .unwrap();
            f.set_len(5 * MIB + 100).unwrap();
        }
    }
    f.sync_all().unwrap();
    p
}

fn assert_same(a: &Path, b: &Path, what: &str) {
    if let Some(off) = common::first_difference(a, b) {
        panic!(
            "{what}: {} and {} differ at byte {off}",
            a.display(),
            b.display()
        );
    }
}

/// The pairs copies are tested on: each filesystem onto itself, and across.
fn pairs() -> Vec<(Fs, Fs)> {
    let all = common::only("copy", &common::EXPECTED);
    let find = |n: &str| all.iter().find(|f| f.name == n).cloned();
    let mut v: Vec<(Fs, Fs)> = all.iter().map(|f| (f.clone(), f.clone())).collect();
    for (a, b) in [
        ("ext4", "xfs"),
        ("xfs", "btrfs"),
        ("tmpfs", "sshfs"),
        ("sshfs", "tmpfs"),
        ("btrfs", "ext4-noextents"),
        ("ext4-noextents", "ext4"),
    ] {
        if let (Some(x), Some(y)) = (find(a), find(b)) {
            v.push((x, y));
        }
    }
    v
}

const MODES: [(SparseMode, ReflinkMode); 4] = [
    (SparseMode::Auto, ReflinkMode::Auto),
    (SparseMode::Auto, ReflinkMode::Never),
    (SparseMode::Always, ReflinkMode::Auto),
    (SparseMode::Never, ReflinkMode::Auto),
];

#[test]
fn copies_are_byte_identical_on_and_across_filesystems() {
    for (sfs, dfs) in pairs() {
        let _g = common::lock_pair(&sfs, &dfs);
        let sdir = sfs.tempdir();
        let ddir = dfs.tempdir();
        let what = format!("{} -> {}", sfs.name, dfs.name);
        for case in CASES {
            let src = make(sdir.path(), case);
            let len = std::fs::metadata(&src).unwrap().len();
            for (sparse, reflink) in MODES {
                let dst = ddir.path().join(format!("{case:?}-{sparse}-{reflink}"));
                let opts = CopyOptions {
                    sparse,
                    reflink,
                    ..Default::default()
                };
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
                let bound = len / fspace::sparse::COPY_WRITE_SIZE as u64
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
                // Keep the footprint small: a 512 MB btrfs whose chunks all went
                // to data has no room for metadata in the tests after this one.
                std::fs::remove_file(&dst).unwrap();
            }
            std::fs::remove_file(&src).unwrap();
        }
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
                let opts = CopyOptions {
                    sparse,
                    reflink: ReflinkMode::Never,
                    ..Default::default()
                };
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
        let opts = CopyOptions {
            sparse: SparseMode::Always,
            ..Default::default()
        };
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
            let opts = CopyOptions {
                sparse,
                reflink,
                ..Default::default()
            };
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
            let opts = CopyOptions {
                sparse,
                reflink,
                progress: Some(&grow),
                ..Default::default()
            };
            let r = copy(&src, &dst, &opts).unwrap();
            let label = format!("{} {sparse}/{reflink}", fs.name);
            assert_eq!(r.len, len, "{label}");
            assert_eq!(common::read(&dst), original, "{label}");
            assert!(
                r.notes.iter().any(|n| n.contains("grew")),
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
            let opts = CopyOptions {
                sparse,
                reflink,
                progress: Some(&cut),
                ..Default::default()
            };
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
        let opts = CopyOptions {
            sparse: SparseMode::Always,
            progress: Some(&cut),
            ..Default::default()
        };
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
        let opts = CopyOptions {
            reflink: ReflinkMode::Never,
            cancel: Some(&flag),
            progress: Some(&stop),
            ..Default::default()
        };
        let e = copy(&src, &dst, &opts).expect_err("cancelled");
        assert_eq!(e.raw_os_error(), Some(125), "{}: {e}", fs.name);
        assert!(!dst.exists());
        assert!(common::temp_files(dir.path()).is_empty(), "{}", fs.name);
    }
}

/// FICLONE where the filesystem shares blocks; never with --reflink never;
/// --reflink always fails clearly where it cannot.
#[test]
fn reflink_modes() {
    let all = common::only("reflink", &common::EXPECTED);
    for fs in &all {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = make(dir.path(), Case::HalfHoles);
        let clones = fs.is(&["btrfs", "xfs"]);
        let r = copy(&src, &dir.path().join("auto"), &CopyOptions::default()).unwrap();
        if clones {
            assert_eq!(r.method, CopyMethod::Clone, "{}: {r:?}", fs.name);
            assert_eq!(r.bytes_cloned, 8 * MIB);
            // Not counted after a clone; the copy has the source's 4 MiB
            // of holes all the same.
            assert_eq!(r.holes, None, "{}: {r:?}", fs.name);
            let m = fspace::map_file(&dir.path().join("auto"), Default::default()).unwrap();
            assert_eq!(
                m.summary.holes,
                Some(4 * MIB),
                "{}: {:?}",
                fs.name,
                m.summary
            );
            assert!(
                m.summary.shared.unwrap_or(0) > 0,
                "{}: {:?}",
                fs.name,
                m.summary
            );
        } else {
            assert_ne!(r.method, CopyMethod::Clone, "{}", fs.name);
            assert_eq!(r.fallbacks[0].method, CopyMethod::Clone, "{}", fs.name);
            assert!(r.fallbacks[0].errno.is_some(), "{}: {r:?}", fs.name);
        }
        let never = dir.path().join("never");
        let opts = CopyOptions {
            reflink: ReflinkMode::Never,
            ..Default::default()
        };
        let r = copy(&src, &never, &opts).unwrap();
        assert_ne!(r.method, CopyMethod::Clone);
        if fs.is(&["ext4", "tmpfs"]) {
            // The source looks sparse, so it is read for zero runs (as cp's
            // default does), and its data written from what was read.
            assert_eq!(r.method, CopyMethod::ReadWrite, "{}: {r:?}", fs.name);
            assert_eq!(r.bytes_copied, 4 * MIB, "{}: {r:?}", fs.name);
            assert_eq!(r.bytes_offloaded, 0, "{}: {r:?}", fs.name);
        }
        if clones {
            let m = fspace::map_file(&never, Default::default()).unwrap();
            assert_eq!(
                m.summary.shared.unwrap_or(0),
                0,
                "{}: {:?}",
                fs.name,
                m.summary
            );
        }
        let always = dir.path().join("always");
        let opts = CopyOptions {
            reflink: ReflinkMode::Always,
            ..Default::default()
        };
        match copy(&src, &always, &opts) {
            Ok(r) => {
                assert!(clones, "{}: cloned where it should not: {r:?}", fs.name);
                assert_eq!(r.method, CopyMethod::Clone);
            }
            Err(e) => {
                assert!(!clones, "{}: {e}", fs.name);
                assert!(e.to_string().contains("reflink always"), "{e}");
                assert!(!always.exists());
            }
        }
        assert!(common::temp_files(dir.path()).is_empty(), "{}", fs.name);
    }
    // Across filesystems: EXDEV, clearly.
    if let (Some(a), Some(b)) = (
        all.iter().find(|f| f.name == "btrfs"),
        all.iter().find(|f| f.name == "xfs"),
    ) {
        let _g = common::lock_pair(a, b);
        let (da, db) = (a.tempdir(), b.tempdir());
        let src = make(da.path(), Case::OneByte);
        let opts = CopyOptions {
            reflink: ReflinkMode::Always,
            ..Default::default()
        };
        let e = copy(&src, &db.path().join("x"), &opts).expect_err("no clone across filesystems");
        assert_eq!(e.raw_os_error(), Some(18), "{e}");
    }
}

common::per_fs! {
    fn preserve_copies_mode_owner_and_times(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = make(dir.path(), Case::OneByte);
        std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o2751)).unwrap();
        let t = std::time::UNIX_EPOCH + std::time::Duration::new(1_500_000_000, 123_456_789);
        let f = std::fs::File::options().write(true).open(&src).unwrap();
        f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
            .unwrap();
        drop(f);
        let owner = if common::is_root() && fs.name != "sshfs" {
            std::os::unix::fs::chown(&src, Some(65534), Some(65534)).unwrap();
            Some(65534)
        } else {
            None
        };
        let s = std::fs::metadata(&src).unwrap();
        let dst = dir.path().join("kept");
        let opts = CopyOptions {
            preserve: true,
            ..Default::default()
        };
        let r = copy(&src, &dst, &opts).unwrap();
        assert!(r.preserved);
        let d = std::fs::metadata(&dst).unwrap();
        assert_eq!(d.mode() & 0o7777, s.mode() & 0o7777, "{}", fs.name);
        assert_eq!(d.mtime(), s.mtime(), "{}", fs.name);
        assert_eq!(d.mtime_nsec(), s.mtime_nsec(), "{}", fs.name);
        if let Some(o) = owner {
            assert_eq!((d.uid(), d.gid()), (o, o), "{}", fs.name);
        }
        // Without --preserve: the mode less the umask and special bits, new times.
        let plain = dir.path().join("plain");
        copy(&src, &plain, &CopyOptions::default()).unwrap();
        let p = std::fs::metadata(&plain).unwrap();
        assert_eq!(p.mode() & 0o7000, 0, "{}", fs.name);
        assert_ne!(p.mtime(), s.mtime(), "{}", fs.name);
    }
}

common::per_fs! {
    fn bad_input_is_refused_and_changes_nothing(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let src = make(d, Case::Unaligned);
        let content = common::read(&src);
        let o = CopyOptions::default();
        let expect = |s: &Path, t: &Path, opts: &CopyOptions, errno: i32, words: &str| {
            let e = copy(s, t, opts).expect_err(words);
            assert_eq!(e.raw_os_error(), Some(errno), "{}: {e}", fs.name);
            let msg = e.to_string();
            assert!(msg.contains(words), "{}: {msg:?} lacks {words:?}", fs.name);
        };
        expect(&d.join("missing"), &d.join("x"), &o, 2, "open(");
        std::fs::create_dir(d.join("adir")).unwrap();
        expect(
            &d.join("adir"),
            &d.join("x"),
            &o,
            21,
            "is a directory, not a regular file",
        );
        expect(
            Path::new("/dev/null"),
            &d.join("x"),
            &o,
            22,
            "is a character device",
        );
        if fs.name != "sshfs" {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                d.join("fifo"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
            // A FIFO is read to its end (it used to be refused).
            let fifo = d.join("fifo");
            let writer = std::thread::spawn(move || std::fs::write(fifo, b"through a fifo"));
            let r = copy(&d.join("fifo"), &d.join("x"), &o).unwrap();
            writer.join().unwrap().unwrap();
            assert_eq!(common::read(&d.join("x")), b"through a fifo");
            assert!(!r.size_reliable);
            std::fs::remove_file(d.join("x")).unwrap();
        }
        // The same file, by name, hard link and symbolic link, even with force.
        let force = CopyOptions {
            force: true,
            ..Default::default()
        };
        expect(&src, &src, &force, 22, "is the same file as");
        std::fs::hard_link(&src, d.join("hard")).unwrap();
        if fs.name == "sshfs" {
            // sshfs makes up inode numbers per path, so a hard link cannot be
            // recognised there; the copy then replaces the link's name with an
            // identical file (the rename never writes into the source).
            common::skipped(
                "copy-bad-input/hard-link",
                &fs.name,
                "sshfs inode numbers are per path",
            );
        } else {
            expect(&src, &d.join("hard"), &force, 22, "is the same file as");
        }
        std::os::unix::fs::symlink(&src, d.join("soft")).unwrap();
        if fs.name == "sshfs" && std::fs::read_link(d.join("soft")).is_err() {
            common::skipped(
                "copy-bad-input/symlink",
                &fs.name,
                "this sshfs cannot read symbolic links (EPERM)",
            );
        } else {
            expect(&src, &d.join("soft"), &force, 22, "is the same file as");
            expect(&d.join("soft"), &src, &force, 22, "is the same file as");
        }
        // An existing destination without force.
        std::fs::write(d.join("existing"), b"keep me").unwrap();
        expect(
            &src,
            &d.join("existing"),
            &o,
            17,
            "already exists; replace it with the force option",
        );
        assert_eq!(common::read(&d.join("existing")), b"keep me");
        // ... is replaced with it.
        let r = copy(&src, &d.join("existing"), &force).unwrap();
        assert!(r.replaced);
        assert_same(&src, &d.join("existing"), &fs.name);
        // A directory as destination means "inside it".
        let r = copy(&src, &d.join("adir"), &o).unwrap();
        assert_eq!(r.dst, d.join("adir").join("Unaligned"));
        // Missing destination directory.
        expect(&src, &d.join("no/such/dir/x"), &o, 2, "create(");
        expect(
            &src,
            &d.join("nodir/"),
            &o,
            2,
            "is not an existing directory",
        );
        assert_eq!(common::read(&src), content, "{}: source changed", fs.name);
        assert!(common::temp_files(d).is_empty(), "{}", fs.name);
    }
}

/// No space left mid-copy: an error naming the destination, no file under
/// its name, the temporary file gone, the space back.
#[test]
fn enospc_mid_copy_leaves_nothing() {
    let all = common::only("copy-enospc", &common::EXPECTED);
    let Some(tmpfs) = all.iter().find(|f| f.name == "tmpfs").cloned() else {
        return;
    };
    // Not btrfs: in CI, with this case on the 512 MB btrfs, a later wal
    // test's fdatasync failed with ENOSPC and the filesystem turned
    // read-only (cause not understood, see docs/copy.md). The wal and grow
    // tests cover ENOSPC there.
    common::skipped(
        "copy-enospc",
        "btrfs",
        "filling the 512 MB btrfs broke later tests in CI (fdatasync ENOSPC, read-only); cause not understood",
    );
    for fs in all
        .iter()
        .filter(|f| f.is(&common::BOUNDED) && !f.is(&["tmpfs", "btrfs"]))
    {
        let _g = common::lock_pair(fs, &tmpfs);
        let dir = fs.tempdir();
        let sdir = tmpfs.tempdir();
        let free = common::free_after_sync(dir.path());
        // Leave ~24 MiB free, then copy 48 MiB of data into it.
        let ballast = dir.path().join("ballast");
        let keep = 24 * MIB;
        if free > keep {
            let f = std::fs::File::create(&ballast).unwrap();
            let n = free - keep;
            if rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, n).is_err() {
                // No fallocate (ext3): write it.
                let zeros = vec![1u8; MIB as usize];
                let mut off = 0;
                while off + MIB <= n {
                    if f.write_all_at(&zeros, off).is_err() {
                        break;
                    }
                    off += MIB;
                }
            }
            f.sync_all().unwrap();
        }
        let src = sdir.path().join("data");
        std::fs::write(&src, common::random_bytes(9, 48 * MIB as usize)).unwrap();
        for reflink in [ReflinkMode::Auto, ReflinkMode::Never] {
            for sparse in [SparseMode::Auto, SparseMode::Always] {
                let dst = dir.path().join("full");
                let opts = CopyOptions {
                    sparse,
                    reflink,
                    ..Default::default()
                };
                let e = copy(&src, &dst, &opts).expect_err("copy into a full filesystem");
                assert_eq!(e.raw_os_error(), Some(28), "{}: {e}", fs.name);
                assert!(e.to_string().contains(&dst.display().to_string()), "{e}");
                assert!(
                    !dst.exists(),
                    "{}: partial file under the final name",
                    fs.name
                );
                assert!(common::temp_files(dir.path()).is_empty(), "{}", fs.name);
            }
        }
        let _ = std::fs::remove_file(&ballast);
    }
}

common::per_fs! {
    /// The writer: content equals a byte model for any split of writes, skips
    /// and offsets; zero blocks become holes; writes are coalesced.
    fn sparse_writer_matches_a_model_and_makes_holes(fs) {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let _g = fs.lock();
        let dir = fs.tempdir();
        let mut runner = TestRunner::new(Config {
            cases: if fs.name == "sshfs" { 8 } else { 24 },
            failure_persistence: None,
            ..Config::default()
        });
        let seq = std::cell::Cell::new(0u32);
        let strategy = (
            proptest::collection::vec((0u8..5, 1usize..40_000), 1..30),
            any::<bool>(),
            any::<bool>(),
        );
        runner
            .run(&strategy, |(pieces, existing, detect)| {
                seq.set(seq.get() + 1);
                let p = dir.path().join(format!("w{}", seq.get()));
                // An existing file full of data (holes must be punched), or a fresh one.
                if existing {
                    std::fs::write(&p, vec![0xeeu8; 700_000]).unwrap();
                }
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&p)
                    .unwrap();
                let opts = SparseWriterOptions {
                    detect_zeros: detect,
                    buffer_size: 64 << 10,
                    ..Default::default()
                };
                let mut w = SparseWriter::new(f.as_fd(), &p, opts).unwrap();
                let mut model: Vec<u8> = Vec::new();
                for (i, (kind, len)) in pieces.iter().enumerate() {
                    match kind {
                        0 => {
                            let d = common::random_bytes(i as u64, *len);
                            w.write(&d).unwrap();
                            model.extend_from_slice(&d);
                        }
                        1 => {
                            w.write(&vec![0u8; *len]).unwrap();
                            model.resize(model.len() + len, 0);
                        }
                        2 => {
                            w.skip(*len as u64).unwrap();
                            model.resize(model.len() + len, 0);
                        }
                        4 => {
                            // Forward past the end: the gap reads as zeros,
                            // also where the file held data before.
                            let to = model.len() + len;
                            w.seek(to as u64).unwrap();
                            model.resize(to, 0);
                        }
                        _ => {
                            // Back to an earlier offset and overwrite.
                            let at = model.len() / 2;
                            let d = common::random_bytes(100 + i as u64, (*len).min(5000));
                            w.write_at(at as u64, &d).unwrap();
                            if model.len() < at + d.len() {
                                model.resize(at + d.len(), 0);
                            }
                            model[at..at + d.len()].copy_from_slice(&d);
                            w.seek(model.len() as u64).unwrap();
                        }
                    }
                }
                let stats = w.finish().unwrap();
                drop(f);
                let got = std::fs::read(&p).unwrap();
                prop_assert_eq!(got.len(), model.len());
                prop_assert!(got == model, "content differs from the model");
                prop_assert!(stats.bytes_written <= model.len() as u64 + 700_000);
                std::fs::remove_file(&p).unwrap();
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
    }
}

common::per_fs! {
    fn sparse_writer_coalesces_small_writes_and_leaves_holes(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("w");
        let f = std::fs::File::create(&p).unwrap();
        let mut w = SparseWriter::new(f.as_fd(), &p, SparseWriterOptions::default()).unwrap();
        // rsync's pattern: 1 KiB at a time. 8 MiB data, 8 MiB zeros, 8 MiB data.
        let data = common::random_bytes(77, 8 * MIB as usize);
        let before = fspace::sys::counters();
        for part in [&data[..], &vec![0u8; 8 * MIB as usize][..], &data[..]] {
            for c in part.chunks(1024) {
                w.write(c).unwrap();
            }
        }
        let s = w.finish().unwrap();
        let writes = fspace::sys::counters().since(before).writes;
        assert_eq!(s.bytes_written, 16 * MIB, "{}: {s:?}", fs.name);
        assert!(
            s.write_calls <= 17 && writes <= 20,
            "{}: {} pwritev, {writes} write-type calls for 16 MiB in 1 KiB pieces",
            fs.name,
            s.write_calls
        );
        assert_eq!(s.holes, 1);
        assert_eq!(s.hole_bytes, 8 * MIB);
        drop(f);
        let mut model = data.clone();
        model.resize(16 * MIB as usize, 0);
        model.extend_from_slice(&data);
        assert!(common::read(&p) == model, "{}: content", fs.name);
        if !fs.is(&["sshfs"]) {
            let f = std::fs::File::open(&p).unwrap();
            let hole = rustix::fs::seek(&f, rustix::fs::SeekFrom::Hole(0)).unwrap();
            assert_eq!(hole, 8 * MIB, "{}: the zeros are a hole", fs.name);
            assert!(common::allocated(&p) < 17 * MIB, "{}", fs.name);
        }
    }
}

common::per_fs! {
    fn dig_frees_zero_blocks_and_keeps_the_bytes(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = make(dir.path(), Case::VmImage);
        let z = make(dir.path(), Case::AllZeros);
        let u = make(dir.path(), Case::Unaligned);
        for file in [&p, &z, &u] {
            let before = common::read(file);
            let alloc = common::allocated(file);
            match dig(file, &DigOptions::default()) {
                Ok(r) => {
                    assert_ne!(fs.name, "sshfs", "sshfs has no hole punching");
                    assert!(
                        common::read(file) == before,
                        "{}: dig changed bytes",
                        fs.name
                    );
                    let after = common::allocated(file);
                    assert!(after <= alloc, "{}: {alloc} -> {after}", fs.name);
                    if file == &z {
                        assert_eq!(r.bytes_punched, 4 * MIB, "{}: {r:?}", fs.name);
                        assert!(after < 64 << 10, "{}: {after}", fs.name);
                    }
                    if file == &p {
                        assert!(r.holes_punched > 20, "{}: {r:?}", fs.name);
                        assert!(r.bytes_freed.is_some_and(|f| f > MIB), "{}: {r:?}", fs.name);
                    }
                    // Digging again finds nothing more.
                    let again = dig(file, &DigOptions::default()).unwrap();
                    assert_eq!(again.bytes_punched, 0, "{}: {again:?}", fs.name);
                }
                Err(e) => {
                    assert_eq!(fs.name, "sshfs", "{e}");
                    assert_eq!(e.raw_os_error(), Some(95), "{e}");
                    assert!(e.to_string().contains("nothing was changed"), "{e}");
                    assert!(common::read(file) == before);
                }
            }
        }
        let e = dig(&dir.path().join("missing"), &DigOptions::default()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(2));
        let e = dig(dir.path(), &DigOptions::default()).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }
}

#[test]
fn sparse_writer_refuses_append_descriptors_and_impossible_offsets() {
    let fs = &common::all()[0];
    let dir = fs.tempdir();
    let p = dir.path().join("a");
    std::fs::write(&p, b"x").unwrap();
    let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let e = SparseWriter::new(f.as_fd(), &p, SparseWriterOptions::default())
        .err()
        .expect("O_APPEND refused");
    assert_eq!(e.raw_os_error(), Some(22), "{e}");
    assert!(e.to_string().contains("O_APPEND"), "{e}");
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    let mut w = SparseWriter::new(f.as_fd(), &p, SparseWriterOptions::default()).unwrap();
    let e = w.write_at(u64::MAX - 3, b"12345").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(27), "{e}");
    let e = w.skip(u64::MAX).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(27), "{e}");
    // The refused calls changed nothing; the writer describes the whole
    // file, and nothing was written: finish leaves it empty.
    w.finish().unwrap();
    assert_eq!(common::read(&p), b"");
}

/// A file whose reads end before its reported size (sysfs) is read to its
/// end, and the report says its size was not reliable.
#[test]
fn a_source_shorter_than_its_size_is_read_to_its_end() {
    let src = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
    let Ok(m) = std::fs::metadata(src) else {
        common::skipped("short-source", "sysfs", "no transparent_hugepage/enabled");
        return;
    };
    let content = std::fs::read(src).unwrap();
    assert!(
        m.len() as usize > content.len(),
        "sysfs reports more than it reads"
    );
    let fs = &common::all()[0];
    let dir = fs.tempdir();
    let dst = dir.path().join("thp");
    let r = copy(src, &dst, &CopyOptions::default()).unwrap();
    assert_eq!(std::fs::read(&dst).unwrap(), content);
    assert_eq!(r.len, content.len() as u64);
    assert!(!r.size_reliable);
    assert_eq!(r.method, CopyMethod::Stream);
    assert!(
        r.notes.iter().any(|n| n.contains("pseudo filesystem")),
        "{r:?}"
    );
    assert!(common::temp_files(dir.path()).is_empty());
}
