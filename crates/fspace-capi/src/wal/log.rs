//! The writable log's functions: open, close, append and commit, sync,
//! the LSNs, what recovery found, and releasing old segments.

use super::{
    fspace_wal, fspace_wal_options, fspace_wal_recovery_info, fspace_wal_release_info, wal_options,
};
use crate::abi;
use crate::ffi::{arg, bytes_arg, ffi, out, path_arg};
use fspace::{Lsn, Wal};
use std::ffi::{c_char, c_int, c_void};

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
/// Options (`options` not NULL): `-EINVAL` for a struct that `fspace_wal_options_init`
/// did not set (a `size` that is no version of it, nonzero `reserved`
/// bytes), `-E2BIG` for a field this library does not know, set (a
/// program built against a newer header); nothing is done.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `options` is NULL or
/// readable for the `size` bytes its first field names; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_open(
    dir: *const c_char,
    options: *const fspace_wal_options,
    out: *mut *mut fspace_wal,
) -> c_int {
    const F: &str = "fspace_wal_open";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (dir, o) = unsafe { (path_arg(F, "dir", dir)?, crate::ffi::out(F, "out", out)?) };
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
    unsafe { crate::ffi::free_handle(wal) }
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
        if let Some(o) = unsafe { crate::ffi::opt_out(lsn) } {
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
        if let Some(o) = unsafe { crate::ffi::opt_out(lsn) } {
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
        if let Some(o) = unsafe { crate::ffi::opt_out(lsn) } {
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
/// `-EINVAL` also for `info_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
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
            reserved: [0; 7],
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
/// `-EINVAL` also for `info_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
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
