//! From measurements to a policy: one recommended [`Strategy`] per
//! [`Intent`], with the figures that decided it.
//!
//! The rules, each a named constant below:
//!
//! - **log**: the candidates are the preparations whose commits could be
//!   measured here, minus the ruled-out ones: zero-fill on copy-on-write
//!   filesystems ([`COW_EXCLUDES_ZERO_FILL`](crate::policy::rules::COW_EXCLUDES_ZERO_FILL)), sparse elsewhere (holes
//!   reserve nothing), fallocate-based ones on network and FUSE filesystems
//!   ([`REMOTE_EXCLUDES_FALLOCATE`]). The first candidate in
//!   [`LOG_PREFERENCE`] ([`LOG_PREFERENCE_COW`] on copy-on-write) whose rate
//!   is within [`TIE_MARGIN`] of the fastest preparation measured wins; if
//!   none is, the fastest candidate does, and the reason names the faster
//!   one that was ruled out. Filesystems without `fallocate` (ext4 without
//!   extents, sshfs) never get a strategy built on it.
//! - **bulk**: among the strategies that reserve space (and, on network and
//!   FUSE filesystems, do not need `fallocate`), the fastest growth wins,
//!   ties broken by [`BULK_PREFERENCE`].
//! - **sparse**: `ftruncate` (the intent is that the space may stay
//!   empty); the reason says what it cost and whether holes are kept.

use super::{GrowthResult, StateResult};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::policy::rules::{
    log_excluded, BULK_PREFERENCE, LOG_PREFERENCE, LOG_PREFERENCE_COW, REMOTE_EXCLUDES_FALLOCATE,
};
use crate::policy::Recommendation;
use crate::strategy::{Intent, Strategy};
use crate::units::{
    errno_text as short_err, format_count as commas, format_human, format_seconds as duration,
};

/// Figures within this fraction of the best count as a tie: 10%. Evidence:
/// repeated `fspace bench commit` runs on this project's test machine put
/// the same mode 5-10% apart from one round to the next
/// (bench/results/2026-11-22-commit.md); a smaller difference is noise.
pub const TIE_MARGIN: f64 = 0.10;

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

/// Returns the recommendations for log, bulk and sparse.
pub fn recommend(
    info: &FsInfo,
    states: &[StateResult],
    growth: &[GrowthResult],
) -> Vec<Recommendation> {
    vec![log(info, states), bulk(info, growth), sparse(info, growth)]
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
pub(crate) fn log(info: &FsInfo, states: &[StateResult]) -> Recommendation {
    let cow = info.copy_on_write;
    let rate_of = |s: Strategy| SpaceState::of_strategy(s).and_then(|st| rate(states, st));
    let order: &[Strategy] = if cow {
        &LOG_PREFERENCE_COW
    } else {
        &LOG_PREFERENCE
    };
    let cands: Vec<(Strategy, f64)> = order
        .iter()
        .filter(|s| log_excluded(info, **s).is_none())
        .filter_map(|&s| rate_of(s).map(|r| (s, r)))
        .collect();
    let append = rate(states, SpaceState::Appended);
    // The fastest preparation measured, candidate or not: a tie must be
    // within the margin of it.
    let Some(fastest) = fastest_preparation(states).filter(|_| !cands.is_empty()) else {
        return log_not_measured(info, append);
    };
    // The first in preference within the margin of the fastest measured;
    // if none is (the fastest is ruled out), the first within the margin
    // of the fastest candidate.
    let best_cand = cands.iter().map(|c| c.1).fold(0.0, f64::max);
    let (strategy, figure) = cands
        .iter()
        .copied()
        .find(|c| c.1 >= (1.0 - TIE_MARGIN) * fastest.1)
        .or_else(|| {
            cands
                .iter()
                .copied()
                .find(|c| c.1 >= (1.0 - TIE_MARGIN) * best_cand)
        })
        .unwrap_or(cands[0]);
    let d = LogDecision {
        info,
        states,
        strategy,
        figure,
        fastest,
    };
    let mut why = d.choice_notes(&cands);
    why.extend(d.state_notes());
    let (recycle, note) = d.recycle();
    why.extend(note);
    why.extend(d.context_notes(append));
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
        summary: if recycle {
            format!("{strategy} segments, recycle them")
        } else {
            format!("{strategy} segments")
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
    }
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
    }
}

/// A log choice and what it was chosen from, for the words of its reason.
struct LogDecision<'a> {
    info: &'a FsInfo,
    states: &'a [StateResult],
    strategy: Strategy,
    figure: f64,
    /// The fastest preparation measured, ruled out or not.
    fastest: (Strategy, f64),
}

impl LogDecision<'_> {
    /// Why the choice beat the fastest preparation and the ties.
    fn choice_notes(&self, cands: &[(Strategy, f64)]) -> Vec<String> {
        let (info, strategy, figure, fastest) =
            (self.info, self.strategy, self.figure, self.fastest);
        let mut why = vec![];
        if fastest.0 != strategy {
            let within = figure >= (1.0 - TIE_MARGIN) * fastest.1;
            match log_excluded(info, fastest.0) {
                Some(ex) => why.push(format!(
                    "{} measured {} commits/s{} but is ruled out: {ex}",
                    fastest.0,
                    commas(fastest.1),
                    if within {
                        format!(" ({strategy} is within {:.0}%)", TIE_MARGIN * 100.0)
                    } else {
                        String::new()
                    }
                )),
                None => why.push(format!(
                    "{} measured {} commits/s, within {:.0}%, and {strategy} {}",
                    fastest.0,
                    commas(fastest.1),
                    TIE_MARGIN * 100.0,
                    match strategy {
                        Strategy::WriteZeroes | Strategy::Allocate => "moves no data to prepare",
                        Strategy::Sparse => {
                            "is what fspace's log uses here (after a free-space check)"
                        }
                        _ => "reserves the space before the commits",
                    }
                )),
            }
        }
        for (other, r) in cands {
            if *other != strategy && *other != fastest.0 && *r >= (1.0 - TIE_MARGIN) * figure {
                why.push(format!(
                    "{other} measured {} commits/s, a tie, and {strategy} comes first ({})",
                    commas(*r),
                    if info.copy_on_write {
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
    fn state_notes(&self) -> Vec<String> {
        let (states, strategy, figure) = (self.states, self.strategy, self.figure);
        let cow = self.info.copy_on_write;
        let unsupported = |st: SpaceState| {
            states
                .iter()
                .find(|x| x.state == st)
                .and_then(|x| x.unsupported.as_deref())
        };
        let mut why = vec![];
        if cow && self.fastest.0 != Strategy::ZeroFill {
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
    /// and what the recycled state measured.
    fn recycle(&self) -> (bool, Option<String>) {
        let cow = self.info.copy_on_write;
        let recycled = rate(self.states, SpaceState::Recycled);
        let recycle = !cow && recycled.is_some_and(|r| r >= (1.0 - TIE_MARGIN) * self.figure);
        let note = match recycled {
            Some(r) if cow => Some(format!(
                "recycled segments: {} commits/s, but on copy-on-write recycling saves nothing (every overwrite allocates)",
                commas(r)
            )),
            Some(r) if recycle => Some(format!(
                "recycled (written) segments: {} commits/s with no preparation, so recycle them",
                commas(r)
            )),
            Some(r) => Some(format!(
                "recycled segments measured slower ({} commits/s), so prepare new ones",
                commas(r)
            )),
            None => None,
        };
        (recycle, note)
    }

    /// The log's own rate, and what memory filesystems' figures mean.
    fn context_notes(&self, append: Option<f64>) -> Vec<String> {
        let mut why = vec![];
        if let (Some(w), Some(a)) = (rate(self.states, SpaceState::Wal), append) {
            why.push(format!(
                "fspace's log did {} commits/s ({} appending)",
                commas(w),
                ratio(w, a)
            ));
        }
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

fn bulk(info: &FsInfo, growth: &[GrowthResult]) -> Recommendation {
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
    let Some(best) = cands.iter().map(|g| g.bytes_per_sec).reduce(f64::max) else {
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
        };
    };
    let g = cands
        .iter()
        .find(|g| g.bytes_per_sec >= (1.0 - TIE_MARGIN) * best)
        .copied()
        .unwrap_or(cands[0]);
    let reason = format!(
        "{} in {} ({}/s){}",
        format_human(g.bytes),
        duration(g.seconds),
        format_human(g.bytes_per_sec as u64),
        bulk_why(info, growth, g)
    );
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
    }
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
                    } else {
                        "no faster way to reserve the space was measured".into()
                    }
                });
            format!(": {why}, so the zeros are written (never glibc's one byte per block)")
        }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::SpaceState;

    fn st(state: SpaceState, rate: f64) -> StateResult {
        StateResult {
            state,
            unsupported: if rate < 0.0 {
                Some("fallocate(x): Operation not supported (os error 95)".into())
            } else {
                None
            },
            commits_per_sec: rate.max(0.0),
            runs: vec![rate],
            p50_us: 1.0,
            p99_us: 2.0,
            commits: if rate > 0.0 { 100 } else { 0 },
            vs_append: None,
            wal: None,
            notes: vec![],
        }
    }

    fn info(kind: crate::fs_info::FsKind) -> FsInfo {
        let mut i = crate::fs_info::identify(std::path::Path::new("/")).unwrap();
        i.kind = kind;
        i.fs_type = Some(kind.name());
        i.copy_on_write = kind.is_copy_on_write();
        i
    }

    fn states(r: [f64; 7]) -> Vec<StateResult> {
        SpaceState::ALL
            .iter()
            .zip(r)
            .map(|(&s, r)| st(s, r))
            .collect()
    }

    #[test]
    fn ext4_like_picks_zero_fill_and_says_why() {
        // append, sparse, allocated, write-zeroed, zero-filled, recycled, wal
        let s = states([1830.0, 1900.0, 3100.0, -1.0, 7034.0, 7100.0, 6900.0]);
        let r = log(&info(crate::fs_info::FsKind::Ext4), &s);
        assert_eq!(r.strategy, Strategy::ZeroFill);
        assert_eq!(r.recycle, Some(true));
        assert!(
            r.reason
                .starts_with("7,034 commits/s vs 1,830 appending (3.8x)"),
            "{}",
            r.reason
        );
        assert!(r.reason.contains("journal commit"), "{}", r.reason);
    }

    #[test]
    fn ties_prefer_cheaper_preparation() {
        let s = states([
            50_000.0, 52_000.0, 50_500.0, -1.0, 53_000.0, 52_000.0, 40_000.0,
        ]);
        let r = log(&info(crate::fs_info::FsKind::Tmpfs), &s);
        assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
        assert!(r.reason.contains("memory-copy rates"), "{}", r.reason);
    }

    #[test]
    fn cow_never_zero_fill() {
        let s = states([1000.0, 1050.0, 1040.0, -1.0, 1300.0, 1000.0, 1000.0]);
        let r = log(&info(crate::fs_info::FsKind::Btrfs), &s);
        assert_eq!(r.strategy, Strategy::Sparse, "{}", r.reason);
        assert_eq!(r.recycle, Some(false));
        assert!(
            r.reason.contains("ruled out: copy-on-write"),
            "{}",
            r.reason
        );
        // Allocate wins on copy-on-write only when clearly faster.
        let s = states([1000.0, 1000.0, 1200.0, -1.0, 1100.0, 1000.0, 1000.0]);
        assert_eq!(
            log(&info(crate::fs_info::FsKind::Btrfs), &s).strategy,
            Strategy::Allocate
        );
    }

    #[test]
    fn cow_preference_holds_when_the_fastest_is_ruled_out() {
        // zero-filled 1000 (ruled out), sparse 850, allocate 880: sparse,
        // as allocate is not more than the margin faster than it.
        let s = states([800.0, 850.0, 880.0, -1.0, 1000.0, 800.0, 800.0]);
        let r = log(&info(crate::fs_info::FsKind::Btrfs), &s);
        assert_eq!(r.strategy, Strategy::Sparse, "{}", r.reason);
        assert!(r.reason.contains("ruled out"), "{}", r.reason);
    }

    #[test]
    fn holes_are_no_log_preparation_in_place() {
        // Sparse measured fastest on an in-place filesystem: not chosen.
        let s = states([1000.0, 5000.0, 1000.0, -1.0, 4800.0, 4900.0, 4700.0]);
        let r = log(&info(crate::fs_info::FsKind::Ext4), &s);
        assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
        assert!(r.reason.contains("sparse measured 5,000"), "{}", r.reason);
    }

    #[test]
    fn remote_never_fallocate() {
        let mut i = info(crate::fs_info::FsKind::Fuse);
        i.network = true;
        let s = states([1000.0, 1000.0, 3000.0, -1.0, 1500.0, 1500.0, 1500.0]);
        let r = log(&i, &s);
        assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
        assert!(r.reason.contains("network/FUSE"), "{}", r.reason);
    }

    #[test]
    fn no_fallocate_never_picks_it() {
        let s = states([800.0, 820.0, -1.0, -1.0, 2500.0, 2600.0, 2400.0]);
        let r = log(&info(crate::fs_info::FsKind::Ext4), &s);
        assert_eq!(r.strategy, Strategy::ZeroFill);
        assert!(
            r.reason.contains("fallocate is not supported"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn chosen_is_within_margin_of_fastest_candidate() {
        use proptest::prelude::{any, prop_assert, proptest};
        proptest!(|(r in proptest::collection::vec(-1.0f64..1e5, 7), cow in any::<bool>())| {
            let s = states([r[0], r[1], r[2], r[3], r[4], r[5], r[6]]);
            let kind = if cow { crate::fs_info::FsKind::Btrfs } else { crate::fs_info::FsKind::Xfs };
            let rec = log(&info(kind), &s);
            let allowed_states: &[SpaceState] = if cow {
                &[SpaceState::Sparse, SpaceState::Allocated]
            } else {
                &[SpaceState::Allocated, SpaceState::WriteZeroed, SpaceState::ZeroFilled]
            };
            let allowed: Vec<f64> = allowed_states.iter().filter_map(|x| rate(&s, *x)).collect();
            let all: Vec<f64> = [SpaceState::Sparse, SpaceState::Allocated, SpaceState::WriteZeroed, SpaceState::ZeroFilled]
                .iter()
                .filter_map(|x| rate(&s, *x))
                .collect();
            if let Some(best) = allowed.iter().copied().reduce(f64::max) {
                let best_all = all.iter().copied().fold(0.0, f64::max);
                prop_assert!(rec.measured);
                prop_assert!(allowed_states.contains(&SpaceState::of_strategy(rec.strategy).unwrap()));
                // Within the margin of the fastest measured at all whenever
                // an allowed one is.
                if best >= (1.0 - TIE_MARGIN) * best_all {
                    prop_assert!(rec.figure >= (1.0 - TIE_MARGIN) * best_all);
                }
                prop_assert!(rec.figure >= (1.0 - TIE_MARGIN) * best);
            } else {
                prop_assert!(!rec.measured);
            }
        });
    }
}
