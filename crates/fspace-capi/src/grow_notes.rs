//! A growth's fallbacks, notes and untorn-write notes as C values: each
//! with its kind as a number (`fspace_reason`, `fspace_note`), read by
//! index from a report, so that a C program need not parse the report's
//! JSON or its sentences.

use crate::abi;
use crate::ffi::{arg, ffi, opt_out, Failure};
use crate::info::fspace_strategy;
use crate::reasons::{fspace_note, fspace_reason, past_the_end};
use crate::resize::fspace_grow_report;
use std::ffi::c_int;

/// Which untorn-write note `fspace_grow_report_untorn_note` reads
/// (`FSPACE_UNTORN_NOTE_*`).
pub type fspace_untorn_note = u32;

/// Why the extent-size hint is not the unit when it should be (the file
/// already had extents, XFS refused it).
pub const FSPACE_UNTORN_NOTE_HINT: fspace_untorn_note = 0;
/// Why the alignment of the units on the device stopped before every unit
/// was placed (the filesystem refused a collapse).
pub const FSPACE_UNTORN_NOTE_ALIGNMENT: fspace_untorn_note = 1;

/// The `-ENODATA` of an untorn note or reason that is not there.
fn none(func: &str, what: &str) -> Failure {
    Failure::new(
        61, // ENODATA
        format!("{func}: {what}: No data available (os error 61)"),
    )
}

/// Writes to `*reason` why the growth abandoned the strategy it tried at
/// position `index` (0: the first; `fspace_grow_summary.fallbacks` counts
/// them), and that strategy to `*strategy` (NULL: not wanted). The kind is
/// `FSPACE_ERROR_UNSUPPORTED` ("not possible here"), `errnum` the call's
/// errno (`EOPNOTSUPP`, `ENOSYS`, or `EINVAL` from a kernel that does not
/// know a mode flag); the text belongs to the report.
///
/// Errors: `-EINVAL` (NULL `report` or `reason`, or `reason_size` that is
/// no version of its struct); `-ERANGE` when `index` is not below the
/// count. Nothing is written on failure.
///
/// # Safety
/// `report` is NULL or a live handle; `strategy` is NULL or writable;
/// `reason` is NULL or writable for `reason_size` bytes (`sizeof *reason`).
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_fallback(
    report: *const fspace_grow_report,
    index: u32,
    strategy: *mut fspace_strategy,
    reason: *mut fspace_reason,
    reason_size: usize,
) -> c_int {
    const F: &str = "fspace_grow_report_fallback";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "reason", reason, reason_size)?,
            )
        };
        let fallbacks = &h.held.fallbacks;
        let (s, r) = fallbacks
            .get(index as usize)
            .ok_or_else(|| past_the_end(F, "fallback", index, fallbacks.len()))?;
        // SAFETY: NULL or writable by the caller's promise.
        if let Some(out) = unsafe { opt_out(strategy) } {
            out.set(*s);
        }
        o.set(r.to_c());
        Ok(0)
    })
}

/// Writes to `*note` the report's note at position `index` (0: the first):
/// its kind (`FSPACE_NOTE_*`) and its sentence, which belongs to the
/// report. Read from 0 up until `-ERANGE`.
///
/// Errors: `-EINVAL` (NULL `report` or `note`, or `note_size` that is no
/// version of its struct); `-ERANGE` when there is no note at `index`.
///
/// # Safety
/// `report` is NULL or a live handle; `note` is NULL or writable for
/// `note_size` bytes (`sizeof *note`).
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_note(
    report: *const fspace_grow_report,
    index: u32,
    note: *mut fspace_note,
    note_size: usize,
) -> c_int {
    const F: &str = "fspace_grow_report_note";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "note", note, note_size)?,
            )
        };
        let notes = &h.held.notes;
        let n = notes
            .get(index as usize)
            .ok_or_else(|| past_the_end(F, "note", index, notes.len()))?;
        o.set(n.to_c());
        Ok(0)
    })
}

/// Writes to `*note` the untorn-write note `which` (`FSPACE_UNTORN_NOTE_*`)
/// of a growth with `untorn_unit`: its kind (`FSPACE_NOTE_HINT_NOT_SET`,
/// `FSPACE_NOTE_ALIGNMENT_STOPPED`) and its sentence (the report's).
///
/// Errors: `-EINVAL` (NULL argument, an unknown `which`, or `note_size`
/// that is no version of its struct); `-ENODATA` when the growth was not
/// asked for an untorn unit or has no such note.
///
/// # Safety
/// `report` is NULL or a live handle; `note` is NULL or writable for
/// `note_size` bytes (`sizeof *note`).
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_untorn_note(
    report: *const fspace_grow_report,
    which: fspace_untorn_note,
    note: *mut fspace_note,
    note_size: usize,
) -> c_int {
    const F: &str = "fspace_grow_report_untorn_note";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "note", note, note_size)?,
            )
        };
        let held = match which {
            FSPACE_UNTORN_NOTE_HINT => &h.held.hint,
            FSPACE_UNTORN_NOTE_ALIGNMENT => &h.held.alignment,
            _ => return Err(Failure::invalid(F, format!("unknown untorn note {which}"))),
        };
        let n = held.as_ref().ok_or_else(|| none(F, "no such note"))?;
        o.set(n.to_c());
        Ok(0)
    })
}

/// Writes to `*reason` why the layout of a growth with `untorn_unit` could
/// not be read (no `FIEMAP`: tmpfs, FUSE): its kind, errno and text (the
/// report's), as `fspace_untorn_ready.layout_error` says in words.
///
/// Errors: `-EINVAL` (NULL argument, or `reason_size` that is no version
/// of its struct); `-ENODATA` when the growth was not asked for an untorn
/// unit or its layout was read.
///
/// # Safety
/// `report` is NULL or a live handle; `reason` is NULL or writable for
/// `reason_size` bytes (`sizeof *reason`).
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_untorn_layout_error(
    report: *const fspace_grow_report,
    reason: *mut fspace_reason,
    reason_size: usize,
) -> c_int {
    const F: &str = "fspace_grow_report_untorn_layout_error";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "reason", reason, reason_size)?,
            )
        };
        let r = h
            .held
            .layout
            .as_ref()
            .ok_or_else(|| none(F, "the layout was read, or no untorn unit was asked"))?;
        o.set(r.to_c());
        Ok(0)
    })
}
