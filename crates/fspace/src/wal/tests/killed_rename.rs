//! A power cut after a killed rename, on real filesystems: ext4, xfs and
//! btrfs, each on a private loop image made by the test (see
//! `fspace_test_kit::loop_fs` for how the cut is taken).
//!
//! The defect this pins: a process dies after renaming a new segment into
//! place but before its directory `fsync`; the next process opens the log,
//! uses that segment and acknowledges commits in it; a power cut before the
//! filesystem's next journal commit undoes the rename, and recovery used to
//! remove the segment (back under its temporary name) with every
//! acknowledged record.
//!
//! 1. Child 1 opens the log on [`Faulty`] storage, which aborts it right
//!    after its preparer renames segment 2 into place, before the directory
//!    `fsync`.
//! 2. Child 2 opens the log (segment 2 becomes live), commits records and
//!    prints each acknowledged one. Its own preparer fails to create a file
//!    (no I/O at all), because its directory `fsync`s would commit the
//!    journal and hide what is tested: whether `open` itself makes the
//!    rename durable.
//! 3. The cut; every acknowledged record must be back, identical.
//!
//! Where no loop image can be made (not root, no `mkfs`), each test says so
//! when it runs and passes, or fails under `FSPACE_REQUIRE_MATRIX=1`
//! (`loop_fs::available_or_skip`): the library has no build script to mark
//! it ignored, as a dependent would build that script too.

use super::faults::{open_faulty, Faults};
use crate::wal::log::Wal;
use crate::wal::options::WalOptions;
use crate::wal::types::Lsn;
use fspace_test_kit::loop_fs::{self, LoopFs};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::Arc;

const SEG: u64 = 256 << 10;
const RECORDS: u64 = 20;
/// The child's test, by its full name in this test binary.
const CHILD: &str = "wal::tests::killed_rename::child";

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

/// The child side: runs only when spawned by [`case`] (ignored otherwise,
/// so that it does not count as a passed test).
#[test]
#[ignore = "the child process of power_cut_after_a_killed_rename_*; runs when spawned"]
fn child() {
    let Ok(spec) = std::env::var("FSPACE_WAL_POWER_CHILD") else {
        return;
    };
    let (role, dir) = spec.split_once(',').expect("ROLE,DIR");
    let dir = Path::new(dir);
    let faults = Arc::new(Faults::default());
    let child = match role {
        "first" => {
            // Aborts the process right after segment 2's rename.
            faults.abort_after_rename_to.store(2, Ordering::SeqCst);
            1
        }
        _ => {
            faults.create.store(libc::EIO, Ordering::SeqCst);
            2
        }
    };
    let wal = open_faulty(dir, opts(), &faults).expect("open");
    println!("OPENED {}", wal.recovery().next_lsn.0);
    let count = if child == 1 { 3 } else { RECORDS };
    for n in 0..count {
        let p = payload(child, n);
        let l = wal.commit(&p).expect("commit");
        println!("ACK {} {}", l.0, hash(&p));
    }
    if child == 1 {
        // Wait for the preparer to reach the rename.
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

fn spawn(role: &str, dir: &Path) -> std::process::Output {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            CHILD,
            "--exact",
            "--ignored",
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

fn case(fs: &'static str) {
    let mut env = LoopFs::new("power_cut_after_a_killed_rename", fs);
    let dir = env.mnt.join("wal");
    let first = spawn("first", &dir);
    assert_eq!(
        first.status.signal(),
        Some(libc::SIGABRT),
        "{fs}: child 1 should die by the fault after renaming segment 2: {}\n{}{}",
        first.status,
        String::from_utf8_lossy(&first.stdout),
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
}

/// Runs [`case`] on `fs` where a loop image of it can be made here.
fn on_loop_image(fs: &'static str) {
    let test = format!(
        "{}::power_cut_after_a_killed_rename_keeps_acknowledged_records_{fs}",
        module_path!()
    );
    if loop_fs::available_or_skip(&test, fs) {
        case(fs);
    }
}

#[test]
fn power_cut_after_a_killed_rename_keeps_acknowledged_records_ext4() {
    on_loop_image("ext4");
}

#[test]
fn power_cut_after_a_killed_rename_keeps_acknowledged_records_xfs() {
    on_loop_image("xfs");
}

#[test]
fn power_cut_after_a_killed_rename_keeps_acknowledged_records_btrfs() {
    on_loop_image("btrfs");
}
