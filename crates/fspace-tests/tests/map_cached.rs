//! `map_file` and data still in the page cache: bytes written into
//! fallocated (unwritten) space map as unwritten until writeback, and the
//! map must say so (`Summary::unwritten_cached`) instead of showing the
//! file as empty; with `sync` it flushes first and maps where they landed.

use fspace_test_kit as common;

use common::per_fs;
use fspace::{map_file, ExtentState, MapOptions};
use std::os::unix::fs::FileExt;

const MIB: u64 = 1 << 20;

per_fs! {
    /// Every written byte is mapped written (already written back) or
    /// delayed (btrfs: copy-on-write gives it a new extent), or counted as
    /// cached over an unwritten extent (ext4, xfs); after `sync` all of it
    /// is written and nothing is counted as cached.
    fn written_into_unwritten_space_is_never_lost_from_the_map(fs) on [ext4, xfs, btrfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("f");
        let f = std::fs::File::create(&path).unwrap();
        let status = std::process::Command::new("fallocate")
            .args(["-l", "8M"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success(), "{}: fallocate", fs.name);
        let data = common::random_bytes(7, MIB as usize);
        f.write_all_at(&data, 2 * MIB).unwrap();

        let m = map_file(&path, MapOptions::default()).unwrap();
        let cached = m.summary.unwritten_cached.expect("FIEMAP gives the cached figure");
        let written = m.bytes_in(ExtentState::Written, 2 * MIB..3 * MIB)
            + m.bytes_in(ExtentState::Delalloc, 2 * MIB..3 * MIB);
        assert!(
            written + cached >= MIB,
            "{}: 1 MiB written, {written} mapped written or delayed and {cached} cached: {:?}",
            fs.name,
            m.extents
        );

        let m = map_file(&path, MapOptions::default().sync(true)).unwrap();
        assert_eq!(m.summary.unwritten_cached, None, "{}", fs.name);
        assert_eq!(m.bytes_in(ExtentState::Written, 2 * MIB..3 * MIB), MIB, "{}: {:?}", fs.name, m.extents);
        assert_eq!(m.bytes_in(ExtentState::Unwritten, 0..2 * MIB), 2 * MIB, "{}", fs.name);
    }
}

per_fs! {
    /// A file that was only fallocated has nothing cached over its
    /// unwritten extents (the figure is not a restatement of `unwritten`).
    fn fallocated_only_file_has_nothing_cached(fs) on [ext4, xfs, btrfs] {
        let dir = fs.tempdir();
        let path = dir.path().join("f");
        let status = std::process::Command::new("fallocate")
            .args(["-l", "8M"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success(), "{}: fallocate", fs.name);
        let m = map_file(&path, MapOptions::default()).unwrap();
        assert_eq!(m.summary.unwritten, Some(8 * MIB), "{}", fs.name);
        assert_eq!(m.summary.unwritten_cached, Some(0), "{}", fs.name);
    }
}
