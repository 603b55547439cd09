//! `fspace bench commit`: every mode and sync method on the matrix, bad
//! input, Ctrl-C.

mod cli_common;
// For `check_curve`: the bench's curves are the probe's kind.
#[allow(unused_imports)]
mod probe_common;
use fspace_test_kit as common;

use cli_common::*;
use common::listing;
use std::process::Command;

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
        let io = &wal["io"];
        if io["sync_method"] == "fdatasync" {
            assert!(wal["syncs"].as_u64().unwrap() > 0, "{}: {wal}", fs.name);
        } else {
            assert!(fs.is(&["ext4", "xfs", "ext4-noextents"]), "{}: {wal}", fs.name);
            assert_eq!(io["sync_method"], "direct-dsync", "{}: {wal}", fs.name);
            assert_eq!(io["sync_chosen_by"]["kind"], "policy", "{}: {wal}", fs.name);
            assert_eq!(io["direct_io"], true, "{}: {wal}", fs.name);
            assert_eq!(io["direct_io_by"]["kind"], "sync-method", "{}: {wal}", fs.name);
            assert_eq!(io["fallbacks"], serde_json::json!([]), "{}: {wal}", fs.name);
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
            t.contains("commits/s") && t.contains("wal") && t.contains("append") && t.contains("durable by"),
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

common::per_fs! {
    /// `--direct-io on` writes records of any multiple of the file's
    /// O_DIRECT alignment (512-byte blocks, as InnoDB's log, on the
    /// matrix's ext4 and xfs), and says why where it cannot.
    fn bench_commit_direct_io_takes_the_files_alignment(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().to_str().unwrap();
        let run = |record: &str| {
            let o = fspace(&[
                "bench", "commit", "--json", "--seconds", "0.1", "--mode", "recycled",
                "--direct-io", "on", "--file-size", "1MiB", "--record", record, d,
            ]);
            assert!(o.status.success(), "{}: {}", fs.name, text(&o));
            json(&o)["results"][0].clone()
        };
        let r = run("512");
        if r["unsupported"].is_null() {
            assert!(r["commits"].as_u64().unwrap() > 0, "{}: {r}", fs.name);
            assert_eq!(r["direct_io"], true, "{}: {r}", fs.name);
        } else {
            // btrfs's alignment is its 4 KiB sector; tmpfs and FUSE may
            // refuse O_DIRECT altogether.
            assert!(!fs.is(&["ext4", "xfs"]), "{}: {r}", fs.name);
            assert!(r["unsupported"]["text"].as_str().unwrap().contains("O_DIRECT"), "{}: {r}", fs.name);
        }
        let r = run("1000");
        if !fs.is(&["tmpfs", "sshfs"]) {
            // A rule of the run, not a failed call: its kind, no errno.
            assert_eq!(r["unsupported"]["kind"], "invalid-input", "{}: {r}", fs.name);
            assert!(r["unsupported"]["errno"].is_null(), "{}: {r}", fs.name);
            let why = r["unsupported"]["text"].as_str().unwrap_or_default();
            assert!(why.contains("multiples of") && why.contains("1000 bytes"), "{}: {r}", fs.name);
        }
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
        (vec!["bench", "commit", "--writers", "0", d], 2, "--writers"),
        (
            vec!["bench", "commit", "--writers", "1,,2", d],
            2,
            "--writers",
        ),
        (vec!["bench", "commit", "--writers", "x", d], 2, "--writers"),
        (
            vec!["bench", "commit", "--writers", "1,1025", d],
            2,
            "--writers",
        ),
    ];
    for (args, code, word) in cases {
        let o = fspace(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert!(has(&text(&o), word), "{args:?}: {}", text(&o));
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
        assert!(has(&String::from_utf8_lossy(&o.stderr), "unknown sync method"), "{}", text(&o));
    }
}

common::per_fs! {
    /// `bench commit --keep` leaves each run's log directory or file under
    /// a name later runs do not remove, says where (JSON and text), and
    /// the kept log is one `fspace wal verify` accepts (and `--strict`: a
    /// closed log ends where nothing was written).
    fn bench_commit_keep_leaves_an_openable_log(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().to_str().unwrap();
        let args = [
            "bench", "commit", "--keep", "--mode", "wal,zero-filled", "--seconds", "0.2",
            "--file-size", "1MiB", "--segment-size", "64KiB", d,
        ];
        let mut with_json = args.to_vec();
        with_json.insert(2, "--json");
        let o = fspace(&with_json);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        let kept = |state: &str| -> std::path::PathBuf {
            let row = v["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["state"] == state)
                .unwrap_or_else(|| panic!("{}: no {state} row: {v}", fs.name));
            row["kept"].as_str().unwrap_or_else(|| panic!("{}: {state} not kept: {row}", fs.name)).into()
        };
        let log = kept("wal");
        assert_eq!(log, dir.path().join("fspace-bench-wal"), "{}", fs.name);
        assert!(log.join("LOCK").exists(), "{}", fs.name);
        let file = kept("zero-filled");
        assert_eq!(file, dir.path().join("fspace-bench-zero-filled"));
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20, "{}", fs.name);

        let ls = log.to_str().unwrap();
        let o = fspace(&["wal", "verify", ls]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).starts_with("ok: "), "{}", text(&o));
        // 8 KiB records in 64 KiB segments never end on a page boundary,
        // so a recycled segment's earlier contents cannot follow the last
        // one: a closed log ends in zeros.
        let o = fspace(&["wal", "verify", "--strict", "--json", ls]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let j = json(&o);
        assert_eq!((&j["ok"], &j["clean_end"]), (&true.into(), &true.into()), "{}: {j}", fs.name);
        fspace::wal::WalView::open(&log).unwrap();
        // The writer's own open takes it too.
        fspace::wal::Wal::open(&log, fspace::WalOptions::default().segment_size(64 << 10))
            .unwrap()
            .close()
            .unwrap();

        // Again: the kept runs stay, the new ones get the next names, and
        // the text says where.
        let o = fspace(&args);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let t = String::from_utf8_lossy(&o.stdout);
        let log2 = dir.path().join("fspace-bench-wal.2");
        assert!(has(&t, &format!("kept (wal): {}", log2.display())), "{}: {t}", fs.name);
        assert!(log2.is_dir() && log.is_dir() && file.is_file());
        assert_eq!(
            listing(dir.path()),
            [
                "fspace-bench-wal",
                "fspace-bench-wal.2",
                "fspace-bench-zero-filled",
                "fspace-bench-zero-filled.2"
            ],
            "{}",
            fs.name
        );
    }
}

common::per_fs! {
    /// On btrfs the zero-filled and recycled files are NOCOW by default, as
    /// fspace's log's segments are (what the probe compares); `--nocow
    /// off` keeps them copy-on-write (as the engines' own files are).
    fn zero_filled_and_recycled_files_follow_the_logs_nocow(fs) on [btrfs] {
        let _g = fs.lock();
        for (flag, want) in [("auto", true), ("off", false)] {
            let dir = fs.tempdir();
            let d = dir.path().to_str().unwrap();
            let o = fspace(&[
                "bench", "commit", "--mode", "zero-filled,recycled", "--seconds", "0.2",
                "--file-size", "4MiB", "--keep", "--nocow", flag, d,
            ]);
            assert!(o.status.success(), "{}", text(&o));
            for name in ["fspace-bench-zero-filled", "fspace-bench-recycled"] {
                let f = std::fs::File::open(dir.path().join(name)).expect(name);
                let flags = rustix::fs::ioctl_getflags(&f).unwrap();
                let nocow = flags.contains(rustix::fs::IFlags::NOCOW);
                assert_eq!(nocow, want, "--nocow {flag}: {name}: {flags:?}");
            }
        }
    }
}

common::per_fs! {
    /// `--writers 1,2,4`: every mode at every count, the modes of one
    /// count next to each other, each row with its writer count and its
    /// ratios at its own count; a curve per mode with every count, rates
    /// above zero, p99 >= p50, each ratio the rate over the one-writer
    /// rate, and the text says where each mode stops scaling.
    fn bench_commit_writer_counts_make_curves(fs) on [ext4, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path().to_str().unwrap();
        let args = [
            "bench", "commit", "--seconds", "0.2", "--file-size", "4MiB",
            "--segment-size", "256KiB", "--mode", "wal,appended,recycled",
            "--writers", "4,1,2", d,
        ];
        let o = fspace(&[&args[..], &["--json"]].concat());
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        assert_eq!(v["writers"], serde_json::json!([1, 2, 4]), "{}", fs.name);
        let rows = v["results"].as_array().unwrap();
        let order: Vec<(u64, &str)> = rows
            .iter()
            .map(|r| (r["writers"].as_u64().unwrap(), r["state"].as_str().unwrap()))
            .collect();
        let mut want = vec![];
        for w in [1, 2, 4] {
            for m in ["wal", "appended", "recycled"] {
                want.push((w, m));
            }
        }
        assert_eq!(order, want, "{}", fs.name);
        for r in rows {
            let rate = r["commits_per_sec"].as_f64().unwrap();
            let base = rows
                .iter()
                .find(|x| x["state"] == "appended" && x["writers"] == r["writers"])
                .unwrap()["commits_per_sec"]
                .as_f64()
                .unwrap();
            let ratio = r["vs_append"].as_f64().unwrap();
            assert!((ratio - rate / base).abs() <= 1e-9 * ratio.max(1.0), "{}: {r}", fs.name);
        }
        let curves = v["curves"].as_array().unwrap();
        let states: Vec<&str> = curves.iter().map(|c| c["state"].as_str().unwrap()).collect();
        assert_eq!(states, ["wal", "appended", "recycled"], "{}", fs.name);
        for c in curves {
            probe_common::check_curve(&format!("{} {}", fs.name, c["state"]), c, &[1, 2, 4]);
            // The rows say the same.
            for p in c["points"].as_array().unwrap() {
                let row = rows
                    .iter()
                    .find(|r| r["state"] == c["state"] && r["writers"] == p["writers"])
                    .unwrap();
                assert_eq!(row["commits_per_sec"], p["commits_per_sec"], "{}", fs.name);
                assert_eq!(row["vs_one_writer"], p["vs_one_writer"], "{}", fs.name);
            }
        }
        let o = fspace(&args);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        for m in ["wal", "appended", "recycled"] {
            assert!(
                out.lines().any(|l| l.starts_with(&format!("{m}: "))
                    && (l.contains("stops scaling at") || l.contains("still scaling at 4"))),
                "{}: {out}",
                fs.name
            );
        }
        assert!(listing(dir.path()).is_empty(), "{}", fs.name);
    }
}
