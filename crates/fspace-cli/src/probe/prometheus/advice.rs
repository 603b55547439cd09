//! The recommendations as metrics: per intent the strategy, whether a
//! measurement decided it, the log's sync method and recycling, and how
//! the log compared with plain appending.

use super::exposition::{flag, Metrics};
use fspace::probe::{LogVsAppend, Recommendation};

/// Each intent's recommendation.
pub(super) fn samples(m: &mut Metrics, recs: &[Recommendation]) {
    for rec in recs {
        let intent = rec.intent.name();
        m.gauge(
            "fspace_probe_recommendation",
            "Always 1: the strategy the probe recommends for the intent.",
            &[("intent", intent), ("strategy", rec.strategy.name())],
            1.0,
        );
        m.gauge(
            "fspace_probe_decided",
            "1 if a measurement decided the intent's strategy, 0 if nothing could be measured or it was too noisy to decide (the built-in choice stands).",
            &[("intent", intent)],
            flag(rec.measured && !rec.too_noisy),
        );
        if let Some(sync) = rec.sync_method {
            m.gauge(
                "fspace_probe_recommendation_sync",
                "Always 1: the sync method the probe recommends for the log.",
                &[("intent", intent), ("sync", sync.name())],
                1.0,
            );
            m.gauge(
                "fspace_probe_sync_decided",
                "1 if a measurement decided the log's sync method, 0 if it was too noisy to decide.",
                &[("intent", intent)],
                flag(!rec.sync_too_noisy),
            );
        }
        if let Some(recycle) = rec.recycle {
            m.gauge(
                "fspace_probe_recommendation_recycle",
                "1 if the probe recommends recycling the log's written segments, else 0.",
                &[("intent", intent)],
                flag(recycle),
            );
        }
        if let Some(v) = &rec.log_vs_append {
            log_vs_append_samples(m, v);
        }
    }
}

/// How fspace's log compared with plain appending: the outcome, and where
/// both were measured the ratio of their rates with its range.
fn log_vs_append_samples(m: &mut Metrics, v: &LogVsAppend) {
    m.gauge(
        "fspace_probe_log_vs_append",
        "Always 1: how fspace's log, set up as recommended, compared with plain appending (an O_APPEND write + fdatasync per commit) in the probe's runs: faster, level (not told apart beyond the noise), slower, or not-measured.",
        &[("outcome", v.outcome.name())],
        1.0,
    );
    if let (Some(r), Some(lo), Some(hi)) = (v.ratio, v.ratio_low, v.ratio_high) {
        m.gauge(
            "fspace_probe_log_vs_append_ratio",
            "fspace's log's median commit rate divided by plain appending's (8 KiB records, one writer).",
            &[],
            r,
        );
        m.gauge(
            "fspace_probe_log_vs_append_ratio_min",
            "The slowest run of fspace's log divided by the fastest run of plain appending.",
            &[],
            lo,
        );
        m.gauge(
            "fspace_probe_log_vs_append_ratio_max",
            "The fastest run of fspace's log divided by the slowest run of plain appending.",
            &[],
            hi,
        );
    }
}
