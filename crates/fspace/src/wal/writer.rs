//! The writer engine: the in-memory tail, group commit, segment switches,
//! releases and poisoning, behind the [`Wal`](crate::wal::Wal) handle.

use super::flush::{Chunk, Poison};
use super::format::{
    self, encode_record, record_span, RecordKey, SegmentHeader, SEGMENT_HEADER_LEN,
};
use super::measure::{Group, InFlight};
use super::options::{WalOptions, GATHER_MIN_FLUSH, WRITE_PAGE};
use super::scan::open_segment;
use super::site::Site;
use super::storage::{durable_rename, sync_dir, SegmentFile, Storage};
use super::types::{max_record, IoRefusal, Lsn, ReleaseReport, SegmentInfo, WalStats};
use crate::error::{Error, Result};
use crate::sys::Errno;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// How long the most concurrent committers seen is remembered by the
/// group gathering (group.rs): 50 ms, hundreds of flushes.
pub(super) const PEAK_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);

pub(super) struct Shared {
    pub(super) dir: PathBuf,
    pub(super) log_id: [u8; 16],
    /// Random per open; see [`nonce_for`].
    pub(super) nonce_base: u32,
    pub(super) opts: WalOptions,
    pub(super) state: Mutex<State>,
    /// Signalled when a flush ends, a segment becomes ready or
    /// preparation fails.
    pub(super) cv: Condvar,
    /// Wakes the preparer.
    pub(super) prep_cv: Condvar,
    /// A commit is waiting for a segment: the preparer does not pause.
    pub(super) urgent: AtomicBool,
    /// Stops the preparer (also cancels a fill in progress).
    pub(super) stop: AtomicBool,
    /// Threads inside `commit` right now.
    pub(super) committers: std::sync::atomic::AtomicUsize,
    /// Signalled by `append` while a flush gathers its group.
    pub(super) append_cv: Condvar,
    /// `State::durable_lsn`, readable without the lock by spinning
    /// followers (group.rs).
    pub(super) durable: AtomicU64,
    /// Counts the flush stages that ended: a spinning follower stops
    /// spinning when it moves (group.rs).
    pub(super) progress: AtomicU64,
    /// Serialises releases so renames stay in sequence order.
    pub(super) release_lock: Mutex<()>,
    /// Every call to storage goes through here.
    pub(super) io: Arc<dyn Storage>,
    /// What the log asks about its filesystem, above `io`.
    pub(super) site: Site,
    pub(super) _lock_file: Box<dyn Send + Sync>,
}

/// The segment being written.
pub(super) struct Current {
    pub(super) seq: u64,
    pub(super) nonce: u32,
    pub(super) size: u64,
    pub(super) fd: Arc<dyn SegmentFile>,
    pub(super) path: Arc<PathBuf>,
    /// Offset where the next record goes.
    pub(super) end: u64,
    /// Offset up to which bytes were handed to a flush.
    pub(super) handed: u64,
}

pub(crate) struct Prepared {
    pub(super) seq: u64,
    pub(super) path: PathBuf,
    pub(super) fd: Box<dyn SegmentFile>,
}

pub(super) struct State {
    pub(super) poison: Option<Poison>,
    pub(super) closed: bool,
    pub(super) next_lsn: u64,
    pub(super) durable_lsn: u64,
    pub(super) cur: Current,
    /// Bytes of `cur` from `buf_start` to `cur.end`. With `O_DIRECT`
    /// `buf_start` is a page boundary (the partial last page stays in the
    /// buffer and is written whole again); buffered, it is where the last
    /// flush ended.
    pub(super) buf: Vec<u8>,
    pub(super) buf_start: u64,
    /// Pages of earlier segments not yet written (a switch during a flush).
    pub(super) sealed: VecDeque<Chunk>,
    pub(super) sealed_bytes: usize,
    /// A thread is in the write stage (group.rs): handing pages over and
    /// writing them.
    pub(super) writing: bool,
    /// A thread is in the sync stage (group.rs).
    pub(super) syncing: bool,
    /// The segment the sync in flight syncs.
    pub(super) sync_seq: u64,
    /// Every record up to here has its pages written (a sync that starts
    /// now covers them).
    pub(super) written_lsn: u64,
    /// Durable writes in flight, oldest first (group.rs, `fly`).
    pub(super) inflight: VecDeque<InFlight>,
    /// At most this many ([`WalOptions::writes_in_flight`]).
    pub(super) writes_in_flight: usize,
    /// Threads waiting on `cv` ([`Shared::wait`]): a flush wakes them only
    /// when there are some, since a futex wake is a syscall, one per commit
    /// for a lone committer otherwise.
    pub(super) cv_waiters: usize,
    /// A flush is waiting for its group to gather (group.rs).
    pub(super) gathering: bool,
    /// Last LSN handed to a flush.
    pub(super) handed_lsn: u64,
    /// Group commit's measurements (group.rs).
    pub(super) group: Group,
    pub(super) flushes: u64,
    /// Records go out with `O_DIRECT` (through `staging`, page-aligned).
    pub(super) direct: bool,
    /// Synced flushes write with `RWF_DSYNC` instead of calling
    /// `fdatasync` (the sync method is per write).
    pub(super) dsync: bool,
    /// Sync with `fsync` instead of `fdatasync` ([`SyncMethod::Fsync`](crate::SyncMethod::Fsync)).
    pub(super) fsync: bool,
    /// End every flush on a page boundary with a padding record.
    pub(super) pad: bool,
    pub(super) staging: Vec<u8>,
    /// A segment written but not yet `fdatasync`ed.
    pub(super) dirty: Option<(u64, Arc<dyn SegmentFile>, Arc<PathBuf>)>,
    pub(super) live: VecDeque<SegmentInfo>,
    pub(super) ready: VecDeque<Prepared>,
    pub(super) pool: VecDeque<PathBuf>,
    /// Highest segment whose header (first page) is durable.
    pub(super) header_synced_seq: u64,
    pub(super) next_prepare_seq: u64,
    pub(super) prep_blocked: bool,
    pub(super) prep_failures: u64,
    pub(super) prep_error: Option<(String, i32, PathBuf)>,
    pub(super) spare: Vec<u8>,
    pub(super) stats: WalStats,
}

impl State {
    /// Wraps `bytes` (the current segment's pages from `buf_start`) for a
    /// flush.
    pub(super) fn chunk_of_current(&self, bytes: Vec<u8>) -> Chunk {
        Chunk {
            seq: self.cur.seq,
            direct: self.direct,
            dsync: self.dsync,
            fd: self.cur.fd.clone(),
            path: self.cur.path.clone(),
            offset: self.buf_start,
            bytes,
        }
    }
}

pub(super) fn round_down(x: u64) -> u64 {
    x / WRITE_PAGE as u64 * WRITE_PAGE as u64
}

/// Pads `v`, the bytes from offset `start`, with zeros to the next page
/// boundary: a write never ends inside a page, so the kernel never reads a
/// page to merge the write's end into it.
pub(super) fn pad_to_page(v: &mut Vec<u8>, start: u64) {
    let end = (start + v.len() as u64).div_ceil(WRITE_PAGE as u64) * WRITE_PAGE as u64;
    v.resize((end - start) as usize, 0);
}

pub(super) fn poisoned(p: &Poison) -> Error {
    Error::Poisoned {
        op: p.op,
        path: p.path.clone(),
        errno: p.errno,
    }
}

pub(super) fn prepare_error(st: &State) -> Error {
    match &st.prep_error {
        Some((msg, errno, path)) => Error::refused_errno(
            "commit",
            path,
            Errno::from_raw_os_error(*errno),
            format!("no segment ready: preparing it failed: {msg}"),
        ),
        None => Error::refused_errno("commit", Path::new(""), Errno::IO, "no segment ready"),
    }
}

/// Returns the nonce of segment `seq` in this open of the log: distinct
/// per segment, and random per open, so that a segment reused under the
/// same sequence after a crash never verifies its earlier records.
pub(super) fn nonce_for(base: u32, seq: u64) -> u32 {
    base.wrapping_add((seq as u32).wrapping_mul(0x9E37_79B9))
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State half-updated in
        // a way later calls rely on (flushes re-check everything), so a
        // poisoned mutex is used as is.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits on `cv` (counted in `cv_waiters`).
    pub(super) fn wait<'a>(&self, mut g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        g.cv_waiters += 1;
        let mut g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        g.cv_waiters -= 1;
        g
    }

    /// Waits on `cv` for at most `left` (counted in `cv_waiters`).
    pub(super) fn wait_timeout<'a>(
        &self,
        mut g: MutexGuard<'a, State>,
        left: std::time::Duration,
    ) -> MutexGuard<'a, State> {
        g.cv_waiters += 1;
        let mut g = match self.cv.wait_timeout(g, left) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        };
        g.cv_waiters -= 1;
        g
    }

    /// Refuses work on a poisoned or closed log.
    pub(super) fn check_usable(&self, st: &State) -> Result<()> {
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        if st.closed {
            return Err(Error::refused_errno(
                "append",
                &self.dir,
                Errno::BADF,
                "log is closed",
            ));
        }
        Ok(())
    }

    pub(super) fn append(&self, data: &[u8]) -> Result<Lsn> {
        let max = max_record(self.opts.segment_size);
        if data.len() > max {
            return Err(Error::refused_errno(
                "append",
                &self.dir,
                Errno::MSGSIZE,
                format!(
                    "a record of {} bytes does not fit a segment of {} bytes (at most {max})",
                    data.len(),
                    self.opts.segment_size
                ),
            ));
        }
        let span = record_span(data.len()) as u64;
        let mut st = self.lock();
        loop {
            self.check_usable(&st)?;
            // Backpressure: bound the bytes waiting in memory.
            if st.sealed_bytes + (st.cur.end - st.cur.handed) as usize >= self.opts.write_buffer {
                // Writes in flight must return first: their records are
                // not durable yet, and this flush's sync would claim them.
                if st.writing || (st.syncing && !can_overlap(&st)) || !st.inflight.is_empty() {
                    st = self.wait(st);
                } else {
                    let (g, r) = self.flush(st, false);
                    st = g;
                    r?;
                }
                continue;
            }
            if st.cur.end + span <= st.cur.size {
                break;
            }
            st = self.switch_segment(st, span)?;
        }
        let lsn = st.next_lsn;
        if lsn > format::MAX_NUMBER {
            return Err(Error::refused_errno(
                "append",
                &self.dir,
                Errno::OVERFLOW,
                "the log has reached the format's largest LSN (2^62)",
            ));
        }
        let key = RecordKey {
            log_id: self.log_id,
            seq: st.cur.seq,
            nonce: st.cur.nonce,
        };
        encode_record(&mut st.buf, &key, lsn, data);
        st.cur.end += span;
        st.next_lsn += 1;
        if st.gathering {
            self.append_cv.notify_all();
        }
        st.stats.records += 1;
        st.stats.payload_bytes += data.len() as u64;
        Ok(Lsn(lsn))
    }

    /// Moves to the next prepared segment, waiting for the preparer if none
    /// is ready. The current segment's unwritten pages are sealed into a
    /// chunk that the next flush writes (and syncs) before any page of the
    /// new segment.
    pub(super) fn switch_segment<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        span: u64,
    ) -> Result<MutexGuard<'a, State>> {
        let (mut st, next) = self.next_ready(st, span)?;
        let Some(next) = next else {
            return Ok(st);
        };
        if st.cur.end > st.cur.handed {
            let mut bytes = std::mem::take(&mut st.buf);
            pad_to_page(&mut bytes, st.buf_start);
            st.sealed_bytes += bytes.len();
            let chunk = st.chunk_of_current(bytes);
            st.sealed.push_back(chunk);
        }
        self.install(&mut st, next);
        self.prep_cv.notify_all();
        Ok(st)
    }

    /// Takes the next ready segment, waiting for the preparer if none is;
    /// `None` when another appender switched meanwhile and `span` bytes fit
    /// the current segment now.
    fn next_ready<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        span: u64,
    ) -> Result<(MutexGuard<'a, State>, Option<Prepared>)> {
        let mut waited = false;
        let next = loop {
            // Another appender may have switched while this one waited.
            if st.cur.end + span <= st.cur.size {
                if waited {
                    self.urgent.store(false, Ordering::SeqCst);
                }
                return Ok((st, None));
            }
            if let Some(p) = st.ready.pop_front() {
                break p;
            }
            self.check_usable(&st)?;
            if !waited {
                waited = true;
                st.stats.switch_waits += 1;
            }
            // Ask for one more attempt and wait for its outcome: a commit
            // that needs a segment gets the preparation's error, and a
            // later one tries again (after space was freed, say).
            let epoch = st.prep_failures;
            st.prep_blocked = false;
            self.urgent.store(true, Ordering::SeqCst);
            self.prep_cv.notify_all();
            let seq = st.cur.seq;
            while st.ready.is_empty()
                && st.prep_failures == epoch
                && !st.closed
                && st.cur.seq == seq
                && st.poison.is_none()
            {
                st = self.wait(st);
            }
            if st.cur.seq != seq {
                continue;
            }
            if st.ready.is_empty() && st.prep_failures > epoch {
                self.urgent.store(false, Ordering::SeqCst);
                return Err(prepare_error(&st));
            }
        };
        self.urgent.store(false, Ordering::SeqCst);
        Ok((st, Some(next)))
    }

    /// Makes `next` the current segment: its header starts the tail buffer
    /// and it joins the live segments.
    fn install(&self, st: &mut State, next: Prepared) {
        let size = self.opts.segment_size;
        let header = SegmentHeader {
            version: format::FORMAT_VERSION,
            log_id: self.log_id,
            seq: next.seq,
            size,
            first_lsn: st.next_lsn,
            nonce: nonce_for(self.nonce_base, next.seq),
        };
        let mut buf = std::mem::take(&mut st.spare);
        buf.clear();
        buf.extend_from_slice(&header.encode());
        st.buf = buf;
        st.buf_start = 0;
        let first_lsn = Lsn(st.next_lsn);
        st.live.push_back(SegmentInfo {
            seq: next.seq,
            first_lsn,
            path: next.path.clone(),
            size,
            format: format::FORMAT_VERSION,
        });
        if st.direct {
            if let Err(e) = next.fd.set_direct(true) {
                st.direct = false;
                let refused = IoRefusal::ODirect;
                st.stats.io.fall_back(refused, &next.path, e.raw_os_error());
            }
        }
        st.cur = Current {
            seq: next.seq,
            nonce: header.nonce,
            size,
            fd: Arc::from(next.fd),
            path: Arc::new(next.path),
            end: SEGMENT_HEADER_LEN as u64,
            handed: 0,
        };
        st.stats.switches += 1;
    }

    pub(super) fn release_before(&self, lsn: u64) -> Result<ReleaseReport> {
        let _serial = self.release_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut st = self.lock();
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        // Only segments whose records are all durable: their pages are
        // written and synced, so no flush still holds bytes for them.
        let lsn = lsn.min(st.durable_lsn + 1);
        let mut victims = vec![];
        // ... and whose successor's header is durable: otherwise a crash
        // could leave no live segment to say where the log continues.
        while st.live.len() > 1
            && st.live[1].first_lsn.0 <= lsn
            && st.live[1].seq <= st.header_synced_seq
        {
            if let Some(s) = st.live.pop_front() {
                victims.push(s);
            }
        }
        let room = self.opts.recycle_pool.saturating_sub(st.pool.len());
        drop(st);
        let mut report = ReleaseReport::default();
        let mut recycled = vec![];
        let mut result = Ok(());
        let mut done = 0;
        for (i, seg) in victims.iter().enumerate() {
            let (to, stop) = match self.release_one(seg, i < room) {
                Ok(to) => (to, None),
                Err((e, false)) => {
                    result = Err(e);
                    break;
                }
                Err((e, true)) => (None, Some(e)),
            };
            done += 1;
            match to {
                Some(to) => {
                    recycled.push(to);
                    report.recycled += 1;
                }
                None => report.deleted += 1,
            }
            if let Some(e) = stop {
                result = Err(e);
                break;
            }
        }
        let mut st = self.lock();
        // Segments not released (an error stopped the loop) stay live.
        for seg in victims.into_iter().skip(done).rev() {
            st.live.push_front(seg);
        }
        st.stats.released_to_pool += report.recycled as u64;
        st.stats.released_deleted += report.deleted as u64;
        if !recycled.is_empty() {
            // A pooled segment needs no space: let a preparer that gave up
            // (ENOSPC) try again.
            st.prep_blocked = false;
        }
        st.pool.extend(recycled);
        drop(st);
        self.prep_cv.notify_all();
        result.map(|()| report)
    }

    /// Releases one segment: renamed into the pool when `to_pool` and it
    /// has the pool's size, else removed. `Err((error, gone))`: `gone` once
    /// the segment left its live name (renamed or removed), whether or not
    /// the syncs after that worked; it is no longer live either way.
    fn release_one(
        &self,
        seg: &SegmentInfo,
        to_pool: bool,
    ) -> std::result::Result<Option<PathBuf>, (Error, bool)> {
        if to_pool && seg.size == self.opts.segment_size {
            let to = self.dir.join(format!(
                "{}{}",
                format::FREE_PREFIX,
                format::segment_name(seg.seq)
            ));
            // Its records are durable (only those are released); a cut
            // before the directory fsync leaves it live under its old name,
            // and recovery reads it as before.
            let (fd, _) = open_segment(&*self.io, &seg.path).map_err(|e| (e, false))?;
            durable_rename(&*self.io, &*fd, &seg.path, &to, &self.dir, true)?;
            Ok(Some(to))
        } else {
            // Unlinked, then the directory synced: a cut before the sync
            // leaves it live, so a crash leaves a prefix of the release done.
            self.io
                .unlink(&seg.path)
                .map_err(|e| (Error::io("unlink", &seg.path, None, e), false))?;
            self.sync_dir().map_err(|e| (e, true))?;
            Ok(None)
        }
    }

    pub(super) fn sync_dir(&self) -> Result<()> {
        sync_dir(&*self.io, &self.dir)
    }
}

/// Takes every page waiting to be written: sealed chunks of earlier
/// segments, then the current segment's buffer, padded with zeros to the
/// end of its last page. With `O_DIRECT` the buffer keeps a copy of that
/// partial page, which the next flush writes again, whole (a direct write
/// covers whole pages); buffered, the next flush starts where this one's
/// records end, inside a page this flush leaves in the page cache, so its
/// bytes are copied once (no read-before-write either way).
pub(super) fn hand_over(st: &mut State) -> Vec<Chunk> {
    let mut chunks: Vec<Chunk> = st.sealed.drain(..).collect();
    st.sealed_bytes = 0;
    if st.cur.end > st.cur.handed {
        let next_start = if st.direct {
            round_down(st.cur.end)
        } else {
            st.cur.end
        };
        let keep_from = (next_start - st.buf_start) as usize;
        let mut next = std::mem::take(&mut st.spare);
        next.clear();
        next.extend_from_slice(&st.buf[keep_from..]);
        let mut bytes = std::mem::replace(&mut st.buf, next);
        pad_to_page(&mut bytes, st.buf_start);
        chunks.push(st.chunk_of_current(bytes));
        st.buf_start = next_start;
        st.cur.handed = st.cur.end;
    }
    chunks
}

/// Whether the pages waiting now can be written while a sync runs: the log
/// syncs with a call (a per-write sync method makes the write itself the
/// sync), its flushes are short (under [`GATHER_MIN_FLUSH`]: where they are
/// longer, the sync in flight is the window in which the next group
/// gathers, and a write started early in it splits that group: on btrfs
/// at 16 writers, 1.37x more commits without it,
/// bench/runs/2026-12-02-group-commit-final/notes.md), no earlier segment's
/// pages wait (they must be durable before any page of a later segment goes
/// out), and the sync in flight, if any, is of the segment being written.
pub(super) fn can_overlap(st: &State) -> bool {
    st.group.flush_ns < GATHER_MIN_FLUSH.as_nanos() as u64
        && !st.dsync
        && st.sealed.is_empty()
        && st.dirty.as_ref().is_none_or(|d| d.0 == st.cur.seq)
        && (!st.syncing || st.sync_seq == st.cur.seq)
}
