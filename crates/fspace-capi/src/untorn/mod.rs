//! Untorn (atomic) writes: `fspace_untorn_*`, `fspace_write_untorn`,
//! `fspace_check_untorn_layout`.
//!
//! The facts and the answer are handles, like `fspace_fs_info`: measuring a
//! filesystem writes a scratch file and tries `RWF_ATOMIC` writes, so it is
//! done once and then asked as many questions (page sizes, I/O paths) as
//! the caller has. The write call itself is the library's `write_untorn`:
//! it checks the file's limits first and never falls back to a plain write.
//!
//! This file holds the types: the constants, the handles and the output
//! structs, which stay in this module because the ABI baseline names each
//! C struct by its Rust path (`fspace_capi::untorn::fspace_untorn_layout`):
//! a move would read there as a changed type. The functions are in `facts`,
//! `answer` and `write` (the write and the layout check); the crate root
//! re-exports them, so that this file, which they import, does not import
//! them back.

// cbindgen writes the functions, and the structs they name first, in the
// order it reads these modules: facts, then answer, then write, as the
// header has always listed them. (rustfmt sorts only unbroken runs of
// `mod` lines, hence one each.)
pub(crate) mod facts;

pub(crate) mod answer;

pub(crate) mod write;

use crate::abi;
use fspace::untorn::{self, Answer, LayoutCheck, Limits, UnitFault, UntornFacts};
use std::ffi::{c_char, CString};

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

pub(crate) fn state_to_c(l: &Limits) -> fspace_untorn_state {
    match l {
        Limits::NotReported => FSPACE_UNTORN_NOT_REPORTED,
        Limits::Zero => FSPACE_UNTORN_ZERO,
        Limits::Supported { .. } => FSPACE_UNTORN_SUPPORTED,
        // `Unknown`, and any state a newer library adds: nothing is known.
        _ => FSPACE_UNTORN_UNKNOWN,
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
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 1],
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
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 3],
    /// The errno it was refused with (0 when it was taken, or refused
    /// without one: a short write). Not named `errno`, which C's
    /// `<errno.h>` defines as a macro.
    pub error: i32,
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
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 3],
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
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved2: [u8; 6],
    /// The answer in words: the rule and the figures behind it.
    pub reason: *const c_char,
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
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 7],
}

fn layout_to_c(c: &LayoutCheck) -> fspace_untorn_layout {
    let mut l = fspace_untorn_layout {
        reserved: [0; 7],
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

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_untorn_summary = 72,
    fspace_untorn_trial = 16,
    fspace_untorn_verdict = 48,
    fspace_untorn_layout = 104,
}
