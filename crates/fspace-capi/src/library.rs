//! The library's own functions, about no handle: `fspace_last_error` and
//! `fspace_version`.

use crate::ffi::last_error;
use std::ffi::{c_char, CStr};

/// Returns the message of the last failed fspace call on this thread, or
/// an empty string if none failed yet: the operation, the path and the OS
/// error, e.g. `fallocate(wal/000000000003.seg, 0..16MiB): No space left on
/// device (os error 28)`. Successful calls leave it alone. The string stays
/// valid until the next failing fspace call on the same thread.
#[no_mangle]
pub extern "C" fn fspace_last_error() -> *const c_char {
    last_error()
}

/// Returns the version of the library, e.g. `"0.1.0"` (static storage).
#[no_mangle]
pub extern "C" fn fspace_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}
