//! [`dig()`]: punch holes over zero blocks of a file in place, like
//! util-linux `fallocate --dig-holes`.

use super::scan::{self, Run};
use super::writer::{BLOCK_RANGE, SPARSE_BUFFER};
use crate::durable::parent_dir;
use crate::error::{Error, Result};
use crate::fs_info::{allocation_unit, AllocUnit, FsKind};
use crate::grow::Progress;
use crate::runs::DataRuns;
use crate::sys::{self, Errno, FallocMode};
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use serde::Serialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Options of [`dig()`].
#[derive(Clone, Copy, Default)]
#[non_exhaustive]
pub struct DigOptions<'a> {
    /// `fsync` the file at the end.
    pub sync: bool,
    /// Checked between chunks: when it becomes true the dig stops (holes
    /// punched so far stay; the bytes read back are the same either way)
    /// and the call fails with `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called after each chunk with the bytes of the file done.
    pub progress: Option<&'a dyn Fn(Progress)>,
}

impl std::fmt::Debug for DigOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DigOptions")
            .field("sync", &self.sync)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What [`dig()`] did.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DigReport {
    /// The file.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// Its length (unchanged).
    pub len: u64,
    /// The block size zero runs were looked for in.
    pub block_size: u64,
    /// The filesystem's allocation unit, which every punch was aligned to
    /// (`None`: unknown here, punches were aligned to `block_size`).
    pub allocation_unit: Option<AllocUnit>,
    /// Data bytes read and scanned (holes are skipped unread).
    pub bytes_scanned: u64,
    /// Zero runs punched.
    pub holes_punched: u64,
    /// Bytes of the file in the ranges punched (whole allocation units).
    /// What that freed is `bytes_freed`, measured.
    pub bytes_punched: u64,
    /// Zero bytes found but left in place because they do not fill a whole
    /// allocation unit (punching part of a unit frees nothing and may cost
    /// metadata).
    pub zero_bytes_kept: u64,
    /// Bytes allocated before (`st_blocks`); `None` where `st_blocks` does
    /// not measure allocation (FUSE, network filesystems).
    pub allocated_before: Option<u64>,
    /// Bytes allocated after; `None` as `allocated_before`.
    pub allocated_after: Option<u64>,
    /// `allocated_before - allocated_after`, measured (0 if allocation
    /// grew; both figures are in the report); `None` when unknown.
    pub bytes_freed: Option<u64>,
    /// Every syscall issued.
    pub syscalls: u64,
    /// Whether the result was made durable.
    pub synced: bool,
    /// Wall time.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
}

/// Punches holes over every run of zero blocks inside the ranges of `path`
/// that hold data (`SEEK_DATA`/`SEEK_HOLE`), so the file reads back the
/// same but allocates less. Each zero run is shrunk to whole allocation
/// units (`allocation_unit`: the cluster on ext4 `bigalloc`) before it is
/// punched, so a punch never splits a unit; a zero tail at the end of file
/// is punched to its unit's end. The report's `bytes_freed` is measured
/// (`st_blocks` before and after), not the sum of the punches.
///
/// Refuses anything but a regular file, and filesystems that cannot punch
/// holes (the first punch fails with `EOPNOTSUPP`; nothing was changed). No
/// other process may write the file meanwhile: a block read as zeros and
/// then written by someone else before the punch would lose that write.
pub fn dig(path: impl AsRef<Path>, opts: &DigOptions<'_>) -> Result<DigReport> {
    let path = path.as_ref();
    let start = Instant::now();
    let before = sys::counters();
    let fd = sys::open(path, OFlags::RDWR | OFlags::NONBLOCK | OFlags::NOCTTY, 0).map_err(|e| {
        match sys::stat(path) {
            Ok(st) if !st.is_regular() => Error::not_regular("dig", path, &st, Some(e)),
            _ => Error::io("open", path, None, e),
        }
    })?;
    let st = sys::fstat(&fd).map_err(|e| Error::io("fstat", path, None, e))?;
    if !st.is_regular() {
        return Err(Error::not_regular("dig", path, &st, None));
    }
    let block = st.blksize.clamp(BLOCK_RANGE.start, BLOCK_RANGE.end - 1);
    let kind = FsKind::from_magic(
        sys::fstatfs(&fd)
            .map_err(|e| Error::io("fstatfs", path, None, e))?
            .magic,
    );
    let measures = kind.st_blocks_measures_allocation();
    let unit = allocation_unit(fd.as_fd(), path, &parent_dir(path), true)?;
    // A unit is a multiple of the block on every filesystem we know; the
    // larger of the two keeps punches whole on both counts.
    let align = unit.map_or(block, |u| u.bytes.max(block));
    let mut d = Digger {
        fd: fd.as_fd(),
        path,
        len: st.size,
        block: block as usize,
        align,
        pending: None,
        report: DigReport {
            path: path.to_path_buf(),
            len: st.size,
            block_size: block,
            allocation_unit: unit,
            bytes_scanned: 0,
            holes_punched: 0,
            bytes_punched: 0,
            zero_bytes_kept: 0,
            allocated_before: measures.then(|| st.blocks * 512),
            allocated_after: None,
            bytes_freed: None,
            syscalls: 0,
            synced: false,
            elapsed: Duration::ZERO,
        },
    };
    d.run(opts)?;
    if opts.sync {
        sys::fsync(&fd).map_err(|e| Error::io("fsync", path, None, e))?;
        d.report.synced = true;
    }
    let after = sys::fstat(&fd).map_err(|e| Error::io("fstat", path, None, e))?;
    let mut r = d.report;
    r.allocated_after = measures.then(|| after.blocks * 512);
    r.bytes_freed = r
        .allocated_before
        .zip(r.allocated_after)
        .map(|(b, a)| b.saturating_sub(a));
    r.syscalls = sys::counters().since(before).total;
    r.elapsed = start.elapsed();
    Ok(r)
}

struct Digger<'a> {
    fd: BorrowedFd<'a>,
    path: &'a Path,
    len: u64,
    block: usize,
    /// What punches are aligned to: the allocation unit (or the block).
    align: u64,
    /// A zero run not yet punched (it may continue in the next chunk).
    pending: Option<Range<u64>>,
    report: DigReport,
}

impl Digger<'_> {
    fn run(&mut self, opts: &DigOptions<'_>) -> Result<()> {
        // Chunks are whole blocks, so block alignment carries across them.
        let chunk = SPARSE_BUFFER.div_ceil(self.block) * self.block;
        let mut buf = vec![0u8; chunk];
        let mut runs = DataRuns::new(self.fd, self.path, 0..self.len);
        while let Some(run) = runs.next_run()? {
            let (data, end) = (run.start, run.end);
            // Start at the block holding `data` (extents are block-aligned
            // on every filesystem we know; this keeps the scan aligned).
            let mut off = data - data % self.block as u64;
            while off < end {
                if opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    self.flush()?;
                    return Err(Error::refused_errno(
                        "dig",
                        self.path,
                        Errno::CANCELED,
                        "cancelled; the holes punched so far stay (the file reads back the same)",
                    ));
                }
                let want = (end - off).min(buf.len() as u64) as usize;
                let n = sys::pread(self.fd, &mut buf[..want], off)
                    .map_err(|e| Error::io("pread", self.path, Some(off..off + want as u64), e))?;
                if n == 0 {
                    break; // the file shrank: nothing more to dig
                }
                self.report.bytes_scanned += n as u64;
                let at_eof = off + n as u64 >= self.len;
                let mut err = None;
                scan::runs(
                    &buf[..n],
                    off,
                    self.block,
                    at_eof,
                    |Run { start, end, zero }| {
                        if err.is_some() {
                            return;
                        }
                        let r = off + start as u64..off + end as u64;
                        if zero {
                            self.pending = match self.pending.take() {
                                Some(p) if p.end == r.start => Some(p.start..r.end),
                                Some(p) => {
                                    if let Err(e) = self.punch(p) {
                                        err = Some(e);
                                    }
                                    Some(r)
                                }
                                None => Some(r),
                            };
                        } else if let Some(p) = self.pending.take() {
                            if let Err(e) = self.punch(p) {
                                err = Some(e);
                            }
                        }
                    },
                );
                if let Some(e) = err {
                    return Err(e);
                }
                off += n as u64;
                if let Some(p) = opts.progress {
                    p(Progress {
                        done: off.min(self.len),
                        total: self.len,
                    });
                }
            }
            self.flush()?;
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        match self.pending.take() {
            Some(p) => self.punch(p),
            None => Ok(()),
        }
    }

    fn punch(&mut self, r: Range<u64>) -> Result<()> {
        // Whole units only: round the start up and the end down. A zero
        // tail at end of file is punched to its unit's end (reads the same,
        // frees the unit).
        let u = self.align;
        let start = r.start.div_ceil(u) * u;
        let end = if r.end >= self.len {
            r.end.div_ceil(u) * u
        } else {
            r.end / u * u
        };
        if end <= start {
            self.report.zero_bytes_kept += r.end - r.start;
            return Ok(());
        }
        let in_file = end.min(self.len) - start;
        match sys::fallocate(self.fd, FallocMode::PunchHole, start, end - start) {
            Ok(()) => {
                self.report.holes_punched += 1;
                self.report.bytes_punched += in_file;
                self.report.zero_bytes_kept += (r.end - r.start) - in_file;
                Ok(())
            }
            Err(e) => {
                let mut err = Error::io_flags(
                    "fallocate",
                    FallocMode::PunchHole.flag_names(),
                    self.path,
                    Some(start..end),
                    e,
                );
                if crate::errno::unsupported(crate::errno::Call::Punch, e) {
                    err = Error::refused_errno(
                        "dig",
                        self.path,
                        e,
                        format!(
                            "{err}: this filesystem cannot punch holes{}",
                            if self.report.holes_punched == 0 {
                                "; nothing was changed"
                            } else {
                                ""
                            }
                        ),
                    );
                }
                Err(err)
            }
        }
    }
}

setters!(DigOptions<'a> { sync: bool, cancel: Option<&'a AtomicBool>, progress: Option<&'a dyn Fn(Progress)> });
