//! Whether durable commits reached the device, as the devices' flush
//! counters tell ([`fspace::Flushes`], [`fspace::probe::Durability`]):
//! the probe's and `bench commit`'s text, and the words the probe's HTML
//! section (probe/report/durability.rs) shares with them.

use crate::fmt::{format_count as commas, wrap};
use fspace::probe::ProbeResult;
use fspace::{FlushVerdict, Flushes};

/// The banner that marks figures as not durable, in text and HTML.
pub(crate) const NOT_DURABLE: &str = "NOT DURABLE";

/// `flushes / syncs` in a few words: `1.00`, or `-` without syncs.
pub(crate) fn per_sync(f: &Flushes) -> String {
    f.per_sync.map_or("-".into(), |p| format!("{p:.2}"))
}

/// The devices counted and what their caches declare: `loop0 (write
/// back)`.
pub(crate) fn devices(f: &Flushes) -> String {
    let list: Vec<String> = f
        .devices
        .iter()
        .map(|d| {
            let fua = if d.fua == Some(true) { ", FUA" } else { "" };
            format!("{} ({}{fua})", d.name, d.write_cache.name())
        })
        .collect();
    list.join(", ")
}

/// `text` wrapped to 80 columns under a two-space indent.
fn lines(o: &mut String, text: &str, first: &str) {
    for (i, line) in wrap(text, 76).iter().enumerate() {
        out!(o, "{}{line}", if i == 0 { first } else { "    " });
    }
}

/// The probe's "Durability" section.
pub(crate) fn probe_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    let Some(d) = &r.commit.durability else {
        return o;
    };
    let f = &d.methods[0].flushes;
    if d.methods.iter().all(|m| m.flushes.devices.is_empty()) {
        out!(o, "\nDurability");
        lines(&mut o, &d.reason, "  ");
        return o;
    }
    out!(
        o,
        "\nDurability: device cache flushes counted during the commits"
    );
    lines(&mut o, &format!("on {}", devices(f)), "  ");
    out!(
        o,
        "  {:<13} {:>8} {:>8} {:>8} {:>9} {:>10}  {}",
        "synced by",
        "commits",
        "syncs",
        "flushes",
        "per sync",
        "per commit",
        "verdict"
    );
    for m in &d.methods {
        let f = &m.flushes;
        out!(
            o,
            "  {:<13} {:>8} {:>8} {:>8} {:>9} {:>10}  {}",
            m.method,
            commas(f.commits as f64),
            commas(f.syncs as f64),
            commas(f.flushes as f64),
            per_sync(f),
            f.per_commit.map_or("-".into(), |p| format!("{p:.2}")),
            f.verdict
        );
    }
    let head = if d.not_durable() {
        format!("{NOT_DURABLE}: ")
    } else {
        String::new()
    };
    lines(&mut o, &format!("{head}{}", d.reason), "  ");
    lower_lines(&mut o, f);
    o
}

/// The devices further down, for the record.
fn lower_lines(o: &mut String, f: &Flushes) {
    if f.lower.is_empty() {
        return;
    }
    let list: Vec<String> = f
        .lower
        .iter()
        .map(|d| format!("{} {}", d.name, commas(d.flushes as f64)))
        .collect();
    lines(
        o,
        &format!(
            "further down (with everything else on them): {}",
            list.join(", ")
        ),
        "  ",
    );
}

/// `bench commit`'s lines: one per run that counted.
pub(crate) fn bench_text<'a>(
    runs: impl IntoIterator<Item = (String, &'a fspace::bench::CommitResult)>,
) -> String {
    let mut o = String::new();
    let runs: Vec<(String, &Flushes)> = runs
        .into_iter()
        .filter_map(|(n, r)| Some((n, r.flushes.as_ref()?)))
        .collect();
    let Some((_, first)) = runs.first() else {
        return o;
    };
    if runs.iter().all(|(_, f)| f.devices.is_empty()) {
        lines(&mut o, &format!("device flushes: {}", first.reason), "");
        return o;
    }
    lines(
        &mut o,
        &format!("device flushes during the commits, on {}:", devices(first)),
        "",
    );
    for (name, f) in &runs {
        let verdict = if f.verdict.not_durable() {
            format!("{NOT_DURABLE} ({})", f.verdict)
        } else {
            f.verdict.to_string()
        };
        lines(
            &mut o,
            &format!(
                "{name}: {} flushes for {} syncs{} ({} per sync): {verdict}",
                commas(f.flushes as f64),
                commas(f.syncs as f64),
                if f.commits == f.syncs {
                    String::new()
                } else {
                    format!(" of {} commits", commas(f.commits as f64))
                },
                per_sync(f)
            ),
            "  ",
        );
    }
    // Every run flushed: the rows said it all.
    let Some(worst) = runs
        .iter()
        .find(|(_, f)| f.verdict == FlushVerdict::NotDurable)
        .or_else(|| {
            runs.iter()
                .find(|(_, f)| f.verdict != FlushVerdict::Flushed)
        })
    else {
        lower_lines(&mut o, runs[0].1);
        return o;
    };
    let head = if worst.1.verdict.not_durable() {
        format!("{NOT_DURABLE}: ")
    } else {
        String::new()
    };
    lines(&mut o, &format!("{head}{}", worst.1.reason), "  ");
    lower_lines(&mut o, worst.1);
    o
}
