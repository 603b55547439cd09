//! Growth on every filesystem of the matrix.

use fspace_test_kit as common;

use common::Fs;
use fspace::extents::{map_file, ExtentState, MapOptions};
use fspace::{grow, FsKind, GrowOptions, Intent, Strategy, StrategyChoice};
use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::Path;

const ENOSPC: i32 = 28;

common::per_fs! {
    /// Each mount of the matrix is the filesystem its name says, and the
    /// probe leaves no scratch file behind. (A filesystem missing from the
    /// matrix makes this test ignored, or failed under FSPACE_REQUIRE_MATRIX=1.)
    fn each_mount_is_what_its_name_says(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        let info = fspace::fs_info(&fs.root).unwrap();
        let caps = info.caps().expect("capabilities measured");
        match fs.name.as_str() {
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
                    .starts_with(fspace::fs_info::SCRATCH_PREFIX),
                "{n:?} left in {}",
                fs.name
            );
        }
    }
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
    let opts = GrowOptions {
        choice: mode
            .0
            .map_or_else(StrategyChoice::built_in, StrategyChoice::with_fallbacks),
        intent: mode.1,
        sync: c.sync,
        create,
        ..Default::default()
    };
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
    /// `--for bulk` there writes no data; on btrfs `--for log` writes no zeros.
    fn log_growth_leaves_written_extents_and_bulk_writes_nothing(fs) on [ext4, xfs, btrfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("seg");
        std::fs::write(&p, common::pattern(7, 12345)).unwrap();
        let log = GrowOptions {
            intent: Intent::Log,
            sync: true,
            ..Default::default()
        };
        let r = grow(&p, 16 << 20, &log).unwrap();
        let m = map_file(
            &p,
            MapOptions {
                sync: true,
                ..Default::default()
            },
        )
        .unwrap();
        let grown = 12345..16 << 20;
        if fs.name == "btrfs" {
            assert_eq!(r.bytes_written, 0, "btrfs: log growth wrote zeros: {r:?}");
            assert_ne!(r.strategy, Strategy::ZeroFill);
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
                MapOptions {
                    sync: true,
                    ..Default::default()
                },
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
            &GrowOptions {
                create: true,
                sync: true,
                ..Default::default()
            },
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
            &GrowOptions {
                choice: StrategyChoice::with_fallbacks(Strategy::Allocate),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.strategy, Strategy::ZeroFill);
        assert_eq!(r.fallbacks.len(), 1);
        assert_eq!(r.fallbacks[0].strategy, Strategy::Allocate);
        assert_eq!(r.fallbacks[0].errno, 95);
        assert!(
            r.fallbacks[0].error.starts_with("fallocate("),
            "{}",
            r.fallbacks[0].error
        );

        let strict = GrowOptions {
            choice: StrategyChoice::exactly(Strategy::Allocate),
            ..Default::default()
        };
        let e = grow(&p, 2 << 20, &strict).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(95));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
    }
}

common::per_fs! {
    /// Growing past the free space fails with ENOSPC naming the syscall, the
    /// path and the range; the file keeps its length and content and the free
    /// space comes back.
    fn enospc_rolls_back_length_content_and_space(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("victim");
        let init = common::pattern(99, 100_000);
        std::fs::write(&p, &init).unwrap();
        let cases: [(Option<Strategy>, bool, &str); 5] = [
            (None, true, ""),
            (Some(Strategy::Allocate), true, "fallocate"),
            (Some(Strategy::Reserve), true, "fallocate"),
            (Some(Strategy::ZeroFill), false, "pwritev"),
            (Some(Strategy::ZeroFill), true, "zero-fill"),
        ];
        for (strategy, check, op) in cases {
            if fs.name == "ext4-noextents" && op == "fallocate" {
                continue; // no fallocate there: the zero-fill cases cover it
            }
            let free_before = common::free_after_sync(dir.path());
            let target = init.len() as u64 + free_before + (64 << 20);
            let opts = GrowOptions {
                choice: strategy
                    .map_or_else(StrategyChoice::built_in, StrategyChoice::with_fallbacks),
                check_free_space: check,
                ..Default::default()
            };
            let e = grow(&p, target, &opts).expect_err("growth past free space must fail");
            assert_eq!(e.raw_os_error(), Some(ENOSPC), "{}: {e}", fs.name);
            let msg = e.to_string();
            assert!(msg.contains(&p.display().to_string()), "{}: {msg}", fs.name);
            if !op.is_empty() {
                assert!(msg.starts_with(op), "{}: expected {op}: {msg}", fs.name);
            }
            assert!(msg.contains(".."), "{}: no range in {msg}", fs.name);
            assert_eq!(
                common::read(&p),
                init,
                "{}: content changed by {strategy:?}",
                fs.name
            );
            let mut free_after = 0;
            for _ in 0..50 {
                free_after = common::free_after_sync(dir.path());
                if free_after + (1 << 20) >= free_before {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            assert!(
                free_after + (1 << 20) >= free_before,
                "{} {strategy:?}: free space {free_before} -> {free_after}",
                fs.name
            );
        }
    }
}

common::per_fs! {
    /// A large zero-fill under a storm of signals (handler without SA_RESTART)
    /// completes correctly.
    fn zero_fill_survives_a_signal_storm(fs) {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        static HITS: AtomicU64 = AtomicU64::new(0);
        extern "C" fn on_signal(_: libc::c_int) {
            HITS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: installs a handler that only touches an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = 0; // no SA_RESTART: interrupted syscalls return EINTR
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
        }
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("storm");
        std::fs::write(&p, b"head").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as usize;
        let s2 = stop.clone();
        let before = HITS.load(Ordering::Relaxed);
        let storm = std::thread::spawn(move || {
            while !s2.load(Ordering::Relaxed) {
                // SAFETY: `me` is alive until `stop` is set and joined.
                unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR1) };
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        });
        let opts = GrowOptions {
            choice: StrategyChoice::with_fallbacks(Strategy::ZeroFill),
            sync: true,
            ..Default::default()
        };
        let restarts_before = fspace::sys::counters().restarts;
        let r = grow(&p, 96 << 20, &opts);
        let restarts = fspace::sys::counters().restarts - restarts_before;
        stop.store(true, Ordering::Relaxed);
        storm.join().unwrap();
        let r = r.unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        let hits = HITS.load(Ordering::Relaxed) - before;
        assert!(hits > 0, "{}: no signal was delivered", fs.name);
        assert_eq!(r.new_len, 96 << 20);
        let data = common::read(&p);
        assert_eq!(&data[..4], b"head");
        assert!(data[4..].iter().all(|&b| b == 0), "{}", fs.name);
        eprintln!(
            "{}: zero-fill completed under {hits} signals, {} syscalls, {restarts} EINTR restarts",
            fs.name, r.syscalls
        );
    }
}

common::per_fs! {
    /// Creation with growth appears only when complete and leaves no temp file.
    fn create_is_atomic_and_leaves_no_temp_files(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("new.seg");
        let r = grow(
            &p,
            4 << 20,
            &GrowOptions {
                create: true,
                sync: true,
                intent: Intent::Log,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        assert!(r.created);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4 << 20);
        // A creation refused by the free-space check leaves nothing at all
        // (a real mid-fill ENOSPC: failed_creation_leaves_nothing).
        let q = dir.path().join("huge.seg");
        let big = GrowOptions {
            create: true,
            choice: StrategyChoice::with_fallbacks(Strategy::ZeroFill),
            ..Default::default()
        };
        if fs.name != "sshfs" && fs.name != "cwd" {
            assert!(grow(&q, 1 << 50, &big).is_err());
            assert!(!q.exists());
        }
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["new.seg".to_string()], "{}", fs.name);
    }
}

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
            MapOptions {
                force_seek: true,
                ..Default::default()
            },
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
    /// A failed growth keeps blocks reserved before it (an earlier `reserve`)
    /// on filesystems that can release exactly what the growth added.
    fn failed_growth_keeps_an_earlier_reservation(fs) on [xfs, btrfs, tmpfs, ext4] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("reserved");
        std::fs::write(&p, b"data").unwrap();
        grow(
            &p,
            8 << 20,
            &GrowOptions {
                choice: StrategyChoice::with_fallbacks(Strategy::Reserve),
                ..Default::default()
            },
        )
        .unwrap();
        let blocks =
            |p: &Path| std::os::unix::fs::MetadataExt::blocks(&std::fs::metadata(p).unwrap());
        let reserved = blocks(&p);
        assert!(
            reserved * 512 >= 8 << 20,
            "{}: reserve did not allocate",
            fs.name
        );
        let free = common::free_after_sync(dir.path());
        let e = grow(
            &p,
            free + (64 << 20),
            &GrowOptions {
                choice: StrategyChoice::with_fallbacks(Strategy::Allocate),
                ..Default::default()
            },
        )
        .expect_err("too big");
        assert_eq!(e.raw_os_error(), Some(ENOSPC), "{}: {e}", fs.name);
        assert_eq!(std::fs::read(&p).unwrap(), b"data");
        assert!(
            blocks(&p) >= reserved,
            "{}: the earlier reservation was released",
            fs.name
        );
    }
}

common::per_fs! {
    /// A cancelled zero-fill stops, puts the file back, and a cancelled
    /// creation leaves nothing behind.
    fn cancelled_zero_fill_rolls_back(fs) {
        use std::sync::atomic::{AtomicBool, Ordering};
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("c");
        std::fs::write(&p, b"keep").unwrap();
        let cancel = AtomicBool::new(false);
        let stop_after_3 = |pr: fspace::Progress| {
            if pr.done >= 3 << 20 {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let opts = GrowOptions {
            choice: StrategyChoice::with_fallbacks(Strategy::ZeroFill),
            cancel: Some(&cancel),
            progress: Some(&stop_after_3),
            ..Default::default()
        };
        let e = grow(&p, 64 << 20, &opts).expect_err("cancelled");
        assert_eq!(e.raw_os_error(), Some(125), "{}: {e}", fs.name); // ECANCELED
        assert!(e.to_string().contains("interrupted"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"keep", "{}", fs.name);

        cancel.store(false, Ordering::Relaxed);
        let q = dir.path().join("new");
        let seen_absent = std::cell::Cell::new(true);
        let check = |pr: fspace::Progress| {
            seen_absent.set(seen_absent.get() && !q.exists());
            if pr.done >= 3 << 20 {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let opts = GrowOptions {
            create: true,
            progress: Some(&check),
            ..opts
        };
        assert!(grow(&q, 64 << 20, &opts).is_err());
        assert!(
            seen_absent.get(),
            "{}: the file was visible before it was complete",
            fs.name
        );
        assert!(!q.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{}: {left:?}", fs.name);
    }
}

common::per_fs! {
    /// A real ENOSPC in the middle of a created file's fill leaves no file and
    /// no temporary file.
    fn failed_creation_leaves_nothing(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let q = dir.path().join("huge.seg");
        let free = common::free_after_sync(dir.path());
        let opts = GrowOptions {
            create: true,
            choice: StrategyChoice::with_fallbacks(Strategy::ZeroFill),
            check_free_space: false,
            ..Default::default()
        };
        let e = grow(&q, free + (64 << 20), &opts).expect_err("must not fit");
        assert_eq!(e.raw_os_error(), Some(ENOSPC), "{}: {e}", fs.name);
        assert!(
            e.to_string().contains(&q.display().to_string()),
            "{}: {e}",
            fs.name
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{}: something was left",
            fs.name
        );
    }
}

common::per_fs! {
    /// Temporary files of a killed fspace on this host are removed by the next
    /// creation in the same directory; others' are kept.
    fn stale_temporary_files_are_removed(fs) {
        let host: String = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let dead = dir
            .path()
            .join(format!(".x{}{host}-5000000-0", fspace::grow::TEMP_MARKER));
        let foreign = dir.path().join(format!(
            ".x{}otherhost-5000000-0",
            fspace::grow::TEMP_MARKER
        ));
        std::fs::write(&dead, b"left by a killed fspace").unwrap();
        std::fs::write(&foreign, b"another host's").unwrap();
        grow(
            &dir.path().join("new"),
            4096,
            &GrowOptions {
                create: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!dead.exists(), "{}", fs.name);
        assert!(foreign.exists(), "{}", fs.name);
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
    for target in [u64::MAX, fspace::units::MAX_FILE_SIZE + 1] {
        let e = grow(&p, target, &GrowOptions::default()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(27), "{e}"); // EFBIG
        assert!(e.to_string().contains("largest file"), "{e}");
    }
    assert_eq!(std::fs::read(&p).unwrap(), b"x");
    let link = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    let e = grow(
        &link,
        1 << 20,
        &GrowOptions {
            create: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("dangling symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
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
            let opts = GrowOptions {
                create: true,
                choice: StrategyChoice::with_fallbacks(strategy),
                ..Default::default()
            };
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
        let r = fspace::grow::allocate_range(&f, &path, start, len).unwrap();
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
            let e = fspace::grow::allocate_range(&f, &path, 0, 64 << 30).unwrap_err();
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
            let r = fspace::grow::allocate_range(&wo, &wo_path, 0, 1 << 20).unwrap();
            assert!(!r.holes_known, "{r:?}");
            assert_eq!(r.bytes_written, (1 << 20) - a.len() as u64, "{r:?}");
            assert_eq!(&common::read(&wo_path)[..a.len()], &a[..]);
        }
        // Argument errors keep the kernel's errno.
        let e = fspace::grow::allocate_range(&f, &path, 0, 0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(22), "{e}");
        let ro = std::fs::File::open(&path).unwrap();
        let e = fspace::grow::allocate_range(&ro, &path, 0, 4096).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(9), "{e}");
    }
}
