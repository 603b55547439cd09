//! Whether a page write is untorn: `fspace_untorn_answer_*`.

use super::{
    fspace_io_path, fspace_untorn_answer, fspace_untorn_facts, fspace_untorn_limit,
    fspace_untorn_verdict, fspace_write_path, FSPACE_IO_BUFFERED, FSPACE_IO_DIRECT,
    FSPACE_UNTORN_LIMIT_ABOVE_MAXIMUM, FSPACE_UNTORN_LIMIT_BELOW_MINIMUM,
    FSPACE_UNTORN_LIMIT_BUFFERED, FSPACE_UNTORN_LIMIT_BUFFER_ADDRESS,
    FSPACE_UNTORN_LIMIT_MISALIGNED, FSPACE_UNTORN_LIMIT_NONE, FSPACE_UNTORN_LIMIT_NOT_POWER_OF_TWO,
    FSPACE_UNTORN_LIMIT_NOT_SUPPORTED, FSPACE_UNTORN_LIMIT_OTHER,
    FSPACE_UNTORN_LIMIT_REFUSED_BY_KERNEL, FSPACE_WRITE_PATH_HARDWARE, FSPACE_WRITE_PATH_NONE,
    FSPACE_WRITE_PATH_SOFTWARE, FSPACE_WRITE_PATH_UNKNOWN,
};
use crate::abi;
use crate::ffi::{arg, c_string, ffi, json_string, offset_arg, out, CResult, Failure};
use fspace::untorn::{self, IoPath, Limit, WritePath};
use std::ffi::{c_char, c_int};

fn write_path_to_c(p: Option<WritePath>) -> fspace_write_path {
    match p {
        None => FSPACE_WRITE_PATH_NONE,
        Some(WritePath::Hardware) => FSPACE_WRITE_PATH_HARDWARE,
        Some(WritePath::Software) => FSPACE_WRITE_PATH_SOFTWARE,
        Some(WritePath::Unknown) => FSPACE_WRITE_PATH_UNKNOWN,
    }
}

/// The constant of a limit.
fn limit_to_c(limit: Option<Limit>) -> fspace_untorn_limit {
    match limit {
        None => FSPACE_UNTORN_LIMIT_NONE,
        Some(Limit::NotSupported) => FSPACE_UNTORN_LIMIT_NOT_SUPPORTED,
        Some(Limit::Buffered) => FSPACE_UNTORN_LIMIT_BUFFERED,
        Some(Limit::NotPowerOfTwo) => FSPACE_UNTORN_LIMIT_NOT_POWER_OF_TWO,
        Some(Limit::BelowMinimum) => FSPACE_UNTORN_LIMIT_BELOW_MINIMUM,
        Some(Limit::AboveMaximum) => FSPACE_UNTORN_LIMIT_ABOVE_MAXIMUM,
        Some(Limit::Misaligned) => FSPACE_UNTORN_LIMIT_MISALIGNED,
        Some(Limit::BufferAddress) => FSPACE_UNTORN_LIMIT_BUFFER_ADDRESS,
        Some(Limit::RefusedByKernel) => FSPACE_UNTORN_LIMIT_REFUSED_BY_KERNEL,
        // A limit this library's header does not list yet.
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
        let (h, o) = unsafe { (arg(F, "facts", facts)?, crate::ffi::out(F, "out", out)?) };
        let page_size = offset_arg(F, "page size", page_size)?;
        let io = io_from_c(F, io)?;
        let answer = untorn::answer(&h.facts, page_size, io);
        let json = json_string(F, &answer)?;
        o.set(Box::into_raw(Box::new(fspace_untorn_answer {
            limit_name: c_string(answer.limit.map_or("", Limit::name)),
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
/// `-EINVAL` also for `verdict_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
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
            reserved: [0; 3],
            reserved2: [0; 6],
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
    unsafe { crate::ffi::free_handle(answer) }
}
