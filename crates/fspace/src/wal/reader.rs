//! Reading verified records back.

use super::format::HeaderProblem;
use super::scan::{open_segment, read_header, Scan, Step};
use super::storage::Storage;
use super::types::{Lsn, SegmentInfo};
use crate::error::{Error, Result};
use crate::sys::Errno;

/// A record read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Record {
    /// Its LSN.
    pub lsn: Lsn,
    /// Its payload.
    pub data: Vec<u8>,
    /// The sequence number of the segment holding it.
    pub segment: u64,
    /// Where its header starts in that segment's file.
    pub offset: u64,
}

/// Iterates the durable records of a [`Wal`](crate::wal::Wal) from an LSN on,
/// verifying each (CRC, LSN sequence, segment header). Damage is an
/// [`Error::Corrupt`] naming the segment and offset, after which the
/// iterator ends.
pub struct WalReader {
    io: std::sync::Arc<dyn Storage>,
    log_id: [u8; 16],
    segments: Vec<SegmentInfo>,
    idx: usize,
    scan: Option<Scan>,
    next: u64,
    from: u64,
    end: u64,
    done: bool,
}

impl std::fmt::Debug for WalReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalReader")
            .field("next", &self.next)
            .field("end", &self.end)
            .finish()
    }
}

impl WalReader {
    pub(crate) fn new(
        io: std::sync::Arc<dyn Storage>,
        log_id: [u8; 16],
        segments: Vec<SegmentInfo>,
        from: u64,
        end: u64,
    ) -> Result<WalReader> {
        let first = segments.first().map_or(end + 1, |s| s.first_lsn.0);
        if from < first && from != 0 {
            let path = segments.first().map(|s| s.path.clone()).unwrap_or_default();
            return Err(Error::refused_errno(
                "read",
                &path,
                Errno::RANGE,
                format!("LSN {from} was released; the log starts at LSN {first}"),
            ));
        }
        let from = from.max(first);
        let idx = segments
            .iter()
            .rposition(|s| s.first_lsn.0 <= from)
            .unwrap_or(0);
        let next = segments.get(idx).map_or(from, |s| s.first_lsn.0);
        Ok(WalReader {
            io,
            log_id,
            segments,
            idx,
            scan: None,
            next,
            from,
            end,
            done: false,
        })
    }

    /// Lets the reader go on to `end` (records made durable since), with
    /// the segments added since it was made; reading resumes where it
    /// stopped, without reading the earlier records again.
    pub(crate) fn extend(&mut self, segments: &[SegmentInfo], end: u64) {
        let last = self.segments.last().map(|s| s.seq);
        self.segments.extend(
            segments
                .iter()
                .filter(|s| last.is_none_or(|l| s.seq > l))
                .cloned(),
        );
        self.end = self.end.max(end);
        if let Some(scan) = self.scan.as_mut() {
            scan.forget_buffer();
        }
    }

    fn corrupt(&mut self, path: &std::path::Path, offset: u64, message: String) -> Error {
        self.done = true;
        Error::Corrupt {
            op: "read",
            path: path.to_path_buf(),
            offset,
            message,
        }
    }

    fn open_current(&mut self) -> Result<()> {
        let seg = &self.segments[self.idx];
        let path = seg.path.clone();
        let (fd, len) = open_segment(&*self.io, &path)?;
        let h = match read_header(&*fd, &path)? {
            Ok(h) if h.seq == seg.seq && h.log_id == self.log_id => h,
            Ok(_) => return Err(self.corrupt(&path, 0, "header of another segment or log".into())),
            Err(p) => {
                let p: HeaderProblem = p;
                return Err(self.corrupt(&path, 0, format!("invalid segment header ({p})")));
            }
        };
        self.scan = Some(Scan::new(fd, path, h, len));
        Ok(())
    }
}

impl Iterator for WalReader {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if self.done || self.next > self.end || self.idx >= self.segments.len() {
                return None;
            }
            let until = self.segments.get(self.idx + 1).map(|s| s.first_lsn.0);
            if until == Some(self.next) {
                self.idx += 1;
                self.scan = None;
                continue;
            }
            if self.scan.is_none() {
                if let Err(e) = self.open_current() {
                    self.done = true;
                    return Some(Err(e));
                }
            }
            let scan = self.scan.as_mut()?;
            let step = match scan.step() {
                Ok(s) => s,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            match step {
                Step::Record {
                    lsn,
                    payload,
                    offset,
                } => {
                    self.next = lsn + 1;
                    if lsn >= self.from {
                        return Some(Ok(Record {
                            lsn: Lsn(lsn),
                            data: payload.to_vec(),
                            segment: scan.header.seq,
                            offset,
                        }));
                    }
                }
                Step::End { reason, offset } => {
                    let path = scan.path.clone();
                    let msg = format!(
                        "{reason} at LSN {}, before the durable end (LSN {})",
                        self.next, self.end
                    );
                    return Some(Err(self.corrupt(&path, offset, msg)));
                }
            }
        }
    }
}
