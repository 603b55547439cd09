//! fspace's own log, recorded by `fspace crashtest record` and checked in
//! every crash state of every model: no false alarm. The program and the
//! checker are this test binary, spawned (`crashtest_wal_program`,
//! `crashtest_wal_checker`): a dynamically linked Rust program whose I/O
//! goes through rustix's raw system calls, which the recorder catches.

use fspace::wal::{Lsn, Wal, WalOptions, WalView};
use fspace_test_kit as common;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const RECORDS: u64 = 120;

/// The payload of the record with LSN `lsn`: its length and bytes follow
/// from the LSN, so the checker can tell a right record from a wrong one.
fn payload(lsn: u64) -> Vec<u8> {
    let len = 20 + (lsn * 4099 % 3000) as usize;
    (0..len).map(|j| ((j as u64 * 7) ^ lsn) as u8).collect()
}

/// The recorded program: commits RECORDS records into `$CRASHTEST_WAL_DIR`
/// (64 KiB segments, so that it prepares and opens several) and prints
/// "committed LSN" after each commit returned.
#[test]
#[ignore = "the program crashtest_wal records; runs when spawned"]
fn crashtest_wal_program() {
    let Some(dir) = std::env::var_os("CRASHTEST_WAL_DIR") else {
        return;
    };
    let mut opts = WalOptions::default().segment_size(64 << 10);
    if let Ok(m) = std::env::var("CRASHTEST_WAL_SYNC") {
        opts = opts.sync_method(Some(m.parse().unwrap()));
    }
    let wal = Wal::open(&dir, opts).unwrap();
    for _ in 0..RECORDS {
        let next = wal.next_lsn().0;
        let lsn = wal.commit(&payload(next)).unwrap();
        assert_eq!(lsn.0, next);
        println!("committed {}", lsn.0);
    }
    wal.close().unwrap();
}

/// The checker, run in a crash state: the log must open for writing
/// (recovery), then hold a run of records from its first LSN, each with the
/// right payload, covering every acknowledged LSN. Exit 0, 3 when an
/// acknowledged record is missing, 1 for anything else.
#[test]
#[ignore = "the checker of crashtest_wal; runs when spawned"]
fn crashtest_wal_checker() {
    let Some(state) = std::env::var_os("FSPACE_CRASH_STATE") else {
        return;
    };
    let acks = std::fs::read_to_string(std::env::var_os("FSPACE_CRASH_ACKS").unwrap()).unwrap();
    let acked = acks
        .lines()
        .filter_map(|l| l.strip_prefix("committed "))
        .filter_map(|n| n.trim().parse::<u64>().ok())
        .max();
    let dir = Path::new(&state).join("log");
    let fail = |code: i32, why: String| -> ! {
        println!("{why}");
        std::process::exit(code)
    };
    if !dir.exists() {
        if acked.is_some() {
            fail(3, "the log directory is missing".into());
        }
        std::process::exit(0);
    }
    match Wal::open(&dir, WalOptions::default().segment_size(64 << 10)) {
        Ok(w) => {
            if let Err(e) = w.close() {
                fail(1, format!("close after recovery: {e}"));
            }
        }
        Err(e) => fail(1, format!("recovery failed: {e}")),
    }
    let view = WalView::open(&dir).unwrap_or_else(|e| fail(1, format!("view: {e}")));
    let first = view.first_lsn().0;
    let mut last = None;
    for (i, r) in view
        .read_from(Lsn(first))
        .unwrap_or_else(|e| fail(1, format!("read: {e}")))
        .enumerate()
    {
        let r = r.unwrap_or_else(|e| fail(1, format!("record {i}: {e}")));
        if r.lsn.0 != first + i as u64 {
            fail(
                1,
                format!("LSN {} where {} was expected", r.lsn.0, first + i as u64),
            );
        }
        if r.data != payload(r.lsn.0) {
            fail(1, format!("record {} holds the wrong bytes", r.lsn.0));
        }
        last = Some(r.lsn.0);
    }
    if let Some(a) = acked {
        if last.is_none_or(|l| l < a) || first > a {
            fail(
                3,
                format!(
                    "LSN {a} acknowledged; the log holds {first}..={}",
                    last.map_or("none".into(), |l| l.to_string())
                ),
            );
        }
    }
}

/// Records the program above on ext4 and checks at least 1,000 states
/// under the four models: none fails.
#[test]
fn crashtest_fspace_log_has_no_false_alarm() {
    let Some(fs) = common::fs_or_skip(
        "crashtest-wal",
        "ext4",
        "the log is recorded on ext4 (the models, not the filesystem recorded on, decide the states)",
    ) else {
        return;
    };
    let me = std::env::current_exe().unwrap();
    let fspace = env!("CARGO_BIN_EXE_fspace");
    let mut distinct = 0;
    // The default (direct, O_DSYNC writes on ext4) and buffered writes with
    // fdatasync, which leave more pending at each point.
    for sync in ["default", "fdatasync"] {
        let dir = fs.tempdir();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let trace = dir.path().join("t");
        let mut record = Command::new(fspace);
        record
            .args(["crashtest", "record", "-q", "--root"])
            .arg(&root)
            .arg("--trace")
            .arg(&trace)
            .arg("--")
            .arg(&me)
            .args([
                "--ignored",
                "--exact",
                "crashtest_wal_program",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CRASHTEST_WAL_DIR", root.join("log"));
        if sync != "default" {
            record.env("CRASHTEST_WAL_SYNC", sync);
        }
        let o = record.output().unwrap();
        let out = common::output_text(&o);
        assert!(o.status.success(), "{sync}: {out}");
        assert!(
            out.contains(&format!("committed {RECORDS}")),
            "{sync}: {out}"
        );
        let show = Command::new(fspace)
            .args(["crashtest", "show", "--json"])
            .arg(&trace)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&show.stdout).unwrap();
        let ops = v["ops"].as_array().unwrap();
        let count = |k: &str| ops.iter().filter(|o| o["op"] == k).count();
        // Its writes go through rustix's raw system calls: recorded only
        // because the recorder catches those.
        assert!(
            count("write") >= RECORDS as usize,
            "{sync}: the log's writes were not recorded: {} writes in {} ops",
            count("write"),
            ops.len()
        );
        let o = Command::new(fspace)
            .args(["crashtest", "check", "-q", "--json"])
            .arg(&trace)
            .arg("--")
            .arg(&me)
            .args([
                "--ignored",
                "--exact",
                "crashtest_wal_checker",
                "--nocapture",
                "--test-threads=1",
            ])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&o)));
        eprintln!(
            "fspace log ({sync}): {} ops, {} states, {} distinct, {:.1} s",
            ops.len(),
            v["states"],
            v["distinct"],
            v["seconds"].as_f64().unwrap()
        );
        assert_eq!(o.status.code(), Some(0), "{sync}: {:#}", v["stories"]);
        distinct += v["distinct"].as_u64().unwrap();
    }
    assert!(distinct >= 1000, "{distinct} distinct states checked");
}
