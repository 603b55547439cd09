//! One answer a database setting can rest on: is a page write of this size,
//! through this I/O path, untorn here?

use super::check::{check, Limit, Refusal};
use super::facts::{Limits, UntornFacts, WritePath};
use crate::units::format_human;
use serde::Serialize;

/// How the pages are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoPath {
    /// `O_DIRECT`: InnoDB's default on Linux, PostgreSQL's WAL with
    /// `wal_level=minimal`.
    Direct,
    /// Through the page cache: PostgreSQL 15's data pages.
    Buffered,
}

impl IoPath {
    /// The name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            IoPath::Direct => "direct",
            IoPath::Buffered => "buffered",
        }
    }
}

impl std::str::FromStr for IoPath {
    type Err = crate::invalid::ParseError;
    fn from_str(s: &str) -> std::result::Result<Self, crate::invalid::ParseError> {
        match s {
            "direct" => Ok(IoPath::Direct),
            "buffered" => Ok(IoPath::Buffered),
            _ => Err(crate::invalid::ParseError::new(
                "I/O path",
                s,
                ["direct", "buffered"],
            )),
        }
    }
}

/// What untorn page writes cost, measured by the probe: durable writes of
/// the page size through `O_DIRECT` with and without `RWF_ATOMIC`, in
/// alternating rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Cost {
    /// Median untorn writes per second.
    pub untorn_per_sec: f64,
    /// Median plain writes per second.
    pub plain_per_sec: f64,
    /// Median of the per-round ratios untorn ÷ plain.
    pub ratio: f64,
    /// Smallest per-round ratio.
    pub ratio_min: f64,
    /// Largest per-round ratio.
    pub ratio_max: f64,
    /// Rounds measured.
    pub rounds: usize,
}

impl Cost {
    /// Builds the cost from the median rates and the per-round ratio's
    /// median and range.
    pub fn new(
        untorn_per_sec: f64,
        plain_per_sec: f64,
        ratio: (f64, f64, f64),
        rounds: usize,
    ) -> Cost {
        Cost {
            untorn_per_sec,
            plain_per_sec,
            ratio: ratio.0,
            ratio_min: ratio.1,
            ratio_max: ratio.2,
            rounds,
        }
    }

    /// "0.41x plain direct writes (0.38-0.44, 5 rounds)".
    pub fn words(&self) -> String {
        format!(
            "{:.2}x plain direct writes ({:.2}-{:.2}, {} rounds)",
            self.ratio, self.ratio_min, self.ratio_max, self.rounds
        )
    }
}

/// Whether a page write of [`page_size`](Self::page_size) through
/// [`io`](Self::io) is untorn here, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Answer {
    /// The page size asked about.
    pub page_size: u64,
    /// The I/O path asked about.
    pub io: IoPath,
    /// True when such a write that asks for it (`RWF_ATOMIC`) is untorn.
    pub untorn: bool,
    /// The path that makes it untorn, when it is.
    pub path: Option<WritePath>,
    /// When it is not: the limit or rule that fails ([`Refusal::limit`],
    /// or [`Limit::RefusedByKernel`] when the limits allowed it and a
    /// trial write failed).
    pub limit: Option<Limit>,
    /// Whether a trial write of this size and path on a scratch file
    /// agreed (`None`: no trial was made, e.g. for an existing file).
    pub confirmed: Option<bool>,
    /// The answer in words: the rule, the figures behind it.
    pub reason: String,
    /// What the untorn writes cost against plain ones, when the probe
    /// measured it.
    pub cost: Option<Cost>,
}

impl Answer {
    /// "yes (software path)", "no (O_DIRECT only)" (a write through the
    /// page cache: only `O_DIRECT` writes can be untorn) or "no (LIMIT)".
    pub fn short(&self) -> String {
        match (self.untorn, self.path, self.limit) {
            (true, Some(p), _) => format!("yes ({} path)", p.name()),
            (true, None, _) => "yes".into(),
            (false, _, Some(Limit::Buffered)) => "no (O_DIRECT only)".into(),
            (false, _, Some(l)) => format!("no ({})", l.name()),
            (false, _, None) => "no".into(),
        }
    }

    /// Attaches the probe's measured cost, and says it in the reason.
    pub fn with_cost(mut self, cost: Cost) -> Answer {
        self.reason = format!("{}; cost measured: {}", self.reason, cost.words());
        self.cost = Some(cost);
        self
    }
}

/// Answers whether a write of `page_size` bytes through `io` is untorn on
/// the file or filesystem `facts` describe. Uses the kernel's rules on the
/// reported limits, then the trial writes (for a filesystem's facts), which
/// win where they disagree: what the kernel did outranks what fspace
/// expects of it.
pub fn answer(facts: &UntornFacts, page_size: u64, io: IoPath) -> Answer {
    let direct = io == IoPath::Direct;
    let size = u32::try_from(page_size).ok();
    let trial = size.and_then(|s| facts.trial(s, direct));
    let h = format_human(page_size);
    let mut a = Answer {
        page_size,
        io,
        untorn: false,
        path: None,
        limit: None,
        confirmed: trial.map(|t| t.ok),
        reason: String::new(),
        cost: None,
    };
    // Buffered first: it holds whatever the device and filesystem offer.
    let ruled = if direct {
        check(&facts.limits, page_size, 0, true)
    } else {
        Err(Refusal::Buffered)
    };
    match (ruled, trial) {
        (Ok(()), Some(t)) if !t.ok => {
            a.limit = Some(Limit::RefusedByKernel);
            a.reason = format!(
                "statx reports {} untorn writes of {h}, but the kernel refused one on a scratch file here ({})",
                facts.limits.words(),
                t.error.as_ref().map_or("no error", |r| r.text.as_str())
            );
        }
        (Ok(()), _) => {
            a.untorn = true;
            a.path = facts.path_for(page_size);
            a.reason = format!(
                "{h} pages written with RWF_ATOMIC through O_DIRECT, at offsets that are multiples of {h}, are untorn here: statx reports {}{}{}",
                facts.limits.words(),
                path_words(a.path),
                if trial.is_some() {
                    "; a trial write on a scratch file succeeded"
                } else {
                    ""
                }
            );
        }
        (Err(Refusal::Buffered), Some(t)) if t.ok => {
            // A kernel newer than this code's knowledge took a buffered
            // untorn write: believe it, path unknown.
            a.untorn = true;
            a.path = Some(WritePath::Unknown);
            a.reason = format!(
                "the kernel took a buffered RWF_ATOMIC write of {h} on a scratch file here"
            );
        }
        (Err(r), _) => {
            a.limit = Some(r.limit());
            a.reason = match r {
                Refusal::Buffered => format!(
                    "buffered writes are not untorn: the kernel takes RWF_ATOMIC only with O_DIRECT{}, whatever the device offers{}",
                    match trial {
                        Some(t) => format!(
                            " (a buffered {h} RWF_ATOMIC write on a scratch file here was refused: {})",
                            t.error.as_ref().map_or("refused", |r| r.text.as_str())
                        ),
                        None => String::new(),
                    },
                    match &facts.limits {
                        Limits::Supported { .. } => String::new(),
                        l => format!("; besides, the untorn-write limits here: {}", l.words()),
                    }
                ),
                r => format!("{h} pages: {}", r.words()),
            };
        }
    }
    a
}

fn path_words(p: Option<WritePath>) -> &'static str {
    match p {
        Some(WritePath::Hardware) => {
            "; by the hardware path (the device writes the unit in one command)"
        }
        Some(WritePath::Software) => {
            "; by the software path (XFS writes the page out of place and switches the mapping in one transaction: each write allocates blocks and commits the log)"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::super::facts::tests_support::{facts_with, xfs_software};
    use super::*;
    use crate::fs_info::FsKind;

    #[test]
    fn buffered_is_no_whatever_the_limits() {
        let f = xfs_software();
        let a = answer(&f, 8192, IoPath::Buffered);
        assert!(!a.untorn);
        assert_eq!(a.limit, Some(Limit::Buffered));
        assert!(a.reason.contains("only with O_DIRECT"), "{}", a.reason);
        let a = answer(&f, 16384, IoPath::Direct);
        assert!(a.untorn, "{a:?}");
        assert_eq!(a.path, Some(WritePath::Software));
        assert_eq!(a.short(), "yes (software path)");
        let a = answer(&f, 12288, IoPath::Direct);
        assert_eq!(a.limit, Some(Limit::NotPowerOfTwo));
        let z = facts_with(FsKind::Ext4, Limits::Zero);
        let a = answer(&z, 16384, IoPath::Direct);
        assert_eq!(a.short(), "no (not-supported)");
        let a = answer(&z, 8192, IoPath::Buffered);
        assert!(
            a.reason
                .contains("besides, the untorn-write limits here: reported as 0"),
            "{}",
            a.reason
        );
    }
}
