//! Every line `fspace` prints fits 80 columns, on stdout and on stderr
//! (errors, hints, warnings, progress), paths included: each command's
//! text output on each filesystem of the matrix, run in a directory whose
//! path alone is wider than a line, so that a path printed whole would
//! fail. JSON is not text output and is not checked here. The probe's
//! own outputs (a quick probe with every engine, saved, with its report
//! and metrics; the comparisons with the save; its errors) are checked
//! the same way where they are made anyway, in `probe_prometheus.rs`:
//! each costs half a minute per filesystem.

mod probe_common;
use fspace_test_kit as common;

use fspace::wal::{Wal, WalOptions};
use fspace::Lsn;
use probe_common::{assert_fits, bin, text, COLUMNS, LONG};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `fspace args` with the state directory `state`, checks that every
/// line fits and that it exits `want` (`None`: 0 or a failure, as the
/// filesystem or the machine decides); returns the output.
fn run(fs: &str, state: &Path, args: &[&str], want: Option<i32>) -> Output {
    let o = Command::new(bin())
        .args(args)
        .env("FSPACE_STATE_DIR", state)
        .output()
        .expect("run fspace");
    match want {
        Some(code) => assert_eq!(o.status.code(), Some(code), "{fs}: {args:?}: {}", text(&o)),
        // Not a usage error.
        None => assert_ne!(o.status.code(), Some(2), "{fs}: {args:?}: {}", text(&o)),
    }
    assert_fits(fs, &format!("{args:?}"), &o, args.contains(&"--json"));
    o
}

/// Runs `fspace args`; the command may succeed or fail (what it can do
/// depends on the filesystem), its lines must fit either way.
fn run_any(fs: &str, state: &Path, args: &[&str]) -> Output {
    run(fs, state, args, None)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A closed log of 60 records in 64 KiB segments (at least 3) in `d`,
/// and where each record is: (segment, offset, payload length).
fn log(d: &Path) -> Vec<(u64, u64, usize)> {
    let wal = Wal::open(d, WalOptions::default().segment_size(64 << 10)).expect("open log");
    for n in 0..60u64 {
        let len = 20 + (n * 4099 % 5000) as usize;
        let data: Vec<u8> = (0..len).map(|i| ((i as u64 * 7) ^ n) as u8).collect();
        wal.commit(&data).expect("commit");
    }
    let at = wal
        .read_from(Lsn(0))
        .expect("read")
        .map(|r| {
            let r = r.expect("record");
            (r.segment, r.offset, r.data.len())
        })
        .collect();
    assert!(wal.segments().len() >= 3);
    wal.close().expect("close");
    at
}

/// A copy of the log in `from` at `to`, with a byte flipped in the middle
/// of the record in the middle of segment `seq`.
fn damaged(from: &Path, to: &Path, at: &[(u64, u64, usize)], seq: u64) {
    std::fs::create_dir(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
    let in_seg: Vec<_> = at.iter().filter(|r| r.0 == seq).collect();
    let (_, off, len) = *in_seg[in_seg.len() / 2];
    let seg = to.join(format!("{seq:012}.seg"));
    let mut bytes = std::fs::read(&seg).expect("read segment");
    bytes[(off + 16 + len as u64 / 2) as usize] ^= 0xFF;
    std::fs::write(&seg, &bytes).expect("write segment");
}

common::per_fs! {
    /// info, grow, map, copy, dig, bench commit, crashtest, and wal stat,
    /// verify and dump on a healthy log, on one damaged before its end and on one
    /// that ends in a damaged record; with their errors and hints.
    fn every_command_fits_80_columns(fs) {
        let _g = fs.lock();
        let top = fs.tempdir();
        let dir = top.path().join(LONG);
        std::fs::create_dir(&dir).expect("mkdir");
        let state = tempfile::tempdir().expect("state dir");
        let st = state.path();
        let n = fs.name.as_str();
        let p = |name: &str| dir.join(name);
        assert!(s(&p("x")).len() > COLUMNS, "the test's paths must be wider than a line");

        run(n, st, &["info", s(&dir)], Some(0));
        run(n, st, &["grow", "--create", s(&p("bulk.img")), "16M"], Some(0));
        run(n, st, &["grow", "--create", "--for", "log", s(&p("log.img")), "16M"], Some(0));
        run(n, st, &["grow", "--create", "--sync", "--strategy", "zero-fill", s(&p("zf.img")), "4M"], Some(0));
        run(n, st, &["info", s(&p("log.img"))], Some(0));
        run_any(n, st, &["grow", "--create", "--untorn", "16K", s(&p("untorn.img")), "1M"]);
        // Refused on every filesystem of the matrix (no device there has
        // unmap write-zeroes): the error names the whole path.
        run_any(n, st, &["grow", "--create", "--strategy", "write-zeroes", "--no-fallback", s(&p("wz.img")), "16M"]);
        run(n, st, &["grow", s(&p("missing.img")), "1M"], Some(1));
        run(n, st, &["map", s(&p("log.img"))], Some(0));
        run(n, st, &["map", "--summary", s(&p("bulk.img"))], Some(0));
        if p("untorn.img").exists() {
            run_any(n, st, &["map", "--untorn", "16K", s(&p("untorn.img"))]);
        }

        // A sparse source: 3 MB of data, then a hole to 8 MiB.
        let src = p("src.bin");
        std::fs::write(&src, common::random_bytes(7, 3_000_000)).expect("write");
        std::fs::OpenOptions::new().write(true).open(&src).and_then(|f| f.set_len(8 << 20)).expect("truncate");
        run(n, st, &["copy", s(&src), s(&p("copy.bin"))], Some(0));
        run(n, st, &["copy", "--reflink", "never", "--sparse", "always", "--force", s(&src), s(&p("copy.bin"))], Some(0));
        run(n, st, &["copy", s(&p("missing.bin")), s(&p("nowhere.bin"))], Some(1));
        run_any(n, st, &["dig", s(&p("copy.bin"))]);

        run(n, st, &["bench", "commit", "--seconds", "0.2", "--file-size", "4M", s(&dir)], Some(0));
        run(n, st, &["bench", "commit", "--seconds", "0.2", "--file-size", "4M", "--mode", "wal,write-zeroed,recycled",
            "--sync-method", "fdatasync,fsync,dsync,direct-dsync", "--keep", s(&dir)], Some(0));
        // The logs it kept, as its text tells how to check them.
        let kept = p("fspace-bench-wal-fdatasync");
        assert!(kept.is_dir(), "{n}: no {}", kept.display());
        run(n, st, &["wal", "verify", s(&kept)], Some(0));

        // Logs: healthy, damaged in segment 2 of 3, damaged in its last
        // record (an unclean end, with records that verify after it).
        let healthy = p("wal");
        let at = log(&healthy);
        let last = at.iter().map(|r| r.0).max().expect("segments");
        let mid = p("wal-damaged");
        damaged(&healthy, &mid, &at, 2);
        let end = p("wal-unclean");
        damaged(&healthy, &end, &at, last);
        for d in [&healthy, &end] {
            run(n, st, &["wal", "stat", s(d)], Some(0));
            run(n, st, &["wal", "verify", s(d)], Some(0));
            run(n, st, &["wal", "dump", s(d)], Some(0));
        }
        run(n, st, &["wal", "verify", "--strict", s(&end)], Some(3));
        run(n, st, &["wal", "stat", s(&mid)], Some(1));
        run(n, st, &["wal", "verify", s(&mid)], Some(1));
        run(n, st, &["wal", "dump", s(&mid)], Some(1));
        run(n, st, &["wal", "stat", s(&p("no-log-here"))], Some(1));

        // crashtest: a rename without any fsync, recorded, linted, checked
        // (a bug: exit 1 from lint and check), listed; and its refusal of
        // a trace inside the root.
        let root = p("crash-root");
        std::fs::create_dir(&root).expect("mkdir");
        let script = format!("printf new > '{0}/data.tmp' && mv '{0}/data.tmp' '{0}/data' && echo ok", s(&root));
        let trace = p("crash.trace");
        run(n, st, &["crashtest", "record", "--root", s(&root), "--trace", s(&trace), "--", "sh", "-c", &script], Some(0));
        run(n, st, &["crashtest", "lint", s(&trace)], Some(1));
        run(n, st, &["crashtest", "check", "-q", s(&trace), "--", "sh", "-c", "test -s data || ! grep -q ok \"$FSPACE_CRASH_ACKS\""], Some(1));
        run(n, st, &["crashtest", "show", "--all", s(&trace)], Some(0));
        run(n, st, &["crashtest", "record", "--root", s(&root), "--trace", s(&root.join("t")), "--", "true"], Some(2));

        // Usage errors, the library's validation among them.
        for args in [
            vec!["grow", "--no-fallback", s(&p("bulk.img")), "1M"],
            vec!["bench", "commit", "--segment-size", "1000", s(&dir)],
            vec!["copy", "--reflink", "always", "--sparse", "always", s(&src), s(&p("c"))],
            vec!["probe", "--threshold", "0", s(&dir)],
            vec!["wal", "dump", "--from", "x", s(&healthy)],
            vec!["map", "--json"],
        ] {
            run(n, st, &args, Some(2));
        }
    }
}
