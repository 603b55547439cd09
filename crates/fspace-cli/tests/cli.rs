//! The `fspace` binary: output contract, exit codes, bad input, syscalls.

use fspace_test_kit as common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fspace")
}

fn fspace(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("run fspace")
}

use common::output_text as text;

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// Length, content and mtime of a file, to prove it was not touched.
fn snapshot(p: &Path) -> (u64, Vec<u8>, SystemTime) {
    let m = std::fs::metadata(p).unwrap();
    (m.len(), std::fs::read(p).unwrap(), m.modified().unwrap())
}

common::per_fs! {
    fn grow_json_and_human_output_carry_the_report(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let f = dir.path().join("g");
        let fs_ = f.to_str().unwrap();
        let o = fspace(&["grow", "--create", "--json", "--for", "log", fs_, "3MiB"]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        for key in [
            "strategy",
            "fallbacks",
            "old_len",
            "new_len",
            "bytes_written",
            "syscalls",
            "elapsed_ms",
        ] {
            assert!(v.get(key).is_some(), "{}: JSON lacks {key}: {v}", fs.name);
        }
        assert_eq!(v["new_len"], 3 << 20);
        assert_eq!(v["old_len"], 0);
        let o = fspace(&["grow", fs_, "4M"]);
        assert!(o.status.success(), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        for key in [
            "strategy:",
            "fallbacks:",
            "old_len:",
            "new_len:",
            "bytes_written:",
            "syscalls:",
            "elapsed_ms:",
        ] {
            assert!(
                out.contains(key),
                "{}: human output lacks {key}: {out}",
                fs.name
            );
        }
        let o = fspace(&["map", "--json", fs_]);
        assert!(o.status.success(), "{}", text(&o));
        let v = json(&o);
        assert!(v["extents"].is_array());
        for key in [
            "size",
            "allocated",
            "written",
            "unwritten",
            "holes",
            "extents",
        ] {
            assert!(v["summary"].get(key).is_some(), "map summary lacks {key}");
        }
        assert_eq!(v["summary"]["size"], 4 << 20);
        let o = fspace(&["info", "--json", dir.path().to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        let v = json(&o);
        assert!(v["kind"].is_string() && v["capabilities"]["fallocate"]["supported"].is_boolean());
    }
}

common::per_fs! {
    /// `grow --for log` through the CLI leaves no unwritten byte on ext4/xfs.
    fn cli_log_growth_on_ext4_xfs_has_no_unwritten_bytes(fs) on [ext4, xfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let f = dir.path().join("wal");
        std::fs::write(&f, vec![7u8; 5000]).unwrap();
        let o = fspace(&["grow", "--for", "log", "--sync", f.to_str().unwrap(), "8M"]);
        assert!(o.status.success(), "{}", text(&o));
        let v = json(&fspace(&["map", "--sync", "--json", f.to_str().unwrap()]));
        assert_eq!(v["summary"]["unwritten"], 0, "{}: {v}", fs.name);
        assert_eq!(v["summary"]["holes"], 0, "{}: {v}", fs.name);
    }
}

fn strace_writes(args: &[&str], out: &Path) -> u64 {
    let st = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(out)
        .args([
            "-e",
            "trace=write,pwrite64,writev,pwritev,pwritev2,fallocate,ftruncate",
        ])
        .arg(bin())
        .args(args)
        .output()
        .expect("strace");
    assert!(st.status.success(), "{}", text(&st));
    let report = std::fs::read_to_string(out).unwrap();
    // The "total" line of strace -c: "100.00  0.1  12  34  total" -> calls column.
    let total = report
        .lines()
        .find(|l| l.trim_end().ends_with("total"))
        .unwrap_or_else(|| panic!("{report}"));
    let cols: Vec<&str> = total.split_whitespace().collect();
    // Columns: % time, seconds, usecs/call, calls, [errors], "total".
    cols[3].parse().unwrap_or_else(|_| panic!("{report}"))
}

common::per_fs! {
    /// Counted from outside by strace: `grow --for bulk` 256 MiB where fallocate
    /// is missing issues at most 300 write-type syscalls.
    fn bulk_growth_syscalls_counted_by_strace(fs) on [ext4_noextents, sshfs] {
        if Command::new("strace").arg("-V").output().is_err() {
            assert!(!common::require_matrix(), "strace is required in CI");
            common::skipped("strace_syscalls", "all", "strace not installed");
            return;
        }
        let _g = fs.lock();
        let dir = fs.tempdir();
        let f = dir.path().join("bulk");
        let n = strace_writes(
            &[
                "grow",
                "--create",
                "--sync",
                "--for",
                "bulk",
                f.to_str().unwrap(),
                "256M",
            ],
            &dir.path().join("strace.out"),
        );
        eprintln!("{}: {n} write-type syscalls for 256 MiB", fs.name);
        assert!(n <= 300, "{}: {n} write-type syscalls", fs.name);
        assert!(n >= 32, "{}: {n}: strace counted nothing?", fs.name);
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 256 << 20);
    }
}

/// Neither the binary nor the library imports glibc's posix_fallocate.
#[test]
fn no_posix_fallocate_symbol() {
    let nm = |args: &[&str], file: &Path| -> String {
        let o = Command::new("nm")
            .args(args)
            .arg(file)
            .output()
            .expect("nm (binutils) is needed");
        assert!(o.status.success(), "nm {}: {}", file.display(), text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let exe = PathBuf::from(bin());
    let syms = nm(&["-D", "--undefined-only"], &exe);
    assert!(
        syms.contains("malloc"),
        "nm saw no libc imports at all:\n{syms}"
    );
    assert!(
        !syms.contains("posix_fallocate"),
        "fspace imports posix_fallocate:\n{syms}"
    );
    let all = nm(&["--undefined-only"], &exe);
    assert!(!all.contains("posix_fallocate"));
    // The library's rlib(s) built next to the binary.
    let deps = exe.parent().unwrap().join("deps");
    let mut seen = 0;
    for e in std::fs::read_dir(&deps).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        if n.starts_with("libfspace-") && n.ends_with(".rlib") {
            seen += 1;
            let o = Command::new("nm")
                .args(["--undefined-only"])
                .arg(&p)
                .output()
                .unwrap();
            assert!(
                !String::from_utf8_lossy(&o.stdout).contains("posix_fallocate"),
                "{n} needs posix_fallocate"
            );
        }
    }
    assert!(seen > 0, "no libfspace rlib found in {}", deps.display());
}

/// Usage errors exit 2 and leave the file untouched.
#[test]
fn bad_sizes_are_usage_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, b"keep me").unwrap();
    let before = snapshot(&f);
    for (size, word) in [
        ("garbage", "not a number"),
        ("12Q", "not a number"),
        ("-5", "negative"),
        ("-1M", "negative"),
        ("18446744073709551616", "64 bits"),
        ("99999E", "64 bits"),
        ("8E", "largest file"),
        ("1.1K", "whole number of bytes"),
        ("", "empty"),
    ] {
        let o = fspace(&["grow", f.to_str().unwrap(), size]);
        assert_eq!(o.status.code(), Some(2), "{size}: {}", text(&o));
        assert!(text(&o).contains(word), "{size}: {}", text(&o));
        assert_eq!(snapshot(&f), before);
    }
    let o = fspace(&["grow", "--json", f.to_str().unwrap(), "garbage"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json(&o);
    assert_eq!(v["usage"], true, "{v}");
    assert!(v["error"].as_str().unwrap().contains("not a number"), "{v}");
    let o = fspace(&["grow", "--strategy", "magic", f.to_str().unwrap(), "1M"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fspace(&["grow"]);
    assert_eq!(o.status.code(), Some(2));
}

fn expect_failure(args: &[&str], words: &[&str]) -> String {
    let o = Command::new(bin()).args(args).output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {t}");
    for w in words {
        assert!(t.contains(w), "{args:?}: expected {w:?} in: {t}");
    }
    t
}

common::per_fs! {
    /// Operation errors exit 1, name the operation and the path, and change nothing.
    fn bad_targets_fail_cleanly_on_every_filesystem(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let s = |p: &Path| p.to_str().unwrap().to_string();

        // Missing path without --create: error, and nothing is created.
        let missing = d.join("missing");
        expect_failure(
            &["grow", &s(&missing), "1M"],
            &["open(", &s(&missing), "No such file"],
        );
        assert!(!missing.exists());

        // A directory.
        expect_failure(
            &["grow", &s(d), "1M"],
            &[&s(d), "is a directory, not a regular file"],
        );

        // Smaller than the current length.
        let f = d.join("f");
        std::fs::write(&f, vec![3u8; 10_000]).unwrap();
        let before = snapshot(&f);
        expect_failure(
            &["grow", &s(&f), "4K"],
            &["grow(", &s(&f), "smaller than the current length"],
        );
        assert_eq!(snapshot(&f), before);

        // A FIFO: refused without blocking.
        let fifo = d.join("fifo");
        match rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
        ) {
            Ok(()) => {
                expect_failure(
                    &["grow", &s(&fifo), "1M"],
                    &[&s(&fifo), "is a FIFO, not a regular file"],
                );
            }
            Err(e) => common::skipped("bad_targets/fifo", &fs.name, &format!("mkfifo: {e}")),
        }

        // A read-only file (as an unprivileged user when we are root, since
        // root may write any file).
        let ro = d.join("ro");
        std::fs::write(&ro, b"read only").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        let before = snapshot(&ro);
        if common::is_root() {
            if fs.name == "sshfs" {
                common::skipped(
                    "bad_targets/read-only-file",
                    &fs.name,
                    "sshfs is mounted for root only",
                );
            } else {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
                // The file must be reachable (and readable) for uid 65534, or
                // the EACCES below would come from path traversal instead.
                let reach = Command::new("setpriv")
                    .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
                    .arg(&ro)
                    .output()
                    .expect("setpriv");
                if !reach.status.success() {
                    common::skipped(
                        "bad_targets/read-only-file",
                        &fs.name,
                        "not reachable for uid 65534",
                    );
                    return;
                }
                let o = Command::new("setpriv")
                    .args([
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        bin(),
                        "grow",
                        &s(&ro),
                        "1M",
                    ])
                    .output()
                    .expect("setpriv");
                let t = text(&o);
                assert_eq!(o.status.code(), Some(1), "{t}");
                assert!(
                    t.contains("Permission denied") && t.contains(&s(&ro)),
                    "{t}"
                );
            }
        } else {
            expect_failure(&["grow", &s(&ro), "1M"], &["Permission denied", &s(&ro)]);
        }
        assert_eq!(snapshot(&ro), before);

        // An immutable file.
        let imm = d.join("immutable");
        std::fs::write(&imm, b"frozen").unwrap();
        let before = snapshot(&imm);
        let chattr = Command::new("chattr").arg("+i").arg(&imm).output();
        match chattr {
            Ok(o) if o.status.success() => {
                let r = Command::new(bin())
                    .args(["grow", &s(&imm), "1M"])
                    .output()
                    .unwrap();
                let _ = Command::new("chattr").arg("-i").arg(&imm).status();
                let t = text(&r);
                assert_eq!(r.status.code(), Some(1), "{}: {t}", fs.name);
                assert!(
                    t.contains("Operation not permitted") && t.contains("immutable"),
                    "{t}"
                );
                assert_eq!(snapshot(&imm), before);
            }
            Ok(o) => common::skipped(
                "bad_targets/immutable",
                &fs.name,
                &format!("chattr +i: {}", text(&o).trim()),
            ),
            Err(e) => common::skipped("bad_targets/immutable", &fs.name, &format!("chattr: {e}")),
        }

        // A file on a read-only mount (a read-only bind mount of this directory).
        if common::is_root() {
            let target = d.join("ro-mount");
            std::fs::create_dir(&target).unwrap();
            let src = d.join("src");
            std::fs::create_dir(&src).unwrap();
            let inner = src.join("data");
            std::fs::write(&inner, b"on a read-only mount").unwrap();
            if let Some(mounted) = common::bind_mount(&src, &target, true) {
                let f = target.join("data");
                let before = snapshot(&f);
                let r = Command::new(bin())
                    .args(["grow", &s(&f), "1M"])
                    .output()
                    .unwrap();
                let snap = snapshot(&f);
                drop(mounted);
                let t = text(&r);
                assert_eq!(r.status.code(), Some(1), "{t}");
                assert!(
                    t.contains("Read-only file system") && t.contains(&s(&f)),
                    "{t}"
                );
                assert_eq!(snap, before);
            } else {
                let _ = Command::new("umount").arg(&target).status();
                common::skipped("bad_targets/read-only-mount", &fs.name, "bind mount failed");
            }
        } else {
            common::skipped("bad_targets/read-only-mount", &fs.name, "needs root");
        }
    }
}

#[test]
fn dev_null_is_refused() {
    let o = fspace(&["grow", "/dev/null", "1M"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("/dev/null") && text(&o).contains("character device"),
        "{}",
        text(&o)
    );
    let o = fspace(&["map", "/dev/null"]);
    assert_eq!(o.status.code(), Some(1));
    let o = fspace(&["info", "/nonexistent/path"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("/nonexistent/path"));
}

common::per_fs! {
    /// Ctrl-C during a long zero-fill puts the file back (and a created file
    /// never appears).
    fn sigint_during_zero_fill_rolls_back(fs) on [sshfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let f = dir.path().join("base");
        std::fs::write(&f, b"old").unwrap();
        let created = dir.path().join("created");
        for (path, extra) in [(&f, None), (&created, Some("--create"))] {
            let mut cmd = Command::new(bin());
            cmd.args(["grow", "--strategy", "zero-fill"]);
            if let Some(x) = extra {
                cmd.arg(x);
            }
            let mut child = cmd.arg(path).arg("2G").spawn().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(600));
            let pid = rustix::process::Pid::from_child(&child);
            rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
            // An impatient second Ctrl-C must not cut the rollback short.
            std::thread::sleep(std::time::Duration::from_millis(20));
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            let st = child.wait().unwrap();
            assert_eq!(st.code(), Some(130), "{}: {st:?}", fs.name);
        }
        assert_eq!(std::fs::read(&f).unwrap(), b"old");
        assert!(!created.exists());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

/// Hints fit the command: `--create` is not suggested to someone who gave it.
#[test]
fn hints_fit_the_situation() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let missing_dir = dir.path().join("no/such/dir/f");
    let o = fspace(&["grow", "--create", missing_dir.to_str().unwrap(), "1M"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!text(&o).contains("pass --create"), "{}", text(&o));
    let o = fspace(&["map", dir.path().join("nope").to_str().unwrap()]);
    assert!(!text(&o).contains("--create"), "{}", text(&o));
    let o = fspace(&["grow", dir.path().join("nope").to_str().unwrap(), "1M"]);
    assert!(text(&o).contains("pass --create"), "{}", text(&o));
    let o = fspace(&[
        "grow",
        "--no-fallback",
        dir.path().join("nope").to_str().unwrap(),
        "1M",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

use common::listing;

common::per_fs! {
    /// `bench commit` runs every mode in one invocation on every filesystem,
    /// reports each (or says why it cannot run there), and leaves nothing behind.
    fn bench_commit_runs_every_mode_and_cleans_up(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        std::fs::write(dir.path().join("mine"), b"keep").unwrap();
        let before = listing(dir.path());
        let d = dir.path().to_str().unwrap();
        let o = fspace(&[
            "bench",
            "commit",
            "--json",
            "--seconds",
            "0.2",
            "--file-size",
            "4MiB",
            "--segment-size",
            "256KiB",
            "--record",
            "4KiB",
            "--writers",
            "2",
            d,
        ]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        let results = v["results"].as_array().unwrap();
        let modes: Vec<&str> = results
            .iter()
            .map(|r| r["state"].as_str().unwrap())
            .collect();
        assert_eq!(
            modes,
            [
                "appended",
                "sparse",
                "allocated",
                "write-zeroed",
                "zero-filled",
                "recycled",
                "wal"
            ],
            "{}",
            fs.name
        );
        for r in results {
            let unsupported = !r["unsupported"].is_null();
            if unsupported {
                // WRITE_ZEROES depends on the device (refused by this
                // matrix's loop devices); otherwise only fallocate-less
                // filesystems lack a mode, and only allocate.
                if r["state"] == "write-zeroed" {
                    continue;
                }
                assert!(fs.is(&["ext4-noextents", "sshfs"]), "{}: {r}", fs.name);
                assert_eq!(r["state"], "allocated", "{}: {r}", fs.name);
                continue;
            }
            assert!(r["commits"].as_u64().unwrap() > 0, "{}: {r}", fs.name);
            assert!(
                r["latency"]["p99_us"].as_f64().unwrap()
                    >= r["latency"]["p50_us"].as_f64().unwrap()
            );
        }
        let wal = &results[6]["wal"];
        // fdatasync per commit group, or none when each write is durable
        // (the auto choice on ext4 and xfs: O_DIRECT + RWF_DSYNC).
        let method = wal["sync_method"].as_str().unwrap();
        if method.starts_with("fdatasync") {
            assert!(wal["syncs"].as_u64().unwrap() > 0, "{}: {wal}", fs.name);
        } else {
            assert!(fs.is(&["ext4", "xfs", "ext4-noextents"]), "{}: {wal}", fs.name);
            assert!(method.starts_with("direct-dsync (auto"), "{}: {wal}", fs.name);
            assert_eq!(wal["syncs"].as_u64().unwrap(), 0, "{}: {wal}", fs.name);
        }
        assert_eq!(
            listing(dir.path()),
            before,
            "{}: scratch files left",
            fs.name
        );
        // The human table names every mode.
        let o = fspace(&[
            "bench",
            "commit",
            "--seconds",
            "0.1",
            "--mode",
            "wal,append",
            "--file-size",
            "1MiB",
            "--segment-size",
            "256KiB",
            d,
        ]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(
            t.contains("commits/s") && t.contains("wal") && t.contains("append"),
            "{t}"
        );
        assert_eq!(
            listing(dir.path()),
            before,
            "{}: scratch files left",
            fs.name
        );
    }
}

/// Bad input to `bench commit`: clear errors, right exit codes, nothing made.
#[test]
fn bench_commit_bad_input() {
    let fs = &common::all()[0];
    let dir = fs.tempdir();
    let f = dir.path().join("file");
    std::fs::write(&f, b"x").unwrap();
    let missing = dir.path().join("missing");
    let d = dir.path().to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["bench", "commit", missing.to_str().unwrap()],
            1,
            "missing",
        ),
        (
            vec!["bench", "commit", f.to_str().unwrap()],
            1,
            "not a directory",
        ),
        (
            vec!["bench", "commit", "--mode", "fast", d],
            2,
            "unknown mode",
        ),
        (vec!["bench", "commit", "--seconds", "0", d], 2, "seconds"),
        (
            vec!["bench", "commit", "--record", "0", d],
            2,
            "at least 1 byte",
        ),
        (
            vec!["bench", "commit", "--record", "1G", "--mode", "wal", d],
            2,
            "does not fit",
        ),
        (
            vec![
                "bench",
                "commit",
                "--record",
                "1M",
                "--file-size",
                "64K",
                "--mode",
                "append",
                d,
            ],
            2,
            "--file-size",
        ),
        (
            vec![
                "bench",
                "commit",
                "--segment-size",
                "4K",
                "--mode",
                "wal",
                d,
            ],
            2,
            "--segment-size",
        ),
        (
            vec![
                "bench",
                "commit",
                "--file-size",
                "1E",
                "--mode",
                "overwrite",
                d,
            ],
            1,
            "lower --file-size",
        ),
    ];
    for (args, code, word) in cases {
        let o = fspace(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(word), "{args:?}: {}", text(&o));
    }
    assert_eq!(listing(dir.path()), ["file"]);
    assert_eq!(std::fs::read(&f).unwrap(), b"x");
}

/// Ctrl-C during `bench commit`: the modes already measured are printed,
/// scratch files are removed, exit status 130.
#[test]
fn bench_commit_sigint_keeps_finished_modes() {
    let fs = &common::all()[0];
    let dir = fs.tempdir();
    let d = dir.path().to_str().unwrap();
    let child = Command::new(bin())
        .args([
            "bench",
            "commit",
            "--seconds",
            "1",
            "--file-size",
            "8MiB",
            "--segment-size",
            "1MiB",
            "--mode",
            "append,wal,overwrite",
            d,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1600));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("append"),
        "finished mode not shown: {}",
        text(&o)
    );
    assert!(text(&o).contains("interrupted"), "{}", text(&o));
    assert!(
        listing(dir.path()).is_empty(),
        "scratch left: {:?}",
        listing(dir.path())
    );
}

fn write_random(p: &Path, len: usize, seed: u64) {
    std::fs::write(p, common::random_bytes(seed, len)).unwrap();
}

fn temp_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".fspace-tmp-"))
        .collect()
}

common::per_fs! {
    /// `fspace copy` and `fspace dig`: human output, JSON, and the copy's bytes.
    fn copy_and_dig_report_what_they_did(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let src = d.join("image");
        {
            use std::os::unix::fs::FileExt;
            let f = std::fs::File::create(&src).unwrap();
            f.write_all_at(&[5u8; 100_000], 0).unwrap();
            f.write_all_at(&[0u8; 1 << 20], 100_000).unwrap();
            f.write_all_at(&[6u8; 5000], 3 << 20).unwrap();
        }
        let o = fspace(&["copy", "--sparse", "always", &s(&src), &s(&d.join("c1"))]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        for key in [
            "copied:",
            "method:",
            "data:",
            "holes:",
            "allocated:",
            "syscalls:",
        ] {
            assert!(out.contains(key), "{}: no {key} in {out}", fs.name);
        }
        assert!(out.contains("read + sparse write"), "{out}");
        assert_eq!(
            std::fs::read(&src).unwrap(),
            std::fs::read(d.join("c1")).unwrap()
        );
        let o = fspace(&["copy", "--json", &s(&src), &s(&d.join("c2"))]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        for key in [
            "src",
            "dst",
            "len",
            "method",
            "fallbacks",
            "bytes_cloned",
            "bytes_offloaded",
            "bytes_copied",
            "holes",
            "hole_bytes",
            "dst_allocated",
            "syscalls",
            "write_syscalls",
            "elapsed_ms",
        ] {
            assert!(v.get(key).is_some(), "{}: JSON lacks {key}: {v}", fs.name);
        }
        assert_eq!(v["len"], (3 << 20) + 5000);
        assert_eq!(
            std::fs::read(&src).unwrap(),
            std::fs::read(d.join("c2")).unwrap()
        );
        // Into a directory, under the source's name.
        std::fs::create_dir(d.join("into")).unwrap();
        let o = fspace(&["copy", &s(&src), &s(&d.join("into"))]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(d.join("into/image").exists());
        // dig: bytes unchanged; JSON and text. The default copy already made
        // the zero runs holes (the source looks sparse), so dig a copy that
        // wrote them.
        let o = fspace(&["copy", "--force", "--sparse", "never", &s(&src), &s(&d.join("c2"))]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let before = std::fs::read(d.join("c2")).unwrap();
        let o = fspace(&["dig", "--json", &s(&d.join("c2"))]);
        if fs.name == "sshfs" {
            assert_eq!(o.status.code(), Some(1), "{}", text(&o));
            let v = json(&o);
            assert_eq!(v["errno"], 95, "{v}");
            assert!(text(&o).contains("cannot punch holes"), "{}", text(&o));
        } else {
            assert!(o.status.success(), "{}: {}", fs.name, text(&o));
            let v = json(&o);
            for key in [
                "holes_punched",
                "bytes_punched",
                "bytes_freed",
                "allocated_after",
            ] {
                assert!(v.get(key).is_some(), "{}: JSON lacks {key}: {v}", fs.name);
            }
            assert!(
                v["bytes_punched"].as_u64().unwrap() >= 1 << 19,
                "{}: {v}",
                fs.name
            );
            let o = fspace(&["dig", &s(&d.join("c2"))]);
            assert!(o.status.success(), "{}", text(&o));
            assert!(String::from_utf8_lossy(&o.stdout).contains("punched:"));
        }
        assert_eq!(std::fs::read(d.join("c2")).unwrap(), before);
        assert!(temp_names(d).is_empty());
    }
}

common::per_fs! {
    /// Bad input to `fspace copy`: exit 1, the operation and the path named,
    /// nothing created or changed.
    fn copy_bad_input_fails_cleanly(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let src = d.join("src");
        write_random(&src, 300_000, 3);
        let content = std::fs::read(&src).unwrap();
        let out = s(&d.join("out"));
        expect_failure(
            &["copy", &s(&d.join("missing")), &out],
            &["open(", &s(&d.join("missing")), "No such file"],
        );
        expect_failure(
            &["copy", &s(d), &out],
            &["is a directory, not a regular file"],
        );
        expect_failure(
            &["copy", "/dev/null", &out],
            &["/dev/null", "is a character device"],
        );
        if fs.name != "sshfs" {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                d.join("fifo"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
            // A FIFO is read to its end (it used to be refused).
            let fifo = d.join("fifo");
            let writer = std::thread::spawn(move || std::fs::write(fifo, b"fifo bytes"));
            let o = fspace(&["copy", &s(&d.join("fifo")), &out]);
            writer.join().unwrap().unwrap();
            assert!(o.status.success(), "{}", text(&o));
            assert_eq!(std::fs::read(&out).unwrap(), b"fifo bytes");
            std::fs::remove_file(&out).unwrap();
        }
        expect_failure(
            &["copy", "--force", &s(&src), &s(&src)],
            &["is the same file as"],
        );
        if fs.name != "sshfs" {
            std::fs::hard_link(&src, d.join("link")).unwrap();
            expect_failure(
                &["copy", "--force", &s(&src), &s(&d.join("link"))],
                &["is the same file as"],
            );
            std::os::unix::fs::symlink(&src, d.join("sym")).unwrap();
            expect_failure(
                &["copy", "--force", &s(&d.join("sym")), &s(&src)],
                &["is the same file as"],
            );
        }
        std::fs::write(d.join("exists"), b"mine").unwrap();
        let t = expect_failure(
            &["copy", &s(&src), &s(&d.join("exists"))],
            &[
                "copy(",
                &s(&d.join("exists")),
                "already exists; replace it with the force option",
            ],
        );
        assert!(t.contains("fspace: error:"), "{t}");
        assert_eq!(std::fs::read(d.join("exists")).unwrap(), b"mine");
        expect_failure(
            &["copy", &s(&src), &s(&d.join("no/dir/f"))],
            &[
                "create(",
                &s(&d.join("no/dir/f")),
                "No such file",
                "does not exist",
            ],
        );
        // JSON errors are JSON.
        let o = fspace(&["copy", "--json", &s(&src), &s(&d.join("exists"))]);
        assert_eq!(o.status.code(), Some(1));
        let v = json(&o);
        assert_eq!(v["errno"], 17);
        assert_eq!(v["op"], "copy");
        let o = fspace(&[
            "copy",
            "--reflink",
            "always",
            "--sparse",
            "always",
            &s(&src),
            &out,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("cannot apply"), "{}", text(&o));
        // Usage errors exit 2.
        let o = fspace(&["copy", "--sparse", "sometimes", &s(&src), &out]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("unknown sparse mode"), "{}", text(&o));
        // A read-only destination directory, for an unprivileged user.
        if common::is_root() && fs.name != "sshfs" {
            let ro = d.join("ro");
            std::fs::create_dir(&ro).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
            std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o644)).unwrap();
            let o = Command::new("setpriv")
                .args([
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    bin(),
                    "copy",
                ])
                .arg(&src)
                .arg(ro.join("f"))
                .output()
                .expect("setpriv");
            let t = text(&o);
            assert_eq!(o.status.code(), Some(1), "{}: {t}", fs.name);
            assert!(
                t.contains("Permission denied") && t.contains(&s(&ro.join("f"))),
                "{}: {t}",
                fs.name
            );
            assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
        }
        assert_eq!(std::fs::read(&src).unwrap(), content);
        assert!(!d.join("out").exists());
        assert!(temp_names(d).is_empty(), "{}", fs.name);
    }
}

common::per_fs! {
    /// A read-only mount as destination: EROFS, named, nothing created.
    fn copy_to_a_read_only_mount_fails_cleanly(fs) on [ext4] {
        if !common::is_root() {
            common::skipped("copy-read-only-mount", "cwd", "needs root");
            return;
        }
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = dir.path().join("src");
        write_random(&src, 10_000, 4);
        let inner = dir.path().join("inner");
        let target = dir.path().join("ro-mount");
        std::fs::create_dir(&inner).unwrap();
        std::fs::create_dir(&target).unwrap();
        let mounted = common::bind_mount(&inner, &target, true).expect("bind mount");
        let o = Command::new(bin())
            .arg("copy")
            .arg(&src)
            .arg(target.join("f"))
            .output()
            .unwrap();
        drop(mounted);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            t.contains("Read-only file system") && t.contains("ro-mount/f"),
            "{t}"
        );
        assert!(t.contains("mounted read-only"), "{t}");
        assert_eq!(std::fs::read_dir(&inner).unwrap().count(), 0);
    }
}

common::per_fs! {
    /// Ctrl-C during a long copy: exit 130, no destination, no temporary file.
    fn sigint_during_copy_leaves_nothing(t, sh) on pairs [tmpfs_to_sshfs: (tmpfs, sshfs)] {
        let _g = common::lock_pair(t, sh);
        let sdir = t.tempdir();
        let ddir = sh.tempdir();
        let src = sdir.path().join("big");
        write_random(&src, 192 << 20, 8);
        let dst = ddir.path().join("copy");
        let mut child = Command::new(bin())
            .args(["copy", "--sparse", "always"])
            .arg(&src)
            .arg(&dst)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(400));
        assert!(
            child.try_wait().unwrap().is_none(),
            "the copy finished before the signal; make the file larger"
        );
        let pid = rustix::process::Pid::from_child(&child);
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        let st = child.wait().unwrap();
        assert_eq!(st.code(), Some(130), "{st:?}");
        assert!(!dst.exists());
        assert!(temp_names(ddir.path()).is_empty());
    }
}

/// A file name that is not UTF-8 does not turn a done copy into a failure
/// under --json (nor an error report into a panic).
#[test]
fn json_with_a_non_utf8_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir_in(".").unwrap();
    let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
    std::fs::write(&bad, b"data").unwrap();
    let dst = dir.path().join("copy");
    let o = Command::new(bin())
        .args(["copy", "--json"])
        .arg(&bad)
        .arg(&dst)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(json(&o)["src"].as_str().unwrap().contains("bad"));
    let o = Command::new(bin())
        .args(["copy", "--json"])
        .arg(&bad)
        .arg(&dst)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(json(&o)["errno"], 17);
    let o = Command::new(bin())
        .args(["dig", "--json"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{}", text(&o));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("JSON either way");
}

common::per_fs! {
    /// `bench commit --sync-method all` runs each mode once per method, in
    /// order, names the method of each row, gives the ratio to fdatasync of
    /// the same mode, and leaves nothing behind; a bad method is a usage
    /// error.
    fn bench_commit_measures_each_sync_method(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().to_str().unwrap();
        let before = listing(dir.path());
        let o = fspace(&[
            "bench", "commit", "--json", "--seconds", "0.2", "--mode", "recycled,wal",
            "--file-size", "2MiB", "--segment-size", "256KiB", "--sync-method", "all", d,
        ]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        let rows: Vec<(String, String)> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["state"].as_str().unwrap().to_string(), r["sync_method"].as_str().unwrap().to_string()))
            .collect();
        let want: Vec<(String, String)> = ["recycled", "wal"]
            .iter()
            .flat_map(|m| ["fdatasync", "fsync", "dsync", "direct-dsync"].map(|s| (m.to_string(), s.to_string())))
            .collect();
        assert_eq!(rows, want, "{}", fs.name);
        assert_eq!(v["sync_methods"], serde_json::json!(["fdatasync", "fsync", "dsync", "direct-dsync"]));
        for r in v["results"].as_array().unwrap() {
            if !r["unsupported"].is_null() {
                // O_DIRECT refused (FUSE): said so, in the row.
                assert!(fs.is(&["sshfs"]), "{}: {r}", fs.name);
                assert_eq!(r["sync_method"], "direct-dsync", "{}: {r}", fs.name);
                continue;
            }
            assert!(r["commits"].as_u64().unwrap() > 0, "{}: {r}", fs.name);
            assert!(r["vs_fdatasync"].as_f64().unwrap() > 0.0, "{}: {r}", fs.name);
            // Per-write methods sync nothing else (fsync and fdatasync do).
            if r["state"] == "wal" && !["fdatasync", "fsync"].contains(&r["sync_method"].as_str().unwrap()) {
                assert_eq!(r["wal"]["syncs"], 0, "{}: {r}", fs.name);
            }
        }
        assert_eq!(listing(dir.path()), before, "{}: scratch files left", fs.name);
        let o = fspace(&["bench", "commit", "--sync-method", "osync", d]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("unknown sync method"), "{}", text(&o));
    }
}
