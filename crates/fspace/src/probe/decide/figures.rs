//! The figures the decisions look up, and one rate against another in
//! words.

use super::super::schema::{GrowthResult, StateResult};
use crate::bench::SpaceState;
use crate::policy::Recommendation;
use crate::strategy::Intent;
use crate::strategy::Strategy;
use crate::units::format_count as commas;

/// `a` against `b` as a factor (`2.5x`); `-` where `b` is not positive.
pub(super) fn ratio(a: f64, b: f64) -> String {
    if b <= 0.0 {
        return "-".into();
    }
    let r = a / b;
    if r >= 100.0 {
        format!("{}x", commas(r))
    } else {
        format!("{r:.1}x")
    }
}

/// The commit rate measured into space in state `s`, where it was
/// measured.
pub(super) fn rate(states: &[StateResult], s: SpaceState) -> Option<f64> {
    states
        .iter()
        .find(|x| x.state == s && x.measured())
        .map(|x| x.commits_per_sec)
}

/// The growth measured by `s`, where it worked.
pub(super) fn grown(growth: &[GrowthResult], s: Strategy) -> Option<&GrowthResult> {
    growth
        .iter()
        .find(|g| g.strategy == s && g.unsupported.is_none() && g.bytes > 0)
}

/// A recommendation nothing measured: `strategy` for `intent`, with the
/// summary and the reason in words, no figure.
pub(super) fn not_measured(
    intent: Intent,
    strategy: Strategy,
    summary: String,
    reason: String,
) -> Recommendation {
    Recommendation {
        intent,
        strategy,
        recycle: None,
        summary,
        reason,
        figure: 0.0,
        baseline: None,
        baseline_label: None,
        measured: false,
        too_noisy: false,
        sync_method: None,
        sync_reason: None,
        sync_too_noisy: false,
        log_vs_append: None,
    }
}
