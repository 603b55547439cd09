//! What untorn page writes cost here, as the probe reports it (issue 31):
//! the filesystem's untorn-write facts, the one answer per page size and
//! I/O path a database setting rests on ([`answer`]), and, where a page
//! size is untorn, durable `O_DIRECT` page writes into written space
//! timed with and without `RWF_ATOMIC` in alternating rounds
//! (`rounds.rs` measures them), the two sides identical but for
//! that flag. This file holds the section's types, the figures of the
//! rounds and their words; it measures nothing.

use super::super::stats::{median, p_greater, range};
use super::super::verdict::{verdict_of, Verdict, TIE_MARGIN};
use crate::reason::Reason;
use crate::units::{format_count as commas, format_human};
use crate::untorn::{answer, Answer, Cost, IoPath, UntornFacts, WritePath};
use serde::Serialize;

/// The page sizes the probe answers for and measures: PostgreSQL's 8 KiB
/// and InnoDB's 16 KiB.
pub const UNTORN_PAGES: [u64; 2] = [8 << 10, 16 << 10];

/// How the measured writes pick their offsets (JSON `offsets`).
pub(super) const OFFSETS: &str = "random";

/// The probe's untorn-write section (JSON `untorn`).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct UntornSection {
    /// The filesystem's untorn-write facts, measured on a scratch file in
    /// the probe's scratch directory (`statx`, the devices, `RWF_ATOMIC`
    /// trial writes: [`facts_of_fs`](crate::untorn::facts_of_fs)); `None`
    /// when they could not be read ([`error`](Self::error) says why).
    pub facts: Option<UntornFacts>,
    /// Why the facts could not be read.
    pub error: Option<Reason>,
    /// The answer for each page size of [`UNTORN_PAGES`], through
    /// `O_DIRECT` and through the page cache, in that order; a direct
    /// answer whose cost was measured carries it
    /// ([`Answer::with_cost`]). Empty without facts.
    pub answers: Vec<Answer>,
    /// One entry per page size of [`UNTORN_PAGES`]: what untorn writes
    /// cost against plain ones, or why that was not measured.
    pub cost: Vec<UntornCost>,
}

impl UntornSection {
    /// The answer for `page_size` bytes through `io`, if there is one.
    pub fn answer(&self, page_size: u64, io: IoPath) -> Option<&Answer> {
        self.answers
            .iter()
            .find(|a| a.page_size == page_size && a.io == io)
    }

    /// The cost entry of `page_size`, if there is one.
    pub fn cost_of(&self, page_size: u64) -> Option<&UntornCost> {
        self.cost.iter().find(|c| c.page_size == page_size)
    }
}

/// One side's runs: plain or untorn writes of one page size.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WriteRuns {
    /// Median writes per second over the runs.
    pub writes_per_sec: f64,
    /// Writes per second of each run: one per round, in order.
    pub runs: Vec<f64>,
    /// Median over the runs of each run's median write latency, µs.
    pub p50_us: f64,
    /// Each run's median write latency, µs, in the order of `runs`.
    pub runs_p50_us: Vec<f64>,
    /// Median over the runs of each run's 99th-percentile latency, µs.
    pub p99_us: f64,
    /// Writes in all runs.
    pub writes: u64,
}

/// What one timed run of one side did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RunFigures {
    pub(super) writes: u64,
    pub(super) seconds: f64,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
}

impl RunFigures {
    pub(super) fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.writes as f64 / self.seconds
        } else {
            0.0
        }
    }
}

impl WriteRuns {
    pub(super) fn of(runs: &[RunFigures]) -> WriteRuns {
        let rates: Vec<f64> = runs.iter().map(RunFigures::rate).collect();
        let p50: Vec<f64> = runs.iter().map(|r| r.p50_us).collect();
        WriteRuns {
            writes_per_sec: median(&mut rates.clone()),
            runs: rates,
            p50_us: median(&mut p50.clone()),
            runs_p50_us: p50,
            p99_us: median(&mut runs.iter().map(|r| r.p99_us).collect::<Vec<_>>()),
            writes: runs.iter().map(|r| r.writes).sum(),
        }
    }
}

/// What untorn writes of one page size cost against plain ones here: in
/// each round, durable (`RWF_DSYNC`) `O_DIRECT` writes of the page at
/// random page-aligned offsets of a zero-filled file, one side with
/// `RWF_ATOMIC` and one without, each into a file of its own prepared the
/// same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct UntornCost {
    /// Bytes per write.
    pub page_size: u64,
    /// How an untorn write of this size is carried out here; `None` where
    /// there is none.
    pub path: Option<WritePath>,
    /// Whether both sides were measured.
    pub measured: bool,
    /// Why not, when not: no untorn writes of this size here (the
    /// answer's words), the facts could not be read, or a write failed
    /// (its call, path and errno).
    pub not_measured: Option<Reason>,
    /// Bytes of each side's file.
    pub file_size: u64,
    /// How each write's offset is chosen: `random` (a multiple of the
    /// page size, the same sequence on both sides of a round).
    pub offsets: &'static str,
    /// The longest time a side was given per round, seconds.
    pub seconds_per_run: f64,
    /// Plain writes: `pwritev2(RWF_DSYNC)` through `O_DIRECT`.
    pub plain: WriteRuns,
    /// Untorn writes: `pwritev2(RWF_ATOMIC | RWF_DSYNC)` through
    /// `O_DIRECT`.
    pub untorn: WriteRuns,
    /// Untorn ÷ plain writes per second of each round.
    pub ratios: Vec<f64>,
    /// The median of `ratios`.
    pub ratio: Option<f64>,
    /// The smallest of `ratios`.
    pub ratio_min: Option<f64>,
    /// The largest of `ratios`.
    pub ratio_max: Option<f64>,
    /// The one-sided rank test's p-value that the plain runs are faster
    /// than the untorn ones.
    pub p_value: Option<f64>,
    /// The finding in words, with the figures.
    pub text: String,
}

impl UntornCost {
    /// The measured cost as the answer carries it ([`Answer::with_cost`]).
    pub fn cost(&self) -> Option<Cost> {
        match (self.measured, self.ratio, self.ratio_min, self.ratio_max) {
            (true, Some(r), Some(lo), Some(hi)) => Some(Cost::new(
                self.untorn.writes_per_sec,
                self.plain.writes_per_sec,
                (r, lo, hi),
                self.ratios.len(),
            )),
            _ => None,
        }
    }
}

/// What a page size needs before it is measured: its path where untorn
/// writes of it are possible here, else why not.
pub(super) fn measurable(
    facts: Option<&UntornFacts>,
    error: Option<&Reason>,
    page: u64,
) -> std::result::Result<Option<WritePath>, Reason> {
    let Some(f) = facts else {
        let what = "the untorn-write facts could not be read here";
        return Err(match error {
            Some(e) => e.clone().context(what),
            None => Reason::new(
                crate::errno::ErrorKind::NotMeasured,
                format!("{what}: no reason given"),
            ),
        });
    };
    let a = answer(f, page, IoPath::Direct);
    if a.untorn {
        Ok(a.path)
    } else {
        Err(Reason::new(
            crate::errno::ErrorKind::Unsupported,
            format!(
                "no untorn {} writes here, {}: {}",
                format_human(page),
                a.short(),
                a.reason
            ),
        ))
    }
}

/// A page size that was not measured, and why.
pub(super) fn not_measured(page: u64, path: Option<WritePath>, why: Reason) -> UntornCost {
    UntornCost {
        page_size: page,
        path,
        measured: false,
        text: format!("not measured: {}", why.text),
        not_measured: Some(why),
        file_size: 0,
        offsets: OFFSETS,
        seconds_per_run: 0.0,
        plain: WriteRuns::default(),
        untorn: WriteRuns::default(),
        ratios: vec![],
        ratio: None,
        ratio_min: None,
        ratio_max: None,
        p_value: None,
    }
}

/// The cost of untorn writes of `page` bytes from the rounds' runs, side
/// by side (`plain[i]` and `untorn[i]` from round `i`).
pub(super) fn cost_of(
    page: u64,
    path: Option<WritePath>,
    plain: &[RunFigures],
    untorn: &[RunFigures],
    file_size: u64,
    seconds_per_run: f64,
) -> UntornCost {
    let pairs: Vec<(f64, f64)> = plain
        .iter()
        .zip(untorn)
        .map(|(p, u)| (p.rate(), u.rate()))
        .filter(|(p, u)| p.is_finite() && u.is_finite() && *p > 0.0 && *u > 0.0)
        .collect();
    if pairs.is_empty() || pairs.len() != plain.len() || plain.len() != untorn.len() {
        return not_measured(
            page,
            path,
            Reason::new(
                crate::errno::ErrorKind::NotMeasured,
                "a round made no writes on one side, so the rounds cannot be compared",
            ),
        );
    }
    let ratios: Vec<f64> = pairs.iter().map(|(p, u)| u / p).collect();
    let (lo, hi) = range(&ratios);
    let ratio = median(&mut ratios.clone());
    let (p, u) = (WriteRuns::of(plain), WriteRuns::of(untorn));
    let p_value = p_greater(&p.runs, &u.runs);
    let text = words(page, path, &p, &u, (ratio, lo, hi));
    UntornCost {
        page_size: page,
        path,
        measured: true,
        not_measured: None,
        file_size,
        offsets: OFFSETS,
        seconds_per_run,
        plain: p,
        untorn: u,
        ratios,
        ratio: Some(ratio),
        ratio_min: Some(lo),
        ratio_max: Some(hi),
        p_value: Some(p_value),
        text,
    }
}

/// "16 KiB untorn writes (software path) were slower than plain ones
/// across the rounds: ...", by the probe's rule ([`verdict_of`]: the
/// medians more than [`TIE_MARGIN`] apart and the rank test separating
/// the runs).
fn words(
    page: u64,
    path: Option<WritePath>,
    plain: &WriteRuns,
    untorn: &WriteRuns,
    (ratio, lo, hi): (f64, f64, f64),
) -> String {
    let n = plain.runs.len();
    let (p, u) = (
        (plain.writes_per_sec, plain.runs.as_slice()),
        (untorn.writes_per_sec, untorn.runs.as_slice()),
    );
    let finding = match (verdict_of(p, u), verdict_of(u, p)) {
        (Verdict::Faster { p }, _) => format!("were slower than plain ones across the rounds (rank test p = {p:.3})"),
        (_, Verdict::Faster { p }) => format!("were faster than plain ones across the rounds (rank test p = {p:.3})"),
        _ if ratio > 1.0 - TIE_MARGIN && ratio < 1.0 + TIE_MARGIN => format!(
            "were level with plain ones (the per-round ratio's median within the {:.0}% margin)",
            TIE_MARGIN * 100.0
        ),
        _ => format!(
            "were not told apart from plain ones beyond the noise (rank test p = {:.3} over {n} and {n} runs)",
            p_greater(&plain.runs, &untorn.runs)
        ),
    };
    let spread = |w: &WriteRuns| {
        let (a, b) = range(&w.runs);
        if w.runs.len() < 2 {
            commas(a)
        } else {
            format!("{}-{}", commas(a), commas(b))
        }
    };
    format!(
        "{} untorn writes{} {finding}: {} against {} writes/s ({} and {} over {n} alternating round{}), median latency {} against {} µs; untorn ÷ plain per round {ratio:.2}x ({lo:.2}-{hi:.2}x)",
        format_human(page),
        path.map_or(String::new(), |p| format!(" ({} path)", p.name())),
        commas(untorn.writes_per_sec),
        commas(plain.writes_per_sec),
        spread(untorn),
        spread(plain),
        if n == 1 { "" } else { "s" },
        commas(untorn.p50_us),
        commas(plain.p50_us)
    )
}

/// The answers for every page size through both I/O paths, the direct
/// ones with their measured cost where there is one.
pub(super) fn answers(facts: Option<&UntornFacts>, cost: &[UntornCost]) -> Vec<Answer> {
    let Some(f) = facts else {
        return vec![];
    };
    let mut out = vec![];
    for page in UNTORN_PAGES {
        for io in [IoPath::Direct, IoPath::Buffered] {
            let a = answer(f, page, io);
            let measured = cost
                .iter()
                .find(|c| c.page_size == page)
                .and_then(UntornCost::cost)
                .filter(|_| io == IoPath::Direct && a.untorn);
            out.push(match measured {
                Some(c) => a.with_cost(c),
                None => a,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs_info::FsKind;
    use crate::untorn::tests_support::{facts_with, xfs_software};
    use crate::untorn::Limits;

    fn xfs() -> UntornFacts {
        xfs_software()
    }

    /// `rates` as runs of one second each, latency the inverse.
    fn runs(rates: &[f64]) -> Vec<RunFigures> {
        rates
            .iter()
            .map(|r| RunFigures {
                writes: *r as u64,
                seconds: 1.0,
                p50_us: 1e6 / r,
                p99_us: 2e6 / r,
            })
            .collect()
    }

    #[test]
    fn the_ratio_is_per_round_with_its_range() {
        let plain = runs(&[1000.0, 800.0, 1200.0, 1000.0]);
        let untorn = runs(&[400.0, 400.0, 360.0, 500.0]);
        let c = cost_of(
            16384,
            Some(WritePath::Software),
            &plain,
            &untorn,
            8 << 20,
            0.2,
        );
        assert!(c.measured);
        assert_eq!(c.ratios, [0.4, 0.5, 0.3, 0.5]);
        assert_eq!(c.ratio, Some(0.45));
        assert_eq!((c.ratio_min, c.ratio_max), (Some(0.3), Some(0.5)));
        assert_eq!(c.plain.writes_per_sec, 1000.0);
        assert_eq!(c.untorn.writes_per_sec, 400.0);
        assert_eq!(c.plain.runs.len(), 4);
        assert_eq!(c.untorn.runs_p50_us.len(), 4);
        // All four plain runs above all four untorn ones: 1 of 70.
        assert!((c.p_value.unwrap() - 1.0 / 70.0).abs() < 1e-12);
        assert!(
            c.text.starts_with("16 KiB untorn writes (software path) were slower than plain ones across the rounds (rank test p = 0.014): 400 against 1,000 writes/s (360-500 and 800-1,200 over 4 alternating rounds)"),
            "{}",
            c.text
        );
        assert!(c.text.ends_with("0.45x (0.30-0.50x)"), "{}", c.text);
        let cost = c.cost().expect("cost");
        assert_eq!((cost.ratio, cost.rounds), (0.45, 4));
        assert_eq!(
            cost.words(),
            "0.45x plain direct writes (0.30-0.50, 4 rounds)"
        );
    }

    #[test]
    fn close_or_overlapping_rounds_are_said_so() {
        let plain = runs(&[1000.0, 1010.0, 990.0]);
        let untorn = runs(&[980.0, 1000.0, 1005.0]);
        let c = cost_of(
            8192,
            Some(WritePath::Software),
            &plain,
            &untorn,
            8 << 20,
            0.1,
        );
        assert!(c.text.contains("were level with plain ones"), "{}", c.text);
        // Medians 30% apart, the rounds overlapping.
        let plain = runs(&[1000.0, 400.0, 1300.0]);
        let untorn = runs(&[700.0, 900.0, 500.0]);
        let c = cost_of(8192, None, &plain, &untorn, 8 << 20, 0.1);
        assert!(
            c.text.starts_with(
                "8 KiB untorn writes were not told apart from plain ones beyond the noise"
            ),
            "{}",
            c.text
        );
    }

    #[test]
    fn a_round_without_writes_is_not_a_ratio() {
        let c = cost_of(8192, None, &runs(&[1000.0]), &runs(&[0.0]), 8 << 20, 0.1);
        assert!(!c.measured);
        assert!(c.cost().is_none());
        assert!(c.text.starts_with("not measured: "), "{}", c.text);
    }

    #[test]
    fn unsupported_sizes_say_the_answers_words() {
        let zero = facts_with(FsKind::Ext4, Limits::Zero);
        let why = measurable(Some(&zero), None, 16384).unwrap_err();
        assert_eq!(why.kind, crate::errno::ErrorKind::Unsupported);
        assert!(
            why.text.starts_with("no untorn 16 KiB writes here, no (not-supported): 16 KiB pages: untorn writes are not supported here"),
            "{why}"
        );
        let none = facts_with(FsKind::Btrfs, Limits::NotReported);
        let why = measurable(Some(&none), None, 8192).unwrap_err();
        assert!(
            why.text.contains("does not report STATX_WRITE_ATOMIC"),
            "{why}"
        );
        let failed = Reason::errno(5, "statx failed");
        let why = measurable(None, Some(&failed), 8192).unwrap_err();
        assert_eq!(
            (why.kind, why.errno),
            (crate::errno::ErrorKind::Io, Some(5))
        );
        assert!(
            why.text.ends_with("could not be read here: statx failed"),
            "{why}"
        );
        assert_eq!(
            measurable(Some(&xfs()), None, 16384),
            Ok(Some(WritePath::Software))
        );
    }

    #[test]
    fn answers_carry_the_measured_cost_on_the_direct_path_only() {
        let f = xfs();
        let measured = cost_of(
            16384,
            Some(WritePath::Software),
            &runs(&[1000.0, 1000.0, 1000.0]),
            &runs(&[400.0, 500.0, 450.0]),
            8 << 20,
            0.2,
        );
        let cost = vec![
            not_measured(
                8192,
                Some(WritePath::Software),
                Reason::new(crate::errno::ErrorKind::NotMeasured, "no time"),
            ),
            measured,
        ];
        let a = answers(Some(&f), &cost);
        let keys: Vec<(u64, IoPath)> = a.iter().map(|a| (a.page_size, a.io)).collect();
        assert_eq!(
            keys,
            [
                (8192, IoPath::Direct),
                (8192, IoPath::Buffered),
                (16384, IoPath::Direct),
                (16384, IoPath::Buffered)
            ]
        );
        assert!(a[0].cost.is_none() && a[1].cost.is_none() && a[3].cost.is_none());
        let d = &a[2];
        assert_eq!(d.short(), "yes (software path)");
        assert_eq!(d.cost.as_ref().map(|c| c.ratio), Some(0.45));
        assert!(
            d.reason
                .ends_with("cost measured: 0.45x plain direct writes (0.40-0.50, 3 rounds)"),
            "{}",
            d.reason
        );
        assert_eq!(a[3].short(), "no (O_DIRECT only)");
        assert!(answers(None, &cost).is_empty());
    }
}
