//! The untorn write itself, and the check of a range's layout for it.

use super::{fspace_untorn_layout, layout_to_c};
use crate::abi;
use crate::ffi::{bytes_arg, end_arg, fd_arg, ffi, offset_arg, path_arg, Failure};
use fspace::untorn;
use std::ffi::{c_char, c_int, c_void};

/// Flag of `fspace_write_untorn`: the write is durable when the call
/// returns (`RWF_DSYNC`).
pub const FSPACE_UNTORN_DSYNC: u32 = 1;

/// Writes the `len` bytes at `buf` at `offset` of `fd` as one untorn write:
/// `pwritev2(RWF_ATOMIC)`, with `RWF_DSYNC` when `flags` has
/// `FSPACE_UNTORN_DSYNC`. `fd` must be open for writing with `O_DIRECT`,
/// `buf` aligned as `O_DIRECT` needs (a page-aligned buffer always is).
/// After a power cut the range holds all of `buf` or all of what it held
/// before, never a mix, once the write is durable (`FSPACE_UNTORN_DSYNC`,
/// or a later `fdatasync`). `path` names the file in messages; NULL uses
/// the file `/proc/self/fd/FD` links to (a `readlink` and two `stat`s more
/// per call: pass the name when writing many pages).
///
/// The file's limits (`statx`) and the descriptor's flags are checked
/// first; a write they do not take is refused before anything is issued,
/// and never made as a plain write. `fspace_last_error()` names the limit
/// that fails.
///
/// Errors: `-EOPNOTSUPP` where untorn writes are not supported ("not
/// supported here": btrfs, tmpfs, FUSE, ext4 on a device without atomic
/// writes) or `fd` is not open with `O_DIRECT`; `-EINVAL` for a size that
/// is not a power of two, below the smallest or above the largest unit, an
/// offset that is not a multiple of the size, a buffer address `O_DIRECT`
/// cannot use, an unknown flag, a negative offset or a NULL `buf` with
/// `len` > 0; `-EFBIG` (`offset + len` past the largest file); `-EBADF`;
/// the errors of `pwritev2` (`-EIO` for a short write, which the kernel
/// never makes of an untorn one).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `buf` is NULL or readable for
/// `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn fspace_write_untorn(
    fd: c_int,
    path: *const c_char,
    buf: *const c_void,
    len: usize,
    offset: i64,
    flags: u32,
) -> c_int {
    const F: &str = "fspace_write_untorn";
    ffi(F, || {
        let borrowed = fd_arg(F, fd)?;
        let path = if path.is_null() {
            crate::ffi::fd_path(fd)
        } else {
            // SAFETY: non-NULL, NUL-terminated by the caller's promise.
            unsafe { path_arg(F, "path", path)? }
        };
        // SAFETY: NULL or readable for `len` bytes by the caller's promise.
        let data = unsafe { bytes_arg(F, "buf", buf.cast(), len)? };
        let offset = offset_arg(F, "offset", offset)?;
        end_arg(F, offset, data.len() as u64)?;
        if flags & !FSPACE_UNTORN_DSYNC != 0 {
            return Err(Failure::invalid(F, format!("unknown flags {flags:#x}")));
        }
        untorn::write_untorn(
            borrowed,
            &path,
            data,
            offset,
            flags & FSPACE_UNTORN_DSYNC != 0,
        )?;
        Ok(0)
    })
}

/// Checks every `unit`-aligned unit of `offset..offset + len` of the open
/// file `fd` (the range rounded inwards to whole units): in one extent
/// (neighbours that continue each other on the device count as one),
/// written, not shared, with a physical start that `unit` divides: what
/// the hardware path of untorn writes needs (XFS takes its slower software
/// path otherwise; ext4 refuses the write). Uses `FIEMAP` with
/// `FIEMAP_FLAG_SYNC`, so dirty data is allocated first. `path` names the
/// file in messages; NULL uses the file `/proc/self/fd/FD` links to.
///
/// Refused first, with the reason in `fspace_last_error`, where the file
/// takes no untorn writes of `unit` (a layout that passes there would say
/// nothing about torn writes): `-EOPNOTSUPP` where it takes none at all
/// (ext4 on a device without atomic writes, btrfs, tmpfs, FUSE),
/// `-EINVAL` for a unit outside its `statx` limits.
///
/// Errors: `-EINVAL` (NULL `layout`, negative offset or length, a unit that
/// is not a power of two of at least 512 bytes, or outside the file's
/// limits); `-EFBIG`; `-EBADF`; `-EOPNOTSUPP` (no untorn writes here, as
/// above; no `FIEMAP`), and the other errors of `FS_IOC_FIEMAP`.
///
/// `-EINVAL` also for `layout_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `layout` is NULL or writable for `layout_size` bytes (`sizeof *layout`).
#[no_mangle]
pub unsafe extern "C" fn fspace_check_untorn_layout(
    fd: c_int,
    path: *const c_char,
    offset: i64,
    len: i64,
    unit: u32,
    layout: *mut fspace_untorn_layout,
    layout_size: usize,
) -> c_int {
    const F: &str = "fspace_check_untorn_layout";
    ffi(F, || {
        let borrowed = fd_arg(F, fd)?;
        // SAFETY: NULL or writable by the caller's promise.
        let o = unsafe { abi::sized_out(F, "layout", layout, layout_size)? };
        let path = if path.is_null() {
            crate::ffi::fd_path(fd)
        } else {
            // SAFETY: non-NULL, NUL-terminated by the caller's promise.
            unsafe { path_arg(F, "path", path)? }
        };
        let offset = offset_arg(F, "offset", offset)?;
        let len = offset_arg(F, "length", len)?;
        let end = end_arg(F, offset, len)?;
        let c = untorn::check_layout(borrowed, &path, offset..end, u64::from(unit))?;
        o.set(layout_to_c(&c));
        Ok(0)
    })
}
