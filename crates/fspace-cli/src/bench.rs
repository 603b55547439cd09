//! `fspace bench commit`: runs the library's commit benchmark for each mode
//! and prints one table (or one JSON document).

use crate::{emit, print_json};
use fspace::bench::{run_commit, CommitBenchOptions, CommitMode, CommitResult};
use fspace::units::format_human;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Serialize)]
struct Report<'a> {
    dir: &'a Path,
    filesystem: String,
    record_size: u64,
    writers: usize,
    seconds_per_mode: f64,
    results: Vec<CommitResult>,
    /// Commits/s of each mode divided by `append`'s, when it ran.
    vs_append: Vec<(CommitMode, f64)>,
    /// Commits/s of each mode divided by `overwrite`'s, when it ran.
    vs_overwrite: Vec<(CommitMode, f64)>,
}

pub(crate) fn commit(
    dir: &Path,
    modes: &[CommitMode],
    o: &CommitBenchOptions,
    json: bool,
) -> fspace::Result<()> {
    let fs = fspace::fs_info(dir)?;
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut results = vec![];
    for (i, m) in modes.iter().enumerate() {
        let bar = if tty {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_message(format!(
                "measuring {m} ({}/{}), {:.0} s",
                i + 1,
                modes.len(),
                o.duration.as_secs_f64()
            ));
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            Some(b)
        } else {
            None
        };
        let r = run_commit(dir, *m, o, Some(&cancel));
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        results.push(r?);
        if cancel.load(Ordering::Relaxed) {
            return Err(fspace::Error::Refused {
                op: "bench commit",
                path: dir.to_path_buf(),
                message: "interrupted; scratch files removed".into(),
                errno: 4, // EINTR
            });
        }
    }
    let ratio = |base: CommitMode| -> Vec<(CommitMode, f64)> {
        let Some(b) = results.iter().find(|r| r.mode == base) else {
            return vec![];
        };
        results
            .iter()
            .map(|r| {
                (
                    r.mode,
                    r.commits_per_sec / b.commits_per_sec.max(f64::MIN_POSITIVE),
                )
            })
            .collect()
    };
    let report = Report {
        dir,
        filesystem: fs.kind.name(),
        record_size: o.record_size as u64,
        writers: o.writers,
        seconds_per_mode: o.duration.as_secs_f64(),
        vs_append: ratio(CommitMode::Append),
        vs_overwrite: ratio(CommitMode::Overwrite),
        results,
    };
    if json {
        return print_json(&report);
    }
    emit(&table(&report, &fs))
}

fn ms(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

fn table(r: &Report<'_>, fs: &fspace::FsInfo) -> String {
    let mut o = String::new();
    out!(
        o,
        "fspace bench commit {}: {} records, {} writer{}, {:.0} s per mode ({}{})",
        r.dir.display(),
        format_human(r.record_size),
        r.writers,
        if r.writers == 1 { "" } else { "s" },
        r.seconds_per_mode,
        r.filesystem,
        fs.source
            .as_deref()
            .map(|s| format!(" on {s}"))
            .unwrap_or_default()
    );
    out!(o);
    out!(
        o,
        "{:<14} {:>10} {:>9} {:>9} {:>9} {:>9}  {:>9} {:>9}",
        "mode",
        "commits/s",
        "MiB/s",
        "p50",
        "p99",
        "max",
        "÷ append",
        "÷ overw."
    );
    let find = |v: &[(CommitMode, f64)], m| {
        v.iter()
            .find(|(x, _)| *x == m)
            .map_or("-".to_string(), |(_, f)| format!("{f:.2}x"))
    };
    for x in &r.results {
        if let Some(why) = &x.unsupported {
            out!(o, "{:<14} unsupported here: {why}", x.mode.name());
            continue;
        }
        out!(
            o,
            "{:<14} {:>10.0} {:>9.1} {:>9} {:>9} {:>9}  {:>9} {:>9}",
            x.mode.name(),
            x.commits_per_sec,
            x.mib_per_sec,
            ms(x.latency.p50_us),
            ms(x.latency.p99_us),
            ms(x.latency.max_us),
            find(&r.vs_append, x.mode),
            find(&r.vs_overwrite, x.mode)
        );
    }
    for x in &r.results {
        if let Some(w) = &x.wal {
            out!(o);
            out!(
                o,
                "wal: {} commits, {} fdatasyncs ({:.1} commits per sync), {} segment switches ({} waited for the preparer)",
                x.commits,
                w.syncs,
                x.commits as f64 / w.syncs.max(1) as f64,
                w.switches,
                w.switch_waits
            );
            if w.switch_commits > 0 {
                out!(
                    o,
                    "     commits that opened a segment: {} with mean {} (all commits: p99 {}, {:.2}x)",
                    w.switch_commits,
                    ms(w.switch_mean_us),
                    ms(x.latency.p99_us),
                    w.switch_mean_us / x.latency.p99_us.max(f64::MIN_POSITIVE)
                );
            }
            out!(
                o,
                "     segments prepared during the run: {} created{}, {} recycled",
                w.prepared_created,
                w.prepare_strategy
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default(),
                w.prepared_recycled
            );
            out!(o, "     O_DIRECT writes: {}", w.direct_io);
        }
    }
    for x in &r.results {
        for n in &x.notes {
            out!(o, "note ({}): {n}", x.mode);
        }
    }
    if let Some(rss) = r.results.iter().filter_map(|x| x.peak_rss_kib).max() {
        out!(o, "peak memory (VmHWM): {}", format_human(rss * 1024));
    }
    o
}
