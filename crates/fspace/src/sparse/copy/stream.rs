//! Copies that cannot trust the source's length or cannot seek: reading a
//! pipe or FIFO, or a file whose size says nothing (0 bytes, or on procfs,
//! sysfs and their kind), to its end; writing into a pipe, FIFO or
//! character device in order.
//!
//! GNU cp reads every source until `read` returns 0, whatever `st_size`
//! says; a copy that trusted the size would leave an empty copy of
//! `/proc/cpuinfo`. fspace trusts the size where it is a file's length and
//! reads to the end where it is not.

use super::job::{Job, RunSink};
use super::shared::COPY_WRITE_SIZE;
use super::types::{CopyMethod, CopyReport, SparseMode};
use crate::error::{Error, Result};
use crate::note::{Note, NoteKind};
use crate::sparse::writer::{SparseWriter, SparseWriterOptions};
use crate::sys::{self, Errno};
use crate::zeros;
use rustix::fd::BorrowedFd;
use std::path::Path;

/// `statfs` magics of filesystems whose files report sizes that are not
/// what `read` returns (0 bytes, or a page for a few bytes): procfs, sysfs,
/// debugfs, tracefs, securityfs, configfs, cgroup v1 and v2, efivarfs,
/// pstore, bpf.
const PSEUDO_FS_MAGICS: [u64; 11] = [
    0x9fa0,
    0x6265_6572,
    0x6462_6720,
    0x7472_6163,
    0x7363_6673,
    0x6265_6570,
    0x0027_e0eb,
    0x6367_7270,
    0xde5e_81e4,
    0x6165_676c,
    0xcafe_4a11,
];

/// Why the source must be read to its end rather than up to its size, or
/// `None` when its size can be trusted.
pub(super) fn stream_reason(sfd: BorrowedFd<'_>, st: &sys::Stat) -> Option<Note> {
    let note = |text: String| Some(Note::new(NoteKind::ReadToEnd, text));
    if st.is_fifo() {
        return note("the source is a pipe or FIFO: read to its end".into());
    }
    if let Ok(fs) = sys::fstatfs(sfd) {
        if PSEUDO_FS_MAGICS.contains(&fs.magic) {
            return note(format!(
                "the source is on a pseudo filesystem (statfs magic {:#x}) whose sizes are not what read returns: read to its end",
                fs.magic
            ));
        }
    }
    if st.size == 0 {
        return note(
            "the source reports 0 bytes (as files in /proc and some FUSE files do): read to its end"
                .into(),
        );
    }
    None
}

/// Waits until the pipe `fd` has data (or its writer closed it), checking
/// for a cancellation every 200 ms.
fn wait_for_data(job: &Job<'_>) -> Result<()> {
    loop {
        job.check_cancel()?;
        match sys::wait_readable(job.sfd, 200) {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => return Err(Error::io("poll", job.src, None, e)),
        }
    }
}

/// Reads the source from its current position to its end in `SPARSE_BUFFER`
/// pieces, handing each to `sink`. Returns the bytes read.
pub(super) fn read_to_end(
    job: &Job<'_>,
    fifo: bool,
    mut sink: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    let mut buf = crate::zeros::PageBuf::new(COPY_WRITE_SIZE);
    let mut total = 0u64;
    loop {
        if fifo {
            wait_for_data(job)?;
        } else {
            job.check_cancel()?;
        }
        let n = match sys::read(job.sfd, &mut buf) {
            Ok(n) => n,
            Err(Errno::AGAIN) => continue,
            Err(e) => {
                return Err(Error::io(
                    "read",
                    job.src,
                    Some(total..total + buf.len() as u64),
                    e,
                ))
            }
        };
        if n == 0 {
            return Ok(total);
        }
        sink(&buf[..n])?;
        total += n as u64;
        job.tick(total);
    }
}

impl Job<'_> {
    /// A source read to its end into the temporary file, through a
    /// [`SparseWriter`] that makes holes of zero runs unless sparse mode is
    /// `never` (a stream shows its holes only as zeros).
    pub(super) fn stream_to_file(&self, fifo: bool, report: &mut CopyReport) -> Result<()> {
        let wopts = SparseWriterOptions {
            detect_zeros: self.opts.sparse != SparseMode::Never,
            keep_holes: self.opts.sparse != SparseMode::Never,
            ..SparseWriterOptions::default()
        };
        let mut w = SparseWriter::new(self.tfd, self.dst, wopts)?;
        let len = read_to_end(self, fifo, |b| w.write(b))?;
        let s = w.finish()?;
        report.method = CopyMethod::Stream;
        report.len = len;
        report.bytes_copied = s.bytes_written;
        report.holes = Some(s.holes);
        report.hole_bytes = Some(s.hole_bytes);
        report.zero_bytes_holed = s.zero_bytes_found;
        report.data_extents = Some(u64::from(len > 0));
        Ok(())
    }
}

/// Writes everything given to a pipe, FIFO or character device in order;
/// holes become zeros (such a destination cannot seek).
pub(super) struct StreamSink<'a> {
    pub(super) fd: BorrowedFd<'a>,
    pub(super) path: &'a Path,
    pub(super) written: u64,
    pub(super) zeros_written: u64,
}

impl StreamSink<'_> {
    pub(super) fn write(&mut self, bytes: &[u8]) -> Result<()> {
        sys::write_all(self.fd, bytes).map_err(|(e, done)| {
            let at = self.written + done;
            Error::io(
                "write",
                self.path,
                Some(at..at + (bytes.len() as u64 - done)),
                e,
            )
        })?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    pub(super) fn zeros(&mut self, mut len: u64) -> Result<()> {
        let buf = zeros::zero_buffer();
        self.zeros_written += len;
        while len > 0 {
            let n = len.min(buf.len() as u64) as usize;
            self.write(&buf[..n])?;
            len -= n as u64;
        }
        Ok(())
    }
}

impl RunSink for StreamSink<'_> {
    fn hole(&mut self, r: std::ops::Range<u64>) -> Result<()> {
        self.zeros(r.end - r.start)
    }
    fn data(&mut self, _off: u64, bytes: &[u8]) -> Result<()> {
        self.write(bytes)
    }
}

impl Job<'_> {
    /// Copies the source into the pipe, FIFO or character device `sink`:
    /// a stream source is read to its end; a file is read over its data
    /// runs, its holes written as zeros.
    pub(super) fn copy_to_stream(
        &self,
        sink: &mut StreamSink<'_>,
        stream: Option<bool>,
        report: &mut CopyReport,
    ) -> Result<()> {
        report.method = CopyMethod::Stream;
        self.advise_sequential();
        if let Some(fifo) = stream {
            report.len = read_to_end(self, fifo, |b| sink.write(b))?;
        } else {
            report.data_extents = Some(self.walk_runs(sink)?);
        }
        report.bytes_copied = sink.written;
        if sink.zeros_written > 0 {
            report.notes.push(Note::new(
                NoteKind::HolesAsZeros,
                format!(
                    "the destination cannot seek: the source's holes ({} bytes) were written as zeros",
                    sink.zeros_written
                ),
            ));
        }
        Ok(())
    }
}
