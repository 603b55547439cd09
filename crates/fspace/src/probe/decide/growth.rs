//! The growth decisions: bulk growth (a strategy that reserves the space,
//! the built-in policy's choice unless another one's growth beat it
//! across the rounds) and sparse growth (`ftruncate`, with what it cost
//! and whether holes are kept here).

use super::super::schema::{GrowthResult, StateResult};
use super::super::stats::{range, ALPHA};
use super::super::verdict::{verdict_of, Verdict, TIE_MARGIN};
use super::figures::{grown, not_measured, rate, ratio};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::policy::rules::{is_remote, BULK_PREFERENCE, REMOTE_EXCLUDES_FALLOCATE};
use crate::policy::Recommendation;
use crate::strategy::{Intent, Strategy};
use crate::units::{format_count as commas, format_human, format_seconds as duration};

/// The bulk recommendation: among the strategies that reserve space (and,
/// on network and FUSE filesystems, do not need `fallocate`), the built-in
/// policy's choice stands unless another one's growth beat it by the
/// probe's rule; the reason says what the growth cost and what commits
/// into that space measured later.
pub(super) fn bulk(
    info: &FsInfo,
    growth: &[GrowthResult],
    states: &[StateResult],
) -> Recommendation {
    let cands: Vec<&GrowthResult> = BULK_PREFERENCE
        .iter()
        .filter(|&&s| {
            !(REMOTE_EXCLUDES_FALLOCATE
                && is_remote(info)
                && matches!(s, Strategy::Allocate | Strategy::WriteZeroes))
        })
        .filter_map(|&s| grown(growth, s))
        .collect();
    if cands.is_empty() {
        return bulk_not_measured(info);
    }
    let zf = grown(growth, Strategy::ZeroFill);
    // The standing choice: the built-in policy's first rung measured here
    // (else, as a fallback, the first candidate in BULK_PREFERENCE). A
    // challenger replaces it only by the probe's rule, as in the log's
    // decision: one timing each once swapped allocate for zero-fill on
    // tmpfs on a 230 ms against 118 ms draw.
    let ladder = crate::policy::built_in(info, Intent::Bulk).ladder;
    let built = ladder
        .iter()
        .find_map(|s| cands.iter().find(|g| g.strategy == *s))
        .copied();
    let standing = built.unwrap_or(cands[0]);
    let (faster, noisy) = challengers(&cands, standing);
    let target = cands.iter().map(|g| g.bytes).max().unwrap_or(0);
    let (g, decision) = decision(standing, built.is_some(), faster, noisy, target);
    let mut reason = format!(
        "{} in {}{}{}",
        format_human(g.bytes),
        duration(g.seconds),
        if g.strategy == Strategy::ZeroFill {
            format!(" ({}/s)", format_human(g.bytes_per_sec as u64))
        } else {
            String::new()
        },
        bulk_why(info, growth, g)
    );
    if let Some(d) = decision {
        reason = format!("{reason}; {d}");
    }
    if let Some(later) = later_cost(states, g.strategy) {
        reason = format!("{reason}; {later}");
    }
    Recommendation {
        intent: Intent::Bulk,
        strategy: g.strategy,
        recycle: None,
        summary: g.strategy.name().to_string(),
        reason,
        figure: g.bytes_per_sec,
        baseline: zf.map(|z| z.bytes_per_sec),
        baseline_label: zf.map(|_| "zero-fill".into()),
        measured: true,
        too_noisy: faster.is_none() && noisy.is_some(),
        sync_method: None,
        sync_reason: None,
        sync_too_noisy: false,
        log_vs_append: None,
    }
}

/// The bulk recommendation when no growth could be measured: the built-in
/// policy's choice, said to be unmeasured.
fn bulk_not_measured(info: &FsInfo) -> Recommendation {
    let plan = crate::policy::built_in(info, Intent::Bulk);
    let strategy = plan.ladder.first().copied().unwrap_or(Strategy::ZeroFill);
    not_measured(
        Intent::Bulk,
        strategy,
        format!("{strategy} (not measured)"),
        format!(
            "no growth could be measured; the built-in policy's choice: {}",
            plan.reason
        ),
    )
}

/// A challenger of the standing choice with its rank test's p-value.
type Challenger<'a> = (&'a GrowthResult, f64);

/// The challengers of `standing` among `cands`: the one that beat it
/// across the rounds, and the fastest whose medians differ but whose
/// rounds do not separate (too noisy to decide).
fn challengers<'a>(
    cands: &[&'a GrowthResult],
    standing: &GrowthResult,
) -> (Option<Challenger<'a>>, Option<Challenger<'a>>) {
    let mut beaten: Vec<Challenger<'a>> = vec![];
    let mut noisy: Option<Challenger<'a>> = None;
    for &c in cands.iter().filter(|c| c.strategy != standing.strategy) {
        match verdict_of(
            (c.bytes_per_sec, &c.runs),
            (standing.bytes_per_sec, &standing.runs),
        ) {
            Verdict::Faster { p } => beaten.push((c, p)),
            Verdict::TooNoisy { p }
                if noisy.is_none_or(|(n, _)| c.bytes_per_sec > n.bytes_per_sec) =>
            {
                noisy = Some((c, p));
            }
            _ => {}
        }
    }
    // Among the challengers that beat it, ties (within the margin of the
    // fastest) go by BULK_PREFERENCE, the order `cands` is in: reserving
    // without writing first.
    let best = beaten
        .iter()
        .map(|(c, _)| c.bytes_per_sec)
        .fold(0.0, f64::max);
    let faster = beaten
        .iter()
        .find(|(c, _)| c.bytes_per_sec >= (1.0 - TIE_MARGIN) * best)
        .copied();
    (faster, noisy)
}

/// The strategy chosen against `standing` (`built`: the built-in choice,
/// else its fallback) and the decision in words: a challenger that beat
/// it replaces it; one too noisy to tell leaves it standing, and says so.
fn decision<'a>(
    standing: &'a GrowthResult,
    built: bool,
    faster: Option<Challenger<'a>>,
    noisy: Option<Challenger<'a>>,
    target: u64,
) -> (&'a GrowthResult, Option<String>) {
    let stands = |s: Strategy| {
        if built {
            format!("the built-in choice, {s}, stands")
        } else {
            format!("{s} stands (the fallback: the built-in choice could not be measured here)")
        }
    };
    match (faster, noisy) {
        (Some((c, p)), _) => (
            c,
            Some(format!(
                "{} beat {} ({}) across the rounds: {} (rank test p = {p:.3})",
                c.strategy,
                standing.strategy,
                if built {
                    "the built-in choice"
                } else {
                    "the fallback: the built-in choice could not be measured here"
                },
                growth_versus(c, standing, target)
            )),
        ),
        (None, Some((c, p))) => (
            standing,
            Some(format!(
                "too noisy to decide between {} and {}: {} (rank test p = {p:.3}, {:.2} needed), so {}",
                standing.strategy,
                c.strategy,
                growth_versus(c, standing, target),
                ALPHA,
                stands(standing.strategy)
            )),
        ),
        (None, None) => (standing, None),
    }
}

/// `c` against `standing` in words: each one's rounds as the time to grow
/// `target` (from each round's rate: a zero-fill stopped at the time cap is
/// scaled up from what it wrote) and how many rounds.
fn growth_versus(c: &GrowthResult, standing: &GrowthResult, target: u64) -> String {
    let times = |g: &GrowthResult| {
        let (lo, hi) = range(&g.runs);
        let t = |rate: f64| duration(target as f64 / rate.max(f64::MIN_POSITIVE));
        if g.runs.len() < 2 {
            t(lo)
        } else {
            format!("{}-{}", t(hi), t(lo))
        }
    };
    let capped = if c.capped || standing.capped {
        " (zero-fill scaled up from what it wrote before the time cap)"
    } else {
        ""
    };
    let rounds = match (c.runs.len(), standing.runs.len()) {
        (1, 1) => "in one round each".to_string(),
        (a, b) if a == b => format!("over {a} rounds each"),
        (a, b) => format!("over {a} and {b} rounds"),
    };
    format!(
        "{} took {} against {} {} to grow {} {rounds}{capped}",
        c.strategy,
        times(c),
        standing.strategy,
        times(standing),
        format_human(target),
    )
}

/// Why bulk growth by `g` was chosen: zero-fill because nothing faster
/// reserves the space here, or how much faster than zero-fill it was.
fn bulk_why(info: &FsInfo, growth: &[GrowthResult], g: &GrowthResult) -> String {
    let zf = grown(growth, Strategy::ZeroFill);
    match (g.strategy, zf) {
        (Strategy::ZeroFill, _) => {
            let why = growth
                .iter()
                .find(|x| x.strategy == Strategy::Allocate)
                .and_then(|x| x.unsupported.as_ref())
                .map(|u| format!("fallocate is not supported here ({})", u.short()))
                .unwrap_or_else(|| {
                    if is_remote(info) {
                        "on a network/FUSE filesystem fallocate is missing or emulated by the server".into()
                    } else if grown(growth, Strategy::Allocate).is_some() {
                        "writing them measured faster here than reserving the space without writing".into()
                    } else {
                        "no faster way to reserve the space was measured".into()
                    }
                });
            format!(": {why}, so the zeros are written (never glibc's one byte per block)")
        }
        (_, Some(z)) if g.bytes_per_sec < z.bytes_per_sec => format!(
            " vs zero-fill at {}/s ({}): not faster here, but the blocks are reserved without writing them",
            format_human(z.bytes_per_sec as u64),
            duration(z.seconds)
        ),
        (_, Some(z)) => format!(
            " vs zero-fill at {}/s{}, {} faster: the blocks are reserved without writing them",
            format_human(z.bytes_per_sec as u64),
            if z.capped {
                format!(
                    " (measured on {} in {})",
                    format_human(z.bytes),
                    duration(z.seconds)
                )
            } else {
                format!(" ({})", duration(z.seconds))
            },
            ratio(g.bytes_per_sec, z.bytes_per_sec)
        ),
        (_, None) => ": the blocks are reserved without writing them".into(),
    }
}

/// The sparse recommendation: `ftruncate`, with what it cost and whether
/// holes are kept here.
pub(super) fn sparse(info: &FsInfo, growth: &[GrowthResult]) -> Recommendation {
    let caps = info.caps();
    let Some(g) = grown(growth, Strategy::Sparse) else {
        return not_measured(
            Intent::Sparse,
            Strategy::Sparse,
            "sparse (not measured)".into(),
            "ftruncate could not be measured here".into(),
        );
    };
    let mut reason = format!(
        "{} in {}, {} allocated",
        format_human(g.bytes),
        duration(g.seconds),
        format_human(g.allocated_bytes)
    );
    if g.allocated_bytes >= g.bytes / 2 {
        reason.push_str(if info.network || info.kind == crate::fs_info::FsKind::Fuse {
            ": the block count is reported as allocated (network and FUSE filesystems often derive it from the size), so holes cannot be confirmed here"
        } else {
            ": this filesystem does not keep holes, ftruncate allocated the space"
        });
    } else {
        match caps.map(|c| (c.seek_hole.supported, c.punch_hole.supported)) {
            Some((true, true)) => reason.push_str(
                ": holes stay holes, SEEK_HOLE finds them and punching can make more",
            ),
            Some((true, false)) => reason
                .push_str(": holes stay holes and SEEK_HOLE finds them; punching is not supported"),
            Some((false, _)) => reason.push_str(
                ": holes stay holes, but SEEK_HOLE does not report them here (copies read the zeros)",
            ),
            None => {}
        }
    }
    Recommendation {
        intent: Intent::Sparse,
        strategy: Strategy::Sparse,
        recycle: None,
        summary: "sparse (ftruncate)".into(),
        reason,
        figure: g.bytes_per_sec,
        baseline: None,
        baseline_label: None,
        measured: true,
        too_noisy: false,
        sync_method: None,
        sync_reason: None,
        sync_too_noisy: false,
        log_vs_append: None,
    }
}

/// What 8 KiB commits into space grown by `s` measured, for the later cost
/// of a bulk strategy.
fn later_cost(states: &[StateResult], s: Strategy) -> Option<String> {
    let st = SpaceState::of_strategy(s)?;
    let into = rate(states, st)?;
    let written = rate(states, SpaceState::Recycled);
    Some(match (s, written) {
        (Strategy::Allocate | Strategy::WriteZeroes, Some(w)) if into < (1.0 - TIE_MARGIN) * w => format!(
            "later, 8 KiB commits with fdatasync into that space ran at {}/s against {}/s into written space: data written once converts each extent once, but a log that syncs small records there pays it on every commit (see log)",
            commas(into),
            commas(w)
        ),
        _ => format!(
            "later, 8 KiB commits with fdatasync into that space ran at {}/s",
            commas(into)
        ),
    })
}
