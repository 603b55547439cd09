//! `fspace probe --compare-saved` against a disk that really got slower,
//! and against one that did not, on the matrix's ext4 and xfs (loop
//! devices):
//!
//! - after a quick `--save`, comparisons on the unchanged filesystem never
//!   say "regressed": not on a quiet machine, and not with two CPU-bound
//!   processes running (a busy machine slows commits as a slower disk does,
//!   so it may say "could not tell", exit 4, with the reason: the machine
//!   busy, or the baseline measured on a busy machine);
//! - with the loop device throttled to half the write IOPS the baseline
//!   reached (the block cgroup controller: `blkio.throttle.write_iops_device`
//!   on cgroup v1, `io.max` on v2, for the comparison's process only), the
//!   comparison says "regressed" (exit 1).
//!
//! Fewer runs than the documented benchmark (`bench/compare_verdict.py`,
//! 20 of each per filesystem, figures in bench/runs/2026-12-01-compare-verdict/),
//! to keep the suite's time.

mod probe_common;
use fspace_test_kit as common;

use probe_common::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Comparisons of the unchanged disk per filesystem, quiet and busy (the
/// false-alarm rate over many is bench/runs/2026-12-01-compare-verdict's:
/// here the end-to-end path, in the suite's time).
const RUNS: usize = 1;
/// Throttled comparisons that must say "regressed", and the most
/// attempts they get: one that says "could not tell" because something
/// else made the machine busy is measured again.
const THROTTLED_REGRESSED: usize = 2;
const THROTTLED_ATTEMPTS: usize = 5;

/// A block cgroup that limits the write IOPS of one device for the
/// processes started in it; removed on drop.
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    /// A new cgroup limiting writes to the device `major:minor` to `iops`
    /// per second, or `None` with the reason where no block controller can
    /// be used.
    fn new(major: u64, minor: u64, iops: u64) -> Result<Throttle, String> {
        let name = format!("fspace-test-{}", std::process::id());
        let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        let dir = if v2 {
            let c = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
                .map_err(|e| e.to_string())?;
            if !c.split_whitespace().any(|x| x == "io") {
                return Err("cgroup v2 without the io controller".into());
            }
            std::fs::write("/sys/fs/cgroup/cgroup.subtree_control", "+io")
                .map_err(|e| format!("enable io: {e}"))?;
            PathBuf::from("/sys/fs/cgroup").join(name)
        } else {
            let base = Path::new("/sys/fs/cgroup/blkio");
            if !base.join("blkio.throttle.write_iops_device").exists() {
                return Err("no cgroup v1 blkio throttling".into());
            }
            base.join(name)
        };
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let t = Throttle { dir };
        let (file, rule) = if v2 {
            ("io.max", format!("{major}:{minor} wiops={iops}"))
        } else {
            (
                "blkio.throttle.write_iops_device",
                format!("{major}:{minor} {iops}"),
            )
        };
        std::fs::write(t.dir.join(file), &rule).map_err(|e| format!("{file} {rule}: {e}"))?;
        Ok(t)
    }

    /// `fspace ARGS` run inside the cgroup: a shell moves itself there,
    /// then becomes fspace.
    fn fspace(&self, args: &[&str], dir: &Path, state: &Path) -> Output {
        let procs = self.dir.join("cgroup.procs");
        Command::new("sh")
            .arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(&procs)
            .arg(bin())
            .arg("probe")
            .args(args)
            .arg(dir)
            .env("FSPACE_STATE_DIR", state)
            .output()
            .expect("run fspace in the cgroup")
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // Its processes have exited; an empty cgroup can go.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// CPU-bound processes, killed on drop.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start(n: usize) -> Hogs {
        Hogs(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("start a CPU hog")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The filesystem's device numbers (a loop device on the matrix).
fn device_of(root: &Path) -> (u64, u64) {
    let dev = std::fs::metadata(root).unwrap().dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

fn compare(dir: &Path, state: &Path) -> (Option<i32>, Value, String) {
    let o = probe(&["--compare-saved", "--json", "-q"], dir, Some(state));
    let t = text(&o);
    let c: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("not JSON: {t}"));
    (o.status.code(), c, t)
}

/// The verdict must agree with the exit status, and an unchanged disk
/// must never be called regressed.
fn quiet_enough(fs: &str, what: &str, code: Option<i32>, c: &Value) {
    match code {
        Some(0) => assert_eq!(c["verdict"], "no-change", "{fs} {what}: {c}"),
        Some(4) => {
            assert_eq!(c["verdict"], "could-not-tell", "{fs} {what}: {c}");
            match c["could_not_tell"].as_str() {
                Some("machine-busy") => assert_eq!(c["machine"]["busy"], true, "{fs} {what}: {c}"),
                Some("busy-baseline") => assert_eq!(
                    c["saved"]["baseline"]["machine_busy"], true,
                    "{fs} {what}: {c}"
                ),
                _ => panic!("{fs} {what}: {c}"),
            }
        }
        _ => panic!("{fs} {what}: an unchanged disk was called regressed: {c}"),
    }
}

common::per_fs! {
    /// A quick save, then comparisons on the unchanged filesystem (quiet,
    /// then with two CPU hogs): never "regressed"; then with the loop
    /// device throttled to half the baseline's write rate: "regressed".
    fn compare_tells_a_slower_disk_from_noise(fs) on [ext4, xfs] {
        if !common::is_root() {
            assert!(!common::require_matrix(), "the throttled comparison needs root");
            common::skipped("compare-throttled", &fs.name, "a block cgroup needs root");
            return;
        }
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let state = tempfile::tempdir().unwrap();
        let o = probe(&["--quick", "--save", "-q"], dir.path(), Some(state.path()));
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let t = text(&o);
        assert!(t.contains("will compare with 8 runs of 1 s"), "{}: {t}", fs.name);

        let mut seen = vec![];
        for i in 0..RUNS {
            let (code, c, _) = compare(dir.path(), state.path());
            quiet_enough(&fs.name, &format!("quiet run {i}"), code, &c);
            seen.push(format!("quiet: {} {:.2}", c["verdict"], c["ratio"].as_f64().unwrap()));
        }
        {
            let _hogs = Hogs::start(2);
            for i in 0..RUNS {
                let (code, c, _) = compare(dir.path(), state.path());
                quiet_enough(&fs.name, &format!("busy run {i}"), code, &c);
                seen.push(format!("busy: {} {:.2}", c["verdict"], c["ratio"].as_f64().unwrap()));
            }
        }

        // Half the write IOPS the baseline reached: each commit writes at
        // least once, so the log can commit at most half as often.
        let saved: Vec<PathBuf> = std::fs::read_dir(state.path().join("probes"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
        let rate = doc["expected"]["baseline"]["commits_per_sec"].as_f64().unwrap();
        let iops = ((rate / 2.0) as u64).max(10);
        let (major, minor) = device_of(&fs.root);
        let throttle = match Throttle::new(major, minor, iops) {
            Ok(t) => t,
            Err(why) => {
                assert!(!common::require_matrix(), "{}: cannot throttle: {why}", fs.name);
                common::skipped("compare-throttled", &fs.name, &why);
                return;
            }
        };
        // Until THROTTLED_REGRESSED said "regressed": a "could not tell"
        // (the machine got busy: something else ran) is measured again, at
        // most THROTTLED_ATTEMPTS times in all; "no change" fails at once.
        let mut regressed = 0;
        let mut attempts = 0;
        while regressed < THROTTLED_REGRESSED && attempts < THROTTLED_ATTEMPTS {
            attempts += 1;
            let o = throttle.fspace(&["--compare-saved", "--json", "-q"], dir.path(), state.path());
            let t = text(&o);
            let c: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{t}"));
            seen.push(format!(
                "throttled to {iops}/s: {} {:.2}",
                c["verdict"],
                c["ratio"].as_f64().unwrap()
            ));
            assert_ne!(c["verdict"], "no-change", "{} throttled: {seen:?}\n{c}", fs.name);
            if o.status.code() == Some(1) {
                assert_eq!(c["verdict"], "regressed", "{c}");
                assert_eq!(c["batches"].as_array().unwrap().len(), 2, "{c}");
                regressed += 1;
            } else {
                quiet_enough(&fs.name, &format!("throttled attempt {attempts}"), o.status.code(), &c);
            }
        }
        drop(throttle);
        eprintln!("{}: {seen:?}", fs.name);
        assert!(scratch_left(dir.path()).is_empty(), "{:?}", scratch_left(dir.path()));
        if regressed < THROTTLED_REGRESSED {
            // Every other attempt was an honest "could not tell" on a busy
            // machine (quiet_enough checked each, and a "no change" under
            // the throttle failed at once); a machine that stays busy
            // (CI's neighbours once stole 29%) must not be called
            // regressed, so fewer verdicts are what the tool owes there.
            common::skipped(
                "compare-throttled",
                &fs.name,
                &format!(
                    "the machine was busy: {regressed} of {THROTTLED_REGRESSED} regressed verdicts in {attempts} attempts"
                ),
            );
        }
    }
}
