//! The probe's concurrency curve as metrics: one sample per mode and
//! writer count (label `writers`), and where each mode stopped scaling.

use super::exposition::Metrics;
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
            if let Some(g) = p.group.as_ref().filter(|g| g.groups > 0) {
                group_samples(m, &l, g);
            }
            if let Some(x) = p.vs_one_writer {
                m.gauge(
                    "fspace_probe_concurrency_vs_one_writer",
                    "That rate divided by the same mode's at one writer.",
                    &l,
                    x,
                );
            }
        }
        if curve.points.iter().any(fspace::bench::CurvePoint::measured) {
            m.gauge(
                "fspace_probe_concurrency_stops_scaling_writers",
                "The first writer count whose rate was not above the previous count's; 0 if the rate still rose at the most writers measured.",
                &[("state", state)],
                curve.stops_scaling_at.unwrap_or(0) as f64,
            );
        }
    }
}

/// The log's group commit in one run of the curve: how many commits
/// shared a write or sync, what a flush cost, how commits waited.
fn group_samples(m: &mut Metrics, l: &[(&'static str, &str)], g: &fspace::wal::GroupStats) {
    m.gauge(
        "fspace_probe_concurrency_group_size_mean",
        "The log's commits per group (records made durable by one write or sync) in that run.",
        l,
        g.mean_size(),
    );
    m.gauge(
        "fspace_probe_concurrency_group_size_max",
        "The log's largest group in that run.",
        l,
        g.largest_group as f64,
    );
    m.gauge(
        "fspace_probe_concurrency_flush_seconds",
        "The log's running average of a durable flush's I/O at the end of that run.",
        l,
        g.flush_time_ns as f64 / 1e9,
    );
    m.gauge(
        "fspace_probe_concurrency_gather_waits",
        "Flushes that waited for their group to gather in that run (only where a flush takes at least fspace::wal::GATHER_MIN_FLUSH).",
        l,
        g.gather_waits as f64,
    );
    m.gauge(
        "fspace_probe_concurrency_follower_waits",
        "Commits that blocked until another thread's flush ended, in that run.",
        l,
        g.follower_waits as f64,
    );
    m.gauge(
        "fspace_probe_concurrency_follower_spins",
        "Commits that waited for another thread's flush by spinning, in that run.",
        l,
        g.follower_spins as f64,
    );
}
