//! A segmented durable log: prepared and recycled segments, group commit,
//! crash recovery.
//!
//! Small records committed with `fdatasync` run 2-3x faster when they
//! overwrite blocks that are already **written** than when they append or
//! land in unwritten (fallocated) space (measured in `docs/wal.md`). [`Wal`]
//! keeps every commit in written space without paying for the preparation
//! on the commit path:
//!
//! - The log is a directory of fixed-size segments (`NNNNNNNNNNNN.seg`,
//!   format in `docs/wal-format.md`). A background *preparer* keeps the
//!   next segments ready: a released segment from the recycle pool
//!   (renamed; its blocks are already written, so no I/O), else a new one
//!   grown with the `auto` policy for [`Intent::Log`](crate::Intent::Log)
//!   (zero-fill on ext4 and xfs), or sparse on copy-on-write filesystems,
//!   where filling cannot pay off ([`crate::policy::rules::COW_LOG_STRATEGY`]), created under
//!   a temporary name, synced, renamed, and its directory synced.
//! - Records are written as whole pages from an in-memory tail page: no
//!   read-before-write of a partial page, no `O_DSYNC`.
//! - Many threads commit at once; one `fdatasync` serves the whole group.
//! - Opening recovers: verifies every live segment, stops the last one at
//!   its first invalid record, and never returns a record of a segment's
//!   previous life (the record CRC covers the segment sequence).
//! - A failed `fdatasync` or write poisons the log (docs/design.md rule 6).
//!
//! ```no_run
//! use fspace::wal::{Wal, WalOptions};
//! # fn main() -> fspace::Result<()> {
//! let wal = Wal::open("db/wal", WalOptions::default())?;
//! let lsn = wal.commit(b"first record")?; // durable when it returns
//! for rec in wal.read_from(lsn)? {
//!     let rec = rec?;
//!     println!("{}: {} bytes", rec.lsn, rec.data.len());
//! }
//! wal.release_before(lsn)?; // older segments go to the recycle pool
//! wal.close()?;
//! # Ok(()) }
//! ```

pub mod format;
mod preparer;
mod reader;
mod recovery;
mod scan;
mod storage;

#[cfg(test)]
mod model;
#[cfg(test)]
mod power_cut;

pub use reader::{Record, WalReader};
pub use recovery::{RecoveryReport, TailReport};

use crate::error::{Error, Result};
use crate::policy::StrategyChoice;
use crate::sys::Errno;
use format::{
    encode_record, record_span, RecordKey, SegmentHeader, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN,
};
use serde::Serialize;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use storage::{OpenMode, SegmentFile, Storage};

/// Default segment size: 16 MiB, PostgreSQL's WAL segment size. Evidence
/// (the project brief's measurement, quoted in `docs/wal.md`): preparing
/// 16 MiB costs 7-26 ms on the matrix
/// filesystems (96 ms on sshfs), short enough for the preparer to stay
/// ahead of an 8 KiB-record workload by a wide margin, while a switch
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

/// Longest a flush waits for more concurrent committers to join its group
/// before it writes: 200 µs. Only when more than one thread has been
/// committing (a lone committer never waits). Evidence (2026-11-22, loop
/// ext4, 8 KiB records, 16 writers): without it the writers split into two
/// alternating groups of ~8 (each fdatasync served 8.2 commits) and 16
/// writers reached 5.7x one writer; see docs/wal.md for the figures with it.
pub const GROUP_COMMIT_WAIT: std::time::Duration = std::time::Duration::from_micros(200);

/// Whether the `auto` choice writes records with `O_DIRECT` on local
/// filesystems: no. The writer sends whole, page-aligned pages, so
/// `O_DIRECT` is possible, and a bare loop of 12 KiB overwrites +
/// fdatasync ran 10-20% faster with it; but through the log it did not pay
/// (2026-11-22, loop devices with direct I/O, `fspace bench commit --mode
/// wal --direct-io on|off`, alternating, commits/s on/off): 8 KiB records
/// xfs 3525/3949, 3886/4049, 4168/3980 and ext4 4556/4113, 4107/4274,
/// 4666/4196 (level within noise); 1 MiB records xfs 1147/1582, 1253/1381
/// and ext4 910/1146, 963/1190 MiB/s (O_DIRECT 10-28% slower: each write
/// waits for the device); 16 writers ext4 24196/26053, 28231/29489.
/// [`WalOptions::direct_io`] turns it on.
pub const DIRECT_IO_ON_LOCAL_FS: bool = false;

/// How long the most concurrent committers seen is remembered by the
/// group gathering ([`GROUP_COMMIT_WAIT`]): 50 ms, hundreds of flushes.
const PEAK_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);

/// Smallest [`WalOptions::prepare_duty_cycle`] accepted: 0.01 (the
/// preparer then pauses 99 times as long as it works).
pub const MIN_DUTY_CYCLE: f64 = 0.01;

/// Largest [`WalOptions::write_buffer`] accepted: 1 GiB.
pub const MAX_WRITE_BUFFER: usize = 1 << 30;

/// Name of the lock file that keeps two processes from opening one log.
pub const LOCK_NAME: &str = "LOCK";

/// A log sequence number: records are numbered 1, 2, 3, ... in the order
/// they were appended, across segments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Lsn(pub u64);

impl std::fmt::Display for Lsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// How a [`Wal`] is laid out and prepared.
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
    /// ([`crate::policy`]) or a named strategy. Default
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
    /// Write records with `O_DIRECT`: `None` decides by filesystem
    /// ([`DIRECT_IO_ON_LOCAL_FS`]); where the filesystem refuses it, writes
    /// stay buffered and [`WalStats::direct_io`] says why.
    pub direct_io: Option<bool>,
    /// Fault injection for tests (not part of the supported API).
    #[doc(hidden)]
    pub faults: Option<Arc<Faults>>,
    /// Where the log's I/O goes: the real filesystem unless a test puts
    /// its power-cut model here.
    storage: Option<Arc<dyn Storage>>,
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
            faults: None,
            storage: None,
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
            .finish()
    }
}

/// Fault injection seam: while a field holds a non-zero errno, such calls
/// fail with it instead of being issued.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Faults {
    /// Fails the writer's `fdatasync` calls.
    pub fdatasync: AtomicI32,
    /// Fails segment preparation.
    pub prepare: AtomicI32,
    /// When non-zero, aborts the process right after a segment file was
    /// renamed to this sequence number (new or recycled), before the
    /// directory `fsync`: the window a power cut can undo.
    pub abort_after_rename_to: AtomicU64,
}

impl Faults {
    /// Aborts the process if the test asked for it after renaming a
    /// segment to `seq`.
    pub(crate) fn after_rename(opts: &WalOptions, seq: u64) {
        if opts
            .faults
            .as_ref()
            .is_some_and(|f| f.abort_after_rename_to.load(Ordering::SeqCst) == seq)
        {
            std::process::abort();
        }
    }

    fn take(slot: &AtomicI32) -> Option<Errno> {
        match slot.load(Ordering::SeqCst) {
            0 => None,
            e => Some(Errno::from_raw_os_error(e)),
        }
    }
}

/// A live segment.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentInfo {
    /// Its sequence number.
    pub seq: u64,
    /// The LSN of its first record (of the next record, if it has none).
    pub first_lsn: Lsn,
    /// Its file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// Counters of what a [`Wal`] has done since it was opened.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct WalStats {
    /// Records appended.
    pub records: u64,
    /// Payload bytes appended.
    pub payload_bytes: u64,
    /// `pwritev` calls issued by the writer.
    pub writes: u64,
    /// `fdatasync` calls issued by the writer.
    pub syncs: u64,
    /// Segment switches.
    pub switches: u64,
    /// Switches that found no segment ready and waited for the preparer.
    pub switch_waits: u64,
    /// Flushes that waited for their group to gather ([`GROUP_COMMIT_WAIT`]).
    pub gather_waits: u64,
    /// Segments the preparer created (grown) and recycled (renamed).
    pub prepared_created: u64,
    /// Segments the preparer took from the recycle pool.
    pub prepared_recycled: u64,
    /// Released segments put in the recycle pool.
    pub released_to_pool: u64,
    /// Released segments deleted (pool full).
    pub released_deleted: u64,
    /// Strategy used for the last segment created, with its fallbacks.
    pub last_prepare: Option<String>,
    /// Last preparation failure, if any.
    pub last_prepare_error: Option<String>,
    /// Whether records are written with `O_DIRECT`, and why (or why not).
    pub direct_io: String,
}

/// What [`Wal::release_before`] did.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct ReleaseReport {
    /// Segments moved to the recycle pool.
    pub recycled: usize,
    /// Segments deleted because the pool was full.
    pub deleted: usize,
}

/// A segmented durable log. All methods take `&self`; share it between
/// threads with `Arc` or scoped threads. See the [module docs](self).
pub struct Wal {
    shared: Arc<Shared>,
    preparer: Option<JoinHandle<()>>,
    recovery: RecoveryReport,
}

struct Shared {
    dir: PathBuf,
    log_id: [u8; 16],
    /// Random per open; see [`nonce_for`].
    nonce_base: u32,
    opts: WalOptions,
    state: Mutex<State>,
    /// Signalled when a flush ends, a segment becomes ready or
    /// preparation fails.
    cv: Condvar,
    /// Wakes the preparer.
    prep_cv: Condvar,
    /// A commit is waiting for a segment: the preparer does not pause.
    urgent: AtomicBool,
    /// Stops the preparer (also cancels a fill in progress).
    stop: AtomicBool,
    /// Threads inside `commit` right now.
    committers: std::sync::atomic::AtomicUsize,
    /// Signalled by `append` while a flush gathers its group.
    append_cv: Condvar,
    /// Serialises releases so renames stay in sequence order.
    release_lock: Mutex<()>,
    /// Every call to storage goes through here.
    io: Arc<dyn Storage>,
    _lock_file: Box<dyn Send + Sync>,
}

struct Poison {
    op: &'static str,
    path: PathBuf,
    errno: i32,
}

/// The segment being written.
struct Current {
    seq: u64,
    nonce: u32,
    size: u64,
    fd: Arc<dyn SegmentFile>,
    path: Arc<PathBuf>,
    /// Offset where the next record goes.
    end: u64,
    /// Offset up to which bytes were handed to a flush.
    handed: u64,
}

/// Whole pages of one segment, ready to be written.
struct Chunk {
    seq: u64,
    /// Its descriptor has `O_DIRECT`: write from a page-aligned buffer.
    direct: bool,
    fd: Arc<dyn SegmentFile>,
    path: Arc<PathBuf>,
    offset: u64,
    bytes: Vec<u8>,
}

pub(crate) struct Prepared {
    seq: u64,
    path: PathBuf,
    fd: Box<dyn SegmentFile>,
}

struct State {
    poison: Option<Poison>,
    closed: bool,
    next_lsn: u64,
    durable_lsn: u64,
    cur: Current,
    /// Bytes of `cur` from `buf_start` (a page boundary) to `cur.end`.
    buf: Vec<u8>,
    buf_start: u64,
    /// Pages of earlier segments not yet written (a switch during a flush).
    sealed: VecDeque<Chunk>,
    sealed_bytes: usize,
    flushing: bool,
    /// A flush is waiting for its group to gather (see [`GROUP_COMMIT_WAIT`]).
    gathering: bool,
    /// Last LSN handed to a flush.
    handed_lsn: u64,
    /// Most threads seen committing at once, over the recent flushes.
    peak_committers: usize,
    peak_since: std::time::Instant,
    flushes: u64,
    /// Records go out with `O_DIRECT` (through `staging`, page-aligned).
    direct: bool,
    staging: Vec<u8>,
    /// A segment written but not yet `fdatasync`ed.
    dirty: Option<(u64, Arc<dyn SegmentFile>, Arc<PathBuf>)>,
    live: VecDeque<SegmentInfo>,
    ready: VecDeque<Prepared>,
    pool: VecDeque<PathBuf>,
    /// Highest segment whose header (first page) is durable.
    header_synced_seq: u64,
    next_prepare_seq: u64,
    prep_blocked: bool,
    prep_failures: u64,
    prep_error: Option<(String, i32, PathBuf)>,
    spare: Vec<u8>,
    stats: WalStats,
}

impl State {
    /// Wraps `bytes` (the current segment's pages from `buf_start`) for a
    /// flush.
    fn chunk_of_current(&self, bytes: Vec<u8>) -> Chunk {
        Chunk {
            seq: self.cur.seq,
            direct: self.direct,
            fd: self.cur.fd.clone(),
            path: self.cur.path.clone(),
            offset: self.buf_start,
            bytes,
        }
    }
}

fn round_down(x: u64) -> u64 {
    x / WRITE_PAGE as u64 * WRITE_PAGE as u64
}

fn pad_to_page(v: &mut Vec<u8>) {
    let len = v.len().div_ceil(WRITE_PAGE) * WRITE_PAGE;
    v.resize(len, 0);
}

impl Wal {
    /// Opens the log in `dir`, creating the directory (not its parents)
    /// and a new log if there is none, and recovers it (see
    /// [`RecoveryReport`]). Takes an exclusive lock on `dir/LOCK`: a second
    /// opener gets `EWOULDBLOCK`.
    ///
    /// Always starts a new segment, whose durable header seals the
    /// recovered end; the first segment of a new log is prepared here. Each
    /// open therefore adds a segment: call [`release_before`](Self::release_before)
    /// with the LSN from which records are still needed (for example
    /// `recovery().next_lsn` once older records were applied) to recycle the
    /// older ones.
    pub fn open(dir: impl AsRef<Path>, opts: WalOptions) -> Result<Wal> {
        let dir = dir.as_ref();
        check_options(dir, &opts)?;
        let io: Arc<dyn Storage> = opts
            .storage
            .clone()
            .unwrap_or_else(|| Arc::new(storage::Real));
        io.create_dir(dir)
            .map_err(|e| Error::io("mkdir", dir, None, e))?;
        let kind = io
            .dir_kind(dir)
            .map_err(|e| Error::io("stat", dir, None, e))?;
        if let Some(kind) = kind {
            return Err(Error::refused(
                "open log",
                dir,
                Errno::NOTDIR,
                format!("is a {kind}, not a directory"),
            ));
        }
        // The directory's own entry: until its parent is fsynced, a power
        // cut may remove the directory with every segment in it. Synced on
        // every open, not only when this one created it: a process that
        // created it may have died before its sync.
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        io.sync_dir(parent)
            .map_err(|(op, e)| Error::io(op, parent, None, e))?;
        let lock_path = dir.join(LOCK_NAME);
        let lock_file = lock_exclusive(&*io, dir, &lock_path)?;

        let rec = recovery::recover(&*io, dir, opts.segment_size)?;
        make_durable(&*io, dir, &rec)?;
        let log_id = match rec.log_id {
            Some(id) => id,
            None => {
                let mut id = [0u8; 16];
                crate::sys::getrandom(&mut id).map_err(|e| Error::io("getrandom", dir, None, e))?;
                id
            }
        };
        let mut report = rec.report;
        let mut live: VecDeque<SegmentInfo> = rec.live.into();
        let new_seq = live.back().map_or(1, |s| s.seq + 1);
        if new_seq > format::MAX_NUMBER || rec.next_lsn > format::MAX_NUMBER {
            return Err(Error::refused(
                "open log",
                dir,
                Errno::OVERFLOW,
                format!(
                    "segment sequence {new_seq} or LSN {} would pass the format's limit 2^62",
                    rec.next_lsn
                ),
            ));
        }
        let shared_opts = opts.clone();
        let mut prepared = rec.prepared.into_iter().peekable();
        let mut ready = VecDeque::new();
        let mut pool: VecDeque<PathBuf> = rec.pool.into();
        let first = match prepared.next() {
            Some((seq, path)) if seq == new_seq => {
                let fd = io
                    .open(&path, OpenMode::ReadWrite)
                    .map_err(|e| Error::io("open", &path, None, e))?;
                Prepared { seq, path, fd }
            }
            _ => {
                // A pooled segment needs no space (a full disk must not keep
                // the log from opening); else create one.
                let mut got = None;
                while let Some(from) = pool.pop_front() {
                    // Any failure here: fall back to creating one.
                    if let Ok(Some(p)) = preparer::recycle_into(&*io, dir, new_seq, &opts, &from) {
                        got = Some(p);
                        break;
                    }
                }
                match got {
                    Some(p) => p,
                    None => {
                        let mut stats = WalStats::default();
                        // The caller waits for this one: no throttling.
                        let urgent = AtomicBool::new(true);
                        preparer::create_segment(
                            &*io,
                            dir,
                            new_seq,
                            &opts,
                            None,
                            Some(&urgent),
                            &mut stats,
                        )?
                    }
                }
            }
        };
        for (seq, path) in prepared {
            let fd = io
                .open(&path, OpenMode::ReadWrite)
                .map_err(|e| Error::io("open", &path, None, e))?;
            ready.push_back(Prepared { seq, path, fd });
        }
        let next_lsn = rec.next_lsn;
        let (_, size) = first
            .fd
            .stat()
            .map_err(|e| Error::io("fstat", &first.path, None, e))?;
        // A fresh nonce base per open: a segment reused under the same
        // sequence after a crash gets a nonce its old records do not carry.
        let mut nb = [0u8; 4];
        crate::sys::getrandom(&mut nb).map_err(|e| Error::io("getrandom", dir, None, e))?;
        let nonce_base = u32::from_le_bytes(nb);
        // Seal: the new segment's header, durable before open returns.
        let header = SegmentHeader {
            log_id,
            seq: first.seq,
            size,
            first_lsn: next_lsn,
            nonce: nonce_for(nonce_base, first.seq),
        };
        let mut page = vec![0u8; WRITE_PAGE];
        page[..SEGMENT_HEADER_LEN].copy_from_slice(&header.encode());
        write_all_to(&*first.fd, &first.path, &page, 0)?;
        first
            .fd
            .fdatasync()
            .map_err(|e| Error::io("fdatasync", &first.path, None, e))?;
        live.push_back(SegmentInfo {
            seq: first.seq,
            first_lsn: Lsn(next_lsn),
            path: first.path.clone(),
            size,
        });
        report.next_lsn = Lsn(next_lsn);
        let next_prepare_seq = ready.back().map_or(first.seq + 1, |p| p.seq + 1);
        let mut buf = Vec::with_capacity(WRITE_PAGE * 2);
        buf.extend_from_slice(&page[..SEGMENT_HEADER_LEN]);
        let mut state = State {
            poison: None,
            closed: false,
            next_lsn,
            durable_lsn: next_lsn - 1,
            cur: Current {
                seq: first.seq,
                nonce: header.nonce,
                size,
                fd: Arc::from(first.fd),
                path: Arc::new(first.path),
                end: SEGMENT_HEADER_LEN as u64,
                handed: SEGMENT_HEADER_LEN as u64,
            },
            buf,
            buf_start: 0,
            sealed: VecDeque::new(),
            sealed_bytes: 0,
            flushing: false,
            gathering: false,
            handed_lsn: next_lsn - 1,
            peak_committers: 0,
            peak_since: std::time::Instant::now(),
            flushes: 0,
            direct: false,
            staging: Vec::new(),
            dirty: None,
            live,
            ready,
            pool,
            header_synced_seq: first.seq,
            next_prepare_seq,
            prep_blocked: false,
            prep_failures: 0,
            prep_error: None,
            spare: Vec::new(),
            stats: WalStats::default(),
        };
        let network = io.is_network(dir);
        let want_direct = opts.direct_io.unwrap_or(DIRECT_IO_ON_LOCAL_FS && !network);
        if want_direct {
            match state.cur.fd.set_direct() {
                Ok(()) => {
                    state.direct = true;
                    state.stats.direct_io = "yes".into();
                }
                Err(e) => {
                    state.stats.direct_io = format!(
                        "no: the filesystem refused O_DIRECT ({})",
                        std::io::Error::from_raw_os_error(e.raw_os_error())
                    )
                }
            }
        } else {
            state.stats.direct_io = match opts.direct_io {
                Some(false) => "no: turned off by the caller".into(),
                _ if network => "no: network or FUSE filesystem".into(),
                _ => "no: off by default (DIRECT_IO_ON_LOCAL_FS: no gain measured at 8 KiB, slower at 1 MiB)".into(),
            };
        }
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            log_id,
            nonce_base,
            opts: shared_opts,
            state: Mutex::new(state),
            cv: Condvar::new(),
            prep_cv: Condvar::new(),
            urgent: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            committers: std::sync::atomic::AtomicUsize::new(0),
            append_cv: Condvar::new(),
            release_lock: Mutex::new(()),
            io,
            _lock_file: lock_file,
        });
        let s2 = shared.clone();
        let preparer = std::thread::Builder::new()
            .name("fspace-wal-prep".into())
            .spawn(move || preparer::run(&s2))
            .map_err(|e| Error::from_io("spawn preparer", dir, None, e))?;
        Ok(Wal {
            shared,
            preparer: Some(preparer),
            recovery: report,
        })
    }

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
        let r = sh
            .append(data)
            .and_then(|lsn| sh.sync_to(lsn.0).map(|()| lsn));
        sh.committers.fetch_sub(1, Ordering::SeqCst);
        r
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
        reader::WalReader::new(
            self.shared.io.clone(),
            self.shared.log_id,
            segments,
            from.0,
            end,
        )
    }

    /// Returns the live segments, oldest first.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.shared.lock().live.iter().cloned().collect()
    }

    /// Returns the counters of what the log has done.
    pub fn stats(&self) -> WalStats {
        self.shared.lock().stats.clone()
    }

    /// Waits until the preparer has [`WalOptions::prepare_ahead`] segments
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
            st = sh.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Releases every whole segment whose records all come before `lsn`
    /// (never the segment being written): up to
    /// [`WalOptions::recycle_pool`] go to the recycle pool, the rest are
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

/// Returns the largest record payload a segment of `segment_size` bytes
/// holds: the size minus the segment header and one record header, rounded
/// down to a multiple of 8.
pub fn max_record(segment_size: u64) -> usize {
    let room = (segment_size as usize).saturating_sub(SEGMENT_HEADER_LEN + RECORD_HEADER_LEN);
    room.min(u32::MAX as usize) / format::RECORD_ALIGN * format::RECORD_ALIGN
}

fn check_options(dir: &Path, o: &WalOptions) -> Result<()> {
    let bad = |m: String| Err(Error::refused("open log", dir, Errno::INVAL, m));
    if o.segment_size < 64 << 10 || o.segment_size % WRITE_PAGE as u64 != 0 {
        return bad(format!(
            "segment size {} must be a multiple of 4 KiB and at least 64 KiB",
            o.segment_size
        ));
    }
    if !(o.prepare_duty_cycle >= MIN_DUTY_CYCLE && o.prepare_duty_cycle <= 1.0) {
        return bad(format!(
            "prepare duty cycle {} must be in [{MIN_DUTY_CYCLE}, 1]",
            o.prepare_duty_cycle
        ));
    }
    if o.prepare_ahead == 0 {
        return bad("prepare_ahead must be at least 1".into());
    }
    if o.write_buffer < 2 * WRITE_PAGE || o.write_buffer > MAX_WRITE_BUFFER {
        return bad(format!(
            "write buffer {} must be between 8 KiB (two pages) and 1 GiB",
            o.write_buffer
        ));
    }
    Ok(())
}

fn poisoned(p: &Poison) -> Error {
    Error::Poisoned {
        op: p.op,
        path: p.path.clone(),
        errno: p.errno,
    }
}

fn prepare_error(st: &State) -> Error {
    match &st.prep_error {
        Some((msg, errno, path)) => Error::refused(
            "commit",
            path,
            Errno::from_raw_os_error(*errno),
            format!("no segment ready: preparing it failed: {msg}"),
        ),
        None => Error::refused("commit", Path::new(""), Errno::IO, "no segment ready"),
    }
}

/// Makes durable everything a previous process may have left half-done,
/// before the log uses any of it (as PostgreSQL's startup syncs its data
/// directory after an unclean shutdown):
///
/// - the data of every segment recovery kept (live and prepared), through
///   `fdatasync`: a killed process may have left records in the page cache
///   of the last live segment; recovery just read them, and the new
///   segment's header is about to say the log continues after them. The
///   others are normally durable already (each was synced before the next
///   step), so their syncs cost little and cover a process that died
///   between a write and its sync;
/// - the directory, through `fsync`: a killed process may have renamed a
///   new segment into place (or a recycled one, or released one) and died
///   before its directory `fsync`; recovery may have removed temporary and
///   unusable files. Without this, the segment this open is about to make
///   live can be found again after a power cut under its temporary name,
///   and removed by recovery with every record acknowledged in it.
fn make_durable(io: &dyn Storage, dir: &Path, rec: &recovery::Recovered) -> Result<()> {
    let kept = rec
        .live
        .iter()
        .map(|s| &s.path)
        .chain(rec.prepared.iter().map(|(_, p)| p));
    for path in kept {
        let (fd, _) = scan::open_segment(io, path)?;
        fd.fdatasync()
            .map_err(|e| Error::io("fdatasync", path, None, e))?;
    }
    preparer::sync_dir(io, dir)
}

/// How long `open` retries a held `LOCK` before refusing: 200 ms. A
/// process that closed its log and forked meanwhile leaves a copy of the
/// locked descriptor in the child until the child's `exec` closes it
/// (`O_CLOEXEC`); seen in the test suite, which spawns processes while
/// reopening logs.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(200);

fn lock_exclusive(io: &dyn Storage, dir: &Path, lock_path: &Path) -> Result<Box<dyn Send + Sync>> {
    let deadline = std::time::Instant::now() + LOCK_RETRY;
    loop {
        match io.lock(lock_path) {
            Ok(guard) => return Ok(guard),
            Err(e) if e == Errno::WOULDBLOCK => {
                if std::time::Instant::now() >= deadline {
                    return Err(Error::refused(
                        "open log",
                        dir,
                        e,
                        "is already open (its LOCK is held, by this or another process)",
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(Error::io("flock", lock_path, None, e)),
        }
    }
}

/// Returns the nonce of segment `seq` in this open of the log: distinct
/// per segment, and random per open, so that a segment reused under the
/// same sequence after a crash never verifies its earlier records.
fn nonce_for(base: u32, seq: u64) -> u32 {
    base.wrapping_add((seq as u32).wrapping_mul(0x9E37_79B9))
}

/// Returns `len` bytes of `v` starting at a page boundary.
fn aligned(v: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if v.len() < len + WRITE_PAGE {
        v.resize(len + WRITE_PAGE, 0);
    }
    let off = v.as_ptr().align_offset(WRITE_PAGE).min(WRITE_PAGE);
    &mut v[off..off + len]
}

/// The error and the poison of a failed `fdatasync`.
fn sync_failure(path: &Path, e: Errno) -> (Error, Poison) {
    (
        Error::io("fdatasync", path, None, e),
        Poison {
            op: "fdatasync",
            path: path.to_path_buf(),
            errno: e.raw_os_error(),
        },
    )
}

/// Writes all of `bytes` at `offset` of a segment file.
fn write_all_to(fd: &dyn SegmentFile, path: &Path, bytes: &[u8], offset: u64) -> Result<()> {
    crate::sys::pwrite_all_with(|b, o| fd.write_at(b, o), bytes, offset)
        .map_err(|e| Error::pwrite(path, offset + bytes.len() as u64, e))
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State half-updated in
        // a way later calls rely on (flushes re-check everything), so a
        // poisoned mutex is used as is.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cv.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    /// Refuses work on a poisoned or closed log.
    fn check_usable(&self, st: &State) -> Result<()> {
        if let Some(p) = &st.poison {
            return Err(poisoned(p));
        }
        if st.closed {
            return Err(Error::refused(
                "append",
                &self.dir,
                Errno::BADF,
                "log is closed",
            ));
        }
        Ok(())
    }

    fn append(&self, data: &[u8]) -> Result<Lsn> {
        let max = max_record(self.opts.segment_size);
        if data.len() > max {
            return Err(Error::refused(
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
                if st.flushing {
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
            return Err(Error::refused(
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
    fn switch_segment<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        span: u64,
    ) -> Result<MutexGuard<'a, State>> {
        let mut waited = false;
        let next = loop {
            // Another appender may have switched while this one waited.
            if st.cur.end + span <= st.cur.size {
                if waited {
                    self.urgent.store(false, Ordering::SeqCst);
                }
                return Ok(st);
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
        if st.cur.end > st.cur.handed {
            let mut bytes = std::mem::take(&mut st.buf);
            pad_to_page(&mut bytes);
            st.sealed_bytes += bytes.len();
            let chunk = st.chunk_of_current(bytes);
            st.sealed.push_back(chunk);
        }
        let size = self.opts.segment_size;
        let header = SegmentHeader {
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
        });
        if st.direct {
            if let Err(e) = next.fd.set_direct() {
                st.direct = false;
                st.stats.direct_io = format!(
                    "no: the filesystem refused O_DIRECT on {} ({})",
                    next.path.display(),
                    std::io::Error::from_raw_os_error(e.raw_os_error())
                );
            }
        }
        st.cur = Current {
            seq: next.seq,
            nonce: header.nonce,
            size,
            fd: Arc::from(next.fd),
            path: Arc::new(next.path),
            end: 0,
            handed: 0,
        };
        st.cur.end = SEGMENT_HEADER_LEN as u64;
        st.stats.switches += 1;
        self.prep_cv.notify_all();
        Ok(st)
    }

    fn sync_to(&self, lsn: u64) -> Result<()> {
        let mut st = self.lock();
        let lsn = lsn.min(st.next_lsn - 1);
        loop {
            if let Some(p) = &st.poison {
                return Err(poisoned(p));
            }
            if st.durable_lsn >= lsn {
                return Ok(());
            }
            if st.flushing {
                st = self.wait(st);
                continue;
            }
            st = self.gather(st);
            let (g, r) = self.flush(st, true);
            st = g;
            r?;
        }
    }

    /// Lets the group form: when several threads have been committing,
    /// waits (at most [`GROUP_COMMIT_WAIT`]) until as many records are
    /// pending as there were committers, so that one `fdatasync` serves
    /// them all instead of two alternating half-groups.
    fn gather<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let now = self.committers.load(Ordering::SeqCst);
        let t = std::time::Instant::now();
        // The peak decays: it is the most committers seen within the last
        // PEAK_WINDOW, so a past burst does not slow a lone committer.
        if t.duration_since(st.peak_since) > PEAK_WINDOW {
            st.peak_committers = now;
            st.peak_since = t;
        } else {
            st.peak_committers = st.peak_committers.max(now);
        }
        // Nobody else is committing right now: there is no group to wait for.
        if now <= 1 || st.peak_committers <= 1 {
            return st;
        }
        st.flushing = true; // others wait as followers meanwhile
        st.gathering = true;
        st.stats.gather_waits += 1;
        let deadline = std::time::Instant::now() + GROUP_COMMIT_WAIT;
        loop {
            let pending = (st.next_lsn - 1 - st.handed_lsn) as usize;
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if pending >= st.peak_committers || left.is_zero() {
                break;
            }
            st = match self.append_cv.wait_timeout(st, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        st.gathering = false;
        st
    }

    /// Writes out everything appended so far (and `fdatasync`s it if
    /// `sync`), as the one flusher: the state lock is released during the
    /// I/O so that other threads keep appending (they form the next group).
    fn flush<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        sync: bool,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        st.flushing = true;
        let mut chunks: Vec<Chunk> = st.sealed.drain(..).collect();
        st.sealed_bytes = 0;
        if st.cur.end > st.cur.handed {
            // Hand over the buffer; keep a copy of the partial last page,
            // which the next flush writes again, whole (no read-before-write).
            let tail_start = round_down(st.cur.end);
            let keep_from = (tail_start - st.buf_start) as usize;
            let mut next = std::mem::take(&mut st.spare);
            next.clear();
            next.extend_from_slice(&st.buf[keep_from..]);
            let mut bytes = std::mem::replace(&mut st.buf, next);
            pad_to_page(&mut bytes);
            chunks.push(st.chunk_of_current(bytes));
            st.buf_start = tail_start;
            st.cur.handed = st.cur.end;
        }
        let target = st.next_lsn - 1;
        st.handed_lsn = target;
        st.flushes += 1;
        let mut dirty = st.dirty.take();
        let faults = self.opts.faults.clone();
        let mut staging = std::mem::take(&mut st.staging);
        drop(st);

        let mut writes = 0;
        let mut syncs = 0;
        let mut synced_seq = 0;
        let mut failed: Option<(Error, Poison)> = None;
        let datasync = |seq_fd: &(u64, Arc<dyn SegmentFile>, Arc<PathBuf>), syncs: &mut u64| {
            *syncs += 1;
            let r = match faults.as_ref().and_then(|f| Faults::take(&f.fdatasync)) {
                Some(e) => Err(e),
                None => seq_fd.1.fdatasync(),
            };
            r.map_err(|e| Box::new(sync_failure(&seq_fd.2, e)))
        };
        for c in &chunks {
            // A segment's pages go out only after every earlier segment is
            // durable: recovery relies on it (recovery.rs, invariant 1).
            if let Some(d) = dirty.as_ref().filter(|d| d.0 != c.seq) {
                if let Err(f) = datasync(d, &mut syncs) {
                    failed = Some(*f);
                    break;
                }
                synced_seq = synced_seq.max(d.0);
                dirty = None;
            }
            writes += 1;
            let bytes: &[u8] = if c.direct {
                // O_DIRECT wants a page-aligned buffer: stage the pages.
                let slice = aligned(&mut staging, c.bytes.len());
                slice.copy_from_slice(&c.bytes);
                slice
            } else {
                &c.bytes
            };
            if let Err(e) = write_all_to(&*c.fd, &c.path, bytes, c.offset) {
                let errno = e.raw_os_error().unwrap_or(Errno::IO.raw_os_error());
                let p = Poison {
                    op: "pwritev",
                    path: c.path.to_path_buf(),
                    errno,
                };
                failed = Some((e, p));
                break;
            }
            dirty = Some((c.seq, c.fd.clone(), c.path.clone()));
        }
        if failed.is_none() && sync {
            if let Some(d) = &dirty {
                match datasync(d, &mut syncs) {
                    Ok(()) => {
                        synced_seq = synced_seq.max(d.0);
                        dirty = None
                    }
                    Err(f) => failed = Some(*f),
                }
            }
        }

        let mut st = self.lock();
        st.flushing = false;
        if staging.capacity() <= 2 * self.opts.write_buffer.max(WRITE_PAGE) + WRITE_PAGE {
            st.staging = staging;
        }
        st.stats.writes += writes;
        st.stats.syncs += syncs;
        st.header_synced_seq = st.header_synced_seq.max(synced_seq);
        // Recycle the largest buffer for the next hand-over.
        if let Some(c) = chunks.into_iter().max_by_key(|c| c.bytes.capacity()) {
            if c.bytes.capacity() > st.spare.capacity()
                && c.bytes.capacity() <= 2 * self.opts.write_buffer.max(WRITE_PAGE)
            {
                st.spare = c.bytes;
            }
        }
        let result = match failed {
            Some((e, p)) => {
                // A failed fdatasync is never retried: the kernel may have
                // dropped the dirty pages and a second call could succeed
                // without them (PostgreSQL's "fsyncgate"). A failed write
                // leaves unknown bytes in the page cache. Either way the
                // log stops; reopening recovers what is on disk.
                if st.poison.is_none() {
                    st.poison = Some(p);
                }
                Err(e)
            }
            None => {
                st.dirty = dirty;
                if sync {
                    st.durable_lsn = st.durable_lsn.max(target);
                }
                Ok(())
            }
        };
        self.cv.notify_all();
        (st, result)
    }

    fn release_before(&self, lsn: u64) -> Result<ReleaseReport> {
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
            // `Err((error, gone))`: `gone` once the segment left its live
            // name (renamed or removed), whether or not the syncs after
            // that worked; it is no longer live either way.
            let r: std::result::Result<Option<PathBuf>, (Error, bool)> =
                if i < room && seg.size == self.opts.segment_size {
                    let to = self.dir.join(format!(
                        "{}{}",
                        format::FREE_PREFIX,
                        format::segment_name(seg.seq)
                    ));
                    // Its records are durable (only those are released); a
                    // cut before the directory fsync leaves it live under
                    // its old name, and recovery reads it as before.
                    scan::open_segment(&*self.io, &seg.path)
                        .map_err(|e| (e, false))
                        .and_then(|(fd, _)| {
                            storage::durable_rename(
                                &*self.io,
                                &*fd,
                                &seg.path,
                                &to,
                                &self.dir,
                                true,
                                || {},
                            )
                        })
                        .map(|_| Some(to))
                } else {
                    // Unlinked, then the directory synced: a cut before the
                    // sync leaves it live, so a crash leaves a prefix of the
                    // release done.
                    self.io
                        .unlink(&seg.path)
                        .map_err(|e| (Error::io("unlink", &seg.path, None, e), false))
                        .and_then(|()| self.sync_dir().map_err(|e| (e, true)))
                        .map(|()| None)
                };
            let (to, stop) = match r {
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

    fn sync_dir(&self) -> Result<()> {
        preparer::sync_dir(&*self.io, &self.dir)
    }
}

/// Serialises a `Duration` as seconds (f64).
pub(crate) mod duration_secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}
