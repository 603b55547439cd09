//! The untorn-write cost measurement of a probe run: for each page size
//! untorn writes are possible for here, durable `O_DIRECT` page writes
//! into written space with and without `RWF_ATOMIC`, in alternating
//! rounds; nothing else differs between the two sides. Where no page size
//! is untorn, nothing is written and each says why (`cost.rs`).
//!
//! The two sides each write into a file of their own, prepared alike as
//! fspace prepares space for untorn writes (`GrowOptions::untorn_unit` of
//! the largest page measured: zero-filled, written extents, on XFS an
//! extent-size hint of the unit), at random page-aligned offsets drawn
//! from the same sequence on both sides of a round, each write made
//! durable by `RWF_DSYNC` (with `RWF_ATOMIC` on the untorn side), one
//! writer. The order of the sides and of the page sizes alternates from
//! round to round.

use super::super::busy::IDLE_WINDOW;
use super::super::plan::{SWEEP_RECORDS, SWEEP_TIME};
use super::super::run::Run;
use super::super::schema::Level;
use super::cost::{
    answers, cost_of, measurable, not_measured, RunFigures, UntornCost, UntornSection, UNTORN_PAGES,
};
use crate::error::{Error, Result};
use crate::grow::{grow, GrowOptions, Intent, Strategy};
use crate::policy::StrategyChoice;
use crate::reason::Reason;
use crate::sys::{self, Errno};
use crate::units::format_human;
use crate::untorn::{AlignedBuf, UntornFacts, WritePath};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::OFlags;
use rustix::io::IoSlice;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes of each side's file: 8 MiB (1,024 pages of 8 KiB, 512 of 16 KiB):
/// enough pages that random offsets rarely repeat within a run, little to
/// prepare (both files' zero-fill is kept back from the budget at the
/// measured rate, [`reserve`]).
pub(super) const UNTORN_FILE: u64 = 8 << 20;

/// The shortest time a side is given in a round when the budget is
/// tight: a few dozen durable writes on a slow disk.
const MIN_RUN: Duration = Duration::from_millis(50);

/// Time per side and round at each level. Short: this measurement states
/// a cost and decides nothing, and it runs only where untorn writes exist.
/// On the matrix's XFS 0.2 s per side (some hundreds of writes) put every
/// plain round above every untorn one in each standard run
/// (bench/runs/2026-11-28-untorn-cost).
fn per_side(level: Level) -> Duration {
    match level {
        Level::Quick => Duration::from_millis(100),
        Level::Standard => Duration::from_millis(200),
        Level::Full => Duration::from_millis(400),
    }
}

/// The page sizes measured here (those with untorn writes), with their
/// path; the others with why not.
pub(crate) type Sizes = Vec<(u64, std::result::Result<Option<WritePath>, Reason>)>;

/// Which page sizes of [`UNTORN_PAGES`] can be measured with `facts`.
pub(crate) fn sizes(facts: Option<&UntornFacts>, error: Option<&Reason>) -> Sizes {
    UNTORN_PAGES
        .iter()
        .map(|&p| (p, measurable(facts, error, p)))
        .collect()
}

fn measured_count(sizes: &Sizes) -> usize {
    sizes.iter().filter(|(_, s)| s.is_ok()).count()
}

/// Progress steps: one per page size measured and round.
pub(crate) fn steps(rounds: usize, sizes: &Sizes) -> usize {
    rounds * measured_count(sizes)
}

/// The time the measurement takes at `level` with `rounds`: what the
/// commit rounds keep back for it (nothing where nothing is measured).
pub(crate) fn reserve(level: Level, rounds: usize, sizes: &Sizes, fill_rate: f64) -> Duration {
    let n = measured_count(sizes);
    if n == 0 {
        return Duration::ZERO;
    }
    let prepare = Duration::from_secs_f64(2.0 * UNTORN_FILE as f64 / fill_rate.max(1e6) + 0.05);
    per_side(level) * (2 * n * rounds) as u32 + prepare
}

/// Measures what untorn writes cost against plain ones for every page
/// size `sizes` allows, and returns the section with the facts and the
/// answers. A write that fails (or a file that cannot be made) leaves its
/// page size not measured, with the error's call, path and errno; only a
/// cancel stops the probe.
pub(crate) fn measure(
    run: &mut Run<'_>,
    facts: Option<UntornFacts>,
    error: Option<Reason>,
    sizes: Sizes,
) -> Result<UntornSection> {
    let rounds = run.budget.rounds.max(1);
    let mut cost: Vec<Option<UntornCost>> = sizes
        .iter()
        .map(|(page, s)| match s {
            Ok(_) => None,
            Err(why) => Some(not_measured(*page, None, why.clone())),
        })
        .collect();
    let pages: Vec<(usize, u64, Option<WritePath>)> = sizes
        .iter()
        .enumerate()
        .filter_map(|(i, (page, s))| s.as_ref().ok().map(|p| (i, *page, *p)))
        .collect();
    if let Some(largest) = pages.iter().map(|x| x.1).max() {
        match Files::prepare(run.dir, largest, run.opts.cancel) {
            Ok(files) => {
                let done = rounds_of(run, &files, &pages, rounds)?;
                files.remove();
                for (k, c) in done.into_iter().enumerate() {
                    cost[pages[k].0] = Some(c);
                }
            }
            Err(e) => {
                run.cancelled()?;
                // The rounds' steps will not come: the progress still ends
                // at its total.
                run.steps = run.steps.saturating_sub(rounds * pages.len());
                for (i, page, path) in &pages {
                    cost[*i] = Some(not_measured(
                        *page,
                        *path,
                        Reason::from(&e).context("the files to write into could not be prepared"),
                    ));
                }
            }
        }
    }
    let cost: Vec<UntornCost> = cost.into_iter().flatten().collect();
    Ok(UntornSection {
        answers: answers(facts.as_ref(), &cost),
        facts,
        error,
        cost,
    })
}

/// The two sides' files, open with `O_DIRECT`.
struct Files {
    plain: (PathBuf, OwnedFd),
    untorn: (PathBuf, OwnedFd),
}

impl Files {
    /// Both files, each grown to [`UNTORN_FILE`] as space for untorn
    /// writes of `unit` is (zero-filled and synced), then opened with
    /// `O_DIRECT`.
    fn prepare(
        dir: &Path,
        unit: u64,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Files> {
        let one = |name: &str| -> Result<(PathBuf, OwnedFd)> {
            let p = dir.join(name);
            let opts = GrowOptions {
                choice: StrategyChoice::exactly(Strategy::ZeroFill),
                intent: Intent::Log,
                sync: true,
                create: true,
                cancel,
                untorn_unit: u32::try_from(unit).ok(),
                ..Default::default()
            };
            grow(&p, UNTORN_FILE, &opts)?;
            let fd = sys::open(&p, OFlags::RDWR | OFlags::DIRECT, 0)
                .map_err(|e| Error::io("open(O_DIRECT)", &p, None, e))?;
            Ok((p, fd))
        };
        Ok(Files {
            plain: one("untorn-cost-plain")?,
            untorn: one("untorn-cost-atomic")?,
        })
    }

    fn remove(self) {
        for (p, fd) in [self.plain, self.untorn] {
            drop(fd);
            let _ = sys::unlink(&p);
        }
    }
}

/// The rounds: in each, every page size still measured, both sides; the
/// order of the page sizes rotates and the side that goes first
/// alternates. Returns one cost per entry of `pages`.
fn rounds_of(
    run: &mut Run<'_>,
    files: &Files,
    pages: &[(usize, u64, Option<WritePath>)],
    rounds: usize,
) -> Result<Vec<UntornCost>> {
    let n = pages.len();
    let largest = pages.iter().map(|x| x.1).max().unwrap_or(4096) as usize;
    let mut buf = AlignedBuf::new(largest);
    let mut plain: Vec<Vec<RunFigures>> = vec![vec![]; n];
    let mut untorn: Vec<Vec<RunFigures>> = vec![vec![]; n];
    let mut failed: Vec<Option<Reason>> = vec![None; n];
    let mut longest = Duration::ZERO;
    let mut left_steps = rounds * n;
    for round in 0..rounds {
        for k in 0..n {
            let i = (k + round) % n;
            let (_, page, _) = pages[i];
            run.begin(format!(
                "untorn writes: {} O_DIRECT + RWF_DSYNC pages with and without RWF_ATOMIC (round {} of {rounds})",
                format_human(page),
                round + 1
            ))?;
            let per = fit(run, left_steps);
            left_steps = left_steps.saturating_sub(1);
            if failed[i].is_some() {
                continue;
            }
            longest = longest.max(per);
            // The same bytes on both sides, new ones each round.
            buf.as_mut_slice().fill(0xa5 ^ round as u8);
            let data = &buf.as_slice()[..page as usize];
            let seed = (round as u64) << 32 | page;
            let plain_first = (round + i).is_multiple_of(2);
            for untorn_side in [!plain_first, plain_first] {
                let (p, fd) = if untorn_side {
                    &files.untorn
                } else {
                    &files.plain
                };
                let cancelled = || run.cancelled().is_err();
                let r = timed(fd, p, data, untorn_side, per, seed, &cancelled);
                run.cancelled()?;
                match r {
                    Ok(f) if untorn_side => untorn[i].push(f),
                    Ok(f) => plain[i].push(f),
                    Err(e) => {
                        failed[i] = Some(Reason::from(&e));
                        break;
                    }
                }
            }
        }
    }
    Ok(pages
        .iter()
        .enumerate()
        .map(|(i, &(_, page, path))| match failed[i].take() {
            Some(e) => not_measured(page, path, e.context("a write failed")),
            None => cost_of(
                page,
                path,
                &plain[i],
                &untorn[i],
                UNTORN_FILE,
                longest.as_secs_f64(),
            ),
        })
        .collect())
}

/// Time per side for the next step, so that the steps still to go fit
/// what is left of the budget (the sweep's time and the closing idle
/// window kept back), within the level's time and not below [`MIN_RUN`].
fn fit(run: &Run<'_>, left_steps: usize) -> Duration {
    let b = run.budget;
    let sweep = if b.sweep {
        SWEEP_TIME * (3 * SWEEP_RECORDS.len()) as u32
    } else {
        Duration::ZERO
    };
    let left = b
        .total
        .saturating_sub(run.start.elapsed())
        .saturating_sub(sweep + IDLE_WINDOW * 2);
    left.checked_div(2 * left_steps.max(1) as u32)
        .unwrap_or(MIN_RUN)
        .clamp(MIN_RUN, per_side(run.opts.level))
}

/// splitmix64: the offsets' sequence, the same on both sides of a round.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Writes `data` at random multiples of its size in the file for `per`
/// (at least one write), each one `pwritev2` with `RWF_DSYNC`, and
/// `RWF_ATOMIC` when `atomic`; stops early when `cancelled`. A short or
/// failed write is an error naming the call, the file and the range.
fn timed(
    fd: &OwnedFd,
    path: &Path,
    data: &[u8],
    atomic: bool,
    per: Duration,
    seed: u64,
    cancelled: &dyn Fn() -> bool,
) -> Result<RunFigures> {
    let page = data.len() as u64;
    let slots = (UNTORN_FILE / page).max(1);
    let op = if atomic {
        "pwritev2(RWF_ATOMIC|RWF_DSYNC)"
    } else {
        "pwritev2(RWF_DSYNC)"
    };
    let mut state = seed;
    let mut lat: Vec<f64> = vec![];
    let t0 = Instant::now();
    loop {
        let off = next(&mut state) % slots * page;
        let ts = Instant::now();
        let r = if atomic {
            sys::pwrite_atomic(fd.as_fd(), data, off, true)
        } else {
            sys::pwritev_dsync(fd.as_fd(), &[IoSlice::new(data)], off)
        };
        let range = Some(off..off + page);
        match r {
            Ok(n) if n as u64 == page => {}
            Ok(_) => return Err(Error::io(op, path, range, Errno::IO)),
            Err(e) => return Err(Error::io(op, path, range, e)),
        }
        lat.push(ts.elapsed().as_secs_f64() * 1e6);
        if t0.elapsed() >= per || cancelled() {
            break;
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    lat.sort_by(f64::total_cmp);
    let at = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
    Ok(RunFigures {
        writes: lat.len() as u64,
        seconds,
        p50_us: at(0.5),
        p99_us: at(0.99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_page_multiples_and_the_same_on_both_sides() {
        let (mut a, mut b) = (7u64, 7u64);
        let xs: Vec<u64> = (0..100).map(|_| next(&mut a) % 512 * 16384).collect();
        let ys: Vec<u64> = (0..100).map(|_| next(&mut b) % 512 * 16384).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|x| x % 16384 == 0 && *x < UNTORN_FILE));
        // Spread over the file, not stuck in a corner.
        let distinct: std::collections::BTreeSet<_> = xs.iter().collect();
        assert!(distinct.len() > 80, "{}", distinct.len());
    }

    #[test]
    fn nothing_is_reserved_where_nothing_is_measured() {
        let no = || Err(Reason::new(crate::errno::ErrorKind::Unsupported, "no"));
        let none: Sizes = vec![(8192, no()), (16384, no())];
        assert_eq!(reserve(Level::Quick, 3, &none, 1e8), Duration::ZERO);
        assert_eq!(steps(3, &none), 0);
        let both: Sizes = vec![(8192, Ok(None)), (16384, Ok(None))];
        assert_eq!(steps(4, &both), 8);
        // 4 rounds x 2 sizes x 2 sides x 200 ms, and 16 MiB at 100 MB/s.
        let r = reserve(Level::Standard, 4, &both, 1e8);
        assert!(
            r > Duration::from_millis(3200) && r < Duration::from_millis(3500),
            "{r:?}"
        );
    }
}
