//! Looking into a log without changing it ([`WalView`]), and following
//! a log's new durable records as they are committed ([`WalFollower`]).

use super::damage::WalDamage;
use super::reader::{Record, WalReader};
use super::recovery::{self, OnDamage, RecoveryReport};
use super::storage::{self, Storage};
use super::types::{Lsn, SegmentInfo};
use super::writer::{poisoned, Shared};
use crate::error::{Error, Result};
use crate::sys::Errno;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A read-only look at the log in a directory, for tools (`fspace wal
/// stat`, `verify`, `dump`) and for processes that only read.
///
/// Opening one never writes: no file is created, removed or renamed, no
/// segment is added, the `LOCK` is not taken, so it works on a read-only
/// mount and beside a live writer in another process. It verifies every
/// live segment as [`Wal::open`](crate::wal::Wal::open) does (each record's
/// CRC, the LSN sequence, the segment chain) and stops the last segment at
/// its first invalid record. Beside a live writer that is the end of what
/// is readable *now*, which may include records whose commit has not
/// returned yet (written, not yet synced); in-process, [`Wal::follow`](crate::wal::Wal::follow)
/// returns only durable records.
///
/// ```no_run
/// use fspace::wal::WalView;
/// # fn main() -> fspace::Result<()> {
/// let view = WalView::open("db/wal")?;
/// println!("LSN {} to {}", view.first_lsn(), view.next_lsn());
/// for rec in view.read_from(view.first_lsn())? {
///     let rec = rec?;
///     println!("{} in segment {} at {}: {} bytes", rec.lsn, rec.segment, rec.offset, rec.data.len());
/// }
/// # Ok(()) }
/// ```
pub struct WalView {
    dir: PathBuf,
    io: Arc<dyn Storage>,
    log_id: [u8; 16],
    live: Vec<SegmentInfo>,
    prepared: Vec<PathBuf>,
    pool: Vec<PathBuf>,
    next_lsn: u64,
    report: RecoveryReport,
}

impl std::fmt::Debug for WalView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalView")
            .field("dir", &self.dir)
            .field("segments", &self.live.len())
            .field("next_lsn", &self.next_lsn)
            .finish()
    }
}

impl WalView {
    /// Opens the log in `dir` read-only. Fails with `ENOENT` when `dir`
    /// does not exist or holds no log, and with [`Error::Corrupt`] (naming
    /// the segment and the offset) where the log is damaged.
    pub fn open(dir: impl AsRef<Path>) -> Result<WalView> {
        Self::open_on(dir.as_ref(), Arc::new(storage::Real))
    }

    /// Opens the log in `dir` read-only as [`open`](Self::open) does,
    /// except that damage before the log's end does not refuse the open:
    /// reading stops at the first invalid record of a segment that is not
    /// the last (or before a segment that does not follow the others), the
    /// view holds the records before it, and [`damage`](Self::damage) says
    /// where and what, as values. This is for tools that show what can
    /// still be read of a damaged log, as `pg_waldump` prints every record
    /// up to the first invalid one; [`Wal::open`](crate::wal::Wal::open)
    /// and [`open`](Self::open) still refuse such a log.
    ///
    /// [`segments`](Self::segments) then ends with the damaged segment
    /// (or the one before a segment that does not follow), and
    /// [`next_lsn`](Self::next_lsn) is the LSN expected at the damage
    /// where that is known ([`WalDamage::expected_lsn`]; not for a bad
    /// header of the first segment, where no segment is read).
    /// Other failures still refuse: I/O errors, a directory that holds no
    /// log, a segment of another format version, released segments without
    /// a live one.
    ///
    /// ```no_run
    /// use fspace::wal::WalView;
    /// # fn main() -> fspace::Result<()> {
    /// let view = WalView::open_to_damage("db/wal")?;
    /// for rec in view.read_from(view.first_lsn())? {
    ///     println!("{}", rec?.lsn);
    /// }
    /// if let Some(d) = view.damage() {
    ///     eprintln!("{}: offset {}: {} (LSN {:?} expected)", d.segment.display(), d.offset, d.reason, d.expected_lsn);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn open_to_damage(dir: impl AsRef<Path>) -> Result<WalView> {
        Self::open_with(dir.as_ref(), Arc::new(storage::Real), OnDamage::Stop)
    }

    pub(crate) fn open_on(dir: &Path, io: Arc<dyn Storage>) -> Result<WalView> {
        Self::open_with(dir, io, OnDamage::Fail)
    }

    fn open_with(dir: &Path, io: Arc<dyn Storage>, on: OnDamage) -> Result<WalView> {
        match io.dir_kind(dir) {
            Ok(None) => {}
            Ok(Some(kind)) => {
                return Err(Error::refused_errno(
                    "open log",
                    dir,
                    Errno::NOTDIR,
                    format!("is a {kind}, not a directory"),
                ))
            }
            Err(e) => return Err(Error::io("stat", dir, None, e)),
        }
        let rec = recover_settled(&*io, dir, on)?;
        // Damage at the first segment leaves no segment to read, but the
        // directory does hold a log.
        let Some(log_id) = rec
            .log_id
            .filter(|_| !rec.live.is_empty() || rec.damage.is_some())
        else {
            return Err(Error::refused_errno(
                "open log",
                dir,
                Errno::NOENT,
                "holds no log (no segment with a valid header)",
            ));
        };
        let mut report = rec.report;
        report.next_lsn = Lsn(rec.next_lsn);
        Ok(WalView {
            dir: dir.to_path_buf(),
            io,
            log_id,
            live: rec.live,
            prepared: rec.prepared.into_iter().map(|(_, p)| p).collect(),
            pool: rec.pool,
            next_lsn: rec.next_lsn,
            report,
        })
    }

    /// Returns the log's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the log's id (random, chosen when the log was created).
    pub fn log_id(&self) -> [u8; 16] {
        self.log_id
    }

    /// Returns what the look found: records verified, where the last
    /// segment ends and why, and what a writable open would clean up
    /// ([`RecoveryReport::read_only`] is set).
    pub fn recovery(&self) -> &RecoveryReport {
        &self.report
    }

    /// Returns the damage before the log's end where reading stopped
    /// (only a view made by [`open_to_damage`](Self::open_to_damage) can
    /// have one; the same as [`RecoveryReport::damage`]).
    pub fn damage(&self) -> Option<&WalDamage> {
        self.report.damage.as_ref()
    }

    /// Returns the live segments, oldest first.
    pub fn segments(&self) -> &[SegmentInfo] {
        &self.live
    }

    /// Returns the segments prepared for later use (no records yet).
    pub fn prepared(&self) -> &[PathBuf] {
        &self.prepared
    }

    /// Returns the released segments kept for recycling.
    pub fn pool(&self) -> &[PathBuf] {
        &self.pool
    }

    /// Returns the LSN of the oldest record kept.
    pub fn first_lsn(&self) -> Lsn {
        Lsn(self.live.first().map_or(self.next_lsn, |s| s.first_lsn.0))
    }

    /// Returns the LSN after the last readable record.
    pub fn next_lsn(&self) -> Lsn {
        Lsn(self.next_lsn)
    }

    /// Returns a reader of the records from `from` to the end found when
    /// the view was opened, verified again as they are read.
    pub fn read_from(&self, from: Lsn) -> Result<WalReader> {
        WalReader::new(
            self.io.clone(),
            self.log_id,
            self.live.clone(),
            from.0,
            self.next_lsn - 1,
        )
    }
}

/// How long [`recover_settled`] keeps trying while a live writer changes
/// the directory under it.
const SETTLE_FOR: Duration = Duration::from_secs(2);

/// What makes two failures of recovery the same one: the operation, the
/// file, the errno and, for damage, where it is and what (errors are
/// compared field by field, never by their formatted text).
#[derive(Debug, PartialEq, Eq)]
struct FailureKey {
    op: &'static str,
    path: std::path::PathBuf,
    errno: Option<i32>,
    /// Damage: where, and what is wrong there.
    damage: Option<(u64, String)>,
}

impl FailureKey {
    fn of(e: &crate::error::Error) -> FailureKey {
        FailureKey {
            op: e.op(),
            path: e.path().to_path_buf(),
            errno: e.raw_os_error(),
            damage: match e {
                crate::error::Error::Corrupt {
                    offset, message, ..
                } => Some((*offset, message.clone())),
                _ => None,
            },
        }
    }
}

/// Recovery of a directory a live writer may be changing: segments are
/// read one after the other, so a release, a recycle or a segment going
/// live between two reads can look like damage or a missing file. Such an
/// error (or, with [`OnDamage::Stop`], such damage) is retried, the pause
/// doubling from 1 ms to 20 ms, for up to [`SETTLE_FOR`]; one that comes
/// back the same twice in a row is the log's state and is returned at
/// once. (Five tries 20 ms apart were not enough beside a writer that
/// switches segments every few milliseconds on tmpfs: each try met a
/// different segment going away.)
fn recover_settled(io: &dyn Storage, dir: &Path, on: OnDamage) -> Result<recovery::Recovered> {
    let deadline = std::time::Instant::now() + SETTLE_FOR;
    let mut last: Option<FailureKey> = None;
    let mut pause = Duration::from_millis(1);
    loop {
        let r = recovery::recover_with(io, dir, recovery::Access::ReadOnly, on);
        let now = match &r {
            Ok(rec) => match &rec.damage {
                None => return r,
                // The error a strict look would have returned: the same
                // key for the same damage.
                Some(d) => FailureKey::of(&d.to_error("recover")),
            },
            Err(e) => FailureKey::of(e),
        };
        if last.as_ref() == Some(&now) || std::time::Instant::now() >= deadline {
            return r;
        }
        last = Some(now);
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Follows a [`Wal`](crate::wal::Wal)'s durable records as they are committed
/// (for replication or change capture): [`next_timeout`](Self::next_timeout)
/// returns the next record once it is durable, waiting for it if needed.
/// Made by [`Wal::follow`](crate::wal::Wal::follow); it keeps the log's state
/// alive, not its segments: release only what every follower has read.
pub struct WalFollower {
    /// The log's state; weak, so that a follower left alive keeps neither
    /// the log's lock nor its descriptors once the `Wal` is gone.
    pub(super) shared: std::sync::Weak<Shared>,
    pub(super) io: Arc<dyn Storage>,
    pub(super) log_id: [u8; 16],
    pub(super) dir: PathBuf,
    pub(super) next: u64,
    /// Kept across waits: it resumes where it stopped.
    pub(super) reader: Option<WalReader>,
}

impl std::fmt::Debug for WalFollower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalFollower")
            .field("next", &self.next)
            .finish()
    }
}

impl WalFollower {
    /// Returns the LSN of the next record this follower returns.
    pub fn next_lsn(&self) -> Lsn {
        Lsn(self.next)
    }

    /// Returns the next durable record, waiting at most `timeout` for one
    /// to be committed; `Ok(None)` when none was in time. Fails when the
    /// log is closed or poisoned, when the next record was released
    /// (`ERANGE`), or on damage ([`Error::Corrupt`]).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Record>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(r) = self.reader.as_mut() {
                match r.next() {
                    Some(Ok(rec)) => {
                        self.next = rec.lsn.0 + 1;
                        return Ok(Some(rec));
                    }
                    Some(Err(e)) => {
                        self.reader = None;
                        return Err(e);
                    }
                    None => {}
                }
            }
            let Some((segments, end)) = self.wait_durable(deadline)? else {
                return Ok(None);
            };
            match self.reader.as_mut() {
                Some(r) => r.extend(&segments, end),
                None => {
                    self.reader = Some(WalReader::new(
                        self.io.clone(),
                        self.log_id,
                        segments,
                        self.next,
                        end,
                    )?);
                }
            }
        }
    }

    /// Waits until the record `next` is durable (or `deadline`); returns
    /// the live segments and the durable end then.
    fn wait_durable(&self, deadline: Instant) -> Result<Option<(Vec<SegmentInfo>, u64)>> {
        let Some(sh) = self.shared.upgrade() else {
            return Err(Error::refused_errno(
                "follow",
                &self.dir,
                Errno::BADF,
                "log is closed",
            ));
        };
        let mut st = sh.lock();
        loop {
            if let Some(p) = &st.poison {
                return Err(poisoned(p));
            }
            if st.durable_lsn >= self.next {
                return Ok(Some((st.live.iter().cloned().collect(), st.durable_lsn)));
            }
            if st.closed {
                return Err(Error::refused_errno(
                    "follow",
                    &sh.dir,
                    Errno::BADF,
                    "log is closed",
                ));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            st = sh.wait_timeout(st, left);
        }
    }
}
