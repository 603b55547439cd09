//! `fspace bench commit`: runs the library's commit benchmark for each mode
//! and prints one table (or one JSON document).

use crate::{emit, print_json};
use fspace::bench::{run_commit, CommitBenchOptions, CommitMode, CommitResult};
use fspace::units::format_human;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once the JSON report (which carries any error) is printed, so that
/// the error is not printed as a second JSON document.
pub(crate) static REPORTED: AtomicBool = AtomicBool::new(false);

/// One mode's figures with its ratios to the baselines of the same run.
#[derive(Serialize)]
struct Row {
    #[serde(flatten)]
    result: CommitResult,
    /// commits/s ÷ `append`'s, when both ran.
    vs_append: Option<f64>,
    /// commits/s ÷ `overwrite`'s, when both ran.
    vs_overwrite: Option<f64>,
}

#[derive(Serialize)]
struct Report {
    fspace_version: &'static str,
    dir: PathBuf,
    filesystem: String,
    mount_point: Option<PathBuf>,
    source: Option<String>,
    record_size: u64,
    writers: usize,
    seconds_per_mode: f64,
    file_size: u64,
    segment_size: u64,
    direct_io: &'static str,
    results: Vec<Row>,
    /// Peak resident memory of the whole run (Linux `VmHWM`), KiB.
    peak_rss_kib: Option<u64>,
    /// Set when the run stopped early; `results` holds the modes finished.
    error: Option<String>,
}

/// What went wrong with the options, in words naming the option: the CLI
/// turns it into a usage error (exit 2) before anything runs.
pub(crate) fn check_options(modes: &[CommitMode], o: &CommitBenchOptions) -> Result<(), String> {
    let files = modes.iter().any(|m| *m != CommitMode::Wal);
    if files && o.record_size as u64 > o.file_size {
        return Err(format!(
            "--record {} is larger than --file-size {}; raise --file-size",
            format_human(o.record_size as u64),
            format_human(o.file_size)
        ));
    }
    if modes.contains(&CommitMode::Wal) {
        if o.segment_size < 64 << 10 || o.segment_size % 4096 != 0 {
            return Err(format!(
                "--segment-size {} must be a multiple of 4 KiB and at least 64 KiB",
                format_human(o.segment_size)
            ));
        }
        let max = fspace::wal::max_record(o.segment_size);
        if o.record_size > max {
            return Err(format!(
                "--record {} does not fit a {} segment (at most {max} bytes); raise --segment-size or leave out --mode wal",
                format_human(o.record_size as u64),
                format_human(o.segment_size)
            ));
        }
    }
    Ok(())
}

pub(crate) fn commit(
    dir: &Path,
    modes: &[CommitMode],
    o: &CommitBenchOptions,
    json: bool,
) -> fspace::Result<()> {
    let fs = fspace::fs_info(dir)?;
    // The overwrite modes need their file; refuse before measuring anything.
    let needs = if modes.iter().any(|m| {
        matches!(
            m,
            CommitMode::Overwrite
                | CommitMode::ZeroFillNow
                | CommitMode::Allocate
                | CommitMode::WriteZeroes
        )
    }) {
        o.file_size
    } else {
        0
    };
    let free = fs.free_bytes_root.max(fs.free_bytes);
    {
        if needs > free && !fs.network {
            return Err(fspace::Error::Refused {
                op: "bench commit",
                path: dir.to_path_buf(),
                message: format!(
                    "--file-size {} needs that much free space, the filesystem has {}; lower --file-size",
                    format_human(needs),
                    format_human(free)
                ),
                errno: 28,
            });
        }
    }
    let cancel = crate::copy::cancel_on_signals();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut results = vec![];
    let mut failure = None;
    for (i, m) in modes.iter().enumerate() {
        let bar = tty.then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_message(format!(
                "measuring {m} ({}/{}), {} s",
                i + 1,
                modes.len(),
                o.duration.as_secs_f64()
            ));
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            b
        });
        let r = run_commit(dir, *m, o, Some(&cancel));
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        if cancel.load(Ordering::Relaxed) {
            failure = Some(fspace::Error::Refused {
                op: "bench commit",
                path: dir.to_path_buf(),
                message: format!(
                    "interrupted during {m}; scratch files removed{}",
                    if results.is_empty() {
                        ""
                    } else {
                        "; the modes finished are shown"
                    }
                ),
                errno: 4, // EINTR
            });
            break;
        }
        match r {
            Ok(r) => results.push(r),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let ratio = |r: &CommitResult, base: CommitMode| -> Option<f64> {
        let b = results.iter().find(|x| x.mode == base)?;
        (b.unsupported.is_none() && r.unsupported.is_none() && b.commits > 0)
            .then(|| r.commits_per_sec / b.commits_per_sec)
    };
    let rows: Vec<Row> = results
        .iter()
        .map(|r| Row {
            vs_append: ratio(r, CommitMode::Append),
            vs_overwrite: ratio(r, CommitMode::Overwrite),
            result: r.clone(),
        })
        .collect();
    let report = Report {
        fspace_version: env!("CARGO_PKG_VERSION"),
        dir: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
        filesystem: fs.kind.name(),
        mount_point: fs.mount_point.clone(),
        source: fs.source.clone(),
        record_size: o.record_size as u64,
        writers: o.writers,
        seconds_per_mode: o.duration.as_secs_f64(),
        file_size: o.file_size,
        segment_size: o.segment_size,
        direct_io: match o.direct_io {
            None => "auto",
            Some(true) => "on",
            Some(false) => "off",
        },
        results: rows,
        peak_rss_kib: fspace::bench::peak_rss_kib(),
        error: failure.as_ref().map(|e| e.to_string()),
    };
    if !report.results.is_empty() {
        if json {
            print_json(&report)?;
            REPORTED.store(true, Ordering::Relaxed);
        } else {
            emit(&table(&report))?;
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Formats microseconds: µs below 0.1 ms, else ms.
fn time(us: f64) -> String {
    if us < 100.0 {
        format!("{us:.1} µs")
    } else if us >= 10_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

fn table(r: &Report) -> String {
    let mut o = String::new();
    out!(
        o,
        "fspace bench commit {}: {} records, {} writer{}, {} s per mode ({}{})",
        r.dir.display(),
        format_human(r.record_size),
        r.writers,
        if r.writers == 1 { "" } else { "s" },
        r.seconds_per_mode,
        r.filesystem,
        r.source
            .as_deref()
            .map(|s| format!(" on {s}"))
            .unwrap_or_default()
    );
    if matches!(r.filesystem.as_str(), "tmpfs" | "ramfs") {
        out!(o, "note: {} is memory: fdatasync makes nothing durable here, so these figures say little about disks", r.filesystem);
    }
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
    let x_of = |v: Option<f64>| v.map_or("-".to_string(), |f| format!("{f:.2}x"));
    for row in &r.results {
        let x = &row.result;
        if let Some(why) = &x.unsupported {
            out!(o, "{:<14} unsupported here: {why}", x.mode.name());
            continue;
        }
        let l = x.latency.clone().unwrap_or_default();
        out!(
            o,
            "{:<14} {:>10.0} {:>9.1} {:>9} {:>9} {:>9}  {:>9} {:>9}",
            x.mode.name(),
            x.commits_per_sec,
            x.mib_per_sec,
            time(l.p50_us),
            time(l.p99_us),
            time(l.max_us),
            x_of(row.vs_append),
            x_of(row.vs_overwrite)
        );
    }
    for row in &r.results {
        let x = &row.result;
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
            if let (true, Some(l)) = (w.switch_commits > 0, &x.latency) {
                out!(
                    o,
                    "     {} commits opened a new segment: mean latency {}, {:.2}x the p99 of all commits ({})",
                    w.switch_commits,
                    time(w.switch_mean_us),
                    w.switch_mean_us / l.p99_us.max(f64::MIN_POSITIVE),
                    time(l.p99_us)
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
    for row in &r.results {
        for n in &row.result.notes {
            out!(o, "note ({}): {n}", row.result.mode);
        }
    }
    if let Some(rss) = r.peak_rss_kib {
        out!(
            o,
            "peak memory of this run (VmHWM): {}",
            format_human(rss * 1024)
        );
    }
    o
}
