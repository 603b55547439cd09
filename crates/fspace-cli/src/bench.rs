//! `fspace bench commit`: runs the library's commit suite
//! ([`fspace::bench::run_suite`]) with a spinner and prints its table (or
//! its JSON).

use crate::cli::CommitArgs;
use crate::output::{cancel_on_signals, emit, print_json, Progress, REPORTED};
use fspace::bench::{check_suite, run_suite, CommitBenchOptions, SpaceState, SuiteReport};
use fspace::units::format_human;
use fspace::StrategyChoice;
use std::sync::atomic::Ordering;

/// `fspace bench commit`.
pub(crate) fn run(a: CommitArgs) -> fspace::Result<()> {
    let mut o = CommitBenchOptions::default();
    o.record_size = a.record as usize;
    o.writers = a.writers as usize;
    o.duration = std::time::Duration::from_secs_f64(a.seconds);
    o.file_size = a.file_size;
    o.segment_size = a.segment_size;
    o.prepare = match a.prepare.0 {
        Some(s) => StrategyChoice::with_fallbacks(s),
        None => StrategyChoice::auto_from_state_dir(),
    };
    o.direct_io = match a.direct_io.as_str() {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    };
    let modes = if a.mode.is_empty() || a.mode.iter().any(|m| m.is_none()) {
        SpaceState::ALL.to_vec()
    } else {
        a.mode.into_iter().flatten().collect()
    };
    if let Err(msg) = check_suite(&modes, &o) {
        crate::usage_error(clap::error::ErrorKind::ValueValidation, msg);
    }
    let cancel = cancel_on_signals();
    let spinner = Progress::spinner();
    let started = |i: usize, m: SpaceState| {
        spinner.message(format!(
            "measuring {m} ({}/{}), {} s",
            i + 1,
            modes.len(),
            o.duration.as_secs_f64()
        ))
    };
    let (report, failure) = run_suite(&a.dir, &modes, &o, Some(&cancel), &started)?;
    drop(spinner);
    if !report.results.is_empty() {
        if a.json {
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

fn table(r: &SuiteReport) -> String {
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
        "state",
        "commits/s",
        "MiB/s",
        "p50",
        "p99",
        "max",
        "÷ append.",
        "÷ recyc."
    );
    let x_of = |v: Option<f64>| v.map_or("-".to_string(), |f| format!("{f:.2}x"));
    for row in &r.results {
        let x = &row.result;
        if let Some(why) = &x.unsupported {
            out!(o, "{:<14} unsupported here: {why}", x.state.name());
            continue;
        }
        let l = x.latency.clone().unwrap_or_default();
        out!(
            o,
            "{:<14} {:>10.0} {:>9.1} {:>9} {:>9} {:>9}  {:>9} {:>9}",
            x.state.name(),
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
        if let Some(w) = &row.result.wal {
            o.push_str(&wal_lines(&row.result, w));
        }
    }
    for row in &r.results {
        for n in &row.result.notes {
            out!(o, "note ({}): {n}", row.result.state);
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

/// What the log did during its mode.
fn wal_lines(x: &fspace::bench::CommitResult, w: &fspace::bench::WalFigures) -> String {
    let mut o = String::new();
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
    if let Some(why) = &w.prepare_reason {
        out!(o, "     why: {why}");
    }
    out!(o, "     O_DIRECT writes: {}", w.direct_io);
    o
}
