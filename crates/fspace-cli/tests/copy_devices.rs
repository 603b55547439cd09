//! `fspace copy` onto and from block devices, on loop devices (they support
//! write-zeroes and discard): only the data is written, zero ranges are
//! zeroed (or skipped with `--target-is-zero`), the device reads back
//! byte-identical, and a device copied into a file becomes a sparse file.
//! Needs root and `losetup`; under `FSPACE_REQUIRE_MATRIX=1` their absence
//! fails the test.

use fspace_test_kit as common;

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

fn fspace(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(args)
        .output()
        .expect("run fspace")
}

/// A loop device over a file, detached when dropped.
struct Loop {
    dev: String,
    backing: PathBuf,
}

impl Loop {
    fn new(backing: &Path, size: u64) -> Option<Loop> {
        if !common::is_root() {
            assert!(!common::require_matrix(), "root is required in CI");
            common::skipped("copy_devices", "all", "needs root for loop devices");
            return None;
        }
        std::fs::File::create(backing)
            .unwrap()
            .set_len(size)
            .unwrap();
        let o = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(backing)
            .output()
            .expect("losetup");
        assert!(o.status.success(), "losetup: {o:?}");
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        Some(Loop {
            dev,
            backing: backing.to_path_buf(),
        })
    }

    /// Sectors written to the device so far (`/sys/block/loopN/stat`,
    /// field 7): data and write-zeroes requests alike.
    fn sectors_written(&self) -> u64 {
        let name = Path::new(&self.dev).file_name().unwrap().to_string_lossy();
        let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
        s.split_whitespace().nth(6).unwrap().parse().unwrap()
    }

    fn fill_random(&self, len: u64) {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.dev)
            .unwrap();
        f.write_all_at(&common::random_bytes(9, len as usize), 0)
            .unwrap();
        f.sync_all().unwrap();
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A VM-image-like source of 24 MiB: 8 MiB of data with zero blocks in it,
/// a hole, 4 MiB of data, a hole to the end. Returns its data bytes (zero
/// blocks excluded).
fn make_source(p: &Path) -> u64 {
    let f = std::fs::File::create(p).unwrap();
    f.set_len(24 * MIB).unwrap();
    let mut data = common::random_bytes(3, 8 * MIB as usize);
    for blk in (0..data.len())
        .step_by(4096)
        .filter(|b| (b / 4096) % 4 == 1)
    {
        data[blk..blk + 4096].fill(0);
    }
    f.write_all_at(&data, 0).unwrap();
    f.write_all_at(&common::random_bytes(4, 4 * MIB as usize), 12 * MIB)
        .unwrap();
    f.sync_all().unwrap();
    6 * MIB + 4 * MIB
}

fn same_prefix(a: &Path, dev: &str, len: u64) -> bool {
    let x = std::fs::read(a).unwrap();
    let mut y = vec![0u8; len as usize];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact_at(&mut y, 0)
        .unwrap();
    x == y
}

common::per_fs! {
    /// File onto device: only data written (`--target-is-zero` after a
    /// discard), zero ranges zeroed by default, the device identical to the
    /// source either way; refused without --force, refused when too small.
    fn file_onto_device_writes_only_data(fs) on [ext4, xfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = dir.path().join("vm.img");
        let data = make_source(&src);
        let Some(lo) = Loop::new(&dir.path().join("disk"), 32 * MIB) else {
            return;
        };
        lo.fill_random(32 * MIB);
        let s = src.to_str().unwrap();

        // Without --force: refused, nothing written.
        let before = lo.sectors_written();
        let o = fspace(&["copy", s, &lo.dev]);
        assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
        assert!(common::unwrapped(&common::output_text(&o)).contains("blockdevice"));
        assert_eq!(lo.sectors_written(), before);

        // Default: data written, zero ranges zeroed (write-zeroes, which the
        // loop device turns into holes of its backing file).
        let o = fspace(&["copy", "--force", "--sync", "--json", s, &lo.dev]);
        assert!(o.status.success(), "{}", common::output_text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["method"], "device", "{v}");
        assert_eq!(v["bytes_copied"].as_u64().unwrap(), data, "{v}");
        assert!(same_prefix(&src, &lo.dev, 24 * MIB), "{}: device differs", fs.name);
        // The backing file holds the data and the 8 MiB past the source's end.
        let backing = std::fs::metadata(&lo.backing).unwrap().blocks() * 512;
        assert!(backing <= (data + 8 * MIB) * 105 / 100, "{}: backing file allocates {backing}", fs.name);

        // --target-is-zero onto a discarded device: device writes within
        // data + 5%.
        let st = Command::new("blkdiscard").arg(&lo.dev).status().unwrap();
        assert!(st.success());
        let before = lo.sectors_written();
        let o = fspace(&["copy", "--force", "--sync", "--target-is-zero", s, &lo.dev]);
        assert!(o.status.success(), "{}", common::output_text(&o));
        let written = (lo.sectors_written() - before) * 512;
        assert!(written <= data * 105 / 100, "{}: {written} bytes written for {data}", fs.name);
        assert!(same_prefix(&src, &lo.dev, 24 * MIB));

        // A device too small: refused before writing.
        let big = dir.path().join("big");
        std::fs::File::create(&big).unwrap().set_len(64 * MIB).unwrap();
        let before = lo.sectors_written();
        let o = fspace(&["copy", "--force", big.to_str().unwrap(), &lo.dev]);
        assert_eq!(o.status.code(), Some(1));
        assert!(common::output_text(&o).contains("too small"), "{}", common::output_text(&o));
        assert_eq!(lo.sectors_written(), before);
    }
}

common::per_fs! {
    /// Device into file: a sparse file identical to the device.
    fn device_into_file_is_sparse(fs) on [ext4, xfs, btrfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let Some(lo) = Loop::new(&dir.path().join("disk"), 16 * MIB) else {
            return;
        };
        let f = std::fs::OpenOptions::new().write(true).open(&lo.dev).unwrap();
        f.write_all_at(&common::random_bytes(5, 2 * MIB as usize), 4 * MIB).unwrap();
        f.sync_all().unwrap();
        drop(f);
        let out = dir.path().join("image");
        let o = fspace(&["copy", &lo.dev, out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", common::output_text(&o));
        let m = std::fs::metadata(&out).unwrap();
        assert_eq!(m.len(), 16 * MIB);
        assert!(m.blocks() * 512 <= 3 * MIB, "{}: {} allocated", fs.name, m.blocks() * 512);
        assert!(same_prefix(&out, &lo.dev, 16 * MIB));
    }
}
