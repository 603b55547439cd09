//! Sequential, verified reading of one segment file (recovery and readers).

use super::format::{
    decode_record, Decoded, EndReason, HeaderProblem, RecordKey, SegmentHeader, RECORD_HEADER_LEN,
    SEGMENT_HEADER_LEN,
};
use super::storage::{OpenMode, SegmentFile, Storage};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Bytes read per `pread` while scanning: large reads, few syscalls.
pub(crate) const SCAN_READ: usize = 1 << 20;

/// Reads `len` bytes at `offset`, fewer only at end of file.
pub(crate) fn read_at(
    fd: &dyn SegmentFile,
    path: &Path,
    buf: &mut [u8],
    offset: u64,
) -> Result<usize> {
    fd.read_at(buf, offset)
        .map_err(|e| Error::io("pread", path, Some(offset..offset + buf.len() as u64), e))
}

/// Opens a segment read-only and returns it with its length.
pub(crate) fn open_segment(io: &dyn Storage, path: &Path) -> Result<(Box<dyn SegmentFile>, u64)> {
    let fd = io
        .open(path, OpenMode::Read)
        .map_err(|e| Error::io("open", path, None, e))?;
    let (other, size) = fd.stat().map_err(|e| Error::io("fstat", path, None, e))?;
    if let Some(kind) = other {
        use crate::sys::Errno;
        let errno = if kind == "directory" {
            Errno::ISDIR
        } else {
            Errno::INVAL
        };
        return Err(Error::refused_errno(
            "open",
            path,
            errno,
            format!("is a {kind}, not a regular file"),
        ));
    }
    Ok((fd, size))
}

/// Reads and decodes a segment's header.
pub(crate) fn read_header(
    fd: &dyn SegmentFile,
    path: &Path,
) -> Result<std::result::Result<SegmentHeader, HeaderProblem>> {
    let mut b = [0u8; SEGMENT_HEADER_LEN];
    let n = read_at(fd, path, &mut b, 0)?;
    Ok(SegmentHeader::decode(&b[..n]))
}

/// One step of a scan.
#[derive(Debug)]
pub(crate) enum Step<'a> {
    /// A verified record at `offset`.
    Record {
        lsn: u64,
        payload: &'a [u8],
        offset: u64,
    },
    /// No record at `offset`.
    End { reason: EndReason, offset: u64 },
}

/// Walks the records of one segment in order, verifying each.
pub(crate) struct Scan {
    fd: Box<dyn SegmentFile>,
    pub(crate) path: PathBuf,
    pub(crate) header: SegmentHeader,
    file_len: u64,
    pos: u64,
    expect: u64,
    /// Read-ahead: its first `held` bytes are the file's from `buf_off`;
    /// the rest is room kept for the next read (not zeroed again).
    buf: Vec<u8>,
    held: usize,
    buf_off: u64,
}

impl Scan {
    pub(crate) fn new(
        fd: Box<dyn SegmentFile>,
        path: PathBuf,
        header: SegmentHeader,
        file_len: u64,
    ) -> Scan {
        Scan {
            fd,
            path,
            header,
            file_len,
            pos: SEGMENT_HEADER_LEN as u64,
            expect: header.first_lsn,
            buf: Vec::new(),
            held: 0,
            buf_off: 0,
        }
    }

    /// Drops the bytes read ahead: the next step reads the file again (a
    /// follower continuing after the writer added records where the
    /// read-ahead saw zeros).
    pub(crate) fn forget_buffer(&mut self) {
        self.held = 0;
        self.buf_off = self.pos;
    }

    /// Makes the buffer hold `need` bytes from `pos` if the file has them;
    /// returns how many it holds.
    fn fill(&mut self, need: usize) -> Result<usize> {
        let held = (self.buf_off + self.held as u64).saturating_sub(self.pos);
        if self.pos >= self.buf_off && held >= need as u64 {
            return Ok(held as usize);
        }
        let end = self.header.size.min(self.file_len);
        let want = (need.max(SCAN_READ) as u64).min(end.saturating_sub(self.pos)) as usize;
        if self.buf.len() < want {
            // A fresh zeroed allocation: what the old one held is read
            // again anyway.
            self.buf = vec![0u8; want];
        }
        // Nothing held while the read overwrites the buffer: a read that
        // fails part way leaves no bytes described as the file's.
        self.held = 0;
        let n = read_at(&*self.fd, &self.path, &mut self.buf[..want], self.pos)?;
        if n < want {
            // The file is shorter than when the scan began: it ends here.
            self.file_len = self.pos + n as u64;
        }
        self.held = n;
        self.buf_off = self.pos;
        Ok(n)
    }

    /// Decodes the next record, or says why there is none.
    pub(crate) fn step(&mut self) -> Result<Step<'_>> {
        let mut offset = self.pos;
        let mut room = 0;
        let mut need = 0;
        // Set up at `offset`; again after each padding record skipped.
        let mut at_offset = true;
        loop {
            if at_offset {
                at_offset = false;
                if offset >= self.header.size {
                    return Ok(Step::End {
                        reason: EndReason::EndOfSegment,
                        offset,
                    });
                }
                room = (self.header.size - offset) as usize;
                need = RECORD_HEADER_LEN.min(room);
            }
            let held = self.fill(need)?;
            let start = (self.pos - self.buf_off) as usize;
            let b = &self.buf[start..start + held];
            let key = RecordKey::from(&self.header);
            match decode_record(b, room, &key, self.expect, self.header.version) {
                Decoded::NeedMore(n) => {
                    // The decoder asks only for more than it holds; if the
                    // file has no more, the segment was cut short.
                    if n <= held || self.pos + held as u64 >= self.file_len {
                        return Ok(Step::End {
                            reason: EndReason::FileEnds,
                            offset,
                        });
                    }
                    need = n;
                }
                Decoded::End(reason) => return Ok(Step::End { reason, offset }),
                Decoded::Padding { span } => {
                    // The record expected comes after it (on a page
                    // boundary as the writer pads; the format does not
                    // require it).
                    self.pos += span as u64;
                    offset = self.pos;
                    at_offset = true;
                }
                Decoded::Record { lsn, span, .. } => {
                    self.pos += span as u64;
                    self.expect += 1;
                    let start = (offset - self.buf_off) as usize;
                    let len = span.min(self.held - start);
                    let b = &self.buf[start..start + len];
                    let plen = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
                    let payload = &b[RECORD_HEADER_LEN..RECORD_HEADER_LEN + plen];
                    return Ok(Step::Record {
                        lsn,
                        payload,
                        offset,
                    });
                }
            }
        }
    }
}
