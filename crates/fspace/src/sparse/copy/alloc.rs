//! `keep_allocation`: the source's unwritten extents (allocated, never
//! written: what `fallocate` leaves) become unwritten extents of the copy,
//! inside and past its end, instead of holes.
//!
//! The data rungs see an unwritten extent as a hole (`SEEK_DATA` skips it on
//! ext4 and xfs; it reads as zeros), so after the data is in place each
//! unwritten range of the source's `FIEMAP` is reserved in the copy with
//! `fallocate(FALLOC_FL_KEEP_SIZE)`: unwritten where the copy has a hole,
//! nothing where it already holds data, and the length unchanged (also past
//! the end). A clone needs it too: xfs does not share unwritten extents
//! (a cloned file of them is holes); where the clone did share them (btrfs)
//! the range is allocated and `fallocate` leaves it as it is.

use super::job::Job;
use super::types::CopyReport;
use crate::errno::{unsupported, Call};
use crate::error::{Error, Result};
use crate::note::{Note, NoteKind};
use crate::sys::FallocMode;
use crate::sys::{self, Errno};
use rustix::fd::BorrowedFd;

/// The source's unwritten ranges (block-aligned, as `FIEMAP` gives them,
/// merged where adjacent), past its end included; `Err` with the errno when
/// the source has no `FIEMAP`.
fn unwritten_ranges(sfd: BorrowedFd<'_>) -> std::result::Result<Vec<(u64, u64)>, Errno> {
    let raw = sys::fiemap(sfd, 0, u64::MAX, false)?;
    let mut out: Vec<(u64, u64)> = Vec::new();
    for r in raw
        .iter()
        .filter(|r| r.flags & sys::FIEMAP_EXTENT_UNWRITTEN != 0)
    {
        let end = r.logical.saturating_add(r.length);
        match out.last_mut() {
            Some(last) if last.1 == r.logical => last.1 = end,
            _ => out.push((r.logical, end)),
        }
    }
    Ok(out)
}

impl Job<'_> {
    /// Reserves the source's unwritten ranges in the copy (see the module).
    pub(super) fn keep_allocation(&self, report: &mut CopyReport) -> Result<()> {
        let ranges = match unwritten_ranges(self.sfd) {
            Ok(r) => r,
            Err(e) if unsupported(Call::Fiemap, e) => {
                report.notes.push(Note::new(
                    NoteKind::AllocationNotKept,
                    format!(
                        "allocation not kept: the source's filesystem has no FIEMAP ({}), so its unwritten extents cannot be told from holes; they are holes in the copy",
                        std::io::Error::from_raw_os_error(e.raw_os_error())
                    ),
                ));
                return Ok(());
            }
            Err(e) => return Err(Error::io("ioctl(FIEMAP)", self.src, None, e)),
        };
        let total: u64 = ranges.iter().map(|(s, e)| e - s).sum();
        for (i, &(start, end)) in ranges.iter().enumerate() {
            self.check_cancel()?;
            match sys::fallocate(self.tfd, FallocMode::KeepSize, start, end - start) {
                Ok(()) => report.bytes_kept_allocated += end - start,
                Err(e) if i == 0 && unsupported(Call::Fallocate, e) => {
                    report.notes.push(Note::new(
                        NoteKind::AllocationNotKept,
                        format!(
                            "allocation not kept: {} cannot allocate without writing (fallocate: {}); the source's {} unwritten bytes are holes in the copy",
                            self.dst_kind()?.name(),
                            std::io::Error::from_raw_os_error(e.raw_os_error()),
                            total
                        ),
                    ));
                    return Ok(());
                }
                Err(e) => {
                    return Err(Error::io(
                        "fallocate(KEEP_SIZE)",
                        self.dst,
                        Some(start..end),
                        e,
                    ))
                }
            }
        }
        Ok(())
    }
}
