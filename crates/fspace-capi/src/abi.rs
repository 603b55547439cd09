//! How the C structs grow without breaking programs built against an older
//! header (docs/capi.md, "Structs that grow").
//!
//! - An **options struct** (`fspace_grow_options`, `fspace_copy_options`,
//!   `fspace_wal_options`) starts with `uint32_t size`, which its `_init`
//!   function sets to the `sizeof` the caller passes: the size of the
//!   struct the caller was compiled with. The library reads only the bytes
//!   that size covers; a field past them keeps its default. Bytes past the
//!   library's own struct (a program built against a newer header) must be
//!   zero: a field the library does not know, set, is `-E2BIG`, as
//!   `clone3(2)` and `sched_setattr(2)` answer.
//! - An **output struct** is filled by a function that takes its `sizeof`
//!   after the pointer: the library writes only that many bytes, and zeros
//!   past its own struct.
//!
//! A size below the struct's first growable version is `-EINVAL` (a
//! program that forgot the `_init`, or passed a pointer's size).
//!
//! The ABI test's build (cargo feature `abi-grown-test`, made by
//! ci/test.sh) plays a later library whose every struct gained a trailing
//! `uint64_t` that it knows, with its default 0 and no effect: it counts
//! those 8 bytes (after the struct, at its next 8-byte boundary, where a C
//! compiler puts a new `uint64_t`) as its own, reads them without refusing
//! and writes zeros there. C programs built against the header in the tree
//! then run against it (crates/fspace-capi/tests/c_api.rs).

use crate::ffi::{CResult, Failure};
use std::mem::{size_of, MaybeUninit};

pub(crate) const E2BIG: i32 = 7;

/// How many bytes of `T` this build of the library knows: its size, or in
/// the ABI test's build that and a trailing `uint64_t`.
const fn known<T>() -> usize {
    if cfg!(feature = "abi-grown-test") {
        size_of::<T>().next_multiple_of(8) + 8
    } else {
        size_of::<T>()
    }
}

/// The largest `size` a caller may name: far more than any struct here will
/// grow to, small enough that a garbage value is refused before it is used
/// as a length.
const MAX_SIZE: usize = 4096;

/// An options struct: `#[repr(C)]`, a `u32` size first, and its library-side
/// twin `Raw` (the same layout, `bool`s read as bytes: C may put any byte in
/// a `bool`, which Rust may not read as one).
///
/// # Safety
/// `Self` and `Raw` are `#[repr(C)]` with the same size and field offsets,
/// start with `size: u32`, and every bit pattern of `Raw` is valid
/// (integers only).
pub(crate) unsafe trait Options: Copy {
    /// The library's view of the caller's bytes.
    type Raw: Copy;
    /// Bytes of the struct's first growable version: a smaller `size` is
    /// refused.
    const FIRST: usize;
    /// The function that sets the defaults: named in errors.
    const INIT: &'static str;
    /// The struct's `reserved` bytes (offset, length): they must be zero,
    /// as `io_uring_params.resv` must, so that no program can come to
    /// depend on a library ignoring them.
    const RESERVED: &'static [(usize, usize)];
    /// The defaults (`size` is set by the caller of this).
    fn defaults() -> Self;
}

fn check_size(func: &str, what: &str, size: usize, first: usize, init: &str) -> CResult<()> {
    if size < first || size > MAX_SIZE {
        return Err(Failure::invalid(
            func,
            format!(
                "{what} size {size} is not the size of any version of the struct \
                 (at least {first} bytes, at most {MAX_SIZE}): pass sizeof the struct{init}"
            ),
        ));
    }
    Ok(())
}

/// `_init`: writes the defaults into the caller's struct of `size` bytes
/// (the fields it covers; zeros past the library's struct) and `size` into
/// its first field.
///
/// # Safety
/// `p` is NULL or writable for `size` bytes.
pub(crate) unsafe fn init<T: Options>(func: &str, p: *mut T, size: usize) -> CResult<()> {
    if p.is_null() {
        return Err(Failure::invalid(func, "options is NULL"));
    }
    check_size(func, "options", size, T::FIRST, "")?;
    let d = T::defaults();
    let ours = size_of::<T>();
    let bytes = p.cast::<u8>();
    // SAFETY: `p` is writable for `size` bytes (the caller's promise); the
    // copy is of at most `size` bytes of a value of `ours` bytes (an
    // untyped copy: padding bytes may be anything, as in C). Past `ours`,
    // zeros: the defaults of fields this library may know (the ABI test's
    // build) and of those it does not.
    unsafe {
        bytes.write_bytes(0, size);
        std::ptr::copy_nonoverlapping((&raw const d).cast::<u8>(), bytes, size.min(ours));
        // The caller's size, not ours: the struct says how large it is.
        p.cast::<u32>().write_unaligned(size as u32);
    }
    Ok(())
}

/// Reads the caller's options struct: `None` for NULL (the defaults), else
/// the defaults overlaid with the bytes its `size` covers.
///
/// # Safety
/// `p` is NULL, or readable for its first 4 bytes and for as many bytes as
/// the `size` they hold.
pub(crate) unsafe fn read<T: Options>(func: &str, p: *const T) -> CResult<Option<T::Raw>> {
    const {
        assert!(size_of::<T>() == size_of::<T::Raw>());
    }
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: readable by the caller's promise.
    let size = unsafe { p.cast::<u32>().read_unaligned() } as usize;
    check_size(
        func,
        "options",
        size,
        T::FIRST,
        &format!(" and set the defaults with {}", T::INIT),
    )?;
    let ours = size_of::<T>();
    let known = known::<T>();
    if size > known {
        // SAFETY: readable for `size` bytes by the caller's promise.
        let tail = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(known), size - known) };
        if let Some(at) = tail.iter().position(|b| *b != 0) {
            return Err(Failure::new(
                E2BIG,
                format!(
                    "{func}: options set a field this library does not know (byte {} of {size}; \
                     libfspace {} knows {known}): Argument list too long (os error 7)",
                    known + at,
                    env!("CARGO_PKG_VERSION"),
                ),
            ));
        }
    }
    let d = T::defaults();
    let mut raw = MaybeUninit::<T::Raw>::uninit();
    // SAFETY: same size (asserted above); the defaults' bytes are a valid
    // `Raw` (its `bool`s are 0 or 1 as bytes), and then at most `ours`
    // bytes of the caller's struct, readable by its promise, over them: any
    // bytes are a valid `Raw`.
    unsafe {
        std::ptr::copy_nonoverlapping((&raw const d).cast::<u8>(), raw.as_mut_ptr().cast(), ours);
        std::ptr::copy_nonoverlapping(p.cast::<u8>(), raw.as_mut_ptr().cast(), size.min(ours));
    }
    // SAFETY: all `ours` bytes of `raw` were written by the untyped copies
    // above (padding or not), so they may be read as bytes.
    let bytes = unsafe { std::slice::from_raw_parts(raw.as_ptr().cast::<u8>(), ours) };
    for &(at, len) in T::RESERVED {
        if bytes[at..at + len].iter().any(|b| *b != 0) {
            return Err(Failure::invalid(
                func,
                format!(
                    "options hold nonzero reserved bytes (at {at}..{}): set the struct with {}",
                    at + len,
                    T::INIT
                ),
            ));
        }
    }
    // SAFETY: every byte is written (above) and any bytes are a valid `Raw`
    // (integers only, the trait's promise).
    let raw = unsafe { raw.assume_init() };
    Ok(Some(raw))
}

/// An output struct of `size` bytes the caller passed, written only on
/// success ([`SizedOut::set`]).
pub(crate) struct SizedOut<T> {
    p: *mut T,
    size: usize,
}

impl<T> SizedOut<T> {
    /// Writes `value`: as many of its bytes as the caller's struct holds,
    /// zeros past the library's struct (also where the ABI test's build
    /// counts a field of its own: its value is 0).
    pub fn set(&self, value: T) {
        let ours = size_of::<T>();
        let bytes = self.p.cast::<u8>();
        // SAFETY: `p` is non-NULL and writable for `size` bytes (checked in
        // `sized_out`, the caller's promise); the copy is untyped.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&raw const value).cast::<u8>(),
                bytes,
                self.size.min(ours),
            );
            if self.size > ours {
                bytes.add(ours).write_bytes(0, self.size - ours);
            }
        }
    }
}

/// An output struct: its size in the first version that can grow.
pub(crate) trait Output {
    /// Bytes of the struct's first growable version: a smaller size is
    /// refused.
    const FIRST: usize;
}

/// Declares output structs with their size in the first release that can
/// grow, and checks that each still has it: whoever adds a field to one
/// fails the build here, and then keeps `FIRST` (programs built with that
/// size keep working) and checks the new size beside it.
macro_rules! released {
    ($($t:ty = $n:expr),* $(,)?) => {
        $(
            impl $crate::abi::Output for $t {
                const FIRST: usize = $n;
            }
            const _: () = assert!(std::mem::size_of::<$t>() == $n);
        )*
    };
}
pub(crate) use released;

/// Checks an output struct and the `size` the caller passed for it.
///
/// # Safety
/// `p` is NULL or writable for `size` bytes.
pub(crate) unsafe fn sized_out<T: Output>(
    func: &str,
    name: &str,
    p: *mut T,
    size: usize,
) -> CResult<SizedOut<T>> {
    if p.is_null() {
        return Err(Failure::invalid(func, format!("{name} is NULL")));
    }
    check_size(func, name, size, T::FIRST, "")?;
    Ok(SizedOut { p, size })
}

/// As [`sized_out`] for an optional output: NULL is `None`.
///
/// # Safety
/// `p` is NULL or writable for `size` bytes.
pub(crate) unsafe fn opt_sized_out<T: Output>(
    func: &str,
    name: &str,
    p: *mut T,
    size: usize,
) -> CResult<Option<SizedOut<T>>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded promise.
    unsafe { sized_out(func, name, p, size) }.map(Some)
}
