//! The log under kill -9 on the filesystem matrix: every acknowledged
//! record survives, and no stale record of a recycled segment returns; on
//! ext4, xfs, btrfs and tmpfs, and on the fast mounts `ext4-fast` and
//! `xfs-fast`, where a durable write costs microseconds and a child
//! acknowledges more records before it is killed.

mod wal_common;
use fspace_test_kit as common;

use wal_common::*;

use fspace::wal::Wal;
use fspace::SyncMethod;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------
// kill -9

/// The child side of the kill tests: runs only when spawned by them
/// (ignored otherwise, so that it does not count as a passed test).
#[test]
#[ignore = "the child process of the kill tests; runs when spawned"]
fn wal_kill_child() {
    let Ok(spec) = std::env::var("FSPACE_WAL_CHILD") else {
        return;
    };
    let parts: Vec<&str> = spec.split(',').collect();
    let (dir, run, threads, mode) = (
        PathBuf::from(parts[0]),
        parts[1].parse::<u64>().unwrap(),
        parts[2].parse::<u64>().unwrap(),
        parts[3],
    );
    let mut o = opts();
    o.recycle_pool = 2;
    o.sync_method = parts.get(4).map(|m| m.parse().unwrap());
    o.pad_flushes = parts.get(5).map(|p| *p == "pad");
    let wal = Wal::open(&dir, o).unwrap();
    let start = wal.recovery().next_lsn;
    // Keep the log short: release what earlier runs wrote.
    wal.release_before(start).unwrap();
    println!("START {}", start.0);
    if mode == "stale" {
        // Fill several segments, release them, and let them be recycled;
        // then write fewer, smaller records and wait to be killed.
        let mut n = 0;
        while wal.stats().switches < 5 {
            let p = payload(run, 7, n);
            let l = wal.commit(&p).unwrap();
            println!("ACK {} {} 7 {}", l.0, hash(&p), n);
            n += 1;
        }
        let l = wal.commit(b"mark").unwrap();
        println!("ACK {} {} 9 0", l.0, hash(b"mark"));
        wal.release_before(l).unwrap();
        let mut m = 0;
        while wal.stats().prepared_recycled < 2 {
            let p = vec![m as u8; 100];
            let l = wal.commit(&p).unwrap();
            println!("ACK {} {} 8 {}", l.0, hash(&p), m);
            m += 1;
        }
        println!("STALE-READY");
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    std::thread::scope(|s| {
        for t in 0..threads {
            let wal = &wal;
            s.spawn(move || {
                for n in 0.. {
                    let p = payload(run, t, n);
                    let l = wal.commit(&p).unwrap();
                    println!("ACK {} {} {t} {n}", l.0, hash(&p));
                }
            });
        }
    });
}

struct Model {
    acked: HashMap<u64, u64>,
    /// Hashes of every payload a child may have committed without
    /// acknowledging it (in flight at the kill).
    possible: HashSet<u64>,
}

fn spawn_child(dir: &Path, run: u64, threads: u64, mode: &str) -> std::process::Child {
    spawn_child_with(dir, run, threads, mode, SyncMethod::Fdatasync, None)
}

/// A child that commits with sync method `method`, its flushes padded to
/// pages or not as `pad` says (`None`: the policy's choice).
fn spawn_child_with(
    dir: &Path,
    run: u64,
    threads: u64,
    mode: &str,
    method: SyncMethod,
    pad: Option<bool>,
) -> std::process::Child {
    let pad = match pad {
        Some(true) => ",pad",
        Some(false) => ",packed",
        None => "",
    };
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "--ignored",
            "wal_kill_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            "FSPACE_WAL_CHILD",
            format!("{},{run},{threads},{mode},{method}{pad}", dir.display()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Reads the child's lines until `stop` says so; returns (lines, STARTed).
fn ack_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn absorb(model: &mut Model, run: u64, line: &str, last_n: &mut HashMap<u64, u64>) {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.first() == Some(&"ACK") && f.len() == 5 {
        let (lsn, h, t, n): (u64, u64, u64, u64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
        );
        model.acked.insert(lsn, h);
        let e = last_n.entry(t).or_insert(0);
        *e = (*e).max(n);
        let _ = run;
    }
}

/// Reopens the log after a kill and checks it against the model: every
/// acknowledged record present and identical, nothing else but payloads
/// the child could have committed; then commits one more.
fn verify_after_kill(d: &Path, model: &mut Model, fsname: &str, iter: u64) {
    let wal = Wal::open(d, opts()).unwrap_or_else(|e| panic!("{fsname} kill {iter}: reopen: {e}"));
    let recs = read_all(&wal);
    let first = recs.first().map_or(wal.recovery().next_lsn.0, |r| r.lsn.0);
    let mut seen = HashSet::new();
    for r in &recs {
        let h = hash(&r.data);
        match model.acked.get(&r.lsn.0) {
            Some(want) => assert_eq!(*want, h, "{fsname} kill {iter}: LSN {} changed", r.lsn),
            None => assert!(
                model.possible.contains(&h),
                "{fsname} kill {iter}: LSN {} holds a record nobody wrote ({} bytes)",
                r.lsn,
                r.data.len()
            ),
        }
        seen.insert(r.lsn.0);
    }
    for lsn in model.acked.keys().filter(|l| **l >= first) {
        assert!(
            seen.contains(lsn),
            "{fsname} kill {iter}: acknowledged LSN {lsn} lost"
        );
    }
    // Commits continue.
    let p = format!("parent {iter}").into_bytes();
    let l = wal.commit(&p).unwrap();
    model.acked.insert(l.0, hash(&p));
    wal.close().unwrap();
}

common::per_fs! {
    /// kill -9 at random moments, at least 50 times on each of ext4, xfs,
    /// btrfs, tmpfs, ext4-fast and xfs-fast (300+ kills per run), the
    /// children taking the sync methods in turn, each method with padded
    /// flushes and without (so the log holds both layouts, one after the
    /// other).
    fn kill_9_keeps_every_acknowledged_record(fs) on [ext4, xfs, btrfs, tmpfs, ext4_fast, xfs_fast] {
        let kills: u64 = std::env::var("FSPACE_WAL_KILLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50);
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut model = Model {
            acked: HashMap::new(),
            possible: HashSet::new(),
        };
        let mut rng = Rng::new(fs.name.len() as u64 * 31 + 7);
        let t0 = Instant::now();
        let mut total_acked = 0;
        for iter in 0..kills {
            let run = 1000 + iter;
            let threads = 1 + rng.below(3);
            let n = SyncMethod::ALL.len();
            let method = SyncMethod::ALL[iter as usize % n];
            let pad = (iter as usize / n).is_multiple_of(2);
            let mut child = spawn_child_with(&d, run, threads, "commit", method, Some(pad));
            let rx = ack_lines(&mut child);
            // Half the kills land during open/recovery or right after.
            let delay = if rng.below(2) == 0 {
                Duration::from_millis(rng.below(15))
            } else {
                Duration::from_millis(10 + rng.below(80))
            };
            std::thread::sleep(delay);
            child.kill().unwrap();
            child.wait().unwrap();
            let mut last_n = HashMap::new();
            for line in &rx {
                absorb(&mut model, run, &line, &mut last_n);
                total_acked += 1;
            }
            for t in 0..threads {
                let upto = last_n.get(&t).map_or(0, |n| n + 1);
                for n in 0..=upto {
                    model.possible.insert(hash(&payload(run, t, n)));
                }
            }
            verify_after_kill(&d, &mut model, &fs.name, iter);
        }
        eprintln!(
            "{}: {kills} kills, {total_acked} lines acknowledged, {:.1} s",
            fs.name,
            t0.elapsed().as_secs_f64()
        );
    }
}

common::per_fs! {
    /// Stale data: segments filled, released, recycled; fewer records written
    /// into them; kill -9: no record of a segment's earlier life comes back.
    fn kill_9_after_recycling_returns_no_stale_record(fs) on [ext4, xfs, btrfs, tmpfs, ext4_fast, xfs_fast] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let mut model = Model {
            acked: HashMap::new(),
            possible: HashSet::new(),
        };
        for iter in 0..3 {
            let run = 2000 + iter;
            let mut child = spawn_child(&d, run, 1, "stale");
            let rx = ack_lines(&mut child);
            let mut last_n = HashMap::new();
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let line = rx
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    .unwrap_or_else(|_| panic!("{}: child never got ready", fs.name));
                if line == "STALE-READY" {
                    break;
                }
                absorb(&mut model, run, &line, &mut last_n);
            }
            child.kill().unwrap();
            child.wait().unwrap();
            for line in &rx {
                absorb(&mut model, run, &line, &mut last_n);
            }
            // Nothing was in flight at the kill (the child was sleeping):
            // every record read back must be an acknowledged one.
            verify_after_kill(&d, &mut model, &fs.name, iter);
        }
        // Everything read back is acknowledged, and recycling happened.
        let wal = Wal::open(&d, opts()).unwrap();
        for r in read_all(&wal) {
            assert_eq!(
                model.acked.get(&r.lsn.0),
                Some(&hash(&r.data)),
                "{}",
                fs.name
            );
        }
        wal.close().unwrap();
    }
}
