//! Opening a log, as named steps: check the options, make and sync the
//! directory, lock it, recover, make what recovery kept durable, take the
//! first segment, seal it with a durable header, and start the preparer.

use super::flush::{aligned, write_all_to};
use super::format::{self, SegmentHeader, SEGMENT_HEADER_LEN};
use super::log::Wal;
use super::options::{check_options, WalOptions, LOCK_NAME, WRITE_PAGE};
use super::preparer::{self, create_segment, recycle_into};
use super::recovery::{self, Recovered};
use super::scan::open_segment;
use super::site::Site;
use super::storage::{self, sync_dir, OpenMode, Storage};
use super::types::{DirectIoChoice, IoRefusal, Lsn, SegmentInfo, SyncChoice, WalIo, WalStats};
use super::writer::{nonce_for, Current, Prepared, Shared, State};
use crate::error::{Error, Result};
use crate::strategy::SyncMethod;
use crate::sys::Errno;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};

impl Wal {
    /// Opens the log in `dir`, creating the directory (and its missing
    /// parents, each made durable) and a new log if there is none, and recovers it (see
    /// [`RecoveryReport`](crate::wal::RecoveryReport)). Takes an exclusive lock on `dir/LOCK`: a second
    /// opener gets `EWOULDBLOCK`.
    ///
    /// Always starts a new segment, whose durable header seals the
    /// recovered end; the first segment of a new log is prepared here. Each
    /// open therefore adds a segment: call [`release_before`](Self::release_before)
    /// with the LSN from which records are still needed (for example
    /// `recovery().next_lsn` once older records were applied) to recycle the
    /// older ones.
    pub fn open(dir: impl AsRef<Path>, opts: WalOptions) -> Result<Wal> {
        Self::open_on(
            dir.as_ref(),
            opts,
            Arc::new(storage::Real),
            Site::Filesystem,
        )
    }

    /// [`Wal::open`] with its I/O going to `io` (the real filesystem, or
    /// the power-cut model in tests), and what it asks about the filesystem
    /// answered by `site`.
    pub(crate) fn open_on(
        dir: &Path,
        opts: WalOptions,
        io: Arc<dyn Storage>,
        site: Site,
    ) -> Result<Wal> {
        check_options(dir, &opts)?;
        make_dir(&*io, dir)?;
        let lock_file = lock_exclusive(&*io, dir, &dir.join(LOCK_NAME))
            .map_err(|e| readable_note(e, dir, None))?;
        let rec = recovery::recover(
            &*io,
            dir,
            recovery::Access::Write {
                segment_size: opts.segment_size,
            },
        )
        .map_err(|e| recovering_note(e, dir))?;
        make_durable(&*io, dir, &rec).map_err(|e| recovering_note(e, dir))?;
        // From here on the records are verified and durable: a failure for
        // want of space says so.
        let verified = rec.report.clone();
        let noted = |e| readable_note(e, dir, Some(&verified));
        let log_id = match rec.log_id {
            Some(id) => id,
            None => random(dir)?,
        };
        let new_seq = check_limits(dir, &rec)?;
        let (network, kind) = site.facts(dir);
        // Resolved once: the preparer makes every new segment NOCOW or not.
        let mut opts = opts;
        let nocow_by = match opts.nocow {
            Some(_) => "asked".to_string(),
            None => {
                let (on, why) = site.nocow(dir, &opts.prepare);
                opts.nocow = Some(on);
                why
            }
        };
        let mut pool: VecDeque<PathBuf> = rec.pool.into();
        let (first, ready) =
            take_segments(&*io, &site, dir, new_seq, &opts, rec.prepared, &mut pool)
                .map_err(noted)?;
        // A fresh nonce base per open: a segment reused under the same
        // sequence after a crash gets a nonce its old records do not carry.
        let nonce_base = u32::from_le_bytes(random(dir)?);
        let next_lsn = rec.next_lsn;
        let sealed =
            seal(&first, log_id, next_lsn, nonce_for(nonce_base, first.seq)).map_err(noted)?;
        let mut live: VecDeque<SegmentInfo> = rec.live.into();
        live.push_back(SegmentInfo {
            seq: first.seq,
            first_lsn: Lsn(next_lsn),
            path: first.path.clone(),
            size: sealed.size,
            format: format::FORMAT_VERSION,
        });
        let mut report = rec.report;
        report.next_lsn = Lsn(next_lsn);
        let saved = saved_sync_method(dir, &opts);
        let mut how = choose_io(&first, &opts, network, kind, saved);
        how.nocow = first.fd.is_nocow().unwrap_or(opts.nocow == Some(true));
        how.nocow_by = if opts.nocow == Some(true) && !how.nocow {
            format!("{nocow_by}; refused here: copy-on-write")
        } else {
            nocow_by
        };
        let mut state = initial_state(first, sealed, next_lsn, live, ready, pool, how);
        state.writes_in_flight = opts.writes_in_flight;
        confirm_io(&mut state).map_err(noted)?;
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            log_id,
            nonce_base,
            opts,
            state: Mutex::new(state),
            cv: Condvar::new(),
            prep_cv: Condvar::new(),
            urgent: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            committers: std::sync::atomic::AtomicUsize::new(0),
            append_cv: Condvar::new(),
            durable: std::sync::atomic::AtomicU64::new(next_lsn - 1),
            progress: std::sync::atomic::AtomicU64::new(0),
            release_lock: Mutex::new(()),
            io,
            site,
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
pub(super) fn make_durable(io: &dyn Storage, dir: &Path, rec: &Recovered) -> Result<()> {
    let kept = rec
        .live
        .iter()
        .map(|s| &s.path)
        .chain(rec.prepared.iter().map(|(_, p)| p));
    for path in kept {
        let (fd, _) = open_segment(io, path)?;
        fd.fdatasync()
            .map_err(|e| Error::io("fdatasync", path, None, e))?;
    }
    sync_dir(io, dir)
}

/// Adds to an open's failure for want of space (`ENOSPC`, `EDQUOT`: the
/// log cannot be written, but can still be read) what is known about the
/// records, and how to read them: with `verified` (recovery read every
/// live segment, checked each record's CRC and the LSN sequence, and
/// synced them) they are intact; without it this open failed before
/// reading them, and says only that. Other errors are returned as they are.
fn readable_note(e: Error, dir: &Path, verified: Option<&recovery::RecoveryReport>) -> Error {
    let space = [Errno::NOSPC.raw_os_error(), Errno::DQUOT.raw_os_error()];
    if !e.raw_os_error().is_some_and(|n| space.contains(&n)) {
        return e;
    }
    let how = format!(
        "read them read-only with WalView (C: fspace_wal_view_open), \
         or check them with `fspace wal verify {}`",
        dir.display()
    );
    let note = match verified {
        Some(r) if r.records > 0 => format!(
            "its {} records (LSN {} to {}) are intact, verified by this open; {how}",
            r.records,
            r.first_lsn.0,
            r.next_lsn.0 - 1
        ),
        Some(_) => "the log holds no record (verified by this open): nothing is lost".into(),
        None => format!("its records were not read: this open failed before recovery; {how}"),
    };
    Error::Context {
        op: "open log",
        path: dir.to_path_buf(),
        source: Box::new(e),
        note,
    }
}

/// `e`, when it is a failure for want of space while recovery read the
/// log or made its records durable, with what is known: not yet verified
/// and synced, and how to read them without writing.
fn recovering_note(e: Error, dir: &Path) -> Error {
    let space = [Errno::NOSPC.raw_os_error(), Errno::DQUOT.raw_os_error()];
    if !e.raw_os_error().is_some_and(|n| space.contains(&n)) {
        return e;
    }
    Error::Context {
        op: "open log",
        path: dir.to_path_buf(),
        source: Box::new(e),
        note: format!(
            "this open failed while recovering the records, before all were verified and \
             synced; read them read-only with WalView (C: fspace_wal_view_open), or check \
             them with `fspace wal verify {}`",
            dir.display()
        ),
    }
}

/// How long `open` retries a held `LOCK` before refusing: 200 ms. A
/// process that closed its log and forked meanwhile leaves a copy of the
/// locked descriptor in the child until the child's `exec` closes it
/// (`O_CLOEXEC`); seen in the test suite, which spawns processes while
/// reopening logs.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(200);

pub(super) fn lock_exclusive(
    io: &dyn Storage,
    dir: &Path,
    lock_path: &Path,
) -> Result<Box<dyn Send + Sync>> {
    let deadline = std::time::Instant::now() + LOCK_RETRY;
    loop {
        match io.lock(lock_path) {
            Ok(guard) => return Ok(guard),
            Err(e) if e == Errno::WOULDBLOCK => {
                if std::time::Instant::now() >= deadline {
                    return Err(Error::refused_errno(
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

/// Makes `dir` (not its parents) if missing, refuses anything but a
/// directory, and fsyncs its parent: until then a power cut may remove the
/// directory with every segment in it. Synced on every open, not only when
/// this one created it: a process that created it may have died before its
/// sync.
fn make_dir(io: &dyn Storage, dir: &Path) -> Result<()> {
    make_parents(io, dir)?;
    io.create_dir(dir)
        .map_err(|e| Error::io("mkdir", dir, None, e))?;
    let kind = io
        .dir_kind(dir)
        .map_err(|e| Error::io("stat", dir, None, e))?;
    if let Some(kind) = kind {
        return Err(Error::refused_errno(
            "open log",
            dir,
            Errno::NOTDIR,
            format!("is a {kind}, not a directory"),
        ));
    }
    let parent = crate::durable::parent_dir(dir);
    io.sync_dir(&parent)
        .map_err(|(op, e)| Error::io(op, &parent, None, e))
}

/// Creates the missing ancestors of `dir`, oldest first, each made durable
/// (its parent `fsync`ed after the `mkdir`), as `mkdir -p` would but
/// crash-safe; an ancestor that exists but is not a directory is refused.
fn make_parents(io: &dyn Storage, dir: &Path) -> Result<()> {
    let mut missing = vec![];
    let mut at = dir.parent();
    while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
        match io.dir_kind(p) {
            Ok(None) => break,
            Ok(Some(kind)) => {
                return Err(Error::refused_errno(
                    "open log",
                    p,
                    Errno::NOTDIR,
                    format!("is a {kind}, not a directory"),
                ))
            }
            Err(e) if e == Errno::NOENT => missing.push(p),
            Err(e) => return Err(Error::io("stat", p, None, e)),
        }
        at = p.parent();
    }
    for p in missing.into_iter().rev() {
        io.create_dir(p)
            .map_err(|e| Error::io("mkdir", p, None, e))?;
        let parent = crate::durable::parent_dir(p);
        io.sync_dir(&parent)
            .map_err(|(op, e)| Error::io(op, &parent, None, e))?;
    }
    Ok(())
}

/// Random bytes from the kernel (a new log's id, an open's nonce base).
fn random<const N: usize>(dir: &Path) -> Result<[u8; N]> {
    let mut b = [0u8; N];
    crate::sys::getrandom(&mut b).map_err(|e| Error::io("getrandom", dir, None, e))?;
    Ok(b)
}

/// Returns the sequence of the segment this open starts, refusing to pass
/// the format's limits.
fn check_limits(dir: &Path, rec: &Recovered) -> Result<u64> {
    let new_seq = rec.live.last().map_or(1, |s| s.seq + 1);
    if new_seq > format::MAX_NUMBER || rec.next_lsn > format::MAX_NUMBER {
        return Err(Error::refused_errno(
            "open log",
            dir,
            Errno::OVERFLOW,
            format!(
                "segment sequence {new_seq} or LSN {} would pass the format's limit 2^62",
                rec.next_lsn
            ),
        ));
    }
    Ok(new_seq)
}

/// Takes the segment this open starts (`new_seq`): the prepared one with
/// that sequence, else one from the pool (it needs no space: a full disk
/// must not keep the log from opening), else a new one. Returns it and the
/// other prepared segments, ready for later switches.
fn take_segments(
    io: &dyn Storage,
    site: &Site,
    dir: &Path,
    new_seq: u64,
    opts: &WalOptions,
    prepared: Vec<(u64, PathBuf)>,
    pool: &mut VecDeque<PathBuf>,
) -> Result<(Prepared, VecDeque<Prepared>)> {
    let open = |seq: u64, path: PathBuf| -> Result<Prepared> {
        let fd = io
            .open(&path, OpenMode::ReadWrite)
            .map_err(|e| Error::io("open", &path, None, e))?;
        Ok(Prepared { seq, path, fd })
    };
    let mut prepared = prepared.into_iter();
    let first = match prepared.next() {
        Some((seq, path)) if seq == new_seq => open(seq, path)?,
        _ => recycle_or_create(io, site, dir, new_seq, opts, pool)?,
    };
    let ready = prepared
        .map(|(seq, path)| open(seq, path))
        .collect::<Result<VecDeque<_>>>()?;
    Ok((first, ready))
}

fn recycle_or_create(
    io: &dyn Storage,
    site: &Site,
    dir: &Path,
    new_seq: u64,
    opts: &WalOptions,
    pool: &mut VecDeque<PathBuf>,
) -> Result<Prepared> {
    while let Some(from) = pool.pop_front() {
        // Any failure here: fall back to creating one.
        if let Ok(Some(p)) = recycle_into(io, dir, new_seq, opts, &from) {
            return Ok(p);
        }
    }
    // The caller waits for this one: no throttling.
    let urgent = AtomicBool::new(true);
    create_segment(io, site, dir, new_seq, opts, None, Some(&urgent)).map(|(p, _)| p)
}

/// The first page of the segment an open starts, written and durable.
pub(super) struct Sealed {
    header: SegmentHeader,
    page: Vec<u8>,
    size: u64,
}

/// Seals the recovered end: writes `first`'s header (its first record will
/// be `next_lsn`) and makes it durable before open returns.
fn seal(first: &Prepared, log_id: [u8; 16], next_lsn: u64, nonce: u32) -> Result<Sealed> {
    let (_, size) = first
        .fd
        .stat()
        .map_err(|e| Error::io("fstat", &first.path, None, e))?;
    let header = SegmentHeader {
        version: format::FORMAT_VERSION,
        log_id,
        seq: first.seq,
        size,
        first_lsn: next_lsn,
        nonce,
    };
    let mut page = vec![0u8; WRITE_PAGE];
    page[..SEGMENT_HEADER_LEN].copy_from_slice(&header.encode());
    write_all_to(&*first.fd, &first.path, &page, 0, false)?;
    first
        .fd
        .fdatasync()
        .map_err(|e| Error::io("fdatasync", &first.path, None, e))?;
    Ok(Sealed { header, page, size })
}

/// The writer's state right after an open: `first` current, its header in
/// the tail buffer, records going out as `io` says.
fn initial_state(
    first: Prepared,
    sealed: Sealed,
    next_lsn: u64,
    live: VecDeque<SegmentInfo>,
    ready: VecDeque<Prepared>,
    pool: VecDeque<PathBuf>,
    io: WalIo,
) -> State {
    let next_prepare_seq = ready.back().map_or(first.seq + 1, |p| p.seq + 1);
    let mut buf = Vec::with_capacity(WRITE_PAGE * 2);
    buf.extend_from_slice(&sealed.page[..SEGMENT_HEADER_LEN]);
    State {
        poison: None,
        closed: false,
        next_lsn,
        durable_lsn: next_lsn - 1,
        cur: Current {
            seq: first.seq,
            nonce: sealed.header.nonce,
            size: sealed.size,
            fd: Arc::from(first.fd),
            path: Arc::new(first.path),
            end: SEGMENT_HEADER_LEN as u64,
            handed: SEGMENT_HEADER_LEN as u64,
        },
        buf,
        buf_start: 0,
        sealed: VecDeque::new(),
        sealed_bytes: 0,
        writing: false,
        syncing: false,
        sync_seq: 0,
        written_lsn: next_lsn - 1,
        inflight: VecDeque::new(),
        writes_in_flight: 1,
        gathering: false,
        handed_lsn: next_lsn - 1,
        group: Default::default(),
        flushes: 0,
        direct: io.direct_io,
        dsync: io.sync_method.per_write(),
        fsync: io.sync_method == SyncMethod::Fsync,
        pad: io.pad_flushes,
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
        cv_waiters: 0,
        spare: Vec::new(),
        stats: WalStats::new(io),
    }
}

/// Tries the chosen way of writing on the new segment's header page
/// (written and synced by [`seal`]; the same bytes again): a kernel without
/// `pwritev2`/`RWF_DSYNC` (`ENOSYS`, `EOPNOTSUPP`, `EINVAL`), or a
/// filesystem that accepts `O_DIRECT` at `fcntl` but refuses the write
/// (`EINVAL`), falls back here (to buffered writes, then to `fdatasync`),
/// recorded in the stats' fallbacks, instead of poisoning the first commit.
fn confirm_io(state: &mut State) -> Result<()> {
    if !state.direct && !state.dsync {
        return Ok(());
    }
    let mut page = vec![0u8; WRITE_PAGE];
    page[..SEGMENT_HEADER_LEN].copy_from_slice(&state.buf[..SEGMENT_HEADER_LEN]);
    let mut staging = Vec::new();
    loop {
        let fd = state.cur.fd.clone();
        let path = state.cur.path.clone();
        let bytes: &[u8] = if state.direct {
            let slice = aligned(&mut staging, WRITE_PAGE);
            slice.copy_from_slice(&page);
            slice
        } else {
            &page
        };
        let e = match write_all_to(&*fd, &path, bytes, 0, state.dsync) {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let errno = Errno::from_raw_os_error(e.raw_os_error().unwrap_or(0));
        if state.direct && errno == Errno::INVAL {
            state.direct = false;
            let _ = fd.set_direct(false);
            let refused = IoRefusal::ODirectWrite;
            state
                .stats
                .io
                .fall_back(refused, &path, errno.raw_os_error());
        } else if state.dsync && [Errno::NOSYS, Errno::OPNOTSUPP, Errno::INVAL].contains(&errno) {
            state.dsync = false;
            let refused = IoRefusal::RwfDsync;
            state
                .stats
                .io
                .fall_back(refused, &path, errno.raw_os_error());
        } else {
            return Err(e);
        }
    }
}

/// The sync method a saved probe measured for logs on `dir`'s filesystem,
/// with where it comes from, when the caller asked for none and its
/// policy follows saved measurements (`prepare` is
/// [`StrategyChoice::auto`](crate::StrategyChoice::auto)). A saved probe
/// that could not decide between the methods saved none (unless forced).
fn saved_sync_method(dir: &Path, opts: &WalOptions) -> Option<(SyncMethod, SyncChoice)> {
    if opts.sync_method.is_some() {
        return None;
    }
    let store = opts.prepare.saved_results()?;
    let info = crate::fs_info::fs_info(dir).ok()?;
    let saved = store.load(&info).ok()??;
    let method = saved
        .recommendation(crate::strategy::Intent::Log)?
        .sync_method?;
    Some((
        method,
        SyncChoice::Saved {
            measured_utc: saved.policy.measured_utc.clone(),
            path: saved.path.clone(),
        },
    ))
}

/// Chooses how records go out: the sync method (asked for, a saved
/// probe's measurement, or the policy's for the filesystem,
/// [`crate::policy::rules::log_sync_method`])
/// and `O_DIRECT` (asked for, implied by `direct-dsync`, or by
/// `DIRECT_IO_ON_LOCAL_FS` through [`DirectIoChoice::wants`]), each with why. Where the filesystem
/// refuses `O_DIRECT` on `first`, writes stay buffered (and `direct-dsync`
/// becomes `dsync`), recorded as a fallback.
fn choose_io(
    first: &Prepared,
    opts: &WalOptions,
    network: bool,
    kind: Option<crate::fs_info::FsKind>,
    saved: Option<(SyncMethod, SyncChoice)>,
) -> WalIo {
    let (mut auto, mut auto_by) = saved.unwrap_or_else(|| {
        let (m, why) = crate::policy::rules::log_sync_method(kind, network);
        let reason = why.to_string();
        (m, SyncChoice::Policy { reason })
    });
    if auto.direct() && opts.direct_io == Some(false) {
        (auto, auto_by) = (SyncMethod::Fdatasync, SyncChoice::DirectIoOff);
    }
    let (method, sync_chosen_by) = match opts.sync_method {
        Some(m) => (m, SyncChoice::Asked),
        None => (auto, auto_by),
    };
    let direct_io_by = match opts.direct_io {
        Some(true) => DirectIoChoice::CallerOn,
        Some(false) => DirectIoChoice::CallerOff,
        None if method.direct() => DirectIoChoice::SyncMethod,
        None if network => DirectIoChoice::NetworkFs,
        None => DirectIoChoice::LocalFsDefault,
    };
    let (pad_flushes, pad_flushes_by) = match opts.pad_flushes {
        Some(on) => (on, "asked".to_string()),
        None => {
            // The first segment as it is: where NOCOW was refused (a
            // directory with the compression attribute) it stayed
            // copy-on-write, and is padded.
            let nocow = first.fd.is_nocow().unwrap_or(opts.nocow == Some(true));
            let (on, why) = crate::policy::rules::log_pad_flushes(kind, nocow);
            (on, why.to_string())
        }
    };
    let mut io = WalIo {
        sync_method: method,
        sync_chosen_by,
        direct_io: false,
        direct_io_by,
        fallbacks: Vec::new(),
        pad_flushes,
        pad_flushes_by,
        nocow: false,
        nocow_by: String::new(),
    };
    if direct_io_by.wants() {
        match first.fd.set_direct(true) {
            Ok(()) => io.direct_io = true,
            Err(e) => io.fall_back(IoRefusal::ODirect, &first.path, e.raw_os_error()),
        }
    }
    if opts.sync_method == Some(SyncMethod::Dsync) && io.direct_io {
        // dsync with O_DIRECT asked for: that is direct-dsync.
        io.sync_method = SyncMethod::DirectDsync;
        io.sync_chosen_by = SyncChoice::AskedDsyncWithDirectIo;
    }
    io
}

#[cfg(test)]
mod note_tests {
    use super::*;
    use crate::wal::{Lsn, RecoveryReport};

    fn nospc() -> Error {
        Error::io("create", Path::new("w/LOCK"), None, Errno::NOSPC)
    }

    /// A failure before recovery says the records were not read (never
    /// "intact"); one after says how many are intact; an empty log says it
    /// holds none; other errnos pass unchanged. The errno is kept.
    #[test]
    fn a_space_failure_says_what_is_known_of_the_records() {
        let dir = Path::new("w");
        let e = readable_note(nospc(), dir, None);
        let msg = e.to_string();
        assert_eq!(e.raw_os_error(), Some(Errno::NOSPC.raw_os_error()));
        assert_eq!((e.op(), e.path()), ("open log", dir));
        assert!(msg.contains("its records were not read"), "{msg}");
        assert!(!msg.contains("intact"), "{msg}");
        assert!(msg.contains("`fspace wal verify w`"), "{msg}");

        let r = RecoveryReport {
            records: 5,
            first_lsn: Lsn(11),
            next_lsn: Lsn(16),
            ..Default::default()
        };
        let msg = readable_note(nospc(), dir, Some(&r)).to_string();
        assert!(
            msg.contains("its 5 records (LSN 11 to 15) are intact"),
            "{msg}"
        );
        assert!(msg.starts_with("open log(w): create(w/LOCK): "), "{msg}");

        let r = RecoveryReport {
            next_lsn: Lsn(1),
            ..Default::default()
        };
        let msg = readable_note(nospc(), dir, Some(&r)).to_string();
        assert!(msg.contains("holds no record"), "{msg}");

        let dq = Error::io("pwritev", Path::new("w/x"), None, Errno::DQUOT);
        assert!(matches!(
            readable_note(dq, dir, None),
            Error::Context { .. }
        ));
        let eio = Error::io("pwritev", Path::new("w/x"), None, Errno::IO);
        assert!(matches!(
            readable_note(eio, dir, Some(&r)),
            Error::Io { .. }
        ));
    }
}
