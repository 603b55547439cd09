//! Copies onto a block device: only the data is written; zero ranges (the
//! source's holes and zero blocks found in its data) are zeroed by the
//! cheapest command that guarantees zeros: `fallocate(PUNCH_HOLE)` on the
//! device, which Linux turns into write-zeroes *with unmap allowed* (a thin
//! device or a loop device's backing file frees the space) and refuses
//! (`EOPNOTSUPP`) rather than writing zero pages; where refused,
//! `BLKZEROOUT`, which uses write-zeroes without unmap or writes zero pages.
//! Discard alone is never used: it does not promise zeros. With
//! `target_is_zero` the ranges are skipped, as `qemu-img convert
//! --target-is-zero` and bmaptool do. The device keeps whatever lies past
//! the source's end.

use super::job::{Job, RunSink};
use super::stream::read_to_end;
use super::types::{CopyMethod, CopyReport};
use crate::error::{Error, Result};
use crate::note::{Note, NoteKind};
use crate::sys::{self};
use rustix::fd::BorrowedFd;
use std::ops::Range;
use std::path::Path;

/// Block size of the zero scan and of the ranges zeroed: a page, a
/// multiple of every logical block size Linux supports up to 4 KiB.
const ZERO_BLOCK: u64 = 4096;
/// `BLKZEROOUT` needs multiples of the logical block size; 512 is the
/// least, and the device's own is checked by the kernel.
const SECTOR: u64 = 512;

pub(super) struct DeviceSink<'a> {
    pub(super) fd: BorrowedFd<'a>,
    pub(super) path: &'a Path,
    /// Skip zero ranges: the device is known to read zeros there.
    pub(super) target_is_zero: bool,
    /// Look for zero blocks in the data (sparse mode not `never`).
    pub(super) scan: bool,
    pending: Option<Range<u64>>,
    pub(super) written: u64,
    pub(super) zeroed: u64,
    pub(super) skipped: u64,
    pub(super) zero_ranges: u64,
    pub(super) found_in_data: u64,
    /// The device refused `PUNCH_HOLE` (no write-zeroes): `BLKZEROOUT`.
    pub(super) punch_unsupported: bool,
}

impl<'a> DeviceSink<'a> {
    pub(super) fn new(
        fd: BorrowedFd<'a>,
        path: &'a Path,
        target_is_zero: bool,
        scan: bool,
    ) -> Self {
        DeviceSink {
            fd,
            path,
            target_is_zero,
            scan,
            pending: None,
            written: 0,
            zeroed: 0,
            skipped: 0,
            zero_ranges: 0,
            found_in_data: 0,
            punch_unsupported: false,
        }
    }

    /// `bytes` belong at `off`: zero blocks (aligned to the device) join
    /// the zero ranges, the rest is written.
    fn put(&mut self, off: u64, bytes: &[u8]) -> Result<()> {
        if !self.scan {
            return self.write(off, bytes);
        }
        let end = off + bytes.len() as u64;
        let mut at = off;
        let mut run = off; // start of the data run not yet written
        while at < end {
            let next = ((at / ZERO_BLOCK) + 1) * ZERO_BLOCK;
            let stop = next.min(end);
            let whole = at.is_multiple_of(ZERO_BLOCK) && stop == next;
            let slice = &bytes[(at - off) as usize..(stop - off) as usize];
            if whole && crate::zeros::is_zero(slice) {
                self.write(run, &bytes[(run - off) as usize..(at - off) as usize])?;
                self.found_in_data += stop - at;
                self.zero(at..stop)?;
                run = stop;
            }
            at = stop;
        }
        self.write(run, &bytes[(run - off) as usize..])
    }

    /// `r` must read as zeros: merged with the pending zero range, zeroed
    /// when data follows or at the end.
    fn zero(&mut self, r: Range<u64>) -> Result<()> {
        if r.is_empty() {
            return Ok(());
        }
        match self.pending.take() {
            Some(p) if p.end == r.start => self.pending = Some(p.start..r.end),
            Some(p) => {
                self.zero_out(p)?;
                self.pending = Some(r);
            }
            None => self.pending = Some(r),
        }
        Ok(())
    }

    fn write(&mut self, off: u64, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if let Some(p) = self.pending.take() {
            self.zero_out(p)?;
        }
        sys::pwrite_all(self.fd, bytes, off).map_err(|(e, done)| {
            Error::io(
                "pwrite",
                self.path,
                Some(off + done..off + bytes.len() as u64),
                e,
            )
        })?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Zeroes `r` on the device (or skips it): the sector-aligned middle by
    /// `BLKZEROOUT`, unaligned edges by writing zeros.
    fn zero_out(&mut self, r: Range<u64>) -> Result<()> {
        self.zero_ranges += 1;
        if self.target_is_zero {
            self.skipped += r.end - r.start;
            return Ok(());
        }
        let start = r.start.div_ceil(SECTOR) * SECTOR;
        let end = (r.end / SECTOR) * SECTOR;
        if start >= end {
            return self.write_zeros(r);
        }
        self.write_zeros(r.start..start)?;
        self.zero_device(start..end)?;
        self.zeroed += end - start;
        self.write_zeros(end..r.end)
    }

    /// Zeroes the sector-aligned `r`: punch (write-zeroes, unmap allowed),
    /// else `BLKZEROOUT`.
    fn zero_device(&mut self, r: Range<u64>) -> Result<()> {
        if !self.punch_unsupported {
            match sys::fallocate(
                self.fd,
                sys::FallocMode::PunchHole,
                r.start,
                r.end - r.start,
            ) {
                Ok(()) => return Ok(()),
                Err(e) if crate::errno::unsupported(crate::errno::Call::Punch, e) => {
                    self.punch_unsupported = true;
                }
                Err(e) => {
                    return Err(Error::io_flags(
                        "fallocate",
                        sys::FallocMode::PunchHole.flag_names(),
                        self.path,
                        Some(r),
                        e,
                    ))
                }
            }
        }
        sys::block_zero_out(self.fd, r.start, r.end - r.start)
            .map_err(|e| Error::io("ioctl(BLKZEROOUT)", self.path, Some(r), e))
    }

    fn write_zeros(&mut self, r: Range<u64>) -> Result<()> {
        let z = crate::zeros::zero_buffer();
        let mut at = r.start;
        while at < r.end {
            let n = (r.end - at).min(z.len() as u64) as usize;
            sys::pwrite_all(self.fd, &z[..n], at)
                .map_err(|(e, _)| Error::io("pwrite", self.path, Some(at..r.end), e))?;
            self.written += n as u64;
            at += n as u64;
        }
        Ok(())
    }

    /// Zeroes the last pending range.
    pub(super) fn finish(&mut self) -> Result<()> {
        match self.pending.take() {
            Some(p) => self.zero_out(p),
            None => Ok(()),
        }
    }
}

impl RunSink for DeviceSink<'_> {
    fn hole(&mut self, r: Range<u64>) -> Result<()> {
        self.zero(r)
    }
    fn data(&mut self, off: u64, bytes: &[u8]) -> Result<()> {
        self.put(off, bytes)
    }
}

impl Job<'_> {
    /// Copies the source onto the block device behind `sink`: data runs
    /// read and written (zero blocks in them zeroed instead), holes zeroed;
    /// a stream source is read to its end.
    pub(super) fn copy_onto_device(
        &self,
        sink: &mut DeviceSink<'_>,
        stream: Option<bool>,
        report: &mut CopyReport,
    ) -> Result<()> {
        self.advise_sequential();
        if let Some(fifo) = stream {
            let mut pos = 0u64;
            report.len = read_to_end(self, fifo, |b| {
                sink.put(pos, b)?;
                pos += b.len() as u64;
                Ok(())
            })?;
        } else {
            report.data_extents = Some(self.walk_runs(sink)?);
        }
        sink.finish()?;
        report.method = CopyMethod::Device;
        report.bytes_copied = sink.written;
        report.bytes_zeroed = sink.zeroed;
        report.holes = Some(sink.zero_ranges);
        report.hole_bytes = Some(sink.zeroed + sink.skipped);
        report.zero_bytes_holed = sink.found_in_data;
        if sink.skipped > 0 {
            report.notes.push(Note::new(
                NoteKind::ZeroRangesSkipped,
                format!(
                    "{} bytes of zero ranges skipped: the device was declared to read zeros there (target is zero)",
                    sink.skipped
                ),
            ));
        }
        Ok(())
    }
}
