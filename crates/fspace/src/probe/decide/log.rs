//! The log decision: the preparation of the log's segments, among the
//! candidates the policy allows here, the built-in choice standing unless
//! the fastest one beat it across the runs; whether to recycle them; and
//! the reasons, in words.

use super::super::schema::StateResult;
use super::super::verdict::{spread, verdict, verdict_words, Verdict, TIE_MARGIN};
use super::figures::{not_measured, rate, ratio};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::policy::rules::{log_candidates, log_excluded};
use crate::policy::Recommendation;
use crate::strategy::{Intent, Strategy};
use crate::units::format_count as commas;

/// Returns the preparation (sparse, allocate, write-zeroes, zero-fill) whose
/// commits measured fastest, ruled out here or not, with its rate.
fn fastest_preparation(states: &[StateResult]) -> Option<(Strategy, f64)> {
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

/// The log recommendation alone (see [`recommend`](super::recommend)).
///
/// The built-in policy's choice stands unless the fastest allowed
/// preparation beat it ([`verdict`]); when the medians differ by more than
/// the margin but the runs cannot tell them apart, the recommendation says
/// so and is marked [`Recommendation::too_noisy`].
///
/// With `allow_change` false (fspace's log set up as the states suggest did
/// not beat its built-in setup, [`LogCheck`](super::super::schema::LogCheck)) the built-in choice stays
/// whatever the states measured.
pub(super) fn log(info: &FsInfo, states: &[StateResult], allow_change: bool) -> Recommendation {
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
        baseline: append,
        baseline_label: Some("appending".into()),
        ..not_measured(
            Intent::Log,
            strategy,
            format!("{strategy} segments (not measured)"),
            format!(
                "no preparation could be measured on {}; the built-in policy's choice: {}",
                info.display_name(),
                plan.reason
            ),
        )
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
                .and_then(|x| x.unsupported.as_ref())
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
                        why.push(format!("fallocate is not supported here ({})", u.short()));
                    }
                }
            }
        }
        if strategy == Strategy::ZeroFill && rate(states, SpaceState::Allocated).is_some() {
            if let Some(u) = unsupported(SpaceState::WriteZeroed) {
                why.push(format!(
                    "FALLOC_FL_WRITE_ZEROES is not supported here ({})",
                    u.short()
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
