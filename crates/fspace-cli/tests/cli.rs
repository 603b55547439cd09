//! The `fspace` binary: output contract, exit codes, bad input, syscalls
//! of `grow` and the other commands. (`copy` and `dig`: cli_copy.rs;
//! `bench commit`: cli_bench.rs.)

mod cli_common;
use fspace_test_kit as common;

use cli_common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

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
        assert!(has(&text(&o), word), "{size}: {}", text(&o));
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

/// Every usage error prints the usage of the subcommand it is about (not
/// `Usage: fspace <COMMAND>`), exits 2 and changes nothing: clap's own
/// errors, the values clap leaves without a usage (`--from x`), and the
/// option conflicts each command finds after parsing.
#[test]
fn usage_errors_show_the_subcommands_usage() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path();
    let f = d.join("f");
    std::fs::write(&f, b"keep me").unwrap();
    let copy = d.join("copy");
    let fs_ = f.to_str().unwrap();
    let ds = d.to_str().unwrap();
    let cs = copy.to_str().unwrap();
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = (snapshot(&f), listing());
    for (args, usage, words) in [
        (
            vec!["grow", "--no-fallback", fs_, "1M"],
            "Usage: fspace grow ",
            &["--no-fallback needs an explicit --strategy"][..],
        ),
        (
            vec!["grow", "--no-fallback"],
            "Usage: fspace grow ",
            &["<FILE>", "<SIZE>"][..],
        ),
        (
            vec!["grow", fs_, "garbage"],
            "Usage: fspace grow ",
            &["not a number"][..],
        ),
        (
            vec!["bench", "commit", "--segment-size", "1000", ds],
            "Usage: fspace bench commit ",
            &["--segment-size", "64 KiB"][..],
        ),
        (
            vec!["bench", "commit", "--segment-size", "1000"],
            "Usage: fspace bench commit ",
            &["<DIR>"][..],
        ),
        (vec!["map", "--json"], "Usage: fspace map ", &["<FILE>"][..]),
        (
            vec!["wal", "dump", "--from", "x", ds],
            "Usage: fspace wal dump ",
            &["--from <LSN>", "expected a whole number"][..],
        ),
        (
            vec!["wal", "dump", "--limit", "many", ds],
            "Usage: fspace wal dump ",
            &["--limit <COUNT>", "expected a whole number"][..],
        ),
        (
            vec!["copy", "--sparse", "always", "--keep-allocation", fs_, cs],
            "Usage: fspace copy ",
            &["keep allocation"][..],
        ),
        (
            vec!["probe", "--threshold", "5", ds],
            "Usage: fspace probe ",
            &["--compare-saved"][..],
        ),
    ] {
        let o = fspace(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(err.contains(usage), "{args:?}: no {usage:?} in:\n{err}");
        assert!(!err.contains("Usage: fspace <COMMAND>"), "{args:?}:\n{err}");
        for w in words {
            assert!(err.contains(w), "{args:?}: no {w:?} in:\n{err}");
        }
        assert!(!err.contains("invalid digit"), "{args:?}:\n{err}");
        // The messages of this change fit 80 columns (older ones are
        // checked by the width test).
        if args[0] == "wal" {
            assert!(
                err.lines().all(|l| l.chars().count() <= 80),
                "{args:?}:\n{err}"
            );
        }
        assert_eq!(
            (snapshot(&f), listing()),
            before,
            "{args:?} changed something"
        );
        // With --json, the same error as a JSON object on stdout, all of it.
        let mut with_json = args.clone();
        with_json.insert(1, "--json");
        if args[0] == "bench" || args[0] == "wal" {
            with_json.swap(1, 2);
        }
        let o = fspace(&with_json);
        assert_eq!(o.status.code(), Some(2), "{with_json:?}: {}", text(&o));
        let v = json(&o);
        assert_eq!(v["usage"], true, "{with_json:?}: {v}");
        let msg = v["error"].as_str().unwrap();
        for w in words {
            assert!(msg.contains(w), "{with_json:?}: no {w:?} in {v}");
        }
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(usage),
            "{with_json:?}: {}",
            text(&o)
        );
        assert_eq!(
            (snapshot(&f), listing()),
            before,
            "{with_json:?} changed something"
        );
    }
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
                    has(&t, "Permission denied") && has(&t, &s(&ro)),
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
                    has(&t, "Operation not permitted") && has(&t, "immutable"),
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
                    has(&t, "Read-only file system") && has(&t, &s(&f)),
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
        has(&text(&o), "/dev/null") && has(&text(&o), "character device"),
        "{}",
        text(&o)
    );
    let o = fspace(&["map", "/dev/null"]);
    assert_eq!(o.status.code(), Some(1));
    let o = fspace(&["info", "/nonexistent/path"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(has(&text(&o), "/nonexistent/path"));
}

/// A directory whose name is not UTF-8: `info --json` and `grow --json`
/// still print their JSON (the name with U+FFFD where the bytes were not
/// text), never a serialization failure after the work was done.
#[test]
fn non_utf8_paths_in_json() {
    use std::os::unix::ffi::OsStrExt;
    let top = tempfile::tempdir().unwrap();
    let dir = top
        .path()
        .join(std::ffi::OsStr::from_bytes(b"not-\xff-utf8"));
    std::fs::create_dir(&dir).unwrap();
    let o = Command::new(bin())
        .args(["info", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&o);
    assert!(
        v["path"].as_str().unwrap().ends_with("not-\u{fffd}-utf8"),
        "{v}"
    );
    let o = Command::new(bin())
        .args(["grow", "--json", "--create"])
        .arg(dir.join("f"))
        .arg("1M")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    json(&o);
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
    assert!(has(&text(&o), "pass --create"), "{}", text(&o));
    let o = fspace(&[
        "grow",
        "--no-fallback",
        dir.path().join("nope").to_str().unwrap(),
        "1M",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
