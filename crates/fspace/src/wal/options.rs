//! How a log is laid out and prepared: [`WalOptions`], its defaults (each a
//! named constant with its evidence) and their checks.

use crate::error::{Error, Result};
use crate::policy::StrategyChoice;
use crate::strategy::SyncMethod;
use crate::sys::Errno;
use std::path::Path;

/// Default segment size: 16 MiB, PostgreSQL's WAL segment size. Evidence
/// (the project brief's measurement, docs/design.md "Measured when the
/// project started"; no run folder records it): preparing 16 MiB takes a
/// small fraction of the time an 8 KiB-record workload needs to fill it on
/// every matrix filesystem, sshfs included, so the preparer stays
/// ahead by a wide margin, while a switch
/// (one header page, one `fdatasync`) happens once per 16 MiB. Larger
/// segments waste more on reopen (each open starts a new segment) and
/// release space in coarser steps.
pub const DEFAULT_SEGMENT_SIZE: u64 = 16 << 20;

/// Segments the preparer keeps ready ahead of the writer: 2, so that a
/// burst that fills one segment while the next is being prepared still
/// finds one ready.
pub const DEFAULT_PREPARE_AHEAD: usize = 2;

/// Released segments kept for recycling; beyond this they are deleted.
/// 4 covers a checkpoint that releases several segments at once while the
/// writer consumes them two at a time (prepare-ahead).
pub const DEFAULT_RECYCLE_POOL: usize = 4;

/// Fraction of the time the preparer may spend growing a new segment when
/// no commit is waiting for it: 0.5 (it pauses as long as each step took).
/// Its zero-fill competes with commits for the device; when a commit does
/// wait, it runs unthrottled.
pub const DEFAULT_PREPARE_DUTY_CYCLE: f64 = 0.5;

/// Bytes the preparer grows a new segment by per step, each step synced:
/// 4 MiB spreads the device writes of a 16 MiB fill over four bursts.
pub const PREPARE_STEP: u64 = 4 << 20;

/// Appended bytes held in memory before they are written out without a
/// sync (backpressure for `append` without `commit`): 4 MiB.
pub const DEFAULT_WRITE_BUFFER: usize = 4 << 20;

/// Records are written in whole pages of this size from offsets that are
/// multiples of it: 4 KiB, the page size and the block size of every
/// filesystem in the matrix.
pub const WRITE_PAGE: usize = 4096;

/// Shortest measured flush (the running average of a durable flush's I/O
/// in this log) for which a writer waits for more committers to join its
/// group: 100 µs. Below it a wait costs about what it saves: blocking and
/// waking a thread costs tens of µs on a busy 2-core machine, and a short
/// flush is itself the gather window (the next group forms while it runs).
/// Evidence: bench/runs/2026-12-02-group-commit/ (tmpfs and the fast
/// mounts flush in under 100 µs and scale without waiting; loop ext4
/// flushes in 150-300 µs, where 16 writers gain from the wait).
pub const GATHER_MIN_FLUSH: std::time::Duration = std::time::Duration::from_micros(100);

/// Longest a writer waits for its group to gather, as a fraction of the
/// log's measured flush time: 0.5, PostgreSQL's advice for `commit_delay`
/// (half the single-flush time `pg_test_fsync` reports). The wait ends
/// sooner when as many records are pending as threads were committing.
pub const GATHER_FRACTION: f64 = 0.5;

/// Longest measured flush for which a follower (a commit whose record
/// another thread is flushing) spins before it blocks: 50 µs. A short
/// flush ends before a sleeping thread would even be woken, so spinning
/// (a few CPU pauses, then yielding) saves a futex wait and wake per
/// commit; behind a longer flush spinning only burns the CPU the flusher
/// and the appenders need. Evidence: bench/runs/2026-12-02-group-commit/.
pub const SPIN_MAX_FLUSH: std::time::Duration = std::time::Duration::from_micros(50);

/// Durable writes a log with a per-write sync method (`dsync`,
/// `direct-dsync`: the default on ext4 and xfs) keeps in flight at once
/// when several threads commit ([`WalOptions::writes_in_flight`]): 1. With
/// more, each group write ends on a page boundary (a padding record), so
/// writes in flight never share a page, and records are acknowledged in
/// LSN order. Raw durable writes gain from it (8 KiB `O_DIRECT` +
/// `RWF_DSYNC` writes at distinct offsets: 2 in flight 1.6-1.85x the
/// writes/s of one on loop ext4 and xfs, bench/runs/2026-12-02-dsync-inflight/),
/// but through the log they replace grouping rather than add to it: groups
/// shrink (8 writers on loop ext4: 4.3 records per write with one in flight,
/// 2.8 with two, 1.7 with four) and 16 writers lost 6-14%
/// (bench/runs/2026-12-02-group-commit/, notes.md). Not adopted by default.
pub const DEFAULT_WRITES_IN_FLIGHT: usize = 1;

/// Largest [`WalOptions::writes_in_flight`] accepted: 64.
pub const MAX_WRITES_IN_FLIGHT: usize = 64;

/// Whether the log writes with `O_DIRECT` on local filesystems when neither
/// the caller nor the sync method asks for it: no. (`direct-dsync`, the
/// auto sync method on ext4 and xfs, writes with `O_DIRECT` by itself; this
/// constant decides for the other methods.) The writer sends whole, page-aligned pages, so
/// `O_DIRECT` is possible, and a bare loop of overwrites + fdatasync ran
/// faster with it (by hand, in no run folder); but through the log it did
/// not pay (bench/runs/2026-11-22-commit/, notes.md: `fspace bench commit
/// --mode wal --direct-io on|off`, alternating): 8 KiB records level within
/// noise on xfs and ext4, 1 MiB records slower with O_DIRECT on both (each
/// write waits for the device), 16 writers on ext4 no faster.
/// [`WalOptions::direct_io`] turns it on.
pub const DIRECT_IO_ON_LOCAL_FS: bool = false;

/// Smallest [`WalOptions::prepare_duty_cycle`] accepted: 0.01 (the
/// preparer then pauses 99 times as long as it works).
pub const MIN_DUTY_CYCLE: f64 = 0.01;

/// Largest [`WalOptions::write_buffer`] accepted: 1 GiB.
pub const MAX_WRITE_BUFFER: usize = 1 << 30;

/// Name of the lock file that keeps two processes from opening one log.
pub const LOCK_NAME: &str = "LOCK";

/// How a [`Wal`](crate::wal::Wal) is laid out, prepared and synced. Every field
/// is public; build it as the other options structs of the library:
///
/// ```
/// use fspace::wal::WalOptions;
/// use fspace::SyncMethod;
/// let opts = WalOptions::default()
///     .segment_size(64 << 20)
///     .sync_method(Some(SyncMethod::Dsync));
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct WalOptions {
    /// Size of new segments in bytes: a multiple of 4 KiB, at least 64 KiB.
    /// Existing segments keep their size. Default [`DEFAULT_SEGMENT_SIZE`].
    pub segment_size: u64,
    /// Segments kept ready ahead of the writer. Default
    /// [`DEFAULT_PREPARE_AHEAD`].
    pub prepare_ahead: usize,
    /// Released segments kept for reuse. Default [`DEFAULT_RECYCLE_POOL`].
    pub recycle_pool: usize,
    /// How new segments are grown: the policy for intent `log`
    /// (`crate::policy`) or a named strategy. Default
    /// [`StrategyChoice::built_in`]; [`StrategyChoice::auto`] follows a
    /// measurement saved by `fspace probe --save` for this filesystem.
    pub prepare: StrategyChoice,
    /// Share of time the preparer may work while no commit waits for it
    /// (0 < x <= 1; 1 means unthrottled). Default
    /// [`DEFAULT_PREPARE_DUTY_CYCLE`].
    pub prepare_duty_cycle: f64,
    /// Appended bytes buffered before being written out. Default
    /// [`DEFAULT_WRITE_BUFFER`].
    pub write_buffer: usize,
    /// Write records with `O_DIRECT`: `None` follows the sync method (on
    /// with `direct-dsync`, the auto choice on ext4 and xfs) and otherwise
    /// [`DIRECT_IO_ON_LOCAL_FS`]; where the filesystem refuses it, writes
    /// stay buffered and [`WalStats::io`](crate::wal::WalStats::io) says so
    /// (`direct_io` false, the refusal in its `fallbacks`).
    pub direct_io: Option<bool>,
    /// How a commit is made durable ([`SyncMethod`]). `None` is `auto`:
    /// when `prepare` follows saved measurements
    /// ([`StrategyChoice::auto`](crate::StrategyChoice::auto)) and a saved
    /// `fspace probe --save` measured the methods on this filesystem, the
    /// one it chose; else the policy's choice for the filesystem
    /// (`crate::policy::rules::LOG_DIRECT_DSYNC_ON`: `direct-dsync` on ext4
    /// and xfs, `fdatasync` elsewhere). A log of large records (hundreds of
    /// KiB) is faster with `fdatasync`. `direct-dsync` needs `O_DIRECT`
    /// (so `direct_io` must not be `Some(false)`); where the filesystem
    /// refuses it, records go out with `dsync` and
    /// [`WalStats::io`](crate::wal::WalStats::io) says why (its
    /// `sync_chosen_by`, and the refusal in its `fallbacks`).
    pub sync_method: Option<SyncMethod>,
    /// End every flush on a page boundary with a padding record, so that
    /// the next commit starts on a fresh page and no page is written
    /// twice (docs/wal-format.md, "Padding"). Costs space: each commit
    /// takes whole pages. `None` follows the policy
    /// (`crate::policy::rules::LOG_PAD_FLUSHES_ON`: on where a rewritten
    /// page costs, copy-on-write filesystems); [`WalStats::io`](crate::wal::WalStats::io)
    /// says which applies and why.
    pub pad_flushes: Option<bool>,
    /// Make new segments no-copy-on-write (`chattr +C`, set while they are
    /// empty) and zero-fill them, so that records overwrite in place.
    /// `None` follows the policy (`crate::policy::rules::LOG_NOCOW_ON`:
    /// on btrfs). Where the filesystem refuses the attribute, segments
    /// stay as they are and [`WalStats::last_prepare`](crate::wal::WalStats::last_prepare)
    /// says so. Only a prepared segment's *growth* follows it when
    /// [`prepare`](Self::prepare) is the policy; a named strategy is kept.
    pub nocow: Option<bool>,
    /// Durable writes kept in flight at once where the sync method syncs
    /// each write with `O_DIRECT` (`direct-dsync`) and several threads
    /// commit (buffered, the kernel reports a writeback error once per open
    /// file, perhaps to another write in flight than the failed one):
    /// 1 to [`MAX_WRITES_IN_FLIGHT`], default [`DEFAULT_WRITES_IN_FLIGHT`].
    /// Above 1, group writes go out beside each other at distinct pages
    /// (each ends on a page boundary) and records are acknowledged in LSN
    /// order; other sync methods ignore it (they write the next group
    /// while the current one syncs).
    pub writes_in_flight: usize,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            segment_size: DEFAULT_SEGMENT_SIZE,
            prepare_ahead: DEFAULT_PREPARE_AHEAD,
            recycle_pool: DEFAULT_RECYCLE_POOL,
            prepare: StrategyChoice::built_in(),
            prepare_duty_cycle: DEFAULT_PREPARE_DUTY_CYCLE,
            write_buffer: DEFAULT_WRITE_BUFFER,
            direct_io: None,
            sync_method: None,
            pad_flushes: None,
            nocow: None,
            writes_in_flight: DEFAULT_WRITES_IN_FLIGHT,
        }
    }
}

impl std::fmt::Debug for WalOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalOptions")
            .field("segment_size", &self.segment_size)
            .field("prepare_ahead", &self.prepare_ahead)
            .field("recycle_pool", &self.recycle_pool)
            .field("prepare", &self.prepare)
            .field("prepare_duty_cycle", &self.prepare_duty_cycle)
            .field("write_buffer", &self.write_buffer)
            .field("direct_io", &self.direct_io)
            .field("sync_method", &self.sync_method)
            .field("pad_flushes", &self.pad_flushes)
            .field("nocow", &self.nocow)
            .field("writes_in_flight", &self.writes_in_flight)
            .finish()
    }
}

impl WalOptions {
    /// Checks the options; the error names the one that is wrong and says why
    /// ([`Wal::open`](crate::wal::Wal::open) refuses them with `EINVAL`).
    pub fn validate(&self) -> std::result::Result<(), crate::invalid::InvalidOption> {
        let o = self;
        if o.segment_size < 64 << 10 || !o.segment_size.is_multiple_of(WRITE_PAGE as u64) {
            return Err(crate::invalid::InvalidOption::new(
                "segment_size",
                format!(
                    "segment size {} must be a multiple of 4 KiB and at least 64 KiB",
                    o.segment_size
                ),
            ));
        }
        if !(1..=MAX_WRITES_IN_FLIGHT).contains(&o.writes_in_flight) {
            return Err(crate::invalid::InvalidOption::new(
                "writes_in_flight",
                format!(
                    "writes in flight {} must be in [1, {MAX_WRITES_IN_FLIGHT}]",
                    o.writes_in_flight
                ),
            ));
        }
        if !(o.prepare_duty_cycle >= MIN_DUTY_CYCLE && o.prepare_duty_cycle <= 1.0) {
            return Err(crate::invalid::InvalidOption::new(
                "prepare_duty_cycle",
                format!(
                    "prepare duty cycle {} must be in [{MIN_DUTY_CYCLE}, 1]",
                    o.prepare_duty_cycle
                ),
            ));
        }
        if o.prepare_ahead == 0 {
            return Err(crate::invalid::InvalidOption::new(
                "prepare_ahead",
                "prepare_ahead must be at least 1",
            ));
        }
        if o.write_buffer < 2 * WRITE_PAGE || o.write_buffer > MAX_WRITE_BUFFER {
            return Err(crate::invalid::InvalidOption::new(
                "write_buffer",
                format!(
                    "write buffer {} must be between 8 KiB (two pages) and 1 GiB",
                    o.write_buffer
                ),
            ));
        }
        if o.sync_method == Some(SyncMethod::DirectDsync) && o.direct_io == Some(false) {
            return Err(crate::invalid::InvalidOption::new(
                "direct_io",
                "sync method direct-dsync writes with O_DIRECT, but direct_io is off",
            ));
        }
        Ok(())
    }
}

pub(super) fn check_options(dir: &Path, o: &WalOptions) -> Result<()> {
    o.validate()
        .map_err(|e| Error::refused_errno("open log", dir, Errno::INVAL, e.message))
}

setters!(WalOptions { segment_size: u64, prepare_ahead: usize, recycle_pool: usize, prepare: StrategyChoice, prepare_duty_cycle: f64, write_buffer: usize, direct_io: Option<bool>, sync_method: Option<SyncMethod>, pad_flushes: Option<bool>, nocow: Option<bool>, writes_in_flight: usize });
