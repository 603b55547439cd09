//! One case of the commit rounds for the time it was given: commits into
//! its space, again on a freshly prepared file while the file is used up
//! early, the runs of the round merged into one sample.

use super::super::plan::{merge, Case};
use super::super::run::Run;
use crate::bench::{run_commit, CommitBenchOptions, CommitResult};
use crate::error::Result;
use std::time::{Duration, Instant};

/// Shortest time per commit mode when the budget is tight: below this the
/// percentiles mean little.
pub(super) const MIN_MODE: Duration = Duration::from_millis(250);

/// Most runs of one state in one round (see [`run_case`]).
const MAX_RUNS: usize = 32;

/// Runs `case` for `per_state`, again on a freshly prepared file while its
/// file is used up early (a fast device, tmpfs) and time lasts: more
/// samples, never a wrap into written blocks.
pub(super) fn run_case(
    run: &Run<'_>,
    case: Case,
    bopts: &mut CommitBenchOptions,
    per_state: Duration,
) -> Result<Vec<CommitResult>> {
    let state = case.state;
    bopts.sync_methods = case.method.into_iter().collect();
    let slots = bopts.file_size / bopts.record_size as u64;
    let t0 = Instant::now();
    let mut out = vec![];
    for _ in 0..MAX_RUNS {
        bopts.duration = per_state.saturating_sub(t0.elapsed());
        let r = run_commit(run.dir, state, bopts, run.opts.cancel)?;
        run.cancelled()?;
        let used_up = r.unsupported.is_none() && r.commits >= slots;
        out.push(r);
        if !used_up || per_state.saturating_sub(t0.elapsed()) < MIN_MODE {
            break;
        }
    }
    // One sample per state and round: runs again within a round share
    // that round's conditions, so the rank test must not count them
    // as independent.
    Ok(merge(out).into_iter().collect())
}
