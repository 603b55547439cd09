//! The log's mode: commits through fspace's [`Wal`].

use super::engine::{few_samples, result, run_threads};
use super::types::{CommitBenchOptions, CommitResult, SpaceState, WalFigures};
use crate::error::{Error, Result};
use crate::fs_info::FlushCounter;
use crate::note::{Note, NoteKind};
use crate::sys::{self};
use crate::wal::{Lsn, Wal, WalOptions, WalStats};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Commits through the [`Wal`] in `dir`, with a checkpointer releasing
/// what is durable so that segments are recycled.
pub(super) fn run_wal(
    dir: &Path,
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
) -> Result<CommitResult> {
    let t0 = Instant::now();
    let wo = WalOptions {
        segment_size: opts.segment_size,
        direct_io: opts.direct_io,
        prepare: opts.prepare.clone(),
        sync_method: opts.sync_methods.first().copied(),
        pad_flushes: opts.pad_flushes,
        nocow: opts.nocow,
        ..Default::default()
    };
    let wal = Wal::open(dir, wo)?;
    wal.wait_prepared()?;
    let setup = t0.elapsed().as_secs_f64();
    let before = wal.stats();
    let counter = FlushCounter::of(dir);
    let flush_start = counter.start();
    let first_seq = wal.segments().last().map_or(0, |s| s.seq);
    let (run, switch_lsns) = commit_with_checkpointer(&wal, opts, cancel, first_seq);
    let (lat, secs) = run?;
    let after = wal.stats();
    // The log's durable syncs: its fdatasync calls, or its writes when
    // each write is synced (O_DSYNC). The preparer's syncs of new
    // segments are counted in the flushes too.
    let per_write = after.io.sync_method.per_write();
    let syncs = if per_write {
        after.writes - before.writes
    } else {
        after.syncs - before.syncs
    };
    let flushes = flush_start.finish(lat.len() as u64, syncs, per_write && after.io.direct_io);
    let crossing = switch_commits(&wal, first_seq, switch_lsns, &lat);
    let mut notes = vec![];
    few_samples(&mut notes, lat.len());
    let mut r = result(SpaceState::Wal, opts, &lat, secs, setup, notes);
    r.flushes = Some(flushes);
    r.wal = Some(wal_figures(&before, &after, &crossing));
    wal.close()?;
    // Measured closed: the preparer has stopped, every segment is synced.
    let space = log_files(dir).and_then(|files| crate::extents::space_use(&files));
    match space {
        Ok(u) => {
            if let Some(w) = r.wal.as_mut() {
                w.space = Some(u);
            }
        }
        Err(e) => r.notes.push(Note::new(
            NoteKind::SpaceNotMeasured,
            format!("the log's space was not measured: {e}"),
        )),
    }
    Ok(r)
}

/// Each commit's latency (ns) with its record's LSN, as [`run_threads`]
/// returns them.
type Tagged = Vec<(u64, u64)>;

/// The commits (their latencies tagged with their LSNs, and the run's
/// seconds), with a checkpointer beside them that releases what is
/// durable and notes the first LSN of every segment opened after
/// `first_seq` while they run.
fn commit_with_checkpointer(
    wal: &Wal,
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
    first_seq: u64,
) -> (Result<(Tagged, f64)>, HashSet<u64>) {
    let switch_lsns: Mutex<HashSet<u64>> = Mutex::new(HashSet::new());
    let done = AtomicBool::new(false);
    let mut run = Ok((vec![], 0.0));
    std::thread::scope(|s| {
        // A checkpointer, as a database has: releases what is durable so
        // that segments are recycled (PostgreSQL recycles at checkpoints).
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                let segs = wal.segments();
                {
                    let mut set = switch_lsns.lock().unwrap_or_else(|e| e.into_inner());
                    for sg in segs.iter().filter(|sg| sg.seq > first_seq) {
                        set.insert(sg.first_lsn.0);
                    }
                }
                let _ = wal.release_before(wal.durable_lsn());
            }
        });
        let op = |buf: &[u8]| -> Result<Option<u64>> { wal.commit(buf).map(|Lsn(l)| Some(l)) };
        run = run_threads(opts, cancel, &op);
        done.store(true, Ordering::Relaxed);
    });
    let switch_lsns = switch_lsns.into_inner().unwrap_or_else(|e| e.into_inner());
    (run, switch_lsns)
}

/// The latencies of the commits whose record opened a new segment: those
/// at the first LSN of a segment opened after `first_seq`, noted while
/// the commits ran (`switch_lsns`) or live now.
fn switch_commits(
    wal: &Wal,
    first_seq: u64,
    mut switch_lsns: HashSet<u64>,
    lat: &[(u64, u64)],
) -> Vec<u64> {
    for sg in wal.segments().iter().filter(|sg| sg.seq > first_seq) {
        switch_lsns.insert(sg.first_lsn.0);
    }
    lat.iter()
        .filter(|(_, l)| switch_lsns.contains(l))
        .map(|x| x.0)
        .collect()
}

/// The log's figures over the run, from its counters `before` and `after`
/// and the latencies of the commits that opened a segment (`crossing`);
/// its space is measured once it is closed.
fn wal_figures(before: &WalStats, after: &WalStats, crossing: &[u64]) -> WalFigures {
    WalFigures {
        syncs: after.syncs - before.syncs,
        switches: after.switches - before.switches,
        switch_waits: after.switch_waits - before.switch_waits,
        group: after.group.since(&before.group),
        switch_commits: crossing.len() as u64,
        switch_mean_us: if crossing.is_empty() {
            0.0
        } else {
            crossing.iter().sum::<u64>() as f64 / crossing.len() as f64 / 1000.0
        },
        prepared_created: after.prepared_created - before.prepared_created,
        prepared_recycled: after.prepared_recycled - before.prepared_recycled,
        prepare_strategy: after.last_prepare.clone(),
        prepare_reason: after.last_prepare_reason.clone(),
        io: after.io.clone(),
        space: None,
    }
}

/// The segment files of a log directory (live, free and prepared; not
/// its `LOCK`).
fn log_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let entries = sys::read_dir(dir).map_err(|e| Error::io("read_dir", dir, None, e))?;
    let mut out: Vec<std::path::PathBuf> = entries
        .into_iter()
        .filter(|e| e.file_type == rustix::fs::FileType::RegularFile)
        .filter(|e| e.name.to_str().is_some_and(|n| n.ends_with(".seg")))
        .map(|e| dir.join(e.name))
        .collect();
    out.sort();
    Ok(out)
}
