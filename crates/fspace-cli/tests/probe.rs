//! `fspace probe` on the filesystem matrix: the recommendation holds against
//! the measurements of the same run, the scratch directory never stays, bad
//! directories fail cleanly, `--save` reaches the auto policy, and the HTML
//! report renders in a real headless browser (Debian's chromium).
//!
//! The tests that measure take one lock so that they never run beside each
//! other: two probes at once would measure each other.

mod probe_common;
use fspace_test_kit as common;

use common::listing;
use probe_common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Noise while a probe runs: two threads spinning (CPU) and one writing
/// 32 MiB with `fdatasync` over and over into `dir` (the device), until
/// dropped; then the threads stop and the file is removed.
struct Noise {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    file: PathBuf,
}

impl Noise {
    fn start(dir: &Path) -> Noise {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut threads = vec![];
        for _ in 0..2 {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..100_000 {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }
            }));
        }
        let file = dir.join("noise");
        let (stop2, path) = (stop.clone(), file.clone());
        threads.push(std::thread::spawn(move || {
            use std::io::Write;
            let buf = vec![0x5au8; 1 << 20];
            while !stop2.load(Ordering::Relaxed) {
                let Ok(mut f) = std::fs::File::create(&path) else {
                    return;
                };
                for _ in 0..32 {
                    if stop2.load(Ordering::Relaxed) || f.write_all(&buf).is_err() {
                        break;
                    }
                }
                let _ = f.sync_data();
            }
        }));
        Noise {
            stop,
            threads,
            file,
        }
    }
}

impl Drop for Noise {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.file);
    }
}

common::per_fs! {
    /// Quick probes under noise (CPU hogs and a concurrent fdatasync'ing
    /// writer on the same device): the machine is reported busy, and no
    /// recommendation leaves the built-in policy without the words of a
    /// significant difference ("beat ... across the runs"); ext4 without
    /// extents never gets fallocate. One probe on each (how often noise
    /// misleads a decision is a benchmark's question, not the suite's).
    fn probe_under_noise_keeps_the_policy(fs) on [ext4, btrfs, ext4_noextents] {
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let noise = Noise::start(dir.path());
        let o = probe(&["--quick", "--json", "--quiet"], dir.path(), None);
        drop(noise);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let line = check_document(&fs.name, &v);
        let log = rec(&v, "log");
        let reason = log["reason"].as_str().unwrap();
        // Zero-fill everywhere here (on btrfs on NOCOW files, as
        // fspace's log prepares its segments).
        let built_in = "zero-fill";
        if log["strategy"] != built_in {
            assert!(reason.contains("across the runs"), "{}: {reason}", fs.name);
        }
        if log["strategy"] == built_in && log["recycle"] == false {
            assert!(reason.contains("rank test"), "{}: {reason}", fs.name);
        }
        let sync_built_in = if fs.name == "btrfs" { "fdatasync" } else { "direct-dsync" };
        if log["sync_method"] != sync_built_in {
            let why = log["sync_reason"].as_str().unwrap();
            assert!(why.contains("across the runs"), "{}: {why}", fs.name);
        }
        assert_eq!(v["machine"]["busy"], true, "{}: noise not seen: {}", fs.name, v["machine"]);
        eprintln!("noisy {}: {line}; {}", fs.name, v["machine"]["reasons"]);
        assert!(scratch_left(dir.path()).is_empty());
    }
}

common::per_fs! {
    /// The main acceptance test: a quick probe of every filesystem of the
    /// matrix recommends a measured log strategy (printing how it compares
    /// with the fastest measured in the same run), the preparation fspace's
    /// log uses (zero-fill on NOCOW files on btrfs), never fallocate where it is
    /// missing; stdout is only the JSON; nothing is left behind.
    fn probe_every_filesystem(fs) {
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let before = listing(dir.path());
        let o = probe(&["--quick", "--json"], dir.path(), None);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "{}: stdout is not one JSON document ({e}): {}",
                fs.name,
                text(&o)
            )
        });
        // Progress went to stderr.
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("probe: ["),
            "{}",
            text(&o)
        );
        let line = check_document(&fs.name, &v);
        eprintln!("{line}");
        assert_eq!(listing(dir.path()), before, "{}: left something", fs.name);
    }
}

common::per_fs! {
    /// `--save` keeps the result for this filesystem; `grow --strategy auto`
    /// and `info` follow it there and say so; another filesystem, or the same
    /// one mounted elsewhere, does not use it; a damaged saved file is a note,
    /// not a failure.
    fn probe_save_reaches_the_auto_policy(ext3, xfs) on pairs [ext4_noextents_and_xfs: (ext4_noextents, xfs)] {
        let _m = measuring();
        let _g = common::lock_pair(ext3, xfs);
        let state = tempfile::tempdir().unwrap();
        let dir = ext3.tempdir();
        let o = probe(&["--quick", "--save", "-q"], dir.path(), Some(state.path()));
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("Saved to"), "{}", text(&o));
        let saved: Vec<PathBuf> = std::fs::read_dir(state.path().join("probes"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(saved.len(), 1, "{saved:?}");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
        let log_strategy = rec(&doc, "log")["strategy"].as_str().unwrap().to_string();

        let grow = |d: &Path, name: &str| -> Value {
            let o = Command::new(bin())
                .args(["grow", "--json", "--create", "--for", "log"])
                .arg(d.join(name))
                .arg("1MiB")
                .env("FSPACE_STATE_DIR", state.path())
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
            serde_json::from_slice(&o.stdout).unwrap()
        };
        let v = grow(dir.path(), "seg");
        assert_eq!(v["strategy"], log_strategy.as_str(), "{v}");
        assert_eq!(v["saved_probe"], saved[0].to_str().unwrap(), "{v}");
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .starts_with("measured by `fspace probe --save`"),
            "{v}"
        );
        let o = Command::new(bin())
            .arg("info")
            .arg(dir.path())
            .env("FSPACE_STATE_DIR", state.path())
            .output()
            .unwrap();
        assert!(
            text(&o).contains("following the probe saved in"),
            "{}",
            text(&o)
        );

        // Another filesystem: the built-in policy.
        let xdir = xfs.tempdir();
        let v = grow(xdir.path(), "seg");
        assert!(v["saved_probe"].is_null(), "{v}");

        // The same filesystem mounted elsewhere: another key.
        if common::is_root() {
            let other = tempfile::tempdir().unwrap();
            let unmount = common::bind_mount(dir.path(), other.path(), false).expect("bind mount");
            let v = grow(other.path(), "seg2");
            drop(unmount);
            assert!(
                v["saved_probe"].is_null(),
                "a bind mount reused the saved probe: {v}"
            );
        }

        // A damaged saved file: a note, and the built-in policy decides.
        std::fs::write(&saved[0], b"{not json").unwrap();
        let v = grow(dir.path(), "seg3");
        assert!(v["saved_probe"].is_null(), "{v}");
        assert!(
            v["notes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["kind"] == "saved-unreadable" && n["text"].is_string()),
            "{v}"
        );
    }
}

common::per_fs! {
    /// `--writers 8`: the expected figure and the log's comparison with
    /// appending are measured at 8 writers (the prediction says so, its
    /// runs are the curve's runs at 8), the concurrency curve has every
    /// count, and the text's Expected line and the recommendation say it.
    fn probe_writers_moves_the_expected_figure(fs) on [ext4] {
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let o = probe(&["--quick", "--json", "-q", "--writers", "8"], dir.path(), None);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let line = check_document(&fs.name, &v);
        assert_eq!(v["concurrency"]["at_writers"], 8, "{}", fs.name);
        let p = &v["commit"]["prediction"];
        assert_eq!(p["writers"], 8, "{}: {p}", fs.name);
        assert_eq!(p["runs"].as_array().unwrap().len(), 3, "{}: {p}", fs.name);
        assert!(p["basis"].as_str().unwrap().contains("at 8 writers"), "{}: {p}", fs.name);
        let wal = &v["concurrency"]["curves"][0];
        assert_eq!(wal["state"], "wal");
        let at8 = wal["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["writers"] == 8)
            .unwrap();
        // The point shown is the median run, the prediction's median.
        assert!(
            (at8["commits_per_sec"].as_f64().unwrap() - p["commits_per_sec"].as_f64().unwrap()).abs() < 1e-6,
            "{}: {at8} {p}",
            fs.name
        );
        eprintln!("{line}; expected at 8 writers {}", p["commits_per_sec"]);
        assert!(scratch_left(dir.path()).is_empty());
    }
}

/// `--writers` out of range or not a number: a usage error naming the
/// option, exit 2, before anything is measured.
#[test]
fn probe_writers_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    for w in ["0", "x", "1025", ""] {
        let o = probe(&["--quick", "--writers", w], dir.path(), None);
        assert_eq!(o.status.code(), Some(2), "--writers {w:?}: {}", text(&o));
        assert!(
            text(&o).contains("--writers"),
            "--writers {w:?}: {}",
            text(&o)
        );
    }
    let o = probe(&["--compare-saved", "--writers", "4"], dir.path(), None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(listing(dir.path()).is_empty());
}
