//! `fspace wal stat|verify|dump`: read-only looks into a log, live or
//! damaged, with their exit codes.

use fspace_test_kit as common;

use fspace::wal::{Wal, WalOptions};
use fspace::Lsn;
use std::path::Path;
use std::process::{Command, Output};

fn fspace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(args)
        .output()
        .expect("run fspace")
}

use common::output_text as text;

fn payload(n: u64) -> Vec<u8> {
    let len = 20 + (n * 4099 % 5000) as usize;
    (0..len).map(|i| ((i as u64 * 7) ^ n) as u8).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn opts() -> WalOptions {
    WalOptions::default().segment_size(64 << 10)
}

common::per_fs! {
    /// On a live log (its writer open): stat, verify and dump tell the same
    /// story as the writer, in text and JSON, and change nothing.
    fn wal_commands_on_a_live_log(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let ds = d.to_str().unwrap();
        let wal = Wal::open(&d, opts()).unwrap();
        for n in 0..60 {
            wal.commit(&payload(n)).unwrap();
        }
        let next = wal.next_lsn();
        // The preparer idle: only the commands could change the directory now.
        wal.wait_prepared().unwrap();
        let before = common::listing(&d);

        let o = fspace(&["wal", "stat", "--json", ds]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["records"], 60, "{}", fs.name);
        assert_eq!(v["next_lsn"], next.0);
        assert_eq!(v["segments"].as_array().unwrap().len(), wal.segments().len());
        assert_eq!(v["recovery"]["read_only"], true);
        let o = fspace(&["wal", "stat", ds]);
        assert!(o.status.success(), "{}", text(&o));
        let t = String::from_utf8_lossy(&o.stdout);
        for key in ["log:", "records:", "segments:", "WRITTEN", "end:", "pool:"] {
            assert!(t.contains(key), "{}: stat lacks {key}:\n{t}", fs.name);
        }

        let o = fspace(&["wal", "verify", ds]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).starts_with("ok: 60 records"), "{}", text(&o));

        let o = fspace(&["wal", "dump", "--json", "--from", "10", "--limit", "5", ds]);
        assert!(o.status.success(), "{}", text(&o));
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 5);
        for (i, l) in lines.iter().enumerate() {
            let n = 9 + i as u64; // LSN 10 is the 10th record: payload(9)
            assert_eq!(l["lsn"], 10 + i as u64);
            assert_eq!(l["data"], hex(&payload(n)), "{}", fs.name);
            assert_eq!(l["len"], payload(n).len());
        }
        let o = fspace(&["wal", "dump", ds]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 60);

        assert_eq!(common::listing(&d), before, "{}: a wal command changed the log", fs.name);
        wal.commit(b"still writable").unwrap();
        wal.close().unwrap();
    }
}

/// A damaged segment: verify exits 1 naming the file and the offset of the
/// first bad byte (also under --json), and changes nothing.
#[test]
fn verify_names_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("wal");
    let wal = Wal::open(&d, opts()).unwrap();
    for n in 0..60 {
        wal.commit(&payload(n)).unwrap();
    }
    let rec = wal.read_from(Lsn(5)).unwrap().next().unwrap().unwrap();
    let seg = wal
        .segments()
        .into_iter()
        .find(|s| s.seq == rec.segment)
        .unwrap();
    assert!(wal.segments().len() >= 2);
    wal.close().unwrap();
    let mut bytes = std::fs::read(&seg.path).unwrap();
    bytes[rec.offset as usize + 40] ^= 0x01;
    std::fs::write(&seg.path, &bytes).unwrap();
    let before = common::listing(&d);
    let ds = d.to_str().unwrap();
    let o = fspace(&["wal", "verify", ds]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(seg.path.to_str().unwrap()), "{err}");
    assert!(err.contains(&rec.offset.to_string()), "{err}");
    let o = fspace(&["wal", "verify", "--json", ds]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("offset"), "{v}");
    assert_eq!(common::listing(&d), before);
}

#[test]
fn bad_input_to_wal_commands() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let o = fspace(&["wal", "stat", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("missing"), "{err}");
    assert!(!missing.exists());
    // A directory that holds no log.
    let o = fspace(&["wal", "verify", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no log"),
        "{}",
        text(&o)
    );
    let o = fspace(&["wal", "dump", "--from", "abc", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = fspace(&["wal", "frobnicate"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let _ = Path::new("");
}
