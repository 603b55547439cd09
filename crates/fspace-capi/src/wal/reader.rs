//! Reading a log's durable records, from a writable log or a view.

use super::{fspace_wal, fspace_wal_reader};
use crate::ffi::{arg, arg_mut, ffi, out};
use fspace::Lsn;
use std::ffi::{c_int, c_void};

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
        let (h, o) = unsafe { (arg(F, "wal", wal)?, crate::ffi::out(F, "out", out)?) };
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
    unsafe { crate::ffi::free_handle(reader) }
}
