//! `fspace probe`: progress, the table, JSON, `--save` and the HTML report
//! around [`fspace::probe::probe`].

use crate::cli::ProbeArgs;
use crate::fmt::{
    format_count as commas, format_human, format_seconds as secs, hanging, labelled, within, wrap,
    LOG_VS_APPEND,
};
use crate::output::{cancel_on_signals, emit, print_json, Progress};
use fspace::probe::{
    CompareVerdict, CouldNotTell, Level, ProbeOptions, ProbeProgress, ProbeResult, SpaceState,
    ALPHA,
};
use fspace::NoteKind;
use rustix::io::Errno;
use std::path::Path;

struct Args<'a> {
    dir: &'a Path,
    level: Level,
    json: bool,
    report: Option<&'a Path>,
    save: bool,
    force: bool,
    quiet: bool,
    engines: &'a [fspace::probe::Engine],
    write_config: Option<&'a Path>,
    prometheus: Option<&'a Path>,
    writers: usize,
}

/// `fspace probe`.
pub(crate) fn run(a: ProbeArgs) -> fspace::Result<()> {
    if a.compare_saved {
        return compare(&a);
    }
    let level = if a.quick {
        Level::Quick
    } else if a.full {
        Level::Full
    } else {
        Level::Standard
    };
    probe(&Args {
        dir: &a.dir,
        level,
        json: a.json,
        report: a.report.as_deref(),
        save: a.save,
        force: a.force,
        quiet: a.quiet,
        engines: &a.engines,
        write_config: a.write_config.as_deref(),
        prometheus: a.prometheus.as_deref(),
        writers: a.writers as usize,
    })
}

fn probe(a: &Args<'_>) -> fspace::Result<()> {
    if let Some(r) = a.report {
        check_report_path(r)?;
    }
    if let Some(d) = a.write_config {
        crate::engines::check_dir(d)?;
    }
    if let Some(p) = a.prometheus {
        crate::prometheus::check_path(p)?;
    }
    let cancel = cancel_on_signals();
    let bar = Progress::steps("probe", a.quiet);
    let show = |p: &ProbeProgress| show_progress(&bar, a.quiet, p);
    let opts = ProbeOptions::default()
        .level(a.level)
        .cancel(Some(&cancel))
        .progress(Some(&show))
        .engines(a.engines)
        .writers(a.writers);
    let result = fspace::probe::probe(a.dir, &opts);
    drop(bar);
    let mut r = result?;
    if a.save && !cancel.load(std::sync::atomic::Ordering::Relaxed) {
        // The runs a later --compare-saved compares with, measured as it
        // measures its own.
        let bar = Progress::steps("baseline", a.quiet);
        let show = |p: &ProbeProgress| show_progress(&bar, a.quiet, p);
        let opts = fspace::probe::CompareOptions::default()
            .cancel(Some(&cancel))
            .progress(Some(&show));
        let measured = fspace::probe::measure_baseline(&mut r, &opts);
        drop(bar);
        measured?;
    }
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        // Interrupted after the last measurement: keep nothing.
        return Err(fspace::Error::refused(
            "probe",
            &r.directory,
            Errno::CANCELED.raw_os_error(),
            "interrupted; nothing was saved or written",
        ));
    }
    if let Some(path) = a.report {
        write_report(path, &crate::report::html(&r))?;
    }
    let configs = match a.write_config {
        Some(d) => crate::engines::write(d, &r)?,
        None => vec![],
    };
    let saved = if a.save {
        Some(fspace::probe::save(&r, &saved_results()?, a.force)?)
    } else {
        None
    };
    if let Some(p) = a.prometheus {
        crate::prometheus::write(p, &crate::prometheus::probe_metrics(&r).render())?;
    }
    if a.json {
        return print_json(&r);
    }
    let mut o = text(&r);
    let undecided = r.undecided();
    if a.save && !a.force && !undecided.is_empty() {
        let names: Vec<String> = undecided
            .iter()
            .map(|x| {
                if x.too_noisy {
                    x.intent.name().to_string()
                } else {
                    format!("the {} sync method", x.intent.name())
                }
            })
            .collect();
        let text = format!(
            "Not saved for {}: too noisy to decide (see above), so the built-in choice stays. Run again on a quieter machine, or add --force to keep the result anyway.",
            names.join(", ")
        );
        o.push('\n');
        for line in wrap(&text, 78) {
            out!(o, "{line}");
        }
    }
    let baseline = match &r.commit.baseline {
        Some(b) => format!(
            " `fspace probe --compare-saved` will compare with {} runs of {:.0} s of the recommended log setup measured after the probe: {} commits/s (runs {}-{}){}.",
            b.runs.len(),
            b.seconds_per_run,
            commas(b.commits_per_sec),
            commas(b.runs.iter().copied().fold(f64::INFINITY, f64::min)),
            commas(b.runs.iter().copied().fold(0.0, f64::max)),
            if b.machine_busy {
                ", on a busy machine: save again on a quiet one"
            } else {
                ""
            }
        ),
        None => " The log could not be measured here: nothing for `fspace probe --compare-saved` to compare with.".into(),
    };
    let after = match &saved {
        Some(p) => format!(
            "Saved to {}: `fspace grow --strategy auto`, `fspace info`, the C API and library callers that name the state directory now follow these recommendations on this filesystem ({} at {}).{baseline}",
            p.display(),
            r.key.source,
            r.key.mount_point
        ),
        None => "Not saved: add --save so that `fspace grow --strategy auto` and the C API follow it here.".into(),
    };
    o.push('\n');
    for line in wrap(&after, 78) {
        out!(o, "{line}");
    }
    if let Some(p) = a.report {
        labelled(&mut o, "Report: ", &p.to_string_lossy());
    }
    if let Some(p) = a.prometheus {
        labelled(&mut o, "Metrics: ", &p.to_string_lossy());
    }
    for p in &configs {
        labelled(&mut o, "Wrote ", &p.to_string_lossy());
    }
    emit(&o)
}

/// One step of a probe or a comparison: on the bar, or as a line where
/// stderr is not a terminal; nothing with --quiet.
fn show_progress(bar: &Progress, quiet: bool, p: &ProbeProgress) {
    if quiet {
        return;
    }
    match bar.drawn() {
        true => bar.step(p.step, p.steps, &p.what),
        false => {
            // A closed stderr must not turn into a panic.
            use std::io::Write;
            let head = format!(
                "probe: [{}/{}] {:>5.1} s  ",
                p.step,
                p.steps,
                p.elapsed.as_secs_f64()
            );
            let mut line = String::new();
            labelled(&mut line, &head, &p.what);
            let _ = write!(std::io::stderr(), "{line}");
        }
    }
}

/// `fspace probe --compare-saved`: the saved setup measured again and
/// compared; exit 1 when regressed, 3 when nothing is saved, 4 when it
/// could not tell.
fn compare(a: &ProbeArgs) -> fspace::Result<()> {
    if let Some(p) = a.prometheus.as_deref() {
        crate::prometheus::check_path(p)?;
    }
    let store = saved_results()?;
    let cancel = cancel_on_signals();
    let bar = Progress::steps("compare", a.quiet);
    let show = |p: &ProbeProgress| show_progress(&bar, a.quiet, p);
    let opts = fspace::probe::CompareOptions::default()
        .threshold(a.threshold / 100.0)
        .cancel(Some(&cancel))
        .progress(Some(&show));
    let result = fspace::probe::compare_saved(&a.dir, &store, &opts);
    drop(bar);
    let Some(c) = result? else {
        crate::errors::set_exit_status(crate::errors::EXIT_NOTHING_SAVED);
        return Err(fspace::Error::refused(
            "probe --compare-saved",
            &a.dir,
            Errno::NOENT.raw_os_error(),
            format!(
                "nothing to compare with: no measurement of fspace's log is saved for this filesystem in {} (save one with `fspace probe --save`)",
                store.dir().join("probes").display()
            ),
        ));
    };
    if let Some(p) = a.prometheus.as_deref() {
        crate::prometheus::write(p, &crate::prometheus::compare_metrics(&c).render())?;
    }
    match c.verdict {
        CompareVerdict::Regressed => crate::errors::set_exit_status(crate::errors::EXIT_REGRESSED),
        CompareVerdict::CouldNotTell => {
            crate::errors::set_exit_status(crate::errors::EXIT_COULD_NOT_TELL);
        }
        _ => {}
    }
    if a.json {
        return print_json(&c);
    }
    let mut o = String::new();
    labelled(
        &mut o,
        "fspace probe --compare-saved: ",
        &c.directory.to_string_lossy(),
    );
    indented(
        &mut o,
        &format!(
            "{} from {} at {}",
            c.key.fs_type, c.key.source, c.key.mount_point
        ),
    );
    indented(
        &mut o,
        &format!(
            "saved {} by {} in {}",
            c.measured_utc,
            c.measured_by,
            c.saved_path.display()
        ),
    );
    indented(&mut o, &format!("compared: {}", c.compared));
    if let Some(v) = &c.saved_log_vs_append {
        let ratio = match (v.ratio, v.ratio_low, v.ratio_high) {
            (Some(r), Some(lo), Some(hi)) => format!(" ({r:.2}x, runs {lo:.2}-{hi:.2}x)"),
            _ => String::new(),
        };
        indented(
            &mut o,
            &format!(
                "when saved, {}: {}{ratio}; appending is not measured again here",
                LOG_VS_APPEND, v.outcome
            ),
        );
    }
    indented(
        &mut o,
        &format!("machine while measuring: {}", c.machine.summary()),
    );
    let range = |runs: &[f64]| {
        let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = runs.iter().copied().fold(0.0, f64::max);
        if runs.len() > 1 {
            format!("runs {}-{}", commas(lo), commas(hi))
        } else {
            format!("{} run", runs.len())
        }
    };
    out!(
        o,
        "  saved: {:>9} commits/s ({}, {})",
        commas(c.saved_commits_per_sec),
        range(&c.saved_runs),
        if c.from_baseline {
            "the baseline"
        } else {
            "the probe's"
        }
    );
    for (i, b) in c.batches.iter().enumerate() {
        out!(
            o,
            "  {}: {:>9} commits/s ({}), {:.2}x, p = {:.3}",
            if i == 0 { "fresh" } else { "again" },
            commas(b.commits_per_sec),
            range(&b.runs),
            b.ratio,
            b.p_value
        );
    }
    // 0.2 * 100 is 20.000000000000004: whole percentages without digits.
    let pct = c.threshold * 100.0;
    let pct = if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    };
    indented(
        &mut o,
        &format!(
            "rule: regressed when the fresh median is more than {pct}% below the saved one and the rank test separates the runs (p at most {ALPHA}), in two batches in a row, on a quiet machine"
        ),
    );
    let first = c.batches.first();
    let verdict = match (c.verdict, c.could_not_tell) {
        (CompareVerdict::Regressed, _) => format!(
            "REGRESSED: two batches of fresh runs were each slower than the saved runs beyond the noise; all together {:.0}% below the saved median (exit status 1).",
            (1.0 - c.ratio) * 100.0
        ),
        (CompareVerdict::CouldNotTell, Some(CouldNotTell::MachineBusy)) => format!(
            "COULD NOT TELL: the fresh runs were {:.0}% below the saved median, but the machine was busy ({}), which slows commits as a slower disk does. Run again when it is quiet (exit status 4).",
            (1.0 - first.map_or(c.ratio, |b| b.ratio)) * 100.0,
            c.machine.reasons.join("; ")
        ),
        (CompareVerdict::CouldNotTell, Some(CouldNotTell::BusyBaseline)) => format!(
            "COULD NOT TELL: the fresh median is {:.0}% {} the baseline's, but the baseline was measured on a busy machine: a slow baseline hides a slower disk. Save again on a quiet machine (exit status 4).",
            ((c.ratio - 1.0) * 100.0).abs(),
            if c.ratio < 1.0 { "below" } else { "above" }
        ),
        (CompareVerdict::CouldNotTell, Some(CouldNotTell::NoBaseline)) => format!(
            "COULD NOT TELL: the fresh runs were {:.0}% below the saved median, but the saved file has no baseline (an earlier fspace saved it): the probe's own runs are shorter and were measured among other states. Save again with this version (exit status 4).",
            (1.0 - first.map_or(c.ratio, |b| b.ratio)) * 100.0
        ),
        (CompareVerdict::CouldNotTell, _) => format!(
            "COULD NOT TELL: the fresh runs were {:.0}% below the saved median, but {} saved against {} fresh runs are too few for the rank test to tell (p cannot go below {:.3}). Save again with this version (exit status 4).",
            (1.0 - first.map_or(c.ratio, |b| b.ratio)) * 100.0,
            c.saved_runs.len(),
            first.map_or(0, |b| b.runs.len()),
            c.smallest_p_value
        ),
        _ if c.ratio < 1.0 => format!(
            "No evidence of a change: the fresh median is {:.0}% below the saved one.",
            (1.0 - c.ratio) * 100.0
        ),
        _ => format!(
            "No evidence of a change: the fresh median is {:.0}% above the saved one.",
            (c.ratio - 1.0) * 100.0
        ),
    };
    o.push('\n');
    for line in wrap(&verdict, 78) {
        out!(o, "{line}");
    }
    for n in &c.notes {
        indented(&mut o, &format!("note: {n}"));
    }
    if let Some(p) = a.prometheus.as_deref() {
        labelled(&mut o, "Metrics: ", &p.to_string_lossy());
    }
    emit(&o)
}

/// Refuses a report path whose directory is missing, or that names a
/// directory, before the measurements run (not after 30 s of work).
fn check_report_path(p: &Path) -> fspace::Result<()> {
    let refuse =
        |errno: Errno, msg: &str| fspace::Error::refused("report", p, errno.raw_os_error(), msg);
    if p.is_dir() {
        return Err(refuse(
            Errno::ISDIR,
            "is a directory; give a file name such as probe.html",
        ));
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(refuse(Errno::NOENT, "its directory does not exist"));
    }
    Ok(())
}

fn write_report(p: &Path, html: &str) -> fspace::Result<()> {
    std::fs::write(p, html).map_err(|e| fspace::Error::from_io("write report", p, None, e))
}

fn text(r: &ProbeResult) -> String {
    let mut o = head(r);
    o.push_str(&commits_text(r));
    o.push_str(&crate::durability::probe_text(r));
    o.push_str(&growth_text(r));
    o.push_str(&sweep_text(r));
    o.push_str(&crate::curves::probe_text(r));
    o.push_str(&untorn_text(r));
    o.push_str(&recommendations_text(r));
    o.push_str(&crate::engines::text(r));
    o
}

/// The directory, the filesystem and its capabilities.
fn head(r: &ProbeResult) -> String {
    let mut o = String::new();
    let f = &r.filesystem;
    labelled(&mut o, "fspace probe: ", &r.directory.to_string_lossy());
    indented(
        &mut o,
        &format!(
            "{}{}",
            f.display_name(),
            match (&f.source, &f.mount_point) {
                (Some(s), Some(m)) => format!(" from {s} at {}", m.display()),
                _ => String::new(),
            }
        ),
    );
    let unit = match &f.allocation_unit {
        Some(u) if u.bytes != f.block_size => format!(
            "; allocation unit {} ({})",
            format_human(u.bytes),
            u.source.name()
        ),
        _ => String::new(),
    };
    let run = format!(
        "{} run in {:.1} s (budget {:.0} s); {} free of {}; block size {}{unit}{}{}",
        r.level.name(),
        r.elapsed.as_secs_f64(),
        r.budget_seconds,
        format_human(f.free_bytes),
        format_human(f.total_bytes),
        f.block_size,
        if f.copy_on_write {
            "; copy-on-write"
        } else {
            ""
        },
        if f.network { "; network" } else { "" }
    );
    indented(&mut o, &run);
    if let Some(c) = f.caps() {
        let list: Vec<String> = c
            .named()
            .iter()
            .map(|(n, c)| format!("{n} {}", if c.supported { "yes" } else { "no" }))
            .collect();
        indented(&mut o, &format!("capabilities: {}", list.join(", ")));
    }
    match &f.block_devices {
        Ok(devs) => {
            for d in devs {
                crate::info::device_lines(&mut o, d, 0, "  ");
            }
        }
        Err(why) => labelled(&mut o, "  device:        ", why),
    }
    o
}

/// `text` wrapped to 80 columns: two spaces in, four on later lines.
fn indented(o: &mut String, text: &str) {
    for (i, line) in wrap(text, 76).iter().enumerate() {
        out!(o, "{}{line}", if i == 0 { "  " } else { "    " });
    }
}

/// `lo-hi` of a state's runs (the median alone for one run).
fn runs_range(s: &fspace::probe::StateResult) -> String {
    let (lo, hi) = s.range();
    if s.runs.len() < 2 {
        return commas(s.commits_per_sec);
    }
    let full = format!("{}-{}", commas(lo), commas(hi));
    if full.chars().count() <= 14 {
        return full;
    }
    // Above a million commits/s (tmpfs): thousands, to keep 80 columns.
    format!("{:.0}k-{:.0}k", lo / 1e3, hi / 1e3)
}

/// One row of the commit tables (76 columns); scratch files named within
/// the probed directory `dir`.
fn commit_row(o: &mut String, label: &str, s: &fspace::probe::StateResult, dir: &Path) {
    if let Some(u) = &s.unsupported {
        let why = format!("not supported here: {}", within(u, dir));
        hanging(o, &format!("  {label:<25} "), 28, &why);
        return;
    }
    out!(
        o,
        "  {:<25} {:>9} {:>14} {:>7} {:>7} {:>7}",
        label,
        commas(s.commits_per_sec),
        runs_range(s),
        s.vs_append.map_or("-".into(), |v| format!("{v:.2}x")),
        commas(s.p50_us),
        commas(s.p99_us)
    );
}

/// The commit rate per space state and per sync method.
fn commits_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    let c = &r.commit;
    out!(
        o,
        "\nCommits: {} pwrite + fdatasync, one writer; {} alternating round{}",
        format_human(c.record_size as u64),
        c.rounds,
        if c.rounds == 1 { "" } else { "s" },
    );
    out!(
        o,
        "of up to {:.2} s per state; median and range of the runs",
        c.seconds_per_mode
    );
    let header = |o: &mut String, first: &str| {
        out!(
            o,
            "  {:<25} {:>9} {:>14} {:>7} {:>7} {:>7}",
            first,
            "commits/s",
            "runs",
            "vs app.",
            "p50 µs",
            "p99 µs"
        );
    };
    indented(
        &mut o,
        &format!("machine while measuring: {}", r.machine.summary()),
    );
    header(&mut o, "space");
    for s in &c.states {
        commit_row(&mut o, s.state.label(), s, &r.directory);
    }
    if let Some(w) = r.state(SpaceState::Wal).and_then(|s| s.wal.as_ref()) {
        let text = format!(
            "(fspace wal: {} fdatasync{}, {} segment switch{}, {} wait{} for a segment; new segments by {})",
            commas(w.syncs as f64),
            if w.syncs == 1 { "" } else { "s" },
            w.switches,
            if w.switches == 1 { "" } else { "es" },
            w.switch_waits,
            if w.switch_waits == 1 { "" } else { "s" },
            w.prepare_strategy.as_deref().unwrap_or("none during the run")
        );
        indented(&mut o, &text);
    }
    if c.sync_methods.len() > 1 {
        out!(
            o,
            "\nSync methods: 8 KiB commits into written (recycled) space, same rounds"
        );
        header(&mut o, "method");
        for m in &c.sync_methods {
            let label = match m.method {
                fspace::SyncMethod::Fdatasync => "pwrite + fdatasync",
                fspace::SyncMethod::Fsync => "pwrite + fsync",
                fspace::SyncMethod::Dsync => "pwritev2(RWF_DSYNC)",
                fspace::SyncMethod::DirectDsync => "O_DIRECT + RWF_DSYNC",
            };
            commit_row(&mut o, label, &m.figures, &r.directory);
        }
    }
    o
}

/// The growth time per strategy.
fn growth_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    let g = &r.growth;
    out!(
        o,
        "\nGrowth: a fresh file to {}, fdatasync included",
        format_human(g.target_size)
    );
    let rounds = g.results.iter().map(|x| x.runs.len()).max().unwrap_or(0);
    if rounds > 1 {
        out!(
            o,
            "  {rounds} alternating rounds: the median round, and the range"
        );
    }
    out!(
        o,
        "  {:<13} {:>10} {:>19} {:>12} {:>11}",
        "strategy",
        "time",
        "range",
        "throughput",
        "allocated"
    );
    for x in &g.results {
        if let Some(u) = &x.unsupported {
            hanging(
                &mut o,
                &format!("  {:<13} ", x.strategy.name()),
                16,
                &format!("not supported here: {}", within(u, &r.directory)),
            );
            continue;
        }
        // Only zero-fill moves data; for the others a rate is only a
        // restatement of the time.
        let tput = if x.strategy == fspace::Strategy::ZeroFill {
            format!("{}/s", format_human(x.bytes_per_sec as u64))
        } else {
            "no data".to_string()
        };
        // Each round's time for the median round's bytes (a zero-fill
        // stopped at the time cap wrote a different amount each round).
        let lo = x.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = x.runs.iter().copied().fold(0.0, f64::max);
        let range = if x.runs.len() > 1 && lo.is_finite() && lo > 0.0 {
            format!(
                "{}-{}",
                secs(x.bytes as f64 / hi),
                secs(x.bytes as f64 / lo)
            )
        } else {
            String::new()
        };
        out!(
            o,
            "  {:<13} {:>10} {:>19} {:>12} {:>11}",
            x.strategy.name(),
            secs(x.seconds),
            range,
            tput,
            format_human(x.allocated_bytes),
        );
        if x.capped {
            // Under the row: beside it, it would pass 80 columns.
            out!(
                o,
                "  {:<13} (stopped at the time cap after {})",
                "",
                format_human(x.bytes)
            );
        }
    }
    o
}

/// The record-size sweep (full runs only).
fn sweep_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    if let Some(sw) = &r.sweep {
        out!(o, "\nRecord-size sweep (commits/s; MiB/s)");
        out!(
            o,
            "  {:<9} {:>22} {:>22} {:>22}",
            "record",
            "appended",
            "recycled",
            "fspace wal"
        );
        for rec in fspace::probe::SWEEP_RECORDS {
            let cell = |st: SpaceState| {
                sw.iter()
                    .find(|p| p.record_size == rec && p.state == st)
                    .map_or("-".into(), |p| {
                        if p.unsupported.is_some() {
                            "n/a".into()
                        } else {
                            format!("{} ; {:.1}", commas(p.commits_per_sec), p.mib_per_sec)
                        }
                    })
            };
            out!(
                o,
                "  {:<9} {:>22} {:>22} {:>22}",
                format_human(rec as u64),
                cell(SpaceState::Appended),
                cell(SpaceState::Recycled),
                cell(SpaceState::Wal)
            );
        }
    }
    o
}

/// `lo-hi` of a side's runs, in thousands where the full figures would
/// not fit 12 columns.
fn writes_range(w: &fspace::probe::WriteRuns) -> String {
    let lo = w.runs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = w.runs.iter().copied().fold(0.0, f64::max);
    if w.runs.len() < 2 {
        return commas(w.writes_per_sec);
    }
    let full = format!("{}-{}", commas(lo), commas(hi));
    if full.chars().count() <= 12 {
        return full;
    }
    format!("{:.0}k-{:.0}k", lo / 1e3, hi / 1e3)
}

/// Untorn page writes: the limits, what they cost against plain writes
/// where they exist (or why not measured), and the answer per page size
/// and I/O path.
fn untorn_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    let u = &r.untorn;
    if let Some(why) = u.facts.as_ref().and_then(|f| none_here(f, &u.answers)) {
        // Said once: no page size, no I/O path (the JSON has each answer).
        out!(o);
        for (i, line) in wrap(&format!("Untorn writes: none here ({why})"), 78)
            .iter()
            .enumerate()
        {
            out!(o, "{}{line}", if i == 0 { "" } else { "  " });
        }
        return o;
    }
    out!(o, "\nUntorn writes (RWF_ATOMIC)");
    match (&u.facts, &u.error) {
        (Some(f), _) => indented(&mut o, &format!("statx: {}", f.limits.words())),
        (None, Some(e)) => indented(&mut o, &format!("the facts could not be read: {e}")),
        (None, None) => {}
    }
    if let Some(c) = u.cost.iter().find(|c| c.measured) {
        indented(
            &mut o,
            &format!(
                "cost: O_DIRECT page writes + RWF_DSYNC into written space ({} page-aligned offsets in a zero-filled file of {} per side), with and without RWF_ATOMIC; {} alternating round{} of up to {:.2} s per side; medians and ranges of the runs, the ratio untorn ÷ plain per round",
                c.offsets,
                format_human(c.file_size),
                c.ratios.len(),
                if c.ratios.len() == 1 { "" } else { "s" },
                c.seconds_per_run
            ),
        );
        out!(
            o,
            "  {:<6} {:<8} {:>8} {:>12} {:>8} {:>12} {:>6} {:>9}",
            "page",
            "path",
            "plain/s",
            "runs",
            "untorn/s",
            "runs",
            "ratio",
            "rounds"
        );
    }
    for c in &u.cost {
        let page = format_human(c.page_size);
        match (c.measured, c.ratio, c.ratio_min, c.ratio_max) {
            (true, Some(ratio), Some(lo), Some(hi)) => out!(
                o,
                "  {:<6} {:<8} {:>8} {:>12} {:>8} {:>12} {:>6} {:>9}",
                page,
                c.path.map_or("-", |p| p.name()),
                commas(c.plain.writes_per_sec),
                writes_range(&c.plain),
                commas(c.untorn.writes_per_sec),
                writes_range(&c.untorn),
                format!("{ratio:.2}x"),
                format!("{lo:.2}-{hi:.2}")
            ),
            _ => {
                let why = within(c.not_measured.as_deref().unwrap_or(&c.text), &r.directory);
                for (i, line) in wrap(&format!("not measured: {why}"), 69).iter().enumerate() {
                    out!(o, "  {:<6} {line}", if i == 0 { page.as_str() } else { "" });
                }
            }
        }
    }
    let mut cached = false;
    for a in &u.answers {
        if !a.untorn && a.limit == Some("buffered") {
            cached = true;
            continue;
        }
        let cost = a
            .cost
            .as_ref()
            .map_or(String::new(), |c| format!("; cost {}", c.words()));
        indented(
            &mut o,
            &format!(
                "{} pages, {}: {}{cost}",
                format_human(a.page_size),
                a.io.name(),
                a.short()
            ),
        );
    }
    if cached {
        indented(
            &mut o,
            "through the page cache: never untorn (only O_DIRECT writes are)",
        );
    }
    o
}

/// Why no page write is untorn here, in a few words, when none is: the
/// limits `statx` reports (or the kernel's refusal of every trial).
fn none_here(
    f: &fspace::untorn::UntornFacts,
    answers: &[fspace::untorn::Answer],
) -> Option<String> {
    if answers.is_empty() || answers.iter().any(|a| a.untorn) {
        return None;
    }
    Some(match &f.limits {
        fspace::untorn::Limits::Zero => "statx reports no untorn unit for files".into(),
        fspace::untorn::Limits::NotReported => {
            "the filesystem reports no untorn-write limits".into()
        }
        fspace::untorn::Limits::Unknown { reason, .. } => format!("unknown limits ({reason})"),
        _ => "the kernel refused every trial write".into(),
    })
}

/// The recommendations and the notes.
fn recommendations_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    let c = &r.commit;
    out!(o, "\nRecommendations");
    for rec in &r.recommendations {
        out!(o, "  {:<7} {}", rec.intent.name(), rec.summary);
        if rec.too_noisy {
            out!(o, "          (too noisy to decide: the built-in choice)");
        }
        for line in wrap(&within(&rec.reason, &r.directory), 70) {
            out!(o, "          {line}");
        }
        if let (Some(m), Some(why)) = (rec.sync_method, &rec.sync_reason) {
            out!(o, "          commits made durable by {m}");
            if rec.sync_too_noisy {
                out!(o, "          (too noisy to decide: the built-in choice)");
            }
            for line in wrap(why, 70) {
                out!(o, "          {line}");
            }
        }
        if let Some(v) = &rec.log_vs_append {
            out!(o, "          {}: {}", LOG_VS_APPEND, v.outcome);
            for line in wrap(&v.text, 70) {
                out!(o, "          {line}");
            }
        }
    }
    if c.prediction.is_some() || c.log_check.is_some() || c.log_space.is_some() {
        out!(o, "\nExpected");
    }
    if let Some(k) = c.log_check.as_ref().filter(|k| !k.measured()) {
        let text = format!(
            "The states suggested {}; no time was left to measure fspace's log that way against its built-in setup ({}), so the built-in setup stays.",
            k.setup, k.built_in_setup
        );
        for line in wrap(&text, 76) {
            out!(o, "  {line}");
        }
    }
    if let Some(k) = c.log_check.as_ref().filter(|k| k.measured()) {
        let text = format!(
            "The states suggested {}; fspace's log measured that way {} against {} commits/s with its built-in setup ({}), {} alternating runs each: {}.",
            k.setup,
            runs_range(&k.recommended),
            runs_range(&k.built_in),
            k.built_in_setup,
            k.recommended.runs.len(),
            if k.confirmed {
                "the log itself is faster, so the suggestion stands"
            } else {
                "the log itself is not faster, so the built-in setup stays"
            }
        );
        for line in wrap(&text, 76) {
            out!(o, "  {line}");
        }
    }
    if let Some(p) = &c.prediction {
        let runs = if p.low < p.high {
            format!("runs {}-{}; ", commas(p.low), commas(p.high))
        } else {
            String::new()
        };
        let w = p.log.as_ref().map_or(1, |l| l.writers);
        let (writers, flag) = match w {
            1 => ("1 writer".to_string(), String::new()),
            w => (format!("{w} writers"), format!(" --writers {w}")),
        };
        let text = format!(
            "fspace's log with {} should reach about {} commits/s here ({runs}{writers}, 8 KiB records; from {}). Check it: fspace bench commit --mode wal{flag} --seconds 30 {}",
            p.setup,
            commas(p.commits_per_sec),
            p.basis,
            r.directory.display()
        );
        for line in wrap(&text, 76) {
            out!(o, "  {line}");
        }
    }
    if let Some(u) = &c.log_space {
        for line in wrap(
            &format!("The log's files after its runs: {}.", u.words()),
            76,
        ) {
            out!(o, "  {line}");
        }
    }
    let notes: Vec<String> = r
        .notes
        .iter()
        .map(|n| within(&n.text, &r.directory))
        .chain(c.states.iter().flat_map(|s| {
            s.notes
                .iter()
                .filter(|n| n.kind != NoteKind::OnePass)
                .map(move |n| {
                    format!(
                        "{}: {}",
                        s.state.name(),
                        within(&n.to_string(), &r.directory)
                    )
                })
        }))
        .collect();
    if !notes.is_empty() {
        out!(o, "\nNotes");
        for n in notes {
            for (i, line) in wrap(&n, 74).iter().enumerate() {
                out!(o, "  {} {line}", if i == 0 { "-" } else { " " });
            }
        }
    }
    o
}

/// Where `--save` keeps results: the state directory, as `grow`, `info` and
/// the log read them.
fn saved_results() -> fspace::Result<fspace::SavedResults> {
    fspace::SavedResults::state_dir().ok_or_else(|| {
        fspace::Error::refused(
            "save probe",
            Path::new("$HOME"),
            Errno::NOENT.raw_os_error(),
            format!(
                "no directory to save in: set {}, XDG_STATE_HOME or HOME",
                fspace::SavedResults::STATE_DIR_ENV
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::cli::threshold_arg;

    #[test]
    fn thresholds_are_percentages_between_0_and_100() {
        assert_eq!(threshold_arg("20"), Ok(20.0));
        assert_eq!(threshold_arg("12.5%"), Ok(12.5));
        for bad in ["0", "100", "-5", "abc", "nan", "inf", ""] {
            assert!(threshold_arg(bad).is_err(), "{bad:?} accepted");
        }
    }
}
