//! The probe's concurrency curve as metrics: one sample per mode and
//! writer count (label `writers`), and where each mode stopped scaling.

use super::Metrics;
use fspace::probe::ConcurrencySection;

/// The curve's samples; a point that could not be measured is left out.
pub(super) fn samples(m: &mut Metrics, c: &ConcurrencySection) {
    m.gauge(
        "fspace_probe_expected_writers",
        "Threads committing at once that the expected rate was measured at (fspace probe --writers).",
        &[],
        c.at_writers as f64,
    );
    for curve in &c.curves {
        let state = curve.state.name();
        for p in curve.points.iter().filter(|p| p.measured()) {
            let w = p.writers.to_string();
            let l = [("state", state), ("writers", w.as_str())];
            m.gauge(
                "fspace_probe_concurrency_commits_per_second",
                "Commits per second (8 KiB records) with this many writers committing at once: one run of the probe's concurrency curve (the median of its runs at the count asked for).",
                &l,
                p.commits_per_sec,
            );
            m.gauge(
                "fspace_probe_concurrency_latency_p99_seconds",
                "99th percentile commit latency in that run.",
                &l,
                p.p99_us / 1e6,
            );
            if let Some(x) = p.vs_one_writer {
                m.gauge(
                    "fspace_probe_concurrency_vs_one_writer",
                    "That rate divided by the same mode's at one writer.",
                    &l,
                    x,
                );
            }
        }
        if curve.points.iter().any(|p| p.measured()) {
            m.gauge(
                "fspace_probe_concurrency_stops_scaling_writers",
                "The first writer count whose rate was not above the previous count's; 0 if the rate still rose at the most writers measured.",
                &[("state", state)],
                curve.stops_scaling_at.unwrap_or(0) as f64,
            );
        }
    }
}
