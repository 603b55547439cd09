//! The self-contained HTML report of `fspace probe --report FILE.html`: inline
//! CSS and SVG, the measurements as charts and tables, the recommendations,
//! and the JSON document embedded. No scripts, fonts or images are fetched:
//! it reads the same offline.

use fspace::probe::{ProbeResult, SpaceState, SWEEP_RECORDS};
use fspace::units::{format_count as commas, format_human};
use std::fmt::Write;

/// HTML-escapes text.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[derive(Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    Log,
}

/// One bar of a chart; `value` None draws the text only (not supported).
struct Row {
    group: Option<String>,
    label: String,
    value: Option<f64>,
    text: String,
    class: &'static str,
}

const LABEL_W: f64 = 230.0;
const BAR_W: f64 = 430.0;
const ROW_H: f64 = 24.0;
const GROUP_H: f64 = 22.0;

/// A chart's value axis: where a value's bar ends.
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl Axis {
    /// The axis that holds every positive value of `rows`.
    fn of(rows: &[Row], scale: Scale) -> Axis {
        let vals: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.value)
            .filter(|v| *v > 0.0)
            .collect();
        let max = vals.iter().copied().fold(0.0, f64::max);
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let (lo, hi) = match scale {
            Scale::Linear => (0.0, nice_max(max)),
            Scale::Log => (
                (min.max(1e-12).log10().floor()),
                (max.max(1e-12).log10().ceil()).max(min.max(1e-12).log10().floor() + 1.0),
            ),
        };
        Axis { scale, lo, hi }
    }

    /// The bar length of `v`.
    fn len(&self, v: f64) -> f64 {
        if v <= 0.0 || self.hi <= self.lo {
            return 0.0;
        }
        (self.fraction(v) * BAR_W).clamp(2.0, BAR_W)
    }

    fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v / self.hi,
            Scale::Log => (v.log10() - self.lo) / (self.hi - self.lo),
        }
    }

    /// The grid lines with their labels, and the unit.
    fn ticks(&self, unit: &str, height: f64) -> String {
        let ticks: Vec<(f64, String)> = match self.scale {
            Scale::Linear => (0..=4)
                .map(|i| {
                    let v = self.hi * i as f64 / 4.0;
                    (v, short(v))
                })
                .collect(),
            Scale::Log => (self.lo as i32..=self.hi as i32)
                .map(|e| (10f64.powi(e), short(10f64.powi(e))))
                .collect(),
        };
        let mut s = String::new();
        for (v, t) in &ticks {
            let x = LABEL_W
                + if self.hi > self.lo {
                    self.fraction(*v) * BAR_W
                } else {
                    0.0
                };
            let _ = writeln!(
                s,
                r#"<line class="grid" x1="{x:.1}" y1="22" x2="{x:.1}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                height - 22.0,
                height - 8.0,
                esc(t)
            );
        }
        let _ = writeln!(
            s,
            r#"<text class="unit" x="{:.1}" y="14" text-anchor="end">{}{}</text>"#,
            LABEL_W + BAR_W,
            esc(unit),
            if self.scale == Scale::Log {
                " (log scale)"
            } else {
                ""
            }
        );
        s
    }
}

/// A horizontal bar chart as inline SVG. `id` names the measured group
/// (`data-group`), so a reader (or a test) can match charts to the JSON.
fn chart(id: &str, title: &str, unit: &str, scale: Scale, rows: &[Row]) -> String {
    let groups = rows
        .iter()
        .enumerate()
        .filter(|(i, r)| r.group.is_some() && (*i == 0 || rows[i - 1].group != r.group))
        .count();
    let height = 30.0 + rows.len() as f64 * ROW_H + groups as f64 * GROUP_H + 26.0;
    let width = LABEL_W + BAR_W + 240.0;
    let axis = Axis::of(rows, scale);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<figure class="chart" data-group="{id}"><figcaption>{}</figcaption>
<svg class="chart" data-group="{id}" role="img" aria-label="{}" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
"#,
        esc(title),
        esc(title)
    );
    s.push_str(&axis.ticks(unit, height));
    s.push_str(&bars(rows, &axis));
    s.push_str("</svg></figure>\n");
    s
}

/// The rows: group headings, labels, and bars (or the text alone).
fn bars(rows: &[Row], axis: &Axis) -> String {
    let mut s = String::new();
    let mut y = 26.0;
    let mut last_group: Option<&str> = None;
    for r in rows {
        if let Some(g) = r.group.as_deref() {
            if last_group != Some(g) {
                let _ = writeln!(
                    s,
                    r#"<text class="group" x="4" y="{:.1}">{}</text>"#,
                    y + 15.0,
                    esc(g)
                );
                y += GROUP_H;
                last_group = Some(g);
            }
        }
        let _ = writeln!(
            s,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 8.0,
            y + 16.0,
            esc(&r.label)
        );
        match r.value {
            Some(v) => {
                let w = axis.len(v);
                let _ = writeln!(
                    s,
                    r#"<rect class="bar {}" x="{LABEL_W}" y="{:.1}" width="{w:.1}" height="{:.1}" rx="2"><title>{}: {}</title></rect><text class="value" x="{:.1}" y="{:.1}">{}</text>"#,
                    r.class,
                    y + 3.0,
                    ROW_H - 6.0,
                    esc(&r.label),
                    esc(&r.text),
                    LABEL_W + w + 6.0,
                    y + 16.0,
                    esc(&r.text)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    r#"<text class="na" x="{:.1}" y="{:.1}">{}</text>"#,
                    LABEL_W + 4.0,
                    y + 16.0,
                    esc(&r.text)
                );
            }
        }
        y += ROW_H;
    }
    s
}

/// The smallest "nice" axis end (1, 2, 2.5, 5 × 10^k per step, four
/// steps) at or above `max`, so that the ticks fall on round numbers.
fn nice_max(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    step * 4.0
}

fn short(v: f64) -> String {
    let a = v.abs();
    // One decimal where a whole number would hide a 2.5 or 1.5 step.
    let unit = |x: f64, suffix: &str| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{x:.0}{suffix}")
        } else {
            format!("{x:.1}{suffix}")
        }
    };
    if a >= 1e12 {
        unit(v / 1e12, "T")
    } else if a >= 1e9 {
        unit(v / 1e9, "G")
    } else if a >= 1e6 {
        unit(v / 1e6, "M")
    } else if a >= 1e3 {
        unit(v / 1e3, "k")
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn why(u: &str) -> String {
    format!("not supported here ({})", fspace::units::errno_text(u))
}

const STYLE: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:2rem auto;max-width:980px;padding:0 1rem;color:#1d232a;background:#fff}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{font-size:1.15rem;margin:2rem 0 .6rem;border-bottom:1px solid #d8dde3;padding-bottom:.2rem}
.sub{color:#57606a;margin:0 0 1rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.9rem}
td,th{padding:.2rem .7rem;border-bottom:1px solid #eaeef2;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.recs{border:1px solid #9fc5a8;background:#f3faf4;border-radius:6px;padding:.6rem 1rem}
.recs dt{font-weight:600;margin-top:.5rem}.recs dd{margin:0 0 .2rem 1.2rem}
.recs .what{font-weight:600;color:#1a7f37}
figure.chart{margin:1rem 0}figcaption{font-weight:600;margin-bottom:.3rem}
svg.chart text{font:12px system-ui,"DejaVu Sans",sans-serif;fill:#1d232a}
svg.chart .tick,svg.chart .unit{fill:#57606a;font-size:11px}
svg.chart .group{font-weight:600}
svg.chart .grid{stroke:#eaeef2}
svg.chart .na{fill:#8c959f;font-style:italic}
svg.chart .bar{fill:#4f7cac}svg.chart .bar.base{fill:#8c959f}svg.chart .bar.best{fill:#2f9e44}
svg.chart .bar.p99{fill:#d08770}svg.chart .bar.wal{fill:#7b5fa6}
.caps span{display:inline-block;margin:0 .4rem .3rem 0;padding:.05rem .45rem;border-radius:4px;font-size:.85rem}
.caps .yes{background:#dafbe1}.caps .no{background:#ffebe9}
.notes li{color:#57606a}
footer{margin-top:2rem;color:#57606a;font-size:.85rem}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.9em}
"#;

/// Returns the report page for `r`.
pub(crate) fn html(r: &ProbeResult) -> String {
    let mut h = head_html(r);
    h.push_str(&recommendations_html(r));
    h.push_str(&filesystem_html(r));
    h.push_str(&commit_rate_html(r));
    h.push_str(&commit_latency_html(r));
    h.push_str(&commit_table_html(r));
    h.push_str(&growth_html(r));
    h.push_str(&sweep_html(r));
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
    for rec in &r.recommendations {
        let _ = writeln!(
            h,
            "<dt>{}: <span class=\"what\">{}</span></dt><dd>{}</dd>",
            rec.intent.name(),
            esc(&rec.summary),
            esc(&rec.reason)
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
            text: match &s.unsupported {
                Some(u) => why(u),
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
         one writer; median of {} round{} of up to {:.2} s per state, in rotating order. Green: the recommended \
         log preparation.</p>\n",
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
                group: g,
                label: "p50 / p99".into(),
                value: None,
                text: why(u),
                class: "",
            });
            continue;
        }
        lat.push(Row {
            group: g.clone(),
            label: "p50".into(),
            value: Some(s.p50_us),
            text: format!("{} µs", commas(s.p50_us)),
            class: class(s.state),
        });
        lat.push(Row {
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
                .as_deref()
                .map(why)
                .unwrap_or_else(|| s.notes.join("; ")))
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
            group: None,
            label: x.strategy.name().into(),
            value: x.unsupported.is_none().then_some(x.bytes_per_sec),
            text: match &x.unsupported {
                Some(u) => why(u),
                None => format!(
                    "{}/s, {} in {}",
                    format_human(x.bytes_per_sec as u64),
                    format_human(x.bytes),
                    fspace::units::format_seconds(x.seconds)
                ),
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
        "<h2>Growth by strategy</h2>\n<p>A fresh file grown to {} by each strategy, <code>fdatasync</code> included. \
         Green: the recommendation for bulk data.</p>\n",
        format_human(g.target_size)
    );
    h.push_str(&chart(
        "growth",
        "Growth throughput (higher is better)",
        "bytes/s",
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
                        group: Some(format!("{} records", format_human(rec as u64))),
                        label: st.label().into(),
                        value: p.unsupported.is_none().then_some(p.mib_per_sec),
                        text: match &p.unsupported {
                            Some(u) => why(u),
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
            let _ = writeln!(h, "<li>{}</li>", esc(n));
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
