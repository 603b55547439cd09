//! The segmented durable log: `fspace_wal_*`.

use crate::abi;
use crate::info::{choice_from_c, fspace_strategy};
use crate::{arg, arg_mut, bytes_arg, c_string, ffi, json_string, out, path_arg, CResult, Failure};
use fspace::wal::{Record, WalReader, WalView};
use fspace::{Lsn, StrategyChoice, Wal, WalOptions};
use std::ffi::{c_char, c_int, c_void, CString};

/// Options of `fspace_wal_open`. Always set the defaults with
/// `fspace_wal_options_init(&options, sizeof options)` before changing
/// fields: a zeroed struct is not the defaults, and its `size` is refused.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_wal_options {
    /// The size of this struct as the program was built (set by
    /// `fspace_wal_options_init`): the library reads only the fields it
    /// covers.
    pub size: u32,
    /// Segments kept ready ahead of the writer (default 2).
    pub prepare_ahead: u32,
    /// Size of new segments: a multiple of 4 KiB, at least 64 KiB (default
    /// 16 MiB). Existing segments keep theirs.
    pub segment_size: u64,
    /// Released segments kept for reuse (default 4).
    pub recycle_pool: u32,
    /// How new segments are grown: `FSPACE_STRATEGY_*`; default
    /// `FSPACE_STRATEGY_AUTO` (the `auto` policy for intent `log`).
    pub prepare_strategy: fspace_strategy,
    /// Write records with `O_DIRECT`: -1 decides by filesystem (default),
    /// 0 never, 1 where the filesystem accepts it.
    pub direct_io: i32,
    /// Let `auto` preparation follow a result saved by `fspace probe
    /// --save` (default true).
    pub use_saved: bool,
    /// How a commit is made durable: `FSPACE_SYNC_*`; default
    /// `FSPACE_SYNC_AUTO` (the policy's choice for the filesystem).
    pub sync_method: fspace_sync_method,
}

/// How a commit is made durable (`fspace_wal_options.sync_method`).
pub type fspace_sync_method = u8;
/// The method a saved probe measured fastest on the filesystem (with
/// `use_saved`), else the policy's choice: O_DIRECT + RWF_DSYNC on ext4
/// and xfs, fdatasync elsewhere.
pub const FSPACE_SYNC_AUTO: fspace_sync_method = 0;
/// Buffered writes, one `fdatasync` per commit group.
pub const FSPACE_SYNC_FDATASYNC: fspace_sync_method = 1;
/// `pwritev2(RWF_DSYNC)`: each write durable when it returns.
pub const FSPACE_SYNC_DSYNC: fspace_sync_method = 2;
/// `O_DIRECT` + `RWF_DSYNC` (FUA where the device has it).
pub const FSPACE_SYNC_DIRECT_DSYNC: fspace_sync_method = 3;
/// Buffered writes, one `fsync` per commit group (as fdatasync, and the
/// inode's times too; for comparison, a log never needs it).
pub const FSPACE_SYNC_FSYNC: fspace_sync_method = 4;

/// Sets `*options`, a struct of `size` bytes (`sizeof options`), to the
/// defaults, and its `size` field to `size`.
///
/// Errors: `-EINVAL` (NULL argument, or a size smaller than the first
/// version of the struct).
///
/// # Safety
/// `options` is NULL or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_options_init(
    options: *mut fspace_wal_options,
    size: usize,
) -> c_int {
    const F: &str = "fspace_wal_options_init";
    // SAFETY: forwarded caller promise.
    ffi(F, || unsafe { abi::init(F, options, size) }.map(|()| 0))
}

// SAFETY: `WalOptionsRaw` has the struct's layout (asserted below), with
// integers only.
unsafe impl abi::Options for fspace_wal_options {
    type Raw = WalOptionsRaw;
    const FIRST: usize = 32;
    const INIT: &'static str = "fspace_wal_options_init";
    fn defaults() -> Self {
        let d = WalOptions::default();
        fspace_wal_options {
            size: 0,
            prepare_ahead: u32::try_from(d.prepare_ahead).unwrap_or(u32::MAX),
            segment_size: d.segment_size,
            recycle_pool: u32::try_from(d.recycle_pool).unwrap_or(u32::MAX),
            prepare_strategy: crate::info::FSPACE_STRATEGY_AUTO,
            direct_io: -1,
            use_saved: true,
            sync_method: FSPACE_SYNC_AUTO,
        }
    }
}

/// `fspace_wal_options` with its `bool` read as a byte (see
/// `GrowOptionsRaw` in resize.rs).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct WalOptionsRaw {
    size: u32,
    prepare_ahead: u32,
    segment_size: u64,
    recycle_pool: u32,
    prepare_strategy: fspace_strategy,
    direct_io: i32,
    use_saved: u8,
    sync_method: u8,
}

// Same layout as the public struct, field by field; the released size.
const _: () = assert!(
    size_of::<WalOptionsRaw>() == size_of::<fspace_wal_options>()
        && align_of::<WalOptionsRaw>() == align_of::<fspace_wal_options>()
        && std::mem::offset_of!(WalOptionsRaw, size)
            == std::mem::offset_of!(fspace_wal_options, size)
        && std::mem::offset_of!(WalOptionsRaw, segment_size)
            == std::mem::offset_of!(fspace_wal_options, segment_size)
        && std::mem::offset_of!(WalOptionsRaw, prepare_ahead)
            == std::mem::offset_of!(fspace_wal_options, prepare_ahead)
        && std::mem::offset_of!(WalOptionsRaw, recycle_pool)
            == std::mem::offset_of!(fspace_wal_options, recycle_pool)
        && std::mem::offset_of!(WalOptionsRaw, prepare_strategy)
            == std::mem::offset_of!(fspace_wal_options, prepare_strategy)
        && std::mem::offset_of!(WalOptionsRaw, direct_io)
            == std::mem::offset_of!(fspace_wal_options, direct_io)
        && std::mem::offset_of!(WalOptionsRaw, use_saved)
            == std::mem::offset_of!(fspace_wal_options, use_saved)
        && std::mem::offset_of!(WalOptionsRaw, sync_method)
            == std::mem::offset_of!(fspace_wal_options, sync_method)
        && size_of::<fspace_wal_options>() == <fspace_wal_options as abi::Options>::FIRST
);

fn wal_options(func: &str, o: Option<WalOptionsRaw>) -> CResult<WalOptions> {
    let mut w = WalOptions::default().prepare(StrategyChoice::auto_from_state_dir());
    if let Some(o) = o {
        w.sync_method = match o.sync_method {
            FSPACE_SYNC_AUTO => None,
            FSPACE_SYNC_FDATASYNC => Some(fspace::SyncMethod::Fdatasync),
            FSPACE_SYNC_DSYNC => Some(fspace::SyncMethod::Dsync),
            FSPACE_SYNC_DIRECT_DSYNC => Some(fspace::SyncMethod::DirectDsync),
            FSPACE_SYNC_FSYNC => Some(fspace::SyncMethod::Fsync),
            v => {
                return Err(Failure::invalid(
                    func,
                    format!("sync_method {v} is not one of FSPACE_SYNC_*"),
                ))
            }
        };
        w.segment_size = o.segment_size;
        w.prepare_ahead = o.prepare_ahead as usize;
        w.recycle_pool = o.recycle_pool as usize;
        // A named strategy falls back to its equivalents, as the log's
        // preparer always did.
        w.prepare = choice_from_c(func, o.prepare_strategy, true, o.use_saved != 0)?;
        w.direct_io = match o.direct_io {
            -1 => None,
            0 => Some(false),
            1 => Some(true),
            v => {
                return Err(Failure::invalid(
                    func,
                    format!("direct_io {v} is not -1, 0 or 1"),
                ))
            }
        };
    }
    Ok(w)
}

/// A segmented durable log (an opaque handle). Append, commit, sync and
/// the accessors may be called from many threads at once; close and free
/// only once no other call is running.
pub struct fspace_wal {
    wal: Wal,
}

/// What opening a log found, from `fspace_wal_recovery`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_wal_recovery_info {
    /// The log was created by this open.
    pub created: bool,
    /// Live segments found.
    pub segments: u64,
    /// Valid records found.
    pub records: u64,
    /// LSN of the oldest record kept.
    pub first_lsn: u64,
    /// LSN the next record gets.
    pub next_lsn: u64,
    /// Bytes after the last valid record that were discarded (a torn
    /// write), 0 if none.
    pub discarded_bytes: u64,
}

/// What `fspace_wal_release_before` did.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_wal_release_info {
    /// Segments moved to the recycle pool.
    pub recycled: u64,
    /// Segments deleted.
    pub deleted: u64,
}

/// Opens (recovering) or creates the log in directory `dir` (created if
/// missing) with `options` (NULL: the defaults). Recovery stops at the first
/// record that is torn, fails its checksum or breaks the LSN sequence; new
/// records go to a new segment, so each open starts one. On success `*out`
/// is a new handle for `fspace_wal_close`.
///
/// Errors: `-EINVAL` (NULL argument, bad option); `-EAGAIN` (another open
/// log, in this process or another, holds the directory's lock); `-EUCLEAN` (a damaged segment before the
/// tail); `-ENOSPC` (no space for the segment this open starts: the
/// message says whether the records are intact, and
/// `fspace_wal_view_open` reads them without writing); the errors of
/// `open`, `mkdir` and the preparation of the first segment.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `options` is NULL or
/// readable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_open(
    dir: *const c_char,
    options: *const fspace_wal_options,
    out: *mut *mut fspace_wal,
) -> c_int {
    const F: &str = "fspace_wal_open";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (dir, o) = unsafe { (path_arg(F, "dir", dir)?, crate::out(F, "out", out)?) };
        // SAFETY: NULL or readable.
        let opts = wal_options(F, unsafe { abi::read(F, options)? })?;
        let wal = Wal::open(&dir, opts)?;
        o.set(Box::into_raw(Box::new(fspace_wal { wal })));
        Ok(0)
    })
}

/// Makes everything appended durable, stops the log and frees the handle
/// (also when the sync fails; its error is returned). NULL does nothing and
/// returns 0.
///
/// Errors: the errors of `fdatasync`; `-EIO` style poison errors when an
/// earlier sync had failed.
///
/// # Safety
/// `wal` is NULL or a live handle that no other thread is using; it is not
/// used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_close(wal: *mut fspace_wal) -> c_int {
    const F: &str = "fspace_wal_close";
    ffi(F, || {
        if wal.is_null() {
            return Ok(0);
        }
        // SAFETY: made by Box::into_raw in fspace_wal_open.
        let h = unsafe { Box::from_raw(wal) };
        h.wal.close()?;
        Ok(0)
    })
}

/// Stops the log without syncing and frees the handle, as after a crash:
/// only what a sync or commit covered is durable. NULL does nothing.
///
/// # Safety
/// `wal` is NULL or a live handle that no other thread is using; it is not
/// used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_free(wal: *mut fspace_wal) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::free_handle(wal) }
}

/// Appends a record of `len` bytes and, when `lsn` is not NULL, writes its
/// LSN there. Not durable until a sync or commit covering it returns.
///
/// Errors: `-EINVAL` (NULL `wal`, or NULL `data` with `len` > 0);
/// `-EMSGSIZE` (larger than `fspace_wal_max_record`); `-EFBIG` (`len`
/// above `INT64_MAX`, which no buffer has); poison errors after a
/// failed sync; the errors of writing the segment.
///
/// # Safety
/// `wal` is NULL or a live handle; `data` is NULL or readable for `len`
/// bytes; `lsn` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_append(
    wal: *const fspace_wal,
    data: *const c_void,
    len: usize,
    lsn: *mut u64,
) -> c_int {
    const F: &str = "fspace_wal_append";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, data) = unsafe { (arg(F, "wal", wal)?, bytes_arg(F, "data", data.cast(), len)?) };
        let l = h.wal.append(data)?;
        // SAFETY: NULL or writable.
        if let Some(o) = unsafe { crate::opt_out(lsn) } {
            o.set(l.0);
        }
        Ok(0)
    })
}

/// Appends a record and returns once it, and everything before it, is
/// durable; concurrent commits share one `fdatasync`. When `lsn` is not
/// NULL its LSN is written there.
///
/// Errors: those of `fspace_wal_append`, and of `fdatasync` (after which
/// the log is poisoned: every later call fails; reopen it).
///
/// # Safety
/// As `fspace_wal_append`.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_commit(
    wal: *const fspace_wal,
    data: *const c_void,
    len: usize,
    lsn: *mut u64,
) -> c_int {
    const F: &str = "fspace_wal_commit";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, data) = unsafe { (arg(F, "wal", wal)?, bytes_arg(F, "data", data.cast(), len)?) };
        let l = h.wal.commit(data)?;
        // SAFETY: NULL or writable.
        if let Some(o) = unsafe { crate::opt_out(lsn) } {
            o.set(l.0);
        }
        Ok(0)
    })
}

/// Makes everything appended so far durable; when `lsn` is not NULL, the
/// last LSN covered is written there (0 for an empty log).
///
/// Errors: `-EINVAL` (NULL `wal`); the errors of `fdatasync` (the log is
/// then poisoned).
///
/// # Safety
/// `wal` is NULL or a live handle; `lsn` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_sync(wal: *const fspace_wal, lsn: *mut u64) -> c_int {
    const F: &str = "fspace_wal_sync";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { arg(F, "wal", wal)? };
        let l = h.wal.sync()?;
        // SAFETY: NULL or writable.
        if let Some(o) = unsafe { crate::opt_out(lsn) } {
            o.set(l.0);
        }
        Ok(0)
    })
}

/// Makes every record up to `lsn` durable; an `lsn` beyond the last one
/// appended makes everything appended durable (it does not wait for
/// records to come).
///
/// Errors: as `fspace_wal_sync`.
///
/// # Safety
/// `wal` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_sync_to(wal: *const fspace_wal, lsn: u64) -> c_int {
    const F: &str = "fspace_wal_sync_to";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { arg(F, "wal", wal)? };
        h.wal.sync_to(Lsn(lsn))?;
        Ok(0)
    })
}

/// Writes to `*lsn` the LSN up to which records are durable.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `wal` is NULL or a live handle; `lsn` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_durable_lsn(wal: *const fspace_wal, lsn: *mut u64) -> c_int {
    const F: &str = "fspace_wal_durable_lsn";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "wal", wal)?, out(F, "lsn", lsn)?) };
        o.set(h.wal.durable_lsn().0);
        Ok(0)
    })
}

/// Writes to `*lsn` the LSN the next appended record will get.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `wal` is NULL or a live handle; `lsn` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_next_lsn(wal: *const fspace_wal, lsn: *mut u64) -> c_int {
    const F: &str = "fspace_wal_next_lsn";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "wal", wal)?, out(F, "lsn", lsn)?) };
        o.set(h.wal.next_lsn().0);
        Ok(0)
    })
}

/// Writes to `*len` the largest payload a record can have.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `wal` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_max_record(wal: *const fspace_wal, len: *mut usize) -> c_int {
    const F: &str = "fspace_wal_max_record";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "wal", wal)?, out(F, "len", len)?) };
        o.set(h.wal.max_record());
        Ok(0)
    })
}

/// Writes to `*info` what opening the log found.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `wal` is NULL or a live handle; `info` is NULL or writable for `info_size` bytes (`sizeof *info`).
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_recovery(
    wal: *const fspace_wal,
    info: *mut fspace_wal_recovery_info,
    info_size: usize,
) -> c_int {
    const F: &str = "fspace_wal_recovery";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "wal", wal)?,
                abi::sized_out(F, "info", info, info_size)?,
            )
        };
        let r = h.wal.recovery();
        o.set(fspace_wal_recovery_info {
            created: r.created,
            segments: r.segments as u64,
            records: r.records,
            first_lsn: r.first_lsn.0,
            next_lsn: r.next_lsn.0,
            discarded_bytes: r.tail.as_ref().map_or(0, |t| t.discarded_bytes),
        });
        Ok(0)
    })
}

/// Releases every whole segment whose records all come before `lsn` (never
/// the one being written): up to the recycle pool's size are kept for
/// reuse, the rest deleted, oldest first. An `lsn` past what is durable
/// counts as the durable LSN: nothing not yet durable is released. When
/// `info` is not NULL it receives the counts. Readers must not read what
/// is released.
///
/// Errors: `-EINVAL` (NULL `wal`); the errors of `rename`, `unlink` and
/// `fsync`.
///
/// # Safety
/// `wal` is NULL or a live handle; `info` is NULL or writable for `info_size` bytes (`sizeof *info`).
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_release_before(
    wal: *const fspace_wal,
    lsn: u64,
    info: *mut fspace_wal_release_info,
    info_size: usize,
) -> c_int {
    const F: &str = "fspace_wal_release_before";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { arg(F, "wal", wal)? };
        // Checked before the release: a bad size changes nothing.
        // SAFETY: NULL or writable.
        let out = unsafe { abi::opt_sized_out(F, "info", info, info_size)? };
        let r = h.wal.release_before(Lsn(lsn))?;
        if let Some(o) = out {
            o.set(fspace_wal_release_info {
                recycled: r.recycled as u64,
                deleted: r.deleted as u64,
            });
        }
        Ok(0)
    })
}

/// Reads a log's durable records in LSN order, verifying each (an opaque
/// handle; one thread at a time).
pub struct fspace_wal_reader {
    reader: WalReader,
    current: Option<Record>,
}

/// Starts reading the durable records of `wal` from LSN `from` on (0: from
/// the oldest kept; beyond the last durable record: nothing to read).
/// Records appended later are not included. On success `*out` is a new
/// handle for `fspace_wal_reader_free`.
///
/// Errors: `-EINVAL` (NULL argument); `-ERANGE` (`from` was released).
///
/// # Safety
/// `wal` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_reader_new(
    wal: *const fspace_wal,
    from: u64,
    out: *mut *mut fspace_wal_reader,
) -> c_int {
    const F: &str = "fspace_wal_reader_new";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "wal", wal)?, crate::out(F, "out", out)?) };
        let reader = h.wal.read_from(Lsn(from))?;
        o.set(Box::into_raw(Box::new(fspace_wal_reader {
            reader,
            current: None,
        })));
        Ok(0)
    })
}

/// Reads the next record: returns 1 and writes its LSN, a pointer to its
/// payload and the payload's length (the payload belongs to the reader and
/// stays valid until the next call on it or its free); returns 0 at the
/// end of the durable records.
///
/// Errors: `-EINVAL` (NULL argument); `-EUCLEAN` (a damaged record, after
/// which the reader ends); the errors of `open` and `pread`.
///
/// # Safety
/// `reader` is NULL or a live handle; `lsn`, `data` and `len` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_reader_next(
    reader: *mut fspace_wal_reader,
    lsn: *mut u64,
    data: *mut *const c_void,
    len: *mut usize,
) -> c_int {
    const F: &str = "fspace_wal_reader_next";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (r, lsn, data, len) = unsafe {
            (
                arg_mut(F, "reader", reader)?,
                out(F, "lsn", lsn)?,
                out(F, "data", data)?,
                out(F, "len", len)?,
            )
        };
        match r.reader.next() {
            None => {
                r.current = None;
                Ok(0)
            }
            Some(Err(e)) => {
                r.current = None;
                Err(e.into())
            }
            Some(Ok(rec)) => {
                let rec = r.current.insert(rec);
                lsn.set(rec.lsn.0);
                data.set(rec.data.as_ptr().cast());
                len.set(rec.data.len());
                Ok(1)
            }
        }
    })
}

/// Frees a reader; NULL does nothing.
///
/// # Safety
/// `reader` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_reader_free(reader: *mut fspace_wal_reader) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::free_handle(reader) }
}

/// A read-only look at a log (an opaque handle): made by
/// `fspace_wal_view_open`, read with `fspace_wal_view_reader_new`, freed by
/// `fspace_wal_view_free`.
pub struct fspace_wal_view {
    view: WalView,
    json: CString,
    damage: Option<CString>,
}

/// Flag of `fspace_wal_view_open`: damage before the log's end does not
/// refuse the open; reading stops there (`fspace_wal_view_damage` says
/// where and what), as `fspace wal dump` shows what can still be read.
pub const FSPACE_WAL_VIEW_TO_DAMAGE: u32 = 1;

/// Opens the log in directory `dir` read-only: nothing is written (no file
/// is created, removed or renamed, the `LOCK` is not taken), so it opens a
/// log on a full filesystem (where `fspace_wal_open` fails with `-ENOSPC`
/// for want of a new segment), on a read-only mount, or beside a live
/// writer in another process. Every live segment is verified as
/// `fspace_wal_open` verifies it (each record's CRC, the LSN sequence, the
/// segment chain); the last one ends at its first invalid record. `flags`
/// is 0 or `FSPACE_WAL_VIEW_TO_DAMAGE`. On success `*out` is a new handle
/// for `fspace_wal_view_free`.
///
/// Errors: `-EINVAL` (NULL argument, unknown flag); `-ENOENT` (`dir` does
/// not exist, or holds no log); `-ENOTDIR` (`dir` is not a directory);
/// `-EUCLEAN` (a damaged segment before the tail, without
/// `FSPACE_WAL_VIEW_TO_DAMAGE`); the errors of `open` and `pread`.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_view_open(
    dir: *const c_char,
    flags: u32,
    out: *mut *mut fspace_wal_view,
) -> c_int {
    const F: &str = "fspace_wal_view_open";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (dir, o) = unsafe { (path_arg(F, "dir", dir)?, crate::out(F, "out", out)?) };
        if flags & !FSPACE_WAL_VIEW_TO_DAMAGE != 0 {
            return Err(Failure::invalid(F, format!("unknown flags {flags:#x}")));
        }
        let view = if flags & FSPACE_WAL_VIEW_TO_DAMAGE != 0 {
            WalView::open_to_damage(&dir)?
        } else {
            WalView::open(&dir)?
        };
        let json = json_string(F, view.recovery())?;
        let damage = view.damage().map(|d| {
            c_string(format!(
                "{}: offset {}: {}",
                d.segment.display(),
                d.offset,
                d.message
            ))
        });
        o.set(Box::into_raw(Box::new(fspace_wal_view {
            view,
            json,
            damage,
        })));
        Ok(0)
    })
}

/// Writes to `*info` what the look found, in the struct
/// `fspace_wal_recovery` fills (`created` is false: a directory without a
/// log is refused).
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `view` is NULL or a live handle; `info` is NULL or writable for `info_size` bytes (`sizeof *info`).
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_view_recovery(
    view: *const fspace_wal_view,
    info: *mut fspace_wal_recovery_info,
    info_size: usize,
) -> c_int {
    const F: &str = "fspace_wal_view_recovery";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "view", view)?,
                abi::sized_out(F, "info", info, info_size)?,
            )
        };
        let r = h.view.recovery();
        o.set(fspace_wal_recovery_info {
            created: r.created,
            segments: r.segments as u64,
            records: r.records,
            first_lsn: h.view.first_lsn().0,
            next_lsn: h.view.next_lsn().0,
            discarded_bytes: r.tail.as_ref().map_or(0, |t| t.discarded_bytes),
        });
        Ok(0)
    })
}

/// Writes to `*json` the whole look as JSON (the `recovery` object of
/// `fspace wal stat --json`: `read_only` true, the tail and why it ends there,
/// prepared and pooled segments, what a writable open would clean up, the
/// damage); owned by the view.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `view` is NULL or a live handle; `json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_view_json(
    view: *const fspace_wal_view,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_wal_view_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "view", view)?, out(F, "json", json)?) };
        o.set(h.json.as_ptr());
        Ok(0)
    })
}

/// Says whether reading stops at damage before the log's end (only a view
/// opened with `FSPACE_WAL_VIEW_TO_DAMAGE` can have some): returns 1 and
/// writes to `*message` where and what (the segment, the offset, the
/// reason; owned by the view), or returns 0 and leaves `*message` alone.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `view` is NULL or a live handle; `message` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_view_damage(
    view: *const fspace_wal_view,
    message: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_wal_view_damage";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "view", view)?, out(F, "message", message)?) };
        match &h.damage {
            Some(m) => {
                o.set(m.as_ptr());
                Ok(1)
            }
            None => Ok(0),
        }
    })
}

/// Starts reading the records of `view` from LSN `from` on (0: from the
/// oldest kept) to the end found when it was opened, each verified again
/// as it is read; read with `fspace_wal_reader_next`. The reader does not
/// depend on the view: either may be freed first. On success `*out` is a
/// new handle for `fspace_wal_reader_free`.
///
/// Errors: `-EINVAL` (NULL argument); `-ERANGE` (`from` was released).
///
/// # Safety
/// `view` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_view_reader_new(
    view: *const fspace_wal_view,
    from: u64,
    out: *mut *mut fspace_wal_reader,
) -> c_int {
    const F: &str = "fspace_wal_view_reader_new";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "view", view)?, crate::out(F, "out", out)?) };
        let reader = h.view.read_from(Lsn(from))?;
        o.set(Box::into_raw(Box::new(fspace_wal_reader {
            reader,
            current: None,
        })));
        Ok(0)
    })
}

/// Frees a view; NULL does nothing. Readers made from it stay usable.
///
/// # Safety
/// `view` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_view_free(view: *mut fspace_wal_view) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::free_handle(view) }
}

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_wal_recovery_info = 48,
    fspace_wal_release_info = 16,
}
