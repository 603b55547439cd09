//! The self-contained HTML report of `fspace probe --report FILE.html`: inline
//! CSS and SVG, the measurements as charts and tables, the recommendations,
//! and the JSON document embedded. No scripts, fonts or images are fetched:
//! it reads the same offline.

mod chart;
mod concurrency;
mod durability;
mod untorn;

use crate::fmt::{format_count as commas, format_human};
use chart::{chart, esc, Row, Scale};
use fspace::probe::{ProbeResult, SpaceState, SWEEP_RECORDS};
use std::fmt::Write;

fn why(u: &str) -> String {
    format!("not supported here ({u})")
}

/// The report's style sheet (inline in the page: no external references);
/// in src/, where the package's file list (Cargo.toml) names it.
const STYLE: &str = include_str!("../../report.css");

/// Returns the report page for `r`.
pub(super) fn html(r: &ProbeResult) -> String {
    let mut h = head_html(r);
    h.push_str(&durability::banner_html(r.commit.durability.as_ref()));
    h.push_str(&recommendations_html(r));
    h.push_str(&filesystem_html(r));
    h.push_str(&commit_rate_html(r));
    h.push_str(&commit_latency_html(r));
    h.push_str(&commit_table_html(r));
    h.push_str(&durability::html(r.commit.durability.as_ref()));
    h.push_str(&untorn::html(r));
    h.push_str(&growth_html(r));
    h.push_str(&sweep_html(r));
    h.push_str(&concurrency::html(r));
    h.push_str(&footer_html(r));
    h
}

/// The bar class of space state `s`: the baseline, the log, or the
/// recommended log preparation.
fn state_class(r: &ProbeResult, s: SpaceState) -> &'static str {
    let log_pick = r
        .recommendation(fspace::Intent::Log)
        .and_then(|x| SpaceState::of_strategy(x.strategy));
    match s {
        SpaceState::Appended => "base",
        SpaceState::Wal => "wal",
        s if Some(s) == log_pick => "best",
        _ => "",
    }
}

/// The document head, the title and the run's facts.
fn head_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    let f = &r.filesystem;
    let title = format!(
        "fspace probe: {} ({})",
        r.directory.display(),
        f.display_name()
    );
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(h, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        h,
        "<p class=\"sub\">{}{} · {} run, {:.1} s · {} · fspace {} · {} free of {}</p>",
        esc(&f.source.clone().unwrap_or_default()),
        f.mount_point
            .as_deref()
            .map(|m| format!(" at {}", esc(&m.display().to_string())))
            .unwrap_or_default(),
        r.level.name(),
        r.elapsed.as_secs_f64(),
        esc(&r.started_utc),
        r.fspace_version,
        format_human(f.free_bytes),
        format_human(f.total_bytes)
    );

    h
}

/// The recommendations.
fn recommendations_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    h.push_str("<h2>Recommendations</h2>\n<dl class=\"recs\">\n");
    let noisy = |b: bool| {
        if b {
            " (too noisy to decide: the built-in choice)"
        } else {
            ""
        }
    };
    for rec in &r.recommendations {
        let _ = writeln!(
            h,
            "<dt>{}: <span class=\"what\">{}</span>{}</dt><dd>{}</dd>",
            rec.intent.name(),
            esc(&rec.summary),
            noisy(rec.too_noisy),
            esc(&rec.reason)
        );
        if let (Some(m), Some(why)) = (rec.sync_method, &rec.sync_reason) {
            let _ = writeln!(
                h,
                "<dt>{} commits made durable by <span class=\"what\">{m}</span>{}</dt><dd>{}</dd>",
                rec.intent.name(),
                noisy(rec.sync_too_noisy),
                esc(why)
            );
        }
        if let Some(v) = &rec.log_vs_append {
            let _ = writeln!(
                h,
                "<dt>{}: <span class=\"{}\">{}</span></dt><dd>{}</dd>",
                esc(crate::fmt::LOG_VS_APPEND),
                match v.outcome {
                    fspace::probe::VsAppend::Slower => "what worse",
                    _ => "what",
                },
                v.outcome,
                esc(&v.text)
            );
        }
    }
    if let Some(p) = &r.commit.prediction {
        let w = p.log.as_ref().map_or(1, |l| l.writers);
        let _ = writeln!(
            h,
            "<dt>expected</dt><dd data-writers=\"{w}\">fspace's log with {} should reach about {} commits/s here (runs {}–{}; {w} writer{}, 8 KiB records; from {}).</dd>",
            esc(&p.setup),
            commas(p.commits_per_sec),
            commas(p.low),
            commas(p.high),
            if w == 1 { "" } else { "s" },
            esc(&p.basis)
        );
    }
    if let Some(u) = &r.commit.log_space {
        let _ = writeln!(
            h,
            "<dt>log space</dt><dd>The log's files after its runs: {}.</dd>",
            esc(&u.words())
        );
    }
    h.push_str("</dl>\n");

    h
}

/// The filesystem's capabilities and facts.
fn filesystem_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    let f = &r.filesystem;
    if let Some(c) = f.caps() {
        h.push_str("<h2>Filesystem</h2>\n<p class=\"caps\">");
        for (n, c) in c.named() {
            let _ = write!(
                h,
                "<span class=\"{}\" title=\"{}\">{n}: {}</span>",
                if c.supported { "yes" } else { "no" },
                esc(c.detail.as_deref().unwrap_or("")),
                if c.supported { "yes" } else { "no" }
            );
        }
        let _ = writeln!(
            h,
            "</p><p>Block size {}; copy-on-write: {}; network: {}; magic 0x{:x}.</p>",
            f.block_size,
            if f.copy_on_write { "yes" } else { "no" },
            if f.network { "yes" } else { "no" },
            f.magic
        );
    }

    h
}

/// The commit rate chart.
fn commit_rate_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    // Commits.
    let c = &r.commit;
    let class = |s| state_class(r, s);
    let rows: Vec<Row> = c
        .states
        .iter()
        .map(|s| Row {
            group: None,
            label: s.state.label().into(),
            value: s.unsupported.is_none().then_some(s.commits_per_sec),
            runs: s.runs.clone(),
            text: match &s.unsupported {
                Some(u) => why(&u.text),
                None => format!(
                    "{} /s{}",
                    commas(s.commits_per_sec),
                    s.vs_append
                        .map(|v| format!(" ({v:.2}x append)"))
                        .unwrap_or_default()
                ),
            },
            class: class(s.state),
        })
        .collect();
    let _ = write!(
        h,
        "<h2>Commit rate by space state</h2>\n<p>{} records, each <code>pwrite</code> + <code>fdatasync</code>, \
         one writer; {} alternating round{} of up to {:.2} s per state, in rotating order. The bar is the median; \
         the line and dots over it are every run (slowest to fastest). Green: the recommended log preparation.</p>\n",
        format_human(c.record_size as u64),
        c.rounds,
        if c.rounds == 1 { "" } else { "s" },
        c.seconds_per_mode
    );
    h.push_str(&chart(
        "commit-rate",
        "Commits per second (higher is better)",
        "commits/s",
        Scale::Linear,
        &rows,
    ));
    let methods: Vec<Row> = c
        .sync_methods
        .iter()
        .map(|m| Row {
            label: m.method.name().into(),
            value: m
                .figures
                .unsupported
                .is_none()
                .then_some(m.figures.commits_per_sec),
            runs: m.figures.runs.clone(),
            text: match &m.figures.unsupported {
                Some(u) => why(&u.text),
                None => format!("{} /s", commas(m.figures.commits_per_sec)),
            },
            class: if r
                .recommendation(fspace::Intent::Log)
                .and_then(|l| l.sync_method)
                == Some(m.method)
            {
                "best"
            } else {
                ""
            },
            ..Default::default()
        })
        .collect();
    if !methods.is_empty() {
        h.push_str(
            "<p>The same rounds also committed into written (recycled) space with each sync method \
             (<code>pwrite</code> + <code>fdatasync</code> or <code>fsync</code>, <code>pwritev2(RWF_DSYNC)</code>, \
             <code>O_DIRECT</code> + <code>RWF_DSYNC</code>). Green: the log's recommended method.</p>\n",
        );
        h.push_str(&chart(
            "sync-methods",
            "Commits per second by sync method (higher is better)",
            "commits/s",
            Scale::Linear,
            &methods,
        ));
    }
    h
}

/// The commit latency chart.
fn commit_latency_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    let c = &r.commit;
    let class = |s| state_class(r, s);
    let mut lat = vec![];
    for s in &c.states {
        let g = Some(s.state.label().to_string());
        if let Some(u) = &s.unsupported {
            lat.push(Row {
                runs: vec![],
                group: g,
                label: "p50 / p99".into(),
                value: None,
                text: why(&u.text),
                class: "",
            });
            continue;
        }
        lat.push(Row {
            group: g.clone(),
            label: "p50".into(),
            value: Some(s.p50_us),
            runs: s.runs_p50_us.clone(),
            text: format!("{} µs", commas(s.p50_us)),
            class: class(s.state),
        });
        lat.push(Row {
            runs: vec![],
            group: g,
            label: "p99".into(),
            value: Some(s.p99_us),
            text: format!("{} µs", commas(s.p99_us)),
            class: "p99",
        });
    }
    h.push_str(&chart(
        "commit-latency",
        "Commit latency, p50 and p99 (lower is better)",
        "µs",
        Scale::Log,
        &lat,
    ));
    h
}

/// The commit figures as a table, with the spread of the runs.
fn commit_table_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    let c = &r.commit;
    h.push_str("<table><tr><th>space</th><th class=n>commits/s</th><th class=n>runs: range</th><th class=n>p50 µs</th><th class=n>p99 µs</th><th>notes</th></tr>\n");
    for s in &c.states {
        let lo = s.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = s.runs.iter().copied().fold(0.0, f64::max);
        let runs = match s.runs.len() {
            0 => "-".to_string(),
            1 => "1 run".to_string(),
            n => format!("{n}: {}–{}", commas(lo), commas(hi)),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
            esc(s.state.label()),
            if s.unsupported.is_some() { "-".into() } else { commas(s.commits_per_sec) },
            esc(&runs),
            if s.unsupported.is_some() { "-".into() } else { commas(s.p50_us) },
            if s.unsupported.is_some() { "-".into() } else { commas(s.p99_us) },
            esc(&s
                .unsupported
                .as_ref()
                .map(|u| why(&u.text))
                .unwrap_or_else(|| s
                    .notes
                    .iter()
                    .map(|n| n.text.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")))
        );
    }
    h.push_str("</table>\n");

    h
}

/// The growth chart.
fn growth_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    // Growth.
    let g = &r.growth;
    let bulk_pick = r.recommendation(fspace::Intent::Bulk).map(|x| x.strategy);
    let rows: Vec<Row> = g
        .results
        .iter()
        .map(|x| Row {
            // Each round's time for the shown round's bytes (the runs are
            // rates), as dots beside the median round's bar.
            runs: x
                .runs
                .iter()
                .filter(|r| **r > 0.0)
                .map(|r| x.bytes as f64 / r)
                .collect(),
            group: None,
            label: x.strategy.name().into(),
            value: x.unsupported.is_none().then_some(x.seconds),
            text: match &x.unsupported {
                Some(u) => why(&u.text),
                // Only zero-fill moves data: a rate for the others would
                // only restate the time.
                None if x.strategy == fspace::Strategy::ZeroFill => format!(
                    "{} ({}/s, {} written)",
                    crate::fmt::format_seconds(x.seconds),
                    format_human(x.bytes_per_sec as u64),
                    format_human(x.bytes)
                ),
                None => format!("{}, no data written", crate::fmt::format_seconds(x.seconds)),
            },
            class: if Some(x.strategy) == bulk_pick {
                "best"
            } else {
                ""
            },
        })
        .collect();
    let _ = write!(
        h,
        "<h2>Growth by strategy</h2>\n<p>A fresh file grown to {} by each strategy, <code>fdatasync</code> included, \
         in {} alternating rounds: the bar is the median round, the dots every round. \
         Green: the recommendation for bulk data.</p>\n",
        format_human(g.target_size),
        g.results.iter().map(|x| x.runs.len()).max().unwrap_or(0)
    );
    h.push_str(&chart(
        "growth",
        "Growth time (lower is better)",
        "seconds",
        Scale::Log,
        &rows,
    ));

    h
}

/// The record-size sweep chart (full runs only).
fn sweep_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    let class = |s| state_class(r, s);
    if let Some(sw) = &r.sweep {
        let mut rows = vec![];
        for rec in SWEEP_RECORDS {
            for st in [SpaceState::Appended, SpaceState::Recycled, SpaceState::Wal] {
                if let Some(p) = sw.iter().find(|p| p.record_size == rec && p.state == st) {
                    rows.push(Row {
                        runs: vec![],
                        group: Some(format!("{} records", format_human(rec as u64))),
                        label: st.label().into(),
                        value: p.unsupported.is_none().then_some(p.mib_per_sec),
                        text: match &p.unsupported {
                            Some(u) => why(&u.text),
                            None => format!(
                                "{:.1} MiB/s, {} commits/s",
                                p.mib_per_sec,
                                commas(p.commits_per_sec)
                            ),
                        },
                        class: class(st),
                    });
                }
            }
        }
        h.push_str("<h2>Record-size sweep</h2>\n");
        h.push_str(&chart(
            "record-size",
            "Payload throughput by record size (higher is better)",
            "MiB/s",
            Scale::Log,
            &rows,
        ));
    }

    h
}

/// The notes, the footer and the embedded JSON.
fn footer_html(r: &ProbeResult) -> String {
    let mut h = String::new();
    if !r.notes.is_empty() {
        h.push_str("<h2>Notes</h2>\n<ul class=\"notes\">\n");
        for n in &r.notes {
            let _ = writeln!(h, "<li>{}</li>", esc(&n.text));
        }
        h.push_str("</ul>\n");
    }
    let json = serde_json::to_string(r).unwrap_or_default();
    let _ = writeln!(
        h,
        "<footer>Measured by <code>fspace probe{}</code> (schema {}). The JSON document is embedded below.</footer>\n\
         <script type=\"application/json\" id=\"probe-json\">{}</script>\n</body></html>",
        match r.level {
            fspace::probe::Level::Standard => String::new(),
            l => format!(" --{}", l.name()),
        },
        fspace::probe::SCHEMA,
        // No `<` at all inside the script block (`</script` or `<!--` in a
        // path would end or confuse it); JSON reads \u003c back as `<`.
        json.replace('<', "\\u003c")
    );
    h
}
