//! The record-size sweep of a `Level::Full` run: commits of each size in
//! [`SWEEP_RECORDS`] into appended and recycled space and through
//! fspace's log, one run each, while the budget lasts.

use super::super::plan::{SWEEP_RECORDS, SWEEP_TIME};
use super::super::run::Run;
use super::super::schema::SweepPoint;
use crate::bench::{run_commit, CommitBenchOptions, SpaceState};
use crate::error::Result;
use crate::note::{Note, NoteKind};
use crate::units::format_human;

/// Measures the sweep's points in commit files of `file_size`; a note
/// says how many the budget left out.
pub(crate) fn sweep(
    run: &mut Run<'_>,
    file_size: u64,
    notes: &mut Vec<Note>,
) -> Result<Vec<SweepPoint>> {
    let mut out = vec![];
    let mut skipped = 0;
    for rec in SWEEP_RECORDS {
        for state in [SpaceState::Appended, SpaceState::Recycled, SpaceState::Wal] {
            run.begin(format!(
                "record-size sweep: {} commits {}",
                format_human(rec as u64),
                if state == SpaceState::Wal {
                    "through fspace's log".to_string()
                } else {
                    format!("into {} space", state.name())
                }
            ))?;
            if run.start.elapsed() >= run.budget.total {
                skipped += 1;
                continue;
            }
            let o = CommitBenchOptions {
                record_size: rec,
                duration: SWEEP_TIME,
                file_size: file_size.max(rec as u64 * 64),
                segment_size: (file_size / 2)
                    .clamp(1 << 20, crate::wal::DEFAULT_SEGMENT_SIZE)
                    .max(rec as u64 * 16),
                stop_at_end: true,
                ..Default::default()
            };
            let r = run_commit(run.dir, state, &o, run.opts.cancel)?;
            run.cancelled()?;
            let lat = r.latency.clone().unwrap_or_default();
            out.push(SweepPoint {
                record_size: rec,
                state,
                unsupported: r.unsupported.clone(),
                commits_per_sec: r.commits_per_sec,
                mib_per_sec: r.mib_per_sec,
                p50_us: lat.p50_us,
                p99_us: lat.p99_us,
            });
        }
    }
    if skipped > 0 {
        notes.push(Note::new(
            NoteKind::SweepCut,
            format!(
                "the budget ran out: {skipped} of {} sweep points were not measured",
                SWEEP_RECORDS.len() * 3
            ),
        ));
    }
    Ok(out)
}
