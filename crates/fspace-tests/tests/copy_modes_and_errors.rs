//! The copy's modes and refusals on the filesystem matrix: reflink modes,
//! `--preserve`, bad input, no space left mid-copy, a source shorter than
//! its size.

mod copy_common;
use fspace_test_kit as common;

use copy_common::{assert_same, make, Case, MIB};
use fspace::{copy, CopyMethod, CopyOptions, NoteKind, ReflinkMode, SparseMode};
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::Path;

common::per_fs! {
    /// FICLONE where the filesystem shares blocks; never with --reflink never;
    /// --reflink always fails clearly where it cannot.
    fn reflink_modes(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = make(dir.path(), Case::HalfHoles);
        let clones = fs.is(&["btrfs", "xfs"]);
        let r = copy(&src, dir.path().join("auto"), &CopyOptions::default()).unwrap();
        if clones {
            assert_eq!(r.method, CopyMethod::Clone, "{}: {r:?}", fs.name);
            assert_eq!(r.bytes_cloned, 8 * MIB);
            // Not counted after a clone; the copy has the source's 4 MiB
            // of holes all the same.
            assert_eq!(r.holes, None, "{}: {r:?}", fs.name);
            let m = fspace::map_file(dir.path().join("auto"), Default::default()).unwrap();
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
        let opts = CopyOptions::default().reflink(ReflinkMode::Never);
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
        let opts = CopyOptions::default().reflink(ReflinkMode::Always);
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
}

common::per_fs! {
    /// Across filesystems `--reflink always` fails with EXDEV, clearly.
    fn reflink_always_across_filesystems_fails_with_exdev(a, b) on pairs [btrfs_to_xfs: (btrfs, xfs)] {
        let _g = common::lock_pair(a, b);
        let (da, db) = (a.tempdir(), b.tempdir());
        let src = make(da.path(), Case::OneByte);
        let opts = CopyOptions::default().reflink(ReflinkMode::Always);
        let e = copy(&src, db.path().join("x"), &opts).expect_err("no clone across filesystems");
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
        let opts = CopyOptions::default().preserve(true);
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
            let r = copy(d.join("fifo"), d.join("x"), &o).unwrap();
            writer.join().unwrap().unwrap();
            assert_eq!(common::read(&d.join("x")), b"through a fifo");
            assert!(!r.size_reliable);
            std::fs::remove_file(d.join("x")).unwrap();
        }
        // The same file, by name, hard link and symbolic link, even with force.
        let force = CopyOptions::default().force(true);
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
        let r = copy(&src, d.join("existing"), &force).unwrap();
        assert!(r.replaced);
        assert_same(&src, &d.join("existing"), &fs.name);
        // A directory as destination means "inside it".
        let r = copy(&src, d.join("adir"), &o).unwrap();
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

/// Fills `path` with about `n` bytes: fallocate in 64 MiB pieces (quick, and
/// on btrfs a single call for nearly all the free space fails whole), or
/// 1 MiB writes where fallocate is refused (ext3). Stops at the first
/// ENOSPC: the filesystem's free-space figure can promise more than it
/// holds.
fn fill(path: &Path, n: u64) {
    let f = std::fs::File::create(path).unwrap();
    let mut off = 0;
    while off < n {
        let len = (n - off).min(64 * MIB);
        match rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), off, len) {
            Ok(()) => off += len,
            Err(rustix::io::Errno::NOSPC) => break,
            Err(rustix::io::Errno::OPNOTSUPP) => {
                let ones = vec![1u8; MIB as usize];
                while off + MIB <= n && f.write_all_at(&ones, off).is_ok() {
                    off += MIB;
                }
                break;
            }
            Err(e) => panic!("fallocate {}: {e}", path.display()),
        }
    }
    f.sync_all().unwrap();
}

common::per_fs! {
    /// No space left mid-copy: an error naming the destination, no file under
    /// its name, the temporary file gone, the space back. (The source is on
    /// tmpfs; the test is named by the destination's filesystem.)
    fn enospc_mid_copy_leaves_nothing(fs, tmpfs) on pairs [
        ext4: (ext4, tmpfs),
        xfs: (xfs, tmpfs),
        btrfs: (btrfs, tmpfs),
        ext4_noextents: (ext4_noextents, tmpfs),
    ] {
        let _g = common::lock_pair(fs, tmpfs);
        let dir = fs.tempdir();
        let sdir = tmpfs.tempdir();
        let free = common::free_after_sync(dir.path());
        // Leave ~24 MiB free, then copy 48 MiB of data into it.
        let ballast = dir.path().join("ballast");
        fill(&ballast, free.saturating_sub(24 * MIB));
        let src = sdir.path().join("data");
        std::fs::write(&src, common::random_bytes(9, 48 * MIB as usize)).unwrap();
        for reflink in [ReflinkMode::Auto, ReflinkMode::Never] {
            for sparse in [SparseMode::Auto, SparseMode::Always] {
                let dst = dir.path().join("full");
                let opts = CopyOptions::default().sparse(sparse).reflink(reflink);
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
        std::fs::remove_file(&ballast).unwrap();
        // The space is back only once the filesystem has committed the
        // removal: until then btrfs holds the freed extents pinned and
        // refuses allocations, so the next test on it (whatever its order)
        // met ENOSPC (bench/runs/2026-11-27-btrfs-enospc-after-fill).
        // syncfs commits the transaction.
        let after = common::free_after_sync(dir.path());
        assert!(
            after + 8 * MIB >= free,
            "{}: {free} bytes free before, {after} after the ballast was removed and synced",
            fs.name
        );
    }
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
        r.notes.iter().any(|n| n.kind == NoteKind::ReadToEnd),
        "{r:?}"
    );
    assert!(common::temp_files(dir.path()).is_empty());
}
