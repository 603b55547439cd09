//! The concurrency curve in the probe's HTML report: a chart of commits/s
//! grouped by writer count, and a table per mode with its ratio to one
//! writer, p50, p99 and where it stopped scaling.

use super::chart::{chart, esc, Row, Scale};
use crate::fmt::format_count as commas;
use fspace::probe::{ProbeResult, SpaceState};
use std::fmt::Write;

/// A mode of the curve, as the report names it.
fn label(s: SpaceState) -> &'static str {
    match s {
        SpaceState::Recycled => "recycled (the overwrite ceiling)",
        s => s.label(),
    }
}

/// The section (`data-group="concurrency"`).
pub(super) fn html(r: &ProbeResult) -> String {
    let c = &r.concurrency;
    let mut h = String::new();
    let mut rows = vec![];
    for &w in &c.writers {
        for curve in &c.curves {
            let Some(p) = curve.points.iter().find(|p| p.writers == w) else {
                continue;
            };
            rows.push(Row {
                runs: vec![],
                group: Some(format!("{w} writer{}", if w == 1 { "" } else { "s" })),
                label: label(curve.state).into(),
                value: p.measured().then_some(p.commits_per_sec),
                text: match &p.unsupported {
                    Some(u) => format!("not supported here ({u})"),
                    None => format!(
                        "{} commits/s, p99 {} µs",
                        commas(p.commits_per_sec),
                        commas(p.p99_us)
                    ),
                },
                class: match curve.state {
                    SpaceState::Appended => "base",
                    SpaceState::Wal => "wal",
                    _ => "",
                },
            });
        }
    }
    let _ = writeln!(
        h,
        "<h2>Commit rate by writer count</h2>\n<p>{} KiB records committed by 1 to {} threads at once, one run of {} s per mode and count, \
         the modes of one count next to each other{}{}.</p>",
        c.record_size / 1024,
        c.writers.last().copied().unwrap_or(1),
        c.seconds_per_point,
        c.log_setup
            .as_deref()
            .map(|s| format!("; fspace's log with {}", esc(s)))
            .unwrap_or_default(),
        if c.at_writers > 1 {
            format!(
                "; at {} writers (<code>--writers</code>) {} runs of the log and of appending each, the median shown",
                c.at_writers,
                fspace::probe::AT_WRITERS_RUNS
            )
        } else {
            String::new()
        }
    );
    h.push_str(&chart(
        "concurrency",
        "Commits per second by writer count (higher is better)",
        "commits/s",
        Scale::Log,
        &rows,
    ));
    h.push_str("<table><tr><th>mode</th><th class=n>writers</th><th class=n>commits/s</th><th class=n>÷ 1 writer</th><th class=n>p50 µs</th><th class=n>p99 µs</th></tr>\n");
    for curve in &c.curves {
        for p in &curve.points {
            let ok = p.measured();
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                esc(label(curve.state)),
                p.writers,
                if ok { commas(p.commits_per_sec) } else { "-".into() },
                p.vs_one_writer.map_or("-".into(), |x| format!("{x:.2}x")),
                if ok { commas(p.p50_us) } else { "-".into() },
                if ok { commas(p.p99_us) } else { "-".into() },
            );
        }
    }
    h.push_str("</table>\n<ul class=\"scaling\">\n");
    for curve in &c.curves {
        let _ = writeln!(
            h,
            "<li data-state=\"{}\" data-stops-scaling-at=\"{}\">{}: {}</li>",
            curve.state.name(),
            curve.stops_scaling_at.unwrap_or(0),
            esc(label(curve.state)),
            esc(&curve.scaling_words())
        );
    }
    h.push_str("</ul>\n");
    h
}
