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
use common::unwrapped;

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

/// A damaged segment: verify exits 1 naming the file and the offset where
/// the damaged record starts (a CRC cannot say which byte; also under
/// --json, as fields), and changes nothing.
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
    assert_eq!(v["kind"], "corrupt");
    assert_eq!(v["damage"]["offset"], rec.offset, "{v}");
    assert_eq!(v["damage"]["expected_lsn"], 5, "{v}");
    assert_eq!(v["damage"]["segment"], seg.path.to_str().unwrap());
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
    // Every command that reads up to damage refuses the same way: a
    // directory without a log, a file, each naming the operation and path.
    let f = dir.path().join("file");
    std::fs::write(&f, b"x").unwrap();
    for args in [
        vec!["wal", "verify", "--strict"],
        vec!["wal", "dump"],
        vec!["wal", "dump", "--json"],
    ] {
        let run = |p: &Path, words: &[&str]| {
            let mut a = args.clone();
            a.push(p.to_str().unwrap());
            let o = fspace(&a);
            assert_eq!(o.status.code(), Some(1), "{a:?}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            for w in words {
                assert!(
                    unwrapped(&err).contains(&unwrapped(w)),
                    "{a:?}: no {w:?} in {err}"
                );
            }
        };
        run(dir.path(), &["open log(", "holds no log"]);
        run(&f, &["open log(", f.to_str().unwrap(), "not a directory"]);
    }
    std::fs::remove_file(&f).unwrap();
    let o = fspace(&["wal", "dump", "--from", "abc", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = fspace(&["wal", "frobnicate"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let _ = Path::new("");
}

/// A closed log of 60 records in 64 KiB segments (at least 3), and where
/// each record is: (LSN, segment, offset, payload length).
fn three_segments(d: &Path) -> Vec<(u64, u64, u64, usize)> {
    let wal = Wal::open(d, opts()).unwrap();
    for n in 0..60 {
        wal.commit(&payload(n)).unwrap();
    }
    let at = wal
        .read_from(Lsn(0))
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (r.lsn.0, r.segment, r.offset, r.data.len())
        })
        .collect();
    assert!(wal.segments().len() >= 3);
    wal.close().unwrap();
    at
}

fn flip(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 0xFF;
    std::fs::write(path, &bytes).unwrap();
}

fn lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

common::per_fs! {
    /// A byte flipped in a record in the middle of segment 2 of 3: dump
    /// prints exactly the records before it (text and JSON lines), then
    /// fails (exit 1) naming the segment file, the record's offset, the LSN
    /// and the reason; with --json the last line is the error with those
    /// as fields. verify fails the same way.
    fn dump_prints_every_record_up_to_mid_log_damage(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let ds = d.to_str().unwrap();
        let at = three_segments(&d);
        let in2: Vec<_> = at.iter().filter(|r| r.1 == 2).collect();
        let (bad, _, off, len) = *in2[in2.len() / 2];
        let seg = d.join("000000000002.seg");
        flip(&seg, off + 16 + len as u64 / 2);
        let before = common::listing(&d);
        let segs = seg.to_str().unwrap();
        let end = off + (16 + len as u64).div_ceil(16) * 16;

        let o = fspace(&["wal", "dump", ds]);
        assert_eq!(o.status.code(), Some(1), "{}: {}", fs.name, text(&o));
        let l = lines(&o);
        assert_eq!(l.len() as u64, bad - 1, "{}: {}", fs.name, text(&o));
        for (i, line) in l.iter().enumerate() {
            let lsn: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            assert_eq!(lsn, i as u64 + 1, "{}: {line}", fs.name);
        }
        // The error names the whole path, wrapped to 80 columns.
        let err = String::from_utf8_lossy(&o.stderr);
        for w in [
            format!("dump({segs}, offset {off})"),
            format!("record checksum mismatch at LSN {bad}"),
            format!("bytes {off}..{end}"),
        ] {
            assert!(unwrapped(&err).contains(&unwrapped(&w)), "{}: no {w:?} in {err}", fs.name);
        }

        let o = fspace(&["wal", "dump", "--json", ds]);
        assert_eq!(o.status.code(), Some(1), "{}: {}", fs.name, text(&o));
        let l = lines(&o);
        assert_eq!(l.len() as u64, bad, "{}: records and the error", fs.name);
        for (i, line) in l[..l.len() - 1].iter().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["lsn"], i as u64 + 1);
            assert_eq!(v["data"], hex(&payload(i as u64)), "{}", fs.name);
        }
        let e: serde_json::Value = serde_json::from_str(l.last().unwrap()).unwrap();
        check_damage(&e, segs, off, end, bad);
        assert_eq!(e["op"], "dump");

        // Records before the damage, asked for: all there, exit 0.
        let o = fspace(&["wal", "dump", "--limit", "3", ds]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(lines(&o).len(), 3);
        // From past the damage: nothing to print, the damage is the error.
        let from = (bad + 1).to_string();
        let o = fspace(&["wal", "dump", "--from", &from, ds]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(o.stdout.is_empty());

        let o = fspace(&["wal", "verify", "--json", ds]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        check_damage(&e, segs, off, end, bad);
        assert_eq!(e["op"], "verify");
        assert_eq!(common::listing(&d), before, "{}: a wal command changed the log", fs.name);
    }
}

/// The JSON error of damage before the log's end carries it as fields.
fn check_damage(e: &serde_json::Value, seg: &str, off: u64, end: u64, lsn: u64) {
    assert_eq!(e["kind"], "corrupt", "{e}");
    assert_eq!(e["errno"], 117);
    assert_eq!(e["path"], seg);
    let d = &e["damage"];
    assert_eq!(d["segment"], seg, "{e}");
    assert_eq!(d["seq"], 2);
    assert_eq!(d["offset"], off);
    assert_eq!(d["record_end"], end);
    assert_eq!(d["expected_lsn"], lsn);
    assert_eq!(d["found_lsn"], lsn);
    assert_eq!(d["reason"], "checksum-mismatch");
    assert_eq!(d["in_last_segment"], false);
    assert!(d["message"]
        .as_str()
        .unwrap()
        .contains("so this segment was complete"));
}

common::per_fs! {
    /// How the log ends decides `verify --strict`: a log that ends in zeros
    /// exits 0; one whose last record fails its checksum says so (a torn
    /// write or damage, which it cannot tell) and exits 0 without --strict
    /// and 3 with it; the JSON gives the end's fields.
    fn verify_strict_on_how_the_log_ends(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().join("wal");
        let ds = d.to_str().unwrap();
        let at = three_segments(&d);
        let (last, seq, off, len) = *at.last().unwrap();

        let o = fspace(&["wal", "verify", "--strict", ds]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", fs.name, text(&o));
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(t.starts_with(&format!("ok: {last} records")), "{t}");
        assert!(!t.contains("warning"), "{t}");
        let o = fspace(&["wal", "verify", "--strict", "--json", ds]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((&v["ok"], &v["clean_end"], &v["strict"]), (&true.into(), &true.into(), &true.into()), "{v}");
        assert_eq!(v["end"]["reason"], "zeros", "{}: {v}", fs.name);
        assert_eq!(v["end"]["expected_lsn"], last + 1);
        assert_eq!(v["end"]["in_last_segment"], true);
        assert!(v["warning"].is_null());

        let seg = d.join(format!("{seq:012}.seg"));
        flip(&seg, off + 16 + len as u64 / 2);
        let segs = seg.to_str().unwrap();
        let end = off + (16 + len as u64).div_ceil(16) * 16;
        let o = fspace(&["wal", "verify", ds]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", fs.name, text(&o));
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(t.starts_with(&format!("ok: {} records", last - 1)), "{t}");
        // The "ok:" sentence, wrapped, up to the "end:" line.
        let first = t.split("\nend:").next().unwrap();
        assert!(first.contains("warning"), "a bare ok: {first}");
        // The text names the segment by its name in the log's directory.
        let name = format!("{seq:012}.seg");
        for w in [
            "the log ends in a record that fails its checksum".to_string(),
            format!("bytes {off}..{end} of {name}"),
            format!("where LSN {last} was expected"),
            "torn".into(),
            "acknowledged record".into(),
            "cannot tell".into(),
            "--strict exits 3".into(),
        ] {
            assert!(unwrapped(&t).contains(&unwrapped(&w)), "{}: no {w:?} in {t}", fs.name);
        }
        let o = fspace(&["wal", "verify", "--strict", ds]);
        assert_eq!(o.status.code(), Some(3), "{}: {}", fs.name, text(&o));
        let o = fspace(&["wal", "verify", "--strict", "--json", ds]);
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((&v["ok"], &v["clean_end"]), (&false.into(), &false.into()), "{v}");
        let e = &v["end"];
        assert_eq!(e["reason"], "checksum-mismatch", "{v}");
        assert_eq!((&e["segment"], &e["seq"]), (&segs.into(), &seq.into()));
        assert_eq!((&e["offset"], &e["record_end"]), (&off.into(), &end.into()));
        assert_eq!((&e["expected_lsn"], &e["found_lsn"]), (&last.into(), &last.into()));
        assert_eq!(e["in_last_segment"], true);
        assert!(v["warning"].as_str().unwrap().contains("cannot tell"));
        // Without --strict the verdict is ok, the fact the same.
        let o = fspace(&["wal", "verify", "--json", ds]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((&v["ok"], &v["clean_end"]), (&true.into(), &false.into()), "{v}");
        // dump prints every record before it, and says how the log ends.
        let o = fspace(&["wal", "dump", ds]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(lines(&o).len() as u64, last - 1);
        assert!(String::from_utf8_lossy(&o.stderr).contains("fails its checksum"), "{}", text(&o));
    }
}

/// A log written in format 1 (`crates/fspace-tests/tests/data/wal-v1`, by the
/// last format-1 build): `wal stat` names the format of its segments,
/// `verify --strict` accepts it, `dump` prints its records (LSN 15 to 60);
/// after a writable open, the new segment is format 2 and stat says so.
#[test]
fn wal_commands_on_a_format_1_log() {
    let fs = &common::all()[0];
    let _g = fs.lock();
    let dir = fs.tempdir();
    let d = dir.path().join("wal");
    std::fs::create_dir(&d).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fspace-tests/tests/data/wal-v1");
    for e in std::fs::read_dir(&fixture).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    let ds = d.to_str().unwrap();
    let o = fspace(&["wal", "stat", ds]);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("format:     version 1 in segments 2-5; this build writes version 2"),
        "{t}"
    );
    let o = fspace(&["wal", "stat", "--json", ds]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let formats: Vec<u64> = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["format"].as_u64().unwrap())
        .collect();
    assert_eq!(formats, vec![1, 1, 1, 1]);
    let o = fspace(&["wal", "verify", "--strict", ds]);
    assert!(o.status.success(), "{}", text(&o));
    let o = fspace(&["wal", "dump", "--json", ds]);
    assert!(o.status.success(), "{}", text(&o));
    let l = lines(&o);
    assert_eq!(l.len(), 46, "{}", text(&o));
    let first: serde_json::Value = serde_json::from_str(&l[0]).unwrap();
    let last: serde_json::Value = serde_json::from_str(&l[45]).unwrap();
    assert_eq!(
        (first["lsn"].as_u64(), last["lsn"].as_u64()),
        (Some(15), Some(60))
    );

    let wal = Wal::open(&d, opts()).unwrap();
    wal.commit(b"format 2").unwrap();
    wal.close().unwrap();
    let o = fspace(&["wal", "stat", ds]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("version 1 in segments 2-5, version 2 in segment 6"),
        "{t}"
    );
    let o = fspace(&["wal", "dump", ds]);
    assert_eq!(lines(&o).len(), 47, "{}", text(&o));
}
