//! Copies that keep holes, and the sparse writer: `fspace_copy*`,
//! `fspace_sparse_writer_*`.

use crate::abi;
use crate::ffi::{
    arg, arg_mut, bytes_arg, end_arg, fd_arg, ffi, json_string, offset_arg, out, path_arg, CResult,
    Failure,
};
use fspace::{CopyMethod, ReflinkMode, SparseMode, SparseStats, SparseWriterOptions};
use fspace::{CopyOptions, CopyReport, SparseWriter};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;

/// What a copy does with zeros (`FSPACE_SPARSE_*`).
pub type fspace_sparse_mode = u32;
/// Keep the source's holes; copy its data as it is.
pub const FSPACE_SPARSE_AUTO: fspace_sparse_mode = 0;
/// Also make holes of zero blocks inside the data.
pub const FSPACE_SPARSE_ALWAYS: fspace_sparse_mode = 1;
/// Write holes as zeros: the copy ends fully allocated.
pub const FSPACE_SPARSE_NEVER: fspace_sparse_mode = 2;

/// Whether a copy may share the source's blocks (`FSPACE_REFLINK_*`).
pub type fspace_reflink_mode = u32;
/// Share blocks where the filesystem can, else copy.
pub const FSPACE_REFLINK_AUTO: fspace_reflink_mode = 0;
/// Share blocks or fail.
pub const FSPACE_REFLINK_ALWAYS: fspace_reflink_mode = 1;
/// Never share.
pub const FSPACE_REFLINK_NEVER: fspace_reflink_mode = 2;

/// How a copy moved its data (`FSPACE_COPY_*`).
pub type fspace_copy_method = u32;
/// Nothing to move: the source is empty.
pub const FSPACE_COPY_NONE: fspace_copy_method = 0;
/// `FICLONE`: the copy shares the source's blocks.
pub const FSPACE_COPY_CLONE: fspace_copy_method = 1;
/// `copy_file_range` per data extent.
pub const FSPACE_COPY_COPY_FILE_RANGE: fspace_copy_method = 2;
/// `pread` and the sparse writer.
pub const FSPACE_COPY_READ_WRITE: fspace_copy_method = 3;
/// Read to the end (a pipe, a file in /proc) or written in order into a
/// pipe, FIFO or device.
pub const FSPACE_COPY_STREAM: fspace_copy_method = 4;
/// Onto a block device: data written, zero ranges zeroed.
pub const FSPACE_COPY_DEVICE: fspace_copy_method = 5;

/// Options of `fspace_copy`. Always set the defaults with
/// `fspace_copy_options_init(&options, sizeof options)` before changing
/// fields: a zeroed struct is not the defaults, and its `size` is refused.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_copy_options {
    /// The size of this struct as the program was built (set by
    /// `fspace_copy_options_init`): the library reads only the fields it
    /// covers.
    pub size: u32,
    /// `FSPACE_SPARSE_*`; default `FSPACE_SPARSE_AUTO`.
    pub sparse: fspace_sparse_mode,
    /// `FSPACE_REFLINK_*`; default `FSPACE_REFLINK_AUTO`.
    pub reflink: fspace_reflink_mode,
    /// Replace an existing destination (default false: `-EEXIST`).
    pub force: bool,
    /// Copy mode, owner and times (default false).
    pub preserve: bool,
    /// `fsync` the copy before it appears and its directory after (default
    /// false). Without it, after a power cut a new destination may be
    /// missing or short (down to 0 bytes); a replaced one (`force`) holds
    /// the old file or the whole copy (the copy is fsynced before it
    /// replaces a file even without `sync`).
    pub sync: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 1],
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
pub unsafe extern "C" fn fspace_copy_options_init(
    options: *mut fspace_copy_options,
    size: usize,
) -> c_int {
    const F: &str = "fspace_copy_options_init";
    // SAFETY: forwarded caller promise.
    ffi(F, || unsafe { abi::init(F, options, size) }.map(|()| 0))
}

// SAFETY: `CopyOptionsRaw` has the struct's layout (asserted below), with
// integers only.
unsafe impl abi::Options for fspace_copy_options {
    type Raw = CopyOptionsRaw;
    const FIRST: usize = 16;
    const INIT: &'static str = "fspace_copy_options_init";
    // From the layout, not typed in: the bytes from `reserved` to the
    // next field (or the struct's end).
    const RESERVED: &'static [(usize, usize)] = &[(
        std::mem::offset_of!(fspace_copy_options, reserved),
        size_of::<fspace_copy_options>() - std::mem::offset_of!(fspace_copy_options, reserved),
    )];
    fn defaults() -> Self {
        let d = CopyOptions::default();
        fspace_copy_options {
            reserved: [0; 1],
            size: 0,
            sparse: FSPACE_SPARSE_AUTO,
            reflink: FSPACE_REFLINK_AUTO,
            force: d.force,
            preserve: d.preserve,
            sync: d.sync,
        }
    }
}

/// `fspace_copy_options` with its `bool`s read as bytes (see
/// `GrowOptionsRaw` in resize.rs).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct CopyOptionsRaw {
    size: u32,
    sparse: fspace_sparse_mode,
    reflink: fspace_reflink_mode,
    force: u8,
    preserve: u8,
    sync: u8,
    reserved: [u8; 1],
}

// Same layout as the public struct, field by field; the released size.
const _: () = assert!(
    size_of::<CopyOptionsRaw>() == size_of::<fspace_copy_options>()
        && align_of::<CopyOptionsRaw>() == align_of::<fspace_copy_options>()
        && std::mem::offset_of!(CopyOptionsRaw, size)
            == std::mem::offset_of!(fspace_copy_options, size)
        && std::mem::offset_of!(CopyOptionsRaw, sparse)
            == std::mem::offset_of!(fspace_copy_options, sparse)
        && std::mem::offset_of!(CopyOptionsRaw, reflink)
            == std::mem::offset_of!(fspace_copy_options, reflink)
        && std::mem::offset_of!(CopyOptionsRaw, force)
            == std::mem::offset_of!(fspace_copy_options, force)
        && std::mem::offset_of!(CopyOptionsRaw, preserve)
            == std::mem::offset_of!(fspace_copy_options, preserve)
        && std::mem::offset_of!(CopyOptionsRaw, sync)
            == std::mem::offset_of!(fspace_copy_options, sync)
        && std::mem::offset_of!(CopyOptionsRaw, reserved)
            == std::mem::offset_of!(fspace_copy_options, reserved)
        && size_of::<fspace_copy_options>() == <fspace_copy_options as abi::Options>::FIRST
);

fn copy_options(func: &str, o: Option<CopyOptionsRaw>) -> CResult<CopyOptions<'static>> {
    let mut c = CopyOptions::default();
    if let Some(o) = o {
        c.sparse = match o.sparse {
            FSPACE_SPARSE_AUTO => SparseMode::Auto,
            FSPACE_SPARSE_ALWAYS => SparseMode::Always,
            FSPACE_SPARSE_NEVER => SparseMode::Never,
            v => return Err(Failure::invalid(func, format!("unknown sparse mode {v}"))),
        };
        c.reflink = match o.reflink {
            FSPACE_REFLINK_AUTO => ReflinkMode::Auto,
            FSPACE_REFLINK_ALWAYS => ReflinkMode::Always,
            FSPACE_REFLINK_NEVER => ReflinkMode::Never,
            v => return Err(Failure::invalid(func, format!("unknown reflink mode {v}"))),
        };
        c.force = o.force != 0;
        c.preserve = o.preserve != 0;
        c.sync = o.sync != 0;
        c.validate().map_err(|m| Failure::invalid(func, m))?;
    }
    Ok(c)
}

/// What a copy did (an opaque handle).
pub struct fspace_copy_report {
    report: CopyReport,
    json: CString,
}

/// The figures of an `fspace_copy_report`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_copy_summary {
    /// `FSPACE_COPY_*`: how the data moved.
    pub method: fspace_copy_method,
    /// Methods tried and abandoned first.
    pub fallbacks: u32,
    /// Length of the copy.
    pub len: u64,
    /// Bytes shared with the source.
    pub bytes_cloned: u64,
    /// Bytes moved by `copy_file_range`.
    pub bytes_offloaded: u64,
    /// Bytes read and written.
    pub bytes_copied: u64,
    /// Data ranges copied; `UINT64_MAX` after a clone (`FSPACE_COPY_CLONE`),
    /// which shares the source's extents without visiting them.
    pub data_extents: u64,
    /// Holes in the copy; `UINT64_MAX` after a clone.
    pub holes: u64,
    /// Bytes in those holes; `UINT64_MAX` after a clone.
    pub hole_bytes: u64,
    /// Zero bytes of the source's data made holes.
    pub zero_bytes_holed: u64,
    /// Bytes allocated to the source; `UINT64_MAX` where that cannot be
    /// known (FUSE and network filesystems, pipes).
    pub src_allocated: u64,
    /// Bytes allocated to the copy; `UINT64_MAX` where that cannot be known.
    pub dst_allocated: u64,
    /// Syscalls issued.
    pub syscalls: u64,
    /// Of which write data or make holes.
    pub write_syscalls: u64,
    /// Wall time in nanoseconds.
    pub elapsed_ns: u64,
    /// An existing destination was replaced.
    pub replaced: bool,
    /// Mode, owner and times were copied.
    pub preserved: bool,
    /// The copy and its directory were synced.
    pub synced: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 5],
}

/// Copies the regular file `src` to `dst` without losing its holes:
/// `FICLONE` where the filesystem shares blocks, else `copy_file_range`
/// per data extent, else reads and the sparse writer. The copy appears at
/// `dst` only when complete (temporary name, rename). `options` NULL means
/// the defaults. On success, when `report` is not NULL, `*report` is a new
/// handle for `fspace_copy_report_free`.
///
/// When `dst` is an existing directory, the copy is made inside it under
/// the source's file name.
///
/// Errors: `-EINVAL` (NULL path, unknown constant, same file,
/// `FSPACE_REFLINK_ALWAYS` with a sparse mode other than auto); `-ENOENT`;
/// `-EEXIST` (`dst` exists without `force`); `-EISDIR` (`src` is a
/// directory); `-ENOSPC` (nothing is
/// left at `dst`); `-EOPNOTSUPP` (`FSPACE_REFLINK_ALWAYS` where blocks cannot
/// be shared); the errors of the calls made.
///
/// Options (`options` not NULL): `-EINVAL` for a struct that `fspace_copy_options_init`
/// did not set (a `size` that is no version of it, nonzero `reserved`
/// bytes), `-E2BIG` for a field this library does not know, set (a
/// program built against a newer header); nothing is done.
///
/// # Safety
/// `src` and `dst` are NULL or NUL-terminated strings; `options` is NULL or
/// readable for the `size` bytes its first field names; `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_copy(
    src: *const c_char,
    dst: *const c_char,
    options: *const fspace_copy_options,
    report: *mut *mut fspace_copy_report,
) -> c_int {
    const F: &str = "fspace_copy";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (src, dst) = unsafe { (path_arg(F, "src", src)?, path_arg(F, "dst", dst)?) };
        // SAFETY: NULL or readable.
        let opts = copy_options(F, unsafe { abi::read(F, options)? })?;
        let r = fspace::copy(&src, &dst, &opts)?;
        if !report.is_null() {
            let json = json_string(F, &r)?;
            let h = Box::into_raw(Box::new(fspace_copy_report { report: r, json }));
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
pub unsafe extern "C" fn fspace_copy_report_get(
    report: *const fspace_copy_report,
    summary: *mut fspace_copy_summary,
    summary_size: usize,
) -> c_int {
    const F: &str = "fspace_copy_report_get";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, s) = unsafe {
            (
                arg(F, "report", report)?,
                abi::sized_out(F, "summary", summary, summary_size)?,
            )
        };
        let r = &h.report;
        s.set(fspace_copy_summary {
            reserved: [0; 5],
            method: match r.method {
                CopyMethod::None => FSPACE_COPY_NONE,
                CopyMethod::Clone => FSPACE_COPY_CLONE,
                CopyMethod::CopyFileRange => FSPACE_COPY_COPY_FILE_RANGE,
                CopyMethod::ReadWrite => FSPACE_COPY_READ_WRITE,
                CopyMethod::Stream => FSPACE_COPY_STREAM,
                CopyMethod::Device => FSPACE_COPY_DEVICE,
            },
            fallbacks: u32::try_from(r.fallbacks.len()).unwrap_or(u32::MAX),
            len: r.len,
            bytes_cloned: r.bytes_cloned,
            bytes_offloaded: r.bytes_offloaded,
            bytes_copied: r.bytes_copied,
            data_extents: r.data_extents.unwrap_or(u64::MAX),
            holes: r.holes.unwrap_or(u64::MAX),
            hole_bytes: r.hole_bytes.unwrap_or(u64::MAX),
            zero_bytes_holed: r.zero_bytes_holed,
            src_allocated: r.src_allocated.unwrap_or(u64::MAX),
            dst_allocated: r.dst_allocated.unwrap_or(u64::MAX),
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            elapsed_ns: u64::try_from(r.elapsed.as_nanos()).unwrap_or(u64::MAX),
            replaced: r.replaced,
            preserved: r.preserved,
            synced: r.synced,
        });
        Ok(0)
    })
}

/// Writes to `*json` the report as JSON (as `fspace copy --json` prints
/// it); owned by the report.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `report` is NULL or a live handle; `json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_copy_report_json(
    report: *const fspace_copy_report,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_copy_report_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, o) = unsafe { (arg(F, "report", report)?, out(F, "json", json)?) };
        o.set(h.json.as_ptr());
        Ok(0)
    })
}

/// Frees a copy report; NULL does nothing.
///
/// # Safety
/// `report` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_copy_report_free(report: *mut fspace_copy_report) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::ffi::free_handle(report) }
}

/// Flag of `fspace_sparse_writer_new`: do not scan data for zero blocks
/// (only ranges given to `fspace_sparse_writer_skip` become holes).
pub const FSPACE_SPARSE_WRITER_NO_DETECT: u32 = 1;
/// Flag of `fspace_sparse_writer_new`: write zeros for the ranges given to
/// `fspace_sparse_writer_skip` instead of making them holes (zero blocks
/// found in data still become holes unless `FSPACE_SPARSE_WRITER_NO_DETECT`
/// is set too).
pub const FSPACE_SPARSE_WRITER_NO_HOLES: u32 = 2;

/// Writes a file so that zero runs of whole blocks become holes while data
/// goes out in large writes (an opaque handle; one thread at a time).
pub struct fspace_sparse_writer {
    writer: Option<SparseWriter<'static>>,
    path: PathBuf,
}

/// What a sparse writer did, from `fspace_sparse_writer_finish`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_sparse_stats {
    /// Data bytes written (zeros written as data included).
    pub bytes_written: u64,
    /// Zeros written where holes could not or must not be made.
    pub zeros_written: u64,
    /// Hole ranges in the result.
    pub holes: u64,
    /// Bytes in those ranges.
    pub hole_bytes: u64,
    /// Zero bytes found inside data and made holes.
    pub zero_bytes_found: u64,
    /// `pwritev` calls.
    pub write_calls: u64,
    /// `fallocate(PUNCH_HOLE)` calls.
    pub punch_calls: u64,
    /// The block size zero runs were found in.
    pub block_size: u64,
    /// The file was empty when the writer started.
    pub fresh: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 7],
}

fn stats_to_c(s: &SparseStats) -> fspace_sparse_stats {
    fspace_sparse_stats {
        reserved: [0; 7],
        bytes_written: s.bytes_written,
        zeros_written: s.zeros_written,
        holes: s.holes,
        hole_bytes: s.hole_bytes,
        zero_bytes_found: s.zero_bytes_found,
        write_calls: s.write_calls,
        punch_calls: s.punch_calls,
        block_size: s.block_size,
        fresh: s.fresh,
    }
}

/// Starts writing the regular file open for writing as `fd`, from offset 0
/// (the descriptor's own offset is neither used nor moved). `path` names it
/// in messages (NULL: the file `/proc/self/fd/FD` links to). `flags` is 0 or
/// `FSPACE_SPARSE_WRITER_*` combined. `fd` must stay open until the writer
/// is freed. On success `*out` is a new handle: write to it, then
/// `fspace_sparse_writer_finish`, then `fspace_sparse_writer_free`.
///
/// Errors: `-EINVAL` (NULL `out`, unknown flag, a descriptor that is not a
/// regular file nor a directory, an `O_APPEND` descriptor); `-EISDIR` (a
/// directory); `-EBADF` (negative, closed or read-only descriptor).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_new(
    fd: c_int,
    path: *const c_char,
    flags: u32,
    out: *mut *mut fspace_sparse_writer,
) -> c_int {
    const F: &str = "fspace_sparse_writer_new";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let o = unsafe { crate::ffi::out(F, "out", out)? };
        let borrowed = fd_arg(F, fd)?;
        let path = if path.is_null() {
            crate::ffi::fd_path(fd)
        } else {
            // SAFETY: non-NULL, NUL-terminated by the caller's promise.
            unsafe { path_arg(F, "path", path)? }
        };
        if flags & !(FSPACE_SPARSE_WRITER_NO_DETECT | FSPACE_SPARSE_WRITER_NO_HOLES) != 0 {
            return Err(Failure::invalid(F, format!("unknown flags {flags:#x}")));
        }
        let opts = SparseWriterOptions::default()
            .detect_zeros(flags & FSPACE_SPARSE_WRITER_NO_DETECT == 0)
            .keep_holes(flags & FSPACE_SPARSE_WRITER_NO_HOLES == 0);
        let writer = SparseWriter::new(borrowed, &path, opts)?;
        o.set(Box::into_raw(Box::new(fspace_sparse_writer {
            writer: Some(writer),
            path,
        })));
        Ok(0)
    })
}

/// Returns the live writer of a handle, or `-EINVAL` once finished.
///
/// # Safety
/// `w` is NULL or a live handle not used by another thread now.
unsafe fn live<'a>(
    func: &str,
    w: *mut fspace_sparse_writer,
) -> CResult<&'a mut SparseWriter<'static>> {
    // SAFETY: forwarded caller promise.
    let h = unsafe { arg_mut(func, "writer", w)? };
    let path = h.path.display().to_string();
    h.writer
        .as_mut()
        .ok_or_else(|| Failure::invalid(func, format!("writer of {path} is already finished")))
}

/// Writes `len` bytes from `data` at the writer's position and advances it.
///
/// Errors: `-EINVAL` (NULL argument with `len` > 0, finished writer);
/// `-EFBIG` (past the largest file); the errors of `pwritev` and `fallocate`.
///
/// # Safety
/// `writer` is NULL or a live handle; `data` is NULL or readable for `len`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_write(
    writer: *mut fspace_sparse_writer,
    data: *const c_void,
    len: usize,
) -> c_int {
    const F: &str = "fspace_sparse_writer_write";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (w, data) = unsafe { (live(F, writer)?, bytes_arg(F, "data", data.cast(), len)?) };
        end_arg(F, w.position(), data.len() as u64)?;
        w.write(data)?;
        Ok(0)
    })
}

/// Writes `len` bytes from `data` at `offset` and moves the position after
/// them. An offset past everything written or skipped makes the gap a hole;
/// one before the position overwrites what was written there.
///
/// Errors: those of `fspace_sparse_writer_write`; `-EINVAL` (negative
/// offset).
///
/// # Safety
/// As `fspace_sparse_writer_write`.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_write_at(
    writer: *mut fspace_sparse_writer,
    offset: i64,
    data: *const c_void,
    len: usize,
) -> c_int {
    const F: &str = "fspace_sparse_writer_write_at";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (w, data) = unsafe { (live(F, writer)?, bytes_arg(F, "data", data.cast(), len)?) };
        let offset = offset_arg(F, "offset", offset)?;
        end_arg(F, offset, data.len() as u64)?;
        w.write_at(offset, data)?;
        Ok(0)
    })
}

/// Declares the next `len` bytes a hole and moves the position past them.
///
/// Errors: `-EINVAL` (negative length, finished writer); `-EFBIG`.
///
/// # Safety
/// `writer` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_skip(
    writer: *mut fspace_sparse_writer,
    len: i64,
) -> c_int {
    const F: &str = "fspace_sparse_writer_skip";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let w = unsafe { live(F, writer)? };
        let len = offset_arg(F, "length", len)?;
        end_arg(F, w.position(), len)?;
        w.skip(len)?;
        Ok(0)
    })
}

/// Moves the position to `offset` (flushing buffered data). Moving past
/// everything written or skipped makes the gap a hole; moving back lets the
/// next write overwrite what was written there.
///
/// Errors: `-EINVAL` (negative offset, finished writer); `-EFBIG`.
///
/// # Safety
/// `writer` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_seek(
    writer: *mut fspace_sparse_writer,
    offset: i64,
) -> c_int {
    const F: &str = "fspace_sparse_writer_seek";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let w = unsafe { live(F, writer)? };
        let offset = offset_arg(F, "offset", offset)?;
        end_arg(F, offset, 0)?;
        w.seek(offset)?;
        Ok(0)
    })
}

/// Declares the final length of the file (at least what is written), so
/// that a zero tail becomes a hole.
///
/// Errors: `-EINVAL` (negative length, finished writer); `-EFBIG`; the
/// errors of `ftruncate`.
///
/// # Safety
/// `writer` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_set_len(
    writer: *mut fspace_sparse_writer,
    len: i64,
) -> c_int {
    const F: &str = "fspace_sparse_writer_set_len";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let w = unsafe { live(F, writer)? };
        let len = offset_arg(F, "length", len)?;
        end_arg(F, len, 0)?;
        w.set_len(len)?;
        Ok(0)
    })
}

/// Writes the current position to `*position`.
///
/// Errors: `-EINVAL` (NULL argument, finished writer).
///
/// # Safety
/// `writer` is NULL or a live handle; `position` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_position(
    writer: *mut fspace_sparse_writer,
    position: *mut u64,
) -> c_int {
    const F: &str = "fspace_sparse_writer_position";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (w, o) = unsafe { (live(F, writer)?, out(F, "position", position)?) };
        o.set(w.position());
        Ok(0)
    })
}

/// Writes out what is buffered and sets the file's length to the end of
/// everything written or skipped (or the length set, if larger). When
/// `stats` is not NULL it receives what the writer did. The handle is
/// finished either way (later calls but `_free` are `-EINVAL`); free it
/// with `fspace_sparse_writer_free`.
///
/// Errors: `-EINVAL` (NULL writer, already finished); the errors of
/// `pwritev`, `fallocate` and `ftruncate`.
///
/// `-EINVAL` also for `stats_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `writer` is NULL or a live handle; `stats` is NULL or writable for `stats_size` bytes (`sizeof *stats`).
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_finish(
    writer: *mut fspace_sparse_writer,
    stats: *mut fspace_sparse_stats,
    stats_size: usize,
) -> c_int {
    const F: &str = "fspace_sparse_writer_finish";
    ffi(F, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { arg_mut(F, "writer", writer)? };
        // Checked before the writer is consumed: a bad size changes nothing.
        // SAFETY: NULL or writable by the caller's promise.
        let out = unsafe { abi::opt_sized_out(F, "stats", stats, stats_size)? };
        let w = h.writer.take().ok_or_else(|| {
            Failure::invalid(
                F,
                format!("writer of {} is already finished", h.path.display()),
            )
        })?;
        let s = w.finish()?;
        if let Some(o) = out {
            o.set(stats_to_c(&s));
        }
        Ok(0)
    })
}

/// Frees a writer; NULL does nothing. Data not yet written out by
/// `fspace_sparse_writer_finish` is discarded.
///
/// # Safety
/// `writer` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_sparse_writer_free(writer: *mut fspace_sparse_writer) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::ffi::free_handle(writer) }
}

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_copy_summary = 120,
    fspace_sparse_stats = 72,
}
