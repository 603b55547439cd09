//! Untorn writes on the filesystem matrix: the facts fspace reports agree
//! with what `statx` returns for a scratch file (read here with rustix, not
//! through fspace); the write call works where the kernel allows it and
//! names the limit where it does not; space made ready for a unit passes
//! the layout check on XFS; the one answer for a database page is "no"
//! with a reason everywhere but direct I/O on XFS.

use fspace_test_kit as common;

use fspace::untorn::{self, IoPath, Limits, Source};
use fspace::{grow, GrowOptions, Intent, Strategy, StrategyChoice};
use rustix::fd::AsFd;
use rustix::fs::{AtFlags, OFlags, StatxFlags};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

const STATX_WRITE_ATOMIC: u32 = 0x0001_0000;
const STATX_ATTR_WRITE_ATOMIC: u64 = 0x0040_0000;

/// The state `statx` gives for a fresh file in `dir`, read directly.
fn statx_state(dir: &Path) -> (&'static str, u32, u32) {
    let p = dir.join("statx-probe");
    let f = std::fs::File::create(&p).unwrap();
    let st = rustix::fs::statx(
        f.as_fd(),
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::from_bits_retain(STATX_WRITE_ATOMIC),
    )
    .unwrap();
    std::fs::remove_file(&p).unwrap();
    if st.stx_mask & STATX_WRITE_ATOMIC == 0 {
        ("not-reported", 0, 0)
    } else if st.stx_attributes.bits() & STATX_ATTR_WRITE_ATOMIC == 0
        || st.stx_atomic_write_unit_max == 0
    {
        ("zero", 0, 0)
    } else {
        (
            "supported",
            st.stx_atomic_write_unit_min,
            st.stx_atomic_write_unit_max,
        )
    }
}

/// What the matrix's filesystems report on Linux 6.18 (see docs/untorn.md):
/// XFS with reflink supports untorn writes by its software path; ext4
/// reports 0 on loop devices; the others do not report.
fn expected(name: &str) -> &'static str {
    match name {
        "xfs" => "supported",
        "ext4" | "ext4-noextents" | "ext4-bigalloc" => "zero",
        _ => "not-reported",
    }
}

common::per_fs! {
    /// The filesystem's facts, measured on a scratch file, agree with
    /// statx read directly; the trial writes agree with the limits; the
    /// JSON keeps the state by name.
    fn facts_agree_with_statx(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_bigalloc] {
        let dir = fs.tempdir();
        let f = untorn::facts_of_fs(dir.path()).unwrap_or_else(|e| panic!("{}: {e}", fs.name));
        let (state, min, max) = statx_state(dir.path());
        assert_eq!(f.limits.state().name(), state, "{}: {f:?}", fs.name);
        assert_eq!(state, expected(&fs.name), "{}: the kernel changed its answer", fs.name);
        if let Limits::Supported { unit_min, unit_max, .. } = f.limits {
            assert_eq!((unit_min, unit_max), (min, max), "{}", fs.name);
            // The matrix's loop devices have no atomic writes: XFS's
            // software path carries every size.
            assert_eq!(f.source, Source::Filesystem, "{}: {f:?}", fs.name);
            assert_eq!(f.geometry.reflink, Some(true), "{}", fs.name);
        } else {
            assert_eq!(f.source, Source::None, "{}", fs.name);
        }
        assert!(f.scratch);
        // Every trial through O_DIRECT agrees with the limits; no buffered
        // trial is taken on this kernel.
        for t in &f.tried {
            let allowed = t.direct && f.path_for(u64::from(t.size)).is_some();
            assert_eq!(t.ok, allowed, "{}: {t:?} under {:?}", fs.name, f.limits);
            if !t.ok && !t.direct {
                let why = t.error.as_ref().expect("a refused trial says why");
                assert_eq!(why.errno, Some(libc_eopnotsupp()), "{}: {t:?}", fs.name);
                assert_eq!(why.kind, fspace::ErrorKind::Unsupported, "{}: {t:?}", fs.name);
            }
        }
        assert_eq!(f.tried.len(), 6, "{}", fs.name);
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["limits"]["state"], state, "{}: {json}", fs.name);
        if let Ok(devs) = &f.devices {
            for d in devs {
                assert_eq!(d.unit_max_bytes, Some(0), "{}: {d:?}", fs.name);
            }
        }
        // No scratch file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{}: {left:?}", fs.name);
    }
}

fn libc_eopnotsupp() -> i32 {
    rustix::io::Errno::OPNOTSUPP.raw_os_error()
}

fn libc_einval() -> i32 {
    rustix::io::Errno::INVAL.raw_os_error()
}

/// A page-aligned buffer of `len` bytes of `byte`.
fn page(len: usize, byte: u8) -> (Vec<u8>, usize) {
    let v = vec![byte; len + 4096];
    let off = v.as_ptr().align_offset(4096);
    (v, off)
}

fn open_direct(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(OFlags::DIRECT.bits() as i32)
        .open(path)
        .unwrap()
}

common::per_fs! {
    /// On XFS untorn 4 and 16 KiB pages land in prepared space and read
    /// back; each bad request is refused with its limit named and nothing
    /// written.
    fn untorn_writes_on_xfs(fs) on [xfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("pages");
        let opts = GrowOptions::default().create(true).sync(true).untorn_unit(Some(16384));
        let r = grow(&path, 1 << 20, &opts).unwrap();
        let ready = r.untorn.as_ref().expect("an untorn report");
        assert_eq!(ready.extent_size_hint, Some(16384), "{ready:?}");
        let f = open_direct(&path);
        for (size, at, byte) in [(4096usize, 8192u64, 1u8), (16384, 65536, 2)] {
            let (v, off) = page(size, byte);
            untorn::write_untorn(&f, &path, &v[off..off + size], at, true)
                .unwrap_or_else(|e| panic!("{size} at {at}: {e}"));
        }
        let data = std::fs::read(&path).unwrap();
        assert!(data[8192..12288].iter().all(|b| *b == 1));
        assert!(data[65536..81920].iter().all(|b| *b == 2));
        assert!(data[81920..].iter().all(|b| *b == 0));

        let limits = untorn::facts(&path).unwrap().limits;
        let Limits::Supported { unit_max, .. } = limits else {
            panic!("{limits:?}")
        };
        let too_big = (unit_max as usize) * 2;
        let cases: [(usize, u64, &str); 3] = [
            (16384, 4096, "is not a multiple of the write's size"),
            (too_big, 0, "is above the largest untorn unit here"),
            (12288, 0, "is not a power of two"),
        ];
        for (size, at, words) in cases {
            let (v, off) = page(size, 9);
            let e = untorn::write_untorn(&f, &path, &v[off..off + size], at, true).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc_einval()), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(words), "{msg}");
            assert!(msg.contains("pwritev2(RWF_ATOMIC)") && msg.contains("pages"), "{msg}");
        }
        // A buffered descriptor is refused, never written plainly.
        let b = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let (v, off) = page(4096, 7);
        let e = untorn::write_untorn(&b, &path, &v[off..off + 4096], 0, false).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eopnotsupp()), "{e}");
        assert!(e.to_string().contains("O_DIRECT"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), data, "a refused write changed the file");
    }
}

common::per_fs! {
    /// Where untorn writes are not supported the call says so, with
    /// EOPNOTSUPP, and writes nothing.
    fn untorn_writes_refused_elsewhere(fs) on [ext4, btrfs, ext4_bigalloc] {
        let dir = fs.tempdir();
        let path = dir.path().join("pages");
        std::fs::write(&path, vec![0u8; 65536]).unwrap();
        let f = open_direct(&path);
        let (v, off) = page(16384, 3);
        let e = untorn::write_untorn(&f, &path, &v[off..off + 16384], 0, true).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eopnotsupp()), "{}: {e}", fs.name);
        assert!(e.to_string().contains("not supported here"), "{}: {e}", fs.name);
        assert_eq!(std::fs::read(&path).unwrap(), vec![0u8; 65536]);
    }
}

common::per_fs! {
    /// Where the filesystem takes no untorn writes, growth for an untorn
    /// unit and the layout check say so first, with EOPNOTSUPP and the
    /// reason, and change nothing: no "all units aligned" on space whose
    /// every write can tear. (A file is not created; one that exists keeps
    /// its length and bytes.)
    fn untorn_space_refused_where_there_are_no_untorn_writes(fs) on [ext4, btrfs, ext4_noextents, tmpfs, ext4_bigalloc] {
        let dir = fs.tempdir();
        let never = dir.path().join("never");
        let opts = GrowOptions::default().create(true).sync(true).untorn_unit(Some(16384));
        let e = grow(&never, 1 << 20, &opts).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eopnotsupp()), "{}: {e}", fs.name);
        let msg = e.to_string();
        assert!(msg.contains("takes no untorn writes"), "{}: {msg}", fs.name);
        assert!(msg.contains("statx"), "{}: the reason: {msg}", fs.name);
        assert!(msg.contains("never"), "{}: the path: {msg}", fs.name);
        assert!(!never.exists(), "{}", fs.name);
        let kept = dir.path().join("kept");
        std::fs::write(&kept, b"kept").unwrap();
        let opts = GrowOptions::default().untorn_unit(Some(16384));
        let e = grow(&kept, 1 << 20, &opts).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eopnotsupp()), "{}: {e}", fs.name);
        assert_eq!(std::fs::read(&kept).unwrap(), b"kept");
        let f = std::fs::File::open(&kept).unwrap();
        let e = untorn::check_layout(&f, &kept, 0..16384, 16384).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eopnotsupp()), "{}: {e}", fs.name);
        assert!(e.to_string().contains("takes no untorn writes"), "{e}");
        // The same growth without the unit is written log space, as before.
        let r = grow(&kept, 1 << 20, &GrowOptions::default().intent(Intent::Log)).unwrap();
        assert_eq!(r.new_len, 1 << 20);
    }
}

common::per_fs! {
    /// On XFS a unit outside the file's limits (above `unit_max`) is
    /// refused the same way, with EINVAL and the limit; one inside them
    /// works as before.
    fn untorn_unit_outside_the_limits_is_refused(fs) on [xfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("f");
        std::fs::write(&path, b"").unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let limits = untorn::facts(&path).unwrap().limits;
        let Limits::Supported { unit_max, .. } = limits else {
            panic!("xfs: {limits:?}");
        };
        let big = unit_max.checked_mul(2).expect("a unit above the maximum");
        let opts = GrowOptions::default().untorn_unit(Some(big));
        let e = grow(&path, u64::from(big) * 2, &opts).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_einval()), "{e}");
        assert!(e.to_string().contains("no untorn writes of"), "{e}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        let e = untorn::check_layout(&f, &path, 0..u64::from(big), u64::from(big)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_einval()), "{e}");
        let opts = GrowOptions::default().sync(true).untorn_unit(Some(16384));
        assert!(grow(&path, 1 << 20, &opts).is_ok());
    }
}

common::per_fs! {
    /// Space grown ready for 16 KiB units passes the layout check on XFS:
    /// each unit in one written extent with an aligned physical start. An
    /// unprepared, fallocated file's result is reported as it is: every
    /// unit counted, unwritten ones named.
    fn ready_space_passes_the_layout_check(fs) on [xfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("ready");
        let opts = GrowOptions::default().create(true).sync(true).untorn_unit(Some(16384));
        let r = grow(&path, 8 << 20, &opts).unwrap();
        let ready = r.untorn.unwrap();
        let layout = ready.layout.unwrap();
        assert!(layout.passes(), "{}: {layout:?}", layout.words());
        assert_eq!(layout.units, (8 << 20) / 16384);

        let plain = dir.path().join("fallocated");
        let opts = GrowOptions::default()
            .create(true)
            .choice(StrategyChoice::exactly(Strategy::Allocate));
        grow(&plain, 8 << 20, &opts).unwrap();
        let f = std::fs::File::open(&plain).unwrap();
        let c = untorn::check_layout(&f, &plain, 0..8 << 20, 16384).unwrap();
        assert_eq!(c.units, (8 << 20) / 16384);
        assert_eq!(
            c.ok + c.faults.iter().map(|(_, n)| n).sum::<u64>(),
            c.units,
            "{c:?}"
        );
        // fallocate leaves unwritten extents: no unit passes as written.
        assert!(!c.passes(), "{}", c.words());
        assert!(
            c.faults.iter().any(|(f, _)| *f == untorn::UnitFault::Unwritten),
            "{c:?}"
        );
    }
}

common::per_fs! {
    /// A bad unit is refused before anything is created.
    fn a_bad_unit_changes_nothing(fs) on [xfs, ext4] {
        let dir = fs.tempdir();
        let path = dir.path().join("never");
        for unit in [0u32, 3000, 256] {
            let opts = GrowOptions::default().create(true).untorn_unit(Some(unit));
            let e = grow(&path, 1 << 20, &opts).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc_einval()), "{e}");
            assert!(e.to_string().contains("power of two"), "{e}");
            assert!(!path.exists());
        }
    }
}

common::per_fs! {
    /// The one answer for 8 and 16 KiB pages, direct and buffered: "no",
    /// with a reason, everywhere but direct I/O on XFS; buffered says the
    /// kernel takes untorn writes only with O_DIRECT.
    fn one_answer_per_page_and_path(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_bigalloc] {
        let dir = fs.tempdir();
        let f = untorn::facts_of_fs(dir.path()).unwrap();
        for page in [8192u64, 16384] {
            for io in [IoPath::Direct, IoPath::Buffered] {
                let a = untorn::answer(&f, page, io);
                let yes = fs.name == "xfs" && io == IoPath::Direct;
                assert_eq!(a.untorn, yes, "{} {page} {io:?}: {a:?}", fs.name);
                assert!(!a.reason.is_empty());
                if yes {
                    assert_eq!(a.path, Some(untorn::WritePath::Software), "{a:?}");
                    assert_eq!(a.confirmed, Some(true), "{a:?}");
                } else {
                    assert!(a.limit.is_some(), "{a:?}");
                }
                if io == IoPath::Buffered {
                    assert_eq!(a.limit, Some(untorn::Limit::Buffered), "{a:?}");
                    assert!(a.reason.contains("only with O_DIRECT"), "{}", a.reason);
                }
            }
        }
    }
}

common::per_fs! {
    /// Growing a file that holds data keeps every byte of it; the new units
    /// past the first unit boundary after the old end are aligned on XFS
    /// even though the hint cannot be set on a file with extents (the
    /// report says why).
    fn growing_a_file_with_data_keeps_it(fs) on [xfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("data");
        let old = common::pattern(7, 100_000);
        std::fs::write(&path, &old).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        f.sync_all().unwrap();
        let opts = GrowOptions::default().sync(true).untorn_unit(Some(16384));
        let r = grow(&path, 4 << 20, &opts).unwrap();
        let ready = r.untorn.unwrap();
        let note = ready.hint_note.as_ref().expect("the hint was not set");
        assert_eq!(note.kind, fspace::NoteKind::HintNotSet, "{ready:?}");
        assert!(note.text.contains("already has"), "{ready:?}");
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 4 << 20);
        assert_eq!(&data[..old.len()], &old[..]);
        assert!(data[old.len()..].iter().all(|b| *b == 0));
        let a = 100_000u64.div_ceil(16384) * 16384;
        let c = untorn::check_layout(&f, &path, a..4 << 20, 16384).unwrap();
        assert!(c.passes(), "{}: {c:?}", c.words());
    }
}

common::per_fs! {
    /// A growth for untorn writes that runs out of space puts the file back
    /// (old length, old bytes) and says ENOSPC, naming the path.
    fn no_space_puts_the_file_back(fs) on [xfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let path = dir.path().join("full");
        let old = common::pattern(9, 50_000);
        std::fs::write(&path, &old).unwrap();
        let opts = GrowOptions::default().untorn_unit(Some(16384));
        let e = grow(&path, 64 << 30, &opts).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(rustix::io::Errno::NOSPC.raw_os_error()), "{e}");
        assert!(e.to_string().contains("full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), old);
        let created = dir.path().join("never");
        let e = grow(&created, 64 << 30, &opts.clone().create(true)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(rustix::io::Errno::NOSPC.raw_os_error()), "{e}");
        assert!(!created.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

common::per_fs! {
    /// An untorn unit with a strategy that leaves space unwritten is
    /// refused before anything changes; a directory has no limits of its
    /// own (facts says so instead of "not reported").
    fn refusals_change_nothing(fs) on [xfs, ext4] {
        let dir = fs.tempdir();
        let path = dir.path().join("f");
        std::fs::write(&path, b"kept").unwrap();
        for s in [Strategy::Sparse, Strategy::Reserve, Strategy::Allocate] {
            let opts = GrowOptions::default()
                .choice(StrategyChoice::exactly(s))
                .untorn_unit(Some(16384));
            let e = grow(&path, 1 << 20, &opts).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc_einval()), "{s}: {e}");
            assert!(e.to_string().contains("must be written"), "{e}");
            assert_eq!(std::fs::read(&path).unwrap(), b"kept");
        }
        let opts = GrowOptions::default()
            .choice(StrategyChoice::exactly(Strategy::ZeroFill))
            .untorn_unit(Some(16384));
        if fs.name == "xfs" {
            grow(&path, 1 << 20, &opts).unwrap();
        } else {
            // ext4 here takes no untorn writes: said, nothing changed.
            let e = grow(&path, 1 << 20, &opts).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc_eopnotsupp()), "{e}");
            assert_eq!(std::fs::read(&path).unwrap(), b"kept");
        }
        let e = untorn::facts(dir.path()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(rustix::io::Errno::ISDIR.raw_os_error()), "{e}");
        assert!(e.to_string().contains("facts_of_fs"), "{e}");
    }
}

common::per_fs! {
    /// Space reserved past the end before an untorn growth on XFS stays
    /// reserved (the alignment's collapses shift it; it is put back), and
    /// the file ends exactly at the target.
    fn reservations_past_the_end_are_kept(fs) on [xfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("reserved");
        std::fs::write(&path, common::pattern(3, 4096)).unwrap();
        let reserve = GrowOptions::default().choice(StrategyChoice::exactly(Strategy::Reserve));
        grow(&path, 8 << 20, &reserve).unwrap();
        let opts = GrowOptions::default().sync(true).untorn_unit(Some(16384));
        let r = grow(&path, 2 << 20, &opts).unwrap();
        assert_eq!(r.new_len, 2 << 20);
        let m = fspace::map_file(&path, fspace::MapOptions::default()).unwrap();
        assert!(
            m.summary.beyond_eof.unwrap_or(0) >= 6 << 20,
            "the reservation past the end was lost: {:?}",
            m.summary
        );
        let data = std::fs::read(&path).unwrap();
        assert_eq!(&data[..4096], &common::pattern(3, 4096)[..]);
        assert!(data[4096..].iter().all(|b| *b == 0));
    }
}
