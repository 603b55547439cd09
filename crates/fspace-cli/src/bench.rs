//! `fspace bench commit`: runs the library's commit suite
//! ([`fspace::bench::run_suite`]) with a spinner and prints its table (or
//! its JSON).

use crate::cli::CommitArgs;
use crate::curves::time;
use crate::fmt::{format_human, hanging, labelled, within};
use crate::output::{cancel_on_signals, emit, print_json, Progress, REPORTED};
use fspace::bench::{
    check_suite, run_suite, suite_runs, CommitBenchOptions, CommitResult, SpaceState, SuiteReport,
    SuiteRun,
};
use fspace::StrategyChoice;
use std::path::Path;
use std::sync::atomic::Ordering;

/// `fspace bench commit`.
/// `auto`/`on`/`off` as the library's `None`/`Some(true)`/`Some(false)`.
fn on_off(v: &str) -> Option<bool> {
    match v {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

pub(crate) fn run(a: CommitArgs) -> fspace::Result<()> {
    let mut o = CommitBenchOptions::default()
        .record_size(a.record as usize)
        .writers(a.writers[0] as usize)
        .writer_counts(writer_counts(&a.writers))
        .duration(std::time::Duration::from_secs_f64(a.seconds))
        .file_size(a.file_size)
        .segment_size(a.segment_size)
        .prepare(match a.prepare.0 {
            Some(s) => StrategyChoice::with_fallbacks(s),
            None => StrategyChoice::auto_from_state_dir(),
        })
        .direct_io(on_off(&a.direct_io))
        .pad_flushes(on_off(&a.pad_flushes))
        .nocow(on_off(&a.nocow))
        .keep(a.keep);
    for m in a.sync_method.into_iter().flatten() {
        if !o.sync_methods.contains(&m) {
            o.sync_methods.push(m);
        }
    }
    let modes = if a.mode.is_empty() || a.mode.iter().any(Option::is_none) {
        SpaceState::ALL.to_vec()
    } else {
        a.mode.into_iter().flatten().collect()
    };
    if let Err(e) = check_suite(&modes, &o) {
        crate::usage::usage_error(clap::error::ErrorKind::ValueValidation, e.message);
    }
    let cancel = cancel_on_signals();
    let spinner = Progress::spinner();
    let runs = suite_runs(&modes, &o).len();
    let counts = o.writer_counts.len() > 1;
    let started = |i: usize, run: SuiteRun| {
        let w = if counts {
            format!(", {}", writers(run.writers))
        } else {
            String::new()
        };
        spinner.message(format!(
            "measuring {}{w} ({}/{runs}), {} s",
            label(run.state, run.sync_method),
            i + 1,
            o.duration.as_secs_f64()
        ));
    };
    let (report, failure) = run_suite(&a.dir, &modes, &o, Some(&cancel), &started)?;
    drop(spinner);
    if !report.results.is_empty() {
        if a.json {
            print_json(&report)?;
            REPORTED.store(true, Ordering::Relaxed);
        } else {
            emit(&table(&report, &a.dir))?;
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The writer counts asked for, fewest first, each once.
fn writer_counts(asked: &[u32]) -> Vec<usize> {
    let mut w: Vec<usize> = asked.iter().map(|&n| n as usize).collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// `1 writer`, `8 writers`.
fn writers(n: usize) -> String {
    format!("{n} writer{}", if n == 1 { "" } else { "s" })
}

/// A row's name in notes and the log's lines: the mode, its sync method
/// when methods were named, and its writer count when several ran.
fn row_name(r: &SuiteReport, x: &CommitResult) -> String {
    let methods = !r.sync_methods.is_empty();
    let l = label(x.state, x.sync_method.filter(|_| methods));
    if r.writers.len() > 1 {
        format!("{l}, {}", writers(x.writers))
    } else {
        l
    }
}

/// `text` with the run's scratch files named within the directory, which
/// a message may give as the user named it (`dir`) or as the report does.
fn in_dir(text: &str, r: &SuiteReport, dir: &Path) -> String {
    within(&within(text, &r.dir), dir)
}

/// A run's name: the mode, with its sync method when one was named.
fn label(m: SpaceState, s: Option<fspace::SyncMethod>) -> String {
    match s {
        Some(s) => format!("{m}/{s}"),
        None => m.to_string(),
    }
}

/// The report in words; `dir` is the directory as the user named it.
fn table(r: &SuiteReport, dir: &Path) -> String {
    let mut o = String::new();
    hanging(
        &mut o,
        "fspace bench commit ",
        2,
        &format!(
            "{}: {} records, {}, {} s per mode ({}{})",
            r.dir.display(),
            format_human(r.record_size),
            match r.writers.as_slice() {
                [one] => writers(*one),
                many => format!(
                    "{} writers",
                    many.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            r.seconds_per_mode,
            r.filesystem,
            r.source
                .as_deref()
                .map(|s| format!(" on {s}"))
                .unwrap_or_default()
        ),
    );
    if matches!(r.filesystem.as_str(), "tmpfs" | "ramfs") {
        labelled(&mut o, "note: ", &format!("{} is memory: fdatasync makes nothing durable here, so these figures say little about disks", r.filesystem));
    }
    out!(o);
    o.push_str(&rows(r, dir));
    let methods = !r.sync_methods.is_empty();
    o.push_str(&crate::curves::tables(&r.curves, &|c| {
        label(c.state, c.sync_method.filter(|_| methods))
    }));
    let name = |x: &CommitResult| row_name(r, x);
    o.push_str(&crate::durability::bench_text(
        r.results.iter().map(|row| (name(&row.result), &row.result)),
    ));
    for row in &r.results {
        if let Some(w) = &row.result.wal {
            o.push_str(&wal_lines(&name(&row.result), &row.result, w));
        }
    }
    for row in &r.results {
        for n in &row.result.notes {
            hanging(
                &mut o,
                &format!("note ({}): ", name(&row.result)),
                2,
                &in_dir(&n.to_string(), r, dir),
            );
        }
    }
    for row in &r.results {
        if let Some(p) = &row.result.kept {
            let what = match row.result.state {
                SpaceState::Wal => format!(" (the log, closed: fspace wal verify {})", p.display()),
                _ => String::new(),
            };
            hanging(
                &mut o,
                &format!("kept ({}): ", name(&row.result)),
                2,
                &format!("{}{what}", p.display()),
            );
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

/// How a row's commits were made durable: the method measured (`fdatasync`
/// for the file states by default), or for the log the method it really
/// used at the end of its run, marked `+O_DIRECT` where its writes
/// bypassed the page cache and the method's name does not say so.
fn durable_by(x: &CommitResult) -> String {
    match (&x.wal, x.sync_method) {
        (Some(w), _) if w.io.direct_io && !w.io.sync_method.direct() => {
            format!("{}+O_DIRECT", w.io.sync_method)
        }
        (Some(w), _) => w.io.sync_method.to_string(),
        (None, Some(m)) if x.direct_io && !m.direct() => format!("{m}+O_DIRECT"),
        (None, Some(m)) => m.to_string(),
        (None, None) => "-".to_string(),
    }
}

/// The table's rows, in two tables to fit 80 columns: per run its rate
/// and the ratios of the same run (and to `fdatasync` when several sync
/// methods ran); then how its commits were made durable and its latency.
fn rows(r: &SuiteReport, dir: &Path) -> String {
    let mut o = String::new();
    let methods = !r.sync_methods.is_empty();
    let name = |x: &CommitResult| label(x.state, x.sync_method.filter(|_| methods));
    // A column of writer counts when several ran.
    let wr = |x: Option<&CommitResult>| match (r.writers.len() > 1, x) {
        (false, _) => String::new(),
        (true, None) => format!(" {:>7}", "writers"),
        (true, Some(x)) => format!(" {:>7}", x.writers),
    };
    let w = r
        .results
        .iter()
        .map(|x| name(&x.result).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let d = r
        .results
        .iter()
        .map(|x| durable_by(&x.result).len())
        .max()
        .unwrap_or(0)
        .max(DURABLE_BY.len());
    let extra = if r.sync_methods.len() > 1 {
        format!(" {:>9}", "÷ fdatas.")
    } else {
        String::new()
    };
    out!(
        o,
        "{:<w$}{} {:>9} {:>6} {:>9} {:>9}{extra}",
        "state",
        wr(None),
        "commits/s",
        "MiB/s",
        "÷ append.",
        "÷ recyc."
    );
    let x_of = |v: Option<f64>| v.map_or("-".to_string(), |f| format!("{f:.2}x"));
    for row in &r.results {
        let x = &row.result;
        if let Some(why) = &x.unsupported {
            hanging(
                &mut o,
                &format!("{:<w$}{} ", name(x), wr(Some(x))),
                w + 1,
                &format!("unsupported here: {}", in_dir(&why.text, r, dir)),
            );
            continue;
        }
        let extra = if r.sync_methods.len() > 1 {
            format!(" {:>9}", x_of(row.vs_fdatasync))
        } else {
            String::new()
        };
        out!(
            o,
            "{:<w$}{} {:>9.0} {:>6.1} {:>9} {:>9}{extra}",
            name(x),
            wr(Some(x)),
            x.commits_per_sec,
            x.mib_per_sec,
            x_of(row.vs_append),
            x_of(row.vs_overwrite)
        );
    }
    out!(
        o,
        "÷ X: commits/s over the X row's (compare their \"{DURABLE_BY}\" below)"
    );
    out!(o);
    out!(
        o,
        "{:<w$}{} {:<d$} {:>7} {:>7} {:>7}",
        "state",
        wr(None),
        DURABLE_BY,
        "p50",
        "p99",
        "max"
    );
    for row in r.results.iter().filter(|x| x.result.unsupported.is_none()) {
        let x = &row.result;
        let l = x.latency.clone().unwrap_or_default();
        out!(
            o,
            "{:<w$}{} {:<d$} {:>7} {:>7} {:>7}",
            name(x),
            wr(Some(x)),
            durable_by(x),
            time(l.p50_us),
            time(l.p99_us),
            time(l.max_us)
        );
    }
    o
}

/// The header of the column that says how commits were made durable.
const DURABLE_BY: &str = "durable by";

/// What the log did during its mode.
fn wal_lines(name: &str, x: &CommitResult, w: &fspace::bench::WalFigures) -> String {
    let mut o = String::new();
    // Each line wrapped to 80 columns, its later lines indented under it.
    let line = |o: &mut String, text: &str| hanging(o, "     ", 7, text);
    out!(o);
    let syncs = if w.syncs == 0 {
        "no fdatasync (each write was durable when it returned)".to_string()
    } else {
        format!(
            "{} fdatasyncs ({:.1} commits per sync)",
            w.syncs,
            x.commits as f64 / w.syncs as f64
        )
    };
    hanging(
        &mut o,
        &format!("{name}: "),
        7,
        &format!(
            "{} commits, {syncs}, {} segment switches ({} waited for the preparer)",
            x.commits, w.switches, w.switch_waits
        ),
    );
    let g = &w.group;
    if g.groups > 0 {
        line(
            &mut o,
            &format!(
                "group commit: {} groups of {:.1} records on average (largest {}); a flush took {} (the log's running average); {} gathers waited {} in all; followers: {} spun, {} blocked; {} group writes overlapped a sync or another write",
                g.groups,
                g.mean_size(),
                g.largest_group,
                time(g.flush_time_ns as f64 / 1000.0),
                g.gather_waits,
                time(g.gather_wait_ns as f64 / 1000.0),
                g.follower_spins,
                g.follower_waits,
                g.overlapped_writes
            ),
        );
    }
    if let (true, Some(l)) = (w.switch_commits > 0, &x.latency) {
        line(
            &mut o,
            &format!(
                "{} commits opened a new segment: mean latency {}, {:.2}x the p99 of all commits ({})",
                w.switch_commits,
                time(w.switch_mean_us),
                w.switch_mean_us / l.p99_us.max(f64::MIN_POSITIVE),
                time(l.p99_us)
            ),
        );
    }
    line(
        &mut o,
        &format!(
            "segments prepared during the run: {} created{}, {} recycled",
            w.prepared_created,
            w.prepare_strategy
                .as_ref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
            w.prepared_recycled
        ),
    );
    if let Some(why) = &w.prepare_reason {
        line(&mut o, &format!("why: {why}"));
    }
    let io = &w.io;
    line(
        &mut o,
        &format!("sync method: {} ({})", io.sync_method, io.sync_chosen_by),
    );
    match (io.direct_io, io.direct_io_by.wants()) {
        (true, _) => line(
            &mut o,
            &format!("O_DIRECT writes: yes: {}", io.direct_io_by),
        ),
        (false, true) => line(
            &mut o,
            &format!("O_DIRECT writes: no: refused (wanted: {})", io.direct_io_by),
        ),
        (false, false) => line(&mut o, &format!("O_DIRECT writes: no: {}", io.direct_io_by)),
    }
    for f in &io.fallbacks {
        line(&mut o, &format!("fell back: {f}"));
    }
    let pad = if io.pad_flushes { "on" } else { "off" };
    line(
        &mut o,
        &format!("page padding: {pad}: {}", io.pad_flushes_by),
    );
    let nocow = if io.nocow { "on" } else { "off" };
    line(&mut o, &format!("NOCOW segments: {nocow}: {}", io.nocow_by));
    o
}
