//! `fspace crashtest` on the filesystem matrix: small programs that
//! re-create known durability bugs (tests/crashtest_programs/bugs.py) are
//! recorded, then checked and linted; each bug is found with the right
//! story and each fixed version passes. Also: an unprivileged run, and the
//! refusals (a static binary, a trace inside the root, a missing checker).

use fspace_test_kit as common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/crashtest_programs")
}

fn python() -> &'static str {
    // The system's interpreter: a version manager's shim would be recorded too.
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

fn fspace(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

/// Records `bugs.py pattern [fixed]` in `dir` (holding `db/`), returns the
/// trace's path.
fn record(dir: &Path, pattern: &str, fixed: bool) -> PathBuf {
    let trace = dir.join(format!(
        "{pattern}-{}.trace",
        if fixed { "fixed" } else { "bug" }
    ));
    let bugs = programs().join("bugs.py");
    let mut args = vec![
        "crashtest",
        "record",
        "--root",
        "db",
        "--trace",
        trace.to_str().unwrap(),
        "--",
        python(),
        bugs.to_str().unwrap(),
        pattern,
    ];
    if fixed {
        args.push("fixed");
    }
    let o = fspace(&args, dir);
    assert!(o.status.success(), "record {pattern}: {}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\n", "{}", text(&o));
    trace
}

fn check(trace: &Path, pattern: &str) -> (Option<i32>, Value) {
    let check = programs().join("check.sh");
    let o = fspace(
        &[
            "crashtest",
            "check",
            "--json",
            "-q",
            trace.to_str().unwrap(),
            "--",
            "sh",
            check.to_str().unwrap(),
            pattern,
        ],
        trace.parent().unwrap(),
    );
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    (o.status.code(), v)
}

fn lint(trace: &Path) -> (Option<i32>, Vec<String>) {
    let o = fspace(
        &["crashtest", "lint", "--json", trace.to_str().unwrap()],
        trace.parent().unwrap(),
    );
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let rules = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    (o.status.code(), rules)
}

/// The failing models of a check report.
fn failing_models(v: &Value) -> Vec<String> {
    let mut m: Vec<String> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| {
            f["models"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
        })
        .collect();
    m.sort();
    m.dedup();
    m
}

struct Case {
    pattern: &'static str,
    /// Set up db/ before the recording.
    setup: fn(&Path),
    /// The models under which the bug must be found.
    found_under: &'static [&'static str],
    /// The lint rule that flags it (none: only check can find it).
    rule: Option<&'static str>,
    /// Words the smallest story must hold.
    story: &'static [&'static str],
}

fn empty(_: &Path) {}
fn old_data(db: &Path) {
    std::fs::write(db.join("data"), "old").unwrap();
}
fn empty_log(db: &Path) {
    std::fs::write(db.join("log"), "").unwrap();
}
fn old_page(db: &Path) {
    std::fs::write(db.join("page"), vec![b'a'; 8192]).unwrap();
}

const CASES: &[Case] = &[
    Case {
        pattern: "replace",
        setup: old_data,
        // ext4's auto_da_alloc writes the data before the rename commits.
        found_under: &["btrfs", "posix", "xfs"],
        rule: Some("rename-unsynced-data"),
        story: &[
            "NOT persisted:",
            "write(data.tmp, 0..3)",
            "rename(data.tmp -> data)",
            "data holds ''",
        ],
    },
    Case {
        pattern: "new-file",
        setup: empty,
        // ext4 and XFS commit the name with the file's fsync; btrfs logs it.
        found_under: &["posix"],
        rule: Some("unsynced-name"),
        story: &[
            "NOT persisted:",
            "create(log)",
            "acknowledged, but log is missing",
        ],
    },
    Case {
        pattern: "ack-first",
        setup: empty_log,
        found_under: &["btrfs", "ext4", "posix", "xfs"],
        rule: Some("ack-before-sync"),
        story: &[
            "NOT persisted:",
            "write(log, 0..7)",
            "acknowledged record missing",
        ],
    },
    Case {
        pattern: "torn-page",
        setup: old_page,
        found_under: &["btrfs", "ext4", "posix", "xfs"],
        rule: None,
        story: &["TORN:", "write(page, 0..8192)", "page mixes versions"],
    },
    Case {
        pattern: "sync-file-range",
        setup: empty_log,
        found_under: &["btrfs", "ext4", "posix", "xfs"],
        rule: Some("sync-file-range-only"),
        story: &[
            "NOT persisted:",
            "write(log, 0..7)",
            "acknowledged record missing",
        ],
    },
];

common::per_fs! {
    /// Each bug found by check (and lint where a rule covers it) with its
    /// story; each fixed version passes both.
    fn crashtest_finds_known_bugs_and_passes_their_fixes(fs) on [ext4, xfs, btrfs, tmpfs] {
        let dir = fs.tempdir();
        for case in CASES {
            for fixed in [false, true] {
                let run = dir.path().join(format!("{}-{fixed}", case.pattern));
                std::fs::create_dir_all(run.join("db")).unwrap();
                (case.setup)(&run.join("db"));
                let trace = record(&run, case.pattern, fixed);
                let (code, v) = check(&trace, case.pattern);
                let (lcode, rules) = lint(&trace);
                let what = format!("{} {} {}", fs.name, case.pattern, if fixed { "fixed" } else { "bug" });
                assert!(v["states"].as_u64().unwrap() >= v["distinct"].as_u64().unwrap(), "{what}: {v}");
                assert!(v["distinct"].as_u64().unwrap() >= 2, "{what}: {v}");
                if fixed {
                    assert_eq!(code, Some(0), "{what}: {v:#}");
                    assert_eq!(v["verdict"], "not-found", "{what}");
                    assert_eq!((lcode, rules.clone()), (Some(0), vec![]), "{what}: {rules:?}");
                    continue;
                }
                assert_eq!(code, Some(1), "{what}: {v:#}");
                assert_eq!(v["verdict"], "found", "{what}");
                assert_eq!(failing_models(&v), case.found_under, "{what}: {v:#}");
                let story = v["stories"][0].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect::<Vec<_>>().join("\n");
                for w in case.story {
                    assert!(story.contains(w), "{what}: no {w:?} in the story:\n{story}");
                }
                match case.rule {
                    Some(r) => assert_eq!((lcode, rules.clone()), (Some(1), vec![r.to_string()]), "{what}"),
                    None => assert_eq!(lcode, Some(0), "{what}: {rules:?}"),
                }
            }
        }
    }
}

/// Recording and checking need no privilege: both run as `nobody` in a
/// directory it owns.
#[test]
fn crashtest_runs_unprivileged() {
    if !common::is_root() {
        // Already unprivileged: the matrix test above is the proof.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(run.join("db")).unwrap();
    old_data(&run.join("db"));
    std::fs::copy(programs().join("bugs.py"), run.join("bugs.py")).unwrap();
    std::fs::copy(programs().join("check.sh"), run.join("check.sh")).unwrap();
    let chown = Command::new("chown")
        .args(["-R", "65534:65534", dir.path().to_str().unwrap()])
        .status()
        .unwrap();
    assert!(chown.success());
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let as_nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_fspace"))
            .args(args)
            .current_dir(&run)
            .env("TMPDIR", &run)
            .output()
            .unwrap()
    };
    let o = as_nobody(&[
        "crashtest",
        "record",
        "--root",
        "db",
        "--trace",
        "t",
        "--",
        python(),
        "bugs.py",
        "replace",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let checker = run.join("check.sh");
    let o = as_nobody(&[
        "crashtest",
        "check",
        "-q",
        "t",
        "--",
        "sh",
        checker.to_str().unwrap(),
        "replace",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("FOUND"), "{}", text(&o));
}

/// Bad input: a clear error naming the operation and the path, exit 2,
/// nothing recorded or changed.
#[test]
fn crashtest_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("db")).unwrap();
    // A trace inside the root.
    let o = fspace(
        &[
            "crashtest",
            "record",
            "--root",
            "db",
            "--trace",
            "db/t",
            "--",
            "true",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        common::unwrapped(&text(&o)).contains(&common::unwrapped("inside --root")),
        "{}",
        text(&o)
    );
    // A statically linked program (built here if a static libc is installed).
    let src = d.join("s.c");
    std::fs::write(&src, "int main(void){return 0;}\n").unwrap();
    let built = Command::new("cc")
        .args(["-static", "-o"])
        .arg(d.join("static"))
        .arg(&src)
        .status();
    if built.is_ok_and(|s| s.success()) {
        let o = fspace(
            &[
                "crashtest",
                "record",
                "--root",
                "db",
                "--trace",
                "t2",
                "--",
                "./static",
            ],
            d,
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            common::unwrapped(&text(&o)).contains(&common::unwrapped("statically linked")),
            "{}",
            text(&o)
        );
        assert!(!d.join("t2").join("ops.bin").exists());
    } else {
        common::skipped(
            "crashtest-static",
            "-",
            "no static libc to build a static program with",
        );
    }
    // A missing checker, and a missing trace.
    let o = fspace(
        &[
            "crashtest",
            "record",
            "--root",
            "db",
            "--trace",
            "t3",
            "--",
            "true",
        ],
        d,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = fspace(
        &["crashtest", "check", "t3", "--", "/nonexistent/checker"],
        d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent/checker"), "{}", text(&o));
    let o = fspace(&["crashtest", "lint", "nope"], d);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("nope/trace.json"), "{}", text(&o));
    assert_eq!(common::listing(&d.join("db")), Vec::<String>::new());
}

/// SQLite through Python's sqlite3, a program no one here wrote, with the
/// database made before the recording, in WAL mode: with
/// `synchronous=FULL` no acknowledged commit is lost in any state of any
/// model; with `OFF` lost commits are found; with `NORMAL` every state
/// opens and passes `PRAGMA integrity_check`, and the loss of the last
/// acknowledged commits its documentation allows is reported as a
/// durability loss (the checker's exit 3), never as corruption.
#[test]
fn crashtest_sqlite_wal_by_synchronous_mode() {
    let Some(fs) = common::fs_or_skip("crashtest-sqlite", "ext4", "SQLite is recorded on ext4 (the models, not the filesystem recorded on, decide the states)") else { return };
    let probe = Command::new(python())
        .args(["-c", "import sqlite3"])
        .output()
        .unwrap();
    assert!(
        probe.status.success(),
        "python3 has no sqlite3: {}",
        text(&probe)
    );
    let dir = fs.tempdir();
    let kv = programs().join("sqlite_kv.py");
    let checker = programs().join("sqlite_check.py");
    for mode in ["FULL", "NORMAL", "OFF"] {
        let run = dir.path().join(mode);
        std::fs::create_dir_all(run.join("db")).unwrap();
        let o = Command::new(python())
            .arg(&kv)
            .arg("create")
            .current_dir(&run)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let o = fspace(
            &[
                "crashtest",
                "record",
                "-q",
                "--root",
                "db",
                "--trace",
                "t",
                "--",
                python(),
                kv.to_str().unwrap(),
                mode,
                "10",
            ],
            &run,
        );
        assert!(o.status.success(), "{mode}: {}", text(&o));
        // FULL: the whole default sample; NORMAL and OFF need only show
        // their losses, on a quarter of it.
        let per_point = if mode == "FULL" { "64" } else { "16" };
        let o = fspace(
            &[
                "crashtest",
                "check",
                "-q",
                "--json",
                "--states-per-point",
                per_point,
                "t",
                "--",
                python(),
                checker.to_str().unwrap(),
            ],
            &run,
        );
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        let n = |k: &str| v[k].as_u64().unwrap();
        eprintln!(
            "sqlite {mode}: {} states, {} distinct, {} lost, {} inconsistent, {:.1} s, {:.0} ms per state",
            n("states"),
            n("distinct"),
            n("lost_states"),
            n("inconsistent_states"),
            v["seconds"].as_f64().unwrap(),
            v["ms_per_state"].as_f64().unwrap()
        );
        assert!(n("distinct") >= 100, "{mode}: {v}");
        // FULL and NORMAL: never corruption (OFF may corrupt, by
        // SQLite's documentation; what was seen is printed above).
        if mode != "OFF" {
            assert_eq!(n("inconsistent_states"), 0, "{mode}: {:#}", v["stories"]);
        }
        match mode {
            "FULL" => assert_eq!(
                (o.status.code(), n("failed_states")),
                (Some(0), 0),
                "{mode}: {:#}",
                v["stories"]
            ),
            _ => {
                assert_eq!(o.status.code(), Some(1), "{mode}: {}", text(&o));
                assert!(n("lost_states") > 0, "{mode}: {v}");
                let stories: Vec<String> = v["stories"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| {
                        s.as_array()
                            .unwrap()
                            .iter()
                            .map(|l| l.as_str().unwrap())
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .collect();
                assert!(
                    stories.iter().any(
                        |s| s.contains("durability loss") && s.contains("commits acknowledged")
                    ),
                    "{mode}: {stories:#?}"
                );
            }
        }
    }
}

/// `--keep` leaves the failing states (the smallest story's holds what the
/// story says); without it nothing is left behind. What `--work-dir`
/// held before is never touched, also when the check fails.
#[test]
fn crashtest_keep_leaves_the_failing_states() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path();
    std::fs::create_dir(run.join("db")).unwrap();
    old_data(&run.join("db"));
    let trace = record(run, "replace", false);
    let check = programs().join("check.sh");
    for keep in [true, false] {
        let work = run.join(format!("work-{keep}"));
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join("mine.txt"), "the caller's").unwrap();
        let mut args = vec![
            "crashtest",
            "check",
            "--json",
            "-q",
            "--model",
            "xfs",
            "--work-dir",
            work.to_str().unwrap(),
        ];
        if keep {
            args.push("--keep");
        }
        args.extend([
            trace.to_str().unwrap(),
            "--",
            "sh",
            check.to_str().unwrap(),
            "replace",
        ]);
        let o = fspace(&args, run);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let f = &v["failures"][0];
        if keep {
            let state = Path::new(f["state_dir"].as_str().expect("a kept state"));
            assert!(state.starts_with(&work), "{f}");
            // The story: the rename persisted, the data did not.
            assert_eq!(std::fs::read(state.join("data")).unwrap(), b"", "{f}");
            assert!(!state.join("data.tmp").exists());
        } else {
            assert!(f["state_dir"].is_null(), "{f}");
            assert_eq!(common::listing(&work), ["mine.txt"]);
        }
        assert_eq!(
            std::fs::read(work.join("mine.txt")).unwrap(),
            b"the caller's"
        );
    }
    // A check that stops (its checker rejects the state left when nothing
    // crashed) removes its own directory and nothing else.
    let work = run.join("work-refused");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("mine.txt"), "the caller's").unwrap();
    let o = fspace(
        &[
            "crashtest",
            "check",
            "--work-dir",
            work.to_str().unwrap(),
            trace.to_str().unwrap(),
            "--",
            "false",
        ],
        run,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(common::listing(&work), ["mine.txt"]);
}

/// The recording preload itself (tests/crashtest_record/smoke.py): every
/// wrapped call's record and fields, from Python, from C through libc, and
/// from C through raw system calls, with threads, forks and signals; the
/// preload found where build.rs left it for the binary under test.
#[test]
fn crashtest_preload_records_every_call() {
    let bin = Path::new(env!("CARGO_BIN_EXE_fspace"));
    let build = bin.parent().unwrap().join("build");
    let so = std::fs::read_dir(&build)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path().join("out/libfspace-record.so");
            let t = std::fs::metadata(&p).ok()?.modified().ok()?;
            Some((t, p))
        })
        .max()
        .map(|(_, p)| p)
        .expect("libfspace-record.so under target/*/build");
    let smoke = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/crashtest_record/smoke.py");
    let o = Command::new(python())
        .arg(&smoke)
        .arg(&so)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}
