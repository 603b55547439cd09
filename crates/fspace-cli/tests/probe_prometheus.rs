//! `fspace probe --prometheus FILE` and `--compare-saved` on the filesystem
//! matrix: the file passes `promtool check metrics` (Debian's prometheus
//! package; `ci/matrix.sh deps` installs it) and agrees with the JSON of the
//! same run, replaces FILE by a rename and leaves no temporary file; an
//! unwritable directory is refused before anything is measured with the old
//! file intact; `--compare-saved` never says "regressed" against its own
//! fresh save (0, or 4 when the machine was busy), exits 1 against a save
//! doctored to twice the rate, 3 with nothing saved.
//!
//! The tests that measure take one lock so that they never run beside each
//! other: two probes at once would measure each other.

mod probe_common;
use fspace_test_kit as common;

use common::listing;
use probe_common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// promtool, or `None` (a skip; under `FSPACE_REQUIRE_MATRIX=1` a failure).
fn promtool() -> Option<PathBuf> {
    let o = Command::new("sh")
        .args(["-c", "command -v promtool"])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
}

/// Runs `promtool check metrics` on `file`; panics with its words unless it
/// accepts the file without a lint problem.
fn promtool_accepts(promtool: &Path, file: &Path, what: &str) {
    let input = std::fs::File::open(file).unwrap();
    let o = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::from(input))
        .output()
        .expect("run promtool");
    assert!(
        o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(),
        "{what}: promtool check metrics refused {}: {}\n{}",
        file.display(),
        text(&o),
        std::fs::read_to_string(file).unwrap()
    );
}

/// One sample: its family, labels and value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the exposition text, checking its shape as it goes: every
/// family once, `# HELP` then `# TYPE <name> gauge` before its samples,
/// every name `fspace_probe_*`, no sample timestamps.
fn parse(text: &str) -> Vec<Sample> {
    let mut families: Vec<String> = vec![];
    let mut typed = false;
    let mut out = vec![];
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(name.starts_with("fspace_probe_"), "{line}");
            assert!(!families.contains(&name), "family {name} twice");
            assert!(rest.len() > name.len() + 1, "empty help: {line}");
            families.push(name);
            typed = false;
            continue;
        }
        let family = families.last().expect("a sample before any HELP");
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            assert_eq!(rest, format!("{family} gauge"));
            typed = true;
            continue;
        }
        assert!(typed, "sample before TYPE: {line}");
        let (name, labels, value) = match line.split_once('{') {
            Some((name, rest)) => {
                let (labels, value) = rest.rsplit_once("} ").expect(line);
                (name, labels_of(labels), value)
            }
            None => {
                let (name, value) = line.split_once(' ').expect(line);
                (name, BTreeMap::new(), value)
            }
        };
        assert_eq!(name, family, "sample outside its family: {line}");
        assert!(!value.contains(' '), "a timestamp: {line}");
        out.push(Sample {
            name: name.to_string(),
            labels,
            value: value.parse().expect(line),
        });
    }
    out
}

/// `k="v",...` with the format's escapes undone.
fn labels_of(s: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut chars = s.chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        assert_eq!(chars.next(), Some('"'), "{s}");
        let mut v = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => v.push('\n'),
                    Some(c) => v.push(c),
                    None => panic!("{s}"),
                },
                '"' => break,
                c => v.push(c),
            }
        }
        m.insert(key, v);
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    m
}

/// The value of the one sample of `name` whose labels include `want`.
fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            s.name == name
                && want
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert!(found.len() <= 1, "{name} {want:?} twice: {found:?}");
    found.first().map(|s| s.value)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Runs `fspace probe` with `args` then `dir` and the state directory.
fn fspace(args: &[&str], dir: &Path, state: &Path) -> Output {
    Command::new(bin())
        .arg("probe")
        .args(args)
        .arg(dir)
        .env("FSPACE_STATE_DIR", state)
        .output()
        .expect("run fspace probe")
}

/// The temporary files a writer of `name` could have left in `dir`
/// (`fspace::replace_file`'s `.NAME.fspace-tmp-...`, and the older
/// `.NAME.tmp-PID`).
fn temporaries(dir: &Path, name: &str) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|n| {
            n.starts_with(&format!(".{name}."))
                && (n.contains(fspace::TEMP_MARKER) || n.starts_with(&format!(".{name}.tmp")))
        })
        .collect()
}

#[test]
fn the_temporary_filter_sees_the_writers_names() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join(format!(".x.prom{}1", fspace::TEMP_MARKER)),
        "",
    )
    .unwrap();
    std::fs::write(d.path().join("x.prom"), "").unwrap();
    assert_eq!(temporaries(d.path(), "x.prom").len(), 1);
}

common::per_fs! {
    /// A quick probe with `--save --report --prometheus FILE`: FILE
    /// (on the filesystem measured, with an old file in its place) is
    /// replaced by a new inode, passes promtool, agrees with the JSON of
    /// the same run (embedded in the report), and no temporary file stays. Then `--compare-saved`
    /// against that save (exit 0, with its own metrics file), against the
    /// save doctored to twice the rate (exit 1, the numbers said), and
    /// with nothing saved (exit 3). Every text output of these (the
    /// probe's, with its progress and, on ext4, btrfs and tmpfs, every
    /// engine's advice; the comparisons'; the errors'; info and grow after
    /// the save) fits 80 columns, run under a directory named wider than a
    /// line.
    fn probe_prometheus_and_compare_saved(fs) {
        let Some(promtool) = promtool() else {
            assert!(
                !common::require_matrix(),
                "promtool is missing (Debian package prometheus; ci/matrix.sh deps)"
            );
            common::skipped("probe-prometheus", &fs.name, "promtool not installed");
            return;
        };
        let _m = measuring();
        let _g = fs.lock();
        // Under a name wider than a line: every text output below must
        // fit 80 columns all the same (paths wrapped, not printed whole).
        let top = fs.tempdir();
        let dir_long = top.path().join(LONG);
        std::fs::create_dir(&dir_long).unwrap();
        // The files it writes, the state directory and so the saved
        // file's path, under such names too: the lines naming them wrap.
        let out_top = fs.tempdir();
        let out = out_top.path().join(LONG);
        std::fs::create_dir(&out).unwrap();
        let state_top = tempfile::tempdir().unwrap();
        let state = state_top.path().join(LONG);
        std::fs::create_dir(&state).unwrap();
        let prom = out.join("fspace.prom");
        std::fs::write(&prom, "old\n").unwrap();
        let old_inode = std::fs::metadata(&prom).unwrap().ino();
        let report = state.join("probe.html");
        let configs = state.join("configs");
        std::fs::create_dir(&configs).unwrap();
        // The text with its progress on stderr (the JSON is the report's);
        // the engines' advice where its text differs most (each engine
        // adds seconds: probe_engines.rs checks every engine's advice).
        let engines = matches!(fs.name.as_str(), "ext4" | "btrfs" | "tmpfs");
        let mut args = vec![
            "--quick",
            "--save",
            "--report",
            report.to_str().unwrap(),
            "--prometheus",
            prom.to_str().unwrap(),
        ];
        if engines {
            args.extend(["--for", "postgresql,mariadb,rocksdb", "--write-config", configs.to_str().unwrap()]);
        }
        let o = fspace(&args, &dir_long, &state);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        assert_fits(&fs.name, "probe --quick --save --report --prometheus", &o, false);
        assert!(String::from_utf8_lossy(&o.stderr).contains("probe: ["), "{}: no progress: {}", fs.name, text(&o));
        let v = embedded_json(&std::fs::read_to_string(&report).unwrap());
        if engines {
            assert_eq!(common::listing(&configs).len(), 3, "{}: {:?}", fs.name, common::listing(&configs));
        }
        // After the save: info and an auto growth follow it, in lines
        // that fit.
        let info = Command::new(bin()).arg("info").arg(&dir_long).env("FSPACE_STATE_DIR", &state).output().unwrap();
        assert!(info.status.success(), "{}: {}", fs.name, text(&info));
        assert_fits(&fs.name, "info after --save", &info, false);
        let grown = dir_long.join("after-save.img");
        let g = Command::new(bin())
            .args(["grow", "--create", "--for", "log"])
            .arg(&grown)
            .arg("1M")
            .env("FSPACE_STATE_DIR", &state)
            .output()
            .unwrap();
        assert!(g.status.success(), "{}: {}", fs.name, text(&g));
        assert_fits(&fs.name, "grow after --save", &g, false);
        std::fs::remove_file(&grown).unwrap();
        let dir = &dir_long;
        assert!(report.exists());
        assert_ne!(std::fs::metadata(&prom).unwrap().ino(), old_inode, "{}: not replaced by a rename", fs.name);
        assert_eq!(listing(&out), ["fspace.prom"], "{}", fs.name);
        assert!(scratch_left(dir).is_empty());
        promtool_accepts(&promtool, &prom, &fs.name);
        let samples = parse(&std::fs::read_to_string(&prom).unwrap());

        // Every sample names the filesystem.
        for s in &samples {
            assert_eq!(s.labels["path"], v["directory"].as_str().unwrap(), "{s:?}");
            assert_eq!(s.labels["fstype"], v["key"]["fs_type"].as_str().unwrap(), "{s:?}");
            assert_eq!(s.labels["mountpoint"], v["key"]["mount_point"].as_str().unwrap(), "{s:?}");
        }
        // The figures are the JSON's.
        for st in v["commit"]["states"].as_array().unwrap() {
            let state = st["state"].as_str().unwrap();
            let sync = st["wal"]["io"]["sync_method"].as_str().unwrap_or("fdatasync");
            let l = [("state", state), ("sync", sync)];
            let supported = st["unsupported"].is_null();
            assert_eq!(
                value(&samples, "fspace_probe_commit_supported", &l),
                Some(if supported { 1.0 } else { 0.0 }),
                "{}: {state}",
                fs.name
            );
            if supported && st["commits"].as_u64() > Some(0) {
                let got = value(&samples, "fspace_probe_commits_per_second", &l).unwrap();
                assert!(close(got, st["commits_per_sec"].as_f64().unwrap()), "{}: {state} {got}", fs.name);
                let p50 = value(&samples, "fspace_probe_commit_latency_p50_seconds", &l).unwrap();
                assert!(close(p50 * 1e6, st["p50_us"].as_f64().unwrap()), "{}: {state} {p50}", fs.name);
            }
        }
        // The concurrency curve: a sample per mode and writer count, the
        // JSON's figures; where each stopped scaling (0: still rising).
        let c = &v["concurrency"];
        assert_eq!(value(&samples, "fspace_probe_expected_writers", &[]), Some(1.0), "{}", fs.name);
        for curve in c["curves"].as_array().unwrap() {
            let state = curve["state"].as_str().unwrap();
            for p in curve["points"].as_array().unwrap() {
                let w = p["writers"].to_string();
                let l = [("state", state), ("writers", w.as_str())];
                let got = value(&samples, "fspace_probe_concurrency_commits_per_second", &l)
                    .unwrap_or_else(|| panic!("{}: no {state} sample at {w} writers", fs.name));
                assert!(close(got, p["commits_per_sec"].as_f64().unwrap()), "{}: {state} {w}", fs.name);
                let p99 = value(&samples, "fspace_probe_concurrency_latency_p99_seconds", &l).unwrap();
                assert!(close(p99 * 1e6, p["p99_us"].as_f64().unwrap()), "{}: {state} {w}", fs.name);
                let x = value(&samples, "fspace_probe_concurrency_vs_one_writer", &l).unwrap();
                assert!(close(x, p["vs_one_writer"].as_f64().unwrap()), "{}: {state} {w}", fs.name);
                // The log's group commit in that run: its groups and waits.
                let g = &p["group"];
                if state == "wal" {
                    let groups = g["groups"].as_f64().unwrap();
                    assert!(groups > 0.0, "{}: {w} writers: {g}", fs.name);
                    let mean = value(&samples, "fspace_probe_concurrency_group_size_mean", &l).unwrap();
                    assert!(close(mean, g["group_records"].as_f64().unwrap() / groups), "{}: {w}", fs.name);
                    assert!(mean >= 1.0, "{}: {w} writers: {mean}", fs.name);
                    let flush = value(&samples, "fspace_probe_concurrency_flush_seconds", &l).unwrap();
                    assert!(close(flush * 1e9, g["flush_time_ns"].as_f64().unwrap()), "{}: {w}", fs.name);
                    for name in ["gather_waits", "follower_waits", "follower_spins"] {
                        let got = value(&samples, &format!("fspace_probe_concurrency_{name}"), &l).unwrap();
                        assert_eq!(got, g[name].as_f64().unwrap(), "{}: {w} writers: {name}", fs.name);
                    }
                } else {
                    assert!(g.is_null(), "{}: {state} has no group commit: {g}", fs.name);
                    assert_eq!(value(&samples, "fspace_probe_concurrency_group_size_mean", &l), None);
                }
            }
            assert_eq!(
                value(&samples, "fspace_probe_concurrency_stops_scaling_writers", &[("state", state)]),
                Some(curve["stops_scaling_at"].as_f64().unwrap_or(0.0)),
                "{}: {state}",
                fs.name
            );
        }
        for m in v["commit"]["sync_methods"].as_array().unwrap() {
            let method = m["method"].as_str().unwrap();
            if method == "fdatasync" || !m["unsupported"].is_null() || m["commits"].as_u64() == Some(0) {
                continue;
            }
            let got = value(
                &samples,
                "fspace_probe_commits_per_second",
                &[("state", "recycled"), ("sync", method)],
            )
            .unwrap_or_else(|| panic!("{}: no {method} sample", fs.name));
            assert!(close(got, m["commits_per_sec"].as_f64().unwrap()), "{}: {method}", fs.name);
        }
        for r in v["recommendations"].as_array().unwrap() {
            let intent = r["intent"].as_str().unwrap();
            let strategy = r["strategy"].as_str().unwrap();
            assert_eq!(
                value(&samples, "fspace_probe_recommendation", &[("intent", intent), ("strategy", strategy)]),
                Some(1.0),
                "{}: {intent}",
                fs.name
            );
            let decided = r["measured"] == true && r["too_noisy"] == false;
            assert_eq!(
                value(&samples, "fspace_probe_decided", &[("intent", intent)]),
                Some(if decided { 1.0 } else { 0.0 }),
                "{}: {intent}",
                fs.name
            );
        }
        assert_eq!(
            samples.iter().filter(|s| s.name == "fspace_probe_recommendation").count(),
            v["recommendations"].as_array().unwrap().len()
        );
        // fspace's log against appending: one outcome, and the ratios
        // where both were measured.
        let lv = &rec(&v, "log")["log_vs_append"];
        let outcome = lv["outcome"].as_str().unwrap_or_else(|| panic!("{}: {v}", fs.name));
        let outcomes: Vec<&Sample> = samples.iter().filter(|s| s.name == "fspace_probe_log_vs_append").collect();
        assert_eq!(outcomes.len(), 1, "{}", fs.name);
        assert_eq!(outcomes[0].labels["outcome"], outcome, "{}", fs.name);
        assert_eq!(outcomes[0].value, 1.0);
        for (name, field) in [
            ("fspace_probe_log_vs_append_ratio", "ratio"),
            ("fspace_probe_log_vs_append_ratio_min", "ratio_low"),
            ("fspace_probe_log_vs_append_ratio_max", "ratio_high"),
        ] {
            match (value(&samples, name, &[]), lv[field].as_f64()) {
                (Some(got), Some(want)) => assert!(close(got, want), "{}: {name} {got} {want}", fs.name),
                (got, want) => assert!(got.is_none() && want.is_none(), "{}: {name} {got:?} {want:?}", fs.name),
            }
        }
        // Untorn page writes: one answer per page size and I/O path; the
        // ratio, its range and both sides' rates where measured (XFS).
        let untorn = &v["untorn"];
        for a in untorn["answers"].as_array().unwrap() {
            let page = a["page_size"].as_u64().unwrap().to_string();
            assert_eq!(
                value(&samples, "fspace_probe_untorn_supported", &[("page", &page), ("io", a["io"].as_str().unwrap())]),
                Some(if a["untorn"] == true { 1.0 } else { 0.0 }),
                "{}: {a}",
                fs.name
            );
        }
        let measured: Vec<&Value> = untorn["cost"].as_array().unwrap().iter().filter(|c| c["measured"] == true).collect();
        assert_eq!(measured.is_empty(), fs.name != "xfs", "{}: {untorn}", fs.name);
        assert_eq!(
            samples.iter().filter(|s| s.name == "fspace_probe_untorn_ratio").count(),
            measured.len(),
            "{}",
            fs.name
        );
        for c in measured {
            let page = c["page_size"].as_u64().unwrap().to_string();
            let l = [("page", page.as_str()), ("write_path", c["path"].as_str().unwrap())];
            for (name, field) in [
                ("fspace_probe_untorn_ratio", "ratio"),
                ("fspace_probe_untorn_ratio_min", "ratio_min"),
                ("fspace_probe_untorn_ratio_max", "ratio_max"),
            ] {
                let got = value(&samples, name, &l).unwrap_or_else(|| panic!("{}: no {name}", fs.name));
                assert!(close(got, c[field].as_f64().unwrap()), "{}: {name} {got}", fs.name);
            }
            assert_eq!(
                value(&samples, "fspace_probe_untorn_rounds", &l),
                Some(c["ratios"].as_array().unwrap().len() as f64)
            );
            for side in ["plain", "untorn"] {
                let got = value(
                    &samples,
                    "fspace_probe_untorn_writes_per_second",
                    &[l[0], l[1], ("write", side)],
                )
                .unwrap_or_else(|| panic!("{}: no {side} rate", fs.name));
                assert!(close(got, c[side]["writes_per_sec"].as_f64().unwrap()), "{}: {side}", fs.name);
            }
        }
        assert_eq!(
            value(&samples, "fspace_probe_run_timestamp_seconds", &[]),
            v["started_unix"].as_f64()
        );
        let took = value(&samples, "fspace_probe_duration_seconds", &[]).unwrap();
        // The JSON rounds to 0.1 ms.
        assert!((took * 1e3 - v["elapsed_ms"].as_f64().unwrap()).abs() < 0.1, "{took}");
        assert_eq!(
            value(&samples, "fspace_probe_filesystem_block_size_bytes", &[]),
            v["filesystem"]["block_size"].as_f64()
        );
        for g in v["growth"]["results"].as_array().unwrap() {
            let s = g["strategy"].as_str().unwrap();
            assert_eq!(
                value(&samples, "fspace_probe_growth_supported", &[("strategy", s)]),
                Some(if g["unsupported"].is_null() { 1.0 } else { 0.0 }),
                "{}: {s}",
                fs.name
            );
        }
        if let Some(devices) = v["filesystem"]["block_devices"].as_array() {
            for d in devices {
                let disk = d["name"].as_str().unwrap();
                if let Some(r) = d["rotational"].as_bool() {
                    assert_eq!(
                        value(&samples, "fspace_probe_device_rotational", &[("disk", disk)]),
                        Some(if r { 1.0 } else { 0.0 })
                    );
                }
                if let Some(b) = d["logical_block_size"].as_f64() {
                    assert_eq!(
                        value(&samples, "fspace_probe_device_logical_block_size_bytes", &[("disk", disk)]),
                        Some(b)
                    );
                }
            }
        }
        let saved: Vec<PathBuf> = std::fs::read_dir(state.join("probes"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(saved.len(), 1, "{saved:?}");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
        let expected = &doc["expected"];
        assert_eq!(expected["commits_per_sec"], v["commit"]["prediction"]["commits_per_sec"], "{doc}");
        assert_eq!(expected["strategy"], v["commit"]["prediction"]["strategy"], "{doc}");

        // The save kept a baseline of the comparison's own runs, also in
        // the probe's JSON.
        let baseline = &expected["baseline"];
        assert_eq!(baseline, &v["commit"]["baseline"], "{doc}");
        assert_eq!(baseline["runs"].as_array().map(Vec::len), Some(8), "{doc}");
        assert_eq!(baseline["seconds_per_run"], 1.0, "{doc}");

        // Against its own save, moments later, at the default threshold:
        // never "regressed" (the matrix's loop devices share the host's
        // disk, but a regression needs two batches of evidence); "could
        // not tell" only on a busy machine.
        let cmp = out.join("compare.prom");
        // The matrix's loop devices share one host disk, and this test's
        // other cases probe theirs at the same time: a neighbour's burst
        // through both batches is a real slowdown of this device that the
        // tool cannot see as load (it counts others' I/O to this device
        // only). Three comparisons in a row saying "regressed" is not that.
        let mut regressed = vec![];
        let (o, c) = loop {
            // With its progress on stderr, whose lines must fit.
            let o = fspace(&["--compare-saved", "--json", "--prometheus", cmp.to_str().unwrap()], dir, &state);
            assert_fits(&fs.name, "probe --compare-saved --json (stderr)", &o, true);
            let c: Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|_| panic!("{}: {}", fs.name, text(&o)));
            if o.status.code() != Some(1) || regressed.len() == 2 {
                break (o, c);
            }
            regressed.push(c["ratio"].clone());
        };
        if !regressed.is_empty() {
            eprintln!("{}: against its own save: regressed {} time(s) first (ratios {regressed:?})", fs.name, regressed.len());
        }
        match o.status.code() {
            Some(0) => assert_eq!(c["verdict"], "no-change", "{}: {c}", fs.name),
            Some(4) => {
                assert_eq!(c["verdict"], "could-not-tell", "{}: {c}", fs.name);
                match c["could_not_tell"].as_str() {
                    Some("machine-busy") => assert_eq!(c["machine"]["busy"], true, "{}: {c}", fs.name),
                    Some("busy-baseline") => assert_eq!(baseline["machine_busy"], true, "{}: {c}", fs.name),
                    _ => panic!("{}: {c}", fs.name),
                }
            }
            _ => panic!("{}: against its own save: {c}", fs.name),
        }
        eprintln!("{}: against its own save: {} (ratio {})", fs.name, c["verdict"], c["ratio"]);
        assert_eq!(c["schema"], "fspace-probe-compare/1");
        assert_eq!(c["regressed"], false);
        assert_eq!(c["threshold"], 0.2);
        assert_eq!(c["from_baseline"], true, "{c}");
        assert_eq!(c["saved_runs"], baseline["runs"], "{c}");
        assert_eq!(c["saved_commits_per_sec"], baseline["commits_per_sec"], "{c}");
        assert_eq!(c["saved"]["commits_per_sec"], expected["commits_per_sec"]);
        assert_eq!(c["saved"]["sync_method"], expected["sync_method"]);
        // What the save found of the log against appending comes along
        // (a log recommendation too noisy to decide is not saved).
        let saved_log = doc["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["intent"] == "log");
        match saved_log {
            Some(r) => {
                assert_eq!(c["saved_log_vs_append"], r["log_vs_append"], "{c}");
                assert_eq!(c["saved_log_vs_append"], rec(&v, "log")["log_vs_append"], "{c}");
            }
            None => assert!(c["saved_log_vs_append"].is_null(), "{c}"),
        }
        assert!(c["fresh"]["runs"].as_array().unwrap().len() >= 5, "{c}");
        let ratio = c["ratio"].as_f64().unwrap();
        let fresh = c["fresh"]["commits_per_sec"].as_f64().unwrap();
        assert!(close(ratio, fresh / c["saved_commits_per_sec"].as_f64().unwrap()));
        promtool_accepts(&promtool, &cmp, &fs.name);
        let cs = parse(&std::fs::read_to_string(&cmp).unwrap());
        assert_eq!(value(&cs, "fspace_probe_compare_regressed", &[]), Some(0.0));
        let reason = c["could_not_tell"].as_str().unwrap_or("none");
        assert_eq!(
            value(&cs, "fspace_probe_compare_could_not_tell", &[("reason", reason)]),
            Some(if reason == "none" { 0.0 } else { 1.0 }),
            "{}: {c}",
            fs.name
        );
        assert!(close(
            value(&cs, "fspace_probe_compare_saved_commits_per_second", &[]).unwrap(),
            c["saved_commits_per_sec"].as_f64().unwrap()
        ));
        let verdict = c["verdict"].as_str().unwrap();
        for v in ["no-change", "regressed", "could-not-tell"] {
            assert_eq!(
                value(&cs, "fspace_probe_compare_verdict", &[("verdict", v)]),
                Some(if v == verdict { 1.0 } else { 0.0 }),
                "{}: {v}",
                fs.name
            );
        }
        let busy = c["machine"]["busy"].as_bool().expect("machine.busy");
        assert_eq!(
            value(&cs, "fspace_probe_compare_machine_busy", &[]),
            Some(if busy { 1.0 } else { 0.0 })
        );
        assert!(close(value(&cs, "fspace_probe_compare_ratio", &[]).unwrap(), ratio));
        assert_eq!(listing(&out), ["compare.prom", "fspace.prom"], "{}", fs.name);
        assert!(listing(dir).is_empty(), "{}: {:?}", fs.name, listing(dir));

        // The save doctored to twice the real rate: exit 1, with the
        // numbers. The real rate is the highest median measured so far
        // (the quick probe's, and the comparison's on more and longer
        // runs); an attempt that finds the disk faster than that (a
        // neighbour's burst ended) raises it, up to three attempts.
        let twice = |x: &Value| Value::from(x.as_f64().unwrap() * 2.0);
        let mut real = fresh.max(baseline["commits_per_sec"].as_f64().unwrap());
        let mut tries = vec![];
        let mut busy_tries = 0;
        let t = loop {
            let mut doctored = doc.clone();
            doctored["expected"]["baseline"]["commits_per_sec"] = Value::from(2.0 * real);
            doctored["expected"]["baseline"]["runs"] = Value::Array(
                baseline["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| twice(&Value::from(r.as_f64().unwrap().max(real))))
                    .collect(),
            );
            std::fs::write(&saved[0], serde_json::to_string_pretty(&doctored).unwrap()).unwrap();
            let o = fspace(&["--compare-saved", "-q", "--prometheus", cmp.to_str().unwrap()], dir, &state);
            let t = text(&o);
            assert_fits(&fs.name, "probe --compare-saved", &o, false);
            if o.status.code() == Some(1) {
                break t;
            }
            // Not slower than twice the highest rate seen (a neighbour's
            // burst ended: 0), or a busy machine (4): again.
            assert!(matches!(o.status.code(), Some(0 | 4)), "{}: {t}", fs.name);
            let cs = parse(&std::fs::read_to_string(&cmp).unwrap());
            real = real.max(value(&cs, "fspace_probe_compare_fresh_commits_per_second", &[]).unwrap());
            if o.status.code() == Some(4) {
                // "Could not tell" is only allowed for a busy machine (now,
                // or when the baseline was measured: a busy baseline is
                // slow too, so the doctored one may not look faster).
                assert!(t.contains("COULD NOT TELL") && t.contains("busy"), "{}: {t}", fs.name);
                busy_tries += 1;
            }
            tries.push(t);
            if tries.len() == 3 && busy_tries == 3 {
                // A machine busy through all three attempts (CI's
                // neighbours: 29% stolen once) is exactly where the tool
                // must not call a regression; the REGRESSED wording is
                // then not seen here (the verdict's rule has unit tests).
                common::skipped(
                    "probe_prometheus_and_compare_saved/regressed",
                    &fs.name,
                    "the machine was busy in all 3 attempts: could not tell, as it must",
                );
                break String::new();
            }
            assert!(tries.len() < 3, "{}: no regression against twice the rate 3 times: {tries:?}", fs.name);
        };
        if !t.is_empty() {
            eprintln!("{}: twice the rate: regressed after {} attempt(s) within the threshold", fs.name, tries.len());
            for w in ["REGRESSED", "saved:", "fresh:", "again:", "commits/s", "runs ", "20%", "median", "two batches"] {
                assert!(t.contains(w), "{}: no {w:?} in {t}", fs.name);
            }
            let cs = parse(&std::fs::read_to_string(&cmp).unwrap());
            assert_eq!(value(&cs, "fspace_probe_compare_regressed", &[]), Some(1.0), "{t}");
            assert_eq!(value(&cs, "fspace_probe_compare_batches", &[]), Some(2.0), "{t}");
            assert!(value(&cs, "fspace_probe_compare_ratio", &[]).unwrap() < 0.8, "{t}");
        }

        // Nothing saved: exit 3, said so, nothing measured or written; in
        // text, in lines that fit.
        let empty_top = tempfile::tempdir().unwrap();
        let empty = empty_top.path().join(LONG);
        std::fs::create_dir(&empty).unwrap();
        let o = fspace(&["--compare-saved"], dir, &empty);
        assert_eq!(o.status.code(), Some(3), "{}: {}", fs.name, text(&o));
        assert_fits(&fs.name, "probe --compare-saved with nothing saved", &o, false);
        // A directory that does not exist: exit 1, the path wrapped.
        let o = fspace(&["--quick"], &dir.join("missing"), &state);
        assert_eq!(o.status.code(), Some(1), "{}: {}", fs.name, text(&o));
        assert_fits(&fs.name, "probe of a missing directory", &o, false);
        let o = fspace(&["--compare-saved", "-q", "--json"], dir, &empty);
        assert_eq!(o.status.code(), Some(3), "{}: {}", fs.name, text(&o));
        let e: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(e["error"].as_str().unwrap().contains("nothing to compare with"), "{e}");
        assert!(listing(dir).is_empty());
        assert!(listing(&empty).is_empty());
    }
}

common::per_fs! {
    /// FILE's directory not writable (a read-only bind mount of a directory
    /// on the filesystem): refused before anything is measured, naming the
    /// path and the errno, exit 1; the old file intact and no temporary
    /// file; likewise a FILE that is a directory.
    fn probe_prometheus_unwritable_directory_fails_cleanly(fs) {
        if !common::is_root() {
            common::skipped("probe-prometheus-unwritable", &fs.name, "a read-only bind mount needs root");
            return;
        }
        let _g = fs.lock();
        let base = fs.tempdir();
        let inner = base.path().join("inner");
        let dir = base.path().join("dir");
        for d in [&inner, &dir] {
            std::fs::create_dir(d).unwrap();
        }
        let ro = tempfile::tempdir().unwrap();
        std::fs::write(inner.join("fspace.prom"), "old\n").unwrap();
        let unmount = common::bind_mount(&inner, ro.path(), true).expect("bind mount");
        let prom = ro.path().join("fspace.prom");
        let o = probe(&["--quick", "--prometheus", prom.to_str().unwrap()], &dir, None);
        let t = text(&o);
        drop(unmount);
        assert_eq!(o.status.code(), Some(1), "{}: {t}", fs.name);
        for w in ["prometheus(", "fspace.prom", "Read-only file system", "cannot create files"] {
            // The error may be wrapped to 80 columns.
            assert!(common::unwrapped(&t).contains(&common::unwrapped(w)), "{}: no {w:?} in {t}", fs.name);
        }
        // Refused before measuring: no progress line, no scratch directory.
        assert!(!t.contains("probe: ["), "{t}");
        assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
        assert_eq!(std::fs::read_to_string(inner.join("fspace.prom")).unwrap(), "old\n");
        assert_eq!(listing(&inner), ["fspace.prom"]);

        // FILE is a directory: refused the same way.
        let o = probe(&["--quick", "--prometheus", inner.to_str().unwrap()], &dir, None);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(common::unwrapped(&t).contains("isadirectory"), "{t}");
        assert!(temporaries(base.path(), "inner").is_empty());
        assert_eq!(listing(&inner), ["fspace.prom"]);
    }
}
