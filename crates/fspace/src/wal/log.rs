//! [`Wal`]: the log's handle, whose calls the writer engine serves.

use super::reader::WalReader;
use super::recovery::RecoveryReport;
use super::types::{max_record, Lsn, ReleaseReport, SegmentInfo, WalStats};
use super::view::WalFollower;
use super::writer::{poisoned, prepare_error, Shared};
use crate::error::{Error, Result};
use crate::sys::Errno;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A segmented durable log. All methods take `&self`; share it between
/// threads with `Arc` or scoped threads. See the [module docs](crate::wal).
pub struct Wal {
    pub(super) shared: Arc<Shared>,
    pub(super) preparer: Option<JoinHandle<()>>,
    pub(super) recovery: RecoveryReport,
}

impl Wal {
    /// Returns what opening found and did.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// Returns the log's directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Appends a record to the in-memory tail and returns its LSN. It is
    /// not durable until a [`sync`](Self::sync) or [`commit`](Self::commit)
    /// covering it returns. Records larger than a segment's room
    /// ([`max_record`](Self::max_record)) are refused with `EMSGSIZE`.
    pub fn append(&self, data: &[u8]) -> Result<Lsn> {
        self.shared.append(data)
    }

    /// Appends a record and returns once it (and everything before it) is
    /// durable. Concurrent commits share one `fdatasync`.
    pub fn commit(&self, data: &[u8]) -> Result<Lsn> {
        let sh = &self.shared;
        sh.committers.fetch_add(1, Ordering::SeqCst);
        // Counted out also if a panic unwinds through here: a count left
        // high would make a lone committer wait for company.
        let _out = Committing(&sh.committers);
        sh.append(data)
            .and_then(|lsn| sh.sync_to(lsn.0).map(|()| lsn))
    }

    /// Makes everything appended so far durable; returns the last LSN
    /// covered (0 if the log is empty).
    pub fn sync(&self) -> Result<Lsn> {
        let target = self.shared.lock().next_lsn - 1;
        self.shared.sync_to(target)?;
        Ok(Lsn(target))
    }

    /// Makes every record up to `lsn` durable (everything appended, if
    /// `lsn` is beyond it).
    pub fn sync_to(&self, lsn: Lsn) -> Result<()> {
        self.shared.sync_to(lsn.0)
    }

    /// Returns the LSN up to which records are durable.
    pub fn durable_lsn(&self) -> Lsn {
        Lsn(self.shared.lock().durable_lsn)
    }

    /// Returns the LSN the next appended record will get.
    pub fn next_lsn(&self) -> Lsn {
        Lsn(self.shared.lock().next_lsn)
    }

    /// Returns the largest payload a record can have: a segment minus its
    /// header and one record header.
    pub fn max_record(&self) -> usize {
        max_record(self.shared.opts.segment_size)
    }

    /// Returns a reader of the durable records from `from` on (verified as
    /// they are read). Records appended later are not included.
    pub fn read_from(&self, from: Lsn) -> Result<WalReader> {
        let st = self.shared.lock();
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        let segments: Vec<SegmentInfo> = st.live.iter().cloned().collect();
        let end = st.durable_lsn;
        drop(st);
        WalReader::new(
            self.shared.io.clone(),
            self.shared.log_id,
            segments,
            from.0,
            end,
        )
    }

    /// Returns a follower of the durable records from `from` on: each
    /// returned once its commit is durable, waiting for new ones (see
    /// [`WalFollower::next_timeout`]). `Lsn(0)` starts at the oldest
    /// record kept.
    pub fn follow(&self, from: Lsn) -> Result<WalFollower> {
        let st = self.shared.lock();
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        let first = st.live.front().map_or(st.next_lsn, |s| s.first_lsn.0);
        drop(st);
        if from.0 != 0 && from.0 < first {
            return Err(Error::refused_errno(
                "follow",
                &self.shared.dir,
                Errno::RANGE,
                format!("LSN {from} was released; the log starts at LSN {first}"),
            ));
        }
        Ok(WalFollower {
            shared: Arc::downgrade(&self.shared),
            io: self.shared.io.clone(),
            log_id: self.shared.log_id,
            dir: self.shared.dir.clone(),
            next: from.0.max(first),
            reader: None,
        })
    }

    /// Returns the live segments, oldest first.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.shared.lock().live.iter().cloned().collect()
    }

    /// Returns the counters of what the log has done.
    pub fn stats(&self) -> WalStats {
        let st = self.shared.lock();
        let mut s = st.stats.clone();
        s.group.flush_time_ns = st.group.flush_ns;
        s
    }

    /// Waits until the preparer has [`WalOptions::prepare_ahead`](crate::wal::WalOptions::prepare_ahead) segments
    /// ready, or fails with its error.
    pub fn wait_prepared(&self) -> Result<()> {
        let sh = &self.shared;
        let mut st = sh.lock();
        let epoch = st.prep_failures;
        st.prep_blocked = false;
        sh.prep_cv.notify_all();
        loop {
            if st.ready.len() >= sh.opts.prepare_ahead {
                return Ok(());
            }
            if st.prep_failures > epoch {
                return Err(prepare_error(&st));
            }
            st = sh.wait(st);
        }
    }

    /// Releases every whole segment whose records all come before `lsn`
    /// (never the segment being written): up to
    /// [`WalOptions::recycle_pool`](crate::wal::WalOptions::recycle_pool) go to the recycle pool, the rest are
    /// deleted. Oldest first, each followed by a directory `fsync`, so a
    /// crash leaves a prefix released. Readers must not read what they
    /// release.
    pub fn release_before(&self, lsn: Lsn) -> Result<ReleaseReport> {
        self.shared.release_before(lsn.0)
    }

    /// Makes everything appended durable and stops the preparer. Returns
    /// the sync's error, if any (the log is closed either way).
    pub fn close(mut self) -> Result<()> {
        let r = self.sync().map(|_| ());
        self.stop_preparer();
        r
    }

    fn stop_preparer(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        {
            let mut st = self.shared.lock();
            st.closed = true;
        }
        self.shared.prep_cv.notify_all();
        self.shared.cv.notify_all();
        if let Some(h) = self.preparer.take() {
            let _ = h.join();
        }
    }
}

/// Takes a committer off the count (`Shared::committers`) when dropped.
struct Committing<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Committing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for Wal {
    /// Stops the preparer, without syncing: as after a crash, records only
    /// appended may or may not survive (the write buffer may already have
    /// written some of them out); only what a sync covered is durable. Use
    /// [`close`](Wal::close) to sync first.
    fn drop(&mut self) {
        self.stop_preparer();
    }
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("dir", &self.shared.dir)
            .finish()
    }
}
