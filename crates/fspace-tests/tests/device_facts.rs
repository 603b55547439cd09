//! The block devices under each filesystem of the matrix: the loop device
//! a filesystem is mounted from (`findmnt`), its queue's facts exactly as
//! sysfs has them, its backing file, and the device that file is on;
//! none for tmpfs and sshfs, with the reason.

use fspace_test_kit as common;

use fspace::internals::block_devices;
use fspace::BlockDevice;
use std::path::{Path, PathBuf};

use std::process::Command;

/// `findmnt -n -o SOURCE --target path`: the device a path's filesystem
/// is mounted from.
fn mount_source(path: &Path) -> String {
    let out = Command::new("findmnt")
        .args(["-n", "-o", "SOURCE", "--target"])
        .arg(path)
        .output()
        .expect("findmnt");
    assert!(out.status.success(), "findmnt {}", path.display());
    // btrfs shows `/dev/loop2[/subvolume]`.
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    s.split('[').next().unwrap_or("").to_string()
}

fn sysfs(dev: &str, name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/class/block/{dev}/{name}"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The device whose `queue/` serves `dev`: its disk for a partition.
fn queue_owner(dev: &str) -> String {
    if sysfs(dev, "partition").is_none() {
        return dev.to_string();
    }
    std::fs::canonicalize(format!("/sys/class/block/{dev}/.."))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dev.to_string())
}

fn num(dev: &str, name: &str) -> Option<u64> {
    sysfs(&queue_owner(dev), &format!("queue/{name}")).map(|s| s.parse().unwrap())
}

/// Every fact of `d` equals sysfs's for the device named `name`.
fn check_against_sysfs(d: &BlockDevice, name: &str, label: &str) {
    assert_eq!(d.name, name, "{label}");
    assert_eq!(Some(d.dev.clone()), sysfs(name, "dev"), "{label}");
    assert_eq!(
        d.write_cache,
        sysfs(&queue_owner(name), "queue/write_cache"),
        "{label}"
    );
    assert!(
        matches!(
            d.write_cache.as_deref(),
            Some("write back" | "write through")
        ),
        "{label}: {d:?}"
    );
    assert_eq!(d.fua, num(name, "fua").map(|n| n != 0), "{label}");
    assert_eq!(
        d.rotational,
        num(name, "rotational").map(|n| n != 0),
        "{label}"
    );
    assert_eq!(
        d.discard_max_bytes,
        num(name, "discard_max_bytes"),
        "{label}"
    );
    assert_eq!(
        d.discard_granularity,
        num(name, "discard_granularity"),
        "{label}"
    );
    assert_eq!(
        d.write_zeroes_max_bytes,
        num(name, "write_zeroes_max_bytes"),
        "{label}"
    );
    assert_eq!(
        d.write_zeroes_unmap_max_bytes,
        num(name, "write_zeroes_unmap_max_bytes"),
        "{label}"
    );
    assert_eq!(
        d.logical_block_size,
        num(name, "logical_block_size"),
        "{label}"
    );
    assert_eq!(
        d.physical_block_size,
        num(name, "physical_block_size"),
        "{label}"
    );
    assert!(
        d.logical_block_size.is_some_and(|b| b >= 512),
        "{label}: {d:?}"
    );
}

common::per_fs! {
    fn block_devices_match_sysfs(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        let label = fs.name.clone();
        let devs = block_devices(&fs.root);
        if fs.is(&["tmpfs", "sshfs"]) {
            let why = devs.expect_err(&label);
            // Not a failed call: a fact of the filesystem's kind.
            assert_eq!(why.kind, fspace::ErrorKind::NotRegular, "{label}: {why:?}");
            assert_eq!(why.errno, None, "{label}: {why:?}");
            assert!(why.text.starts_with("no block device"), "{label}: {why}");
            return;
        }
        let source = mount_source(&fs.root);
        let Some(loop_name) = source.strip_prefix("/dev/") else {
            panic!("{label}: mounted from {source}, not a device");
        };
        let devs = devs.unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(devs.len(), 1, "{label}: {devs:?}");
        let d = &devs[0];
        check_against_sysfs(d, loop_name, &label);
        if loop_name.starts_with("loop") {
            // The matrix's filesystems are loop devices over image files:
            // the backing file, then the device that file is on.
            let backing = sysfs(loop_name, "loop/backing_file").map(PathBuf::from);
            assert_eq!(d.backing_file, backing, "{label}");
            // The device the image file is on, by its st_dev (where that
            // is a block device: not for an image on tmpfs or btrfs).
            let dev =
                std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(backing.unwrap()).unwrap());
            let link = format!(
                "/sys/dev/block/{}:{}",
                rustix::fs::major(dev),
                rustix::fs::minor(dev)
            );
            if let Ok(p) = std::fs::canonicalize(&link) {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                assert_eq!(d.lower.len(), 1, "{label}: {d:?}");
                check_against_sysfs(&d.lower[0], &name, &format!("{label}, under its image"));
            }
        }
    }
}

common::per_fs! {
    /// The space a file pins: on btrfs an overwrite leaves the old extent
    /// allocated, whole, while any of it is referenced (64 KiB written, then
    /// 4 KiB of it overwritten: 64 KiB referenced, 68 KiB of disk extents);
    /// elsewhere nothing is read from an extent tree.
    fn copy_on_write_pins_what_an_overwrite_left(fs) on [btrfs, ext4, xfs] {
        use std::os::unix::fs::FileExt;
        let dir = fs.tempdir();
        let path = dir.path().join("f");
        let f = std::fs::File::create(&path).unwrap();
        f.write_all_at(&common::pattern(1, 64 << 10), 0).unwrap();
        f.sync_data().unwrap();
        f.write_all_at(&common::pattern(2, 4096), 4096).unwrap();
        f.sync_data().unwrap();
        let u = fspace::space_use(std::slice::from_ref(&path)).unwrap();
        assert_eq!((u.files, u.logical_bytes), (1, 64 << 10), "{}", fs.name);
        assert_eq!(u.allocated_bytes, common::allocated(&path), "{}", fs.name);
        if fs.is(&["btrfs"]) {
            assert_eq!(u.allocated_bytes, 64 << 10, "{u:?}");
            assert_eq!(u.pinned_bytes, Some(68 << 10), "{u:?}");
            assert!(u.words().contains("copy-on-write"), "{}", u.words());
        } else {
            assert_eq!(u.pinned_bytes, None, "{}: {u:?}", fs.name);
        }
    }
}

common::per_fs! {
    /// The log's space after a run of `bench commit --mode wal`. On btrfs
    /// the log's own layout (NOCOW, zero-filled segments) pins what its
    /// files reference and no more; copy-on-write segments with each
    /// flush rewriting the partial last page pin more (8 KiB records:
    /// about 1.5x); padded flushes write no page twice and pin no more.
    /// On ext4 (zero-filled segments) every byte is allocated and nothing
    /// is read from an extent tree.
    fn the_log_reports_the_space_it_pins(fs) on [btrfs, ext4] {
        use fspace::bench::{run_commit, CommitBenchOptions};
        let run = |nocow: Option<bool>, pad: Option<bool>| {
            let dir = fs.tempdir();
            let opts = CommitBenchOptions::default()
                .duration(std::time::Duration::from_millis(500))
                .segment_size(1 << 20)
                .sync_methods(vec![fspace::SyncMethod::Fdatasync])
                .nocow(nocow)
                .pad_flushes(pad);
            let r = run_commit(dir.path(), fspace::bench::SpaceState::Wal, &opts, None).unwrap();
            let u = r.wal.and_then(|w| w.space).expect("the log's space");
            assert!(r.commits > 10 && u.files >= 1, "{}: {u:?}", fs.name);
            assert!(u.logical_bytes >= 1 << 20, "{}: {u:?}", fs.name);
            u
        };
        let u = run(None, None);
        if fs.is(&["btrfs"]) {
            let ratio = u.pinned_ratio().expect("btrfs pins");
            assert!(ratio <= 1.1, "{u:?}: NOCOW segments are overwritten in place");
            assert_eq!(u.allocated_bytes, u.logical_bytes, "zero-filled: {u:?}");
            let cow = run(Some(false), Some(false));
            let ratio = cow.pinned_ratio().expect("btrfs pins");
            assert!(ratio > 1.2, "{cow:?}: 8 KiB records, each flush rewrites a page");
            let padded = run(Some(false), Some(true));
            let ratio = padded.pinned_ratio().expect("btrfs pins");
            assert!(ratio <= 1.1, "{padded:?}: padded, no page written twice");
        } else {
            assert_eq!(u.pinned_bytes, None, "{u:?}");
            // Zero-filled segments: every byte allocated.
            assert_eq!(u.allocated_bytes, u.logical_bytes, "{u:?}");
        }
    }
}

common::per_fs! {
    /// Without `CAP_SYS_ADMIN` the extent tree cannot be searched: the pinned
    /// space is unknown, and says why, rather than zero. The test binary runs
    /// itself again under `setpriv --bounding-set -sys_admin`.
    fn without_cap_sys_admin_the_pinned_space_says_why(fs) on [btrfs] {
        if let Ok(path) = std::env::var("FSPACE_SPACE_USE_CHILD") {
            let u = fspace::space_use(&[PathBuf::from(path)]).unwrap();
            println!("SPACE{}", serde_json::to_string(&u).unwrap());
            return;
        }
        if !common::is_root() {
            common::skipped(
                "without_cap_sys_admin_the_pinned_space_says_why",
                &fs.name,
                "needs root to drop a capability",
            );
            return;
        }
        let dir = fs.tempdir();
        let path = dir.path().join("f");
        std::fs::write(&path, common::pattern(3, 64 << 10)).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        let o = Command::new("setpriv")
            .args(["--bounding-set", "-sys_admin", "--"])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "without_cap_sys_admin_the_pinned_space_says_why::btrfs",
                "--nocapture",
            ])
            .env("FSPACE_SPACE_USE_CHILD", &path)
            .output()
            .expect("setpriv");
        let out = String::from_utf8_lossy(&o.stdout);
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("SPACE"))
            .unwrap_or_else(|| panic!("no result from the child: {out}"));
        let child: fspace::SpaceUse = serde_json::from_str(line).unwrap();
        assert_eq!(child.pinned_bytes, None, "{child:?}");
        let why = child.pinned_unknown.clone().unwrap_or_default();
        assert!(why.contains("CAP_SYS_ADMIN"), "{child:?}");
        assert!(child.words().contains("were not read"), "{}", child.words());
        // With the capability: the same file's extents.
        let u = fspace::space_use(std::slice::from_ref(&path)).unwrap();
        assert_eq!(u.pinned_bytes, Some(64 << 10), "{u:?}");
        assert_eq!(u.pinned_unknown, None, "{u:?}");
        assert_eq!(u.allocated_bytes, child.allocated_bytes);
    }
}
