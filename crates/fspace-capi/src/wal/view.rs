//! The read-only look at a log: `fspace_wal_view_*`.

use super::{fspace_wal_reader, fspace_wal_recovery_info, fspace_wal_view};
use crate::abi;
use crate::ffi::{arg, c_string, ffi, json_string, out, path_arg, Failure};
use fspace::wal::WalView;
use fspace::Lsn;
use std::ffi::{c_char, c_int};

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
        let (dir, o) = unsafe { (path_arg(F, "dir", dir)?, crate::ffi::out(F, "out", out)?) };
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
/// `-EINVAL` also for `info_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
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
            reserved: [0; 7],
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
        let (h, o) = unsafe { (arg(F, "view", view)?, crate::ffi::out(F, "out", out)?) };
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
    unsafe { crate::ffi::free_handle(view) }
}
