//! `libfspace-preload.so`: loaded with `LD_PRELOAD`, it replaces glibc's
//! `posix_fallocate` and `posix_fallocate64` in programs that cannot be
//! changed.
//!
//! glibc calls `fallocate(2)` and, where that returns `EOPNOTSUPP` (NFS,
//! FUSE such as sshfs, ext4 without extents), writes one byte into every
//! 4 KiB block of the range: 65,536 `pwrite`s for 256 MiB (docs/design.md, source S3). This
//! library keeps glibc's contract — the error number is returned, `errno`
//! is left as it was, the same argument checks give the same errors — but
//! falls back to [`fspace::allocate_range`]'s 1 MiB zero writes of the
//! holes in the range and of the part beyond EOF. Bytes already in the file
//! keep their values. Two differences from glibc: a `fallocate` interrupted
//! by a signal is restarted rather than returning `EINTR`, and a
//! write-only descriptor works where glibc's emulation (which reads)
//! returns `EBADF` (where holes can only be found by reading, as on sshfs,
//! the holes inside the file are then left).
//!
//! ```text
//! LD_PRELOAD=/usr/local/lib/libfspace-preload.so fallocate -x -l 256M file
//! FSPACE_PRELOAD_VERBOSE=1 LD_PRELOAD=... prog   # each call says what it did on stderr
//! ```

// posix_fallocate's off_t is 64 bits only on 64-bit targets; on 32-bit ones
// glibc's posix_fallocate takes a 32-bit off_t and this shim would misread
// its arguments.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("libfspace-preload.so supports 64-bit targets only (off_t must be 64 bits)");

use std::ffi::c_int;
use std::os::fd::BorrowedFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

const EBADF: c_int = 9;
const EIO: c_int = 5;

/// Reads the calling thread's `errno` location.
fn errno_location() -> *mut c_int {
    extern "C" {
        fn __errno_location() -> *mut c_int;
    }
    // SAFETY: glibc's thread-local errno; always valid.
    unsafe { __errno_location() }
}

/// `posix_fallocate` done as glibc's contract says, without its
/// one-byte-per-block emulation. Returns 0 or an error number.
pub fn posix_allocate(fd: c_int, offset: i64, len: i64) -> c_int {
    // The kernel answers a negative descriptor with EBADF before looking at
    // anything else; no BorrowedFd may be made of -1.
    if fd < 0 {
        return EBADF;
    }
    // Offsets and lengths go to the kernel as they are: it checks them
    // first (EINVAL for a negative offset or a length not positive, EFBIG
    // for an overflowing end), as glibc relies on.
    let (off, n) = (offset as u64, len as u64);
    // SAFETY: fd is not -1 and is the caller's for the duration of the call.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let path = PathBuf::from(format!("/proc/self/fd/{fd}"));
    let result = fspace::allocate_range(borrowed, &path, off, n);
    if std::env::var_os(VERBOSE_ENV).is_some() {
        tell(fd, offset, len, &result);
    }
    match result {
        Ok(_) => 0,
        Err(e) => e.raw_os_error().unwrap_or(EIO),
    }
}

/// Set (to anything) to have each call say what it did on stderr: the way
/// to see that the preload is loaded, and what it wrote.
pub const VERBOSE_ENV: &str = "FSPACE_PRELOAD_VERBOSE";

fn tell(fd: c_int, offset: i64, len: i64, result: &fspace::Result<fspace::RangeReport>) {
    use std::io::Write;
    let line = match result {
        Ok(r) => format!(
            "fspace-preload: posix_fallocate(fd {fd}, {offset}, {len}) on {}: {}, {} bytes of zeros written ({} ranges inside the file), {} write calls\n",
            std::fs::read_link(&r.path).unwrap_or_else(|_| r.path.clone()).display(),
            r.strategy,
            r.bytes_written,
            r.holes_filled,
            r.write_syscalls
        ),
        Err(e) => format!("fspace-preload: posix_fallocate(fd {fd}, {offset}, {len}): {e}\n"),
    };
    // One write; a failure to tell is not the caller's problem.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

fn guarded(fd: c_int, offset: i64, len: i64) -> c_int {
    let errno = errno_location();
    // SAFETY: valid thread-local location.
    let saved = unsafe { *errno };
    let rc = catch_unwind(AssertUnwindSafe(|| posix_allocate(fd, offset, len))).unwrap_or(EIO);
    // SAFETY: as above. posix_fallocate reports through its return value.
    unsafe { *errno = saved };
    rc
}

/// `posix_fallocate(3)`: makes `offset..offset + len` of `fd` allocated.
/// Returns 0 or an error number; `errno` is unchanged.
#[no_mangle]
pub extern "C" fn posix_fallocate(fd: c_int, offset: i64, len: i64) -> c_int {
    guarded(fd, offset, len)
}

/// `posix_fallocate64(3)`: the same on 64-bit offsets.
#[no_mangle]
pub extern "C" fn posix_fallocate64(fd: c_int, offset: i64, len: i64) -> c_int {
    guarded(fd, offset, len)
}
