//! Untorn page writes in the probe's report: the limits, what the writes
//! cost against plain ones where that was measured (a chart and a table,
//! or why not), and the answers.

use super::chart::{chart, esc, Row, Scale};
use crate::fmt::{format_count as commas, format_human};
use fspace::probe::{ProbeResult, UntornSection};
use std::fmt::Write;

/// Untorn page writes: the limits, the cost chart and table where they
/// were measured (or why not), and the answers.
pub(super) fn html(r: &ProbeResult) -> String {
    let mut h = String::new();
    let u = &r.untorn;
    h.push_str("<h2>Untorn page writes</h2>\n");
    limits(&mut h, u);
    cost_chart(&mut h, u);
    cost_table(&mut h, u);
    answers(&mut h, u);
    h
}

/// The limits `statx` reports, or why they could not be read.
fn limits(h: &mut String, u: &UntornSection) {
    match (&u.facts, &u.error) {
        (Some(f), _) => {
            let _ = writeln!(
                h,
                "<p>Untorn-write limits (<code>statx</code>): {}.</p>",
                esc(&f.limits.words())
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(
                h,
                "<p>The untorn-write facts could not be read: {}.</p>",
                esc(&e.text)
            );
        }
        (None, None) => {}
    }
}

/// The chart of plain and untorn writes per second, where measured.
fn cost_chart(h: &mut String, u: &UntornSection) {
    let measured: Vec<&fspace::probe::UntornCost> = u.cost.iter().filter(|c| c.measured).collect();
    if let Some(c) = measured.first() {
        let _ = writeln!(
            h,
            "<p><code>O_DIRECT</code> page writes made durable by <code>RWF_DSYNC</code>, into written space              ({} page-aligned offsets in a zero-filled file of {} per side), with and without <code>RWF_ATOMIC</code>,              one writer; {} alternating round{} of up to {:.2} s per side. The bar is the median; the line and dots              over it are every run.</p>",
            c.offsets,
            format_human(c.file_size),
            c.ratios.len(),
            if c.ratios.len() == 1 { "" } else { "s" },
            c.seconds_per_run
        );
        let mut rows = vec![];
        for c in &measured {
            let group = format!(
                "{} pages{}",
                format_human(c.page_size),
                c.path
                    .map_or(String::new(), |p| format!(" ({} path)", p.name()))
            );
            for (label, w, class) in [("plain", &c.plain, "base"), ("RWF_ATOMIC", &c.untorn, "")] {
                rows.push(Row {
                    group: Some(group.clone()),
                    label: label.into(),
                    value: Some(w.writes_per_sec),
                    runs: w.runs.clone(),
                    text: format!("{} /s", commas(w.writes_per_sec)),
                    class,
                });
            }
        }
        h.push_str(&chart(
            "untorn-cost",
            "Durable O_DIRECT page writes per second, plain and untorn (higher is better)",
            "writes/s",
            Scale::Linear,
            &rows,
        ));
    }
}

/// The cost per page size: the rates and their ratio, or why it was not
/// measured.
fn cost_table(h: &mut String, u: &UntornSection) {
    h.push_str(
        "<table><tr><th>page</th><th>path</th><th class=n>plain/s</th><th class=n>untorn/s</th>\
         <th class=n>untorn ÷ plain</th><th class=n>rounds: range</th><th>finding</th></tr>\n",
    );
    for c in &u.cost {
        let page = format_human(c.page_size);
        match (c.measured, c.ratio, c.ratio_min, c.ratio_max) {
            (true, Some(ratio), Some(lo), Some(hi)) => {
                let _ = writeln!(
                    h,
                    "<tr><td>{page}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{ratio:.2}x</td>\
                     <td class=n>{}: {lo:.2}–{hi:.2}x</td><td>{}</td></tr>",
                    c.path.map_or("-", |p| p.name()),
                    commas(c.plain.writes_per_sec),
                    commas(c.untorn.writes_per_sec),
                    c.ratios.len(),
                    esc(&c.text)
                );
            }
            _ => {
                let _ = writeln!(
                    h,
                    "<tr><td>{page}</td><td>-</td><td class=n>-</td><td class=n>-</td><td class=n>-</td><td class=n>-</td><td>not measured: {}</td></tr>",
                    esc(c.not_measured.as_ref().map_or(&c.text, |r| &r.text))
                );
            }
        }
    }
    h.push_str("</table>\n");
}

/// The answer per page size and I/O path, with its reason.
fn answers(h: &mut String, u: &UntornSection) {
    if !u.answers.is_empty() {
        h.push_str("<dl class=\"recs\">\n");
        for a in &u.answers {
            let _ = writeln!(
                h,
                "<dt>{} pages, {}: <span class=\"what\">{}</span></dt><dd>{}</dd>",
                format_human(a.page_size),
                a.io.name(),
                esc(&a.short()),
                esc(&a.reason)
            );
        }
        h.push_str("</dl>\n");
    }
}
