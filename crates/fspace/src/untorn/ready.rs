//! Space made ready for untorn writes of a unit: what a growth with
//! [`GrowOptions::untorn_unit`](crate::GrowOptions::untorn_unit) adds.
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
//! Then the layout is checked ([`check_layout`]) over the whole file.

use super::facts::Limits;
use super::layout::{layout_of, LayoutCheck};
use crate::error::{Error, Result};
use crate::fs_info::FsKind;
use crate::sys::{self, Errno, FallocMode};
use rustix::fd::BorrowedFd;
use serde::Serialize;
use std::path::Path;

/// What a growth for untorn writes did beyond the growth itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Ready {
    /// The unit asked for (bytes).
    pub unit: u32,
    /// The grown file's untorn-write limits: whether the space can take
    /// untorn writes at all.
    pub limits: Limits,
    /// The file's extent-size hint afterwards (bytes; 0: none), where the
    /// filesystem has hints.
    pub extent_size_hint: Option<u32>,
    /// Ranges cut out of the new allocation to put its units on aligned
    /// device addresses (XFS; see the module docs).
    pub collapses: u32,
    /// Why the alignment stopped before every unit was placed (the
    /// filesystem refused a collapse), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment_note: Option<String>,
    /// Why the hint is not the unit, when it is not and should be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint_note: Option<String>,
    /// The layout of the whole file, unit by unit, or why it could not be
    /// read.
    #[serde(serialize_with = "ser_layout")]
    pub layout: std::result::Result<LayoutCheck, String>,
}

fn ser_layout<S: serde::Serializer>(
    v: &std::result::Result<LayoutCheck, String>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::fs_info::ser_result(v, s, "error")
}

/// Refuses a unit that is not a power of two of at least 512 bytes,
/// before anything is done.
pub(crate) fn validate_unit(op: &'static str, path: &Path, unit: u32) -> Result<()> {
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
pub(crate) fn set_hint(
    fd: BorrowedFd<'_>,
    kind: FsKind,
    block_size: u64,
    unit: u32,
) -> Option<String> {
    if kind != FsKind::Xfs {
        return None;
    }
    if u64::from(unit) <= block_size {
        // Every allocation is whole blocks already.
        return None;
    }
    match sys::extent_size_hint(fd) {
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
    }
}

/// The report once the file has grown to `len`.
pub(crate) fn report(
    fd: BorrowedFd<'_>,
    path: &Path,
    len: u64,
    unit: u32,
    aligned: Option<Aligned>,
    hint_note: Option<String>,
) -> Ready {
    let (collapses, alignment_note) = aligned.map_or((0, None), |a| (a.collapses, a.stopped));
    Ready {
        unit,
        limits: Limits::from_statx_of(fd),
        collapses,
        alignment_note,
        extent_size_hint: sys::extent_size_hint(fd).ok().map(|(h, _)| h),
        hint_note,
        layout: layout_of(fd, path, 0..len, u64::from(unit)).map_err(|e| e.to_string()),
    }
}

/// How many collapses [`align`] makes at most: two per extent of a
/// fragmented allocation, for up to 64 extents; past that the layout check
/// says what is left.
const MAX_COLLAPSES: u32 = 128;

/// What [`align`] did.
pub(crate) struct Aligned {
    /// Ranges collapsed.
    pub(crate) collapses: u32,
    /// Why it stopped before every unit was placed, when the filesystem
    /// refused a collapse (a realtime or zoned XFS).
    pub(crate) stopped: Option<String>,
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
pub(crate) fn align(
    fd: BorrowedFd<'_>,
    path: &Path,
    start: u64,
    target: u64,
    unit: u64,
) -> Result<Aligned> {
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
        let Some(cut) = first_cut(&super::layout::merge(raw), a, target, unit) else {
            break;
        };
        match falloc(FallocMode::CollapseRange, cut.0, cut.1) {
            Ok(()) => done.collapses += 1,
            Err((e, err)) if e == Errno::OPNOTSUPP || e == Errno::INVAL => {
                done.stopped = Some(err.to_string());
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
