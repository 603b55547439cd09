//! Untorn (atomic) writes: the facts, the one answer per page size and I/O
//! path, the write call, and the layout check.

use crate::args;
use crate::errors::os_error;
use crate::ops::{fd_name, target, Target};
use crate::reports::{UntornAnswer, UntornFacts, UntornLayout};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::os::fd::{BorrowedFd, RawFd};

/// untorn_facts(path) -> UntornFacts
///
/// Reads what the kernel, the filesystem and the devices say about untorn
/// writes on the existing file at `path`: the limits statx
/// (STATX_WRITE_ATOMIC) reports ("supported" with its units, "zero",
/// "not-reported"), where the support comes from, the devices'
/// atomic_write_* limits and the geometry. Nothing is written.
///
/// Raises OSError (FileNotFoundError, PermissionError, ...) with the errno
/// and the path.
#[pyfunction]
pub(crate) fn untorn_facts(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<UntornFacts> {
    let path = args::path(path)?;
    py.detach(|| fspace::untorn::facts(&path))
        .map(UntornFacts::from)
        .map_err(os_error)
}

/// untorn_facts_of_fs(dir) -> UntornFacts
///
/// Measures the untorn-write facts of the filesystem holding the directory
/// `dir` on a scratch file made there and removed before returning: statx,
/// then RWF_ATOMIC writes of 4, 8, 16 and 64 KiB through O_DIRECT and of 8
/// and 16 KiB through the page cache, each with the kernel's answer
/// (`tried`).
///
/// Raises OSError with the errno and the path (a missing or read-only
/// directory, no space).
#[pyfunction]
pub(crate) fn untorn_facts_of_fs(py: Python<'_>, dir: &Bound<'_, PyAny>) -> PyResult<UntornFacts> {
    let dir = args::path(dir)?;
    py.detach(|| fspace::untorn::facts_of_fs(&dir))
        .map(UntornFacts::from)
        .map_err(os_error)
}

/// untorn_answer(dir, page_size, io="direct") -> UntornAnswer
///
/// Answers whether a write of `page_size` bytes through `io` ("direct":
/// O_DIRECT, or "buffered": the page cache) is untorn: the kernel's rules
/// on the reported limits, then the trial writes, which win where they
/// disagree. `dir` is a directory, whose filesystem is measured first as
/// untorn_facts_of_fs does, or UntornFacts already taken (answered from
/// them, no new measurement: ask several questions of one measurement).
/// Buffered writes are never untorn.
///
/// Raises ValueError for an unknown I/O path or a negative page size;
/// OSError with the errno and the path when measuring fails.
#[pyfunction]
#[pyo3(signature = (dir, page_size, io = "direct"))]
pub(crate) fn untorn_answer(
    py: Python<'_>,
    dir: &Bound<'_, PyAny>,
    page_size: &Bound<'_, PyAny>,
    io: &str,
) -> PyResult<UntornAnswer> {
    let page_size = args::bytes_arg(page_size, "page_size", true)?;
    let io: fspace::untorn::IoPath = args::named(io)?;
    if let Ok(f) = dir.cast::<UntornFacts>() {
        let facts = &f.get().facts;
        return Ok(UntornAnswer::from(&fspace::untorn::answer(
            facts, page_size, io,
        )));
    }
    let dir = args::path(dir)?;
    py.detach(|| {
        fspace::untorn::facts_of_fs(&dir)
            .map(|f| UntornAnswer::from(&fspace::untorn::answer(&f, page_size, io)))
    })
    .map_err(os_error)
}

/// An `O_DIRECT` buffer: `O_DIRECT` needs the buffer's address aligned
/// (`STATX_DIOALIGN`, at most a page), which a Python `bytes` object's data
/// never is. A copy of a page size is nothing beside the write it feeds.
struct Aligned {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl Aligned {
    const ALIGN: usize = 4096;

    fn copy_of(data: &[u8]) -> Aligned {
        let mut v = vec![0u8; data.len() + Self::ALIGN];
        let off = v.as_ptr().align_offset(Self::ALIGN).min(Self::ALIGN);
        v[off..off + data.len()].copy_from_slice(data);
        Aligned {
            v,
            off,
            len: data.len(),
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.v[self.off..self.off + self.len]
    }
}

/// The descriptor of `file` (an int, or an object with fileno()); a path
/// is refused: the caller opens the file with O_DIRECT.
fn fd_only(file: &Bound<'_, PyAny>, func: &str) -> PyResult<RawFd> {
    match target(file)? {
        Target::Fd(fd) => Ok(fd),
        Target::Path(_) => Err(PyTypeError::new_err(format!(
            "{func} needs an open descriptor (an int, or an object with fileno()), \
             opened with os.O_DIRECT for writing; not a path"
        ))),
    }
}

/// write_untorn(file, buf, offset, dsync=False) -> None
///
/// Writes `buf` at `offset` of `file` as one untorn write:
/// pwritev2(RWF_ATOMIC), with RWF_DSYNC when `dsync`. After a power cut the
/// range holds all of `buf` or all of what it held before, never a mix,
/// once the write is durable (`dsync`, or a later os.fdatasync). `file` is
/// an open descriptor (an int, or an object with fileno()) opened for
/// writing with os.O_DIRECT; `buf` is bytes-like (copied into a
/// page-aligned buffer, as O_DIRECT needs).
///
/// The file's limits (statx) and the descriptor's flags are checked first;
/// a write they do not take is refused before anything is issued, and
/// never made as a plain write. The OSError's message names the limit.
///
/// Raises ValueError for a negative offset or descriptor; TypeError for a
/// path or a str buffer; OSError EOPNOTSUPP where untorn writes are not
/// supported ("not supported here") or the descriptor is not open with
/// O_DIRECT; OSError EINVAL for a size that is not a power of two, outside
/// the units, or an offset that is not a multiple of the size.
#[pyfunction]
#[pyo3(signature = (file, buf, offset, dsync = false))]
pub(crate) fn write_untorn(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    buf: &Bound<'_, PyAny>,
    offset: &Bound<'_, PyAny>,
    dsync: bool,
) -> PyResult<()> {
    let fd = fd_only(file, "write_untorn")?;
    let offset = args::bytes_arg(offset, "offset", false)?;
    let data = args::bytes_like(buf, "the buffer")?;
    let aligned = Aligned::copy_of(data.as_bytes());
    py.detach(|| {
        // SAFETY: `fd` is the caller's open descriptor (its file object,
        // if any, is held by this call's arguments until we return); a
        // closed or wrong one fails statx with EBADF before any write.
        let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
        fspace::untorn::write_untorn(bfd, &fd_name(fd), aligned.as_slice(), offset, dsync)
    })
    .map_err(os_error)
}

/// check_untorn_layout(file, unit, offset=None, length=None) -> UntornLayout
///
/// Checks every `unit`-aligned unit of `offset .. offset + length` of
/// `file` (from 0 when `offset` is None, to its end when `length` is None;
/// rounded inwards to whole units): in one extent, written, not shared, with a physical start that
/// `unit` divides, as the hardware path of untorn writes needs (XFS takes
/// its slower software path otherwise; ext4 refuses the write). Uses
/// FIEMAP (with its sync flag: dirty data is allocated first). `file` is
/// an open descriptor (an int, or an object with fileno()) or a path,
/// opened for reading.
///
/// Raises ValueError for a negative offset, length or descriptor; OSError
/// EINVAL for a unit that is not a power of two of at least 512,
/// EOPNOTSUPP where there is no FIEMAP (tmpfs, FUSE).
#[pyfunction]
#[pyo3(signature = (file, unit, offset = None, length = None))]
pub(crate) fn check_untorn_layout(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    offset: Option<&Bound<'_, PyAny>>,
    length: Option<&Bound<'_, PyAny>>,
) -> PyResult<UntornLayout> {
    let unit = args::bytes_arg(unit, "unit", true)?;
    let offset = offset
        .map(|o| args::bytes_arg(o, "offset", false))
        .transpose()?
        .unwrap_or(0);
    let length = length
        .map(|l| args::bytes_arg(l, "length", false))
        .transpose()?;
    let target = target(file)?;
    let check = |fd: BorrowedFd<'_>, path: &std::path::Path| {
        let end = match length {
            Some(l) => offset.saturating_add(l),
            None => file_len(fd, path)?,
        };
        fspace::untorn::check_layout(fd, path, offset..end.max(offset), unit)
    };
    py.detach(|| match target {
        Target::Fd(fd) => {
            // SAFETY: as in write_untorn.
            let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
            check(bfd, &fd_name(fd))
        }
        Target::Path(p) => {
            let f =
                std::fs::File::open(&p).map_err(|e| fspace::Error::from_io("open", &p, None, e))?;
            use std::os::fd::AsFd;
            check(f.as_fd(), &p)
        }
    })
    .map(|c| UntornLayout::from(&c))
    .map_err(os_error)
}

/// The length of the open file `fd` (`fstat` on a duplicate: `File`
/// closes what it holds, and the caller keeps `fd`).
fn file_len(fd: BorrowedFd<'_>, path: &std::path::Path) -> fspace::Result<u64> {
    let dup = fd
        .try_clone_to_owned()
        .map_err(|e| fspace::Error::from_io("fcntl(F_DUPFD_CLOEXEC)", path, None, e))?;
    std::fs::File::from(dup)
        .metadata()
        .map(|m| m.len())
        .map_err(|e| fspace::Error::from_io("fstat", path, None, e))
}

/// Adds the functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(untorn_facts, m)?)?;
    m.add_function(wrap_pyfunction!(untorn_facts_of_fs, m)?)?;
    m.add_function(wrap_pyfunction!(untorn_answer, m)?)?;
    m.add_function(wrap_pyfunction!(write_untorn, m)?)?;
    m.add_function(wrap_pyfunction!(check_untorn_layout, m)?)?;
    Ok(())
}
