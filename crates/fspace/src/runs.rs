//! The data-run walker: one walk over `SEEK_DATA`/`SEEK_HOLE` for every
//! feature that needs a file's data runs without reading its holes (`copy`,
//! `dig`, `allocate_range` and the extent map's fallback).
//!
//! Two rules come with it:
//!
//! - a walk always makes progress: a `SEEK_HOLE` answer at or before the
//!   data it was asked from (a FUSE daemon answering nonsense) counts the
//!   rest of the range as data rather than loop;
//! - where `SEEK_DATA` is refused (`EINVAL`, `EOPNOTSUPP`: block devices,
//!   some FUSE filesystems) the whole range is data;
//! - finding no hole may prove nothing: where `SEEK_HOLE` may be the
//!   kernel's generic one, which reports every byte as data (FUSE without
//!   an `lseek` handler, as sshfs; network filesystems before NFS 4.2),
//!   [`seek_hole_may_be_blind`] says so, and callers report holes as
//!   unknown rather than absent.

use crate::error::{Error, Result};
use crate::fs_info::FsKind;
use crate::sys;
use rustix::fd::BorrowedFd;
use std::ops::Range;
use std::path::Path;

/// The data runs of one range of a file, in order.
pub(crate) struct DataRuns<'a> {
    fd: BorrowedFd<'a>,
    path: &'a Path,
    pos: u64,
    end: u64,
}

impl<'a> DataRuns<'a> {
    /// Walks `range` of `fd` (`path` names it in errors).
    pub fn new(fd: BorrowedFd<'a>, path: &'a Path, range: Range<u64>) -> Self {
        DataRuns {
            fd,
            path,
            pos: range.start,
            end: range.end,
        }
    }

    /// Returns the next data run (never empty, within the range), or `None`
    /// when the rest of the range is a hole. Errors name the `lseek`.
    pub fn next_run(&mut self) -> Result<Option<Range<u64>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let (pos, end) = (self.pos, self.end);
        let data = match sys::seek_data(self.fd, pos) {
            Ok(d) => d,
            // No SEEK_DATA here (block devices, some FUSE filesystems): all
            // of the range is data, as GNU cp takes it.
            Err(e) if crate::errno::unsupported(crate::errno::Call::SeekHole, e) => {
                self.pos = end;
                return Ok(Some(pos..end));
            }
            Err(e) => return Err(Error::io("lseek(SEEK_DATA)", self.path, Some(pos..end), e)),
        };
        let Some(data) = data.filter(|&d| d < end) else {
            self.pos = end;
            return Ok(None);
        };
        let hole = sys::seek_hole(self.fd, data)
            .map_err(|e| Error::io("lseek(SEEK_HOLE)", self.path, Some(data..end), e))?
            .unwrap_or(end)
            .min(end);
        // No progress: count the rest as data.
        let stop = if hole <= data { end } else { hole };
        self.pos = stop;
        Ok(Some(data..stop))
    }

    /// Returns the holes of the rest of the range, in order.
    pub fn holes(mut self) -> Result<Vec<Range<u64>>> {
        let mut holes = Vec::new();
        let mut pos = self.pos;
        while let Some(run) = self.next_run()? {
            if run.start > pos {
                holes.push(pos..run.start);
            }
            pos = run.end;
        }
        if pos < self.end {
            holes.push(pos..self.end);
        }
        Ok(holes)
    }
}

/// Returns true if and only if `SEEK_HOLE` on `fd`'s filesystem may report
/// every byte as data, so that a walk that found no hole proves nothing
/// ([`FsKind::seek_hole_may_be_blind`]). False when the filesystem cannot be
/// told (`fstatfs` failed): the walk's answer is taken as it is.
pub(crate) fn seek_hole_may_be_blind(fd: BorrowedFd<'_>) -> bool {
    sys::fstatfs(fd).is_ok_and(|f| FsKind::from_magic(f.magic).seek_hole_may_be_blind())
}
