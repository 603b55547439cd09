//! `dig` and the allocation unit: on ext4 with `bigalloc` (64 KiB clusters,
//! `FSPACE_TEST_BIGALLOC`) a punch never splits a cluster and the report's
//! freed figure is the measured one; the unit fspace learns equals what
//! `dumpe2fs` and `stat -f` say.

use fspace_test_kit as common;

use common::Fs;
use fspace::{dig, DigOptions};
use fspace::{AllocUnitSource, FsInfo};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Non-zero pseudo-random bytes (xorshift).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    fn byte(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 24) as u8
    }
}

/// `st_blocks` in bytes, as `dig` measures it (no sync in between).
fn st_allocated(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().blocks() * 512
}

/// Writes `len` bytes made of `data` bytes of random data then `zeros`
/// zero bytes, repeated, and fsyncs them.
fn pattern(p: &Path, len: u64, data: u64, zeros: u64) -> Vec<u8> {
    let mut rng = Rng::new(len ^ data ^ zeros);
    let mut bytes = Vec::with_capacity(len as usize);
    while (bytes.len() as u64) < len {
        for _ in 0..data {
            bytes.push(rng.byte() | 1);
        }
        bytes.resize(bytes.len() + zeros as usize, 0);
    }
    bytes.truncate(len as usize);
    let mut f = std::fs::File::create(p).unwrap();
    f.write_all(&bytes).unwrap();
    f.sync_all().unwrap();
    bytes
}

fn cluster_size_from_dumpe2fs(fs: &Fs, info: &FsInfo) -> u64 {
    let dev = info.source.clone().expect("a source device");
    let o = Command::new("dumpe2fs")
        .args(["-h", &dev])
        .output()
        .unwrap_or_else(|e| panic!("{}: dumpe2fs: {e}", fs.name));
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .find_map(|l| l.strip_prefix("Cluster size:"))
        .or_else(|| out.lines().find_map(|l| l.strip_prefix("Block size:")))
        .unwrap_or_else(|| panic!("{}: no cluster size in {out}", fs.name))
        .trim()
        .parse()
        .unwrap()
}

common::per_fs! {
    fn bigalloc_unit_is_the_cluster_size(fs) on [ext4_bigalloc] {
        let info = fspace::fs_info(&fs.root).unwrap();
        let unit = info.allocation_unit.expect("a unit on ext4");
        assert_eq!(unit.bytes, cluster_size_from_dumpe2fs(fs, &info));
        assert_eq!(unit.bytes, 64 * KIB, "the matrix makes 64 KiB clusters");
        if common::is_root() {
            assert_eq!(unit.source, AllocUnitSource::Superblock, "{unit:?}");
        }
    }
}

common::per_fs! {
    fn allocation_unit_is_the_block_size(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        let info = fspace::fs_info(&fs.root).unwrap();
        if fs.name == "sshfs" {
            assert!(!info.st_blocks_measures_allocation);
            assert_eq!(info.allocation_unit, None, "{info:?}");
            return;
        }
        let o = Command::new("stat").args(["-f", "-c", "%S"]).arg(&fs.root).output().unwrap();
        let block: u64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
        let unit = info.allocation_unit.unwrap_or_else(|| panic!("{}: {info:?}", fs.name));
        assert_eq!(unit.bytes, block, "{}: {unit:?}", fs.name);
        if fs.name.starts_with("ext4") {
            assert_eq!(unit.bytes, cluster_size_from_dumpe2fs(fs, &info), "{}", fs.name);
        }
    }
}

common::per_fs! {
    /// 4 KiB zero runs between 4 KiB of data: no cluster is all zeros, so
    /// nothing may be punched, and allocation must not grow (it did, 256 to
    /// 262 MiB, when 4 KiB punches split clusters).
    fn bigalloc_dig_of_small_zero_runs_never_grows_allocation(fs) on [ext4_bigalloc] {
        let dir = fs.tempdir();
        let p = dir.path().join("scattered");
        let bytes = pattern(&p, 32 * MIB, 4 * KIB, 4 * KIB);
        let before = st_allocated(&p);
        let r = dig(&p, &DigOptions::default()).unwrap();
        let after = st_allocated(&p);
        assert!(std::fs::read(&p).unwrap() == bytes, "dig changed bytes");
        assert!(
            after <= before,
            "allocation grew: {before} -> {after}: {r:?}"
        );
        assert_eq!(r.allocation_unit.map(|u| u.bytes), Some(64 * KIB), "{r:?}");
        assert_eq!(r.holes_punched, 0, "{r:?}");
        assert_eq!(r.zero_bytes_kept, 16 * MIB, "{r:?}");
        assert_eq!(r.allocated_before, Some(before), "{r:?}");
        assert_eq!(r.allocated_after, Some(after), "{r:?}");
        assert_eq!(r.bytes_freed, Some(before - after), "{r:?}");
    }
}

common::per_fs! {
    /// Zero runs of whole 64 KiB clusters are punched and freed, and the
    /// report's freed figure is the measured difference.
    fn bigalloc_dig_frees_whole_zero_clusters(fs) on [ext4_bigalloc] {
        let dir = fs.tempdir();
        let p = dir.path().join("aligned");
        // 64 KiB of data, then 64 KiB of zeros, then 16 KiB of data, 112 KiB
        // of zeros (one whole cluster among them), repeated every 256 KiB.
        let mut rng = Rng::new(7);
        let mut bytes = Vec::new();
        for _ in 0..(16 * MIB / (256 * KIB)) {
            for (data, zeros) in [(64 * KIB, 64 * KIB), (16 * KIB, 112 * KIB)] {
                bytes.extend((0..data).map(|_| rng.byte() | 1));
                bytes.resize(bytes.len() + zeros as usize, 0);
            }
        }
        std::fs::write(&p, &bytes).unwrap();
        std::fs::File::open(&p).unwrap().sync_all().unwrap();
        let before = st_allocated(&p);
        let r = dig(&p, &DigOptions::default()).unwrap();
        let after = st_allocated(&p);
        assert!(std::fs::read(&p).unwrap() == bytes, "dig changed bytes");
        let clusters = 2 * 16 * MIB / (256 * KIB);
        assert_eq!(r.holes_punched, clusters, "{r:?}");
        assert_eq!(r.bytes_punched, clusters * 64 * KIB, "{r:?}");
        assert_eq!(
            r.zero_bytes_kept,
            16 * MIB / (256 * KIB) * 48 * KIB,
            "{r:?}"
        );
        assert_eq!(r.bytes_freed, Some(before - after), "{r:?}");
        // What was punched was freed, less at most a few clusters of extent
        // tree the punches may have needed.
        assert!(
            before - after + 4 * 64 * KIB >= r.bytes_punched,
            "{before} -> {after}: {r:?}"
        );
        let again = dig(&p, &DigOptions::default()).unwrap();
        assert_eq!(again.holes_punched, 0, "{again:?}");
    }
}
