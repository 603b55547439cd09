//! fspace's log against plain appending: whether the log, set up as the
//! probe recommends, beat an `O_APPEND` write + `fdatasync` per commit in
//! the probe's own runs, by the rule every decision of the probe keeps
//! ([`verdict`]: medians more than [`TIE_MARGIN`] apart and the rank test
//! separating the runs), and what to do instead where it did not. A log
//! that is no faster than appending still buys recovery, recycling and
//! group commit; a recommendation that says nothing about it when it is
//! slower misleads (issue 30: a quick probe of btrfs showed the log at a
//! fraction of appending and recommended its setup without a word).

use super::schema::{LogCheck, StateResult};
use super::stats::{p_greater, smallest_p, ALPHA};
use super::verdict::{spread, verdict, Verdict, TIE_MARGIN};
use crate::bench::SpaceState;
use crate::policy::{LogVsAppend, Recommendation, VsAppend};
use crate::units::format_count as commas;

/// What plain appending is, in words.
const APPENDING: &str = "plain appending (an O_APPEND write + fdatasync per commit)";

/// What the log buys besides speed, in words, when its runs had one
/// writer.
const OTHER_PROPERTIES: &str = "recovery to the last commit, segment recycling, and group commit among many writers, which these one-writer runs do not measure";

/// The same when its runs had several writers (group commit was in them).
const OTHER_PROPERTIES_MANY: &str = "recovery to the last commit and segment recycling";

/// The log's runs with the setup the recommendation keeps, and whether
/// they alternated with appending's in the same rounds: the check's runs
/// when the log was measured both ways (the suggested setup's where the
/// check confirmed it, else the built-in setup's), else the log state's
/// in the main rounds. These are the runs the prediction
/// (`commit.prediction`, saved as `expected`) comes from, so the two never
/// speak of different runs.
fn log_runs<'a>(
    states: &'a [StateResult],
    check: Option<&'a LogCheck>,
) -> Option<(&'a StateResult, bool)> {
    match check.filter(|c| c.measured()) {
        Some(c) if c.confirmed => Some((&c.recommended, false)),
        Some(c) => Some((&c.built_in, false)),
        None => states
            .iter()
            .find(|s| s.state == SpaceState::Wal)
            .map(|s| (s, true)),
    }
}

/// What a log recommendation's summary ends with where appending beat
/// the log.
const APPENDING_FASTER: &str = "; appending was faster here";

/// Sets the log recommendation `log`'s comparison with appending to `vs`
/// (replacing an earlier one: `fspace probe --writers N` compares again at
/// N writers), and its summary's warning with it: the first words a
/// reader sees must not promise speed the log did not show (issue 30);
/// the finding itself is `log_vs_append`.
pub(crate) fn apply(log: &mut Recommendation, vs: LogVsAppend) {
    if let Some(s) = log.summary.strip_suffix(APPENDING_FASTER) {
        log.summary = s.to_string();
    }
    if log.measured && vs.outcome == VsAppend::Slower {
        log.summary.push_str(APPENDING_FASTER);
    }
    log.log_vs_append = Some(vs);
}

/// fspace's log (its runs as [`log_runs`] picks them) against the
/// appended state, in `states` and the check of the log's setup.
pub(crate) fn log_vs_append(states: &[StateResult], check: Option<&LogCheck>) -> LogVsAppend {
    log_vs_append_at(states, check, 1)
}

/// [`log_vs_append`] for runs of `writers` threads committing at once.
pub(crate) fn log_vs_append_at(
    states: &[StateResult],
    check: Option<&LogCheck>,
    writers: usize,
) -> LogVsAppend {
    let log = log_runs(states, check);
    let append = states.iter().find(|s| s.state == SpaceState::Appended);
    // Every run has committed at least once (the bench engine sees to
    // it); a run without a rate would make the ratio's range meaningless.
    let usable = |s: &StateResult| {
        s.measured()
            && s.commits_per_sec > 0.0
            && !s.runs.is_empty()
            && s.runs.iter().all(|r| r.is_finite() && *r > 0.0)
    };
    let (l, alternating, a) = match (log, append) {
        (Some((l, alt)), Some(a)) if usable(l) && usable(a) => (l, alt, a),
        _ => return not_measured(log.map(|x| x.0), append, writers),
    };
    let ratio = l.commits_per_sec / a.commits_per_sec;
    let ((llo, lhi), (alo, ahi)) = (l.range(), a.range());
    let (outcome, p) = match (verdict(l, a), verdict(a, l)) {
        (Verdict::Faster { p }, _) => (VsAppend::Faster, p),
        (_, Verdict::Faster { p }) => (VsAppend::Slower, p),
        // Level: the p-value of the direction the medians lean.
        _ if ratio >= 1.0 => (VsAppend::Level, p_greater(&l.runs, &a.runs)),
        _ => (VsAppend::Level, p_greater(&a.runs, &l.runs)),
    };
    let f = Figures {
        l,
        a,
        ratio,
        low: llo / ahi,
        high: lhi / alo,
        p,
        alternating,
        writers,
    };
    let (text, instead) = match outcome {
        VsAppend::Faster => (f.faster(), None),
        VsAppend::Slower => {
            let (text, instead) = f.slower(states);
            (text, Some(instead.name().to_string()))
        }
        _ => (f.level(), None),
    };
    LogVsAppend {
        outcome,
        log_commits_per_sec: Some(l.commits_per_sec),
        log_runs: l.runs.clone(),
        append_commits_per_sec: Some(a.commits_per_sec),
        append_runs: a.runs.clone(),
        ratio: Some(ratio),
        ratio_low: Some(f.low),
        ratio_high: Some(f.high),
        p_value: Some(p),
        alternating,
        writers,
        instead,
        text,
    }
}

/// The outcome when the log or appending has no runs to compare: which
/// one, and why.
fn not_measured(
    log: Option<&StateResult>,
    append: Option<&StateResult>,
    writers: usize,
) -> LogVsAppend {
    let why = |what: &str, s: Option<&StateResult>| -> Option<String> {
        match s {
            None => Some(format!("{what} was not measured")),
            Some(s) => match &s.unsupported {
                Some(u) => Some(format!("{what} could not be measured here ({})", u.short())),
                None if s.commits == 0
                    || s.commits_per_sec <= 0.0
                    || s.runs.is_empty()
                    || s.runs.iter().any(|r| !r.is_finite() || *r <= 0.0) =>
                {
                    Some(format!("{what} made no commits in its runs"))
                }
                None => None,
            },
        }
    };
    let reasons: Vec<String> = why("fspace's log", log)
        .into_iter()
        .chain(why("appending", append))
        .collect();
    let figures = |s: Option<&StateResult>| {
        s.filter(|s| s.measured() && s.commits_per_sec > 0.0)
            .map_or((None, vec![]), |s| {
                (Some(s.commits_per_sec), s.runs.clone())
            })
    };
    let (log_commits_per_sec, log_runs) = figures(log);
    let (append_commits_per_sec, append_runs) = figures(append);
    LogVsAppend {
        outcome: VsAppend::NotMeasured,
        log_commits_per_sec,
        log_runs,
        append_commits_per_sec,
        append_runs,
        ratio: None,
        ratio_low: None,
        ratio_high: None,
        p_value: None,
        alternating: false,
        writers,
        instead: None,
        text: format!(
            "not measured: {}, so this probe cannot say whether fspace's log is faster than {APPENDING} here",
            reasons.join(" and ")
        ),
    }
}

/// The figures a finding quotes.
struct Figures<'a> {
    l: &'a StateResult,
    a: &'a StateResult,
    ratio: f64,
    low: f64,
    high: f64,
    p: f64,
    alternating: bool,
    writers: usize,
}

impl Figures<'_> {
    /// `W (lo-hi) against A (lo-hi) commits/s, R (lo-hi) over n and m
    /// runs`.
    fn versus(&self) -> String {
        let one = |s: &StateResult| {
            if s.runs.len() < 2 {
                commas(s.commits_per_sec)
            } else {
                format!("{} ({})", commas(s.commits_per_sec), spread(s))
            }
        };
        let at = if self.writers > 1 {
            format!("at {} writers, ", self.writers)
        } else {
            String::new()
        };
        format!(
            "{at}{} against {} commits/s, {:.2}x ({:.2}-{:.2}x) over {} and {} runs",
            one(self.l),
            one(self.a),
            self.ratio,
            self.low,
            self.high,
            self.l.runs.len(),
            self.a.runs.len()
        )
    }

    /// Where the log's runs came from, when not from the rounds appending
    /// ran in.
    fn basis(&self) -> &'static str {
        if self.alternating {
            ""
        } else {
            "; the log's runs come from the check of its setup, after appending's, not alternating with them"
        }
    }

    fn faster(&self) -> String {
        format!(
            "fspace's log, set up as recommended, beat {APPENDING} across the runs: {} (rank test p = {:.3}){}",
            self.versus(),
            self.p,
            self.basis()
        )
    }

    /// What the log buys besides speed, as these runs measured it.
    fn other(&self) -> &'static str {
        if self.writers > 1 {
            OTHER_PROPERTIES_MANY
        } else {
            OTHER_PROPERTIES
        }
    }

    fn level(&self) -> String {
        let other = self.other();
        // The verdict's own test of the margin, both ways.
        let (l, a) = (self.l.commits_per_sec, self.a.commits_per_sec);
        let within = l < (1.0 + TIE_MARGIN) * a && a < (1.0 + TIE_MARGIN) * l;
        if within {
            return format!(
                "fspace's log, set up as recommended, is level with {APPENDING}: {}, within the {:.0}% margin{}. The log buys its other properties here ({other}), not speed: appending is as fast",
                self.versus(),
                TIE_MARGIN * 100.0,
                self.basis()
            );
        }
        let (n, m) = (self.l.runs.len(), self.a.runs.len());
        let why = if self.p <= ALPHA {
            // The runs separate, but the median latencies say the opposite
            // (verdict): no side is faster by the probe's rule.
            format!(
                "rank test p = {:.3}, but with {} median latencies in the runs",
                self.p,
                if self.ratio > 1.0 { "higher" } else { "lower" }
            )
        } else if smallest_p(n, m) > ALPHA {
            format!(
                "rank test p = {:.3}: {n} and {m} runs cannot separate at p <= {ALPHA:.2}",
                self.p
            )
        } else {
            format!("rank test p = {:.3}, {ALPHA:.2} needed", self.p)
        };
        let (lean, then) = if self.ratio > 1.0 {
            (
                "faster",
                "but a speed gain over appending is not shown beyond the noise",
            )
        } else {
            (
                "slower",
                "not speed: as far as these runs tell, appending is as fast",
            )
        };
        format!(
            "fspace's log, set up as recommended, measured {lean} than {APPENDING} in the medians but not across the runs: {} ({why}){}, so it is level within the noise. The log buys its other properties here ({other}), {then}",
            self.versus(),
            self.basis()
        )
    }

    /// The finding, and the state to commit into instead: the fastest
    /// state that beat appending across the runs, else appending.
    fn slower(&self, states: &[StateResult]) -> (String, SpaceState) {
        let other = self.other();
        let better = states
            .iter()
            .filter(|s| s.measured() && !matches!(s.state, SpaceState::Wal | SpaceState::Appended))
            .filter_map(|s| match verdict(s, self.a) {
                Verdict::Faster { p } => Some((s, p)),
                _ => None,
            })
            .max_by(|x, y| x.0.commits_per_sec.total_cmp(&y.0.commits_per_sec));
        let (instead, state) = match better {
            Some((s, p)) => (
                format!(
                    "commit into {}, which measured fastest: {} commits/s ({}), {:.2}x appending across the runs (rank test p = {p:.3}); or append with O_APPEND + fdatasync",
                    space_of(s.state),
                    commas(s.commits_per_sec),
                    spread(s),
                    s.commits_per_sec / self.a.commits_per_sec
                ),
                s.state,
            ),
            None => (
                "append with O_APPEND + fdatasync".to_string(),
                SpaceState::Appended,
            ),
        };
        (
            format!(
                "fspace's log, set up as recommended, is slower than {APPENDING} here, across the runs: {} (rank test p = {:.3}){}. Instead, for a log of your own on this filesystem: {instead}. fspace's log still buys its other properties ({other}), not speed",
                self.versus(),
                self.p,
                self.basis()
            ),
            state,
        )
    }
}

/// Space in state `s`, as a log of one's own would make and use it.
fn space_of(s: SpaceState) -> &'static str {
    match s {
        SpaceState::Sparse => "holes (a file extended by ftruncate), overwritten in place",
        SpaceState::Allocated => "fallocated space, overwritten in place",
        SpaceState::WriteZeroed => "space written by FALLOC_FL_WRITE_ZEROES, overwritten in place",
        SpaceState::ZeroFilled => "a zero-filled file, overwritten in place",
        SpaceState::Recycled => "a file written before (a recycled segment), overwritten in place",
        SpaceState::Preallocated => {
            "space reserved past the end by fallocate(KEEP_SIZE), appended into"
        }
        SpaceState::Appended | SpaceState::Wal => "appended space",
    }
}
