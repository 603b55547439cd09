//! `fspace probe` refusing bad directories, and removing its scratch
//! directory on Ctrl-C and on an error in the middle of a run.

mod probe_common;
use fspace_test_kit as common;

use common::listing;
use probe_common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn expect_refusal(o: &Output, words: &[&str]) -> String {
    let t = text(o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    for w in words {
        // The error may be wrapped to 80 columns.
        assert!(
            common::unwrapped(&t).contains(&common::unwrapped(w)),
            "error lacks {w:?}: {t}"
        );
    }
    t
}

/// Missing, not a directory, not writable, read-only, too small: a clear
/// error naming the operation and the directory, exit 1, nothing left.
#[test]
fn probe_bad_directories_fail_cleanly() {
    let _m = measuring();
    let base = tempfile::tempdir().unwrap();
    let missing = base.path().join("missing");
    let t = expect_refusal(
        &probe(&[], &missing, None),
        &["probe(", "missing", "no such directory", "hint:"],
    );
    assert!(!missing.exists(), "{t}");

    let file = base.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    expect_refusal(&probe(&[], &file, None), &["probe(", "not a directory"]);
    assert_eq!(std::fs::read(&file).unwrap(), b"x");

    // --json: the error is a JSON document too.
    let o = probe(&["--json"], &missing, None);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["op"], "probe");
    assert_eq!(v["errno"], 2);

    if !common::is_root() {
        common::skipped(
            "probe-bad-dirs",
            "cwd",
            "read-only, permission and size cases need root",
        );
        return;
    }
    // Not writable: a root-owned 0755 directory, probed as nobody.
    let locked = base.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(
        base.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin(),
            "probe",
        ])
        .arg(&locked)
        .output()
        .unwrap();
    expect_refusal(&o, &["probe(", "locked", "not writable"]);
    assert!(listing(&locked).is_empty());

    // A read-only bind mount.
    let inner = base.path().join("inner");
    let ro = base.path().join("ro");
    std::fs::create_dir(&inner).unwrap();
    std::fs::create_dir(&ro).unwrap();
    let unmount = common::bind_mount(&inner, &ro, true).expect("bind mount");
    expect_refusal(
        &probe(&[], &ro, None),
        &["probe(", "read-only mount", "hint:"],
    );
    drop(unmount);
    assert!(listing(&inner).is_empty());

    // Too little space: refused with the amount needed.
    let small = base.path().join("small");
    let unmount = common::mount_tmpfs(&small, "96m");
    let t = expect_refusal(
        &probe(&["--quick"], &small, None),
        &["probe(", "needs at least", "free", "Nothing was written"],
    );
    assert!(listing(&small).is_empty(), "{t}");
    drop(unmount);

    // Less than a full run needs: the growth is scaled down, and said so.
    let mid = base.path().join("mid");
    let unmount = common::mount_tmpfs(&mid, "260m");
    let o = probe(&["--quick", "--json"], &mid, None);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["growth"]["target_size"].as_u64() < Some(256 << 20), "{v}");
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["kind"] == "scaled-down" && n["text"].is_string()),
        "{}",
        v["notes"]
    );
    assert!(listing(&mid).is_empty());
    drop(unmount);
}

fn wait_for_scratch(dir: &Path, child: &mut std::process::Child) {
    let t0 = Instant::now();
    while scratch_left(dir).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "probe ended early");
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no scratch directory appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

common::per_fs! {
    /// Ctrl-C during a probe, early (growth) and late (once the commits
    /// have begun, as its progress says): exit 130 and the scratch
    /// directory is gone.
    fn probe_sigint_removes_the_scratch_directory(fs) on [ext4] {
        let _m = measuring();
        let _g = fs.lock();
        for late in [false, true] {
            let dir = fs.tempdir();
            let mut child = Command::new(bin())
                .arg("probe")
                .arg(dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The progress lines, passed on as they come and kept whole.
            let stderr = child.stderr.take().unwrap();
            let (tx, rx) = std::sync::mpsc::channel::<String>();
            let reader = std::thread::spawn(move || {
                use std::io::BufRead;
                let mut all = String::new();
                for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                    all.push_str(&line);
                    all.push('\n');
                    let _ = tx.send(line);
                }
                all
            });
            wait_for_scratch(dir.path(), &mut child);
            if late {
                let t0 = Instant::now();
                loop {
                    let left = Duration::from_secs(90).saturating_sub(t0.elapsed());
                    let line = rx.recv_timeout(left).expect("no commit step in 90 s");
                    if line.contains("8 KiB commits") {
                        break;
                    }
                }
            } else {
                std::thread::sleep(Duration::from_millis(50));
            }
            let pid = rustix::process::Pid::from_child(&child);
            rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
            let o = child.wait_with_output().unwrap();
            let t = format!("{}{}", String::from_utf8_lossy(&o.stdout), reader.join().unwrap());
            assert_eq!(o.status.code(), Some(130), "{t}");
            assert!(t.contains("interrupted"), "{t}");
            assert!(scratch_left(dir.path()).is_empty(), "late: {late}");
        }
    }
}

/// An error in the middle of a run (the filesystem fills up under it):
/// exit 1 with the errno, and the scratch directory is gone.
#[test]
fn probe_error_mid_run_removes_the_scratch_directory() {
    if !common::is_root() {
        common::skipped("probe-error-mid-run", "cwd", "needs root (mounts a tmpfs)");
        return;
    }
    let _m = measuring();
    let base = tempfile::tempdir().unwrap();
    let at = base.path().join("fill");
    let _unmount = common::mount_tmpfs(&at, "448m");
    let mut child = Command::new(bin())
        .arg("probe")
        .arg(&at)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_scratch(&at, &mut child);
    // Take every free byte, and keep taking what the probe frees, until it
    // ends: its next write fails with ENOSPC whatever step it is in.
    let ballast = at.join("ballast");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let o = std::thread::scope(|s| {
        s.spawn(|| {
            use std::io::Write;
            let mut f = std::fs::File::create(&ballast).unwrap();
            let chunk = vec![0u8; 1 << 20];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if f.write_all(&chunk).is_err() {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        });
        let o = child.wait_with_output().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        o
    });
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(common::unwrapped(&t).contains("Nospaceleftondevice"), "{t}");
    std::fs::remove_file(&ballast).unwrap();
    assert!(listing(&at).is_empty(), "{:?}", listing(&at));
}
