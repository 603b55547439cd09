//! Power cuts on real filesystems: ext4, xfs and btrfs, each on a private
//! loop image made by the test. The cut is taken by copying the image file
//! at once, without unmounting or syncing: the copy holds what the
//! filesystem had submitted to the device, which is what a power cut keeps
//! (the page cache and an uncommitted journal transaction are lost). Only
//! then is the original unmounted (which writes everything back); the copy
//! is mounted (its journal replays) and checked.
//!
//! **The log** (`power_cut_after_a_killed_rename_*`). The defect this pins:
//! a process dies after renaming a new segment into place but before its
//! directory `fsync`; the next process opens the log, uses that segment and
//! acknowledges commits in it; a power cut before the filesystem's next
//! journal commit undoes the rename, and recovery used to remove the
//! segment (back under its temporary name) with every acknowledged record.
//!
//! 1. Child 1 opens the log; a fault hook aborts it right after its
//!    preparer renames segment 2 into place, before the directory `fsync`.
//! 2. Child 2 opens the log (segment 2 becomes live), commits records and
//!    prints each acknowledged one. Its own preparer is failed by a fault
//!    (no I/O at all), because its directory `fsync`s would commit the
//!    journal and hide what is tested: whether `open` itself makes the
//!    rename durable.
//! 3. The cut; every acknowledged record must be back, identical.
//!
//! **`copy --force` without `--sync`** (`copy_force_*`): a durable old file
//! is replaced by a copy; another program then `fsync`s an unrelated file
//! on the same filesystem (which commits the journal, rename included, as
//! any activity does within seconds); then the cut. The name must hold the
//! old file or the whole copy, never a short or empty one.
//!
//! Needs root, `losetup` and the filesystem's `mkfs`; without them it is
//! skipped (a failure when `FSPACE_REQUIRE_MATRIX=1`).

use fspace_test_kit as common;

use fspace::wal::{Faults, Lsn, Wal, WalOptions};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::Arc;

const SEG: u64 = 256 << 10;
const RECORDS: u64 = 20;

fn opts() -> WalOptions {
    WalOptions {
        segment_size: SEG,
        prepare_ahead: 1,
        ..Default::default()
    }
}

fn payload(child: u64, n: u64) -> Vec<u8> {
    let len = 100 + (n * 997 % 6000) as usize;
    (0..len)
        .map(|i| (i as u64 ^ (child << 7) ^ n.wrapping_mul(31)) as u8)
        .collect()
}

fn hash(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// The child side: runs only when spawned by [`power_cut_case`].
#[test]
fn wal_power_cut_child() {
    let Ok(spec) = std::env::var("FSPACE_WAL_POWER_CHILD") else {
        return;
    };
    let (role, dir) = spec.split_once(',').expect("ROLE,DIR");
    let dir = Path::new(dir);
    let faults = Arc::new(Faults::default());
    let mut o = opts();
    o.faults = Some(faults.clone());
    let child = match role {
        "first" => {
            // Aborts the process right after segment 2's rename.
            faults.abort_after_rename_to.store(2, Ordering::SeqCst);
            1
        }
        _ => {
            faults.prepare.store(libc::EIO, Ordering::SeqCst);
            2
        }
    };
    let wal = Wal::open(dir, o).expect("open");
    println!("OPENED {}", wal.recovery().next_lsn.0);
    let count = if child == 1 { 3 } else { RECORDS };
    for n in 0..count {
        let p = payload(child, n);
        let l = wal.commit(&p).expect("commit");
        println!("ACK {} {}", l.0, hash(&p));
    }
    if child == 1 {
        // Wait for the preparer to reach the hook.
        for _ in 0..500 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        println!("NO-ABORT");
        std::process::exit(3);
    }
    println!("DONE");
    // Dropped without `close`: every record is committed already, and
    // nothing else may sync the directory.
    std::process::exit(0);
}

/// A private filesystem on a loop image; unmounted, detached and removed
/// on drop, also when the test fails.
struct Scratch {
    dir: tempfile::TempDir,
    loops: Vec<String>,
    mounts: Vec<PathBuf>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for m in self.mounts.drain(..).rev() {
            let _ = Command::new("umount").arg(&m).status();
        }
        for l in self.loops.drain(..) {
            let _ = Command::new("losetup").args(["-d", &l]).status();
        }
        let _ = &self.dir;
    }
}

fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Scratch {
    fn attach(&mut self, image: &Path) -> String {
        let image = image.to_str().expect("utf-8 path");
        // Parallel tests race for free loop devices: retry a busy one.
        let mut last = String::new();
        for _ in 0..5 {
            let out = Command::new("losetup")
                .args(["--find", "--show", image])
                .output()
                .expect("losetup");
            if out.status.success() {
                let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
                self.loops.push(dev.clone());
                return dev;
            }
            last = String::from_utf8_lossy(&out.stderr).to_string();
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("losetup --find --show {image}: {last}");
    }

    fn mount(&mut self, dev: &str, at: &Path, opts: &str) {
        std::fs::create_dir_all(at).expect("mount point");
        let at_s = at.to_str().expect("utf-8 path");
        if opts.is_empty() {
            run("mount", &[dev, at_s]);
        } else {
            run("mount", &["-o", opts, dev, at_s]);
        }
        self.mounts.push(at.to_path_buf());
    }

    fn unmount(&mut self, at: &Path) {
        run("umount", &[at.to_str().expect("utf-8 path")]);
        self.mounts.retain(|m| m != at);
    }

    fn detach(&mut self, dev: &str) {
        run("losetup", &["-d", dev]);
        self.loops.retain(|l| l != dev);
    }
}

fn spawn(role: &str, dir: &Path) -> std::process::Output {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "wal_power_cut_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            "FSPACE_WAL_POWER_CHILD",
            format!("{role},{}", dir.display()),
        )
        .output()
        .expect("spawn child")
}

fn acks(out: &std::process::Output) -> BTreeMap<u64, u64> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("ACK "))
        .map(|l| {
            let (a, b) = l.split_once(' ').expect("ACK LSN HASH");
            (a.parse().expect("lsn"), b.parse().expect("hash"))
        })
        .collect()
}

/// A private filesystem of type `fs`, mounted, and what is needed to cut
/// its power.
struct Env {
    s: Scratch,
    fs: &'static str,
    image: PathBuf,
    dev: String,
    mnt: PathBuf,
}

impl Env {
    /// Makes and mounts the filesystem; `None` (after logging a skip) when
    /// this machine cannot.
    fn new(test: &str, fs: &'static str) -> Option<Env> {
        let (mkfs, size_mb, mount_opts): (&str, u64, &str) = match fs {
            // commit=600: no periodic journal commit inside the test's
            // window, so the result does not depend on racing ext4's 5 s
            // timer (the report that found the log's defect lost records
            // in 15 of 20 attempts with the default).
            "ext4" => ("mkfs.ext4", 64, "commit=600"),
            "xfs" => ("mkfs.xfs", 300, ""),
            "btrfs" => ("mkfs.btrfs", 256, ""),
            _ => unreachable!(),
        };
        let missing = if !common::is_root() {
            Some("needs root (loop devices, mounts)".to_string())
        } else {
            ["losetup", "mount", "umount", "cp", mkfs]
                .iter()
                .find(|c| !have(c))
                .map(|c| format!("{c} is not installed"))
        };
        if let Some(why) = missing {
            assert!(!common::require_matrix(), "{test} on {fs}: {why}");
            common::skipped(test, fs, &why);
            return None;
        }
        let base = tempfile::Builder::new()
            .prefix("fspace-power-cut-")
            .tempdir_in("/var/tmp")
            .expect("scratch directory");
        let mut s = Scratch {
            dir: base,
            loops: vec![],
            mounts: vec![],
        };
        let root = s.dir.path().to_path_buf();
        let image = root.join("fs.img");
        let f = std::fs::File::create(&image).expect("image");
        f.set_len(size_mb << 20).expect("image size");
        drop(f);
        let quiet = if fs == "ext4" { "-qF" } else { "-qf" };
        run(mkfs, &[quiet, image.to_str().expect("utf-8")]);
        let dev = s.attach(&image);
        let mnt = root.join("mnt");
        s.mount(&dev, &mnt, mount_opts);
        Some(Env {
            s,
            fs,
            image,
            dev,
            mnt,
        })
    }

    /// Cuts the power: copies the image as the device holds it now, then
    /// unmounts the original and mounts the copy. Returns where the copy
    /// is mounted.
    fn cut(&mut self) -> PathBuf {
        let root = self.s.dir.path().to_path_buf();
        let cut = root.join("cut.img");
        run(
            "cp",
            &[
                "--sparse=always",
                self.image.to_str().expect("utf-8"),
                cut.to_str().expect("utf-8"),
            ],
        );
        let (mnt, dev) = (self.mnt.clone(), self.dev.clone());
        self.s.unmount(&mnt);
        self.s.detach(&dev);
        let dev2 = self.s.attach(&cut);
        let mnt2 = root.join("mnt-cut");
        self.s.mount(&dev2, &mnt2, "");
        self.dev = dev2;
        self.mnt = mnt2.clone();
        mnt2
    }
}

fn power_cut_case(fs: &'static str) {
    let Some(mut env) = Env::new("power_cut_after_a_killed_rename", fs) else {
        return;
    };
    let dir = env.mnt.join("wal");
    let first = spawn("first", &dir);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        first.status.signal(),
        Some(libc::SIGABRT),
        "{fs}: child 1 should die by the fault hook after renaming segment 2: {}\n{}",
        first.status,
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        dir.join("000000000002.seg").exists(),
        "{fs}: segment 2 is not in place after child 1"
    );
    let second = spawn("second", &dir);
    assert!(
        second.status.success(),
        "{fs}: child 2 failed: {}\n{}",
        second.status,
        String::from_utf8_lossy(&second.stderr)
    );
    let mut acked = acks(&first);
    let acked2 = acks(&second);
    assert_eq!(
        acked2.len() as u64,
        RECORDS,
        "{fs}: child 2's acknowledgements"
    );
    acked.extend(acked2);

    let dir2 = env.cut().join("wal");
    let wal = Wal::open(&dir2, opts()).unwrap_or_else(|e| panic!("{fs}: open after the cut: {e}"));
    let rec = wal.recovery().clone();
    let got: BTreeMap<u64, u64> = wal
        .read_from(Lsn(0))
        .expect("reader")
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("{fs}: read after the cut: {e}"));
            (r.lsn.0, hash(&r.data))
        })
        .collect();
    wal.close().expect("close");
    let lost: Vec<u64> = acked
        .iter()
        .filter(|(l, h)| got.get(l) != Some(h))
        .map(|(l, _)| *l)
        .collect();
    assert!(
        lost.is_empty(),
        "{fs}: {} of {} acknowledged records lost or changed after the cut: LSNs {lost:?}; \
         recovery found next LSN {}, removed {} temporary file(s) and {:?}",
        lost.len(),
        acked.len(),
        rec.next_lsn,
        rec.removed_temp_files,
        rec.removed_files
    );
    eprintln!(
        "{fs}: {} acknowledged records, all back after the cut (recovery: next LSN {}, {} segments)",
        acked.len(),
        rec.next_lsn,
        rec.segments
    );
    let _ = env.fs;
}

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
    use fspace::sparse::{copy, CopyOptions, ReflinkMode};
    let Some(mut env) = Env::new("copy_force_power_cut", fs) else {
        return;
    };
    let old: Vec<u8> = (0..(1 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let new: Vec<u8> = (0..(3 << 20) + 77)
        .map(|i| (i % 241) as u8 ^ 0x5a)
        .collect();
    let dst = env.mnt.join("data.bin");
    let src = env.mnt.join("src.bin");
    write_durably(&dst, &old);
    write_durably(&src, &new);
    let opts = CopyOptions {
        force: true,
        // Shared blocks would be the source's, durable already: copy the
        // bytes, as across filesystems.
        reflink: ReflinkMode::Never,
        ..Default::default()
    };
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
    use fspace::grow::{grow, GrowOptions, Intent};
    let Some(mut env) = Env::new("grow_create_power_cut", fs) else {
        return;
    };
    let path = env.mnt.join("new.img");
    let target = 8u64 << 20;
    for intent in [Intent::Bulk, Intent::Log] {
        let p = path.with_extension(format!("{intent:?}").to_lowercase());
        let opts = GrowOptions {
            create: true,
            intent,
            ..Default::default()
        };
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
fn grow_create_without_sync_leaves_nothing_or_zeros_ext4() {
    grow_create_case("ext4");
}

#[test]
fn grow_create_without_sync_leaves_nothing_or_zeros_xfs() {
    grow_create_case("xfs");
}

#[test]
fn grow_create_without_sync_leaves_nothing_or_zeros_btrfs() {
    grow_create_case("btrfs");
}

#[test]
fn copy_force_without_sync_keeps_the_old_file_or_the_whole_copy_ext4() {
    copy_force_case("ext4");
}

#[test]
fn copy_force_without_sync_keeps_the_old_file_or_the_whole_copy_xfs() {
    copy_force_case("xfs");
}

#[test]
fn copy_force_without_sync_keeps_the_old_file_or_the_whole_copy_btrfs() {
    copy_force_case("btrfs");
}

#[test]
fn power_cut_after_a_killed_rename_keeps_acknowledged_records_ext4() {
    power_cut_case("ext4");
}

#[test]
fn power_cut_after_a_killed_rename_keeps_acknowledged_records_xfs() {
    power_cut_case("xfs");
}

#[test]
fn power_cut_after_a_killed_rename_keeps_acknowledged_records_btrfs() {
    power_cut_case("btrfs");
}
