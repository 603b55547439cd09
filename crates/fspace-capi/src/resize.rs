//! Growing files and allocating ranges: `fspace_grow*`, `fspace_allocate_range`.

use crate::abi;
use crate::ffi::{
    arg, c_string, end_arg, fd_arg, ffi, json_string, offset_arg, out, path_arg, CResult, Failure,
};
use crate::info::{
    choice_from_c, fspace_intent, fspace_strategy, intent_from_c, strategy_to_c,
    FSPACE_INTENT_BULK, FSPACE_STRATEGY_AUTO,
};
use crate::reasons::{HeldNote, HeldReason};
use crate::untorn::{fspace_untorn_layout, fspace_untorn_state};
use fspace::{GrowOptions, GrowReport, StrategyChoice};
use std::ffi::{c_char, c_int, CString};

/// Options of `fspace_grow`. Always set the defaults with
/// `fspace_grow_options_init(&options, sizeof options)`, then change
/// fields: a zeroed struct is not the defaults (`fallback`,
/// `check_free_space` and `use_saved` are true), and its `size` is refused.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_grow_options {
    /// The size of this struct as the program was built (set by
    /// `fspace_grow_options_init`): the library reads only the fields it
    /// covers, so a program built against an older header keeps working
    /// when the struct grows.
    pub size: u32,
    /// `FSPACE_STRATEGY_*`; default `FSPACE_STRATEGY_AUTO`.
    pub strategy: fspace_strategy,
    /// `FSPACE_INTENT_*`, for the `auto` policy; default `FSPACE_INTENT_BULK`.
    pub intent: fspace_intent,
    /// When an explicit strategy is unsupported, try the ones that give the
    /// same guarantee (default true).
    pub fallback: bool,
    /// `fdatasync` when done (default false); a created file is also
    /// `fsync`ed before its rename and its directory after. Without it,
    /// after a power cut the growth may be undone, and a created file may
    /// be missing or short (zero-fill: 0 bytes on ext4 and xfs, measured).
    pub sync: bool,
    /// Create the file if missing (default false): it appears at its name
    /// only once grown (temporary name, rename, directory fsync).
    pub create: bool,
    /// Refuse with `-ENOSPC` before writing when the free space is too
    /// small (default true).
    pub check_free_space: bool,
    /// Let `auto` follow a result saved by `fspace probe --save` (default
    /// true).
    pub use_saved: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 3],
    /// Make the space ready for untorn writes of this many bytes (a power
    /// of two, at least 512; default 0: not asked): written extents
    /// (intent `FSPACE_INTENT_LOG`'s plan, whatever `intent` says) and, on
    /// XFS, an extent-size hint of the unit while the file has no extents.
    /// `fspace_grow_report_untorn` then says what was done and checks every
    /// unit's layout. A unit that is not a power of two of at least 512 is
    /// `-EINVAL` before anything is done.
    pub untorn_unit: u32,
}

/// Sets `*options`, a struct of `size` bytes (`sizeof options`), to the
/// defaults, and its `size` field to `size`.
///
/// Errors: `-EINVAL` (NULL argument, or a size smaller than the first
/// version of the struct).
///
/// # Safety
/// `options` is NULL or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_options_init(
    options: *mut fspace_grow_options,
    size: usize,
) -> c_int {
    const F: &str = "fspace_grow_options_init";
    // SAFETY: forwarded caller promise.
    ffi(F, || unsafe { abi::init(F, options, size) }.map(|()| 0))
}

// SAFETY: `GrowOptionsRaw` has the struct's layout (asserted below), with
// integers only.
unsafe impl abi::Options for fspace_grow_options {
    type Raw = GrowOptionsRaw;
    const FIRST: usize = 24;
    const INIT: &'static str = "fspace_grow_options_init";
    // From the layout, not typed in: the bytes from `reserved` to the
    // next field (or the struct's end).
    const RESERVED: &'static [(usize, usize)] = &[(
        std::mem::offset_of!(fspace_grow_options, reserved),
        std::mem::offset_of!(fspace_grow_options, untorn_unit)
            - std::mem::offset_of!(fspace_grow_options, reserved),
    )];
    fn defaults() -> Self {
        let d = GrowOptions::default();
        fspace_grow_options {
            reserved: [0; 3],
            size: 0,
            strategy: FSPACE_STRATEGY_AUTO,
            intent: FSPACE_INTENT_BULK,
            fallback: true,
            sync: d.sync,
            create: d.create,
            check_free_space: d.check_free_space,
            use_saved: true,
            untorn_unit: d.untorn_unit.unwrap_or(0),
        }
    }
}

/// `fspace_grow_options` as C may hand it: any byte in a `bool` (a
/// `memset`, another language's binding), which Rust may not read as `bool`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct GrowOptionsRaw {
    size: u32,
    strategy: fspace_strategy,
    intent: fspace_intent,
    fallback: u8,
    sync: u8,
    create: u8,
    check_free_space: u8,
    use_saved: u8,
    reserved: [u8; 3],
    untorn_unit: u32,
}

// Same layout as the public struct, field by field; the released size.
const _: () = assert!(
    size_of::<GrowOptionsRaw>() == size_of::<fspace_grow_options>()
        && align_of::<GrowOptionsRaw>() == align_of::<fspace_grow_options>()
        && std::mem::offset_of!(GrowOptionsRaw, size)
            == std::mem::offset_of!(fspace_grow_options, size)
        && std::mem::offset_of!(GrowOptionsRaw, strategy)
            == std::mem::offset_of!(fspace_grow_options, strategy)
        && std::mem::offset_of!(GrowOptionsRaw, intent)
            == std::mem::offset_of!(fspace_grow_options, intent)
        && std::mem::offset_of!(GrowOptionsRaw, fallback)
            == std::mem::offset_of!(fspace_grow_options, fallback)
        && std::mem::offset_of!(GrowOptionsRaw, sync)
            == std::mem::offset_of!(fspace_grow_options, sync)
        && std::mem::offset_of!(GrowOptionsRaw, create)
            == std::mem::offset_of!(fspace_grow_options, create)
        && std::mem::offset_of!(GrowOptionsRaw, check_free_space)
            == std::mem::offset_of!(fspace_grow_options, check_free_space)
        && std::mem::offset_of!(GrowOptionsRaw, use_saved)
            == std::mem::offset_of!(fspace_grow_options, use_saved)
        && std::mem::offset_of!(GrowOptionsRaw, untorn_unit)
            == std::mem::offset_of!(fspace_grow_options, untorn_unit)
        && std::mem::offset_of!(GrowOptionsRaw, reserved)
            == std::mem::offset_of!(fspace_grow_options, reserved)
        && size_of::<fspace_grow_options>() == <fspace_grow_options as abi::Options>::FIRST
);

fn grow_options(func: &str, o: Option<GrowOptionsRaw>) -> CResult<GrowOptions<'static>> {
    let mut g = GrowOptions::default().choice(StrategyChoice::auto_from_state_dir());
    if let Some(o) = o {
        g.choice = choice_from_c(func, o.strategy, o.fallback != 0, o.use_saved != 0)?;
        g.intent = intent_from_c(func, o.intent)?;
        g.sync = o.sync != 0;
        g.create = o.create != 0;
        g.check_free_space = o.check_free_space != 0;
        // 0 is "not asked"; any other value goes to the library, which
        // refuses one that is not a power of two of at least 512.
        g.untorn_unit = (o.untorn_unit != 0).then_some(o.untorn_unit);
    }
    Ok(g)
}

/// What a growth did (an opaque handle).
pub struct fspace_grow_report {
    report: GrowReport,
    reason: CString,
    json: CString,
    /// The fallbacks, notes and untorn notes as C values
    /// (`fspace_grow_report_fallback`, `_note`, `_untorn_note`), whose
    /// texts `fspace_grow_report_untorn` hands out too.
    pub(crate) held: Held,
}

/// What a report hands out as C values, with the texts they point to.
pub(crate) struct Held {
    pub(crate) fallbacks: Vec<(fspace_strategy, HeldReason)>,
    pub(crate) notes: Vec<HeldNote>,
    pub(crate) hint: Option<HeldNote>,
    pub(crate) alignment: Option<HeldNote>,
    pub(crate) layout: Option<HeldReason>,
}

impl Held {
    pub(crate) fn of(r: &fspace::GrowReport) -> Held {
        let ready = r.untorn.as_ref();
        Held {
            fallbacks: r
                .fallbacks
                .iter()
                .map(|f| (strategy_to_c(f.strategy), HeldReason::of(&f.error)))
                .collect(),
            notes: r.notes.iter().map(HeldNote::of).collect(),
            hint: ready.and_then(|u| u.hint_note.as_ref()).map(HeldNote::of),
            alignment: ready
                .and_then(|u| u.alignment_note.as_ref())
                .map(HeldNote::of),
            layout: ready
                .and_then(|u| u.layout.as_ref().err())
                .map(HeldReason::of),
        }
    }
}

/// The figures of an `fspace_grow_report`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_grow_summary {
    /// The strategy that did the work.
    pub strategy: fspace_strategy,
    /// The strategy asked for (`FSPACE_STRATEGY_AUTO` when none).
    pub requested: fspace_strategy,
    /// Strategies tried and abandoned before it.
    pub fallbacks: u32,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 4],
    /// Length before.
    pub old_len: u64,
    /// Length after.
    pub new_len: u64,
    /// Zero bytes written.
    pub bytes_written: u64,
    /// Syscalls issued.
    pub syscalls: u64,
    /// Of which change the file.
    pub write_syscalls: u64,
    /// Wall time in nanoseconds.
    pub elapsed_ns: u64,
    /// `fdatasync` was called.
    pub synced: bool,
    /// The file was created.
    pub created: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved2: [u8; 6],
}

fn report_handle(func: &str, report: GrowReport) -> CResult<*mut fspace_grow_report> {
    let json = json_string(func, &report)?;
    Ok(Box::into_raw(Box::new(fspace_grow_report {
        reason: c_string(report.reason.clone()),
        held: Held::of(&report),
        report,
        json,
    })))
}

/// Grows the file at `path` to `target` bytes with `options` (NULL: the
/// defaults). A file already `target` bytes long is left alone; growth never
/// shrinks a file.
/// On success, when `report` is not NULL, `*report` is a new handle for
/// `fspace_grow_report_free`.
///
/// Errors: `-EINVAL` (NULL path, negative target, unknown constant, a
/// target below the current length, a file that is not regular nor a
/// directory nor a FIFO, an `untorn_unit` that is not a power of two of at
/// least 512); `-EFBIG` (target past the largest file);
/// `-ENOENT` (missing file without `create`); `-EISDIR` (a directory);
/// `-ENXIO` (a FIFO: opened without blocking, it has no reader); `-ENOSPC` and
/// `-EDQUOT` (the file is back at its old length); `-EOPNOTSUPP` (an
/// explicit strategy unsupported here, without `fallback`; an
/// `untorn_unit` where the file takes no untorn writes, refused before
/// anything changes, the reason in `fspace_last_error`); `-EINVAL` also
/// for an `untorn_unit` outside the file's `statx` limits; the errors of
/// `open`, `fallocate`, `pwritev` and `fdatasync`.
///
/// Options (`options` not NULL): `-EINVAL` for a struct that `fspace_grow_options_init`
/// did not set (a `size` that is no version of it, nonzero `reserved`
/// bytes), `-E2BIG` for a field this library does not know, set (a
/// program built against a newer header); nothing is done.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `options` is NULL or
/// readable for the `size` bytes its first field names; `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_grow(
    path: *const c_char,
    target: i64,
    options: *const fspace_grow_options,
    report: *mut *mut fspace_grow_report,
) -> c_int {
    const F: &str = "fspace_grow";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let path = unsafe { path_arg(F, "path", path)? };
        let target = offset_arg(F, "target", target)?;
        // SAFETY: NULL or readable.
        let opts = grow_options(F, unsafe { abi::read(F, options)? })?;
        let r = fspace::grow(&path, target, &opts)?;
        if !report.is_null() {
            let h = report_handle(F, r)?;
            // SAFETY: non-NULL and writable by the caller's promise.
            unsafe { report.write(h) };
        }
        Ok(0)
    })
}

/// As `fspace_grow`, for an open descriptor (opened for writing; it stays
/// open and its offset is not moved). `path` names the file in messages and
/// locates its filesystem for `auto`; NULL uses the file `/proc/self/fd/FD`
/// links to (or that link, when the file has no name any more).
/// `create` is ignored.
///
/// Errors: those of `fspace_grow`, and `-EBADF` (negative, closed or
/// read-only descriptor).
///
/// Options (`options` not NULL): `-EINVAL` for a struct that `fspace_grow_options_init`
/// did not set (a `size` that is no version of it, nonzero `reserved`
/// bytes), `-E2BIG` for a field this library does not know, set (a
/// program built against a newer header); nothing is done.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `options` is NULL or
/// readable for the `size` bytes its first field names; `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_fd(
    fd: c_int,
    path: *const c_char,
    target: i64,
    options: *const fspace_grow_options,
    report: *mut *mut fspace_grow_report,
) -> c_int {
    const F: &str = "fspace_grow_fd";
    ffi(F, || {
        let borrowed = fd_arg(F, fd)?;
        let path = if path.is_null() {
            crate::ffi::fd_path(fd)
        } else {
            // SAFETY: non-NULL, NUL-terminated by the caller's promise.
            unsafe { path_arg(F, "path", path)? }
        };
        let target = offset_arg(F, "target", target)?;
        // SAFETY: NULL or readable.
        let opts = grow_options(F, unsafe { abi::read(F, options)? })?;
        let r = fspace::grow_fd(borrowed, &path, target, &opts)?;
        if !report.is_null() {
            let h = report_handle(F, r)?;
            // SAFETY: non-NULL and writable by the caller's promise.
            unsafe { report.write(h) };
        }
        Ok(0)
    })
}

/// Writes the figures of `report` to `*summary`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// `-EINVAL` also for `summary_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `report` is NULL or a live handle; `summary` is NULL or writable for `summary_size` bytes (`sizeof *summary`).
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_get(
    report: *const fspace_grow_report,
    summary: *mut fspace_grow_summary,
    summary_size: usize,
) -> c_int {
    const F: &str = "fspace_grow_report_get";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, s) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "summary", summary, summary_size)?,
            )
        };
        let r = &h.report;
        s.set(fspace_grow_summary {
            reserved: [0; 4],
            reserved2: [0; 6],
            strategy: strategy_to_c(r.strategy),
            requested: r.requested.map_or(FSPACE_STRATEGY_AUTO, strategy_to_c),
            fallbacks: u32::try_from(r.fallbacks.len()).unwrap_or(u32::MAX),
            old_len: r.old_len,
            new_len: r.new_len,
            bytes_written: r.bytes_written,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            elapsed_ns: u64::try_from(r.elapsed.as_nanos()).unwrap_or(u64::MAX),
            synced: r.synced,
            created: r.created,
        });
        Ok(0)
    })
}

/// Writes to `*reason` why the strategy was chosen, in one sentence; owned
/// by the report.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `report` is NULL or a live handle; `reason` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_reason(
    report: *const fspace_grow_report,
    reason: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_grow_report_reason";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "report", report)?, out(F, "reason", reason)?) };
        o.set(h.reason.as_ptr());
        Ok(0)
    })
}

/// Writes to `*json` the whole report as JSON (as `fspace grow --json`
/// prints it: fallbacks with their errors, notes); owned by the report.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `report` is NULL or a live handle; `json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_json(
    report: *const fspace_grow_report,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_grow_report_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "report", report)?, out(F, "json", json)?) };
        o.set(h.json.as_ptr());
        Ok(0)
    })
}

/// What a growth with `untorn_unit` did beyond the growth itself
/// (`fspace_grow_report_untorn`). The strings belong to the report.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_untorn_ready {
    /// The unit asked for (bytes).
    pub unit: u32,
    /// The grown file's untorn-write state (`FSPACE_UNTORN_*`): whether
    /// the space can take untorn writes at all (a prepared layout does not
    /// make a filesystem without them untorn).
    pub state: fspace_untorn_state,
    /// Ranges cut out of the new allocation to put its units at aligned
    /// device addresses (XFS; 0 elsewhere).
    pub collapses: u32,
    /// The file's extent-size hint afterwards (bytes; 0: none; only XFS
    /// sets one); `UINT32_MAX` where it cannot be read (FUSE).
    pub extent_size_hint: u32,
    /// Why the hint is not the unit when it should be (the file already
    /// had extents, XFS refused), or `""`.
    pub hint_note: *const c_char,
    /// Whether `layout` was read (else `layout_error` says why).
    pub layout_known: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 7],
    /// Why the layout could not be read (no `FIEMAP`: tmpfs, FUSE), or `""`.
    pub layout_error: *const c_char,
    /// The layout of the whole file, unit by unit (all zero when not
    /// known). Last: a struct held in another is its last field, so that
    /// both grow at their ends.
    pub layout: fspace_untorn_layout,
}

/// Writes to `*ready` what a growth with `untorn_unit` did for untorn
/// writes: the file's untorn-write state, the extent-size hint, the
/// collapses that put the units at aligned device addresses (XFS), and the
/// layout of every unit of the file afterwards (`layout.passes`: every unit
/// in one written extent with an aligned physical start, as the hardware
/// path needs).
///
/// Errors: `-EINVAL` (NULL argument); `-ENODATA` when the growth was not
/// asked for an untorn unit.
///
/// `-EINVAL` also for `ready_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `report` is NULL or a live handle; `ready` is NULL or writable for `ready_size` bytes (`sizeof *ready`).
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_untorn(
    report: *const fspace_grow_report,
    ready: *mut fspace_untorn_ready,
    ready_size: usize,
) -> c_int {
    const F: &str = "fspace_grow_report_untorn";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "ready", ready, ready_size)?,
            )
        };
        let r = h.report.untorn.as_ref().ok_or_else(|| {
            Failure::new(
                61, // ENODATA
                format!(
                    "{F}({}): the growth was not asked for an untorn unit: No data available (os error 61)",
                    h.report.path.display()
                ),
            )
        })?;
        let (layout, layout_known) = crate::untorn::ready_layout(r);
        o.set(fspace_untorn_ready {
            reserved: [0; 7],
            unit: r.unit,
            state: crate::untorn::state_to_c(&r.limits),
            collapses: r.collapses,
            extent_size_hint: r.extent_size_hint.unwrap_or(u32::MAX),
            hint_note: h.held.hint.as_ref().map_or(c"".as_ptr(), HeldNote::text),
            layout_known,
            layout,
            layout_error: h
                .held
                .layout
                .as_ref()
                .map_or(c"".as_ptr(), HeldReason::text),
        });
        Ok(0)
    })
}

/// Frees a report; NULL does nothing.
///
/// # Safety
/// `report` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_grow_report_free(report: *mut fspace_grow_report) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::ffi::free_handle(report) }
}

/// What `fspace_allocate_range` did.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_range_summary {
    /// `FSPACE_STRATEGY_ALLOCATE` (one `fallocate`) or
    /// `FSPACE_STRATEGY_ZERO_FILL` (zero writes of holes and of the part
    /// beyond EOF, where `fallocate` is unsupported).
    pub strategy: fspace_strategy,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 4],
    /// Length before.
    pub old_len: u64,
    /// Length after.
    pub new_len: u64,
    /// Holes inside the old length that were filled.
    pub holes_filled: u64,
    /// Zero bytes written.
    pub bytes_written: u64,
    /// Syscalls issued.
    pub syscalls: u64,
    /// Of which change the file.
    pub write_syscalls: u64,
    /// False when `SEEK_HOLE` could not show the holes inside the file (it
    /// is unsupported, or found none on a FUSE or network filesystem, where
    /// it usually reports everything as data): that part of the range was
    /// read and its blocks that read as zeros were written with zeros.
    pub holes_known: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved2: [u8; 7],
}

/// Makes `offset..offset + len` of the open file `fd` allocated, extending
/// it when the range ends past EOF: `posix_fallocate(3)` done right.
/// `fallocate(2)` mode 0 where the filesystem supports it; elsewhere
/// (NFS, FUSE, ext4 without extents) 1 MiB zero writes of only the holes in
/// the range (found with `SEEK_HOLE`, or where it cannot see them, as on
/// sshfs, the blocks that read as zeros) and of the part beyond EOF, so
/// existing bytes keep their values (glibc writes one byte per 4 KiB block
/// instead). Not atomic against a concurrent writer of the same range, as
/// glibc's emulation is not. `EINTR` is not returned: the call is restarted.
/// Nothing is synced. When `summary` is not NULL it receives what was done.
///
/// Errors: `-EINVAL` (negative offset, length not positive); `-EFBIG`
/// (`offset + len` past the largest file); `-EBADF` (negative, closed or
/// read-only descriptor, or one in `O_APPEND` mode where a fill is needed;
/// where holes must be found by reading, a write-only descriptor leaves
/// the holes inside the file as they are);
/// `-ESPIPE` (a pipe); `-ENODEV` (not a regular file); `-ENOSPC` (checked
/// before a fill writes anything; after a failed fill the file is back at
/// its old length).
///
/// `-EINVAL` also for `summary_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `summary` is NULL or writable for `summary_size` bytes (`sizeof *summary`).
#[no_mangle]
pub unsafe extern "C" fn fspace_allocate_range(
    fd: c_int,
    offset: i64,
    len: i64,
    summary: *mut fspace_range_summary,
    summary_size: usize,
) -> c_int {
    const F: &str = "fspace_allocate_range";
    ffi(F, || {
        let borrowed = fd_arg(F, fd)?;
        let offset = offset_arg(F, "offset", offset)?;
        if len <= 0 {
            return Err(Failure::invalid(F, format!("length {len} is not positive")));
        }
        let len = len as u64;
        end_arg(F, offset, len)?;
        // Checked before the allocation: a bad size changes nothing.
        // SAFETY: NULL or writable by the caller's promise.
        let out = unsafe { abi::opt_sized_out(F, "summary", summary, summary_size)? };
        let path = crate::ffi::fd_path(fd);
        let r = fspace::allocate_range(borrowed, &path, offset, len)?;
        if let Some(s) = out {
            s.set(fspace_range_summary {
                reserved: [0; 4],
                reserved2: [0; 7],
                strategy: strategy_to_c(r.strategy),
                old_len: r.old_len,
                new_len: r.new_len,
                holes_filled: r.holes_filled,
                bytes_written: r.bytes_written,
                syscalls: r.syscalls,
                write_syscalls: r.write_syscalls,
                holes_known: r.holes_known,
            });
        }
        Ok(0)
    })
}

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_grow_summary = 72,
    fspace_untorn_ready = 144,
    fspace_range_summary = 64,
}
