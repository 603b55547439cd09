//! What the modes share: the record written, the prepared file, the
//! writer threads and their latencies, and the result of a run.

use super::types::{CommitBenchOptions, CommitResult, Latency, SpaceState};
use crate::error::{Error, Result};
use crate::grow::{grow, GrowOptions, Intent, Strategy};
use crate::note::{Note, NoteKind};
use crate::policy::StrategyChoice;
use crate::strategy::SyncMethod;
use crate::sys::{self, Errno};
use rustix::fs::OFlags;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub(super) fn record(size: usize) -> Vec<u8> {
    // Non-zero, incompressible-looking content.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8 | 1
        })
        .collect()
}

pub(super) fn file_io_err(op: &'static str, p: &Path, e: Errno) -> Error {
    Error::io(op, p, None, e)
}

/// Prepares the file for an overwrite mode; returns notes.
pub(super) fn prepare_file(
    p: &Path,
    mode: SpaceState,
    size: u64,
    cancel: Option<&AtomicBool>,
    nocow: Option<bool>,
) -> Result<Vec<Note>> {
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let mut notes = vec![];
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
    let fd = sys::open(p, flags, 0o644).map_err(|e| file_io_err("create", p, e))?;
    let strategy = match mode {
        SpaceState::Recycled => {
            // Where fspace's log makes its written segments NOCOW (btrfs,
            // LOG_NOCOW_ON), its recycled ones are NOCOW too: so is this
            // file, while still empty. Where refused it stays
            // copy-on-write, as the log's segments would.
            let policy = || {
                crate::fs_info::identify(p).is_ok_and(|i| {
                    crate::policy::rules::log_nocow(Some(i.kind), Strategy::ZeroFill).0
                })
            };
            if nocow.unwrap_or_else(policy) {
                let _ = sys::set_nocow(&fd);
            }
            // Written with data and synced, like pg_test_fsync's file.
            let chunk = record(1 << 20);
            let mut off = 0;
            while off < size {
                if cancelled() {
                    return Err(Error::refused_errno(
                        "bench commit",
                        p,
                        Errno::INTR,
                        "interrupted",
                    ));
                }
                let n = (size - off).min(chunk.len() as u64) as usize;
                write_at(&fd, p, &chunk[..n], off)?;
                off += n as u64;
            }
            sys::fdatasync(&fd).map_err(|e| file_io_err("fdatasync", p, e))?;
            return Ok(notes);
        }
        SpaceState::Allocated => Strategy::Allocate,
        SpaceState::Sparse => Strategy::Sparse,
        SpaceState::ZeroFilled => Strategy::ZeroFill,
        SpaceState::WriteZeroed => Strategy::WriteZeroes,
        SpaceState::Preallocated => {
            reserve_past_end(&fd, p, size)?;
            return Ok(notes);
        }
        SpaceState::Appended | SpaceState::Wal => return Ok(notes),
    };
    drop(fd);
    let r = grow(
        p,
        size,
        &GrowOptions {
            choice: StrategyChoice::exactly(strategy),
            intent: Intent::Log,
            sync: true,
            cancel,
            nocow,
            ..Default::default()
        },
    )?;
    notes.extend(r.notes);
    Ok(notes)
}

/// Reserves `size` bytes past the end of the (empty) file at `p`
/// without changing its size: the [`SpaceState::Preallocated`] state.
pub(super) fn reserve_past_end(fd: &impl rustix::fd::AsFd, p: &Path, size: u64) -> Result<()> {
    sys::fallocate(fd, sys::FallocMode::KeepSize, 0, size)
        .map_err(|e| Error::io("fallocate(KEEP_SIZE)", p, Some(0..size), e))
}

struct Samples {
    lat: Vec<u64>,
}

pub(super) fn run_threads(
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
    op: &(dyn Fn(&[u8]) -> Result<Option<u64>> + Sync),
) -> Result<(Vec<(u64, u64)>, f64)> {
    let payload = record(opts.record_size);
    let start = Instant::now();
    let deadline = start + opts.duration;
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let per: Vec<Vec<(u64, u64)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..opts.writers)
            .map(|_| {
                let (payload, failed, stop) = (&payload, &failed, &stop);
                s.spawn(move || {
                    let mut v = Vec::with_capacity(1 << 14);
                    loop {
                        if stop.load(Ordering::Relaxed)
                            || cancel.is_some_and(|c| c.load(Ordering::Relaxed))
                        {
                            break;
                        }
                        let t0 = Instant::now();
                        // Every writer commits at least once: on a busy
                        // machine a thread may first run after a short
                        // run's deadline, and a mode that works must not
                        // report 0 commits.
                        if t0 >= deadline && !v.is_empty() {
                            break;
                        }
                        match op(payload) {
                            Ok(Some(tag)) => v.push((t0.elapsed().as_nanos() as u64, tag)),
                            Ok(None) => {
                                // The prepared space is used up.
                                stop.store(true, Ordering::Relaxed);
                                break;
                            }
                            Err(e) => {
                                stop.store(true, Ordering::Relaxed);
                                let mut f = failed.lock().unwrap_or_else(|e| e.into_inner());
                                f.get_or_insert(e);
                                break;
                            }
                        }
                    }
                    v
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok((per.into_iter().flatten().collect(), secs))
}

fn latency(samples: &mut Samples) -> Latency {
    let v = &mut samples.lat;
    if v.is_empty() {
        return Latency::default();
    }

    v.sort_unstable();
    let pick = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
    Latency {
        p50_us: pick(0.50),
        p99_us: pick(0.99),
        max_us: *v.last().unwrap_or(&0) as f64 / 1000.0,
        mean_us: v.iter().sum::<u64>() as f64 / v.len() as f64 / 1000.0,
    }
}

pub(super) fn result(
    mode: SpaceState,
    opts: &CommitBenchOptions,
    lat_tags: &[(u64, u64)],
    secs: f64,
    setup: f64,
    notes: Vec<Note>,
) -> CommitResult {
    let mut s = Samples {
        lat: lat_tags.iter().map(|x| x.0).collect(),
    };
    let n = s.lat.len() as u64;
    let method = opts
        .sync_methods
        .first()
        .copied()
        .unwrap_or(SyncMethod::Fdatasync);
    CommitResult {
        state: mode,
        writers: opts.writers,
        direct_io: mode != SpaceState::Wal && (method.direct() || opts.direct_io == Some(true)),
        sync_method: match mode {
            SpaceState::Wal => opts.sync_methods.first().copied(),
            _ => Some(
                opts.sync_methods
                    .first()
                    .copied()
                    .unwrap_or(SyncMethod::Fdatasync),
            ),
        },
        commits: n,
        seconds: secs,
        commits_per_sec: n as f64 / secs,
        mib_per_sec: n as f64 * opts.record_size as f64 / secs / f64::from(1 << 20),
        latency: if n == 0 { None } else { Some(latency(&mut s)) },
        setup_seconds: setup,
        wal: None,
        notes,
        unsupported: None,
        kept: None,
        flushes: None,
    }
}

/// Fewer commits than this make the percentiles rough: say so.
const FEW_SAMPLES: usize = 100;

pub(super) fn few_samples(notes: &mut Vec<Note>, n: usize) {
    if n < FEW_SAMPLES {
        notes.push(Note::new(
            NoteKind::FewCommits,
            format!("only {n} commits: the percentiles are rough (a longer run gives more)"),
        ));
    }
}

/// Returns this process's peak resident set size in KiB (`VmHWM`).
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Writes all of `bytes` at `offset` of `fd`.
pub(super) fn write_at(
    fd: &rustix::fd::OwnedFd,
    path: &Path,
    bytes: &[u8],
    offset: u64,
) -> Result<()> {
    sys::pwrite_all(fd, bytes, offset)
        .map_err(|e| Error::pwrite(path, offset + bytes.len() as u64, e))
}
