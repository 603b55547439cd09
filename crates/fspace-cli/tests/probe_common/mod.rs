//! What the probe's test files share: running a probe, one at a time, and
//! checking its JSON document.

#![allow(dead_code)] // each test binary uses its own part

use fspace_test_kit as common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

pub use common::output_text as text;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fspace")
}

/// One probe at a time in this binary.
pub fn measuring() -> std::sync::MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub fn probe(args: &[&str], dir: &Path, state: Option<&Path>) -> Output {
    let mut c = Command::new(bin());
    c.arg("probe").args(args).arg(dir);
    if let Some(s) = state {
        c.env("FSPACE_STATE_DIR", s);
    }
    c.output().expect("run fspace probe")
}

/// The width of a line of text output.
pub const COLUMNS: usize = 80;

/// A directory name that makes every path under it wider than a line.
pub const LONG: &str =
    "a-directory-named-at-such-length-that-any-path-through-it-passes-80-columns";

/// The lines of `o` (stdout, then stderr) wider than [`COLUMNS`]; with
/// `json`, stderr's only: JSON on stdout is for programs, its lines as long
/// as its values.
pub fn too_wide(o: &Output, json: bool) -> Vec<String> {
    let out: &[&Vec<u8>] = if json {
        &[&o.stderr]
    } else {
        &[&o.stdout, &o.stderr]
    };
    out.iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .lines()
                .filter(|l| l.chars().count() > COLUMNS)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Asserts that `o` printed something and that every line of it fits
/// [`COLUMNS`] (`json`: stdout is JSON and not checked).
pub fn assert_fits(fs: &str, what: &str, o: &Output, json: bool) {
    // Something printed: a command that printed nothing would pass for the
    // wrong reason.
    assert!(
        !o.stdout.is_empty() || !o.stderr.is_empty(),
        "{fs}: {what} printed nothing"
    );
    let wide = too_wide(o, json);
    assert!(
        wide.is_empty(),
        "{fs}: {what}: {} line(s) wider than {COLUMNS} columns:\n{}",
        wide.len(),
        wide.join("\n")
    );
}

/// The JSON document embedded in a report page.
pub fn embedded_json(page: &str) -> Value {
    let start = "<script type=\"application/json\" id=\"probe-json\">";
    let from = page.find(start).expect("embedded JSON") + start.len();
    let to = from + page[from..].find("</script>").expect("end of the JSON");
    serde_json::from_str(&page[from..to]).expect("embedded JSON parses")
}

pub fn scratch_left(d: &Path) -> Vec<String> {
    common::listing(d)
        .into_iter()
        .filter(|n| n.contains(".fspace-probe-"))
        .collect()
}

pub fn rate(v: &Value, state: &str) -> Option<f64> {
    v["commit"]["states"]
        .as_array()?
        .iter()
        .find(|s| {
            s["state"] == state && s["unsupported"].is_null() && s["commits"].as_u64() > Some(0)
        })
        .and_then(|s| s["commits_per_sec"].as_f64())
}

pub fn rec<'a>(v: &'a Value, intent: &str) -> &'a Value {
    v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["intent"] == intent)
        .unwrap_or_else(|| panic!("no {intent} recommendation: {v}"))
}

/// The state a log strategy leaves new space in.
pub fn state_of(strategy: &str) -> &'static str {
    match strategy {
        "sparse" => "sparse",
        "allocate" => "allocated",
        "write-zeroes" => "write-zeroed",
        "zero-fill" => "zero-filled",
        s => panic!("log strategy {s} has no measured state"),
    }
}

/// The string `field` of each element of the JSON array `a`.
pub fn names<'a>(a: &'a Value, field: &str) -> Vec<&'a str> {
    a.as_array()
        .unwrap()
        .iter()
        .map(|x| x[field].as_str().unwrap())
        .collect()
}

/// Checks one probe document against the rules; returns a summary
/// line for the log.
pub fn check_document(fs: &str, v: &Value) -> String {
    assert_eq!(v["schema"], "fspace-probe/4", "{fs}");
    let states = names(&v["commit"]["states"], "state");
    assert_eq!(
        states,
        [
            "appended",
            "sparse",
            "allocated",
            "write-zeroed",
            "zero-filled",
            "recycled",
            "wal"
        ],
        "{fs}"
    );
    for s in ["appended", "sparse", "zero-filled", "recycled", "wal"] {
        assert!(
            rate(v, s).is_some_and(|r| r > 0.0),
            "{fs}: {s} not measured: {v}"
        );
    }
    let growth = names(&v["growth"]["results"], "strategy");
    assert_eq!(
        growth,
        ["sparse", "reserve", "allocate", "write-zeroes", "zero-fill"],
        "{fs}"
    );
    let log = rec(v, "log");
    let strategy = log["strategy"].as_str().unwrap();
    assert_eq!(log["measured"], true, "{fs}: {log}");
    // The chosen state was measured. How it compares with the others is
    // a timing matter, not asserted here (no timing thresholds in tests):
    // on a busy machine a ruled-out state (zero-filled on copy-on-write)
    // measured 26% faster than the choice by noise and failed this run.
    let chosen = rate(v, state_of(strategy)).expect("chosen state measured");
    assert!(chosen > 0.0, "{fs}: log {strategy} measured {chosen}/s");
    let fastest = ["sparse", "allocated", "write-zeroed", "zero-filled"]
        .iter()
        .filter_map(|s| rate(v, s).map(|r| (*s, r)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let reason = log["reason"].as_str().unwrap();
    assert!(
        reason.contains("commits/s vs") && reason.contains("appending"),
        "{fs}: {reason}"
    );
    match fs {
        // The log's own answer there (NOCOW, zero-filled), unless a
        // copy-on-write preparation beat it across the runs.
        "btrfs" => {
            assert!(
                ["zero-fill", "sparse", "allocate"].contains(&strategy),
                "{fs}: {reason}"
            );
            if strategy == "zero-fill" {
                assert!(
                    log["summary"].as_str().unwrap().starts_with("NOCOW "),
                    "{fs}: {log}"
                );
            }
        }
        "ext4-noextents" | "sshfs" => {
            for intent in ["log", "bulk"] {
                let s = rec(v, intent)["strategy"].as_str().unwrap();
                assert!(
                    !["allocate", "write-zeroes", "reserve"].contains(&s),
                    "{fs}: {intent} relies on fallocate: {s}"
                );
            }
        }
        // Unwritten extents cost a journal commit per fdatasync here: the
        // margin is 2-3x (docs/filesystems.md), far beyond noise.
        "ext4" | "xfs" => assert!(
            ["zero-fill", "write-zeroes"].contains(&strategy),
            "{fs}: {reason}"
        ),
        _ => {}
    }
    // "Expected" names the preparation recommended: the log measured as
    // it will run.
    let expected = &v["commit"]["prediction"]["log"];
    if !expected.is_null() {
        assert_eq!(expected["strategy"], strategy, "{fs}: {expected}");
    }
    assert_eq!(rec(v, "sparse")["strategy"], "sparse");
    assert!(rec(v, "bulk")["strategy"].is_string());
    // The log's space: on btrfs the disk extents it pins are read (root
    // runs the tests). Its NOCOW segments are overwritten in place: they
    // pin what they reference (copy-on-write ones would pin more, each
    // flush's rewritten page leaving some behind).
    let space = &v["commit"]["log_space"];
    assert!(
        space["logical_bytes"].as_u64().is_some_and(|b| b > 0),
        "{fs}: {space}"
    );
    if fs == "btrfs" {
        let pinned = space["pinned_bytes"].as_u64().expect("btrfs pins") as f64;
        let allocated = space["allocated_bytes"].as_u64().unwrap() as f64;
        assert!(
            pinned >= allocated && pinned <= 1.1 * allocated,
            "{fs}: {space}"
        );
    } else {
        assert!(space["pinned_bytes"].is_null(), "{fs}: {space}");
    }
    check_rounds(fs, v);
    check_concurrency(fs, v);
    let untorn = check_untorn(fs, v);
    let against = check_log_vs_append(fs, v);
    format!(
        "probe {fs}: {:.1} s; log {strategy} {chosen:.0}/s (fastest {} {:.0}/s, append {:.0}/s, wal {:.0}/s, log against appending: {}); bulk {}; untorn: {untorn}",
        v["elapsed_ms"].as_f64().unwrap() / 1e3,
        fastest.0,
        fastest.1,
        rate(v, "appended").unwrap_or(0.0),
        rate(v, "wal").unwrap_or(0.0),
        against["outcome"],
        rec(v, "bulk")["strategy"]
    )
}

/// Every state and sync method has one latency per run, the methods are all
/// there, the machine was observed, and the log recommendation names its
/// sync method with the words of its decision.
pub fn check_rounds(fs: &str, v: &Value) {
    let all = |k: &str| v["commit"][k].as_array().unwrap().clone();
    for s in all("states").iter().chain(all("sync_methods").iter()) {
        assert_eq!(
            s["runs"].as_array().map(Vec::len),
            s["runs_p50_us"].as_array().map(Vec::len),
            "{fs}: {s}"
        );
    }
    let methods = names(&v["commit"]["sync_methods"], "method");
    assert_eq!(
        methods,
        ["fdatasync", "fsync", "dsync", "direct-dsync"],
        "{fs}"
    );
    assert!(
        v["machine"]["cpus"].as_u64() >= Some(1),
        "{fs}: {}",
        v["machine"]
    );
    let log = rec(v, "log");
    let method = log["sync_method"]
        .as_str()
        .unwrap_or_else(|| panic!("{fs}: {log}"));
    assert_ne!(method, "fsync", "{fs}: fsync is never chosen");
    let why = log["sync_reason"].as_str().unwrap();
    assert!(why.starts_with(&format!("{method}: ")), "{fs}: {why}");
    if log["too_noisy"] == true {
        assert!(
            log["reason"]
                .as_str()
                .unwrap()
                .contains("too noisy to decide between"),
            "{fs}: {log}"
        );
    }
    if log["sync_too_noisy"] == true {
        assert!(why.contains("too noisy to decide between"), "{fs}: {why}");
    }
}

/// The numbers of the JSON array `a`.
pub fn floats(a: &Value) -> Vec<f64> {
    a.as_array()
        .unwrap_or_else(|| panic!("not an array: {a}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The exact one-sided rank test (Mann-Whitney, mid-ranks for ties) that
/// `a`'s values tend to be larger than `b`'s: the share of the splits of
/// the pooled values into groups of `a.len()` and `b.len()` whose first
/// rank sum reaches `a`'s. Counted here from scratch, to check the
/// library's figure rather than repeat it.
pub fn p_greater(a: &[f64], b: &[f64]) -> f64 {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let n = pooled.len();
    assert!(n <= 20, "{n} runs: too many to enumerate");
    let rank = |x: f64| {
        let below = pooled.iter().filter(|&&y| y < x).count() as f64;
        let equal = pooled.iter().filter(|&&y| y == x).count() as f64;
        below + (equal + 1.0) / 2.0
    };
    let ranks: Vec<f64> = pooled.iter().map(|&x| rank(x)).collect();
    let observed: f64 = ranks[..a.len()].iter().sum();
    let (mut hits, mut all) = (0u64, 0u64);
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize != a.len() {
            continue;
        }
        let s: f64 = (0..n)
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| ranks[i])
            .sum();
        all += 1;
        if s >= observed - 1e-9 {
            hits += 1;
        }
    }
    hits as f64 / all as f64
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The state object named `state` in `commit.states`.
pub fn state<'a>(v: &'a Value, state: &str) -> &'a Value {
    v["commit"]["states"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["state"] == state)
        .unwrap_or_else(|| panic!("no state {state}: {v}"))
}

/// The log recommendation's `log_vs_append` agrees with the document's own
/// figures: its runs are the appended state's and the prediction's (the
/// runs "Expected" quotes), its medians, ratio and ratio range follow from
/// them, its p-value is the rank test's on them, and its outcome is the
/// probe's rule applied to them (more than 10% apart in the medians and
/// p <= 0.05, unless the median latencies say the opposite). Which
/// outcome a filesystem gets is timing, not asserted. Returns the object.
pub fn check_log_vs_append<'a>(fs: &str, v: &'a Value) -> &'a Value {
    let log = rec(v, "log");
    let lv = &log["log_vs_append"];
    let outcome = lv["outcome"]
        .as_str()
        .unwrap_or_else(|| panic!("{fs}: {log}"));
    let summary = log["summary"].as_str().unwrap();
    assert_eq!(
        summary.ends_with("; appending was faster here"),
        outcome == "slower",
        "{fs}: {summary} / {outcome}"
    );
    if outcome == "not-measured" {
        assert!(
            lv["ratio"].is_null() && lv["p_value"].is_null(),
            "{fs}: {lv}"
        );
        assert!(lv["text"].as_str().unwrap().starts_with("not measured: "));
        return lv;
    }
    if lv["writers"].as_u64() > Some(1) {
        // `--writers N`: the runs at N writers (the concurrency curve's,
        // alternating), which the prediction comes from too.
        let p = &v["commit"]["prediction"];
        assert_eq!(lv["log_runs"], p["runs"], "{fs}: {lv} / {p}");
        assert_eq!(lv["alternating"], true, "{fs}: {lv}");
        let (l, a) = (floats(&lv["log_runs"]), floats(&lv["append_runs"]));
        assert_eq!(a.len(), l.len(), "{fs}: {lv}");
        let f = |k: &str| lv[k].as_f64().unwrap();
        assert!(close(f("ratio"), median(&l) / median(&a)), "{fs}: {lv}");
        assert!(
            lv["text"]
                .as_str()
                .unwrap()
                .contains(&format!("at {} writers", lv["writers"])),
            "{fs}: {lv}"
        );
        return lv;
    }
    let appended = state(v, "appended");
    assert_eq!(lv["append_runs"], appended["runs"], "{fs}: {lv}");
    assert_eq!(
        lv["append_commits_per_sec"], appended["commits_per_sec"],
        "{fs}: {lv}"
    );
    // The log's runs: the prediction's, i.e. the main rounds' log when no
    // check of its setup was measured.
    let check = &v["commit"]["log_check"];
    let checked = check.is_object()
        && !check["recommended"]["runs"].as_array().unwrap().is_empty()
        && !check["built_in"]["runs"].as_array().unwrap().is_empty();
    let source = if !checked {
        state(v, "wal")
    } else if check["confirmed"] == true {
        &check["recommended"]
    } else {
        &check["built_in"]
    };
    assert_eq!(lv["log_runs"], source["runs"], "{fs}: {lv}");
    assert_eq!(lv["alternating"], !checked, "{fs}: {lv}");
    let p = &v["commit"]["prediction"];
    if p.is_object() {
        assert_eq!(lv["log_runs"], p["runs"], "{fs}: {lv} / {p}");
        assert_eq!(lv["log_commits_per_sec"], p["commits_per_sec"], "{fs}");
    }
    let (l, a) = (floats(&lv["log_runs"]), floats(&lv["append_runs"]));
    let (lm, am) = (median(&l), median(&a));
    let f = |k: &str| lv[k].as_f64().unwrap_or_else(|| panic!("{fs}: {k}: {lv}"));
    assert!(close(f("log_commits_per_sec"), lm), "{fs}: {lv}");
    assert!(close(f("append_commits_per_sec"), am), "{fs}: {lv}");
    let lo = |x: &[f64]| x.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = |x: &[f64]| x.iter().copied().fold(0.0, f64::max);
    assert!(close(f("ratio"), lm / am), "{fs}: {lv}");
    assert!(close(f("ratio_low"), lo(&l) / hi(&a)), "{fs}: {lv}");
    assert!(close(f("ratio_high"), hi(&l) / lo(&a)), "{fs}: {lv}");
    if !checked {
        // The table's "vs app." of the log is the same ratio.
        assert!(close(
            state(v, "wal")["vs_append"].as_f64().unwrap(),
            lm / am
        ));
    }
    // The rule, on these runs.
    let (up, down) = (p_greater(&l, &a), p_greater(&a, &l));
    let latency = |s: &Value| floats(&s["runs_p50_us"]);
    let (ll, al) = (latency(source), latency(appended));
    let faster = lm >= 1.1 * am && up <= 0.05 && p_greater(&ll, &al) > 0.05;
    let slower = am >= 1.1 * lm && down <= 0.05 && p_greater(&al, &ll) > 0.05;
    let want = if faster {
        "faster"
    } else if slower {
        "slower"
    } else {
        "level"
    };
    assert_eq!(outcome, want, "{fs}: {lv}");
    let p = match outcome {
        "faster" => up,
        "slower" => down,
        _ if lm >= am => up,
        _ => down,
    };
    assert!(close(f("p_value"), p), "{fs}: p {p}: {lv}");
    assert_eq!(lv["instead"].is_string(), outcome == "slower", "{fs}: {lv}");
    let text = lv["text"].as_str().unwrap();
    let ratio = format!(
        "{:.2}x ({:.2}-{:.2}x)",
        lm / am,
        lo(&l) / hi(&a),
        hi(&l) / lo(&a)
    );
    assert!(text.contains(&ratio), "{fs}: {ratio} not in {text}");
    // Medians within the margin need no rank test to be level; any other
    // finding quotes it.
    let within = lm < 1.1 * am && am < 1.1 * lm;
    let quoted = if within {
        "within the 10% margin".to_string()
    } else {
        format!("rank test p = {p:.3}")
    };
    assert!(text.contains(&quoted), "{fs}: {text}");
    lv
}

/// The untorn section agrees with itself and with the filesystem: the
/// facts and four answers (8 and 16 KiB, direct then buffered) everywhere,
/// the buffered ones "no"; where the limits are `supported` (XFS on the
/// matrix, which must be) both page sizes measured in one run per round
/// and side, the ratio the median of the per-round ratios of those runs,
/// within its range, and the direct answers carrying that cost; elsewhere
/// both "not measured", with the answer's reason. No timing is asserted.
/// Returns a summary for the log.
pub fn check_untorn(fs: &str, v: &Value) -> String {
    let u = &v["untorn"];
    assert!(u.is_object(), "{fs}: no untorn section: {v}");
    let state = u["facts"]["limits"]["state"]
        .as_str()
        .unwrap_or_else(|| panic!("{fs}: no facts: {u}"));
    if fs == "xfs" {
        assert_eq!(state, "supported", "{fs}: {u}");
    }
    let answers = u["answers"].as_array().expect("answers");
    let keys: Vec<(u64, &str)> = answers
        .iter()
        .map(|a| (a["page_size"].as_u64().unwrap(), a["io"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            (8192, "direct"),
            (8192, "buffered"),
            (16384, "direct"),
            (16384, "buffered")
        ],
        "{fs}"
    );
    for a in answers {
        assert!(!a["reason"].as_str().unwrap_or("").is_empty(), "{fs}: {a}");
        if a["io"] == "buffered" {
            assert_eq!(a["untorn"], false, "{fs}: {a}");
            assert_eq!(a["limit"], "buffered", "{fs}: {a}");
        }
    }
    let cost = u["cost"].as_array().expect("cost");
    assert_eq!(names_u64(cost, "page_size"), [8192, 16384], "{fs}");
    let rounds = v["commit"]["rounds"].as_u64().unwrap() as usize;
    let mut summary = vec![];
    for c in cost {
        let page = c["page_size"].as_u64().unwrap();
        let direct = answers
            .iter()
            .find(|a| a["page_size"] == page && a["io"] == "direct")
            .unwrap();
        if state != "supported" {
            assert_eq!(c["measured"], false, "{fs}: {c}");
            // A reason: no untorn writes here is "unsupported", no errno.
            assert_eq!(c["not_measured"]["kind"], "unsupported", "{fs}: {c}");
            assert!(c["not_measured"]["errno"].is_null(), "{fs}: {c}");
            let why = c["not_measured"]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{fs}: {c}"));
            assert!(
                why.starts_with(&format!("no untorn {} KiB writes here", page / 1024)),
                "{fs}: {why}"
            );
            assert!(
                why.contains(direct["reason"].as_str().unwrap()),
                "{fs}: {why}"
            );
            assert!(
                c["text"].as_str().unwrap().starts_with("not measured: "),
                "{fs}: {c}"
            );
            assert!(c["ratio"].is_null() && c["p_value"].is_null(), "{fs}: {c}");
            assert_eq!(direct["untorn"], false, "{fs}: {direct}");
            assert!(direct["cost"].is_null(), "{fs}: {direct}");
            continue;
        }
        assert_eq!(c["measured"], true, "{fs}: {c}");
        assert_eq!(c["offsets"], "random", "{fs}: {c}");
        if fs == "xfs" {
            // The matrix's loop devices have no untorn writes of their own.
            assert_eq!(c["path"], "software", "{fs}: {c}");
        }
        let (plain, untorn) = (floats(&c["plain"]["runs"]), floats(&c["untorn"]["runs"]));
        assert_eq!(plain.len(), rounds, "{fs}: {c}");
        assert_eq!(untorn.len(), rounds, "{fs}: {c}");
        for side in ["plain", "untorn"] {
            let w = &c[side];
            assert_eq!(floats(&w["runs_p50_us"]).len(), rounds, "{fs}: {w}");
            assert!(w["writes"].as_u64() >= Some(rounds as u64), "{fs}: {w}");
            assert!(
                close(
                    w["writes_per_sec"].as_f64().unwrap(),
                    median(&floats(&w["runs"]))
                ),
                "{fs}: {w}"
            );
        }
        let ratios = floats(&c["ratios"]);
        let want: Vec<f64> = untorn.iter().zip(&plain).map(|(u, p)| u / p).collect();
        assert_eq!(ratios.len(), rounds, "{fs}: {c}");
        for (got, want) in ratios.iter().zip(&want) {
            assert!(close(*got, *want), "{fs}: {c}");
        }
        let r = c["ratio"].as_f64().unwrap();
        let (lo, hi) = (
            c["ratio_min"].as_f64().unwrap(),
            c["ratio_max"].as_f64().unwrap(),
        );
        assert!(close(r, median(&ratios)), "{fs}: {c}");
        assert!(lo <= r && r <= hi && lo > 0.0, "{fs}: {c}");
        assert!(
            close(c["p_value"].as_f64().unwrap(), p_greater(&plain, &untorn)),
            "{fs}: {c}"
        );
        let text = c["text"].as_str().unwrap();
        assert!(
            text.contains(&format!("{r:.2}x ({lo:.2}-{hi:.2}x)")),
            "{fs}: {text}"
        );
        assert_eq!(direct["untorn"], true, "{fs}: {direct}");
        assert_eq!(direct["path"], c["path"], "{fs}: {direct}");
        assert!(
            close(direct["cost"]["ratio"].as_f64().unwrap(), r),
            "{fs}: {direct}"
        );
        assert!(
            direct["reason"]
                .as_str()
                .unwrap()
                .contains("cost measured: "),
            "{fs}: {direct}"
        );
        summary.push(format!("{} KiB {r:.2}x ({lo:.2}-{hi:.2}x)", page / 1024));
    }
    if summary.is_empty() {
        format!("{state}, not measured")
    } else {
        summary.join(", ")
    }
}

/// The integer `field` of each element of `a`.
fn names_u64(a: &[Value], field: &str) -> Vec<u64> {
    a.iter().map(|x| x[field].as_u64().unwrap()).collect()
}

/// One writer curve of a probe's `concurrency` or a bench's `curves`: a
/// point per writer count in `counts` (fewest first), each measured one
/// with a positive rate and p99 >= p50, its ratio the rate over the
/// one-writer rate, and `stops_scaling_at` the first count no faster than
/// the one before (null: still rising at the last).
pub fn check_curve(what: &str, curve: &Value, counts: &[u64]) {
    let points = curve["points"].as_array().unwrap();
    let writers: Vec<u64> = points
        .iter()
        .map(|p| p["writers"].as_u64().unwrap())
        .collect();
    assert_eq!(writers, counts, "{what}: {curve}");
    let one = points[0]["commits_per_sec"].as_f64().unwrap();
    let mut stop = None;
    let mut before: Option<f64> = None;
    for p in points {
        assert!(p["unsupported"].is_null(), "{what}: {p}");
        let r = p["commits_per_sec"].as_f64().unwrap();
        assert!(r > 0.0, "{what}: {p}");
        assert!(
            p["p99_us"].as_f64().unwrap() >= p["p50_us"].as_f64().unwrap(),
            "{what}: {p}"
        );
        let ratio = p["vs_one_writer"].as_f64().unwrap();
        assert!(close(ratio, r / one), "{what}: {p} against {one}");
        if stop.is_none() && before.is_some_and(|b| r <= b) {
            stop = p["writers"].as_u64();
        }
        before = Some(r);
    }
    assert_eq!(curve["stops_scaling_at"].as_u64(), stop, "{what}: {curve}");
}

/// The probe's concurrency curve: the log, appending and recycled space at
/// 1, 2, 4, 8, 16 and 64 writers and the count asked for; at a count above
/// one the expected rate and the comparison with appending were measured
/// there, and the log recommendation says so.
pub fn check_concurrency(fs: &str, v: &Value) {
    let c = &v["concurrency"];
    let at = c["at_writers"].as_u64().unwrap();
    let mut counts = vec![1, 2, 4, 8, 16, 64, at];
    counts.sort_unstable();
    counts.dedup();
    let got: Vec<u64> = c["writers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().unwrap())
        .collect();
    assert_eq!(got, counts, "{fs}: {c}");
    assert_eq!(
        names(&c["curves"], "state"),
        ["wal", "appended", "recycled"],
        "{fs}"
    );
    for curve in c["curves"].as_array().unwrap() {
        check_curve(&format!("{fs} {}", curve["state"]), curve, &counts);
    }
    let p = &v["commit"]["prediction"];
    if !p.is_null() {
        assert_eq!(p["writers"].as_u64(), Some(at), "{fs}: {p}");
    }
    let log = rec(v, "log");
    if log["measured"] == true {
        assert_eq!(
            log["log_vs_append"]["writers"].as_u64(),
            Some(at),
            "{fs}: {log}"
        );
        let said = format!("at {at} writers (--writers {at})");
        assert_eq!(
            log["reason"].as_str().unwrap().contains(&said),
            at > 1,
            "{fs}: {log}"
        );
    }
}
