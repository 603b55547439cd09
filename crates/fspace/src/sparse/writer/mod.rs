//! [`SparseWriter`]: writes a file's contents so that zero blocks become
//! holes, with few large writes.

use super::scan::{self, Run};
use crate::errno::{unsupported, Call};
use crate::error::{Error, Result};
use crate::fs_info::FsKind;
use crate::sys::{self, Errno, FallocMode};
use crate::zeros;
use rustix::fd::BorrowedFd;
use rustix::io::IoSlice;
use serde::Serialize;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Default size of the writer's buffer: data is sent in writes of up to
/// this many bytes (the issue's floor is 1 MiB; docs/design.md, source S4: rsync's 1 KiB
/// writes made a copy far slower than 256 KiB ones).
pub const SPARSE_BUFFER: usize = 1 << 20;

/// Smallest and largest block size the writer scans with. The block is the
/// file's `st_blksize` clamped to this range: holes are made of whole
/// filesystem blocks, and network filesystems report odd sizes.
pub const BLOCK_RANGE: Range<u64> = 512..(1 << 20) + 1;

/// How a [`SparseWriter`] treats zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SparseWriterOptions {
    /// Scan data for zero blocks and make them holes (default true).
    pub detect_zeros: bool,
    /// Make holes for ranges declared with [`SparseWriter::skip`] (default
    /// true); false writes zeros there, so the file ends fully allocated.
    pub keep_holes: bool,
    /// Buffer size (default `SPARSE_BUFFER`); rounded up to a whole
    /// number of blocks, at least one.
    pub buffer_size: usize,
    /// Block size for zero detection; `None` uses the file's `st_blksize`
    /// (clamped to `BLOCK_RANGE`).
    pub block_size: Option<u64>,
}

impl Default for SparseWriterOptions {
    fn default() -> Self {
        SparseWriterOptions {
            detect_zeros: true,
            keep_holes: true,
            buffer_size: SPARSE_BUFFER,
            block_size: None,
        }
    }
}

/// What a [`SparseWriter`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SparseStats {
    /// Data bytes written (by `pwritev`), zeros written as data included.
    pub bytes_written: u64,
    /// Of those, zeros written for ranges that could not or must not be
    /// holes (`keep_holes` false, or punching unsupported).
    pub zeros_written: u64,
    /// Hole ranges in the result that the writer made or kept.
    pub holes: u64,
    /// Bytes in those ranges.
    pub hole_bytes: u64,
    /// Zero bytes found inside data (not declared with `skip`) and made
    /// holes; where punching is unsupported they are also in `zeros_written`.
    pub zero_bytes_found: u64,
    /// `pwritev` calls.
    pub write_calls: u64,
    /// `fallocate(PUNCH_HOLE)` calls.
    pub punch_calls: u64,
    /// The block size zero runs were found in.
    pub block_size: u64,
    /// Whether the file was fresh (empty, nothing allocated) when the writer
    /// started, so holes could be made by skipping.
    pub fresh: bool,
}

/// Writes a file so that zero runs of at least one filesystem block,
/// aligned to blocks, become holes, while everything else goes out in as
/// few large `pwritev` calls as possible.
///
/// Data arrives in order ([`write`](Self::write)), at offsets
/// ([`write_at`](Self::write_at)), or as known holes
/// ([`skip`](Self::skip)). On a *fresh* file (empty, nothing allocated)
/// holes are made by not writing; elsewhere by
/// `fallocate(PUNCH_HOLE|KEEP_SIZE)` where blocks may exist, and nothing where
/// a hole already is. [`finish`](Self::finish) flushes and sets the length
/// to the end of everything written or skipped (or [`set_len`](Self::set_len)'s,
/// if larger): the writer describes the whole file.
///
/// ```no_run
/// use fspace::{SparseWriter, SparseWriterOptions};
/// use std::os::fd::AsFd;
/// # fn main() -> fspace::Result<()> {
/// let f = std::fs::File::create("image.raw").map_err(|e| fspace::Error::from_io("create", "image.raw", None, e))?;
/// let mut w = SparseWriter::new(f.as_fd(), "image.raw", SparseWriterOptions::default())?;
/// w.write(b"boot sector")?;
/// w.write(&vec![0u8; 64 << 20])?; // becomes a hole
/// w.write_at(1 << 30, b"end")?;   // so does everything in between
/// let stats = w.finish()?;
/// println!("{} bytes written, {} holes", stats.bytes_written, stats.holes);
/// # Ok(()) }
/// ```
pub struct SparseWriter<'fd> {
    fd: BorrowedFd<'fd>,
    path: PathBuf,
    opts: SparseWriterOptions,
    block: usize,
    buf: zeros::PageVec,
    /// File offset of `buf[0]`.
    buf_off: u64,
    /// Where the next sequential byte goes.
    pos: u64,
    /// Furthest end written or skipped.
    end: u64,
    /// The file's length as the kernel has it (EOF).
    file_len: u64,
    /// Length asked for with `set_len`.
    len_hint: u64,
    fresh: bool,
    /// Ranges written by this writer (merged, sorted): the only places a
    /// fresh file can have blocks.
    written: Vec<Range<u64>>,
    prealloc: bool,
    punch_unsupported: bool,
    /// A hole not yet made: adjacent holes merge into it.
    pending: Option<Range<u64>>,
    stats: SparseStats,
}

impl<'fd> SparseWriter<'fd> {
    /// Starts writing `fd` (opened for writing) from offset 0; `path` names
    /// it in errors.
    pub fn new(
        fd: BorrowedFd<'fd>,
        path: impl AsRef<Path>,
        opts: SparseWriterOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        let st = sys::fstat(fd).map_err(|e| Error::io("fstat", path, None, e))?;
        if !st.is_regular() {
            return Err(Error::not_regular("sparse write", path, &st, None));
        }
        let flags = sys::status_flags(fd).map_err(|e| Error::io("fcntl", path, None, e))?;
        if !flags.intersects(rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::RDWR) {
            return Err(Error::refused_errno(
                "sparse write",
                path,
                Errno::BADF,
                "the descriptor is not open for writing",
            ));
        }
        if flags.contains(rustix::fs::OFlags::APPEND) {
            // pwritev ignores its offset on O_APPEND descriptors (Linux).
            return Err(Error::refused_errno(
                "sparse write",
                path,
                Errno::INVAL,
                "is open with O_APPEND, where writes cannot go to chosen offsets",
            ));
        }
        let kind = sys::fstatfs(fd)
            .map(|s| FsKind::from_magic(s.magic))
            .map_err(|e| Error::io("fstatfs", path, None, e))?;
        let block = opts
            .block_size
            .unwrap_or(st.blksize)
            .clamp(BLOCK_RANGE.start, BLOCK_RANGE.end - 1) as usize;
        let cap = opts.buffer_size.max(block).div_ceil(block) * block;
        let fresh = st.size == 0 && st.blocks == 0;
        Ok(SparseWriter {
            fd,
            path: path.to_path_buf(),
            opts,
            block,
            buf: zeros::PageVec::with_capacity(cap),
            buf_off: 0,
            pos: 0,
            end: 0,
            file_len: st.size,
            len_hint: 0,
            fresh,
            written: Vec::new(),
            prealloc: kind.speculative_preallocation(),
            punch_unsupported: false,
            pending: None,
            stats: SparseStats {
                block_size: block as u64,
                fresh,
                ..SparseStats::default()
            },
        })
    }

    /// Sets the file's length now (one `ftruncate`) and makes it the least
    /// length [`finish`](Self::finish) leaves. When the final length is known,
    /// call this first: every later write then lands inside the file, so no
    /// filesystem preallocates past its end and skipped holes need no punch.
    /// Bytes past `len` in an existing file are cut off.
    pub fn set_len(&mut self, len: u64) -> Result<()> {
        self.flush()?;
        self.settle()?;
        sys::ftruncate(self.fd, len)
            .map_err(|e| Error::io("ftruncate", &self.path, Some(0..len), e))?;
        self.file_len = len;
        self.len_hint = len;
        self.written.retain_mut(|r| {
            r.end = r.end.min(len);
            r.start < r.end
        });
        Ok(())
    }

    /// Makes `len` the least length [`finish`](Self::finish) leaves, without
    /// setting it now (for filesystems where setting it first does not pay:
    /// see `FsKind::speculative_preallocation`).
    pub fn expect_len(&mut self, len: u64) {
        self.len_hint = self.len_hint.max(len);
    }

    /// Returns the block size zero runs are found in.
    pub fn block_size(&self) -> u64 {
        self.block as u64
    }

    /// Returns the offset the next [`write`](Self::write) goes to.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Returns what the writer has done so far.
    pub fn stats(&self) -> &SparseStats {
        &self.stats
    }

    /// Writes `data` at the current position and advances it.
    pub fn write(&mut self, mut data: &[u8]) -> Result<()> {
        self.offset_after(self.pos, data.len() as u64)?;
        let cap = self.buf.capacity();
        while !data.is_empty() {
            if self.buf.is_empty() && data.len() >= cap {
                // Large input: scan and send it from the caller's buffer, up
                // to the last block boundary; keep the rest for later.
                let end = self.pos + data.len() as u64;
                let upto = (end - end % self.block as u64).saturating_sub(self.pos) as usize;
                if upto > 0 {
                    self.emit(&data[..upto], self.pos, false)?;
                    self.pos += upto as u64;
                    self.end = self.end.max(self.pos);
                    data = &data[upto..];
                    continue;
                }
            }
            if self.buf.is_empty() {
                self.buf_off = self.pos;
            }
            let n = (cap - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            self.pos += n as u64;
            self.end = self.end.max(self.pos);
            data = &data[n..];
            if self.buf.len() == cap {
                self.drain(false)?;
            }
        }
        Ok(())
    }

    /// Like [`write`](Self::write) with the next bytes of `src` (named
    /// `src_path` in errors) at the current position, read straight into
    /// the writer's buffer: one `pread` of up to `max` bytes, and no copy
    /// from a caller's buffer. Returns the bytes read; 0 is the source's
    /// end. With it, a copy of random data on tmpfs took about cp's CPU
    /// time, more before (bench/runs/2026-11-25-copy-ab/, `bench/copy_cpu.py`).
    pub(crate) fn read_from(
        &mut self,
        (src, src_path): (BorrowedFd<'_>, &Path),
        max: usize,
    ) -> Result<usize> {
        let cap = self.buf.capacity();
        if self.buf.len() == cap {
            // Leaves less than one block: room for at least one byte.
            self.drain(false)?;
        }
        if self.buf.is_empty() {
            self.buf_off = self.pos;
        }
        let want = max.min(cap - self.buf.len());
        self.offset_after(self.pos, want as u64)?;
        let n = sys::pread(src, &mut self.buf.spare_mut()[..want], self.pos)
            .map_err(|e| Error::io("pread", src_path, Some(self.pos..self.pos + want as u64), e))?;
        self.buf.grow(n);
        self.pos += n as u64;
        self.end = self.end.max(self.pos);
        if self.buf.len() == cap {
            self.drain(false)?;
        }
        Ok(n)
    }

    /// Writes `data` at `offset`, which becomes the current position. Bytes
    /// between the previous end and `offset` that nothing writes become a
    /// hole.
    pub fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.seek(offset)?;
        self.write(data)
    }

    /// Declares `len` bytes at the current position a hole (they read as
    /// zeros) and advances past them; with `keep_holes` false, writes zeros
    /// there instead.
    pub fn skip(&mut self, len: u64) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let end = self.offset_after(self.pos, len)?;
        self.flush()?;
        let start = self.pos;
        if self.opts.keep_holes {
            self.hole(start..end)?;
        } else {
            self.zeros(start..end)?;
        }
        self.pos = end;
        self.end = self.end.max(end);
        Ok(())
    }

    /// Moves the current position to `offset` (flushing buffered data).
    /// Moving past the end of everything written or skipped so far declares
    /// the gap a hole (punched where the file held data before).
    pub fn seek(&mut self, offset: u64) -> Result<()> {
        self.offset_after(offset, 0)?;
        if offset != self.pos {
            self.flush()?;
            if offset > self.end {
                self.hole(self.end..offset)?;
                self.end = offset;
            }
            self.pos = offset;
        }
        Ok(())
    }

    /// Refuses offsets past the largest file Linux allows.
    fn offset_after(&self, offset: u64, len: u64) -> Result<u64> {
        match offset.checked_add(len) {
            Some(end) if end <= crate::units::MAX_FILE_SIZE => Ok(end),
            _ => Err(Error::refused_errno(
                "sparse write",
                &self.path,
                Errno::FBIG,
                format!(
                    "{len} bytes at offset {offset} end past the largest file Linux allows ({} bytes)",
                    crate::units::MAX_FILE_SIZE
                ),
            )),
        }
    }

    /// Writes out buffered data (everything but a partial block at its end,
    /// which may still turn out to be zero, unless `all`).
    fn drain(&mut self, all: bool) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::replace(&mut self.buf, zeros::PageVec::empty());
        let off = self.buf_off;
        let end = off + buf.len() as u64;
        let upto = if all {
            buf.len()
        } else {
            (end - end % self.block as u64).saturating_sub(off) as usize
        };
        let at_eof = all && end >= self.end && end >= self.len_hint;
        let r = if upto > 0 {
            self.emit(&buf[..upto], off, at_eof)
        } else {
            Ok(())
        };
        let mut buf = buf;
        buf.consume(upto);
        self.buf = buf;
        self.buf_off = off + upto as u64;
        r
    }

    /// Writes out everything buffered.
    fn flush(&mut self) -> Result<()> {
        self.drain(true)
    }

    /// Sends `data` (the file's bytes at `off`): data runs by `pwritev`,
    /// zero runs as holes.
    fn emit(&mut self, data: &[u8], off: u64, at_eof: bool) -> Result<()> {
        if !self.opts.detect_zeros {
            return self.put(data, off);
        }
        let mut err = None;
        scan::runs(data, off, self.block, at_eof, |Run { start, end, zero }| {
            if err.is_some() {
                return;
            }
            let r = if zero {
                self.stats.zero_bytes_found += (end - start) as u64;
                self.hole(off + start as u64..off + end as u64)
            } else {
                self.put(&data[start..end], off + start as u64)
            };
            if let Err(e) = r {
                err = Some(e);
            }
        });
        err.map_or(Ok(()), Err)
    }

    /// Writes `data` at `off`, all of it.
    fn put(&mut self, mut data: &[u8], mut off: u64) -> Result<()> {
        self.settle()?;
        let range = off..off + data.len() as u64;
        while !data.is_empty() {
            match sys::pwritev(self.fd, &[IoSlice::new(data)], off) {
                Ok(0) => {
                    return Err(Error::io(
                        "pwritev",
                        &self.path,
                        Some(off..off + data.len() as u64),
                        Errno::IO,
                    ))
                }
                Ok(n) => {
                    self.stats.write_calls += 1;
                    self.stats.bytes_written += n as u64;
                    data = &data[n..];
                    off += n as u64;
                }
                Err(e) => {
                    return Err(Error::io(
                        "pwritev",
                        &self.path,
                        Some(off..off + data.len() as u64),
                        e,
                    ))
                }
            }
        }
        self.note_written(range);
        Ok(())
    }

    fn note_written(&mut self, r: Range<u64>) {
        self.file_len = self.file_len.max(r.end);
        if !self.fresh {
            return;
        }
        match self.written.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            Some(last) if last.end < r.start => self.written.push(r),
            _ => {
                self.written.push(r);
                self.written.sort_by_key(|x| x.start);
                let mut merged: Vec<Range<u64>> = Vec::with_capacity(self.written.len());
                for x in self.written.drain(..) {
                    match merged.last_mut() {
                        Some(m) if x.start <= m.end => m.end = m.end.max(x.end),
                        _ => merged.push(x),
                    }
                }
                self.written = merged;
            }
        }
    }

    /// Whether blocks may exist anywhere in `r`.
    fn may_hold_blocks(&self, r: &Range<u64>) -> bool {
        if !self.fresh {
            return true;
        }
        // `written` is sorted and merged: the first range ending after
        // `r.start` is the only one that can overlap. (A linear scan here
        // made a copy of 20,000 extents quadratic: half its time.)
        let i = self.written.partition_point(|w| w.end <= r.start);
        self.written.get(i).is_some_and(|w| w.start < r.end)
    }

    /// Makes `r` a hole, merged with an adjacent pending one so that a long
    /// zero run costs one punch however it arrived.
    fn hole(&mut self, r: Range<u64>) -> Result<()> {
        match self.pending.take() {
            Some(p) if p.end == r.start => self.pending = Some(p.start..r.end),
            Some(p) => {
                self.materialize(p)?;
                self.pending = Some(r);
            }
            None => self.pending = Some(r),
        }
        Ok(())
    }

    /// Makes the pending hole real before anything else touches the file.
    fn settle(&mut self) -> Result<()> {
        match self.pending.take() {
            Some(p) => self.materialize(p),
            None => Ok(()),
        }
    }

    /// Makes `r` a hole: nothing where one already is, a punch where blocks
    /// may exist; zeros where punching is unsupported.
    fn materialize(&mut self, r: Range<u64>) -> Result<()> {
        let len = r.end - r.start;
        if self.may_hold_blocks(&r) {
            if self.punch_unsupported {
                return self.zeros(r);
            }
            match sys::fallocate(self.fd, FallocMode::PunchHole, r.start, len) {
                Ok(()) => self.stats.punch_calls += 1,
                Err(e) if unsupported(Call::Punch, e) => {
                    // No holes here (FUSE, NFS before 4.2): write the zeros.
                    self.punch_unsupported = true;
                    return self.zeros(r);
                }
                Err(e) => {
                    return Err(Error::io_flags(
                        "fallocate",
                        FallocMode::PunchHole.flag_names(),
                        &self.path,
                        Some(r),
                        e,
                    ))
                }
            }
        } else if self.prealloc && !self.written.is_empty() {
            // A write before this hole may have preallocated into it: punch,
            // as `cp --sparse=always` does (best effort: the range reads as
            // zeros either way). See `FsKind::speculative_preallocation`.
            if sys::fallocate(self.fd, FallocMode::PunchHole, r.start, len).is_ok() {
                self.stats.punch_calls += 1;
            }
        }
        self.stats.holes += 1;
        self.stats.hole_bytes += len;
        Ok(())
    }

    /// Writes zeros over `r` from the shared zero buffer.
    fn zeros(&mut self, r: Range<u64>) -> Result<()> {
        self.settle()?;
        let before = sys::counters();
        let res = zeros::fill(self.fd, r.start, r.end, None, None);
        self.stats.write_calls += sys::counters().since(before).writes;
        match res {
            Ok(n) => {
                self.stats.bytes_written += n;
                self.stats.zeros_written += n;
                self.note_written(r);
                Ok(())
            }
            Err((e, at)) => Err(Error::io("pwritev", &self.path, Some(at..r.end), e)),
        }
    }

    /// Writes out what is buffered and sets the length to the end of
    /// everything written or skipped (or [`set_len`](Self::set_len)'s, if
    /// larger). Returns what the writer did.
    pub fn finish(mut self) -> Result<SparseStats> {
        self.flush()?;
        if self.len_hint > self.end {
            // Up to the length set: nothing written there, so a hole (the
            // file may have held data there before).
            self.hole(self.end..self.len_hint)?;
        }
        self.settle()?;
        let len = self.end.max(self.len_hint);
        let st = sys::fstat(self.fd).map_err(|e| Error::io("fstat", &self.path, None, e))?;
        if st.size != len {
            sys::ftruncate(self.fd, len)
                .map_err(|e| Error::io("ftruncate", &self.path, Some(0..len), e))?;
        }
        Ok(self.stats)
    }

    /// Returns the descriptor written to.
    pub fn fd(&self) -> BorrowedFd<'fd> {
        self.fd
    }
}

setters!(SparseWriterOptions { detect_zeros: bool, keep_holes: bool, buffer_size: usize, block_size: Option<u64> });

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn pattern(len: usize) -> Vec<u8> {
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut v = Vec::with_capacity(len);
        while v.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Zero runs of 0-40 KiB between data runs of 0-200 KiB.
            let n = (x % (200 << 10)) as usize;
            v.extend((0..n).map(|i| (i as u8) | 1));
            v.resize(v.len() + ((x >> 20) % (40 << 10)) as usize, 0);
        }
        v.truncate(len);
        v
    }

    /// Writes `data` from offset `start` (the bytes before it skipped) into
    /// a new file under `dir`, with `write` in pieces of `piece`, or with
    /// `read_from` reads of `piece` from `src` (which holds `data`).
    fn write_file(
        dir: &Path,
        (data, src): (&[u8], Option<&Path>),
        start: usize,
        piece: usize,
        opts: SparseWriterOptions,
    ) -> (Vec<u8>, SparseStats) {
        let dst = dir.join(format!("dst-{}-{start}-{piece}", src.is_some()));
        let f = std::fs::File::create(&dst).unwrap();
        let mut w = SparseWriter::new(f.as_fd(), &dst, opts).unwrap();
        w.skip(start as u64).unwrap();
        match src {
            Some(src) => {
                let sfile = std::fs::File::open(src).unwrap();
                while w.read_from((sfile.as_fd(), src), piece).unwrap() > 0 {}
                // At the source's end a read returns 0 and changes nothing.
                assert_eq!(w.read_from((sfile.as_fd(), src), piece).unwrap(), 0);
            }
            None => {
                for c in data[start..].chunks(piece) {
                    w.write(c).unwrap();
                }
            }
        }
        let s = w.finish().unwrap();
        (std::fs::read(&dst).unwrap(), s)
    }

    /// `read_from` leaves the same file, with the same holes and writes, as
    /// `write` of the same bytes: from a block boundary or not, with a
    /// buffer of many blocks or of exactly one, whatever the read size.
    #[test]
    fn read_from_equals_write() {
        let data = pattern(5 << 20);
        let dir = tempfile::tempdir_in(".").unwrap();
        let src = dir.path().join("src");
        std::fs::write(&src, &data).unwrap();
        let many = SparseWriterOptions {
            buffer_size: 512 << 10,
            block_size: Some(4096),
            ..SparseWriterOptions::default()
        };
        // The pattern's zero runs reach 40 KiB: some hold whole 16 KiB blocks.
        let one_block = SparseWriterOptions {
            buffer_size: 16 << 10,
            block_size: Some(16 << 10),
            ..SparseWriterOptions::default()
        };
        for opts in [many, one_block] {
            for start in [0usize, 5000] {
                for piece in [4096usize, 100_000, 128 << 10, 3 << 20] {
                    let label = format!("{opts:?} start {start} piece {piece}");
                    let (got, rs) = write_file(dir.path(), (&data, Some(&src)), start, piece, opts);
                    let (want, ws) = write_file(dir.path(), (&data, None), start, piece, opts);
                    assert!(got[start..] == data[start..], "{label}");
                    assert!(got[..start].iter().all(|&b| b == 0), "{label}");
                    assert!(got == want, "{label}");
                    assert!(rs.holes > 0 && rs.zero_bytes_found > 0, "{label}: {rs:?}");
                    assert_eq!(rs.hole_bytes, ws.hole_bytes, "{label}");
                    assert_eq!(rs.bytes_written, ws.bytes_written, "{label}");
                }
            }
        }
    }
}
