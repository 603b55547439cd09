//! Group commit: how concurrent commits share writes and syncs.
//!
//! A flush has two stages, each held by one thread at a time:
//! - the **write stage** (`State::writing`) hands the appended pages over
//!   and writes them;
//! - the **sync stage** (`State::syncing`) makes written pages durable. It
//!   covers every record whose pages were written before it started
//!   (`State::written_lsn` then): a sync covers only what was written
//!   before it.
//!
//! Where the log syncs with a call (`fdatasync`/`fsync`), its flushes are
//! short (under [`GATHER_MIN_FLUSH`]; longer, the sync in flight is the
//! next group's gathering window) and the pages to write all belong to the
//! segment being synced, the next group's pages are written while the
//! current group's sync runs. Everything else (a sync
//! method that syncs each write, a segment switch among the pages, a
//! segment other than the one being synced) flushes in one step holding
//! both stages, as recovery's invariant 1 asks (recovery.rs).
//!
//! There is no timer: a group is whatever was appended while the previous
//! flush ran (PostgreSQL's, RocksDB's and raft-engine's rule). A writer
//! waits for more committers to join only where the log's own measured
//! flush time says a wait can pay ([`GATHER_MIN_FLUSH`]), for at most a
//! fraction of it ([`GATHER_FRACTION`]), and never when one thread commits
//! alone. Followers spin briefly where a flush is short
//! ([`SPIN_MAX_FLUSH`]), then block until a flush ends (docs/design.md
//! rule 10).

use super::flush::FlushIo;
use super::measure::{size_bucket, InFlight};
use super::options::{GATHER_FRACTION, GATHER_MIN_FLUSH, SPIN_MAX_FLUSH, WRITE_PAGE};
use super::writer::{can_overlap, hand_over, poisoned, Shared, State, PEAK_WINDOW};
use crate::error::Result;
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// Rounds a follower spins (then yields) before it blocks; each round
/// re-reads two atomics. Only where flushes take under `SPIN_MAX_FLUSH`,
/// so 512 rounds (a few hundred µs of yields at most) cover almost every
/// wait: on tmpfs with 8 writers, 64 rounds left about 2,000 followers a
/// second to block and be woken, 512 about 4, and p99 fell by a sixth
/// (bench/runs/2026-12-02-group-commit-final/notes.md).
const SPIN_ROUNDS: u32 = 512;

/// Rounds that only spin the CPU before the follower starts yielding it.
const PAUSE_ROUNDS: u32 = 8;

impl Shared {
    /// Returns once every record up to `lsn` is durable: as a follower of
    /// another thread's flush, or as the one that writes or syncs.
    pub(super) fn sync_to(&self, lsn: u64) -> Result<()> {
        let mut st = self.lock();
        let lsn = lsn.min(st.next_lsn - 1);
        let mut spin = true;
        // Gathered already: the checks above it ran again after the wait
        // (another thread may have started a sync or written meanwhile).
        let mut gathered = false;
        loop {
            if let Some(p) = &st.poison {
                return Err(poisoned(p));
            }
            if st.durable_lsn >= lsn {
                return Ok(());
            }
            if st.written_lsn >= lsn {
                // Written: a sync that starts now covers it.
                if st.syncing {
                    st = self.follow(st, lsn, &mut spin);
                } else {
                    let (g, r) = self.sync_stage(st);
                    st = g;
                    r?;
                }
                continue;
            }
            if st.handed_lsn >= lsn && !st.inflight.is_empty() {
                // Its durable write is in flight.
                st = self.follow(st, lsn, &mut spin);
                continue;
            }
            if st.writing || (st.syncing && !can_overlap(&st)) {
                st = self.follow(st, lsn, &mut spin);
                continue;
            }
            if can_fly(&st) && (self.has_company() || !st.inflight.is_empty()) {
                let (g, r) = self.fly(st);
                st = g;
                r?;
                continue;
            }
            if !st.inflight.is_empty() {
                // A write that needs the ones in flight done first.
                st = self.follow(st, lsn, &mut spin);
                continue;
            }
            if !gathered {
                // The wait releases the lock: everything is checked again.
                st = self.gather(st);
                gathered = true;
                continue;
            }
            gathered = false;
            let (g, r) = self.flush(st, true);
            st = g;
            r?;
        }
    }

    /// Waits for the flush another thread runs: spins a little first where
    /// flushes are short (no sleep, no wake-up), then blocks on `cv` until
    /// a flush ends; no timer.
    fn follow<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        lsn: u64,
        spin: &mut bool,
    ) -> MutexGuard<'a, State> {
        let short = st.group.flush_ns != 0 && st.group.flush_ns <= SPIN_MAX_FLUSH.as_nanos() as u64;
        // Past a few pauses the spinner yields its CPU, so that with more
        // committers than CPUs the flusher and the appenders still run.
        if *spin && short {
            *spin = false;
            let seen = self.progress.load(Ordering::Acquire);
            drop(st);
            for round in 0..SPIN_ROUNDS {
                if self.durable.load(Ordering::Acquire) >= lsn
                    || self.progress.load(Ordering::Acquire) != seen
                {
                    // A stage ended: spinning may pay again if this
                    // record still waits.
                    *spin = true;
                    break;
                }
                if round < PAUSE_ROUNDS {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            let mut st = self.lock();
            st.stats.group.follower_spins += 1;
            return st;
        }
        let mut st = st;
        st.stats.group.follower_waits += 1;
        *spin = true;
        self.wait(st)
    }

    /// Lets the group form where a wait can pay: when other threads are
    /// committing now and have been, and the log's flushes take at least
    /// [`GATHER_MIN_FLUSH`], waits until as many records are pending as
    /// there were committers, for at most [`GATHER_FRACTION`] of a flush.
    /// One `fdatasync` then serves them all instead of two alternating
    /// half-groups.
    pub(super) fn gather<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let now = self.committers.load(Ordering::SeqCst);
        if now <= 1 || st.group.flush_ns < GATHER_MIN_FLUSH.as_nanos() as u64 {
            // Nobody else is committing right now, or a wait would cost
            // about what the flush does: no clock read, no wait.
            return st;
        }
        let t = Instant::now();
        // The peak decays: it is the most committers seen within the last
        // PEAK_WINDOW, so a past burst does not slow a lone committer.
        match st.group.peak_since {
            Some(since) if t.duration_since(since) <= PEAK_WINDOW => {
                st.group.peak_committers = st.group.peak_committers.max(now);
            }
            _ => {
                st.group.peak_committers = now;
                st.group.peak_since = Some(t);
            }
        }
        let want = st.group.peak_committers;
        let pending = |st: &State| (st.next_lsn - 1 - st.handed_lsn) as usize;
        if want <= 1 || pending(&st) >= want {
            return st;
        }
        let limit = Duration::from_nanos(st.group.flush_ns).mul_f64(GATHER_FRACTION);
        st.writing = true; // others follow meanwhile
        st.gathering = true;
        st.stats.group.gather_waits += 1;
        let deadline = t + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if pending(&st) >= want || left.is_zero() {
                break;
            }
            st = match self.append_cv.wait_timeout(st, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        st.stats.group.gather_wait_ns += t.elapsed().as_nanos() as u64;
        st.gathering = false;
        st.writing = false;
        st
    }

    /// Writes out everything appended so far, as the one writer: the state
    /// lock is released during the I/O so that other threads keep
    /// appending (they form the next group). Where the pages can go out
    /// while a sync runs ([`can_overlap`]) this is the write stage alone
    /// (the caller's loop then syncs); otherwise it holds both stages and,
    /// if `sync`, makes them durable too. Callers hold neither stage.
    pub(super) fn flush<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        sync: bool,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        let overlap = can_overlap(&st) && (st.syncing || !sync || self.has_company());
        // Callers checked under this lock hold: nobody writes, and a sync
        // in flight only where this write may run beside it.
        debug_assert!(!st.writing && (overlap || !st.syncing) && st.inflight.is_empty());
        if overlap && st.syncing {
            st.stats.group.overlapped_writes += 1;
        }
        let sync = sync && !overlap;
        st.writing = true;
        if !overlap {
            st.syncing = true;
        }
        if st.pad {
            self.pad_flush(&mut st);
        }
        let chunks = hand_over(&mut st);
        let target = st.next_lsn - 1;
        st.handed_lsn = target;
        st.flushes += 1;
        // An overlapping write leaves the dirty segment to the sync stage,
        // which may start meanwhile and must sync what earlier writes left
        // there; the pages it writes are in that segment.
        let dirty = if overlap { None } else { st.dirty.take() };
        let mut io = FlushIo::new(dirty, std::mem::take(&mut st.staging), st.fsync);
        drop(st);
        let t = sync.then(Instant::now);
        let failed = io.write(&chunks, sync).err().map(|b| *b);
        let mut st = self.lock();
        st.writing = false;
        if !overlap {
            st.syncing = false;
        }
        let keep = 2 * self.opts.write_buffer.max(WRITE_PAGE);
        if io.staging.capacity() <= keep + WRITE_PAGE {
            st.staging = std::mem::take(&mut io.staging);
        }
        st.stats.writes += io.writes;
        st.stats.syncs += io.syncs;
        // Recycle the largest buffer for the next hand-over.
        if let Some(c) = chunks.into_iter().max_by_key(|c| c.bytes.capacity()) {
            if c.bytes.capacity() > st.spare.capacity() && c.bytes.capacity() <= keep {
                st.spare = c.bytes;
            }
        }
        let result = match failed {
            Some((e, p)) => {
                self.poison(&mut st, p);
                Err(e)
            }
            None => {
                // Only a flush that succeeded says which headers are
                // durable (a per-write sync may have reached one before a
                // later step failed; the poison stops releases anyway).
                st.header_synced_seq = st.header_synced_seq.max(io.synced_seq);
                // An overlapping write found nothing or this segment in
                // `dirty` (the sync stage may have taken it meanwhile):
                // either way the pages it wrote are in this segment.
                if io.dirty.is_some() {
                    st.dirty = io.dirty;
                }
                st.written_lsn = st.written_lsn.max(target);
                if let Some(t) = t {
                    st.group.record_flush(t.elapsed());
                    self.made_durable(&mut st, target);
                }
                Ok(())
            }
        };
        self.stage_ended(&st);
        (st, result)
    }

    /// Sends the pending records as one more durable write in flight
    /// (a per-write sync method: each write is its own sync), beside the
    /// ones other threads have in flight, at distinct pages: the write ends
    /// on a page boundary (a padding record fills the rest), so the next
    /// one never shares a page with it. Records become durable in LSN
    /// order: only when every write before theirs has returned too.
    fn fly<'a>(&'a self, mut st: MutexGuard<'a, State>) -> (MutexGuard<'a, State>, Result<()>) {
        self.pad_flush(&mut st);
        let chunks = hand_over(&mut st);
        let target = st.next_lsn - 1;
        st.handed_lsn = target;
        st.flushes += 1;
        if !st.inflight.is_empty() {
            st.stats.group.overlapped_writes += 1;
        }
        let seq = st.cur.seq;
        st.inflight.push_back(InFlight {
            seq,
            target,
            synced_seq: 0,
            done: false,
        });
        let mut io = FlushIo::new(None, std::mem::take(&mut st.staging), st.fsync);
        drop(st);
        let t = Instant::now();
        let failed = io.write(&chunks, true).err().map(|b| *b);
        let took = t.elapsed();
        let mut st = self.lock();
        if io.staging.capacity() > st.staging.capacity() {
            st.staging = std::mem::take(&mut io.staging);
        }
        st.stats.writes += io.writes;
        st.stats.syncs += io.syncs;
        let result = match failed {
            Some((e, p)) => {
                self.poison(&mut st, p);
                Err(e)
            }
            None => {
                st.group.record_flush(took);
                if let Some(f) = st.inflight.iter_mut().find(|f| f.target == target) {
                    f.done = true;
                    f.synced_seq = io.synced_seq;
                }
                // Acknowledge in LSN order: the oldest writes that returned.
                while st.inflight.front().is_some_and(|f| f.done) {
                    if let Some(f) = st.inflight.pop_front() {
                        st.header_synced_seq = st.header_synced_seq.max(f.synced_seq);
                        st.written_lsn = st.written_lsn.max(f.target);
                        self.made_durable(&mut st, f.target);
                    }
                }
                Ok(())
            }
        };
        self.stage_ended(&st);
        (st, result)
    }

    /// The sync stage: makes every written page durable, with the log's
    /// sync call, while the next group is written.
    fn sync_stage<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        st.syncing = true;
        let upto = st.written_lsn;
        let dirty = st.dirty.take();
        st.sync_seq = dirty.as_ref().map_or(st.cur.seq, |d| d.0);
        let mut io = FlushIo::new(dirty, Vec::new(), st.fsync);
        drop(st);
        let t = Instant::now();
        let failed = io.write(&[], true).err().map(|b| *b);
        let took = t.elapsed();
        let mut st = self.lock();
        st.syncing = false;
        st.stats.syncs += io.syncs;
        let result = match failed {
            Some((e, p)) => {
                self.poison(&mut st, p);
                Err(e)
            }
            None => {
                st.header_synced_seq = st.header_synced_seq.max(io.synced_seq);
                if io.syncs > 0 {
                    st.group.record_flush(took);
                }
                self.made_durable(&mut st, upto);
                Ok(())
            }
        };
        self.stage_ended(&st);
        (st, result)
    }

    /// A failed `fdatasync` is never retried: the kernel may have dropped
    /// the dirty pages and a second call could succeed without them
    /// (PostgreSQL's "fsyncgate"). A failed write leaves unknown bytes in
    /// the page cache. Either way the log stops; reopening recovers what is
    /// on disk.
    fn poison(&self, st: &mut State, p: super::flush::Poison) {
        if st.poison.is_none() {
            st.poison = Some(p);
        }
    }

    /// Records that every record up to `upto` is durable: one more group.
    /// Not once the log is poisoned: a write or sync that failed beside
    /// this one may have been needed for these records.
    fn made_durable(&self, st: &mut State, upto: u64) {
        if upto <= st.durable_lsn || st.poison.is_some() {
            return;
        }
        let n = upto - st.durable_lsn;
        st.durable_lsn = upto;
        self.durable.store(upto, Ordering::Release);
        st.stats.group.groups += 1;
        st.stats.group.group_records += n;
        st.stats.group.group_sizes[size_bucket(n)] += 1;
        st.stats.group.largest_group = st.stats.group.largest_group.max(n);
    }

    /// Tells followers a stage ended: spinning ones by `progress`, blocked
    /// ones by `cv` (a futex wake is a syscall, so only when some wait).
    fn stage_ended(&self, st: &State) {
        self.progress.fetch_add(1, Ordering::Release);
        if st.cv_waiters > 0 {
            self.cv.notify_all();
        }
    }

    /// Other threads are inside `commit` now.
    fn has_company(&self) -> bool {
        self.committers.load(Ordering::Relaxed) > 1
    }

    /// Ends what the flush will write on a page boundary: a padding record
    /// fills the rest of the current page, so the next flush starts on a
    /// fresh page and no page is written twice (docs/wal-format.md,
    /// "Padding"). Records are 16-byte aligned and pages are 4 KiB, so the
    /// gap is 0 or at least a record header.
    fn pad_flush(&self, st: &mut State) {
        let rem = (st.cur.end % WRITE_PAGE as u64) as usize;
        if rem == 0 || st.cur.end == st.cur.handed {
            return;
        }
        let span = WRITE_PAGE - rem;
        let key = super::format::RecordKey {
            log_id: self.log_id,
            seq: st.cur.seq,
            nonce: st.cur.nonce,
        };
        super::format::encode_padding(&mut st.buf, &key, st.next_lsn, span);
        st.cur.end += span as u64;
        st.stats.padding_bytes += span as u64;
    }
}

/// Whether the pending records can go out as one more durable write in
/// flight ([`Shared::fly`]): the sync method syncs each write and writes
/// with `O_DIRECT` (each write then returns its own error; buffered, the
/// kernel reports a page's writeback error once per open file, possibly to
/// another write in flight than the one whose pages failed), nothing is
/// written but not synced, no earlier segment's pages wait, every write in
/// flight is of the current segment, and fewer than
/// [`WalOptions::writes_in_flight`](crate::wal::WalOptions::writes_in_flight)
/// are.
pub(super) fn can_fly(st: &State) -> bool {
    st.writes_in_flight > 1
        && st.dsync
        && st.direct
        && st.dirty.is_none()
        && st.sealed.is_empty()
        && st.written_lsn == st.durable_lsn
        && st.inflight.len() < st.writes_in_flight
        && st.inflight.back().is_none_or(|f| f.seq == st.cur.seq)
}
