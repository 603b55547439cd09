//! The growth figures in the probe's text: the time per strategy.

use crate::fmt::{format_human, format_seconds as secs, hanging, within};
use fspace::probe::ProbeResult;

/// The growth time per strategy.
pub(super) fn growth_text(r: &ProbeResult) -> String {
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
                &format!("not supported here: {}", within(&u.text, &r.directory)),
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
