//! Commit rates by writer count ([`fspace::bench::WriterCurve`]) in
//! words: one small table per mode, shared by `fspace bench commit
//! --writers 1,2,4,...` and `fspace probe`.

use crate::fmt::hanging;
use fspace::bench::WriterCurve;

/// Formats microseconds: µs below 0.1 ms, else ms.
pub(crate) fn time(us: f64) -> String {
    if us < 100.0 {
        format!("{us:.1} µs")
    } else if us >= 10_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

/// One table per curve, headed by its name (`name(curve)`) and where it
/// stops scaling: commits/s, the ratio to one writer, p50 and p99 per
/// writer count. 38 columns wide, whatever the figures.
pub(crate) fn tables(curves: &[WriterCurve], name: &dyn Fn(&WriterCurve) -> String) -> String {
    let mut o = String::new();
    for c in curves {
        out!(o);
        hanging(&mut o, &format!("{}: ", name(c)), 2, &c.scaling_words());
        out!(
            o,
            "  {:>7} {:>9} {:>8} {:>8} {:>8}",
            "writers",
            "commits/s",
            "÷ 1 wr.",
            "p50",
            "p99"
        );
        for p in &c.points {
            if let Some(why) = &p.unsupported {
                hanging(
                    &mut o,
                    &format!("  {:>7} ", p.writers),
                    10,
                    &format!("unsupported here: {why}"),
                );
                continue;
            }
            out!(
                o,
                "  {:>7} {:>9.0} {:>8} {:>8} {:>8}",
                p.writers,
                p.commits_per_sec,
                p.vs_one_writer
                    .map_or("-".to_string(), |x| format!("{x:.2}x")),
                time(p.p50_us),
                time(p.p99_us)
            );
        }
    }
    o
}

/// `fspace probe`'s concurrency curve: what was measured, then a table
/// per mode.
pub(crate) fn probe_text(r: &fspace::probe::ProbeResult) -> String {
    let c = &r.concurrency;
    let mut o = String::new();
    let counts: Vec<String> = c.writers.iter().map(ToString::to_string).collect();
    out!(o, "\nConcurrency");
    hanging(
        &mut o,
        "  ",
        2,
        &format!(
            "{} commits at {} writers, one run of {} s per mode and count, the modes of one count next to each other{}{}",
            crate::fmt::format_human(c.record_size as u64),
            counts.join(", "),
            c.seconds_per_point,
            c.log_setup
                .as_deref()
                .map(|s| format!("; the log with {s}"))
                .unwrap_or_default(),
            if c.at_writers > 1 {
                format!(
                    "; at {} writers (--writers) {} runs of the log and of appending each, the median shown",
                    c.at_writers,
                    fspace::probe::AT_WRITERS_RUNS
                )
            } else {
                String::new()
            }
        ),
    );
    let text = tables(&c.curves, &|k| match k.state {
        fspace::bench::SpaceState::Wal => "fspace wal".to_string(),
        fspace::bench::SpaceState::Recycled => "recycled (ceiling)".to_string(),
        s => s.to_string(),
    });
    for line in text.lines() {
        if line.is_empty() {
            out!(o);
        } else {
            out!(o, "  {line}");
        }
    }
    o
}
