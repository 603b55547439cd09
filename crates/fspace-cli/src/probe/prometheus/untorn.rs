//! Untorn page writes as metrics.

use super::exposition::{flag, Metrics};

/// Untorn page writes: the answer per page size and I/O path, and where
/// their cost was measured, the ratio to plain writes with its range and
/// both sides' rates.
pub(super) fn samples(m: &mut Metrics, u: &fspace::probe::UntornSection) {
    for a in &u.answers {
        let page = a.page_size.to_string();
        m.gauge(
            "fspace_probe_untorn_supported",
            "1 if a page write of this size through this I/O path is untorn here when it asks (RWF_ATOMIC), else 0.",
            &[("page", &page), ("io", a.io.name())],
            flag(a.untorn),
        );
    }
    for c in u.cost.iter().filter(|c| c.measured) {
        let (Some(ratio), Some(lo), Some(hi)) = (c.ratio, c.ratio_min, c.ratio_max) else {
            continue;
        };
        let page = c.page_size.to_string();
        // `path` is the directory probed (every sample's label): the way
        // the writes are made untorn is `write_path`.
        let path = c.path.map_or("unknown", |p| p.name());
        let l = [("page", page.as_str()), ("write_path", path)];
        m.gauge(
            "fspace_probe_untorn_ratio",
            "Untorn page writes per second divided by plain ones (durable O_DIRECT writes into written space, with and without RWF_ATOMIC, one writer): the median of the per-round ratios.",
            &l,
            ratio,
        );
        m.gauge(
            "fspace_probe_untorn_ratio_min",
            "The smallest per-round ratio of untorn to plain page writes per second.",
            &l,
            lo,
        );
        m.gauge(
            "fspace_probe_untorn_ratio_max",
            "The largest per-round ratio of untorn to plain page writes per second.",
            &l,
            hi,
        );
        m.gauge(
            "fspace_probe_untorn_rounds",
            "Alternating rounds the untorn-write ratio is the median of.",
            &l,
            c.ratios.len() as f64,
        );
        for (write, w) in [("plain", &c.plain), ("untorn", &c.untorn)] {
            m.gauge(
                "fspace_probe_untorn_writes_per_second",
                "Durable O_DIRECT page writes per second into written space, plain or untorn (RWF_ATOMIC): the median of the runs.",
                &[("page", page.as_str()), ("write_path", path), ("write", write)],
                w.writes_per_sec,
            );
        }
    }
}
