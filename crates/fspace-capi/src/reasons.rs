//! Reasons and notes as C values: why something could not be done
//! (`fspace_reason`: a kind, the errno, the text) and what qualifies a
//! report (`fspace_note`: a kind, the text), with their kinds as numbered
//! constants, so that a C program matches on a number, never on a sentence
//! (docs/capi.md, "Reasons and notes"). The numbers are part of the ABI:
//! never renumbered; a new kind takes the next one.

use std::ffi::{c_char, CString};

/// The class of a failure or of a reason something could not be done
/// (`FSPACE_ERROR_*`), as the library's `ErrorKind`.
pub type fspace_error_kind = u32;

/// No reason (the field holds none), or a kind newer than this header.
pub const FSPACE_ERROR_NONE: fspace_error_kind = 0;
/// `no-space` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_NO_SPACE: fspace_error_kind = 1;
/// `read-only` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_READ_ONLY: fspace_error_kind = 2;
/// `permission` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_PERMISSION: fspace_error_kind = 3;
/// `not-found` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_NOT_FOUND: fspace_error_kind = 4;
/// `exists` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_EXISTS: fspace_error_kind = 5;
/// `not-regular` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_NOT_REGULAR: fspace_error_kind = 6;
/// `unsupported` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_UNSUPPORTED: fspace_error_kind = 7;
/// `interrupted` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_INTERRUPTED: fspace_error_kind = 8;
/// `busy` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_BUSY: fspace_error_kind = 9;
/// `invalid-input` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_INVALID_INPUT: fspace_error_kind = 10;
/// `poisoned` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_POISONED: fspace_error_kind = 11;
/// `corrupt` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_CORRUPT: fspace_error_kind = 12;
/// `io` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_IO: fspace_error_kind = 13;
/// `not-measured` (docs/cli.md, "Errors and reasons").
pub const FSPACE_ERROR_NOT_MEASURED: fspace_error_kind = 14;

/// What a note is about (`FSPACE_NOTE_*`), as the library's `NoteKind`;
/// the names are those of docs/probe-json.md, "Notes".
pub type fspace_note_kind = u32;

/// A kind newer than this header.
pub const FSPACE_NOTE_OTHER: fspace_note_kind = 0;
/// `memory-filesystem`.
pub const FSPACE_NOTE_MEMORY_FILESYSTEM: fspace_note_kind = 1;
/// `scaled-down`.
pub const FSPACE_NOTE_SCALED_DOWN: fspace_note_kind = 2;
/// `small-copy-on-write`.
pub const FSPACE_NOTE_SMALL_COPY_ON_WRITE: fspace_note_kind = 3;
/// `slow-writes`.
pub const FSPACE_NOTE_SLOW_WRITES: fspace_note_kind = 4;
/// `busy-machine`.
pub const FSPACE_NOTE_BUSY_MACHINE: fspace_note_kind = 5;
/// `over-budget`.
pub const FSPACE_NOTE_OVER_BUDGET: fspace_note_kind = 6;
/// `not-durable`.
pub const FSPACE_NOTE_NOT_DURABLE: fspace_note_kind = 7;
/// `rough-figures`.
pub const FSPACE_NOTE_ROUGH_FIGURES: fspace_note_kind = 8;
/// `measured-once`.
pub const FSPACE_NOTE_MEASURED_ONCE: fspace_note_kind = 9;
/// `too-close-to-call`.
pub const FSPACE_NOTE_TOO_CLOSE_TO_CALL: fspace_note_kind = 10;
/// `sweep-cut`.
pub const FSPACE_NOTE_SWEEP_CUT: fspace_note_kind = 11;
/// `space-not-reserved`.
pub const FSPACE_NOTE_SPACE_NOT_RESERVED: fspace_note_kind = 12;
/// `speculative-preallocation`.
pub const FSPACE_NOTE_SPECULATIVE_PREALLOCATION: fspace_note_kind = 13;
/// `one-pass`.
pub const FSPACE_NOTE_ONE_PASS: fspace_note_kind = 14;
/// `wrapped-around`.
pub const FSPACE_NOTE_WRAPPED_AROUND: fspace_note_kind = 15;
/// `truncated`.
pub const FSPACE_NOTE_TRUNCATED: fspace_note_kind = 16;
/// `few-commits`.
pub const FSPACE_NOTE_FEW_COMMITS: fspace_note_kind = 17;
/// `space-not-measured`.
pub const FSPACE_NOTE_SPACE_NOT_MEASURED: fspace_note_kind = 18;
/// `allocation-not-kept`.
pub const FSPACE_NOTE_ALLOCATION_NOT_KEPT: fspace_note_kind = 19;
/// `holes-as-zeros`.
pub const FSPACE_NOTE_HOLES_AS_ZEROS: fspace_note_kind = 20;
/// `holes-unseen`.
pub const FSPACE_NOTE_HOLES_UNSEEN: fspace_note_kind = 21;
/// `read-to-end`.
pub const FSPACE_NOTE_READ_TO_END: fspace_note_kind = 22;
/// `source-grew`.
pub const FSPACE_NOTE_SOURCE_GREW: fspace_note_kind = 23;
/// `not-preserved`.
pub const FSPACE_NOTE_NOT_PRESERVED: fspace_note_kind = 24;
/// `owner-not-preserved`.
pub const FSPACE_NOTE_OWNER_NOT_PRESERVED: fspace_note_kind = 25;
/// `not-synced`.
pub const FSPACE_NOTE_NOT_SYNCED: fspace_note_kind = 26;
/// `directory-not-synced`.
pub const FSPACE_NOTE_DIRECTORY_NOT_SYNCED: fspace_note_kind = 27;
/// `zero-ranges-skipped`.
pub const FSPACE_NOTE_ZERO_RANGES_SKIPPED: fspace_note_kind = 28;
/// `checked-rename`.
pub const FSPACE_NOTE_CHECKED_RENAME: fspace_note_kind = 29;
/// `saved-unreadable`.
pub const FSPACE_NOTE_SAVED_UNREADABLE: fspace_note_kind = 30;
/// `trade-off-not-faster`.
pub const FSPACE_NOTE_TRADE_OFF_NOT_FASTER: fspace_note_kind = 31;
/// `combination-not-measured`.
pub const FSPACE_NOTE_COMBINATION_NOT_MEASURED: fspace_note_kind = 32;
/// `engine-overrides`.
pub const FSPACE_NOTE_ENGINE_OVERRIDES: fspace_note_kind = 33;
/// `network-filesystem`.
pub const FSPACE_NOTE_NETWORK_FILESYSTEM: fspace_note_kind = 34;
/// `not-measurable`.
pub const FSPACE_NOTE_NOT_MEASURABLE: fspace_note_kind = 35;
/// `not-measured`.
pub const FSPACE_NOTE_NOT_MEASURED: fspace_note_kind = 36;
/// `read-failed`.
pub const FSPACE_NOTE_READ_FAILED: fspace_note_kind = 37;
/// `no-block-device`.
pub const FSPACE_NOTE_NO_BLOCK_DEVICE: fspace_note_kind = 38;
/// `map-without-fiemap`.
pub const FSPACE_NOTE_MAP_WITHOUT_FIEMAP: fspace_note_kind = 39;
/// `alignment-stopped`.
pub const FSPACE_NOTE_ALIGNMENT_STOPPED: fspace_note_kind = 40;
/// `hint-not-set`.
pub const FSPACE_NOTE_HINT_NOT_SET: fspace_note_kind = 41;

/// Why something could not be done or measured. `text` belongs to the
/// handle it was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_reason {
    /// `FSPACE_ERROR_*`.
    pub kind: fspace_error_kind,
    /// The errno, when a system call said so; 0 when none did (a rule of
    /// the operation, a fact of the filesystem). Not named `errno`, which
    /// C's `<errno.h>` defines as a macro.
    pub errnum: i32,
    /// The whole story for people: the call, the path, the OS's words.
    pub text: *const c_char,
}

/// Something a report says that qualifies its figures or its outcome.
/// `text` belongs to the handle it was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_note {
    /// `FSPACE_NOTE_*`.
    pub kind: fspace_note_kind,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 4],
    /// The sentence, in words (it may be reworded; the kind is kept).
    pub text: *const c_char,
}

crate::abi::released!(fspace_reason = 16, fspace_note = 16);

/// The C number of an error kind.
pub(crate) fn error_kind_to_c(k: fspace::ErrorKind) -> fspace_error_kind {
    use fspace::ErrorKind as K;
    match k {
        K::NoSpace => FSPACE_ERROR_NO_SPACE,
        K::ReadOnly => FSPACE_ERROR_READ_ONLY,
        K::Permission => FSPACE_ERROR_PERMISSION,
        K::NotFound => FSPACE_ERROR_NOT_FOUND,
        K::Exists => FSPACE_ERROR_EXISTS,
        K::NotRegular => FSPACE_ERROR_NOT_REGULAR,
        K::Unsupported => FSPACE_ERROR_UNSUPPORTED,
        K::Interrupted => FSPACE_ERROR_INTERRUPTED,
        K::Busy => FSPACE_ERROR_BUSY,
        K::InvalidInput => FSPACE_ERROR_INVALID_INPUT,
        K::Poisoned => FSPACE_ERROR_POISONED,
        K::Corrupt => FSPACE_ERROR_CORRUPT,
        K::Io => FSPACE_ERROR_IO,
        K::NotMeasured => FSPACE_ERROR_NOT_MEASURED,
        _ => FSPACE_ERROR_NONE,
    }
}

/// The C number of a note kind.
pub(crate) fn note_kind_to_c(k: fspace::NoteKind) -> fspace_note_kind {
    use fspace::NoteKind as N;
    match k {
        N::MemoryFilesystem => FSPACE_NOTE_MEMORY_FILESYSTEM,
        N::ScaledDown => FSPACE_NOTE_SCALED_DOWN,
        N::SmallCopyOnWrite => FSPACE_NOTE_SMALL_COPY_ON_WRITE,
        N::SlowWrites => FSPACE_NOTE_SLOW_WRITES,
        N::BusyMachine => FSPACE_NOTE_BUSY_MACHINE,
        N::OverBudget => FSPACE_NOTE_OVER_BUDGET,
        N::NotDurable => FSPACE_NOTE_NOT_DURABLE,
        N::RoughFigures => FSPACE_NOTE_ROUGH_FIGURES,
        N::MeasuredOnce => FSPACE_NOTE_MEASURED_ONCE,
        N::TooCloseToCall => FSPACE_NOTE_TOO_CLOSE_TO_CALL,
        N::SweepCut => FSPACE_NOTE_SWEEP_CUT,
        N::SpaceNotReserved => FSPACE_NOTE_SPACE_NOT_RESERVED,
        N::SpeculativePreallocation => FSPACE_NOTE_SPECULATIVE_PREALLOCATION,
        N::OnePass => FSPACE_NOTE_ONE_PASS,
        N::WrappedAround => FSPACE_NOTE_WRAPPED_AROUND,
        N::Truncated => FSPACE_NOTE_TRUNCATED,
        N::FewCommits => FSPACE_NOTE_FEW_COMMITS,
        N::SpaceNotMeasured => FSPACE_NOTE_SPACE_NOT_MEASURED,
        N::AllocationNotKept => FSPACE_NOTE_ALLOCATION_NOT_KEPT,
        N::HolesAsZeros => FSPACE_NOTE_HOLES_AS_ZEROS,
        N::HolesUnseen => FSPACE_NOTE_HOLES_UNSEEN,
        N::ReadToEnd => FSPACE_NOTE_READ_TO_END,
        N::SourceGrew => FSPACE_NOTE_SOURCE_GREW,
        N::NotPreserved => FSPACE_NOTE_NOT_PRESERVED,
        N::OwnerNotPreserved => FSPACE_NOTE_OWNER_NOT_PRESERVED,
        N::NotSynced => FSPACE_NOTE_NOT_SYNCED,
        N::DirectoryNotSynced => FSPACE_NOTE_DIRECTORY_NOT_SYNCED,
        N::ZeroRangesSkipped => FSPACE_NOTE_ZERO_RANGES_SKIPPED,
        N::CheckedRename => FSPACE_NOTE_CHECKED_RENAME,
        N::SavedUnreadable => FSPACE_NOTE_SAVED_UNREADABLE,
        N::TradeOffNotFaster => FSPACE_NOTE_TRADE_OFF_NOT_FASTER,
        N::CombinationNotMeasured => FSPACE_NOTE_COMBINATION_NOT_MEASURED,
        N::EngineOverrides => FSPACE_NOTE_ENGINE_OVERRIDES,
        N::NetworkFilesystem => FSPACE_NOTE_NETWORK_FILESYSTEM,
        N::NotMeasurable => FSPACE_NOTE_NOT_MEASURABLE,
        N::NotMeasured => FSPACE_NOTE_NOT_MEASURED,
        N::ReadFailed => FSPACE_NOTE_READ_FAILED,
        N::NoBlockDevice => FSPACE_NOTE_NO_BLOCK_DEVICE,
        N::MapWithoutFiemap => FSPACE_NOTE_MAP_WITHOUT_FIEMAP,
        N::AlignmentStopped => FSPACE_NOTE_ALIGNMENT_STOPPED,
        N::HintNotSet => FSPACE_NOTE_HINT_NOT_SET,
        _ => FSPACE_NOTE_OTHER,
    }
}

/// A reason's text, kept by a handle for the pointer it hands out.
pub(crate) struct HeldReason {
    kind: fspace_error_kind,
    errnum: i32,
    text: CString,
}

impl HeldReason {
    pub(crate) fn of(r: &fspace::Reason) -> HeldReason {
        HeldReason {
            kind: error_kind_to_c(r.kind),
            errnum: r.errno.unwrap_or(0),
            text: crate::ffi::c_string(r.text.clone()),
        }
    }

    /// Its text, living as long as `self`.
    pub(crate) fn text(&self) -> *const c_char {
        self.text.as_ptr()
    }

    /// The C value; its text lives as long as `self`.
    pub(crate) fn to_c(&self) -> fspace_reason {
        fspace_reason {
            kind: self.kind,
            errnum: self.errnum,
            text: self.text.as_ptr(),
        }
    }
}

/// A note's text, kept by a handle for the pointer it hands out.
pub(crate) struct HeldNote {
    kind: fspace_note_kind,
    text: CString,
}

impl HeldNote {
    pub(crate) fn of(n: &fspace::Note) -> HeldNote {
        HeldNote {
            kind: note_kind_to_c(n.kind),
            text: crate::ffi::c_string(n.text.clone()),
        }
    }

    /// Its text, living as long as `self`.
    pub(crate) fn text(&self) -> *const c_char {
        self.text.as_ptr()
    }

    /// The C value; its text lives as long as `self`.
    pub(crate) fn to_c(&self) -> fspace_note {
        fspace_note {
            kind: self.kind,
            reserved: [0; 4],
            text: self.text.as_ptr(),
        }
    }
}

/// The failure of an index past the end of a list (`-ERANGE`), naming
/// the function, the list and its length.
pub(crate) fn past_the_end(func: &str, what: &str, index: u32, len: usize) -> crate::ffi::Failure {
    crate::ffi::Failure::new(
        34, // ERANGE
        format!(
            "{func}: {what} {index} does not exist (there are {len}): Numerical result out of range (os error 34)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_number() {
        let notes = [
            fspace::NoteKind::MemoryFilesystem,
            fspace::NoteKind::ScaledDown,
            fspace::NoteKind::SmallCopyOnWrite,
            fspace::NoteKind::SlowWrites,
            fspace::NoteKind::BusyMachine,
            fspace::NoteKind::OverBudget,
            fspace::NoteKind::NotDurable,
            fspace::NoteKind::RoughFigures,
            fspace::NoteKind::MeasuredOnce,
            fspace::NoteKind::TooCloseToCall,
            fspace::NoteKind::SweepCut,
            fspace::NoteKind::SpaceNotReserved,
            fspace::NoteKind::SpeculativePreallocation,
            fspace::NoteKind::OnePass,
            fspace::NoteKind::WrappedAround,
            fspace::NoteKind::Truncated,
            fspace::NoteKind::FewCommits,
            fspace::NoteKind::SpaceNotMeasured,
            fspace::NoteKind::AllocationNotKept,
            fspace::NoteKind::HolesAsZeros,
            fspace::NoteKind::HolesUnseen,
            fspace::NoteKind::ReadToEnd,
            fspace::NoteKind::SourceGrew,
            fspace::NoteKind::NotPreserved,
            fspace::NoteKind::OwnerNotPreserved,
            fspace::NoteKind::NotSynced,
            fspace::NoteKind::DirectoryNotSynced,
            fspace::NoteKind::ZeroRangesSkipped,
            fspace::NoteKind::CheckedRename,
            fspace::NoteKind::SavedUnreadable,
            fspace::NoteKind::TradeOffNotFaster,
            fspace::NoteKind::CombinationNotMeasured,
            fspace::NoteKind::EngineOverrides,
            fspace::NoteKind::NetworkFilesystem,
            fspace::NoteKind::NotMeasurable,
            fspace::NoteKind::NotMeasured,
            fspace::NoteKind::ReadFailed,
            fspace::NoteKind::NoBlockDevice,
            fspace::NoteKind::MapWithoutFiemap,
            fspace::NoteKind::AlignmentStopped,
            fspace::NoteKind::HintNotSet,
        ];
        let mut seen: Vec<fspace_note_kind> = notes.iter().map(|&k| note_kind_to_c(k)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), notes.len());
        assert!(!seen.contains(&FSPACE_NOTE_OTHER));
        let kinds = [
            fspace::ErrorKind::NoSpace,
            fspace::ErrorKind::ReadOnly,
            fspace::ErrorKind::Permission,
            fspace::ErrorKind::NotFound,
            fspace::ErrorKind::Exists,
            fspace::ErrorKind::NotRegular,
            fspace::ErrorKind::Unsupported,
            fspace::ErrorKind::Interrupted,
            fspace::ErrorKind::Busy,
            fspace::ErrorKind::InvalidInput,
            fspace::ErrorKind::Poisoned,
            fspace::ErrorKind::Corrupt,
            fspace::ErrorKind::Io,
            fspace::ErrorKind::NotMeasured,
        ];
        let mut seen: Vec<fspace_error_kind> = kinds.iter().map(|&k| error_kind_to_c(k)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), kinds.len());
        assert!(!seen.contains(&FSPACE_ERROR_NONE));
    }
}
