//! `CopyOptions::keep_allocation` on the filesystem matrix: the copy's
//! extent states equal the source's block by block (written, unwritten,
//! hole, past the end included) where the filesystem can allocate, and the
//! report says what was done instead where it cannot.

use fspace_test_kit as common;

use fspace::{copy, CopyOptions, NoteKind, ReflinkMode, SparseMode};
use fspace::{map_file, ExtentState, MapOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;
const BLOCK: u64 = 4096;

/// A file of 41 MiB: unwritten 0-8 MiB, data 8-12, hole 12-16, unwritten
/// 16-40, data 40-41, and 8 MiB unwritten past its end.
fn make_source(p: &Path) {
    let f = std::fs::File::create(p).unwrap();
    f.set_len(41 * MIB).unwrap();
    let fallocate = |args: &[&str]| {
        let o = Command::new("fallocate")
            .args(args)
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success(), "fallocate {args:?}: {o:?}");
    };
    fallocate(&["-n", "-o", "0", "-l", "8MiB"]);
    fallocate(&["-n", "-o", "16MiB", "-l", "24MiB"]);
    fallocate(&["-n", "-o", "41MiB", "-l", "8MiB"]);
    f.write_all_at(&common::random_bytes(1, 4 * MIB as usize), 8 * MIB)
        .unwrap();
    f.write_all_at(&common::random_bytes(2, MIB as usize), 40 * MIB)
        .unwrap();
    f.sync_all().unwrap();
}

/// Bytes allocated past the end of the file (after a sync).
fn beyond_eof(p: &Path) -> Option<u64> {
    let o = MapOptions::default().sync(true);
    map_file(p, o).unwrap().summary.beyond_eof
}

/// The state of every block up to `end`, from the extent map (after a
/// sync): written, unwritten or hole.
fn block_states(p: &Path, end: u64) -> Vec<ExtentState> {
    let map = map_file(p, MapOptions::default().sync(true)).unwrap();
    let mut states = vec![ExtentState::Hole; (end / BLOCK) as usize];
    for e in &map.extents {
        let state = match e.state {
            ExtentState::Unwritten => ExtentState::Unwritten,
            ExtentState::Hole => continue,
            _ => ExtentState::Written,
        };
        let first = e.offset / BLOCK;
        let last = e.end().div_ceil(BLOCK).min(end / BLOCK);
        for b in first..last {
            states[b as usize] = state;
        }
    }
    states
}

fn keep(reflink: ReflinkMode) -> CopyOptions<'static> {
    CopyOptions::default()
        .sparse(SparseMode::Auto)
        .reflink(reflink)
        .keep_allocation(true)
}

common::per_fs! {
    /// Unwritten stays unwritten, data stays data, holes stay holes, the
    /// allocation past the end is kept, and the bytes are the source's.
    fn keeps_extent_states_block_for_block(fs) on [ext4, xfs, btrfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
        make_source(&src);
        let r = copy(&src, &dst, &keep(ReflinkMode::Never)).unwrap();
        assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&dst).unwrap());
        assert_eq!(r.bytes_kept_allocated, 40 * MIB, "{}: {r:?}", fs.name);
        let (a, b) = (block_states(&src, 41 * MIB), block_states(&dst, 41 * MIB));
        let unwritten = a.iter().filter(|s| **s == ExtentState::Unwritten).count() as u64;
        assert_eq!(unwritten * BLOCK, 32 * MIB, "{}: the source as made", fs.name);
        assert_eq!(beyond_eof(&src), Some(8 * MIB), "{}: the source as made", fs.name);
        assert_eq!(beyond_eof(&dst), Some(8 * MIB), "{}: kept past the end", fs.name);
        let differ = a.iter().zip(&b).position(|(x, y)| x != y);
        assert!(
            differ.is_none(),
            "{}: block {:?} is {:?} in the source, {:?} in the copy",
            fs.name,
            differ,
            differ.map(|i| a[i]),
            differ.map(|i| b[i])
        );
    }
}

common::per_fs! {
    /// Without keep_allocation the unwritten ranges become holes (the
    /// default, as with cp).
    fn default_copy_makes_unwritten_ranges_holes(fs) on [ext4, xfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
        make_source(&src);
        let opts = CopyOptions::default().reflink(ReflinkMode::Never);
        let r = copy(&src, &dst, &opts).unwrap();
        assert_eq!(r.bytes_kept_allocated, 0);
        let b = block_states(&dst, 41 * MIB);
        assert!(!b.contains(&ExtentState::Unwritten), "{}", fs.name);
        assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&dst).unwrap());
    }
}

common::per_fs! {
    /// Where the copy's filesystem cannot allocate (ext4 without extents)
    /// or the source's unwritten extents cannot be seen (sshfs, tmpfs), the
    /// bytes are still the source's and a note says what was not kept.
    fn says_what_it_could_not_keep(fs) on [ext4_noextents, sshfs, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = dir.path().join("src");
        let dst = dir.path().join("dst");
        let made = std::fs::File::create(&src).unwrap();
        made.set_len(4 * MIB).unwrap();
        made.write_all_at(b"data", MIB).unwrap();
        // fallocate where it works (tmpfs), else a plain sparse file.
        let _ = Command::new("fallocate")
            .args(["-n", "-o", "2MiB", "-l", "1MiB"])
            .arg(&src)
            .output();
        let r = copy(&src, &dst, &keep(ReflinkMode::Auto)).unwrap();
        assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&dst).unwrap());
        if r.bytes_kept_allocated == 0 {
            assert!(
                r.notes.iter().any(|n| n.kind == NoteKind::AllocationNotKept)
                    || fs.is(&["ext4-noextents"]),
                "{}: {r:?}",
                fs.name
            );
        }
    }
}

common::per_fs! {
    /// Cross-filesystem: an ext4 source's unwritten extents become unwritten in
    /// an xfs copy.
    fn keeps_allocation_across_filesystems(a, b) on pairs [ext4_to_xfs: (ext4, xfs)] {
        let _g = common::lock_pair(a, b);
        let (da, db) = (a.tempdir(), b.tempdir());
        let (src, dst) = (da.path().join("src"), db.path().join("dst"));
        make_source(&src);
        let r = copy(&src, &dst, &keep(ReflinkMode::Auto)).unwrap();
        assert_eq!(r.bytes_kept_allocated, 40 * MIB, "{r:?}");
        assert_eq!(block_states(&src, 41 * MIB), block_states(&dst, 41 * MIB));
        assert_eq!(beyond_eof(&dst), Some(8 * MIB));
    }
}

#[test]
fn keep_allocation_refuses_other_sparse_modes() {
    for sparse in [SparseMode::Always, SparseMode::Never] {
        let o = CopyOptions::default().sparse(sparse).keep_allocation(true);
        let e = o.validate().unwrap_err();
        assert_eq!(e.option, "sparse");
        assert!(e.message.contains("sparse mode auto"), "{e}");
    }
}
