//! `fspace probe`: progress, `--save`, the files asked for (the HTML
//! report, the engines' configuration, the Prometheus metrics) and the
//! text or JSON around [`fspace::probe::probe`]; with `--compare-saved`,
//! the saved setup measured again. What it prints and writes is rendered
//! by the modules below (text/, report/, prometheus/, engines.rs): they
//! take the library's results and call nothing of this command's.

mod engines;
mod prometheus;
mod report;
mod text;

use crate::cli::ProbeArgs;
use crate::fmt::labelled;
use crate::output::{cancel_on_signals, emit, print_json, Progress};
use fspace::probe::{CompareVerdict, Level, ProbeOptions, ProbeProgress, ProbeResult};
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

/// A probe: the paths it writes to checked first, then the measurements,
/// the files asked for, and the text (or the JSON).
fn probe(a: &Args<'_>) -> fspace::Result<()> {
    if let Some(r) = a.report {
        check_report_path(r)?;
    }
    if let Some(d) = a.write_config {
        engines::check_dir(d)?;
    }
    if let Some(p) = a.prometheus {
        prometheus::check_path(p)?;
    }
    let r = measure(a)?;
    if let Some(path) = a.report {
        write_report(path, &report::html(&r))?;
    }
    let configs = match a.write_config {
        Some(d) => engines::write(d, &r)?,
        None => vec![],
    };
    let saved = if a.save {
        Some(fspace::probe::save(&r, &saved_results()?, a.force)?)
    } else {
        None
    };
    if let Some(p) = a.prometheus {
        prometheus::write(p, &prometheus::probe_metrics(&r).render())?;
    }
    if a.json {
        return print_json(&r);
    }
    let mut o = text::result(&r);
    if a.save && !a.force {
        o.push_str(&text::undecided(&r));
    }
    o.push_str(&text::saved(&r, saved.as_deref()));
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

/// The measurements: the probe, then with `--save` the baseline runs; an
/// interruption keeps nothing.
fn measure(a: &Args<'_>) -> fspace::Result<ProbeResult> {
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
    Ok(r)
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
        prometheus::check_path(p)?;
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
        prometheus::write(p, &prometheus::compare_metrics(&c).render())?;
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
    let mut o = text::comparison(&c);
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
