//! The helpers every exported function is made of, in the room below the
//! modules of the API (which import them; nothing here imports those):
//!
//! - the call shell, `ffi`: the caller's `errno` kept, a panic caught, a
//!   `Failure` turned into `-errno` with its message kept as the thread's
//!   last error (which `fspace_last_error` returns);
//! - handles: `free_handle`, the body of every `_free`;
//! - argument checks: output pointers (`out`, `opt_out`), handles (`arg`,
//!   `arg_mut`), paths, buffers, offsets and descriptors, each refused as
//!   the contract in the crate's documentation says;
//! - strings a handle owns (`c_string`, `json_string`).
//!
//! Nothing here is exported: the crate root re-exports the API modules
//! only.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const EINVAL: i32 = 22;
const EIO: i32 = 5;
const EFBIG: i32 = 27;
const EBADF: i32 = 9;

/// The largest file length or offset the C API accepts (`INT64_MAX`).
const MAX_LEN: u64 = i64::MAX as u64;

/// A failed call: its errno and its message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub errno: i32,
    pub message: String,
}

impl Failure {
    /// A failure with `errno` and a message.
    pub fn new(errno: i32, message: impl Into<String>) -> Failure {
        Failure {
            errno,
            message: message.into(),
        }
    }

    /// An invalid argument: `-EINVAL`, naming the function and the argument.
    pub fn invalid(func: &str, what: impl std::fmt::Display) -> Failure {
        Failure::new(
            EINVAL,
            format!("{func}: {what}: Invalid argument (os error 22)"),
        )
    }
}

impl From<fspace::Error> for Failure {
    fn from(e: fspace::Error) -> Failure {
        Failure {
            errno: e.raw_os_error().unwrap_or(EIO),
            message: e.to_string(),
        }
    }
}

pub(crate) type CResult<T> = Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// The calling thread's last failure message, as `fspace_last_error`
/// returns it: empty if no call failed yet, or once the thread's storage is
/// gone (a call from a TLS destructor).
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

fn set_last_error(message: &str) {
    // Interior NULs cannot be in a C string; show them as spaces.
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // During thread teardown (a call from a TLS destructor) the storage may
    // be gone: the message is dropped rather than panicking.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
}

/// Puts the thread's `errno` back as it was when dropped: the contract says
/// no function reads or sets it, but the library's own calls (through `std`)
/// may set it on the way.
struct KeepErrno(c_int);

extern "C" {
    fn __errno_location() -> *mut c_int;
}

impl KeepErrno {
    fn save() -> KeepErrno {
        // SAFETY: glibc's thread-local errno location is always valid.
        KeepErrno(unsafe { *__errno_location() })
    }
}

impl Drop for KeepErrno {
    fn drop(&mut self) {
        // SAFETY: as in `save`.
        unsafe { *__errno_location() = self.0 };
    }
}

/// Runs the body of exported function `func`: its result becomes `0` (or
/// the non-negative value it returns) or `-errno` with the message kept for
/// `fspace_last_error`; a panic becomes `-EIO`.
pub(crate) fn ffi(func: &str, body: impl FnOnce() -> CResult<c_int>) -> c_int {
    let _errno = KeepErrno::save();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(f)) => {
            set_last_error(&f.message);
            if f.errno > 0 {
                -f.errno
            } else {
                -EIO
            }
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            set_last_error(&format!(
                "{func}: internal error (panic: {what}); please report it: Input/output error (os error 5)"
            ));
            -EIO
        }
    }
}

/// Frees a handle made by `Box::into_raw` (the body of every `_free`):
/// NULL does nothing, and a panic in a destructor is caught and dropped.
///
/// # Safety
/// `handle` is NULL or came from `Box::into_raw` and is not used afterwards.
pub(crate) unsafe fn free_handle<T>(handle: *mut T) {
    if handle.is_null() {
        return;
    }
    let _errno = KeepErrno::save();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's promise.
        drop(unsafe { Box::from_raw(handle) });
    }));
}

/// A checked output pointer. Written with `ptr::write`, never through a
/// `&mut`: the caller's memory may be uninitialised, and two outputs may
/// alias.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// Writes `value` to the caller's output.
    pub fn set(&self, value: T) {
        // SAFETY: non-NULL (checked in `out`/`opt_out`) and writable by the
        // caller's promise.
        unsafe { self.0.write(value) }
    }
}

/// Checks a required output pointer.
///
/// # Safety
/// `p` is NULL or valid for writes of `T`.
pub(crate) unsafe fn out<T>(func: &str, name: &str, p: *mut T) -> CResult<Out<T>> {
    if p.is_null() {
        Err(Failure::invalid(func, format!("{name} is NULL")))
    } else {
        Ok(Out(p))
    }
}

/// Checks an optional output pointer: `None` when NULL.
///
/// # Safety
/// `p` is NULL or valid for writes of `T`.
pub(crate) unsafe fn opt_out<T>(p: *mut T) -> Option<Out<T>> {
    (!p.is_null()).then_some(Out(p))
}

/// Returns the `&T` behind a required input pointer (a handle).
///
/// # Safety
/// `p` is NULL or points to a live `T`.
pub(crate) unsafe fn arg<'a, T>(func: &str, name: &str, p: *const T) -> CResult<&'a T> {
    // SAFETY: the caller promises `p` is NULL or valid.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid(func, format!("{name} is NULL")))
}

/// Returns the `&mut T` behind a required handle.
///
/// # Safety
/// `p` is NULL or points to a live `T` not used by another thread now.
pub(crate) unsafe fn arg_mut<'a, T>(func: &str, name: &str, p: *mut T) -> CResult<&'a mut T> {
    // SAFETY: the caller promises `p` is NULL or valid.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::invalid(func, format!("{name} is NULL")))
}

/// Returns the path in a required NUL-terminated string.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn path_arg(func: &str, name: &str, p: *const c_char) -> CResult<PathBuf> {
    if p.is_null() {
        return Err(Failure::invalid(func, format!("{name} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's promise.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    Ok(Path::new(OsStr::from_bytes(bytes)).to_path_buf())
}

/// Returns the bytes of a required buffer; NULL is allowed when `len` is 0.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` bytes.
pub(crate) unsafe fn bytes_arg<'a>(
    func: &str,
    name: &str,
    p: *const u8,
    len: usize,
) -> CResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::invalid(func, format!("{name} is NULL")));
    }
    if len as u64 > MAX_LEN || len > isize::MAX as usize {
        // No buffer is that large; a slice of it would be undefined (on a
        // 32-bit target `MAX_LEN as usize` would wrap: compare as u64, and
        // against the largest slice).
        return Err(Failure::new(
            EFBIG,
            format!("{func}: {name} length {len} is past the largest file size: File too large (os error 27)"),
        ));
    }
    // SAFETY: non-NULL and valid for `len` bytes by the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Checks a C offset or length: not negative (`-EINVAL`).
pub(crate) fn offset_arg(func: &str, name: &str, v: i64) -> CResult<u64> {
    u64::try_from(v).map_err(|_| Failure::invalid(func, format!("{name} {v} is negative")))
}

/// Checks that `offset + len` fits a file (`-EFBIG` otherwise).
pub(crate) fn end_arg(func: &str, offset: u64, len: u64) -> CResult<u64> {
    match offset.checked_add(len) {
        Some(end) if end <= MAX_LEN => Ok(end),
        _ => Err(Failure::new(
            EFBIG,
            format!("{func}: offset {offset} + length {len} is past the largest file size: File too large (os error 27)"),
        )),
    }
}

/// Checks a descriptor number: negative ones are `-EBADF` (the kernel's
/// answer), so that no `BorrowedFd` is ever made of -1.
pub(crate) fn fd_arg(func: &str, fd: c_int) -> CResult<std::os::fd::BorrowedFd<'static>> {
    if fd < 0 {
        return Err(Failure::new(
            EBADF,
            format!("{func}: descriptor {fd}: Bad file descriptor (os error 9)"),
        ));
    }
    // SAFETY: fd is not -1; the caller keeps it open for the duration of the
    // call (or of the handle that keeps it, as documented there). A closed
    // number only makes the syscalls fail with EBADF.
    Ok(unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) })
}

/// Names an open descriptor when the caller gave no path: the file it
/// refers to (`/proc/self/fd/N`'s target), so that messages name it and the
/// `auto` policy measures its filesystem in its directory; the `/proc` link
/// itself when the target cannot be read or is gone.
pub(crate) fn fd_path(fd: c_int) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let link = PathBuf::from(format!("/proc/self/fd/{fd}"));
    // The target counts only if it is the same file: not another one that
    // happens to have that name (a deleted file's "NAME (deleted)", another
    // mount namespace).
    let same = |target: &Path| match (std::fs::metadata(&link), std::fs::metadata(target)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    match std::fs::read_link(&link) {
        Ok(target) if target.is_absolute() && same(&target) => target,
        _ => link,
    }
}

/// Makes a C string owned by a handle (NULs shown as spaces).
pub(crate) fn c_string(s: impl Into<String>) -> CString {
    CString::new(s.into().replace('\0', " ")).unwrap_or_default()
}

/// Makes a C string of a value's JSON (as `fspace ... --json` prints it).
pub(crate) fn json_string<T: serde::Serialize>(func: &str, v: &T) -> CResult<CString> {
    serde_json::to_string_pretty(v)
        .map(c_string)
        .map_err(|e| Failure::new(EIO, format!("{func}: JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: last_error returns a valid C string.
        unsafe { CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_eio_with_a_message() {
        let rc = ffi("fspace_test", || panic!("boom"));
        assert_eq!(rc, -EIO);
        assert!(
            last().contains("fspace_test: internal error (panic: boom)"),
            "{}",
            last()
        );
    }

    #[test]
    fn failures_become_negative_errno_and_keep_the_message() {
        let rc = ffi("fspace_test", || Err(Failure::new(28, "grow(x): No space")));
        assert_eq!(rc, -28);
        assert_eq!(last(), "grow(x): No space");
        assert_eq!(ffi("fspace_test", || Ok(0)), 0);
        assert_eq!(
            last(),
            "grow(x): No space",
            "success leaves the message alone"
        );
    }

    #[test]
    fn offsets_and_ends_are_checked() {
        assert_eq!(offset_arg("f", "offset", -1).unwrap_err().errno, EINVAL);
        assert_eq!(offset_arg("f", "offset", 7).unwrap(), 7);
        assert_eq!(end_arg("f", MAX_LEN, 1).unwrap_err().errno, EFBIG);
        assert_eq!(end_arg("f", u64::MAX, 2).unwrap_err().errno, EFBIG);
        assert_eq!(end_arg("f", 1, 2).unwrap(), 3);
        assert_eq!(fd_arg("f", -1).unwrap_err().errno, EBADF);
    }
}
