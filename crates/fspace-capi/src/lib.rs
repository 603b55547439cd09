//! The C API of fspace: `libfspace.so`, `libfspace.a` and `fspace.h`.
//!
//! Every function is a thin shell over the Rust library ([`fspace`]): it
//! checks its pointers, converts C types, calls the library, and turns the
//! outcome into the contract below (stated once more in the header's
//! preamble, `include/fspace.h`):
//!
//! - Every symbol starts with `fspace_` (`FSPACE_` for constants).
//! - Functions return `0` on success and `-errno` on failure (`-ENOSPC`, ...);
//!   they never read or write the thread's `errno`. Predicates and iterators
//!   say so where they return more (`1`).
//! - `fspace_last_error()` returns the message of the last failure on the
//!   calling thread: the operation, the path, the range and the OS error.
//! - Objects are opaque handles made by `fspace_*_new` (or `fspace_*_open`,
//!   `fspace_grow`, ...) and released by `fspace_*_free`; `_free(NULL)` does
//!   nothing.
//! - Structs grow at their ends: an options struct starts with its size
//!   (set by its `_init`), an output struct is followed by its size
//!   argument; the library touches only the bytes the size covers
//!   (the `abi` module; docs/capi.md, "Structs that grow").
//! - Output pointers come last (an output struct's size after it) and are
//!   written only on success.
//! - A NULL pointer where one is required, an unknown constant, a negative
//!   offset or size, or a size that does not fit a file is `-EINVAL` (sizes
//!   past the largest file are `-EFBIG`); nothing is changed.
//! - No panic crosses the boundary: one is caught and returned as `-EIO`
//!   with a message naming the function.

#![allow(non_camel_case_types)]
#![deny(missing_docs)]

// Below the API: the helpers every exported function is made of (`ffi`:
// the call shell, argument checks, handles, strings, the last error) and
// how the C structs grow (`abi`). They import no module above them.
mod abi;
mod ffi;

// The API, one module per area. cbindgen writes the header's functions in
// the order it reads these modules: the library's own first
// (`fspace_last_error`, `fspace_version`), then the areas. (rustfmt sorts
// only unbroken runs of `mod` lines, hence the blank line.)
mod library;

mod extents;
mod grow_notes;
mod info;
mod reasons;
mod resize;
mod sparse;
mod untorn;
mod wal;

pub use extents::*;
pub use grow_notes::*;
pub use info::*;
pub use library::*;
pub use reasons::*;
pub use resize::*;
pub use sparse::*;
pub use untorn::*;
pub use wal::*;
// `untorn` and `wal` keep their types in their `mod.rs` (the ABI baseline
// names each C struct by its module path) and their functions in the files
// below it, which are re-exported here rather than by that `mod.rs`: the
// files import it.
pub use untorn::{answer::*, facts::*, write::*};
pub use wal::{log::*, reader::*, view::*};
