//! What the engines' decisions share: the probe's rule applied to two
//! cases, in words; a kept setting; the expected rate; what the
//! filesystem offers for untorn page writes, in words; the comments of a
//! fragment.

use super::super::schema::{Prediction, StateResult};
use super::super::stats::range;
use super::super::verdict::{verdict, Verdict};
use super::types::{AdviceKind, EngineAdvice, EngineCase, Setting};
use crate::units::{format_count as commas, format_human};
use crate::untorn::{Answer, IoPath};

/// Whether `challenger` beat `default` by the probe's rule, and with every
/// one of its rounds above every one of the default's; the words that say
/// how they compared either way.
pub(crate) fn beats(challenger: &StateResult, default: &StateResult) -> (bool, String) {
    if !challenger.measured() {
        let why = challenger
            .unsupported
            .as_ref()
            .map_or("no commit completed", |r| r.text.as_str());
        return (false, format!("it could not be measured here ({why})"));
    }
    if !default.measured() {
        return (false, "the default could not be measured here".into());
    }
    let (lo, hi) = range(&challenger.runs);
    let (dlo, dhi) = range(&default.runs);
    let figures = format!(
        "{} commits/s ({}-{}) against {} ({}-{}), {:.2}x",
        commas(challenger.commits_per_sec),
        commas(lo),
        commas(hi),
        commas(default.commits_per_sec),
        commas(dlo),
        commas(dhi),
        challenger.commits_per_sec / default.commits_per_sec.max(f64::MIN_POSITIVE)
    );
    match verdict(challenger, default) {
        // An engine's default changes only when every round says so: the
        // rank test alone let a 17% median gain with one round overlapping
        // (830 against 860) change PostgreSQL's wal_recycle on btrfs in
        // one standard probe and not in the next
        // (bench/runs/2026-11-27-engines, bench/runs/2026-11-27-probe-for).
        Verdict::Faster { p } if lo <= dhi => (
            false,
            format!("faster in the medians, but its slowest round was not above the default's fastest: {figures} (p = {p:.3})"),
        ),
        Verdict::Faster { p } => (true, format!("measured faster in every round: {figures} (p = {p:.3})")),
        Verdict::TooNoisy { p } => (
            false,
            format!("faster in the medians but the rounds overlap: {figures} (p = {p:.3})"),
        ),
        Verdict::Tie => (false, format!("not faster beyond the noise: {figures}")),
    }
}

/// The case whose `settings` are `settings`.
pub(crate) fn case<'a>(a: &'a EngineAdvice, settings: &str) -> Option<&'a EngineCase> {
    a.cases.iter().find(|c| c.settings == settings)
}

/// A setting kept at its default because no value beat it.
pub(crate) fn keep(name: &str, default: &str, reason: String) -> Setting {
    Setting {
        name: name.into(),
        value: default.into(),
        default: default.into(),
        kind: AdviceKind::KeepDefault,
        reason,
        gain: None,
        requires: vec![],
    }
}

/// The expected rate from the case that stands for the advice.
pub(crate) fn expect(c: &EngineCase, basis: &str) -> Option<Prediction> {
    c.figures.measured().then(|| {
        let (low, high) = range(&c.figures.runs);
        Prediction {
            commits_per_sec: c.figures.commits_per_sec,
            low,
            high,
            setup: c.settings.clone(),
            basis: format!("{} rounds of {basis}", c.figures.runs.len()),
            log: None,
        }
    })
}

/// Where [`comment`] wraps: 72 columns, so that a comment indented in an
/// OPTIONS section, then quoted by `fspace probe` 4 columns in, still
/// fits 80.
const COMMENT_COLUMNS: usize = 72;

/// `# reason` comment lines, wrapped near [`COMMENT_COLUMNS`].
pub(crate) fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for w in text.split_whitespace() {
        if line.len() + 1 + w.len() > COMMENT_COLUMNS && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(w);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A setting's comment: its kind, reason and gain.
pub(crate) fn explain(s: &Setting) -> String {
    let what = match s.kind {
        AdviceKind::Change => format!("changed from the default {}", s.default),
        AdviceKind::KeepDefault => "the default: right here".into(),
        AdviceKind::KeepForSafety => "kept on for safety".into(),
        AdviceKind::TradeOff => format!(
            "a trade-off, not applied (the default is {}); it needs {}",
            s.default,
            if s.requires.is_empty() {
                "nothing else".to_string()
            } else {
                s.requires.join(", ")
            }
        ),
        AdviceKind::NotMeasured => "the default: not decided by a measurement".into(),
    };
    comment(&format!("{}: {what}. {}", s.name, s.reason))
}

/// What the filesystem offers for untorn writes of an engine's data pages
/// (`page` bytes through `io`, written `how`): the probe's answer, its
/// short form and its reason, for a safety setting's reason; and whether
/// such writes are untorn here (`None`: not known, the facts could not be
/// read).
pub(crate) fn untorn_offer(
    answers: &[Answer],
    page: u64,
    io: IoPath,
    how: &str,
) -> (Option<bool>, String) {
    let head = format!(
        "Untorn writes of its {} data pages {how} here",
        format_human(page)
    );
    match answers.iter().find(|a| a.page_size == page && a.io == io) {
        Some(a) => (
            Some(a.untorn),
            format!("{head}: {}: {}", a.short(), a.reason),
        ),
        None => (
            None,
            format!(
                "{head}: not known (the probe could not read the filesystem's untorn-write facts)"
            ),
        ),
    }
}
