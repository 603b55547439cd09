//! Untorn page writes in the probe's text.

use crate::fmt::{format_count as commas, format_human, indented, within, wrap};
use fspace::probe::ProbeResult;

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
pub(super) fn untorn_text(r: &ProbeResult) -> String {
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
                let why = within(
                    c.not_measured.as_ref().map_or(&c.text, |r| &r.text),
                    &r.directory,
                );
                for (i, line) in wrap(&format!("not measured: {why}"), 69).iter().enumerate() {
                    out!(o, "  {:<6} {line}", if i == 0 { page.as_str() } else { "" });
                }
            }
        }
    }
    let mut cached = false;
    for a in &u.answers {
        if !a.untorn && a.limit == Some(fspace::untorn::Limit::Buffered) {
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
        fspace::untorn::Limits::Unknown { reason } => {
            format!("unknown limits ({})", reason.text)
        }
        _ => "the kernel refused every trial write".into(),
    })
}
