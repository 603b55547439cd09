//! Growth on every filesystem of the matrix.

use fspace_test_kit as common;

use common::Fs;
use fspace::{grow, FsKind, GrowOptions, Intent, Strategy, StrategyChoice};
use fspace::{map_file, ExtentState, MapOptions};
use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::Path;

common::per_fs! {
    /// Each mount of the matrix is the filesystem its name says (`ext4-fast`
    /// is ext4 and `xfs-fast` xfs, on a loop device over a file in a tmpfs),
    /// and the probe leaves no scratch file behind. (A filesystem missing
    /// from the matrix makes this test ignored, or failed under
    /// FSPACE_REQUIRE_MATRIX=1.)
    fn each_mount_is_what_its_name_says(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_fast, xfs_fast] {
        let info = fspace::fs_info(&fs.root).unwrap();
        let caps = info.caps().expect("capabilities measured");
        if fs.is_fast() {
            on_a_loop_over_tmpfs(fs);
        }
        match fs.base() {
            "ext4" => {
                assert_eq!(info.kind, FsKind::Ext4);
                assert!(caps.fallocate.supported);
            }
            "ext4-noextents" => {
                assert_eq!(info.kind, FsKind::Ext4);
                assert!(
                    !caps.fallocate.supported,
                    "an extent-less ext4 must refuse fallocate"
                );
                assert_eq!(caps.fallocate.errno, Some(95));
            }
            "xfs" => assert_eq!(info.kind, FsKind::Xfs),
            "btrfs" => {
                assert_eq!(info.kind, FsKind::Btrfs);
                assert!(info.copy_on_write);
                assert!(caps.ficlone.supported);
            }
            "tmpfs" => {
                assert_eq!(info.kind, FsKind::Tmpfs);
                assert!(!caps.fiemap.supported);
            }
            "sshfs" => {
                assert_eq!(info.kind, FsKind::Fuse);
                assert_eq!(info.fuse_subtype.as_deref(), Some("sshfs"));
                assert!(info.network);
                assert!(!caps.fallocate.supported);
            }
            _ => {}
        }
        // The probe leaves no scratch file behind.
        for e in std::fs::read_dir(&fs.root).unwrap() {
            let n = e.unwrap().file_name();
            assert!(
                !n.to_string_lossy()
                    .starts_with(fspace::internals::SCRATCH_PREFIX),
                "{n:?} left in {}",
                fs.name
            );
        }
    }
}

/// A fast mount's device is a loop device whose backing file is on a
/// tmpfs (a durable write ends at the loop: fsync of a tmpfs file does
/// nothing).
fn on_a_loop_over_tmpfs(fs: &Fs) {
    const TMPFS_MAGIC: u64 = 0x0102_1994;
    let devs = fspace::internals::block_devices(&fs.root)
        .unwrap_or_else(|e| panic!("{}: no block device: {e}", fs.name));
    let [dev] = &devs[..] else {
        panic!("{}: one device expected: {devs:?}", fs.name)
    };
    let file = dev
        .backing_file
        .as_ref()
        .unwrap_or_else(|| panic!("{}: {} is not a loop device", fs.name, dev.name));
    let st = rustix::fs::statfs(file).unwrap_or_else(|e| panic!("statfs {}: {e}", file.display()));
    assert_eq!(
        st.f_type as u64,
        TMPFS_MAGIC,
        "{}: {} is backed by {}, not on a tmpfs",
        fs.name,
        dev.name,
        file.display()
    );
}

/// Every way to ask for growth: five explicit strategies and auto per intent.
fn modes() -> Vec<(Option<Strategy>, Intent)> {
    let mut m: Vec<_> = Strategy::ALL
        .iter()
        .map(|&s| (Some(s), Intent::Bulk))
        .collect();
    m.extend([Intent::Bulk, Intent::Log, Intent::Sparse].map(|i| (None, i)));
    m
}

/// One generated case of the property test.
#[derive(Debug, Clone)]
struct Case {
    seed: u64,
    len: usize,
    extra: u64,
    sync: bool,
    /// Create the file (only when `len` is 0: there is no content to keep).
    create: bool,
}

fn check_growth(
    fs: &Fs,
    dir: &Path,
    seq: &std::cell::Cell<u64>,
    c: &Case,
    mode: (Option<Strategy>, Intent),
) -> Result<(), TestCaseError> {
    seq.set(seq.get() + 1);
    let path = dir.join(format!("p{}", seq.get()));
    let init = common::pattern(c.seed, c.len);
    let create = c.create && init.is_empty();
    if !create {
        std::fs::write(&path, &init).unwrap();
    }
    let old = init.len() as u64;
    let target = old + c.extra;
    let opts = GrowOptions::default()
        .choice(
            mode.0
                .map_or_else(StrategyChoice::built_in, StrategyChoice::with_fallbacks),
        )
        .intent(mode.1)
        .sync(c.sync)
        .create(create);
    let r = grow(&path, target, &opts);
    if let (true, Err(e)) = (create, &r) {
        prop_assert!(
            !path.exists(),
            "{}: a failed creation left {}",
            fs.name,
            path.display()
        );
        prop_assert!(
            mode.0 == Some(Strategy::Reserve) && e.raw_os_error() == Some(95),
            "{}: {e}",
            fs.name
        );
        return Ok(());
    }
    let after = common::read(&path);
    prop_assert!(after.len() as u64 >= old, "{}: shrank", fs.name);
    prop_assert!(
        after[..init.len()] == *init,
        "{}: {:?} changed existing bytes",
        fs.name,
        mode
    );
    prop_assert!(
        after[init.len()..].iter().all(|&b| b == 0),
        "{}: grown range not zero",
        fs.name
    );
    match r {
        Ok(r) => {
            prop_assert_eq!(r.old_len, old);
            prop_assert_eq!(r.created, create);
            prop_assert_eq!(r.synced, c.sync);
            let expect_len = if r.strategy == Strategy::Reserve {
                old
            } else {
                target
            };
            prop_assert_eq!(r.new_len, expect_len);
            prop_assert_eq!(after.len() as u64, expect_len);
            if r.strategy == Strategy::ZeroFill {
                prop_assert_eq!(r.bytes_written, c.extra);
            } else {
                prop_assert_eq!(r.bytes_written, 0);
            }
            if let Some(s) = mode.0 {
                // An explicit strategy is used, or fallen back from visibly.
                prop_assert!(r.strategy == s || r.fallbacks.first().map(|f| f.strategy) == Some(s));
            }
        }
        Err(e) => {
            // Only an explicit strategy without an equivalent may fail: and
            // then it must say why and leave the file as it was.
            let s = mode
                .0
                .unwrap_or_else(|| panic!("{}: auto {:?} failed: {e}", fs.name, mode.1));
            prop_assert!(
                matches!(s, Strategy::Reserve),
                "{}: {s} failed: {e}",
                fs.name
            );
            prop_assert_eq!(e.raw_os_error(), Some(95), "{}: {}", fs.name, e);
            prop_assert_eq!(after.len() as u64, old);
        }
    }
    std::fs::remove_file(&path).unwrap();
    Ok(())
}

common::per_fs! {
    /// Growth never changes existing bytes and never shrinks, for every
    /// strategy on every filesystem, over random contents, sizes, `sync` and
    /// `create`.
    fn growth_never_changes_existing_bytes_property(fs) {
        let cases: u32 = std::env::var("FSPACE_PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(32);
        let _g = fs.lock();
        let dir = fs.tempdir();
        let seq = std::cell::Cell::new(0u64);
        for mode in modes() {
            let mut runner = TestRunner::new(Config {
                cases,
                failure_persistence: None,
                ..Config::default()
            });
            let input = (
                any::<u64>(),
                prop_oneof![Just(0usize), 0usize..300_000],
                prop_oneof![0u64..10, 1u64..3 << 20, Just(1 << 20)],
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(seed, len, extra, sync, create)| Case {
                    seed,
                    len,
                    extra,
                    sync,
                    create,
                });
            runner
                .run(&input, |c| check_growth(fs, dir.path(), &seq, &c, mode))
                .unwrap_or_else(|e| panic!("{} {:?}: {e}", fs.name, mode));
        }
    }
}

common::per_fs! {
    /// `--for log` on ext4 and xfs leaves no unwritten byte in the grown range;
    /// `--for bulk` there writes no data; on btrfs `--for log` makes an
    /// empty file NOCOW and zero-fills it, and writes no zeros into a file
    /// that holds data (copy-on-write).
    fn log_growth_leaves_written_extents_and_bulk_writes_nothing(fs) on [ext4, xfs, btrfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("seg");
        std::fs::write(&p, common::pattern(7, 12345)).unwrap();
        let log = GrowOptions::default().intent(Intent::Log).sync(true);
        let r = grow(&p, 16 << 20, &log).unwrap();
        let m = map_file(
            &p,
            MapOptions::default().sync(true),
        )
        .unwrap();
        let grown = 12345..16 << 20;
        if fs.name == "btrfs" {
            // A file holding data cannot be made NOCOW: it stays
            // copy-on-write, where zeros written ahead buy nothing.
            assert_eq!(r.bytes_written, 0, "btrfs: log growth wrote zeros: {r:?}");
            assert_ne!(r.strategy, Strategy::ZeroFill);
            assert!(!r.nocow, "{r:?}");
            assert!(r.reason.contains("already holds data"), "{}", r.reason);
            // An empty one is made NOCOW and zero-filled, as the log's
            // segments are: written blocks, overwritten in place.
            let e = dir.path().join("empty-seg");
            std::fs::write(&e, b"").unwrap();
            let r = grow(&e, 4 << 20, &log).unwrap();
            assert!(r.nocow, "{r:?}");
            assert_eq!(r.strategy, Strategy::ZeroFill, "{r:?}");
            assert_eq!(r.bytes_written, 4 << 20, "{r:?}");
            let f = std::fs::File::open(&e).unwrap();
            let flags = rustix::fs::ioctl_getflags(&f).unwrap();
            assert!(flags.contains(rustix::fs::IFlags::NOCOW), "{flags:?}");
            let m = map_file(&e, MapOptions::default().sync(true)).unwrap();
            assert_eq!(m.bytes_in(ExtentState::Hole, 0..4 << 20), 0, "{m:?}");
            // Kept copy-on-write when asked: sparse, after a free-space
            // check, as the log's segments are where NOCOW is refused.
            let c = dir.path().join("cow-seg");
            let r = grow(&c, 4 << 20, &log.clone().create(true).nocow(Some(false))).unwrap();
            assert!(!r.nocow, "{r:?}");
            assert_eq!(r.strategy, Strategy::Sparse, "{r:?}");
        } else {
            assert_eq!(
                m.bytes_in(ExtentState::Unwritten, grown.clone()),
                0,
                "{}: {m:?}",
                fs.name
            );
            assert_eq!(
                m.bytes_in(ExtentState::Hole, grown.clone()),
                0,
                "{}: {m:?}",
                fs.name
            );
            assert_eq!(
                m.bytes_in(ExtentState::Delalloc, grown.clone()),
                0,
                "{}: {m:?}",
                fs.name
            );
            assert!(matches!(
                r.strategy,
                Strategy::ZeroFill | Strategy::WriteZeroes
            ));
        }

        let q = dir.path().join("bulk");
        std::fs::write(&q, b"x").unwrap();
        let r = grow(&q, 64 << 20, &GrowOptions::default()).unwrap();
        if fs.name != "btrfs" {
            assert_eq!(r.strategy, Strategy::Allocate, "{}", fs.name);
            assert_eq!(r.bytes_written, 0);
            let m = map_file(
                &q,
                MapOptions::default().sync(true),
            )
            .unwrap();
            assert_eq!(
                m.bytes_in(ExtentState::Written, 4096..64 << 20),
                0,
                "{}: bulk wrote data: {m:?}",
                fs.name
            );
            assert!(m.bytes_in(ExtentState::Unwritten, 4096..64 << 20) >= (64 << 20) - 4096);
        }
    }
}

common::per_fs! {
    /// Where fallocate is missing, bulk growth of 256 MiB takes at most 300
    /// write-type syscalls (glibc's emulation takes 65,536), and reads as zeros.
    fn bulk_growth_without_fallocate_uses_few_syscalls(fs) on [ext4_noextents, sshfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("big");
        let r = grow(
            &p,
            256 << 20,
            &GrowOptions::default().create(true).sync(true),
        )
        .unwrap();
        assert_eq!(r.strategy, Strategy::ZeroFill, "{}", fs.name);
        assert!(
            r.write_syscalls <= 300,
            "{}: {} write syscalls",
            fs.name,
            r.write_syscalls
        );
        assert_eq!(r.bytes_written, 256 << 20);
        let data = common::read(&p);
        assert_eq!(data.len(), 256 << 20);
        assert!(data.iter().all(|&b| b == 0));
    }
}

common::per_fs! {
    /// Fallbacks are visible: allocate on a filesystem without fallocate
    /// reports the EOPNOTSUPP and the zero-fill that replaced it.
    fn fallback_is_reported_with_errno(fs) on [ext4_noextents, sshfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("f");
        std::fs::write(&p, b"abc").unwrap();
        let r = grow(
            &p,
            1 << 20,
            &GrowOptions::default().choice(StrategyChoice::with_fallbacks(Strategy::Allocate)),
        )
        .unwrap();
        assert_eq!(r.strategy, Strategy::ZeroFill);
        assert_eq!(r.fallbacks.len(), 1);
        assert_eq!(r.fallbacks[0].strategy, Strategy::Allocate);
        assert_eq!(r.fallbacks[0].errno(), 95);
        assert_eq!(r.fallbacks[0].error.kind, fspace::ErrorKind::Unsupported);
        assert!(
            r.fallbacks[0].error.text.starts_with("fallocate("),
            "{}",
            r.fallbacks[0].error
        );

        let strict = GrowOptions::default().choice(StrategyChoice::exactly(Strategy::Allocate));
        let e = grow(&p, 2 << 20, &strict).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(95));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
    }
}

/// Sizes beyond Linux's largest file are refused with EFBIG before anything
/// is issued; a dangling symlink is refused before any work.
#[test]
fn impossible_targets_are_refused_up_front() {
    let fs = &common::all()[0];
    let dir = fs.tempdir();
    let p = dir.path().join("f");
    std::fs::write(&p, b"x").unwrap();
    for target in [u64::MAX, fspace::Size::MAX_FILE.bytes() + 1] {
        let e = grow(&p, target, &GrowOptions::default()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(27), "{e}"); // EFBIG
        assert!(e.to_string().contains("largest file"), "{e}");
    }
    assert_eq!(std::fs::read(&p).unwrap(), b"x");
    let link = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    let e = grow(&link, 1 << 20, &GrowOptions::default().create(true)).unwrap_err();
    assert!(e.to_string().contains("dangling symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}
