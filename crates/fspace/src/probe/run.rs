//! A probe run's context and its growth measurement: where it measures,
//! its options, budget and clock, the numbered steps it reports as progress
//! (checking for a cancel at each), and the growth of a fresh file by each
//! strategy.

use super::plan::Budget;
use super::schema::{GrowthResult, GrowthSection, Level, ProbeProgress};
use crate::error::{Error, Result};
use crate::grow::{grow, GrowOptions, Intent, Strategy};
use crate::policy::StrategyChoice;
use crate::sys::{self, Errno};
use crate::units::format_human;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Zero-fill growth is measured in synced steps (so that it can stop at the
/// time cap with an honest figure: the data is on disk) of at most this
/// size...
pub(super) const ZERO_FILL_STEP: u64 = 32 << 20;

/// ...starting with this one, then sized to take about
/// [`ZERO_FILL_STEP_TIME`] at the rate measured so far.
pub(super) const ZERO_FILL_FIRST_STEP: u64 = 1 << 20;

/// Target time of one zero-fill step.
pub(super) const ZERO_FILL_STEP_TIME: Duration = Duration::from_millis(250);

/// How to probe.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ProbeOptions<'a> {
    /// How thorough.
    pub level: Level,
    /// Checked between and inside measurements: when it becomes true the
    /// probe stops, removes its scratch directory and fails with
    /// `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called when each measurement starts.
    pub progress: Option<&'a dyn Fn(&ProbeProgress)>,
    /// Engines to advise (`fspace probe --for`): each gets its own
    /// measurement after the probe's, about [`engine_time`] more, and an
    /// [`EngineAdvice`](crate::probe::EngineAdvice) in the result.
    ///
    /// [`engine_time`]: crate::probe::engine_time
    pub engines: &'a [super::engines::Engine],
    /// Threads that will commit at once (1 by default, at most
    /// [`MAX_WRITERS`](crate::bench::MAX_WRITERS)): the log's expected rate
    /// (`commit.prediction`) and its comparison with appending are measured
    /// at this count, and the concurrency curve includes it.
    pub writers: usize,
}

impl Default for ProbeOptions<'_> {
    fn default() -> Self {
        ProbeOptions {
            level: Level::default(),
            cancel: None,
            progress: None,
            engines: &[],
            writers: 1,
        }
    }
}

impl std::fmt::Debug for ProbeOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeOptions")
            .field("level", &self.level)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .field("engines", &self.engines)
            .field("writers", &self.writers)
            .finish()
    }
}

setters!(ProbeOptions<'a> { level: Level, cancel: Option<&'a AtomicBool>, progress: Option<&'a dyn Fn(&ProbeProgress)>, engines: &'a [super::engines::Engine], writers: usize });

/// One probe run in progress.
pub(super) struct Run<'a> {
    pub(super) dir: &'a Path,
    pub(super) opts: &'a ProbeOptions<'a>,
    pub(super) budget: &'a Budget,
    pub(super) start: Instant,
    pub(super) step: usize,
    pub(super) steps: usize,
}

impl Run<'_> {
    pub(super) fn interrupted(&self) -> Error {
        Error::refused_errno(
            "probe",
            self.dir.parent().unwrap_or(self.dir),
            Errno::CANCELED,
            "interrupted",
        )
    }

    pub(super) fn cancelled(&self) -> Result<()> {
        if self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(self.interrupted());
        }
        Ok(())
    }

    pub(super) fn begin(&mut self, what: String) -> Result<()> {
        self.cancelled()?;
        self.step += 1;
        if let Some(p) = self.opts.progress {
            p(&ProbeProgress {
                step: self.step,
                steps: self.steps.max(self.step),
                what,
                elapsed: self.start.elapsed(),
                budget: self.budget.total,
            });
        }
        Ok(())
    }

    /// Grows a fresh file to `size` by every strategy, in the level's
    /// number of alternating rounds (the order rotated each round, as the
    /// commit rounds are), so that the bulk decision rests on repeated
    /// timings and the probe's rule rather than on one timing each. A
    /// strategy unsupported in the first round is not tried again; the
    /// zero-fill time cap is shared among the rounds.
    pub(super) fn growth(&mut self, size: u64) -> Result<GrowthSection> {
        let rounds = self.budget.rounds.max(1);
        let cap = self.budget.growth_cap / rounds as u32;
        let mut per: Vec<Vec<GrowthResult>> = vec![vec![]; Strategy::ALL.len()];
        for round in 0..rounds {
            for k in 0..Strategy::ALL.len() {
                let i = (k + round) % Strategy::ALL.len();
                let s = Strategy::ALL[i];
                if per[i].first().is_some_and(|g| g.unsupported.is_some()) {
                    // One step fewer than planned: the progress still ends
                    // at its total.
                    self.steps = self.steps.saturating_sub(1);
                    continue;
                }
                self.begin(format!(
                    "growth of {} by {s} (round {} of {rounds})",
                    format_human(size),
                    round + 1
                ))?;
                per[i].push(self.grow_one(s, size, cap)?);
            }
        }
        Ok(GrowthSection {
            target_size: size,
            results: per.into_iter().filter_map(median_round).collect(),
        })
    }

    fn grow_one(&self, s: Strategy, size: u64, cap: Duration) -> Result<GrowthResult> {
        let p = self.dir.join(format!("grow-{}", s.name()));
        let _ = std::fs::File::create(&p).map_err(|e| Error::from_io("create", &p, None, e))?;
        let r = self.grow_timed(&p, s, size, cap);
        let allocated = sys::stat(&p).map(|st| st.blocks * 512).unwrap_or(0);
        let _ = std::fs::remove_file(&p);
        let (bytes, secs, capped) = match r {
            Ok(x) => x,
            Err(e)
                if crate::errno::unsupported_raw(
                    crate::errno::Call::Fallocate,
                    e.raw_os_error(),
                ) =>
            {
                return Ok(GrowthResult {
                    strategy: s,
                    unsupported: Some(e.unsupported_reason()),
                    bytes: 0,
                    seconds: 0.0,
                    bytes_per_sec: 0.0,
                    runs: vec![],
                    allocated_bytes: 0,
                    capped: false,
                })
            }
            Err(e) => return Err(e),
        };
        let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
        Ok(GrowthResult {
            strategy: s,
            unsupported: None,
            bytes,
            seconds: secs,
            bytes_per_sec: rate,
            runs: vec![rate],
            allocated_bytes: allocated,
            capped,
        })
    }

    /// Grows `p` from empty by `s` with `fdatasync`; zero-fill goes in
    /// synced steps sized to take about [`ZERO_FILL_STEP_TIME`] each and
    /// stops at the time cap `cap`. Returns (bytes, seconds, capped).
    fn grow_timed(
        &self,
        p: &Path,
        s: Strategy,
        size: u64,
        cap: Duration,
    ) -> Result<(u64, f64, bool)> {
        let opts = GrowOptions {
            choice: StrategyChoice::exactly(s),
            intent: Intent::Bulk,
            sync: true,
            cancel: self.opts.cancel,
            ..Default::default()
        };
        let t0 = Instant::now();
        if s != Strategy::ZeroFill {
            grow(p, size, &opts)?;
            return Ok((size, t0.elapsed().as_secs_f64(), false));
        }
        let mut len = 0;
        let mut step = ZERO_FILL_FIRST_STEP;
        while len < size {
            let next = (len + step).min(size);
            let ts = Instant::now();
            grow(p, next, &opts)?;
            let rate = (next - len) as f64 / ts.elapsed().as_secs_f64().max(1e-6);
            len = next;
            if len < size && t0.elapsed() >= cap {
                return Ok((len, t0.elapsed().as_secs_f64(), true));
            }
            // The next step takes about ZERO_FILL_STEP_TIME at this rate,
            // in whole MiB, so a slow device cannot blow the cap by much.
            let want = (rate * ZERO_FILL_STEP_TIME.as_secs_f64()) as u64;
            step = (want >> 20 << 20).clamp(ZERO_FILL_FIRST_STEP, ZERO_FILL_STEP);
        }
        Ok((len, t0.elapsed().as_secs_f64(), false))
    }
}

/// One strategy's rounds as one result: the round with the median rate
/// (the lower middle one for an even count) gives the bytes, time, rate
/// and allocation shown, so that they are one real measurement and agree
/// with each other; `runs` holds every round's rate. Rounds it was
/// unsupported in (after a first one that worked: the filesystem changed
/// its mind) are left out; when none worked, the first round's result
/// says why. `None` when it was never tried.
fn median_round(rounds: Vec<GrowthResult>) -> Option<GrowthResult> {
    let (mut ok, bad): (Vec<GrowthResult>, Vec<GrowthResult>) =
        rounds.into_iter().partition(|g| g.unsupported.is_none());
    if ok.is_empty() {
        return bad.into_iter().next();
    }
    let runs: Vec<f64> = ok.iter().flat_map(|g| g.runs.clone()).collect();
    ok.sort_by(|a, b| a.bytes_per_sec.total_cmp(&b.bytes_per_sec));
    let mut g = ok.swap_remove((ok.len() - 1) / 2);
    g.runs = runs;
    Some(g)
}
