//! Untorn (atomic) writes: `fspace_untorn_*`, `fspace_write_untorn`,
//! `fspace_check_untorn_layout`.
//!
//! The facts and the answer are handles, like `fspace_fs_info`: measuring a
//! filesystem writes a scratch file and tries `RWF_ATOMIC` writes, so it is
//! done once and then asked as many questions (page sizes, I/O paths) as
//! the caller has. The write call itself is the library's `write_untorn`:
//! it checks the file's limits first and never falls back to a plain write.

use crate::abi;
use crate::{
    arg, bytes_arg, c_string, end_arg, fd_arg, ffi, json_string, offset_arg, out, path_arg,
    CResult, Failure,
};
use fspace::untorn::{
    self, Answer, IoPath, LayoutCheck, Limits, Source, UnitFault, UntornFacts, WritePath,
};
use std::ffi::{c_char, c_int, c_void, CString};

/// What `statx(STATX_WRITE_ATOMIC)` reports for a file
/// (`FSPACE_UNTORN_*`). "Not reported" and "zero" are distinct facts: the
/// first says nothing about the device, the second says the filesystem
/// looked and found no way.
pub type fspace_untorn_state = u32;
/// `statx` itself failed: nothing is known (`statx_errno` says why).
pub const FSPACE_UNTORN_UNKNOWN: fspace_untorn_state = 0;
/// The filesystem does not report untorn-write limits (btrfs, tmpfs, FUSE,
/// NFS; every filesystem before Linux 6.11): `RWF_ATOMIC` fails there.
pub const FSPACE_UNTORN_NOT_REPORTED: fspace_untorn_state = 1;
/// Reported with no unit: the filesystem cannot make this file's writes
/// untorn (ext4 on a device without atomic writes).
pub const FSPACE_UNTORN_ZERO: fspace_untorn_state = 2;
/// Reported with limits: a write of a power-of-two size between
/// `unit_min` and `unit_max`, at an offset that is a multiple of its size,
/// through `O_DIRECT`, is untorn when it asks (`RWF_ATOMIC`).
pub const FSPACE_UNTORN_SUPPORTED: fspace_untorn_state = 3;

/// Where a file's untorn-write support comes from
/// (`FSPACE_UNTORN_SOURCE_*`).
pub type fspace_untorn_source = u32;
/// None: untorn writes are not available.
pub const FSPACE_UNTORN_SOURCE_NONE: fspace_untorn_source = 0;
/// The device only (ext4, XFS up to the device's unit).
pub const FSPACE_UNTORN_SOURCE_DEVICE: fspace_untorn_source = 1;
/// The filesystem's software path only (XFS with reflink on a device
/// without atomic writes).
pub const FSPACE_UNTORN_SOURCE_FILESYSTEM: fspace_untorn_source = 2;
/// The device up to `hardware_max`, the filesystem's software path above
/// it (XFS).
pub const FSPACE_UNTORN_SOURCE_DEVICE_AND_FILESYSTEM: fspace_untorn_source = 3;
/// Reported by a filesystem whose path fspace does not know.
pub const FSPACE_UNTORN_SOURCE_UNKNOWN: fspace_untorn_source = 4;

/// How an untorn write is carried out (`FSPACE_WRITE_PATH_*`).
pub type fspace_write_path = u32;
/// Not at all: the write is not untorn.
pub const FSPACE_WRITE_PATH_NONE: fspace_write_path = 0;
/// The device writes it atomically in one command.
pub const FSPACE_WRITE_PATH_HARDWARE: fspace_write_path = 1;
/// The filesystem writes it out of place and switches the mapping in one
/// transaction (XFS): every write allocates blocks and commits the log.
pub const FSPACE_WRITE_PATH_SOFTWARE: fspace_write_path = 2;
/// Untorn, by a path fspace does not know.
pub const FSPACE_WRITE_PATH_UNKNOWN: fspace_write_path = 3;

/// How pages are written (`FSPACE_IO_*`).
pub type fspace_io_path = u32;
/// `O_DIRECT` (InnoDB's default on Linux).
pub const FSPACE_IO_DIRECT: fspace_io_path = 0;
/// Through the page cache (PostgreSQL's data pages): never untorn.
pub const FSPACE_IO_BUFFERED: fspace_io_path = 1;

/// The limit or rule that makes a write not untorn
/// (`FSPACE_UNTORN_LIMIT_*`), in the order the kernel checks them.
pub type fspace_untorn_limit = u32;
/// None: the write is untorn.
pub const FSPACE_UNTORN_LIMIT_NONE: fspace_untorn_limit = 0;
/// The file's limits allow no untorn write (`EOPNOTSUPP`).
pub const FSPACE_UNTORN_LIMIT_NOT_SUPPORTED: fspace_untorn_limit = 1;
/// Not through `O_DIRECT`: the kernel makes no buffered write untorn
/// (`EOPNOTSUPP`).
pub const FSPACE_UNTORN_LIMIT_BUFFERED: fspace_untorn_limit = 2;
/// The size is not a power of two (`EINVAL`).
pub const FSPACE_UNTORN_LIMIT_NOT_POWER_OF_TWO: fspace_untorn_limit = 3;
/// The size is below `unit_min` (`EINVAL`).
pub const FSPACE_UNTORN_LIMIT_BELOW_MINIMUM: fspace_untorn_limit = 4;
/// The size is above `unit_max` (`EINVAL`).
pub const FSPACE_UNTORN_LIMIT_ABOVE_MAXIMUM: fspace_untorn_limit = 5;
/// The offset is not a multiple of the size (`EINVAL`).
pub const FSPACE_UNTORN_LIMIT_MISALIGNED: fspace_untorn_limit = 6;
/// The buffer's address is not aligned as `O_DIRECT` needs (`EINVAL`).
pub const FSPACE_UNTORN_LIMIT_BUFFER_ADDRESS: fspace_untorn_limit = 7;
/// The limits allowed it, but the kernel refused a trial write of it on a
/// scratch file.
pub const FSPACE_UNTORN_LIMIT_REFUSED_BY_KERNEL: fspace_untorn_limit = 8;
/// A limit this header does not know (a newer library): `limit_name` has
/// its name.
pub const FSPACE_UNTORN_LIMIT_OTHER: fspace_untorn_limit = 9;

/// Flag of `fspace_write_untorn`: the write is durable when the call
/// returns (`RWF_DSYNC`).
pub const FSPACE_UNTORN_DSYNC: u32 = 1;

pub(crate) fn state_to_c(l: &Limits) -> fspace_untorn_state {
    match l {
        Limits::NotReported => FSPACE_UNTORN_NOT_REPORTED,
        Limits::Zero => FSPACE_UNTORN_ZERO,
        Limits::Supported { .. } => FSPACE_UNTORN_SUPPORTED,
        // `Unknown`, and any state a newer library adds: nothing is known.
        _ => FSPACE_UNTORN_UNKNOWN,
    }
}

fn source_to_c(s: Source) -> fspace_untorn_source {
    match s {
        Source::None => FSPACE_UNTORN_SOURCE_NONE,
        Source::Device => FSPACE_UNTORN_SOURCE_DEVICE,
        Source::Filesystem => FSPACE_UNTORN_SOURCE_FILESYSTEM,
        Source::DeviceAndFilesystem => FSPACE_UNTORN_SOURCE_DEVICE_AND_FILESYSTEM,
        _ => FSPACE_UNTORN_SOURCE_UNKNOWN,
    }
}

fn write_path_to_c(p: Option<WritePath>) -> fspace_write_path {
    match p {
        None => FSPACE_WRITE_PATH_NONE,
        Some(WritePath::Hardware) => FSPACE_WRITE_PATH_HARDWARE,
        Some(WritePath::Software) => FSPACE_WRITE_PATH_SOFTWARE,
        Some(WritePath::Unknown) => FSPACE_WRITE_PATH_UNKNOWN,
    }
}

/// The constant of a limit's name (`Refusal::name`, or the answer's
/// `refused-by-kernel`).
fn limit_to_c(name: Option<&str>) -> fspace_untorn_limit {
    match name {
        None => FSPACE_UNTORN_LIMIT_NONE,
        Some("not-supported") => FSPACE_UNTORN_LIMIT_NOT_SUPPORTED,
        Some("buffered") => FSPACE_UNTORN_LIMIT_BUFFERED,
        Some("not-power-of-two") => FSPACE_UNTORN_LIMIT_NOT_POWER_OF_TWO,
        Some("below-minimum") => FSPACE_UNTORN_LIMIT_BELOW_MINIMUM,
        Some("above-maximum") => FSPACE_UNTORN_LIMIT_ABOVE_MAXIMUM,
        Some("misaligned") => FSPACE_UNTORN_LIMIT_MISALIGNED,
        Some("buffer-address") => FSPACE_UNTORN_LIMIT_BUFFER_ADDRESS,
        Some("refused-by-kernel") => FSPACE_UNTORN_LIMIT_REFUSED_BY_KERNEL,
        Some(_) => FSPACE_UNTORN_LIMIT_OTHER,
    }
}

fn io_from_c(func: &str, io: fspace_io_path) -> CResult<IoPath> {
    match io {
        FSPACE_IO_DIRECT => Ok(IoPath::Direct),
        FSPACE_IO_BUFFERED => Ok(IoPath::Buffered),
        other => Err(Failure::invalid(func, format!("unknown I/O path {other}"))),
    }
}

fn io_to_c(io: IoPath) -> fspace_io_path {
    match io {
        IoPath::Direct => FSPACE_IO_DIRECT,
        IoPath::Buffered => FSPACE_IO_BUFFERED,
    }
}

/// Returns the name of an untorn-write state (`"unknown"`,
/// `"not-reported"`, `"zero"`, `"supported"`: the JSON's `state`), or NULL
/// for an unknown value. Static storage.
#[no_mangle]
pub extern "C" fn fspace_untorn_state_name(state: fspace_untorn_state) -> *const c_char {
    match state {
        FSPACE_UNTORN_UNKNOWN => c"unknown".as_ptr(),
        FSPACE_UNTORN_NOT_REPORTED => c"not-reported".as_ptr(),
        FSPACE_UNTORN_ZERO => c"zero".as_ptr(),
        FSPACE_UNTORN_SUPPORTED => c"supported".as_ptr(),
        _ => std::ptr::null(),
    }
}

/// What fspace knows about untorn writes on a file or a filesystem (an
/// opaque handle).
pub struct fspace_untorn_facts {
    facts: UntornFacts,
    path: CString,
    filesystem: CString,
    json: CString,
}

/// The key figures of an `fspace_untorn_facts`. The strings belong to the
/// handle and stay valid until `fspace_untorn_facts_free`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_untorn_summary {
    /// The file asked about, or the directory whose filesystem was measured.
    pub path: *const c_char,
    /// The filesystem's name (`"xfs"`, `"ext4"`, `"fuse.sshfs"`, ...).
    pub filesystem: *const c_char,
    /// `FSPACE_UNTORN_*`.
    pub state: fspace_untorn_state,
    /// With `FSPACE_UNTORN_UNKNOWN`: the errno `statx` failed with (0 when
    /// none).
    pub statx_errno: i32,
    /// `stx_atomic_write_unit_min` (0 unless supported).
    pub unit_min: u32,
    /// `stx_atomic_write_unit_max` (0 unless supported).
    pub unit_max: u32,
    /// `stx_atomic_write_unit_max_opt`: sizes up to it take the fast
    /// (hardware) path on XFS; 0 when not reported.
    pub unit_max_opt: u32,
    /// `stx_atomic_write_segments_max`: iovecs one untorn write may carry
    /// (0 unless supported).
    pub segments_max: u32,
    /// `FSPACE_UNTORN_SOURCE_*`.
    pub source: fspace_untorn_source,
    /// The largest size the hardware path writes (0: none; sizes above it
    /// up to `unit_max` take the software path).
    pub hardware_max: u32,
    /// `stx_blksize`.
    pub block_size: u32,
    /// The buffer and offset alignment `O_DIRECT` needs (`STATX_DIOALIGN`);
    /// 0 when the file does not support `O_DIRECT`; `UINT32_MAX` when not
    /// reported.
    pub direct_io_align: u32,
    /// The file's extent-size hint in bytes (0: none; only XFS sets one);
    /// `UINT32_MAX` where it cannot be read (no `FS_IOC_FSGETXATTR`: FUSE).
    pub extent_size_hint: u32,
    /// Whether `reflink` below was measured.
    pub reflink_known: bool,
    /// Whether reflink (`FICLONE`) works here, which XFS's software path
    /// needs.
    pub reflink: bool,
    /// True for a filesystem's facts measured on a scratch file
    /// (`fspace_untorn_facts_of_fs`), false for an existing file's.
    pub scratch: bool,
    /// `RWF_ATOMIC` writes tried on the scratch file (0 for an existing
    /// file, which is never written); read each with
    /// `fspace_untorn_facts_trial`.
    pub trials: usize,
}

/// One `RWF_ATOMIC` write tried on a scratch file.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_untorn_trial {
    /// Bytes written.
    pub size: u32,
    /// `FSPACE_IO_DIRECT` or `FSPACE_IO_BUFFERED`.
    pub io: fspace_io_path,
    /// Whether the kernel took it.
    pub ok: bool,
    /// The errno it was refused with (0 when it was taken, or refused
    /// without one: a short write). Not named `errno`, which C's
    /// `<errno.h>` defines as a macro.
    pub error: i32,
}

fn facts_handle(func: &str, facts: UntornFacts) -> CResult<*mut fspace_untorn_facts> {
    let json = json_string(func, &facts)?;
    Ok(Box::into_raw(Box::new(fspace_untorn_facts {
        path: c_string(facts.path.to_string_lossy().into_owned()),
        filesystem: c_string(facts.filesystem.clone()),
        facts,
        json,
    })))
}

/// Reads the untorn-write facts of the existing file at `path`: what
/// `statx(STATX_WRITE_ATOMIC)` reports for it, the devices' `atomic_write_*`
/// limits and the geometry. Nothing is written. On success `*out` is a new
/// handle for `fspace_untorn_facts_free`.
///
/// Errors: `-EINVAL` (NULL argument); `-ENOENT`, `-EACCES` and the other
/// errors of `open` and `statfs`. A failing `statx` is not an error: the
/// state is `FSPACE_UNTORN_UNKNOWN`.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_facts_new(
    path: *const c_char,
    out: *mut *mut fspace_untorn_facts,
) -> c_int {
    const F: &str = "fspace_untorn_facts_new";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (path, out) = unsafe { (path_arg(F, "path", path)?, crate::out(F, "out", out)?) };
        let facts = untorn::facts(&path)?;
        out.set(facts_handle(F, facts)?);
        Ok(0)
    })
}

/// Measures the untorn-write facts of the filesystem holding the directory
/// `dir` (a file's directory when `dir` is a file) on a scratch file made
/// there and removed before returning: `statx`, then `RWF_ATOMIC` writes of
/// 4, 8, 16 and 64 KiB through `O_DIRECT` and of 8 and 16 KiB through the
/// page cache, each with the kernel's answer (`fspace_untorn_facts_trial`).
/// On success `*out` is a new handle for `fspace_untorn_facts_free`.
///
/// Errors: `-EINVAL` (NULL argument); `-ENOENT`, `-EACCES`, `-EROFS`,
/// `-ENOSPC` and the other errors of making and writing the scratch file.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_facts_of_fs(
    dir: *const c_char,
    out: *mut *mut fspace_untorn_facts,
) -> c_int {
    const F: &str = "fspace_untorn_facts_of_fs";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (dir, out) = unsafe { (path_arg(F, "dir", dir)?, crate::out(F, "out", out)?) };
        let facts = untorn::facts_of_fs(&dir)?;
        out.set(facts_handle(F, facts)?);
        Ok(0)
    })
}

/// Writes the key figures of `facts` to `*summary`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `facts` is NULL or a live handle; `summary` is NULL or writable for `summary_size` bytes (`sizeof *summary`).
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_facts_get(
    facts: *const fspace_untorn_facts,
    summary: *mut fspace_untorn_summary,
    summary_size: usize,
) -> c_int {
    const F: &str = "fspace_untorn_facts_get";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, s) = unsafe {
            (
                arg(F, "facts", facts)?,
                abi::sized_out(F, "summary", summary, summary_size)?,
            )
        };
        let f = &h.facts;
        let (unit_min, unit_max, unit_max_opt, segments_max) = match f.limits {
            Limits::Supported {
                unit_min,
                unit_max,
                unit_max_opt,
                segments_max,
            } => (unit_min, unit_max, unit_max_opt, segments_max),
            _ => (0, 0, 0, 0),
        };
        let statx_errno = match &f.limits {
            Limits::Unknown { errno, .. } => errno.unwrap_or(0),
            _ => 0,
        };
        let g = &f.geometry;
        s.set(fspace_untorn_summary {
            path: h.path.as_ptr(),
            filesystem: h.filesystem.as_ptr(),
            state: state_to_c(&f.limits),
            statx_errno,
            unit_min,
            unit_max,
            unit_max_opt,
            segments_max,
            source: source_to_c(f.source),
            hardware_max: f.hardware_max,
            block_size: g.block_size,
            direct_io_align: g.direct_io_align.unwrap_or(u32::MAX),
            extent_size_hint: g.extent_size_hint.unwrap_or(u32::MAX),
            reflink_known: g.reflink.is_some(),
            reflink: g.reflink.unwrap_or(false),
            scratch: f.scratch,
            trials: f.tried.len(),
        });
        Ok(0)
    })
}

/// Writes trial number `index` (from 0; `trials` in the summary counts
/// them) to `*trial`.
///
/// Errors: `-EINVAL` (NULL argument); `-ERANGE` (`index` not below the
/// count).
///
/// # Safety
/// `facts` is NULL or a live handle; `trial` is NULL or writable for `trial_size` bytes (`sizeof *trial`).
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_facts_trial(
    facts: *const fspace_untorn_facts,
    index: usize,
    trial: *mut fspace_untorn_trial,
    trial_size: usize,
) -> c_int {
    const F: &str = "fspace_untorn_facts_trial";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "facts", facts)?,
                abi::sized_out(F, "trial", trial, trial_size)?,
            )
        };
        let t = h.facts.tried.get(index).ok_or_else(|| {
            Failure::new(
                34, // ERANGE
                format!(
                    "{F}: index {index} is past the {} trials: Numerical result out of range (os error 34)",
                    h.facts.tried.len()
                ),
            )
        })?;
        o.set(fspace_untorn_trial {
            size: t.size,
            io: if t.direct {
                FSPACE_IO_DIRECT
            } else {
                FSPACE_IO_BUFFERED
            },
            ok: t.ok,
            error: t.errno.unwrap_or(0),
        });
        Ok(0)
    })
}

/// Writes to `*json` all the facts as JSON (limits with their state, source,
/// devices, geometry, trials); owned by the handle.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `facts` is NULL or a live handle; `json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_facts_json(
    facts: *const fspace_untorn_facts,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_untorn_facts_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "facts", facts)?, out(F, "json", json)?) };
        o.set(h.json.as_ptr());
        Ok(0)
    })
}

/// Frees a handle from `fspace_untorn_facts_new` or
/// `fspace_untorn_facts_of_fs`; NULL does nothing.
///
/// # Safety
/// `facts` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_facts_free(facts: *mut fspace_untorn_facts) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::free_handle(facts) }
}

/// Whether a page write of one size through one I/O path is untorn (an
/// opaque handle).
pub struct fspace_untorn_answer {
    answer: Answer,
    limit_name: CString,
    reason: CString,
    json: CString,
}

/// The figures of an `fspace_untorn_answer`. The strings belong to the
/// handle and stay valid until `fspace_untorn_answer_free`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_untorn_verdict {
    /// The page size asked about.
    pub page_size: u64,
    /// The I/O path asked about (`FSPACE_IO_*`).
    pub io: fspace_io_path,
    /// True when such a write that asks for it (`RWF_ATOMIC`) is untorn.
    pub untorn: bool,
    /// The path that makes it untorn (`FSPACE_WRITE_PATH_NONE` when it is
    /// not).
    pub path: fspace_write_path,
    /// When it is not: the limit or rule that fails (`FSPACE_UNTORN_LIMIT_*`);
    /// `FSPACE_UNTORN_LIMIT_NONE` when it is.
    pub limit: fspace_untorn_limit,
    /// The limit's name (`"buffered"`, `"not-supported"`, ...), `""` when
    /// untorn.
    pub limit_name: *const c_char,
    /// Whether a trial write of this size and path was made (facts of a
    /// filesystem, `fspace_untorn_facts_of_fs`).
    pub trial_made: bool,
    /// Whether the kernel took that trial write (false when none was
    /// made).
    pub confirmed: bool,
    /// The answer in words: the rule and the figures behind it.
    pub reason: *const c_char,
}

/// Answers whether a write of `page_size` bytes through `io`
/// (`FSPACE_IO_DIRECT` or `FSPACE_IO_BUFFERED`) is untorn where `facts`
/// were taken: the kernel's rules on the reported limits, then the trial
/// writes (for a filesystem's facts), which win where they disagree.
/// Buffered writes are never untorn. On success `*out` is a new handle for
/// `fspace_untorn_answer_free`.
///
/// Errors: `-EINVAL` (NULL argument, negative page size, unknown I/O path).
///
/// # Safety
/// `facts` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_answer_new(
    facts: *const fspace_untorn_facts,
    page_size: i64,
    io: fspace_io_path,
    out: *mut *mut fspace_untorn_answer,
) -> c_int {
    const F: &str = "fspace_untorn_answer_new";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "facts", facts)?, crate::out(F, "out", out)?) };
        let page_size = offset_arg(F, "page size", page_size)?;
        let io = io_from_c(F, io)?;
        let answer = untorn::answer(&h.facts, page_size, io);
        let json = json_string(F, &answer)?;
        o.set(Box::into_raw(Box::new(fspace_untorn_answer {
            limit_name: c_string(answer.limit.unwrap_or("")),
            reason: c_string(answer.reason.clone()),
            answer,
            json,
        })));
        Ok(0)
    })
}

/// Writes the figures of `answer` to `*verdict`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `answer` is NULL or a live handle; `verdict` is NULL or writable for `verdict_size` bytes (`sizeof *verdict`).
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_answer_get(
    answer: *const fspace_untorn_answer,
    verdict: *mut fspace_untorn_verdict,
    verdict_size: usize,
) -> c_int {
    const F: &str = "fspace_untorn_answer_get";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, v) = unsafe {
            (
                arg(F, "answer", answer)?,
                abi::sized_out(F, "verdict", verdict, verdict_size)?,
            )
        };
        let a = &h.answer;
        v.set(fspace_untorn_verdict {
            page_size: a.page_size,
            io: io_to_c(a.io),
            untorn: a.untorn,
            path: if a.untorn {
                write_path_to_c(a.path)
            } else {
                FSPACE_WRITE_PATH_NONE
            },
            limit: limit_to_c(a.limit),
            limit_name: h.limit_name.as_ptr(),
            trial_made: a.confirmed.is_some(),
            confirmed: a.confirmed.unwrap_or(false),
            reason: h.reason.as_ptr(),
        });
        Ok(0)
    })
}

/// Writes to `*json` the answer as JSON; owned by the handle.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `answer` is NULL or a live handle; `json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_answer_json(
    answer: *const fspace_untorn_answer,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_untorn_answer_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "answer", answer)?, out(F, "json", json)?) };
        o.set(h.json.as_ptr());
        Ok(0)
    })
}

/// Frees an answer; NULL does nothing.
///
/// # Safety
/// `answer` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_untorn_answer_free(answer: *mut fspace_untorn_answer) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::free_handle(answer) }
}

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
            crate::fd_path(fd)
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

/// Whether a range of a file is laid out for the hardware path of untorn
/// writes, unit by unit (`fspace_check_untorn_layout`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct fspace_untorn_layout {
    /// The unit checked (bytes).
    pub unit: u64,
    /// Start of the range checked: the range asked for, rounded inwards to
    /// whole units.
    pub start: u64,
    /// End of the range checked (exclusive).
    pub end: u64,
    /// Units checked.
    pub units: u64,
    /// Units in one written extent with a physical start aligned to the
    /// unit.
    pub ok: u64,
    /// Units failing because (part of) them is a hole.
    pub holes: u64,
    /// Units failing because they are allocated but unwritten (the first
    /// write converts them).
    pub unwritten: u64,
    /// Units spanning two extents that are not one contiguous run, or
    /// mixing written and unwritten blocks.
    pub split: u64,
    /// Units whose physical start is not a multiple of the unit.
    pub misaligned: u64,
    /// Units whose blocks are shared with another file (reflink, snapshot).
    pub shared: u64,
    /// Units failing otherwise (delayed allocation, inline or encoded data,
    /// an unknown physical address).
    pub other: u64,
    /// The file offset of the first failing unit; `UINT64_MAX` when none
    /// fails.
    pub first_bad: u64,
    /// Every unit checked passes, and there was at least one.
    pub passes: bool,
}

fn layout_to_c(c: &LayoutCheck) -> fspace_untorn_layout {
    let mut l = fspace_untorn_layout {
        unit: c.unit,
        start: c.start,
        end: c.end,
        units: c.units,
        ok: c.ok,
        first_bad: c.first_bad.first().map_or(u64::MAX, |b| b.offset),
        passes: c.passes(),
        ..Default::default()
    };
    for (fault, n) in &c.faults {
        let slot = match fault {
            UnitFault::Hole => &mut l.holes,
            UnitFault::Unwritten => &mut l.unwritten,
            UnitFault::Split => &mut l.split,
            UnitFault::Misaligned => &mut l.misaligned,
            UnitFault::Shared => &mut l.shared,
            UnitFault::Other => &mut l.other,
        };
        *slot += n;
    }
    l
}

pub(crate) fn ready_layout(r: &untorn::Ready) -> (fspace_untorn_layout, bool) {
    match &r.layout {
        Ok(c) => (layout_to_c(c), true),
        Err(_) => (fspace_untorn_layout::default(), false),
    }
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
            crate::fd_path(fd)
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

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_untorn_summary = 72,
    fspace_untorn_trial = 16,
    fspace_untorn_verdict = 48,
    fspace_untorn_layout = 104,
}
