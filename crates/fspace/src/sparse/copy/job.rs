//! One copy at work: the ladder (clone, offload of each data run, read and
//! sparse write), each rung falling to the next only before anything was
//! copied.

use super::shared::{
    length_now, not_possible, offload_may_share, COPY_WRITE_SIZE, OFFLOAD_CHUNK, SCAN_READ,
};
use super::types::{CopyFallback, CopyMethod, CopyOptions, CopyReport, ReflinkMode, SparseMode};
use crate::error::{Error, Result};
use crate::fs_info::FsKind;
use crate::note::{Note, NoteKind};
use crate::runs::DataRuns;
use crate::sparse::writer::{SparseStats, SparseWriter, SparseWriterOptions};
use crate::strategy::Progress;
use crate::sys::{self, Errno};
use rustix::fd::BorrowedFd;
use std::path::Path;
use std::sync::atomic::Ordering;

pub(super) struct Job<'a> {
    pub(super) src: &'a Path,
    pub(super) dst: &'a Path,
    pub(super) sfd: BorrowedFd<'a>,
    pub(super) tfd: BorrowedFd<'a>,
    pub(super) len: u64,
    pub(super) opts: &'a CopyOptions<'a>,
    pub(super) kind: std::cell::OnceCell<FsKind>,
    /// Whether data is read for zero runs: sparse mode `always`, or `auto`
    /// with a source that looks sparse ([`looks_sparse`]).
    pub(super) scan_zeros: bool,
}

/// Where a walk over the source's data runs puts them: the holes as
/// ranges, the data as bytes at their offsets.
pub(super) trait RunSink {
    fn hole(&mut self, r: std::ops::Range<u64>) -> Result<()>;
    fn data(&mut self, off: u64, bytes: &[u8]) -> Result<()>;
}

impl<'a> Job<'a> {
    /// A copy of `src` (open as `sfd`) of `len` bytes into `tfd`, named
    /// `dst`; `scan_zeros` turns on the zero scan.
    pub(super) fn new(
        (src, sfd): (&'a Path, BorrowedFd<'a>),
        (dst, tfd): (&'a Path, BorrowedFd<'a>),
        len: u64,
        opts: &'a CopyOptions<'a>,
        scan_zeros: bool,
    ) -> Self {
        Job {
            src,
            dst,
            sfd,
            tfd,
            len,
            opts,
            kind: std::cell::OnceCell::new(),
            scan_zeros,
        }
    }
}

impl Job<'_> {
    /// Copies the data by the first rung that can: clone, offload, or read
    /// and sparse write. A rung falls to the next only before anything was
    /// copied; each fallback is in the report.
    pub(super) fn run(&self, report: &mut CopyReport) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        if self.try_clone(report)? {
            return Ok(());
        }
        if self.try_offload(report)? {
            return Ok(());
        }
        self.read_write(report)
    }

    /// Rung 1: share the blocks (`FICLONE`). True when it did.
    fn try_clone(&self, report: &mut CopyReport) -> Result<bool> {
        let opts = self.opts;
        let clone_allowed = match opts.reflink {
            ReflinkMode::Always => true,
            ReflinkMode::Never => false,
            ReflinkMode::Auto => opts.sparse == SparseMode::Auto,
        };
        if !clone_allowed {
            report.fallbacks.push(CopyFallback {
                method: CopyMethod::Clone,
                reason: match opts.reflink {
                    ReflinkMode::Never => "not allowed: reflink never".into(),
                    _ => format!(
                        "not used: sparse mode {} needs the data read and written",
                        opts.sparse
                    ),
                },
                errno: None,
            });
            return Ok(false);
        }
        match sys::ficlone(self.tfd, self.sfd) {
            Ok(()) => self.after_clone(report).map(|()| true),
            Err(e) if opts.reflink == ReflinkMode::Always => Err(Error::refused_errno(
                "copy",
                self.dst,
                e,
                format!(
                    "reflink always, but the blocks of {} cannot be shared: FICLONE failed: {} (source and destination must be on one filesystem with reflinks, such as btrfs or xfs with reflink=1)",
                    self.src.display(),
                    std::io::Error::from_raw_os_error(e.raw_os_error())
                ),
            )),
            Err(e) if not_possible(e) => {
                report.fallbacks.push(CopyFallback {
                    method: CopyMethod::Clone,
                    reason: format!(
                        "FICLONE: {}",
                        std::io::Error::from_raw_os_error(e.raw_os_error())
                    ),
                    errno: Some(e.raw_os_error()),
                });
                Ok(false)
            }
            Err(e) => Err(Error::io("ioctl(FICLONE)", self.dst, None, e)),
        }
    }

    /// Rung 2: let the kernel move each data extent (`copy_file_range`).
    /// True when it did.
    fn try_offload(&self, report: &mut CopyReport) -> Result<bool> {
        let opts = self.opts;
        let not_used = |reason: String| CopyFallback {
            method: CopyMethod::CopyFileRange,
            reason,
            errno: None,
        };
        if opts.sparse == SparseMode::Auto && self.scan_zeros {
            report.fallbacks.push(not_used(
                "not used: the source is sparse (fewer blocks allocated than its length), so its data is read for zero runs, as cp's default does"
                    .into(),
            ));
            return Ok(false);
        }
        if opts.sparse != SparseMode::Auto {
            report.fallbacks.push(not_used(format!(
                "not used: sparse mode {} needs the data read and written",
                opts.sparse
            )));
            return Ok(false);
        }
        let kind = self.dst_kind()?;
        if opts.reflink == ReflinkMode::Never && offload_may_share(kind) {
            report.fallbacks.push(not_used(format!(
                "not allowed: reflink never, and copy_file_range may share blocks on {}",
                kind.name()
            )));
            return Ok(false);
        }
        match self.offload(report)? {
            None => Ok(true),
            Some(e) => {
                report.fallbacks.push(CopyFallback {
                    method: CopyMethod::CopyFileRange,
                    reason: format!(
                        "copy_file_range: {}",
                        std::io::Error::from_raw_os_error(e.raw_os_error())
                    ),
                    errno: Some(e.raw_os_error()),
                });
                Ok(false)
            }
        }
    }

    /// The destination's filesystem (one `fstatfs`, whichever rung asks).
    pub(super) fn dst_kind(&self) -> Result<FsKind> {
        if let Some(k) = self.kind.get() {
            return Ok(*k);
        }
        let k = sys::fstatfs(self.tfd)
            .map(|s| FsKind::from_magic(s.magic))
            .map_err(|e| Error::io("fstatfs", self.dst, None, e))?;
        Ok(*self.kind.get_or_init(|| k))
    }

    pub(super) fn truncate(&self, len: u64) -> Result<()> {
        sys::ftruncate(self.tfd, len).map_err(|e| Error::io("ftruncate", self.dst, Some(0..len), e))
    }

    pub(super) fn after_clone(&self, report: &mut CopyReport) -> Result<()> {
        let st = sys::fstat(self.tfd).map_err(|e| Error::io("fstat", self.dst, None, e))?;
        if st.size < self.len {
            return Err(self.shrank(st.size, st.size));
        }
        if st.size > self.len {
            // The source grew before the clone: keep the copy's length.
            self.truncate(self.len)?;
        }
        report.method = CopyMethod::Clone;
        report.bytes_cloned = self.len;
        // Not counted: the clone kept the holes without visiting them.
        report.data_extents = None;
        report.holes = None;
        report.hole_bytes = None;
        self.tick(self.len);
        Ok(())
    }

    /// The next data extent at or after `pos`: `(start, end)`, both within
    /// the copy's length; `start == end == len` when only a hole is left.
    pub(super) fn next_extent(&self, pos: u64) -> Result<(u64, u64)> {
        match DataRuns::new(self.sfd, self.src, pos..self.len).next_run()? {
            Some(run) => Ok((run.start, run.end)),
            None => {
                // No data after `pos`: a trailing hole, unless the file
                // shrank below the copy's length.
                let now = self.current_len(self.len);
                if now < self.len {
                    return Err(self.shrank(now, pos));
                }
                Ok((self.len, self.len))
            }
        }
    }

    pub(super) fn check_cancel(&self) -> Result<()> {
        if self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::refused_errno(
                "copy",
                self.dst,
                Errno::CANCELED,
                "cancelled; the destination was not created or changed",
            ));
        }
        Ok(())
    }

    pub(super) fn tick(&self, done: u64) {
        if let Some(p) = self.opts.progress {
            p(Progress {
                done,
                total: self.len,
            });
        }
    }

    /// The source ended early: at byte `at`, while it now reports `now`
    /// bytes.
    pub(super) fn shrank(&self, now: u64, at: u64) -> Error {
        if now >= self.len {
            return Error::refused_errno(
                "copy",
                self.src,
                Errno::IO,
                format!(
                    "reading ended at byte {at} although the file reports {now} bytes (a special file?); the destination was not created or changed"
                ),
            );
        }
        Error::refused_errno(
            "copy",
            self.src,
            Errno::AGAIN,
            format!(
                "shrank from {} to {now} bytes while being copied; the destination was not created or changed",
                self.len
            ),
        )
    }

    /// The source's current length, for telling "shrank" from "ended early".
    pub(super) fn current_len(&self, fallback: u64) -> u64 {
        sys::fstat(self.sfd)
            .ok()
            .and_then(|st| length_now(self.sfd, &st).ok())
            .unwrap_or(fallback)
    }

    /// `copy_file_range` over each data extent. Returns the errno that
    /// ruled the rung out before anything was copied, or `None` when done.
    pub(super) fn offload(&self, report: &mut CopyReport) -> Result<Option<Errno>> {
        // The length first: writes then never extend the file, so no
        // filesystem preallocates past its end into later holes.
        self.truncate(self.len)?;
        let mut pos = 0;
        let mut moved = 0u64;
        let mut holes = (0u64, 0u64);
        let mut extents = 0;
        while pos < self.len {
            self.check_cancel()?;
            let (data, end) = self.next_extent(pos)?;
            if data > pos {
                holes.0 += 1;
                holes.1 += data - pos;
            }
            if data < end {
                extents += 1;
            }
            let (mut s, mut d) = (data, data);
            while s < end {
                self.check_cancel()?;
                let want = (end - s).min(OFFLOAD_CHUNK) as usize;
                match sys::copy_file_range(self.sfd, &mut s, self.tfd, &mut d, want) {
                    Ok(0) if moved == 0 && self.current_len(self.len) >= self.len => {
                        // Nothing copied although the source has the bytes
                        // (files whose size is not what read returns, such as
                        // in /proc and /sys): the next rung reads instead.
                        self.truncate(0)?;
                        return Ok(Some(Errno::NODATA));
                    }
                    Ok(0) => return Err(self.shrank(self.current_len(s), s)),
                    Ok(n) => {
                        moved += n as u64;
                        self.tick(s);
                    }
                    Err(e) if moved == 0 && not_possible(e) => {
                        // Back to the empty file the next rung expects.
                        self.truncate(0)?;
                        return Ok(Some(e));
                    }
                    Err(e) => return Err(Error::io("copy_file_range", self.dst, Some(d..end), e)),
                }
            }
            pos = end;
            self.tick(pos);
        }
        report.method = CopyMethod::CopyFileRange;
        report.bytes_offloaded = moved;
        report.holes = Some(holes.0);
        report.hole_bytes = Some(holes.1);
        report.data_extents = Some(extents);
        Ok(None)
    }

    /// Rung 3: `pread` each data extent straight into the buffer of a
    /// [`SparseWriter`]; holes are skipped (or written as zeros).
    pub(super) fn read_write(&self, report: &mut CopyReport) -> Result<()> {
        let mut w = self.writer()?;
        self.advise_sequential();
        let mut pos = 0;
        let mut extents = 0;
        while pos < self.len {
            self.check_cancel()?;
            let (data, end) = self.next_extent(pos)?;
            self.skip_hole(&mut w, pos..data)?;
            if data < end {
                extents += 1;
            }
            // Reads of 128 KiB (SCAN_READ) into the writer's buffer, written
            // COPY_WRITE_SIZE at a time: from a cold cache on xfs, 512 KiB
            // reads ran behind cp and 128 KiB ones ahead of it
            // (bench/runs/2026-11-25-read-size/).
            self.read_pieces(data..end, SCAN_READ, |_, want| {
                w.read_from((self.sfd, self.src), want)
            })?;
            pos = end;
        }
        let s: SparseStats = w.finish()?;
        report.method = CopyMethod::ReadWrite;
        report.bytes_copied = s.bytes_written;
        report.holes = Some(s.holes);
        report.hole_bytes = Some(s.hole_bytes);
        report.zero_bytes_holed = s.zero_bytes_found;
        report.data_extents = Some(extents);
        if s.zeros_written > 0 && self.opts.sparse != SparseMode::Never {
            report.notes.push(Note::new(
                NoteKind::HolesAsZeros,
                format!(
                    "this filesystem cannot punch holes: {} bytes of zeros were written as data",
                    s.zeros_written
                ),
            ));
        }
        Ok(())
    }

    /// Tells the kernel the source will be read in order (a longer
    /// read-ahead: GNU cp does the same); best effort.
    pub(super) fn advise_sequential(&self) {
        let _ = sys::fadvise_sequential(self.sfd);
    }

    /// The sparse writer of the copy, writing `COPY_WRITE_SIZE` per call.
    ///
    /// Data runs are written from the buffer the source was read into, on
    /// every filesystem. Moving them by `copy_file_range` from the source
    /// instead (on one filesystem where it cannot share blocks) was measured
    /// and dropped: the bytes are already in memory for the zero scan, and
    /// a copy of 20,000 4 KiB extents on tmpfs ran behind cp that way in
    /// every round and level with it writing them; elsewhere the two were
    /// level within the rounds' spread (bench/runs/2026-11-25-copy-ab/; the
    /// micro-benchmark there, `bench/micro/cfr_vs_pwrite.c`, agrees).
    fn writer(&self) -> Result<SparseWriter<'_>> {
        let kind = self.dst_kind()?;
        let wopts = SparseWriterOptions {
            detect_zeros: self.scan_zeros,
            keep_holes: self.opts.sparse != SparseMode::Never,
            buffer_size: COPY_WRITE_SIZE,
            ..SparseWriterOptions::default()
        };
        let mut w = SparseWriter::new(self.tfd, self.dst, wopts)?;
        if kind.speculative_preallocation() {
            // Holes are punched as they are made (see there); setting the
            // length first would make each punch fall inside the file.
            w.expect_len(self.len);
        } else {
            // Writes never extend the file: no allocation past its end.
            w.set_len(self.len)?;
        }
        Ok(w)
    }

    /// Passes over the hole `hole`, in steps so that a long hole written as
    /// zeros (`--sparse never`) stays cancellable.
    fn skip_hole(&self, w: &mut SparseWriter<'_>, hole: std::ops::Range<u64>) -> Result<()> {
        let mut at = hole.start;
        while at < hole.end {
            self.check_cancel()?;
            let step = (hole.end - at).min(OFFLOAD_CHUNK);
            w.skip(step)?;
            at += step;
            self.tick(at);
        }
        Ok(())
    }

    /// Reads `run` of the source through `buf`, handing each piece to
    /// `take` with its offset.
    pub(super) fn read_run(
        &self,
        run: std::ops::Range<u64>,
        buf: &mut [u8],
        mut take: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let max = buf.len();
        self.read_pieces(run, max, |off, want| {
            let n = sys::pread(self.sfd, &mut buf[..want], off)
                .map_err(|e| Error::io("pread", self.src, Some(off..off + want as u64), e))?;
            if n > 0 {
                take(off, &buf[..n])?;
            }
            Ok(n)
        })
    }

    /// Reads `run` of the source in pieces of at most `max` bytes:
    /// `read(offset, want)` reads one and returns its length; 0 before the
    /// run's end means the source ended early. Cancellable between pieces,
    /// with progress after each.
    fn read_pieces(
        &self,
        run: std::ops::Range<u64>,
        max: usize,
        mut read: impl FnMut(u64, usize) -> Result<usize>,
    ) -> Result<()> {
        let mut off = run.start;
        while off < run.end {
            self.check_cancel()?;
            let want = (run.end - off).min(max as u64) as usize;
            let n = read(off, want)?;
            if n == 0 {
                return Err(self.shrank(self.current_len(off), off));
            }
            off += n as u64;
            self.tick(off);
        }
        Ok(())
    }

    /// Walks the source's data runs up to the copy's length, reading each
    /// through a `COPY_WRITE_SIZE` buffer into `sink` and handing it the
    /// holes between; returns the number of data runs.
    pub(super) fn walk_runs(&self, sink: &mut impl RunSink) -> Result<u64> {
        let mut buf = crate::zeros::PageBuf::new(COPY_WRITE_SIZE);
        let (mut pos, mut runs) = (0, 0);
        while pos < self.len {
            self.check_cancel()?;
            let (data, end) = self.next_extent(pos)?;
            sink.hole(pos..data)?;
            if data < end {
                runs += 1;
            }
            self.read_run(data..end, &mut buf, |off, b| sink.data(off, b))?;
            pos = end;
        }
        Ok(runs)
    }
}
