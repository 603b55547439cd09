//! `fspace probe`'s text and HTML report (rendered in a real headless
//! browser, Debian's chromium) and the full sweep of record sizes.

mod probe_common;
use fspace_test_kit as common;

use probe_common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    for c in ["chromium", "chromium-browser", "chromium-headless-shell"] {
        if let Ok(o) = Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
        {
            if o.status.success() {
                return Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
            }
        }
    }
    None
}

/// Headless chromium with a window `width` × `height` px and its profile
/// in `work`.
fn headless(chrome: &Path, work: &Path, width: u32, height: u32) -> Command {
    let mut c = Command::new(chrome);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--window-size={width},{height}"))
    .arg(format!(
        "--user-data-dir={}",
        work.join("profile").display()
    ));
    c
}

/// Renders `html` in headless chromium in a window `width` px wide with a
/// script appended that measures each chart's laid-out box, and returns
/// what it measured: `{charts: [{group, width, height, bars}], page,
/// window}` (bars: rectangles with a non-zero rendered width; page: the
/// document's scroll width; window: the window's inner width).
fn layout_in_chromium(chrome: &Path, html: &Path, work: &Path, width: u32) -> Value {
    let page = std::fs::read_to_string(html).unwrap();
    let probe_js = r#"<script>
window.addEventListener('load', () => {
  const out = [...document.querySelectorAll('svg.chart')].map(s => {
    const b = s.getBoundingClientRect();
    const bars = [...s.querySelectorAll('rect.bar')].filter(r => r.getBoundingClientRect().width > 0).length;
    return {group: s.dataset.group, width: b.width, height: b.height, bars};
  });
  const pre = document.createElement('pre');
  pre.id = 'layout';
  const doc = {charts: out, page: document.documentElement.scrollWidth, window: window.innerWidth};
  pre.textContent = 'LAYOUT' + JSON.stringify(doc) + 'END';
  document.body.appendChild(pre);
});
</script></body>"#;
    let measured = work.join("measured.html");
    std::fs::write(&measured, page.replace("</body>", probe_js)).unwrap();
    let o = headless(chrome, work, width, 900)
        .args(["--virtual-time-budget=3000", "--dump-dom"])
        .arg(format!("file://{}", measured.display()))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&o.stdout);
    let marker = "<pre id=\"layout\">LAYOUT";
    let start = dom
        .find(marker)
        .unwrap_or_else(|| panic!("chromium rendered no layout: {}", text(&o)))
        + marker.len();
    let end = dom[start..].find("END</pre>").unwrap() + start;
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str::<Value>(&json).unwrap()
}

/// A screenshot of `html` in a window `width` px wide, for a person to
/// look at (the test prints where).
fn screenshot(chrome: &Path, html: &Path, work: &Path, width: u32) -> PathBuf {
    let png = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("probe-report-{width}.png"));
    let o = headless(chrome, work, width, 2400)
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("run chromium");
    assert!(png.exists(), "no screenshot: {}", text(&o));
    png
}

/// Checks a report: no external references, one chart per measured group,
/// and every chart laid out with bars in chromium.
fn check_report(html: &Path, groups: &[&str], work: &Path) {
    let page = std::fs::read_to_string(html).unwrap();
    let lower = page.to_lowercase();
    for bad in [
        "http:", "https:", "src=", "href=", "@import", "url(", "<link", "<img", "<iframe",
    ] {
        assert!(
            !lower.contains(bad),
            "report has an external reference ({bad})"
        );
    }
    assert_eq!(
        page.matches("<svg class=\"chart\"").count(),
        groups.len(),
        "one chart per measured group"
    );
    let Some(chrome) = chromium() else {
        assert!(
            !common::require_matrix(),
            "chromium is missing and FSPACE_REQUIRE_MATRIX=1 (ci/matrix.sh deps installs it)"
        );
        common::skipped("probe-report-chromium", "-", "chromium not installed");
        return;
    };
    // A wide window and a narrow one: the page must reflow to the
    // window (no horizontal scrolling), the charts with it.
    for width in [1280, 600] {
        let doc = layout_in_chromium(&chrome, html, work, width);
        let charts = doc["charts"].as_array().unwrap();
        let got: Vec<&str> = charts
            .iter()
            .map(|c| c["group"].as_str().unwrap())
            .collect();
        assert_eq!(got, groups);
        let window = doc["window"].as_f64().unwrap();
        assert!(
            doc["page"].as_f64() <= Some(window),
            "{width} px: the page is wider than the window: {doc}"
        );
        for c in charts {
            assert!(
                c["width"].as_f64() > Some(300.0) && c["height"].as_f64() > Some(80.0),
                "{width} px: chart not laid out: {c}"
            );
            assert!(
                c["width"].as_f64() <= Some(window),
                "{width} px: chart wider than the window: {c}"
            );
            assert!(
                c["bars"].as_u64() >= Some(3),
                "{width} px: chart without bars: {c}"
            );
        }
        eprintln!(
            "report at {width} px: {}",
            screenshot(&chrome, html, work, width).display()
        );
    }
}

common::per_fs! {
    /// A standard run: the table a person reads, the report in chromium, and
    /// the scratch directory gone.
    fn probe_text_and_report(fs) on [xfs] {
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let work = tempfile::tempdir().unwrap();
        let html = work.path().join("probe.html");
        let o = probe(&["--report", html.to_str().unwrap()], dir.path(), None);
        assert!(o.status.success(), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        for want in [
            "Commits: 8 KiB pwrite + fdatasync, one writer; 4 alternating rounds",
            "machine while measuring: ",
            "Sync methods: 8 KiB commits into written (recycled) space",
            "pwrite + fsync",
            "O_DIRECT + RWF_DSYNC",
            "commits made durable by ",
            "appended (no preparation)",
            "allocated (unwritten)",
            "write-zeroed",
            "zero-filled",
            "recycled (written before)",
            "fspace wal",
            "Growth: a fresh file to 256 MiB",
            "Recommendations",
            "  log     ",
            "  bulk    ",
            "  sparse  ",
            "Not saved",
            "Report: ",
            // XFS has untorn writes by its software path: their cost.
            "Untorn writes (RWF_ATOMIC)",
            "  statx: supported: unit 4 KiB to 1 MiB",
            "  page   path      plain/s         runs untorn/s         runs  ratio    rounds",
            "  8 KiB  software ",
            "  16 KiB software ",
            "  8 KiB pages, direct: yes (software path); cost ",
            "  16 KiB pages, direct: yes (software path); cost ",
            // The page cache path, said once, with what it means.
            "  through the page cache: never untorn (only O_DIRECT writes are)",
            // The concurrency curve: a table per mode, where it stops.
            "Concurrency",
            "    writers commits/s  ÷ 1 wr.      p50      p99",
        ] {
            assert!(out.contains(want), "output lacks {want:?}:\n{out}");
        }
        assert!(!out.contains("buffered: no"), "{out}");
        // Words the wrapping may split across lines.
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        for want in [
            "with and without RWF_ATOMIC; 4 alternating rounds of up to",
            "16 KiB pages, direct: yes (software path); cost ",
            "plain direct writes (",
            // The expected figure says the writer count it holds at.
            "1 writer, 8 KiB records; from ",
        ] {
            assert!(flat.contains(want), "output lacks {want:?}:\n{out}");
        }
        let page = std::fs::read_to_string(&html).unwrap();
        for want in [
            "<h2>Untorn page writes</h2>",
            "<dt>16 KiB pages, direct: <span class=\"what\">yes (software path)</span></dt>",
            "<dt>8 KiB pages, buffered: <span class=\"what\">no (O_DIRECT only)</span></dt>",
            "cost measured: ",
            "<h2>Commit rate by writer count</h2>",
            "data-group=\"concurrency\"",
            "<dd data-writers=\"1\">fspace's log with ",
        ] {
            assert!(page.contains(want), "report lacks {want:?}");
        }
        for m in ["fspace wal", "appended", "recycled (ceiling)"] {
            assert!(
                out.lines().any(|l| l.starts_with(&format!("  {m}: "))
                    && (l.contains("stops scaling at") || l.contains("still scaling at 64"))),
                "no scaling line for {m}:\n{out}"
            );
            let state = match m {
                "fspace wal" => "wal",
                "recycled (ceiling)" => "recycled",
                s => s,
            };
            assert!(page.contains(&format!("<li data-state=\"{state}\" data-stops-scaling-at=")), "report lacks {state}'s scaling");
        }
        // 80 columns, every line, those that quote a path (the directory,
        // the device's backing file, the report) and the progress on
        // stderr included (tests/width.rs runs every command this way).
        for line in out.lines().chain(String::from_utf8_lossy(&o.stderr).lines()) {
            assert!(line.chars().count() <= 80, "wider than 80 columns: {line:?}");
        }
        assert!(scratch_left(dir.path()).is_empty());
        check_report(
            &html,
            &["commit-rate", "sync-methods", "commit-latency", "untorn-cost", "growth", "concurrency"],
            work.path(),
        );
    }
}

common::per_fs! {
    /// `--full` adds the record-size sweep (and its chart).
    fn probe_full_sweeps_record_sizes(fs) on [tmpfs] {
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let work = tempfile::tempdir().unwrap();
        let html = work.path().join("full.html");
        let o = probe(
            &["--full", "--json", "--report", html.to_str().unwrap()],
            dir.path(),
            None,
        );
        assert!(o.status.success(), "{}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["level"], "full");
        assert_eq!(v["commit"]["rounds"], 5);
        let sweep = v["sweep"].as_array().unwrap();
        let mut seen: Vec<(u64, &str)> = sweep
            .iter()
            .map(|p| {
                (
                    p["record_size"].as_u64().unwrap(),
                    p["state"].as_str().unwrap(),
                )
            })
            .collect();
        seen.sort();
        let mut want = vec![];
        for r in [512u64, 8192, 65536, 1 << 20] {
            for s in ["appended", "recycled", "wal"] {
                want.push((r, s));
            }
        }
        want.sort();
        assert_eq!(seen, want);
        assert!(sweep
            .iter()
            .all(|p| p["commits_per_sec"].as_f64() > Some(0.0)));
        assert!(scratch_left(dir.path()).is_empty());
        check_report(
            &html,
            &["commit-rate", "sync-methods", "commit-latency", "growth", "record-size", "concurrency"],
            work.path(),
        );
    }
}

common::per_fs! {
    /// A quick probe's text, with the report of the same run: the log
    /// recommendation's line on fspace's log against plain appending says
    /// what the JSON's figures say (the same outcome, the same words, the
    /// ratio and range that follow from the runs), and the report shows it
    /// too. Which outcome a filesystem gets is timing, not asserted: on the
    /// matrix's loop devices it changes from run to run.
    fn probe_log_against_appending_agrees_with_its_figures(fs) on [ext4, btrfs, sshfs] {
        let _m = measuring();
        let _g = fs.lock();
        let top = fs.tempdir();
        // A path that holds "</script>": the page's embedded JSON must
        // not end there.
        let dir = top.path().join("<").join("script>");
        std::fs::create_dir_all(&dir).unwrap();
        let work = tempfile::tempdir().unwrap();
        let html = work.path().join("quick.html");
        let o = probe(&["--quick", "-q", "--report", html.to_str().unwrap()], &dir, None);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let page = std::fs::read_to_string(&html).unwrap();
        let v = embedded_json(&page);
        assert_eq!(v["directory"].as_str(), dir.to_str(), "{}", fs.name);
        let lv = check_log_vs_append(&fs.name, &v);
        let outcome = match lv["outcome"].as_str().unwrap() {
            "not-measured" => "not measured",
            o => o,
        };
        // The text: the log's summary, then the line with the outcome and
        // the words, wrapped, under the log recommendation.
        let log = rec(&v, "log");
        let lines: Vec<&str> = out.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.starts_with("  log     "))
            .unwrap_or_else(|| panic!("{}: no log recommendation:\n{out}", fs.name));
        assert_eq!(
            lines[start],
            format!("  log     {}", log["summary"].as_str().unwrap()),
            "{}",
            fs.name
        );
        let head = format!("          fspace's log against appending: {outcome}");
        let at = start
            + lines[start..]
                .iter()
                .position(|l| *l == head)
                .unwrap_or_else(|| panic!("{}: no line {head:?}:\n{out}", fs.name));
        assert!(
            lines[start + 1..at].iter().all(|l| l.starts_with("          ")),
            "{}: the line is not under the log recommendation:\n{out}",
            fs.name
        );
        let words: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("          "))
            .map(|l| l.trim())
            .collect();
        assert_eq!(words.join(" "), lv["text"].as_str().unwrap(), "{}:\n{out}", fs.name);
        for l in &lines[at..at + 1 + words.len()] {
            assert!(l.chars().count() <= 80, "{}: wider than 80 columns: {l:?}", fs.name);
        }
        // "Expected" quotes the same runs' median.
        if let Some(p) = v["commit"]["prediction"]["commits_per_sec"].as_f64() {
            assert_eq!(lv["log_commits_per_sec"].as_f64(), Some(p), "{}", fs.name);
            let n = fspace_cli_count(p);
            let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                flat.contains(&format!("should reach about {n} commits/s")),
                "{}: Expected does not quote {n}:\n{out}",
                fs.name
            );
        }
        // The report: the same outcome under the recommendations.
        assert!(
            page.contains(&format!("<dt>fspace&#39;s log against appending: <span class=\"what{}\">{outcome}</span></dt>",
                if outcome == "slower" { " worse" } else { "" })),
            "{}: the report lacks the log's line",
            fs.name
        );
        eprintln!(
            "{}: log against appending: {outcome}: {}",
            fs.name,
            lv["text"].as_str().unwrap()
        );
        assert!(scratch_left(&dir).is_empty());
    }
}

/// A count as the CLI prints it: rounded, with thousands separators.
fn fspace_cli_count(x: f64) -> String {
    let s = (x.round().max(0.0) as u64).to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
