//! A growth for untorn writes of a unit: what
//! [`GrowOptions::untorn_unit`](crate::GrowOptions::untorn_unit) adds to a
//! growth, reported as [`Ready`].
//!
//! Two things, both measured back rather than assumed:
//!
//! - **written extents** (the growth follows intent `log`'s plan): on
//!   ext4 an untorn write over a unit that is part written and part
//!   unwritten first zeroes and converts it with a journal commit; in
//!   written space no write changes the mapping;
//! - **an extent-size hint of the unit on XFS**, set while the file has no
//!   extents (XFS refuses a change later): allocations then come in whole,
//!   aligned units, which the hardware path needs.
//!
//! - **physically aligned units on XFS**: the hint aligns extents in the
//!   file, not on the device. The new range is allocated with one
//!   `fallocate` (a unit more than asked), then, extent by extent, the few
//!   blocks that put an extent's device start off the unit are cut out
//!   with `FALLOC_FL_COLLAPSE_RANGE`, which shifts what follows down while
//!   its blocks stay where they are on the device. The new range holds no
//!   data yet, so nothing of the file's moves; the excess is cut off at
//!   the end. The zero-fill that follows writes the allocated blocks in
//!   place.
//!
//! Then the layout is checked ([`check_layout`](crate::untorn::check_layout))
//! over the whole file.

use super::rollback::{reserve_again, rollback, Before};
use crate::error::{Error, Result};
use crate::fs_info::{FsInfo, FsKind};
use crate::note::{Note, NoteKind};
use crate::strategy::Strategy;
use crate::sys::{self, Errno, FallocMode};
use crate::untorn::{layout_of, merge_extents, Limits, Ready};
use rustix::fd::BorrowedFd;
use std::ops::Range;
use std::path::Path;

/// Refuses, before anything changes, a growth for untorn writes of `unit`
/// that could not give them: a unit that is not a power of two of at least
/// 512 bytes, a strategy named that leaves the space unwritten (holes,
/// unwritten extents or space past the end: the first untorn write there
/// converts it, and tears), or a file on which every write can tear (space
/// made "ready" there would read as a success).
pub(super) fn refuse_early(
    fd: BorrowedFd<'_>,
    path: &Path,
    unit: u32,
    named: Option<Strategy>,
) -> Result<()> {
    validate_unit("grow", path, unit)?;
    if let Some(s) = named.filter(|s| !matches!(s, Strategy::ZeroFill | Strategy::WriteZeroes)) {
        return Err(Error::refused_errno(
            "grow",
            path,
            Errno::INVAL,
            format!(
                "space for untorn writes must be written: strategy {s} leaves it {}; use zero-fill, write-zeroes or auto",
                if s == Strategy::Sparse { "as holes" } else { "unwritten or past the end" }
            ),
        ));
    }
    crate::untorn::takes_unit("grow", path, fd, u64::from(unit))
}

/// Before the growth's strategies run over `range`: sets the extent-size
/// hint (XFS), and where the filesystem places units on the device
/// ([`aligns_units`]), allocates the range with its units aligned
/// ([`align`]). Returns the hint's note and what the alignment did. On an
/// error the file is rolled back to `prior`.
pub(super) fn prepare(
    fd: BorrowedFd<'_>,
    path: &Path,
    info: &FsInfo,
    range: Range<u64>,
    unit: u32,
    prior: &Before,
) -> Result<(Option<Note>, Option<Aligned>)> {
    let hint_note = set_hint(fd, info.kind, info.block_size, unit);
    if !aligns_units(fd, info, unit) {
        return Ok((hint_note, None));
    }
    let a = align(fd, path, range.start, range.end, u64::from(unit))
        .inspect_err(|_| rollback(fd, prior, range.end))?;
    // The collapses shift what lay past the end down: reservations made
    // before are put back where they were.
    reserve_again(fd, prior);
    Ok((hint_note, Some(a)))
}

/// Whether a growth for untorn writes of `unit` places its units at
/// aligned device addresses ([`align`]): on XFS, for a unit larger than a
/// block, where the file takes untorn writes at all.
fn aligns_units(fd: BorrowedFd<'_>, info: &FsInfo, unit: u32) -> bool {
    info.kind == FsKind::Xfs
        && u64::from(unit) > info.block_size
        && Limits::from_statx_of(fd).supported()
}

/// Refuses a unit that is not a power of two of at least 512 bytes,
/// before anything is done.
fn validate_unit(op: &'static str, path: &Path, unit: u32) -> Result<()> {
    if unit < 512 || !unit.is_power_of_two() {
        return Err(Error::refused_errno(
            op,
            path,
            Errno::INVAL,
            format!("the untorn unit must be a power of two of at least 512 bytes, not {unit}"),
        ));
    }
    Ok(())
}

/// Sets the extent-size hint of the file to `unit` on XFS when it has no
/// extents yet; returns the note when it is not set and should be.
fn set_hint(fd: BorrowedFd<'_>, kind: FsKind, block_size: u64, unit: u32) -> Option<Note> {
    if kind != FsKind::Xfs {
        return None;
    }
    if u64::from(unit) <= block_size {
        // Every allocation is whole blocks already.
        return None;
    }
    let note = match sys::extent_size_hint(fd) {
        Ok((hint, _)) if hint == unit => None,
        Ok((_, extents)) if extents > 0 => Some(format!(
            "the extent-size hint was not set: the file already has {extents} extent{} and XFS changes the hint only of a file with none",
            if extents == 1 { "" } else { "s" }
        )),
        Ok(_) => sys::set_extent_size_hint(fd, unit).err().map(|e| {
            format!(
                "setting the extent-size hint failed: {}",
                std::io::Error::from_raw_os_error(e.raw_os_error())
            )
        }),
        Err(e) => Some(format!(
            "the extent-size hint could not be read: {}",
            std::io::Error::from_raw_os_error(e.raw_os_error())
        )),
    };
    note.map(|text| Note::new(NoteKind::HintNotSet, text))
}

/// The report once the file has grown to `len`.
pub(super) fn report(
    fd: BorrowedFd<'_>,
    path: &Path,
    len: u64,
    unit: u32,
    aligned: Option<Aligned>,
    hint_note: Option<Note>,
) -> Ready {
    let (collapses, alignment_note) = aligned.map_or((0, None), |a| (a.collapses, a.stopped));
    Ready {
        unit,
        limits: Limits::from_statx_of(fd),
        collapses,
        alignment_note,
        extent_size_hint: sys::extent_size_hint(fd).ok().map(|(h, _)| h),
        hint_note,
        layout: layout_of(fd, path, 0..len, u64::from(unit))
            .map_err(|e| crate::reason::Reason::from(&e)),
    }
}

/// How many collapses [`align`] makes at most: two per extent of a
/// fragmented allocation, for up to 64 extents; past that the layout check
/// says what is left.
const MAX_COLLAPSES: u32 = 128;

/// What [`align`] did.
pub(super) struct Aligned {
    /// Ranges collapsed.
    collapses: u32,
    /// Why it stopped before every unit was placed, when the filesystem
    /// refused a collapse (a realtime or zoned XFS).
    stopped: Option<Note>,
}

/// Allocates `[start, target)` of the file (which holds no data past
/// `start`) so that every whole `unit` from the first unit boundary at or
/// after `start` sits at a device address that `unit` divides (see the
/// module docs). The file is never longer than `target`, so a power cut
/// leaves it between its old length and `target`, the new blocks
/// unwritten (reading as zeros), and the same growth can run again. A
/// collapse the filesystem refuses as unsupported stops the alignment,
/// not the growth. The caller rolls back on error. The blocks are left
/// unwritten: the growth that follows writes them in place.
fn align(fd: BorrowedFd<'_>, path: &Path, start: u64, target: u64, unit: u64) -> Result<Aligned> {
    let mut done = Aligned {
        collapses: 0,
        stopped: None,
    };
    let a = start.div_ceil(unit) * unit;
    if target < a + unit {
        return Ok(done);
    }
    let falloc = |mode: FallocMode, off: u64, len: u64| {
        sys::fallocate(fd, mode, off, len).map_err(|e| {
            (
                e,
                Error::io_flags(
                    "fallocate",
                    mode.flag_names(),
                    path,
                    Some(off..off + len),
                    e,
                ),
            )
        })
    };
    let size = || {
        sys::fstat(fd)
            .map(|st| st.size)
            .map_err(|e| Error::io("fstat", path, None, e))
    };
    falloc(FallocMode::Allocate, a, target - a).map_err(|(_, e)| e)?;
    while done.collapses < MAX_COLLAPSES {
        let len = size()?;
        if len < target {
            // Collapses shortened the file: allocate what they took.
            falloc(FallocMode::Allocate, len, target - len).map_err(|(_, e)| e)?;
            continue;
        }
        let raw = sys::fiemap(fd, a, target - a, false)
            .map_err(|e| Error::io("ioctl(FIEMAP)", path, Some(a..target), e))?;
        let Some(cut) = first_cut(&merge_extents(raw), a, target, unit) else {
            break;
        };
        match falloc(FallocMode::CollapseRange, cut.0, cut.1) {
            Ok(()) => done.collapses += 1,
            Err((e, err)) if e == Errno::OPNOTSUPP || e == Errno::INVAL => {
                done.stopped = Some(Note::new(NoteKind::AlignmentStopped, err.to_string()));
                break;
            }
            Err((_, err)) => return Err(err),
        }
    }
    let len = size()?;
    if len < target {
        falloc(FallocMode::Allocate, len, target - len).map_err(|(_, e)| e)?;
    }
    Ok(done)
}

/// The first range to collapse so that extents from `a` to `target` start
/// and end on unit boundaries in the file and start on unit boundaries on
/// the device; `None` when they all do, or when what is left cannot be cut
/// (a cut must end below `target`, the file's length meanwhile). `runs`
/// are merged FIEMAP extents.
fn first_cut(runs: &[sys::RawExtent], a: u64, target: u64, unit: u64) -> Option<(u64, u64)> {
    for e in runs {
        let end = e.logical + e.length;
        if end <= a || e.physical == 0 {
            continue;
        }
        if e.logical >= target {
            break;
        }
        let l = e.logical.max(a);
        let p = e.physical + (l - e.logical);
        // Cut the head so that the device address of this run's first
        // file-unit boundary is a multiple of the unit.
        let head = (l % unit + unit - p % unit) % unit;
        if head != 0 {
            let cut = head.min(end - l);
            return (l + cut < target).then_some((l, cut));
        }
        // Cut the tail so that the next run starts on a unit boundary.
        let tail = end % unit;
        if tail != 0 && end < target {
            return Some((end - tail, tail));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64) -> sys::RawExtent {
        sys::RawExtent {
            logical,
            physical,
            length,
            flags: 0,
        }
    }

    #[test]
    fn cuts_head_then_tail_then_nothing() {
        const K: u64 = 1024;
        let u = 16 * K;
        // Device start 8 KiB past a unit boundary: cut 8 KiB at 0.
        assert_eq!(
            first_cut(&[ext(0, 1032 * K, 1024 * K)], 0, 512 * K, u),
            Some((0, 8 * K))
        );
        // Aligned head, but the run ends 4 KiB into a unit before the
        // target: cut those 4 KiB.
        assert_eq!(
            first_cut(
                &[ext(0, 1024 * K, 100 * K), ext(100 * K, 9000 * K, 900 * K)],
                0,
                512 * K,
                u
            ),
            Some((96 * K, 4 * K))
        );
        // Both aligned: nothing.
        assert_eq!(
            first_cut(
                &[ext(0, 1024 * K, 96 * K), ext(96 * K, 8192 * K, 900 * K)],
                0,
                512 * K,
                u
            ),
            None
        );
        // A head cut that would reach the end of the range is not made.
        assert_eq!(
            first_cut(&[ext(504 * K, 9004 * K, 8 * K)], 0, 512 * K, u),
            None
        );
        // The second run's device start is off by 4 KiB.
        assert_eq!(
            first_cut(
                &[ext(0, 1024 * K, 96 * K), ext(96 * K, 8196 * K, 900 * K)],
                0,
                512 * K,
                u
            ),
            Some((96 * K, 12 * K))
        );
    }
}
