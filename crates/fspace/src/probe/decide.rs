//! From measurements to a policy: one recommended [`Strategy`] per
//! [`Intent`], with the figures that decided it.
//!
//! The rules, each a named constant below:
//!
//! - **log**: the candidates are the preparations whose commits could be
//!   measured here, among those the policy allows for a log on this
//!   filesystem, in its order (the ruled-out ones left out: zero-fill on
//!   copy-on-write filesystems
//!   ([`COW_EXCLUDES_ZERO_FILL`](crate::policy::rules::COW_EXCLUDES_ZERO_FILL)),
//!   sparse elsewhere (holes reserve nothing), fallocate-based ones on
//!   network and FUSE filesystems ([`REMOTE_EXCLUDES_FALLOCATE`])). The
//!   first candidate in
//!   [`LOG_PREFERENCE`](crate::policy::rules::LOG_PREFERENCE)
//!   ([`LOG_PREFERENCE_COW`](crate::policy::rules::LOG_PREFERENCE_COW) on
//!   copy-on-write) whose rate
//!   is within [`TIE_MARGIN`] of the fastest preparation measured wins; if
//!   none is, the fastest candidate does, and the reason names the faster
//!   one that was ruled out. Filesystems without `fallocate` (ext4 without
//!   extents, sshfs) never get a strategy built on it.
//! - **bulk**: among the strategies that reserve space (and, on network and
//!   FUSE filesystems, do not need `fallocate`), the built-in policy's
//!   choice stands unless another one's growth beat it by the same rule as
//!   the log's (median faster by more than [`TIE_MARGIN`] and the rank test
//!   separating the rounds); when the medians differ but the rounds do not,
//!   the built-in choice stands and the reason says the result was too
//!   noisy. Where the built-in choice could not be measured, the first
//!   measured strategy in [`BULK_PREFERENCE`] stands in for it.
//! - **sparse**: `ftruncate` (the intent is that the space may stay
//!   empty); the reason says what it cost and whether holes are kept.

use super::schema::{GrowthResult, LogCheck, StateResult, SyncMethodResult};
use super::verdict::{spread, sync_choice, verdict, verdict_of, verdict_words, Verdict};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::policy::rules::{
    log_candidates, log_excluded, BULK_PREFERENCE, REMOTE_EXCLUDES_FALLOCATE,
};
use crate::policy::Recommendation;
use crate::strategy::{Intent, Strategy};
use crate::units::{
    errno_text as short_err, format_count as commas, format_human, format_seconds as duration,
};

/// The tie margin lives with the verdict it decides; this path to it stays
/// public as it was.
pub use super::verdict::TIE_MARGIN;

fn ratio(a: f64, b: f64) -> String {
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

/// Returns the recommendations for log (with its sync method, when the
/// methods were measured), bulk and sparse. A `check` of fspace's log set
/// up as the states suggest ([`LogCheck`]) that did not beat the log's
/// built-in setup keeps the built-in setup, and says why.
pub fn recommend(
    info: &FsInfo,
    states: &[StateResult],
    methods: &[SyncMethodResult],
    growth: &[GrowthResult],
    check: Option<&LogCheck>,
) -> Vec<Recommendation> {
    let confirmed = check.is_none_or(|c| c.confirmed);
    let mut log = log(info, states, confirmed);
    super::versus_append::apply(&mut log, super::versus_append::log_vs_append(states, check));
    if log.measured {
        if let Some(c) = sync_choice(info, methods, confirmed) {
            log.sync_method = Some(c.method);
            log.sync_reason = Some(c.reason);
            log.sync_too_noisy = c.too_noisy;
        }
        if let Some(c) = check.filter(|c| !c.confirmed) {
            log.reason = format!("{}; {}", log.reason, c.words());
        }
    }
    if let Some(cost) = log
        .measured
        .then(|| segment_cost(growth, log.strategy))
        .flatten()
    {
        log.reason = format!("{}; {cost}", log.reason);
    }
    vec![log, bulk(info, growth, states), sparse(info, growth)]
}

/// What preparing one log segment by `s` costs, from the growth measured.
fn segment_cost(growth: &[GrowthResult], s: Strategy) -> Option<String> {
    let g = grown(growth, s)?;
    let seg = crate::wal::DEFAULT_SEGMENT_SIZE;
    let t = g.seconds * seg as f64 / g.bytes as f64;
    Some(format!(
        "preparing a {} segment this way costs about {} here (growth measured: {} in {})",
        format_human(seg),
        duration(t),
        format_human(g.bytes),
        duration(g.seconds)
    ))
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

fn rate(states: &[StateResult], s: SpaceState) -> Option<f64> {
    states
        .iter()
        .find(|x| x.state == s && x.measured())
        .map(|x| x.commits_per_sec)
}

/// Returns the preparation (sparse, allocate, write-zeroes, zero-fill) whose
/// commits measured fastest, ruled out here or not, with its rate.
pub(crate) fn fastest_preparation(states: &[StateResult]) -> Option<(Strategy, f64)> {
    [
        Strategy::WriteZeroes,
        Strategy::Allocate,
        Strategy::ZeroFill,
        Strategy::Sparse,
    ]
    .into_iter()
    .filter_map(|s| {
        SpaceState::of_strategy(s)
            .and_then(|st| rate(states, st))
            .map(|r| (s, r))
    })
    .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The log recommendation alone (see [`recommend`]).
///
/// The built-in policy's choice stands unless the fastest allowed
/// preparation beat it ([`verdict`]); when the medians differ by more than
/// the margin but the runs cannot tell them apart, the recommendation says
/// so and is marked [`Recommendation::too_noisy`].
///
/// With `allow_change` false (fspace's log set up as the states suggest did
/// not beat its built-in setup, [`LogCheck`]) the built-in choice stays
/// whatever the states measured.
pub(crate) fn log(info: &FsInfo, states: &[StateResult], allow_change: bool) -> Recommendation {
    let append = rate(states, SpaceState::Appended);
    let Some(c) = log_contest(info, states) else {
        return log_not_measured(info, append);
    };
    let chosen = if allow_change && matches!(c.verdict, Verdict::Faster { .. }) {
        c.challenger
    } else {
        c.standing
    };
    let (strategy, figure) = (chosen.0, chosen.1.commits_per_sec);
    let d = LogDecision {
        info,
        states,
        strategy,
        figure,
        fastest: c.fastest,
    };
    let mut why: Vec<String> = verdict_words(
        c.verdict,
        c.challenger.0.name(),
        c.challenger.1,
        c.standing.0.name(),
        c.standing.1,
        c.standing.0 == crate::policy::built_in(info, Intent::Log).first(),
    )
    .into_iter()
    .collect();
    why.extend(d.choice_reasons(&c.cands));
    why.extend(d.state_reasons());
    let (recycle, note) = d.recycle();
    why.extend(note);
    why.extend(d.context_reasons());
    let head = match append {
        Some(a) => format!(
            "{} commits/s vs {} appending ({})",
            commas(figure),
            commas(a),
            ratio(figure, a)
        ),
        None => format!("{} commits/s", commas(figure)),
    };
    Recommendation {
        intent: Intent::Log,
        strategy,
        recycle: Some(recycle),
        summary: {
            // What the log will do, said as the log does it (LOG_NOCOW_ON).
            let nocow = if d.nocow() { "NOCOW " } else { "" };
            if recycle {
                format!("{nocow}{strategy} segments, recycle them")
            } else {
                format!("{nocow}{strategy} segments")
            }
        },
        reason: if why.is_empty() {
            head
        } else {
            format!("{head}: {}", why.join("; "))
        },
        figure,
        baseline: append,
        baseline_label: Some("appending".into()),
        measured: true,
        too_noisy: matches!(c.verdict, Verdict::TooNoisy { .. }),
        sync_method: None,
        sync_reason: None,
        sync_too_noisy: false,
        log_vs_append: None,
    }
}

/// The log decision: the candidates, the standing (built-in) choice, its
/// fastest challenger and the verdict between them.
pub(crate) struct LogContest<'a> {
    pub(crate) cands: Vec<(Strategy, &'a StateResult)>,
    pub(crate) standing: (Strategy, &'a StateResult),
    pub(crate) challenger: (Strategy, &'a StateResult),
    pub(crate) verdict: Verdict,
    /// The fastest preparation measured, ruled out or not.
    pub(crate) fastest: (Strategy, f64),
}

/// The log decision on `states`; `None` when no candidate was measured.
pub(crate) fn log_contest<'a>(info: &FsInfo, states: &'a [StateResult]) -> Option<LogContest<'a>> {
    let state_of = |s: Strategy| {
        SpaceState::of_strategy(s)
            .and_then(|st| states.iter().find(|x| x.state == st && x.measured()))
    };
    let cands: Vec<(Strategy, &StateResult)> = log_candidates(info)
        .into_iter()
        .filter_map(|s| state_of(s).map(|r| (s, r)))
        .collect();
    let fastest = fastest_preparation(states).filter(|_| !cands.is_empty())?;
    let built_in = crate::policy::built_in(info, Intent::Log).first();
    let standing = cands
        .iter()
        .find(|c| c.0 == built_in)
        .copied()
        .unwrap_or(cands[0]);
    let challenger = cands
        .iter()
        .copied()
        .max_by(|a, b| a.1.commits_per_sec.total_cmp(&b.1.commits_per_sec))
        .unwrap_or(standing);
    let verdict = if challenger.0 == standing.0 {
        Verdict::Tie
    } else {
        verdict(challenger.1, standing.1)
    };
    Some(LogContest {
        cands,
        standing,
        challenger,
        verdict,
        fastest,
    })
}

/// The log recommendation when no preparation could be measured: the
/// built-in policy's choice, said to be unmeasured.
fn log_not_measured(info: &FsInfo, append: Option<f64>) -> Recommendation {
    let plan = crate::policy::built_in(info, Intent::Log);
    let strategy = plan.first();
    Recommendation {
        intent: Intent::Log,
        strategy,
        recycle: None,
        summary: format!("{strategy} segments (not measured)"),
        reason: format!(
            "no preparation could be measured on {}; the built-in policy's choice: {}",
            info.display_name(),
            plan.reason
        ),
        figure: 0.0,
        baseline: append,
        baseline_label: Some("appending".into()),
        measured: false,
        too_noisy: false,
        sync_method: None,
        sync_reason: None,
        sync_too_noisy: false,
        log_vs_append: None,
    }
}

/// A log choice and what it was chosen from, for the words of its reason.
/// Its clauses are joined into [`Recommendation::reason`], one sentence:
/// they are not report notes ([`Note`](crate::note::Note)), and no caller picks one out.
struct LogDecision<'a> {
    info: &'a FsInfo,
    states: &'a [StateResult],
    strategy: Strategy,
    figure: f64,
    /// The fastest preparation measured, ruled out or not.
    fastest: (Strategy, f64),
}

impl LogDecision<'_> {
    /// Whether the chosen log space is made NOCOW here (and the recycled
    /// state with it): overwritten in place, not copy-on-write
    /// (`rules::log_nocow`).
    fn nocow(&self) -> bool {
        crate::policy::rules::log_nocow(Some(self.info.kind), self.strategy).0
    }

    /// Why the choice beat the fastest preparation and the ties.
    fn choice_reasons(&self, cands: &[(Strategy, &StateResult)]) -> Vec<String> {
        let (info, strategy, figure, fastest) =
            (self.info, self.strategy, self.figure, self.fastest);
        let mut why = vec![];
        let within = |r: f64| figure >= (1.0 - TIE_MARGIN) * r;
        if fastest.0 != strategy {
            match log_excluded(info, fastest.0) {
                Some(ex) => why.push(format!(
                    "{} measured {} commits/s{} but is ruled out: {ex}",
                    fastest.0,
                    commas(fastest.1),
                    if within(fastest.1) {
                        format!(" ({strategy} is within {:.0}%)", TIE_MARGIN * 100.0)
                    } else {
                        String::new()
                    }
                )),
                // Not within the margin: the verdict's words said it.
                None if within(fastest.1) => why.push(format!(
                    "{} measured {} commits/s, within {:.0}%, and {strategy} {}",
                    fastest.0,
                    commas(fastest.1),
                    TIE_MARGIN * 100.0,
                    match strategy {
                        Strategy::WriteZeroes | Strategy::Allocate => "moves no data to prepare",
                        Strategy::Sparse => {
                            "is what fspace's log uses here (after a free-space check)"
                        }
                        _ if self.nocow() => {
                            "is NOCOW here, overwritten in place, as fspace's log's segments are"
                        }
                        _ => "reserves the space before the commits",
                    }
                )),
                None => {}
            }
        }
        for (other, r) in cands {
            let r = r.commits_per_sec;
            if *other != strategy && *other != fastest.0 && r >= (1.0 - TIE_MARGIN) * figure {
                why.push(format!(
                    "{other} measured {} commits/s, a tie, and {strategy} is the built-in choice ({})",
                    commas(r),
                    if self.nocow() {
                        "on NOCOW files records overwrite written blocks in place, as on ext4: LOG_NOCOW_ON"
                    } else if info.copy_on_write {
                        "on copy-on-write, writing into preallocated extents measured slower than into holes (docs/wal.md)"
                    } else {
                        "the cheapest preparation that reserves the space"
                    }
                ));
            }
        }
        why
    }

    /// What the other space states measured that bears on the choice.
    fn state_reasons(&self) -> Vec<String> {
        let (states, strategy, figure) = (self.states, self.strategy, self.figure);
        let cow = self.info.copy_on_write;
        let unsupported = |st: SpaceState| {
            states
                .iter()
                .find(|x| x.state == st)
                .and_then(|x| x.unsupported.as_deref())
        };
        let mut why = vec![];
        if log_excluded(self.info, Strategy::ZeroFill).is_some()
            && self.fastest.0 != Strategy::ZeroFill
        {
            if let Some(z) = rate(states, SpaceState::ZeroFilled) {
                why.push(format!(
                    "{} is copy-on-write: every overwrite allocates new blocks, so zero-filling ({} commits/s) only writes the space twice",
                    self.info.display_name(),
                    commas(z)
                ));
            }
        }
        if strategy != Strategy::Allocate && !cow {
            match rate(states, SpaceState::Allocated) {
                Some(a) if a < (1.0 - TIE_MARGIN) * figure => why.push(format!(
                    "allocated (unwritten) space managed {} commits/s ({} slower): converting unwritten extents costs a journal commit per fdatasync",
                    commas(a),
                    ratio(figure, a)
                )),
                Some(_) => {}
                None => {
                    if let Some(u) = unsupported(SpaceState::Allocated) {
                        why.push(format!("fallocate is not supported here ({})", short_err(u)));
                    }
                }
            }
        }
        if strategy == Strategy::ZeroFill && rate(states, SpaceState::Allocated).is_some() {
            if let Some(u) = unsupported(SpaceState::WriteZeroed) {
                why.push(format!(
                    "FALLOC_FL_WRITE_ZEROES is not supported here ({})",
                    short_err(u)
                ));
            }
        }
        why
    }

    /// Whether recycling written segments pays (never on copy-on-write),
    /// and what the recycled state measured. Recycled segments are written
    /// blocks, as zero-filled ones are: they are recycled unless the chosen
    /// preparation beat them across the runs ([`verdict`]), so noise alone
    /// never turns recycling off.
    fn recycle(&self) -> (bool, Option<String>) {
        let cow = self.info.copy_on_write && !self.nocow();
        let find = |st: SpaceState| self.states.iter().find(|x| x.state == st && x.measured());
        let Some(recycled) = find(SpaceState::Recycled) else {
            return (false, None);
        };
        let r = recycled.commits_per_sec;
        if cow {
            return (false, Some(format!(
                "recycled segments: {} commits/s, but on copy-on-write recycling saves nothing (every overwrite allocates)",
                commas(r)
            )));
        }
        let chosen = SpaceState::of_strategy(self.strategy).and_then(find);
        let beaten = chosen.map(|c| (c, verdict(c, recycled)));
        match beaten {
            // Zero-filled (or write-zeroed) and recycled segments are the
            // same physical state, written blocks (in memory, so are
            // allocated pages): a difference between them is the
            // measurement's, never the space's.
            Some((c, Verdict::Faster { p })) if self.same_as_recycled() => (true, Some(format!(
                "recycled segments measured slower across the runs ({} against {} commits/s, rank test p = {p:.3}), but they are the same physical state as {} ones (written blocks), so the difference is the measurement's: recycle them",
                spread(recycled),
                spread(c),
                self.strategy
            ))),
            Some((c, Verdict::Faster { p })) => (false, Some(format!(
                "recycled segments measured slower ({} against {} commits/s, rank test p = {p:.3}), so prepare new ones",
                spread(recycled),
                spread(c)
            ))),
            Some((_, Verdict::TooNoisy { .. })) => (true, Some(format!(
                "recycled (written) segments: {} commits/s, slower in the medians but not across the runs, and written blocks are written blocks: recycle them",
                spread(recycled)
            ))),
            _ => (true, Some(format!(
                "recycled (written) segments: {} commits/s with no preparation, so recycle them",
                commas(r)
            ))),
        }
    }

    /// Whether the chosen preparation leaves the same physical state as a
    /// recycled segment: written blocks (zero-fill, write-zeroes), or
    /// pages of a memory filesystem.
    fn same_as_recycled(&self) -> bool {
        // (On btrfs both are NOCOW files: `prepare_file`, LOG_NOCOW_ON.)
        matches!(self.strategy, Strategy::ZeroFill | Strategy::WriteZeroes)
            || matches!(
                self.info.kind,
                crate::fs_info::FsKind::Tmpfs | crate::fs_info::FsKind::Ramfs
            )
    }

    /// What memory filesystems' figures mean. (The log's own rate against
    /// appending is [`Recommendation::log_vs_append`], decided on the runs
    /// the prediction comes from: a second figure here could contradict it.)
    fn context_reasons(&self) -> Vec<String> {
        let mut why = vec![];
        if matches!(
            self.info.kind,
            crate::fs_info::FsKind::Tmpfs | crate::fs_info::FsKind::Ramfs
        ) {
            why.push(format!(
                "{} is memory: fdatasync writes nothing, so these are memory-copy rates",
                self.info.display_name()
            ));
        }
        why
    }
}

fn grown(growth: &[GrowthResult], s: Strategy) -> Option<&GrowthResult> {
    growth
        .iter()
        .find(|g| g.strategy == s && g.unsupported.is_none() && g.bytes > 0)
}

fn bulk(info: &FsInfo, growth: &[GrowthResult], states: &[StateResult]) -> Recommendation {
    let cands: Vec<&GrowthResult> = BULK_PREFERENCE
        .iter()
        .filter(|&&s| {
            !(REMOTE_EXCLUDES_FALLOCATE
                && crate::policy::rules::is_remote(info)
                && matches!(s, Strategy::Allocate | Strategy::WriteZeroes))
        })
        .filter_map(|&s| grown(growth, s))
        .collect();
    let zf = grown(growth, Strategy::ZeroFill);
    if cands.is_empty() {
        let plan = crate::policy::built_in(info, Intent::Bulk);
        let strategy = plan.ladder.first().copied().unwrap_or(Strategy::ZeroFill);
        return Recommendation {
            intent: Intent::Bulk,
            strategy,
            recycle: None,
            summary: format!("{strategy} (not measured)"),
            reason: format!(
                "no growth could be measured; the built-in policy's choice: {}",
                plan.reason
            ),
            figure: 0.0,
            baseline: None,
            baseline_label: None,
            measured: false,
            too_noisy: false,
            sync_method: None,
            sync_reason: None,
            sync_too_noisy: false,
            log_vs_append: None,
        };
    }
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
    let mut beaten: Vec<(&GrowthResult, f64)> = vec![];
    let mut noisy: Option<(&GrowthResult, f64)> = None;
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
    let stands = |s: Strategy| {
        if built.is_some() {
            format!("the built-in choice, {s}, stands")
        } else {
            format!("{s} stands (the fallback: the built-in choice could not be measured here)")
        }
    };
    let target = cands.iter().map(|g| g.bytes).max().unwrap_or(0);
    let (g, decision) = match (faster, noisy) {
        (Some((c, p)), _) => (
            c,
            Some(format!(
                "{} beat {} ({}) across the rounds: {} (rank test p = {p:.3})",
                c.strategy,
                standing.strategy,
                if built.is_some() {
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
                super::stats::ALPHA,
                stands(standing.strategy)
            )),
        ),
        (None, None) => (standing, None),
    };
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

/// `c` against `standing` in words: each one's rounds as the time to grow
/// `target` (from each round's rate: a zero-fill stopped at the time cap is
/// scaled up from what it wrote) and how many rounds.
fn growth_versus(c: &GrowthResult, standing: &GrowthResult, target: u64) -> String {
    let times = |g: &GrowthResult| {
        let (lo, hi) = super::stats::range(&g.runs);
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
                .and_then(|x| x.unsupported.as_deref())
                .map(|u| format!("fallocate is not supported here ({})", short_err(u)))
                .unwrap_or_else(|| {
                    if crate::policy::rules::is_remote(info) {
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

fn sparse(info: &FsInfo, growth: &[GrowthResult]) -> Recommendation {
    let caps = info.caps();
    let Some(g) = grown(growth, Strategy::Sparse) else {
        return Recommendation {
            intent: Intent::Sparse,
            strategy: Strategy::Sparse,
            recycle: None,
            summary: "sparse (not measured)".into(),
            reason: "ftruncate could not be measured here".into(),
            figure: 0.0,
            baseline: None,
            baseline_label: None,
            measured: false,
            too_noisy: false,
            sync_method: None,
            sync_reason: None,
            sync_too_noisy: false,
            log_vs_append: None,
        };
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

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
