//! The package's functions: each parses its arguments, calls the library
//! with the GIL released, and returns the library's report.

use crate::args;
use crate::errors::{os_error, Interrupt};
use crate::reports::{
    CopyReport, DigReport, ExtentMap, FsInfo, GrowReport, ProbeResult, RangeReport,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::path::PathBuf;

/// info(path) -> FsInfo
///
/// Describes the filesystem holding `path` (a file or a directory): its
/// kind, mount, sizes, the capabilities measured on a scratch file there
/// (once per device and process), and the policy's answer per intent, as
/// `fspace info` does. `to_dict()` is the document of `fspace info --json`.
///
/// Raises OSError (FileNotFoundError, PermissionError, ...) with the errno
/// and the path.
#[pyfunction]
pub(crate) fn info(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<FsInfo> {
    let path = args::path(path)?;
    py.detach(|| {
        fspace::fs_info(&path).map(|i| {
            let i = i.with_block_devices();
            FsInfo::from(&i)
        })
    })
    .map_err(os_error)
}

/// grow(path, size, intent="bulk", strategy="auto", *, fallback=True,
///      create=False, sync=False, check_free_space=True,
///      untorn_unit=None) -> GrowReport
///
/// Grows the file at `path` to `size` bytes (an int, or a size such as
/// "16M") the right way for its filesystem and `intent`: "bulk" (written
/// once, soon), "log" (overwritten by small records with fdatasync: written
/// extents) or "sparse" (may stay empty). `strategy` "auto" asks the policy
/// (following a measurement `fspace probe --save` saved for this
/// filesystem); a strategy's name ("sparse", "reserve", "allocate",
/// "write-zeroes", "zero-fill") is tried first and falls back along the
/// ladder unless `fallback` is False. Never changes existing bytes, never
/// shrinks; on failure the file is put back. `create` makes a missing file
/// (grown under a temporary name, renamed when complete); `sync` makes the
/// result durable. `untorn_unit` (bytes, a power of two of at least 512)
/// makes the space ready for untorn writes of that size: written extents
/// (intent "log"'s plan) and, on XFS, an extent-size hint of the unit;
/// `report.untorn` says what was done and checks every unit's layout.
///
/// Raises ValueError for an unknown intent or strategy or a negative size;
/// OSError with the errno and path when the library fails (EINVAL for a
/// size below the current length, or an untorn unit that is not a power of
/// two of at least 512). Ctrl-C stops a zero-fill and rolls back.
#[pyfunction]
#[pyo3(signature = (path, size, intent = "bulk", strategy = "auto", *, fallback = true,
                    create = false, sync = false, check_free_space = true,
                    untorn_unit = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    intent: &str,
    strategy: &str,
    fallback: bool,
    create: bool,
    sync: bool,
    check_free_space: bool,
    untorn_unit: Option<&Bound<'_, PyAny>>,
) -> PyResult<GrowReport> {
    let path = args::path(path)?;
    let size = args::bytes_arg(size, "size", true)?;
    let untorn_unit = untorn_unit
        .map(|u| args::u32_arg(u, "untorn_unit", true))
        .transpose()?;
    let intent: fspace::Intent = args::named(intent)?;
    let requested = args::strategy(strategy)?;
    if !fallback && requested.is_none() {
        return Err(PyValueError::new_err(
            "fallback=False needs a named strategy (auto always uses its fallback ladder)",
        ));
    }
    let choice = args::choice(requested, fallback);
    let stop = Interrupt::new();
    let r = py.detach(|| {
        let show = |_: fspace::Progress| stop.poll();
        let opts = fspace::GrowOptions::default()
            .choice(choice)
            .intent(intent)
            .create(create)
            .sync(sync)
            .check_free_space(check_free_space)
            .untorn_unit(untorn_unit)
            .progress(Some(&show))
            .cancel(Some(&stop.cancel));
        fspace::grow(&path, size, &opts).map(|r| GrowReport::from(&r))
    });
    stop.result(r)
}

/// What `allocate` was given: a descriptor (borrowed from the caller, who
/// keeps it open) or a path to open.
pub(crate) enum Target {
    Fd(RawFd),
    Path(PathBuf),
}

pub(crate) fn target(file: &Bound<'_, PyAny>) -> PyResult<Target> {
    let fd_of = |v: &Bound<'_, PyAny>| -> PyResult<RawFd> {
        let fd: RawFd = v
            .extract()
            .map_err(|_| PyValueError::new_err("a file descriptor must fit in a C int"))?;
        if fd < 0 {
            return Err(PyValueError::new_err(format!(
                "a file descriptor cannot be negative ({fd})"
            )));
        }
        Ok(fd)
    };
    if file.is_instance_of::<PyInt>() {
        return Ok(Target::Fd(fd_of(file)?));
    }
    if file.hasattr("fileno")? {
        let fd = file.call_method0("fileno")?;
        if !fd.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err("fileno() must return an int"));
        }
        return Ok(Target::Fd(fd_of(&fd)?));
    }
    Ok(Target::Path(args::path(file)?))
}

/// The name a descriptor's errors and report carry: what
/// `/proc/self/fd/N` links to, else `fd N`.
pub(crate) fn fd_name(fd: RawFd) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .unwrap_or_else(|_| PathBuf::from(format!("fd {fd}")))
}

/// allocate(file, offset, length) -> RangeReport
///
/// Makes every byte of `offset .. offset + length` of `file` allocated,
/// extending it when the range ends past EOF: what os.posix_fallocate
/// promises, without glibc's emulation, which writes one byte into every
/// 4 KiB block where fallocate(2) is unsupported (ext4 without extents,
/// NFS, FUSE such as sshfs). fspace calls fallocate(2) and only where it is
/// unsupported fills the holes and the part past EOF with large zero
/// writes; bytes already in the file keep their values.
///
/// `file` is an open descriptor (an int, or an object with fileno(): it
/// must be open for writing) or a path (str, bytes, os.PathLike), which is
/// opened for reading and writing (it must exist). Nothing is synced.
///
/// Raises ValueError for a negative offset, length or descriptor; OSError
/// with the errno otherwise (EINVAL for a zero length, EBADF for a
/// descriptor not open for writing, ENOSPC when the fill cannot fit).
#[pyfunction]
pub(crate) fn allocate(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    offset: &Bound<'_, PyAny>,
    length: &Bound<'_, PyAny>,
) -> PyResult<RangeReport> {
    let offset = args::bytes_arg(offset, "offset", false)?;
    let length = args::bytes_arg(length, "length", false)?;
    let target = target(file)?;
    py.detach(|| match target {
        Target::Fd(fd) => {
            // SAFETY: `fd` is the caller's open descriptor (its file object,
            // if any, is held by this call's arguments until we return), as
            // with os.posix_fallocate; a closed or wrong one fails fstat
            // with EBADF before anything else is issued.
            let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
            fspace::allocate_range(bfd, fd_name(bfd.as_raw_fd()), offset, length)
        }
        Target::Path(p) => {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&p)
                .map_err(|e| fspace::Error::from_io("open", &p, None, e))?;
            fspace::allocate_range(&f, &p, offset, length)
        }
    })
    .map(|r| RangeReport::from(&r))
    .map_err(os_error)
}

/// copy(src, dst, sparse="auto", reflink="auto", *, force=False,
///      preserve=False, sync=False, keep_allocation=False) -> CopyReport
///
/// Copies the file `src` to `dst` (into it, when `dst` is a directory)
/// without losing holes: the source's holes stay holes, data moves by
/// FICLONE (`reflink`), copy_file_range or large reads and writes, never
/// one syscall per KiB. `sparse` "always" also turns zero blocks inside the
/// data into holes; "never" writes every byte. The copy appears under its
/// name only when complete; `force` replaces an existing `dst`; `preserve`
/// copies mode, owner and times; `sync` makes the copy durable;
/// `keep_allocation` keeps the source's unwritten (fallocated) extents.
///
/// Raises ValueError for an unknown mode or options that cannot go
/// together; OSError with the errno and path (FileExistsError when `dst`
/// exists without `force`). Ctrl-C stops the copy and removes the
/// temporary file.
#[pyfunction]
#[pyo3(signature = (src, dst, sparse = "auto", reflink = "auto", *, force = false,
                    preserve = false, sync = false, keep_allocation = false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy(
    py: Python<'_>,
    src: &Bound<'_, PyAny>,
    dst: &Bound<'_, PyAny>,
    sparse: &str,
    reflink: &str,
    force: bool,
    preserve: bool,
    sync: bool,
    keep_allocation: bool,
) -> PyResult<CopyReport> {
    let src = args::path(src)?;
    let dst = args::path(dst)?;
    let sparse: fspace::SparseMode = args::named(sparse)?;
    let reflink: fspace::ReflinkMode = args::named(reflink)?;
    let options = || {
        fspace::CopyOptions::default()
            .sparse(sparse)
            .reflink(reflink)
            .force(force)
            .preserve(preserve)
            .sync(sync)
            .keep_allocation(keep_allocation)
    };
    // The library's own check; a conflict is a bad argument.
    options()
        .validate()
        .map_err(|e| PyValueError::new_err(e.message))?;
    let stop = Interrupt::new();
    let r = py.detach(|| {
        let show = |_: fspace::Progress| stop.poll();
        let opts = options().progress(Some(&show)).cancel(Some(&stop.cancel));
        fspace::copy(&src, &dst, &opts).map(|r| CopyReport::from(&r))
    });
    stop.result(r)
}

/// dig(path, *, sync=False) -> DigReport
///
/// Punches holes over the runs of zero blocks inside the file's data, in
/// place (util-linux `fallocate --dig-holes`): the file reads back the same
/// and allocates less. Punches are aligned to the allocation unit, so none
/// splits a unit. `sync` fsyncs the file at the end.
///
/// Raises OSError with the errno and path (EOPNOTSUPP where the filesystem
/// cannot punch holes: nothing was changed). Ctrl-C stops it; holes
/// punched so far stay.
#[pyfunction]
#[pyo3(signature = (path, *, sync = false))]
pub(crate) fn dig(py: Python<'_>, path: &Bound<'_, PyAny>, sync: bool) -> PyResult<DigReport> {
    let path = args::path(path)?;
    let stop = Interrupt::new();
    let r = py.detach(|| {
        let show = |_: fspace::Progress| stop.poll();
        let opts = fspace::DigOptions::default()
            .sync(sync)
            .progress(Some(&show))
            .cancel(Some(&stop.cancel));
        fspace::dig(&path, &opts).map(|r| DigReport::from(&r))
    });
    stop.result(r)
}

/// map(path, *, sync=False) -> ExtentMap
///
/// Maps the file's extents: holes, unwritten, written, shared and
/// delayed-allocation ranges (FIEMAP), or holes and data where FIEMAP is
/// missing (`method` "seek": tmpfs, FUSE). `sync` flushes dirty data first
/// so that delayed allocations show as the extents they become.
///
/// Raises OSError with the errno and path.
#[pyfunction]
#[pyo3(signature = (path, *, sync = false))]
pub(crate) fn map(py: Python<'_>, path: &Bound<'_, PyAny>, sync: bool) -> PyResult<ExtentMap> {
    let path = args::path(path)?;
    py.detach(|| {
        fspace::map_file(&path, fspace::MapOptions::default().sync(sync))
            .map(|m| ExtentMap::from(&path, &m))
    })
    .map_err(os_error)
}

/// probe(dir, quick=True, *, full=False) -> ProbeResult
///
/// Measures what each way of preparing space is worth on the filesystem
/// holding the directory `dir` (growth by each strategy, 8 KiB commits
/// into space in each state and through the log), in a scratch directory
/// inside it that is removed afterwards, and recommends a strategy per
/// intent. `quick` takes about 10 s; quick=False about 30 s; `full` adds a
/// record-size sweep. Nothing is saved (`fspace probe --save` saves).
///
/// Raises ValueError when both `quick` and `full` are set; OSError with the
/// errno and path (a missing or read-only directory, too little space).
/// Ctrl-C stops it at the next measurement and removes the scratch files.
#[pyfunction]
#[pyo3(signature = (dir, quick = true, *, full = false))]
pub(crate) fn probe(
    py: Python<'_>,
    dir: &Bound<'_, PyAny>,
    quick: bool,
    full: bool,
) -> PyResult<ProbeResult> {
    let dir = args::path(dir)?;
    let level = match (quick, full) {
        (true, true) => {
            return Err(PyValueError::new_err(
                "quick and full cannot go together (pass quick=False with full=True)",
            ))
        }
        (true, false) => fspace::probe::Level::Quick,
        (false, true) => fspace::probe::Level::Full,
        (false, false) => fspace::probe::Level::Standard,
    };
    let stop = Interrupt::new();
    let r = py.detach(|| {
        let show = |_: &fspace::probe::ProbeProgress| stop.poll();
        let opts = fspace::probe::ProbeOptions::default()
            .level(level)
            .progress(Some(&show))
            .cancel(Some(&stop.cancel));
        fspace::probe::probe(&dir, &opts).map(|r| ProbeResult::from(&r))
    });
    stop.result(r)
}
