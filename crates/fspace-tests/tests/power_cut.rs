//! Power cuts on real filesystems: ext4, xfs and btrfs, each on a private
//! loop image made by the test (`fspace_test_kit::loop_fs`: the cut copies
//! the image at once, without unmounting or syncing, which keeps what the
//! filesystem had submitted to the device; the copy is then mounted, its
//! journal replays, and checked). The log's power cut after a killed rename
//! needs a fault injected through its storage seam, so it lives with the
//! log's own tests (`crates/fspace/src/wal/tests/killed_rename.rs`).
//!
//! **`copy --force` without `--sync`** (`copy_force_*`): a durable old file
//! is replaced by a copy; another program then `fsync`s an unrelated file
//! on the same filesystem (which commits the journal, rename included, as
//! any activity does within seconds); then the cut. The name must hold the
//! old file or the whole copy, never a short or empty one.
//!
//! Needs root, `losetup` and the filesystem's `mkfs`; a machine without
//! them builds these tests as ignored (they run, and fail on what is
//! missing, when `FSPACE_REQUIRE_MATRIX=1`: `fspace_test_kit::loop_fs`).

use fspace_test_kit::loop_fs::LoopFs;
use std::path::Path;

/// `fsync`s a file and its directory.
fn write_durably(path: &Path, data: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).expect("create");
    f.write_all(data).expect("write");
    f.sync_all().expect("fsync");
    let parent = path.parent().expect("parent");
    std::fs::File::open(parent)
        .and_then(|d| d.sync_all())
        .expect("fsync directory");
}

fn copy_force_case(fs: &'static str) {
    use fspace::{copy, CopyOptions, ReflinkMode};
    let mut env = LoopFs::new("copy_force_power_cut", fs);
    let old: Vec<u8> = (0..(1 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let new: Vec<u8> = (0..(3 << 20) + 77)
        .map(|i| (i % 241) as u8 ^ 0x5a)
        .collect();
    let dst = env.mnt.join("data.bin");
    let src = env.mnt.join("src.bin");
    write_durably(&dst, &old);
    write_durably(&src, &new);
    // Shared blocks would be the source's, durable already: copy the
    // bytes, as across filesystems.
    let opts = CopyOptions::default()
        .force(true)
        .reflink(ReflinkMode::Never);
    let r = copy(&src, &dst, &opts).unwrap_or_else(|e| panic!("{fs}: copy --force: {e}"));
    assert!(r.replaced && !r.synced, "{fs}: {r:?}");
    // Another program's fsync commits the journal, the rename with it.
    write_durably(&env.mnt.join("other.txt"), b"unrelated");
    let mnt = env.cut();
    let got = std::fs::read(mnt.join("data.bin"))
        .unwrap_or_else(|e| panic!("{fs}: the destination is gone after the cut: {e}"));
    let which = if got == new {
        "the copy"
    } else if got == old {
        "the old file"
    } else {
        panic!(
            "{fs}: after the cut the destination holds neither the old file ({} bytes) nor the copy ({} bytes): {} bytes, {} of them non-zero",
            old.len(),
            new.len(),
            got.len(),
            got.iter().filter(|&&b| b != 0).count()
        );
    };
    eprintln!("{fs}: after the cut the destination holds {which}, whole");
}

/// `grow --create` without `sync`, then a journal commit (another
/// program's fsync), then the cut: the name may be missing or hold any
/// length (documented), but never bytes that are not zeros. Prints what
/// it found: the figures behind the docs.
fn grow_create_case(fs: &'static str) {
    use fspace::{grow, GrowOptions, Intent};
    let mut env = LoopFs::new("grow_create_power_cut", fs);
    let path = env.mnt.join("new.img");
    let target = 8u64 << 20;
    for intent in [Intent::Bulk, Intent::Log] {
        let p = path.with_extension(format!("{intent:?}").to_lowercase());
        let opts = GrowOptions::default().create(true).intent(intent);
        grow(&p, target, &opts).unwrap_or_else(|e| panic!("{fs}: grow --create: {e}"));
    }
    write_durably(&env.mnt.join("other.txt"), b"unrelated");
    let mnt = env.cut();
    for intent in [Intent::Bulk, Intent::Log] {
        let name = format!("new.{}", format!("{intent:?}").to_lowercase());
        match std::fs::read(mnt.join(&name)) {
            Err(e) => eprintln!("{fs}: grow --create --for {intent:?} without sync: after the cut {name} is missing ({e})"),
            Ok(b) => {
                assert!(b.len() as u64 <= target, "{fs}: {name} is longer than grown");
                assert!(
                    b.iter().all(|&x| x == 0),
                    "{fs}: {name} holds non-zero bytes after the cut"
                );
                eprintln!(
                    "{fs}: grow --create --for {intent:?} without sync: after the cut {name} holds {} of {target} bytes (zeros)",
                    b.len()
                );
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "ext4"),
    ignore = "needs root, losetup and mkfs.ext4 (a loop image)"
)]
fn grow_create_without_sync_leaves_nothing_or_zeros_ext4() {
    grow_create_case("ext4");
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "xfs"),
    ignore = "needs root, losetup and mkfs.xfs (a loop image)"
)]
fn grow_create_without_sync_leaves_nothing_or_zeros_xfs() {
    grow_create_case("xfs");
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "btrfs"),
    ignore = "needs root, losetup and mkfs.btrfs (a loop image)"
)]
fn grow_create_without_sync_leaves_nothing_or_zeros_btrfs() {
    grow_create_case("btrfs");
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "ext4"),
    ignore = "needs root, losetup and mkfs.ext4 (a loop image)"
)]
fn copy_force_without_sync_keeps_the_old_file_or_the_whole_copy_ext4() {
    copy_force_case("ext4");
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "xfs"),
    ignore = "needs root, losetup and mkfs.xfs (a loop image)"
)]
fn copy_force_without_sync_keeps_the_old_file_or_the_whole_copy_xfs() {
    copy_force_case("xfs");
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "btrfs"),
    ignore = "needs root, losetup and mkfs.btrfs (a loop image)"
)]
fn copy_force_without_sync_keeps_the_old_file_or_the_whole_copy_btrfs() {
    copy_force_case("btrfs");
}

/// Untorn writes with `dsync` on XFS (the software path: each write goes
/// to new blocks and the mapping switches in a log transaction) are
/// durable when the call returns: after the cut every page holds its new
/// bytes whole, in space `grow --untorn` prepared and synced. A write
/// that forgot `RWF_DSYNC` would leave the transaction in memory and the
/// old zeros on the copy.
#[test]
#[cfg_attr(
    not(fspace_loop_fs = "xfs"),
    ignore = "needs root, losetup and mkfs.xfs (a loop image)"
)]
fn untorn_dsync_writes_survive_a_cut_whole_xfs() {
    use fspace::{grow, untorn, GrowOptions};
    use std::os::unix::fs::OpenOptionsExt;
    let mut env = LoopFs::new("untorn_power_cut", "xfs");
    let path = env.mnt.join("pages.db");
    let opts = GrowOptions::default()
        .create(true)
        .sync(true)
        .untorn_unit(Some(16384));
    grow(&path, 4 << 20, &opts).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(&path)
        .unwrap();
    let mut v = vec![0u8; 16384 + 4096];
    let at = v.as_ptr().align_offset(4096);
    let pages: Vec<u64> = (0..256).step_by(7).collect();
    for &p in &pages {
        let page = &mut v[at..at + 16384];
        page.fill((p % 250) as u8 + 1);
        untorn::write_untorn(&f, &path, page, p * 16384, true).unwrap();
    }
    drop(f);
    let mnt = env.cut();
    let got = std::fs::read(mnt.join("pages.db")).unwrap();
    assert_eq!(got.len(), 4 << 20);
    for p in 0..256u64 {
        let page = &got[(p * 16384) as usize..((p + 1) * 16384) as usize];
        let want = if pages.contains(&p) {
            (p % 250) as u8 + 1
        } else {
            0
        };
        assert!(
            page.iter().all(|b| *b == want),
            "page {p} after the cut: not all {want:#x} (first bytes {:?})",
            &page[..8]
        );
    }
}
