//! The preparer: keeps the next segments ready, off the commit path.
//!
//! A ready segment is either a released one taken from the recycle pool
//! and renamed to its new sequence (its blocks are already written: no
//! data I/O, one directory `fsync`), or a new one grown with the `auto`
//! policy for intent `log` under a temporary name, synced, renamed, and its
//! directory synced (docs/design.md rule 5). Growth goes in [`PREPARE_STEP`]
//! steps, each synced, pausing between steps so the fill uses at most
//! [`WalOptions::prepare_duty_cycle`] of the time, unless a commit waits.

use super::format::segment_name;
use super::options::{WalOptions, PREPARE_STEP};
use super::site::Site;
use super::storage::{durable_rename, Grown, OpenMode, Storage};
use super::types::SegmentGrowth;
use super::writer::{Prepared, Shared};
use crate::durable::TEMP_MARKER;
use crate::error::{Error, Result};
use crate::grow::GrowOptions;
use crate::strategy::Intent;
use crate::sys::Errno;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The preparer thread's loop: waits until a segment is wanted, prepares
/// it, and hands it (or the failure) to the writer.
pub(super) fn run(sh: &Shared) {
    while let Some((seq, recycled)) = wanted(sh) {
        let mut grew = Grew::default();
        // A panic here must not leave commits waiting for a segment forever:
        // it becomes a preparation failure like any other.
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            prepare(sh, seq, recycled.as_deref(), &mut grew)
        }))
        .unwrap_or_else(|_| {
            Err(Error::refused_errno(
                "prepare",
                &sh.dir,
                Errno::IO,
                "the segment preparer panicked",
            ))
        });
        let mut st = sh.lock();
        match res {
            Ok((p, from_pool)) => {
                st.next_prepare_seq = seq + 1;
                st.ready.push_back(p);
                if from_pool {
                    st.stats.prepared_recycled += 1;
                } else {
                    st.stats.prepared_created += 1;
                    st.stats.last_prepare = grew.how;
                    st.stats.last_prepare_reason = grew.why;
                }
            }
            Err(e) => {
                if let Some(path) = recycled {
                    if sh.io.open(&path, OpenMode::Read).is_ok() {
                        st.pool.push_front(path);
                    }
                }
                let errno = e.raw_os_error().unwrap_or(Errno::IO.raw_os_error());
                st.stats.last_prepare_error = Some(crate::reason::Reason::from(&e));
                st.prep_error = Some((e.to_string(), errno, e.path().to_path_buf()));
                st.prep_failures += 1;
                // Wait to be asked again (a commit that needs a segment,
                // a release that fills the pool): no retry loop on ENOSPC.
                st.prep_blocked = true;
            }
        }
        drop(st);
        sh.cv.notify_all();
    }
}

/// Waits until a segment is wanted: returns its sequence and a pooled
/// segment to recycle, if any; `None` when the log stops.
fn wanted(sh: &Shared) -> Option<(u64, Option<std::path::PathBuf>)> {
    let mut st = sh.lock();
    loop {
        if sh.stop.load(Ordering::SeqCst) || st.closed {
            return None;
        }
        if !st.prep_blocked && st.ready.len() < sh.opts.prepare_ahead {
            return Some((st.next_prepare_seq, st.pool.pop_front()));
        }
        st = sh.prep_cv.wait(st).unwrap_or_else(|e| e.into_inner());
    }
}

/// Prepares segment `seq`: recycles `recycled` when it is usable, else
/// creates one. Returns it and whether it came from the pool.
fn prepare(
    sh: &Shared,
    seq: u64,
    recycled: Option<&Path>,
    grew: &mut Grew,
) -> Result<(Prepared, bool)> {
    if let Some(path) = recycled {
        if let Some(p) = recycle(sh, seq, path)? {
            return Ok((p, true));
        }
        // Unusable (another size): removed; make a new one.
    }
    let (p, how) = create_segment(
        &*sh.io,
        &sh.site,
        &sh.dir,
        seq,
        &sh.opts,
        Some(&sh.stop),
        Some(&sh.urgent),
    )?;
    *grew = how;
    Ok((p, false))
}

/// Renames a pooled segment to sequence `seq`; `None` if it was unusable
/// (removed).
fn recycle(sh: &Shared, seq: u64, from: &Path) -> Result<Option<Prepared>> {
    recycle_into(&*sh.io, &sh.dir, seq, &sh.opts, from)
}

/// Renames the pooled segment `from` to segment `seq` of `dir`, durably;
/// `None` if it was unusable (removed).
pub(super) fn recycle_into(
    io: &dyn Storage,
    dir: &Path,
    seq: u64,
    opts: &WalOptions,
    from: &Path,
) -> Result<Option<Prepared>> {
    let fd = io
        .open(from, OpenMode::ReadWrite)
        .map_err(|e| Error::io("open", from, None, e))?;
    let (_, size) = fd.stat().map_err(|e| Error::io("fstat", from, None, e))?;
    if size != opts.segment_size {
        // Removed, not made durable: if a cut brings it back, the next
        // open finds it in the pool and removes it again.
        io.unlink(from)
            .map_err(|e| Error::io("unlink", from, None, e))?;
        return Ok(None);
    }
    let to = dir.join(segment_name(seq));
    // Its blocks were written and synced in an earlier life; the rename
    // must be durable before the writer makes the segment live, else a
    // cut could bring back `from` and lose what was acknowledged in `to`.
    let renamed = durable_rename(io, &*fd, from, &to, dir, true);
    match renamed {
        Ok(_) => Ok(Some(Prepared { seq, path: to, fd })),
        Err((e, moved)) => {
            // Do not leave `seq`'s name taken: a later creation of it would
            // fail with EEXIST forever. The file holds no live data.
            if moved {
                let _ = io.unlink(&to);
            }
            Err(e)
        }
    }
}

/// How a new segment was grown and why: what becomes the stats'
/// `last_prepare` and `last_prepare_reason`.
#[derive(Default)]
pub(super) struct Grew {
    how: Option<SegmentGrowth>,
    why: Option<String>,
}

/// Creates segment `seq`, fully grown and durable under its final name.
/// Returns it, with how it was grown and why.
pub(super) fn create_segment(
    io: &dyn Storage,
    site: &Site,
    dir: &Path,
    seq: u64,
    opts: &WalOptions,
    stop: Option<&AtomicBool>,
    urgent: Option<&AtomicBool>,
) -> Result<(Prepared, Grew)> {
    let mut grew = Grew::default();
    let name = segment_name(seq);
    let path = dir.join(&name);
    let tmp = dir.join(crate::stale::unique_name(&format!(".{name}"), TEMP_MARKER));
    let fd = io
        .open(&tmp, OpenMode::CreateNew)
        .map_err(|e| Error::io("create", &path, None, e))?;
    let result = (|| {
        let choice = opts.prepare.clone();
        // The policy decided at open whether segments are NOCOW
        // (`Plan::nocow`, LOG_NOCOW_ON): set here, on the storage seam,
        // and the growth told how it went, so that it follows the same
        // plan as `grow --for log` (where refused: copy-on-write, sparse).
        let mut nocow = None;
        let mut not_nocow = None;
        if opts.nocow == Some(true) {
            match fd.set_nocow() {
                Ok(()) => nocow = Some(true),
                Err(e) => {
                    nocow = Some(false);
                    not_nocow = Some(format!("the NOCOW attribute was refused ({e})"));
                }
            }
        } else if opts.nocow == Some(false) {
            nocow = Some(false);
            not_nocow = Some("NOCOW turned off (WalOptions::nocow)".to_string());
        }
        grew.why =
            site.segment_plan(dir, &path, opts.segment_size, &choice, not_nocow.as_deref())?;
        // Asked for and refused where the plan did not turn on it (another
        // filesystem, a named strategy): said all the same.
        if let Some(n) = not_nocow.filter(|_| nocow == Some(false) && opts.nocow == Some(true)) {
            if !grew.why.as_deref().unwrap_or("").contains(&n) {
                grew.why = Some(match grew.why.take() {
                    Some(w) => format!("{n}: copy-on-write; {w}"),
                    None => n,
                });
            }
        }
        let gopts = GrowOptions {
            choice,
            intent: Intent::Log,
            sync: true,
            cancel: stop,
            nocow,
            ..Default::default()
        };
        let mut len = 0;
        while len < opts.segment_size {
            let target = (len + PREPARE_STEP).min(opts.segment_size);
            let t0 = Instant::now();
            grew.how = Some(growth(&fd.grow(&path, &tmp, target, &gopts)?));
            len = target;
            if len < opts.segment_size {
                pause(t0.elapsed(), opts.prepare_duty_cycle, stop, urgent);
            }
        }
        // The data was synced by each step; the rename makes it the
        // segment, durably, before anyone can use it.
        durable_rename(io, &*fd, &tmp, &path, dir, false)
            .map(|_| ())
            .map_err(|(e, _)| e)
    })();
    match result {
        Ok(()) => {
            // Close and reopen: xfs keeps speculative preallocation past
            // EOF (up to the file's size again) on a file grown by appending
            // while it stays open, and trims it on the last close.
            drop(fd);
            let fd = io
                .open(&path, OpenMode::ReadWrite)
                .map_err(|e| Error::io("open", &path, None, e))?;
            Ok((Prepared { seq, path, fd }, grew))
        }
        Err(e) => {
            // Gone already if the rename happened.
            let _ = io.unlink(&tmp);
            Err(e)
        }
    }
}

/// The strategy that grew a segment, with the fallbacks tried before it:
/// [`WalStats::last_prepare`](super::types::WalStats::last_prepare).
fn growth(g: &Grown) -> SegmentGrowth {
    SegmentGrowth {
        strategy: g.strategy,
        fallbacks: g.fallbacks.clone(),
    }
}

/// Sleeps so that work that took `worked` uses `duty` of the time; wakes
/// early when a commit starts waiting or the log stops.
fn pause(worked: Duration, duty: f64, stop: Option<&AtomicBool>, urgent: Option<&AtomicBool>) {
    if duty >= 1.0 {
        return;
    }
    // Options are checked (duty >= MIN_DUTY_CYCLE); cap the pause anyway.
    let total = worked
        .checked_mul(((1.0 - duty) / duty).ceil().min(1000.0) as u32)
        .unwrap_or(Duration::from_secs(1))
        .min(Duration::from_secs(10));
    let until = Instant::now() + total;
    let slice = Duration::from_millis(2);
    loop {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed))
            || urgent.is_some_and(|u| u.load(Ordering::Relaxed))
        {
            return;
        }
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::sleep(slice.min(until - now));
    }
}
