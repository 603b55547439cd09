//! Whether one measured state (or sync method) beat another across the
//! probe's runs, in words; and the log's sync method chosen that way.

use super::schema::{LogCheck, StateResult, SyncMethodResult};
use super::stats;
use crate::fs_info::FsInfo;
use crate::strategy::SyncMethod;
use crate::units::format_count as commas;

/// Figures within this fraction of the best count as a tie: 10%. Evidence:
/// repeated `fspace bench commit` runs on this project's test machine put
/// the same mode about this far apart from one round to the next
/// (bench/runs/2026-11-22-commit/, bench/runs/2026-11-22-commit-earlier-run/);
/// a smaller difference is noise.
pub const TIE_MARGIN: f64 = 0.10;

/// How a challenger compares with the choice that stands unless beaten
/// (the built-in one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict {
    /// Its median is within [`TIE_MARGIN`] of the standing choice's (or
    /// below it).
    Tie,
    /// Faster by more than the margin, and the rank test separates the
    /// runs ([`stats::p_greater`] at most [`stats::ALPHA`]) without the
    /// median latencies saying the opposite.
    Faster {
        /// The rank test's one-sided p-value.
        p: f64,
    },
    /// Faster by more than the margin in the medians, but the runs
    /// overlap too much to say so.
    TooNoisy {
        /// The rank test's one-sided p-value.
        p: f64,
    },
}

/// Whether `challenger` beat `standing` across the runs (throughput, and
/// median latency not significantly worse).
pub(crate) fn verdict(challenger: &StateResult, standing: &StateResult) -> Verdict {
    let slower_latency =
        stats::p_greater(&challenger.runs_p50_us, &standing.runs_p50_us) <= stats::ALPHA;
    let v = verdict_of(
        (challenger.commits_per_sec, &challenger.runs),
        (standing.commits_per_sec, &standing.runs),
    );
    match v {
        Verdict::Faster { p } if slower_latency => Verdict::TooNoisy { p },
        v => v,
    }
}

/// The same rule on bare rates (higher is better), each a (figure, runs)
/// pair: the challenger's figure must beat the standing one's by more than
/// [`TIE_MARGIN`] and the rank test must separate the runs.
pub(crate) fn verdict_of((c, challenger): (f64, &[f64]), (s, standing): (f64, &[f64])) -> Verdict {
    if c < (1.0 + TIE_MARGIN) * s {
        return Verdict::Tie;
    }
    let p = stats::p_greater(challenger, standing);
    if p <= stats::ALPHA {
        Verdict::Faster { p }
    } else {
        Verdict::TooNoisy { p }
    }
}

/// `lo-hi` of a state's runs, in commits/s.
pub(crate) fn spread(s: &StateResult) -> String {
    let (lo, hi) = s.range();
    if s.runs.len() < 2 {
        commas(lo)
    } else {
        format!("{}-{}", commas(lo), commas(hi))
    }
}

/// The words for a verdict between `challenger` (named `c`) and the
/// standing choice `standing` (named `d`).
///
/// `built_in` says whether the standing choice is the built-in one (else
/// it is the fallback: the built-in one could not be measured here).
pub(crate) fn verdict_words(
    v: Verdict,
    c: &str,
    challenger: &StateResult,
    d: &str,
    standing: &StateResult,
    built_in: bool,
) -> Option<String> {
    let which = if built_in {
        "the built-in choice"
    } else {
        "the fallback: the built-in choice could not be measured here"
    };
    let runs = |s: &StateResult| {
        format!(
            "{} run{}",
            s.runs.len(),
            if s.runs.len() == 1 { "" } else { "s" }
        )
    };
    match v {
        Verdict::Tie => None,
        Verdict::Faster { p } => Some(format!(
            "{c} beat {d} ({which}) across the runs: {} against {} commits/s over {} and {} (rank test p = {p:.3})",
            spread(challenger),
            spread(standing),
            runs(challenger),
            runs(standing)
        )),
        Verdict::TooNoisy { p } if p <= stats::ALPHA => Some(format!(
            "too noisy to decide between {d} and {c}: {c} {} against {d} {} commits/s over {} and {} (rank test p = {p:.3}), but with higher median latencies in the runs, so {which}, {d}, stands",
            spread(challenger),
            spread(standing),
            runs(challenger),
            runs(standing)
        )),
        Verdict::TooNoisy { p } => Some(format!(
            "too noisy to decide between {d} and {c}: {c} {} against {d} {} commits/s over {} and {} (rank test p = {p:.3}, {:.2} needed), so {which}, {d}, stands",
            spread(challenger),
            spread(standing),
            runs(challenger),
            runs(standing),
            stats::ALPHA
        )),
    }
}

/// The log's sync method as measured, and why.
pub(crate) struct SyncChoice {
    pub(crate) method: SyncMethod,
    /// The standing (built-in) method and its fastest challenger.
    pub(crate) standing: SyncMethod,
    pub(crate) challenger: SyncMethod,
    pub(crate) reason: String,
    pub(crate) too_noisy: bool,
}

/// Chooses the log's sync method from commits into written space made
/// durable by each: the built-in choice
/// ([`log_sync_method`](crate::policy::rules::log_sync_method)) stands
/// unless another beat it across the runs ([`verdict`]). `fsync` is
/// measured for comparison but never chosen (it syncs what `fdatasync`
/// does and the inode's times); on network and FUSE filesystems the
/// built-in `fdatasync` stands (O_DIRECT and RWF_DSYNC there are the
/// server's). `None` when `fdatasync` itself was not measured.
/// With `allow_change` false the built-in method stays (see
/// [`super::decide::recommend`]).
pub(crate) fn sync_choice(
    info: &FsInfo,
    methods: &[SyncMethodResult],
    allow_change: bool,
) -> Option<SyncChoice> {
    let remote = crate::policy::rules::is_remote(info);
    let (built_in, _) = crate::policy::rules::log_sync_method(Some(info.kind), remote);
    let measured = |m: SyncMethod| {
        methods
            .iter()
            .find(|x| x.method == m && x.figures.measured())
            .map(|x| &x.figures)
    };
    let fdatasync = measured(SyncMethod::Fdatasync)?;
    let (standing_m, standing) = match measured(built_in) {
        Some(s) => (built_in, s),
        None => (SyncMethod::Fdatasync, fdatasync),
    };
    let is_built_in = standing_m == built_in;
    let allowed = |m: SyncMethod| m != SyncMethod::Fsync && (!remote || m == SyncMethod::Fdatasync);
    let (challenger_m, challenger) = SyncMethod::ALL
        .iter()
        .filter(|&&m| allowed(m))
        .filter_map(|&m| measured(m).map(|s| (m, s)))
        .max_by(|a, b| a.1.commits_per_sec.total_cmp(&b.1.commits_per_sec))?;
    let v = if challenger_m == standing_m {
        Verdict::Tie
    } else {
        verdict(challenger, standing)
    };
    let (method, fig) = if allow_change && matches!(v, Verdict::Faster { .. }) {
        (challenger_m, challenger)
    } else {
        (standing_m, standing)
    };
    let mut why = vec![format!(
        "{method}: {} commits/s into written space ({} over the runs)",
        commas(fig.commits_per_sec),
        spread(fig)
    )];
    let others: Vec<String> = methods
        .iter()
        .filter(|x| x.method != method)
        .map(|x| match &x.figures.unsupported {
            Some(u) => format!("{} not measured ({})", x.method, u.short()),
            None => format!("{} {}", x.method, commas(x.figures.commits_per_sec)),
        })
        .collect();
    if !others.is_empty() {
        why.push(others.join(", "));
    }
    why.extend(verdict_words(
        v,
        challenger_m.name(),
        challenger,
        standing_m.name(),
        standing,
        is_built_in,
    ));
    if !allow_change && matches!(v, Verdict::Faster { .. }) {
        why.push(format!(
            "but fspace's log with {challenger_m} did not beat its built-in setup (see the log's reason), so {standing_m} stays"
        ));
    }
    if v == Verdict::Tie && challenger_m != method {
        why.push(format!(
            "{challenger_m} is within {:.0}%, a tie, so the built-in choice stands",
            TIE_MARGIN * 100.0
        ));
    }
    if remote {
        why.push("network or FUSE filesystem: fdatasync, whatever the others measured".into());
    }
    Some(SyncChoice {
        method,
        standing: standing_m,
        challenger: challenger_m,
        reason: why.join("; "),
        too_noisy: matches!(v, Verdict::TooNoisy { .. }),
    })
}

impl LogCheck {
    /// Whether the log was measured both ways (false: no time was left).
    pub fn measured(&self) -> bool {
        !self.recommended.runs.is_empty() && !self.built_in.runs.is_empty()
    }

    /// Why the built-in setup stays, with the figures.
    pub(crate) fn words(&self) -> String {
        if !self.measured() {
            return format!(
                "but no time was left to measure fspace's log set up that way ({}) against its built-in setup ({}), so the built-in setup stays, undecided",
                self.setup, self.built_in_setup
            );
        }
        let p = stats::p_greater(&self.recommended.runs, &self.built_in.runs);
        format!(
            "but fspace's log set up that way ({}) did not beat its built-in setup ({}): {} against {} commits/s over {} and {} alternating runs (rank test p = {p:.2}), so the built-in setup stays",
            self.setup,
            self.built_in_setup,
            spread(&self.recommended),
            spread(&self.built_in),
            self.recommended.runs.len(),
            self.built_in.runs.len()
        )
    }
}
