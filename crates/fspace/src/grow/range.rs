//! Allocating a byte range of an open file, as `posix_fallocate` promises,
//! without glibc's emulation.
//!
//! glibc's `posix_fallocate` calls `fallocate(2)` and, where that returns
//! `EOPNOTSUPP` (NFS, FUSE, ext4 without extents), writes one byte into
//! every 4 KiB block of the range: 65,536 `pwrite`s for 256 MiB, and on NFS
//! a file left fragmented (docs/design.md, source S3). [`allocate_range`] keeps the same
//! contract and the same argument checks, but falls back to large zero
//! writes of only the holes inside the file and of the part of the range
//! beyond EOF, so bytes already in the file keep their values.

use super::failure::{check_free_space_for, Failure};
use crate::errno::{unsupported, unsupported_raw, Call};
use crate::error::{Error, Result};
use crate::runs::{self, DataRuns};
use crate::strategy::{Fallback, Strategy};
use crate::sys::{self, Errno, FallocMode};
use crate::zeros;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use serde::Serialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What [`allocate_range`] did.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RangeReport {
    /// The file, as named by the caller.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// The range asked for.
    pub range: Range<u64>,
    /// `allocate` (one `fallocate`) or `zero-fill` (zero writes of the holes
    /// and of the part beyond EOF).
    pub strategy: Strategy,
    /// `allocate`, with its error, when the fill was used instead.
    pub fallbacks: Vec<Fallback>,
    /// Length before.
    pub old_len: u64,
    /// Length after: `max(old_len, range.end)`.
    pub new_len: u64,
    /// Holes inside the old length that were filled.
    pub holes_filled: u64,
    /// Zero bytes written.
    pub bytes_written: u64,
    /// False when `SEEK_HOLE` could not show the holes inside the old
    /// length: it is unsupported, or it found none on a network or FUSE
    /// filesystem, where it is usually the kernel's generic version that
    /// reports every byte as data (sshfs). That part of the range was then
    /// read, and its blocks that read as zeros were written with zeros
    /// (counted in `holes_filled` and `bytes_written`), unless the
    /// descriptor is write-only: then that part was left as it was.
    pub holes_known: bool,
    /// Syscalls issued.
    pub syscalls: u64,
    /// Of which change the file (`fallocate`, `pwritev`, `ftruncate`).
    pub write_syscalls: u64,
    /// Wall time.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
}

/// Makes every byte of `offset..offset + len` of the open file `fd`
/// allocated, extending the file when the range ends past EOF:
/// `posix_fallocate(3)` without glibc's one-byte-per-block emulation.
///
/// Calls `fallocate(fd, 0, offset, len)`. Only where that fails with
/// `EOPNOTSUPP` or `ENOSYS` it checks its arguments as glibc does (`EBADF` for
/// an `O_APPEND` descriptor, whose `pwrite`s would land at EOF; `ESPIPE` for
/// a FIFO; `ENODEV` for anything but a regular file) and fills, with 1 MiB
/// zero writes, the holes inside the file (found with `SEEK_HOLE`; where it
/// cannot see them, as on sshfs, the blocks that read as zeros) and the part
/// of the range beyond EOF. Bytes already in the file keep their values.
/// When the fill would need more than the free space, it fails with `ENOSPC`
/// before writing; when a write fails, the file is put back to its old
/// length. Any other `fallocate` error is returned as it is, with its errno
/// (`EINVAL` for a zero length, `EBADF` for a descriptor not open for
/// writing, `EFBIG` past the maximum file size).
///
/// Not atomic against other writers: like glibc's emulation, a concurrent
/// write into a hole or past EOF between the scan and the fill can be
/// overwritten with zeros. Nothing is synced.
pub fn allocate_range<Fd: AsFd>(
    fd: Fd,
    path: impl AsRef<Path>,
    offset: u64,
    len: u64,
) -> Result<RangeReport> {
    let path = path.as_ref();
    let start = Instant::now();
    let before = sys::counters();
    let fd = fd.as_fd();
    let range = offset..offset.saturating_add(len);
    let mut report = RangeReport {
        path: path.to_path_buf(),
        range: range.clone(),
        strategy: Strategy::Allocate,
        fallbacks: Vec::new(),
        old_len: 0,
        new_len: 0,
        holes_filled: 0,
        bytes_written: 0,
        holes_known: true,
        syscalls: 0,
        write_syscalls: 0,
        elapsed: Duration::ZERO,
    };
    // An fstat error is the kernel's fallocate error too: EBADF.
    let old = sys::fstat(fd).map_err(|e| Error::io("fstat", path, None, e))?;
    report.old_len = old.size;
    match sys::fallocate(fd, FallocMode::Allocate, offset, len) {
        Ok(()) => report.new_len = old.size.max(range.end),
        Err(e) if unsupported(Call::FallocateEmulable, e) => {
            let err = Error::io("fallocate", path, Some(range.clone()), e);
            report
                .fallbacks
                .push(Fallback::new(Strategy::Allocate, err.unsupported_reason()));
            // The length read before fallocate still holds: it failed, so
            // nothing changed (glibc reads it after, with the same race
            // against writers).
            emulate(fd, path, &old, &mut report)?;
        }
        Err(e) => return Err(Error::io("fallocate", path, Some(range), e)),
    }
    let used = sys::counters().since(before);
    report.syscalls = used.total;
    report.write_syscalls = used.writes;
    report.elapsed = start.elapsed();
    Ok(report)
}

/// What `fallocate` would have done, by zero writes: the holes inside the
/// file and the part of the range past EOF (`st` is the file before).
fn emulate(
    fd: BorrowedFd<'_>,
    path: &Path,
    st: &sys::Stat,
    report: &mut RangeReport,
) -> Result<()> {
    let range = report.range.clone();
    report.strategy = Strategy::ZeroFill;
    let flags = check_fill_arguments(fd, path, st)?;
    let eof = st.size;
    let inside = range.start..range.end.min(eof);
    let (holes, seek_works) = holes_in(fd, path, inside.clone())?;
    // Nothing found on a network or FUSE filesystem: SEEK_HOLE is probably
    // the kernel's generic one, which reports the whole file as data (sshfs),
    // and st_blocks cannot tell either (sshfs reports size / 512).
    report.holes_known = inside.is_empty()
        || (seek_works && (!holes.is_empty() || !runs::seek_hole_may_be_blind(fd)));
    let tail = range.start.max(eof)..range.end.max(eof);
    // What must be new space: the holes seen and the tail. Blocks found by
    // reading (below) may already be allocated zeros, so they are not
    // counted; a real shortage there fails in the write.
    let need = holes.iter().map(|h| h.end - h.start).sum::<u64>() + (tail.end - tail.start);
    if need > 0 {
        check_free_space_for(fd, path, range.clone(), need, "allocate range").map_err(
            |f| match f {
                Failure::Fatal(e) | Failure::Unsupported(e) => e,
            },
        )?;
    }
    if !report.holes_known && flags.contains(OFlags::RDWR) {
        // Holes cannot be seen: find them as glibc does, by reading, but a
        // 1 MiB chunk at a time, writing each chunk's zero blocks at once
        // (with the zeros they hold) so that the window for a concurrent
        // writer stays one chunk wide. A write-only descriptor cannot be
        // read: its interior is left as it is.
        fill_zero_blocks(fd, path, inside, st.blksize, report)?;
    }
    for hole in holes.iter().chain(std::iter::once(&tail)) {
        if hole.start >= hole.end {
            continue;
        }
        report.bytes_written += fill_hole(fd, path, hole.clone(), eof)?;
        if hole.start < eof {
            report.holes_filled += 1;
        }
    }
    report.new_len = eof.max(range.end);
    Ok(())
}

/// Writes zeros over `hole`; on failure puts the length back to `eof`,
/// unless someone else has written past what this fill reached: their
/// bytes are not ours to cut (best effort: the error is what the caller
/// needs).
fn fill_hole(fd: BorrowedFd<'_>, path: &Path, hole: Range<u64>, eof: u64) -> Result<u64> {
    zeros::fill(fd, hole.start, hole.end, None, None).map_err(|(e, reached)| {
        if hole.start >= eof && sys::fstat(fd).is_ok_and(|s| s.size <= reached.max(eof)) {
            let _ = sys::ftruncate(fd, eof);
        }
        Error::io("pwritev", path, Some(reached..hole.end), e)
    })
}

/// glibc's checks before its emulation, with its errnos: a descriptor whose
/// flags cannot be read or that is in append mode (positioned writes would
/// land at EOF) is `EBADF`; a FIFO is `ESPIPE`; anything else that is not a
/// regular file is `ENODEV`.
/// Returns the descriptor's status flags.
fn check_fill_arguments(fd: BorrowedFd<'_>, path: &Path, st: &sys::Stat) -> Result<OFlags> {
    let refuse = |errno: Errno, message: &str| {
        Err(Error::refused_errno(
            "allocate range",
            path,
            errno,
            message.to_string(),
        ))
    };
    let flags = sys::status_flags(fd).map_err(|e| Error::io("fcntl", path, None, e))?;
    if flags.contains(OFlags::APPEND) {
        return refuse(
            Errno::BADF,
            "opened with O_APPEND: positioned writes would land at end of file",
        );
    }
    if st.is_regular() {
        Ok(flags)
    } else if st.mode & 0o170000 == 0o010000 {
        refuse(Errno::SPIPE, "is a FIFO, not a regular file")
    } else {
        Err(Error::not_regular(
            "allocate range",
            path,
            st,
            Some(Errno::NODEV),
        ))
    }
}

/// Returns the holes inside `within` (which ends at or before EOF), and
/// `false` instead where `SEEK_HOLE` is unsupported.
fn holes_in(
    fd: BorrowedFd<'_>,
    path: &Path,
    within: Range<u64>,
) -> Result<(Vec<Range<u64>>, bool)> {
    match DataRuns::new(fd, path, within).holes() {
        Ok(holes) => Ok((holes, true)),
        Err(e) if unsupported_raw(Call::SeekHole, e.raw_os_error()) => Ok((Vec::new(), false)),
        Err(e) => Err(e),
    }
}

/// Read size when looking for zero blocks (one zero-fill buffer).
const ZERO_SCAN_READ: usize = zeros::ZERO_FILL_BUFFER;

/// Where `SEEK_HOLE` cannot see holes: reads `within` a chunk at a time
/// and writes zeros over each run of whole blocks that read as zeros
/// (clamped to `within`), right after reading its chunk. Their bytes keep
/// their values. `block` is the file's `st_blksize` (4 KiB when unknown or
/// larger, as glibc caps it for network filesystems).
fn fill_zero_blocks(
    fd: BorrowedFd<'_>,
    path: &Path,
    within: Range<u64>,
    block: u64,
    report: &mut RangeReport,
) -> Result<()> {
    let block = if block == 0 || block > 4096 {
        4096
    } else {
        block
    };
    let mut buf = vec![0u8; ZERO_SCAN_READ];
    // Start at the block holding `within.start`.
    let mut pos = within.start - within.start % block;
    while pos < within.end {
        let want = (ZERO_SCAN_READ as u64).min(within.end.div_ceil(block) * block - pos) as usize;
        let n = sys::pread(fd, &mut buf[..want], pos)
            .map_err(|e| Error::io("pread", path, Some(pos..pos + want as u64), e))?;
        if n == 0 {
            break; // the file shrank meanwhile
        }
        let mut runs: Vec<Range<u64>> = Vec::new();
        for (i, chunk) in buf[..n].chunks(block as usize).enumerate() {
            if !zeros::is_zero(chunk) {
                continue;
            }
            let at = pos + (i as u64) * block;
            let (start, end) = (
                at.max(within.start),
                (at + chunk.len() as u64).min(within.end),
            );
            if start >= end {
                continue;
            }
            match runs.last_mut() {
                Some(last) if last.end == start => last.end = end,
                _ => runs.push(start..end),
            }
        }
        for run in runs {
            let written = zeros::fill(fd, run.start, run.end, None, None)
                .map_err(|(e, reached)| Error::io("pwritev", path, Some(reached..run.end), e))?;
            report.bytes_written += written;
            report.holes_filled += 1;
        }
        pos += n as u64;
    }
    Ok(())
}
