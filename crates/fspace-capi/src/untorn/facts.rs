//! The facts of a file or a filesystem: `fspace_untorn_facts_*`.

use super::{
    fspace_untorn_facts, fspace_untorn_source, fspace_untorn_summary, fspace_untorn_trial,
    state_to_c, FSPACE_IO_BUFFERED, FSPACE_IO_DIRECT, FSPACE_UNTORN_SOURCE_DEVICE,
    FSPACE_UNTORN_SOURCE_DEVICE_AND_FILESYSTEM, FSPACE_UNTORN_SOURCE_FILESYSTEM,
    FSPACE_UNTORN_SOURCE_NONE, FSPACE_UNTORN_SOURCE_UNKNOWN,
};
use crate::abi;
use crate::ffi::{arg, c_string, ffi, json_string, out, path_arg, CResult, Failure};
use fspace::untorn::{self, Limits, Source, UntornFacts};
use std::ffi::{c_char, c_int};

fn source_to_c(s: Source) -> fspace_untorn_source {
    match s {
        Source::None => FSPACE_UNTORN_SOURCE_NONE,
        Source::Device => FSPACE_UNTORN_SOURCE_DEVICE,
        Source::Filesystem => FSPACE_UNTORN_SOURCE_FILESYSTEM,
        Source::DeviceAndFilesystem => FSPACE_UNTORN_SOURCE_DEVICE_AND_FILESYSTEM,
        _ => FSPACE_UNTORN_SOURCE_UNKNOWN,
    }
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
        let (path, out) = unsafe { (path_arg(F, "path", path)?, crate::ffi::out(F, "out", out)?) };
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
        let (dir, out) = unsafe { (path_arg(F, "dir", dir)?, crate::ffi::out(F, "out", out)?) };
        let facts = untorn::facts_of_fs(&dir)?;
        out.set(facts_handle(F, facts)?);
        Ok(0)
    })
}

/// Writes the key figures of `facts` to `*summary`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// `-EINVAL` also for `summary_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
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
            Limits::Unknown { reason } => reason.errno.unwrap_or(0),
            _ => 0,
        };
        let g = &f.geometry;
        s.set(fspace_untorn_summary {
            reserved: [0; 1],
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
/// `-EINVAL` also for `trial_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
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
            reserved: [0; 3],
            size: t.size,
            io: if t.direct {
                FSPACE_IO_DIRECT
            } else {
                FSPACE_IO_BUFFERED
            },
            ok: t.ok,
            error: t.error.as_ref().and_then(|r| r.errno).unwrap_or(0),
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
    unsafe { crate::ffi::free_handle(facts) }
}
