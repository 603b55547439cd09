//! The commit rates as metrics: per space state and per sync method, and
//! what fspace's log set up as recommended should reach.

use super::exposition::{flag, Metrics};
use fspace::probe::{CommitSection, StateResult};

/// A commit measurement's samples: median, range, latencies, runs.
fn commit_samples(m: &mut Metrics, state: &str, sync: &str, s: &StateResult) {
    let l = [("state", state), ("sync", sync)];
    m.gauge(
        "fspace_probe_commit_supported",
        "1 if commits into this space state with this sync method could be measured here, else 0.",
        &l,
        flag(s.unsupported.is_none()),
    );
    if !s.measured() {
        return;
    }
    let (lo, hi) = s.range();
    m.gauge(
        "fspace_probe_commits_per_second",
        "Commits per second (8 KiB pwrite + sync, one writer): the median of the probe's runs.",
        &l,
        s.commits_per_sec,
    );
    m.gauge(
        "fspace_probe_commits_per_second_min",
        "Commits per second of the slowest run.",
        &l,
        lo,
    );
    m.gauge(
        "fspace_probe_commits_per_second_max",
        "Commits per second of the fastest run.",
        &l,
        hi,
    );
    m.gauge(
        "fspace_probe_commit_runs",
        "Runs the commit figures are the median of.",
        &l,
        s.runs.len() as f64,
    );
    m.gauge(
        "fspace_probe_commit_latency_p50_seconds",
        "Median commit latency: the median over the runs of each run's median.",
        &l,
        s.p50_us / 1e6,
    );
    m.gauge(
        "fspace_probe_commit_latency_p99_seconds",
        "99th percentile commit latency: the median over the runs of each run's.",
        &l,
        s.p99_us / 1e6,
    );
}

/// Each space state's commits (with the sync method the state used), the
/// other sync methods', and the rate the log is expected to reach.
pub(super) fn samples(m: &mut Metrics, c: &CommitSection) {
    for s in &c.states {
        let sync = match s.wal.as_ref() {
            Some(w) => w.io.sync_method.name(),
            None => fspace::SyncMethod::Fdatasync.name(),
        };
        commit_samples(m, s.state.name(), sync, s);
    }
    for x in &c.sync_methods {
        // fdatasync's figures are the recycled state's, already above.
        if x.method != fspace::SyncMethod::Fdatasync {
            commit_samples(m, x.figures.state.name(), x.method.name(), &x.figures);
        }
    }
    if let Some(p) = &c.prediction {
        let (strategy, sync) = match &p.log {
            Some(l) => (l.strategy.name(), l.sync_method.name()),
            None => ("", ""),
        };
        m.gauge(
            "fspace_probe_expected_commits_per_second",
            "What fspace's log set up as recommended should reach here (8 KiB records, at fspace_probe_expected_writers writers): the median of its runs.",
            &[("strategy", strategy), ("sync", sync)],
            p.commits_per_sec,
        );
    }
}
