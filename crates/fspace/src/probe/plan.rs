//! How the probe's measurements are planned: what each level may spend,
//! the cases of a round (space states and sync methods), which of them
//! decide something, how large their files are and what preparing them
//! costs, and how a state's runs are summed up and predict the log.

use super::schema::{GrowthSection, Level, Prediction, StateResult, SyncMethodResult};
use super::stats::{median, range};
use crate::bench::{CommitResult, SpaceState};
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::policy::rules::{is_remote, log_candidates};
use crate::policy::LogSetup;
use crate::strategy::{Strategy, SyncMethod};
use crate::units::format_human;
use std::time::Duration;

/// Share of the budget the commit files' preparation may take at the
/// measured zero-fill rate: 35%.
pub(super) const PREPARE_SHARE: f64 = 0.35;

/// What a level may spend.
pub(super) struct Budget {
    /// The whole run's target.
    pub(super) total: Duration,
    /// Alternating rounds of the commit measurements, and of the growth
    /// measurements.
    pub(super) rounds: usize,
    /// Longest time per commit mode and round (shortened to fit `total`).
    pub(super) max_mode: Duration,
    /// The file each overwrite mode commits into (one pass, no wrap).
    pub(super) file_size: u64,
    /// Longest time the zero-fill growth may take over all the rounds
    /// (each round gets its share); past it the throughput is measured on
    /// what was written.
    pub(super) growth_cap: Duration,
    /// Whether to run the record-size sweep.
    pub(super) sweep: bool,
}

/// Bytes per record in the commit measurements: 8 KiB, the page size of
/// PostgreSQL's WAL and a common database page.
pub const RECORD_SIZE: usize = 8 << 10;

/// Record sizes of the [`Level::Full`] sweep.
pub const SWEEP_RECORDS: [usize; 4] = [512, 8 << 10, 64 << 10, 1 << 20];

/// Smallest commit file (on slow devices the files shrink to keep the
/// budget).
pub(super) const MIN_FILE: u64 = 1 << 20;

/// Time per sweep point.
pub(super) const SWEEP_TIME: Duration = Duration::from_millis(1500);

/// Copy-on-write filesystems smaller than this (8 GiB) get a run scaled to
/// one [`SMALL_COW_SHARE`]th of their size.
pub(super) const SMALL_COW: u64 = 8 << 30;

/// One eighth.
pub(super) const SMALL_COW_SHARE: u64 = 8;

/// Share of the budget the main rounds leave for a close call: 15%.
pub(super) const CLOSE_CALL_SHARE: f64 = 0.15;

/// What `level` may spend.
pub(super) fn budget(level: Level) -> Budget {
    match level {
        Level::Quick => Budget {
            total: Duration::from_secs(10),
            rounds: 3,
            max_mode: Duration::from_millis(1000),
            file_size: 32 << 20,
            growth_cap: Duration::from_millis(2500),
            sweep: false,
        },
        Level::Standard => Budget {
            total: Duration::from_secs(30),
            rounds: 4,
            max_mode: Duration::from_millis(1800),
            file_size: 64 << 20,
            growth_cap: Duration::from_secs(5),
            sweep: false,
        },
        Level::Full => Budget {
            total: Duration::from_secs(180),
            rounds: 5,
            max_mode: Duration::from_millis(3000),
            file_size: 128 << 20,
            growth_cap: Duration::from_secs(20),
            sweep: true,
        },
    }
}

/// One measurement of the rounds: a space state, or commits into written
/// (recycled) space made durable by a sync method other than `fdatasync`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Case {
    pub(super) state: SpaceState,
    /// `None`: `fdatasync` (the log: its own choice).
    pub(super) method: Option<SyncMethod>,
}

impl Case {
    /// Every case, in order: the states in [`SpaceState::ALL`] order, then
    /// recycled space with each sync method but `fdatasync` (which is the
    /// recycled state itself).
    pub(super) fn all() -> Vec<Case> {
        let states = SpaceState::ALL.iter().map(|&state| Case {
            state,
            method: None,
        });
        let methods = SyncMethod::ALL
            .iter()
            .filter(|&&m| m != SyncMethod::Fdatasync)
            .map(|&m| Case {
                state: SpaceState::Recycled,
                method: Some(m),
            });
        states.chain(methods).collect()
    }

    /// The state, or the method, in a few words.
    pub(super) fn name(self) -> String {
        match self.method {
            None => format!("{} space", self.state.name()),
            Some(m) => m.name().to_string(),
        }
    }

    pub(super) fn label(self) -> String {
        match (self.state, self.method) {
            (SpaceState::Wal, _) => "through fspace's log".into(),
            (st, None) => format!("into {} space", st.name()),
            (st, Some(m)) => format!("into {} space with {m}", st.name()),
        }
    }
}

/// Whether more runs of `case` can change a decision on `info`'s
/// filesystem: a candidate log preparation (when there are two or more),
/// recycled space (recycling, and `fdatasync` among the sync methods),
/// a sync method the log may use (never `fsync`; none on network or FUSE
/// filesystems), the log itself (the prediction's runs) and the appended
/// baseline (whether the log beat plain appending, `log_vs_append`: the
/// rank test needs runs of both, and one run can never separate them).
/// Ruled-out preparations and `fsync` inform but decide nothing.
pub(super) fn decisive(info: &FsInfo, case: Case) -> bool {
    let candidates = log_candidates(info);
    match case.method {
        Some(SyncMethod::Fsync) => false,
        Some(_) => !is_remote(info),
        None if case.state == SpaceState::Recycled => !info.copy_on_write || !is_remote(info),
        None if matches!(case.state, SpaceState::Wal | SpaceState::Appended) => true,
        None => {
            candidates.len() > 1
                && candidates
                    .iter()
                    .any(|s| SpaceState::of_strategy(*s) == Some(case.state))
        }
    }
}

/// The runs of one state in one round as one: commits and time summed,
/// the rate of the sum, the median of the runs' latency percentiles, the
/// notes of all, and the log's figures of the last.
pub(super) fn merge(rs: Vec<CommitResult>) -> Option<CommitResult> {
    let mut m = rs.last()?.clone();
    let ok: Vec<&CommitResult> = rs.iter().filter(|r| r.unsupported.is_none()).collect();
    if rs.len() == 1 || ok.is_empty() {
        return Some(m);
    }
    m.commits = ok.iter().map(|r| r.commits).sum();
    m.seconds = ok.iter().map(|r| r.seconds).sum();
    m.setup_seconds = ok.iter().map(|r| r.setup_seconds).sum();
    let per = |r: &&CommitResult| r.commits_per_sec * r.seconds;
    let bytes_rate: f64 = ok.iter().map(|r| r.mib_per_sec * r.seconds).sum();
    if m.seconds > 0.0 {
        m.commits_per_sec = ok.iter().map(per).sum::<f64>() / m.seconds;
        m.mib_per_sec = bytes_rate / m.seconds;
    }
    let lat: Vec<&crate::bench::Latency> = ok.iter().filter_map(|r| r.latency.as_ref()).collect();
    if let Some(first) = lat.first() {
        let mut l = (*first).clone();
        l.p50_us = median(&mut lat.iter().map(|x| x.p50_us).collect::<Vec<_>>());
        l.p99_us = median(&mut lat.iter().map(|x| x.p99_us).collect::<Vec<_>>());
        l.max_us = lat.iter().map(|x| x.max_us).fold(0.0, f64::max);
        m.latency = Some(l);
    }
    for r in &rs {
        for n in &r.notes {
            if !m.notes.contains(n) {
                m.notes.push(n.clone());
            }
        }
    }
    m.unsupported = None;
    m.flushes = crate::fs_info::sum_flushes(ok.iter().filter_map(|r| r.flushes.as_ref()));
    Some(m)
}

/// A prediction from the runs of `s`, the log set up as `setup`.
pub(super) fn prediction(s: &StateResult, setup: LogSetup, basis: String) -> Prediction {
    let (low, high) = range(&s.runs);
    Prediction {
        commits_per_sec: s.commits_per_sec,
        low,
        high,
        setup: setup.words(),
        basis,
        log: Some(LogSetup {
            runs: s.runs.clone(),
            ..setup
        }),
    }
}

/// The summary of one state's runs: the median rate and latencies over
/// the runs, and the notes of all (each once).
pub(super) fn summarize(state: SpaceState, rs: &[CommitResult]) -> StateResult {
    let mut notes: Vec<Note> = vec![];
    for r in rs {
        // Each run ends when its file is used up: that is the design here
        // (see `runs`), not worth a note per run.
        for n in r.notes.iter().filter(|n| n.kind != NoteKind::OnePass) {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let unsupported = rs.iter().find_map(|r| r.unsupported.clone());
    let ok: Vec<&CommitResult> = rs.iter().filter(|r| r.unsupported.is_none()).collect();
    let rounds: Vec<f64> = ok.iter().map(|r| r.commits_per_sec).collect();
    let runs_p50: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency.as_ref().map(|l| l.p50_us))
        .collect();
    let mut p99: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency.as_ref().map(|l| l.p99_us))
        .collect();
    StateResult {
        state,
        unsupported,
        commits_per_sec: median(&mut rounds.clone()),
        runs: rounds,
        p50_us: median(&mut runs_p50.clone()),
        runs_p50_us: runs_p50,
        p99_us: median(&mut p99),
        commits: ok.iter().map(|r| r.commits).sum(),
        vs_append: None,
        wal: ok.last().and_then(|r| r.wal.clone()),
        notes,
    }
}

/// The rate zeros were written at in the growth step (bytes/s), or a guess
/// when zero-fill could not run.
pub(super) fn fill_rate(growth: &GrowthSection) -> f64 {
    growth
        .results
        .iter()
        .find(|g| g.strategy == Strategy::ZeroFill && g.unsupported.is_none())
        .map_or(100e6, |g| g.bytes_per_sec.max(1e6))
}

/// Returns the strategy whose support `state` needs, if any.
pub(super) fn needs(state: SpaceState) -> Option<Strategy> {
    match state {
        SpaceState::Allocated => Some(Strategy::Allocate),
        SpaceState::WriteZeroed => Some(Strategy::WriteZeroes),
        _ => None,
    }
}

/// How the commit measurements of one run are sized, and what they cannot
/// measure here.
pub(super) struct CommitPlan {
    /// The rate the growth step wrote zeros at, bytes/s.
    pub(super) fill: f64,
    pub(super) file_size: u64,
    pub(super) segment_size: u64,
    /// Per case (in [`Case::all`] order): why it cannot be made here, when
    /// its preparation failed in the growth step (no fallocate, no
    /// WRITE_ZEROES): the same classification for both steps.
    pub(super) unsupported: Vec<Option<crate::reason::Reason>>,
    /// Time kept back for the measurements after the main rounds: the
    /// untorn writes' cost (where there are untorn writes) and the sweep
    /// (each point with its preparation).
    pub(super) later_reserve: Duration,
    /// Time kept back from the main rounds: the sweep and a share for a
    /// close call.
    pub(super) reserve: Duration,
}

impl CommitPlan {
    /// The plan for `info`'s filesystem after `growth`, within `b`,
    /// keeping `later` back for measurements after the commits besides
    /// the sweep (the untorn writes' cost).
    pub(super) fn new(
        info: &FsInfo,
        growth: &GrowthSection,
        b: &Budget,
        later: Duration,
        notes: &mut Vec<Note>,
    ) -> Self {
        let fill = fill_rate(growth);
        // Files sized so that preparing all of them (the written states,
        // the sync methods' written files, every round) takes at most
        // PREPARE_SHARE of the budget at the measured rate (a slow disk or
        // NFS), within the level's size; the log's segments follow (at
        // most its default).
        let prepared = (Case::all()
            .iter()
            .filter(|c| matches!(c.state, SpaceState::ZeroFilled | SpaceState::Recycled))
            .count()
            * b.rounds)
            .max(1) as f64;
        let mut file_size =
            ((fill * b.total.as_secs_f64() * PREPARE_SHARE / prepared) as u64 >> 20 << 20)
                .clamp(MIN_FILE, b.file_size);
        let mut segment_size = (file_size / 2).clamp(1 << 20, crate::wal::DEFAULT_SEGMENT_SIZE);
        if info.copy_on_write && info.total_bytes > 0 && info.total_bytes < SMALL_COW {
            // See `size_run`: the log may hold seven segments at once.
            let cap = ((info.total_bytes / SMALL_COW_SHARE) >> 20 << 20).max(MIN_FILE);
            file_size = file_size.min(cap);
            segment_size = segment_size.min((cap / 8).max(1 << 20));
        }
        if file_size < b.file_size {
            notes.push(Note::new(
                NoteKind::SlowWrites,
                format!(
                    "slow writes ({}/s): commit files of {} and log segments of {} instead of {} and {}",
                    format_human(fill as u64),
                    format_human(file_size),
                    format_human(segment_size),
                    format_human(b.file_size),
                    format_human(crate::wal::DEFAULT_SEGMENT_SIZE)
                ),
            ));
        }
        let unsupported = Case::all()
            .iter()
            .map(|c| {
                let need = needs(c.state)?;
                growth
                    .results
                    .iter()
                    .find(|g| g.strategy == need)
                    .and_then(|g| g.unsupported.clone())
            })
            .collect();
        let mut plan = CommitPlan {
            fill,
            file_size,
            segment_size,
            unsupported,
            later_reserve: later,
            reserve: Duration::ZERO,
        };
        if b.sweep {
            plan.later_reserve += (SWEEP_TIME * 3
                + plan.setup_of(SpaceState::Recycled)
                + plan.setup_of(SpaceState::Wal))
                * SWEEP_RECORDS.len() as u32;
        }
        // The idle window after the measurements (busy.rs) comes out of
        // the budget too.
        plan.reserve =
            plan.later_reserve + b.total.mul_f64(CLOSE_CALL_SHARE) + super::busy::IDLE_WINDOW * 2;
        plan
    }

    /// The time preparing `st`'s space takes at the measured fill rate.
    pub(super) fn setup_of(&self, st: SpaceState) -> Duration {
        let bytes = match st {
            SpaceState::ZeroFilled | SpaceState::Recycled => self.file_size,
            SpaceState::Wal => self.segment_size * (1 + crate::wal::DEFAULT_PREPARE_AHEAD as u64),
            _ => 0,
        };
        Duration::from_secs_f64(bytes as f64 / self.fill + 0.02)
    }

    /// Each sync method's summary of `runs` (`fdatasync`: the recycled
    /// state's), in [`SyncMethod::ALL`] order.
    pub(super) fn summarize_methods(&self, runs: &[Vec<CommitResult>]) -> Vec<SyncMethodResult> {
        let cases = Case::all();
        SyncMethod::ALL
            .iter()
            .filter_map(|&m| {
                let i = cases.iter().position(|c| {
                    c.state == SpaceState::Recycled
                        && c.method.unwrap_or(SyncMethod::Fdatasync) == m
                })?;
                let mut figures = summarize(SpaceState::Recycled, &runs[i]);
                if let Some(u) = &self.unsupported[i] {
                    figures.unsupported = Some(u.clone());
                }
                Some(SyncMethodResult { method: m, figures })
            })
            .collect()
    }

    /// Every state's summary of `runs`, with its reason where it could not
    /// be made here.
    pub(super) fn summarize_all(&self, runs: &[Vec<CommitResult>]) -> Vec<StateResult> {
        SpaceState::ALL
            .iter()
            .zip(runs)
            .zip(&self.unsupported)
            .map(|((&state, rs), unsupported)| {
                let mut r = summarize(state, rs);
                if let Some(u) = unsupported {
                    r.unsupported = Some(u.clone());
                }
                r
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisive_cases() {
        let mut ext4 = crate::fs_info::identify(std::path::Path::new("/")).unwrap();
        ext4.kind = crate::fs_info::FsKind::Ext4;
        ext4.copy_on_write = false;
        ext4.network = false;
        let case = |state, method| Case { state, method };
        assert!(decisive(&ext4, case(SpaceState::ZeroFilled, None)));
        assert!(decisive(&ext4, case(SpaceState::Wal, None)));
        assert!(decisive(
            &ext4,
            case(SpaceState::Recycled, Some(SyncMethod::DirectDsync))
        ));
        assert!(!decisive(
            &ext4,
            case(SpaceState::Recycled, Some(SyncMethod::Fsync))
        ));
        // The baseline decides whether the log beat appending.
        assert!(decisive(&ext4, case(SpaceState::Appended, None)));
        assert!(!decisive(&ext4, case(SpaceState::Sparse, None)));
        // sshfs: one candidate (zero-fill) and fdatasync whatever: only
        // recycling and the log's own runs are left.
        let mut sshfs = ext4.clone();
        sshfs.kind = crate::fs_info::FsKind::Fuse;
        sshfs.network = true;
        assert!(!decisive(&sshfs, case(SpaceState::ZeroFilled, None)));
        assert!(!decisive(
            &sshfs,
            case(SpaceState::Recycled, Some(SyncMethod::Dsync))
        ));
        assert!(decisive(&sshfs, case(SpaceState::Recycled, None)));
        assert!(decisive(&sshfs, case(SpaceState::Wal, None)));
        assert!(decisive(&sshfs, case(SpaceState::Appended, None)));
    }
}
