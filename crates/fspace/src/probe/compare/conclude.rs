//! What a comparison concludes from its batches of fresh runs: the
//! verdict, why it could not tell, and the rules that decide them.

use super::super::stats::ALPHA;
use serde::Serialize;

/// What the comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CompareVerdict {
    /// The fresh runs are not slower beyond the threshold, or the rank
    /// test does not separate them from the saved ones, or a second batch
    /// did not confirm the first (`fspace` exits 0).
    NoChange,
    /// Two batches of fresh runs were each slower than the saved median
    /// beyond the threshold and separated from the saved runs by the rank
    /// test, on a machine that was not busy (`fspace` exits 1).
    Regressed,
    /// The runs looked slower but the comparison cannot tell why or
    /// whether: see [`CouldNotTell`] (`fspace` exits 4).
    CouldNotTell,
}

impl CompareVerdict {
    /// The verdict's name as the JSON and the metrics spell it.
    pub fn name(self) -> &'static str {
        match self {
            CompareVerdict::NoChange => "no-change",
            CompareVerdict::Regressed => "regressed",
            CompareVerdict::CouldNotTell => "could-not-tell",
        }
    }
}

/// Why a comparison could not tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CouldNotTell {
    /// Others used the CPUs (or the device) while the slower runs were
    /// measured: a busy machine slows commits as a slower disk does.
    MachineBusy,
    /// The saved and fresh runs are too few for the rank test ever to
    /// reach [`ALPHA`].
    TooFewRounds,
    /// The baseline was measured on a busy machine: it is slow, so fresh
    /// runs that are not slower than it say nothing of the disk (a slower
    /// disk would not show). A slowdown beyond it still counts.
    BusyBaseline,
    /// The saved file has no baseline (saved by an earlier fspace): the
    /// probe's own runs, shorter and measured among other states, are not
    /// the quantity the fresh runs measure, so a lower median proves
    /// nothing.
    NoBaseline,
}

impl CouldNotTell {
    /// The reason's name as the JSON and the metrics spell it.
    pub fn name(self) -> &'static str {
        match self {
            CouldNotTell::MachineBusy => "machine-busy",
            CouldNotTell::TooFewRounds => "too-few-rounds",
            CouldNotTell::BusyBaseline => "busy-baseline",
            CouldNotTell::NoBaseline => "no-baseline",
        }
    }
}

/// One batch of fresh runs against the saved runs.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Batch {
    /// Each run's commits/s, in the order measured.
    pub runs: Vec<f64>,
    /// Their median.
    pub commits_per_sec: f64,
    /// The median ÷ the saved median.
    pub ratio: f64,
    /// The one-sided rank test's p-value that the saved runs are larger
    /// than this batch's.
    pub p_value: f64,
    /// Below `1 - threshold` and `p_value` at most [`ALPHA`]: evidence of
    /// a slowdown.
    pub slower: bool,
}

/// What the verdict depends on besides the batches.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rule {
    /// [`CompareOptions::threshold`](super::CompareOptions::threshold).
    pub(super) threshold: f64,
    /// The smallest p-value the saved runs against one batch can give.
    pub(super) smallest: f64,
    /// The machine was busy while the fresh runs were measured.
    pub(super) busy: bool,
    /// The saved side is a baseline measured as the fresh runs are.
    pub(super) from_baseline: bool,
    /// That baseline was measured on a busy machine.
    pub(super) busy_baseline: bool,
}

/// Whether a first batch calls for a second: it is evidence of a slowdown
/// (and could be, given the runs), against a baseline, on a machine not
/// busy so far.
pub(super) fn needs_confirmation(first: &Batch, rule: &Rule) -> bool {
    first.slower && rule.smallest <= ALPHA && rule.from_baseline && !rule.busy
}

/// The verdict from the batches measured (one, or two when the first
/// called for a second), and a note on a slowdown that did not stand.
pub(super) fn conclude(
    batches: &[Batch],
    rule: &Rule,
) -> (CompareVerdict, Option<CouldNotTell>, Option<String>) {
    let (verdict, why, note) = conclude_runs(batches, rule);
    if verdict == CompareVerdict::NoChange && rule.busy_baseline {
        // Not slower than a slow baseline says nothing of the disk.
        return (
            CompareVerdict::CouldNotTell,
            Some(CouldNotTell::BusyBaseline),
            note,
        );
    }
    (verdict, why, note)
}

fn conclude_runs(
    batches: &[Batch],
    rule: &Rule,
) -> (CompareVerdict, Option<CouldNotTell>, Option<String>) {
    let Some(first) = batches.first() else {
        return (CompareVerdict::NoChange, None, None);
    };
    let below = |b: &Batch| b.ratio < 1.0 - rule.threshold;
    if !below(first) {
        return (CompareVerdict::NoChange, None, None);
    }
    if !rule.from_baseline {
        return (
            CompareVerdict::CouldNotTell,
            Some(CouldNotTell::NoBaseline),
            None,
        );
    }
    if rule.smallest > ALPHA {
        return (
            CompareVerdict::CouldNotTell,
            Some(CouldNotTell::TooFewRounds),
            None,
        );
    }
    if !first.slower {
        return (
            CompareVerdict::NoChange,
            None,
            Some(format!(
                "the fresh median is {:.0}% below the saved one, but the runs overlap the saved runs (rank test p = {:.2}, {ALPHA} needed): no evidence of a change",
                (1.0 - first.ratio) * 100.0,
                first.p_value
            )),
        );
    }
    let Some(second) = batches.get(1) else {
        // A slower first batch gets no second only on a busy machine.
        return (
            CompareVerdict::CouldNotTell,
            Some(CouldNotTell::MachineBusy),
            None,
        );
    };
    if second.slower {
        return if rule.busy {
            (
                CompareVerdict::CouldNotTell,
                Some(CouldNotTell::MachineBusy),
                None,
            )
        } else {
            (CompareVerdict::Regressed, None, None)
        };
    }
    let n = first.runs.len();
    (
        CompareVerdict::NoChange,
        None,
        Some(format!(
            "the first {n} runs were {:.0}% below the saved median (p = {:.3}); {} more were measured to confirm it and were {}: not a lasting change",
            (1.0 - first.ratio) * 100.0,
            first.p_value,
            second.runs.len(),
            if below(second) {
                format!(
                    "{:.0}% below, but overlapped the saved runs (p = {:.2})",
                    (1.0 - second.ratio) * 100.0,
                    second.p_value
                )
            } else {
                "within the threshold".to_string()
            }
        )),
    )
}

/// `fresh ÷ saved`; 1 when nothing was saved (never a regression).
pub(super) fn ratio_of(fresh: f64, saved: f64) -> f64 {
    if saved > 0.0 {
        fresh / saved
    } else {
        1.0
    }
}
