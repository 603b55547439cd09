//! Whether a file's space is laid out for the hardware path of untorn
//! writes: every aligned unit of a range in one written extent, starting
//! at a physical address aligned to the unit.
//!
//! The hardware path sends a unit to the device as one command, which it
//! can only do when the unit is one contiguous run on the device whose
//! start the device's atomic boundary divides. XFS falls back to its
//! software path otherwise (slower, still untorn); ext4 refuses the write
//! (`EINVAL`), and converts a unit that is part written and part unwritten
//! with a hidden zero-out and journal commit first.

use crate::error::{Error, Result};
use crate::sys::{self, RawExtent};
use crate::units::format_human;
use rustix::fd::AsFd;
use serde::Serialize;
use std::ops::Range;
use std::path::Path;

/// What is wrong with one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnitFault {
    /// No blocks behind (part of) the unit.
    Hole,
    /// Allocated but unwritten: the first write converts it.
    Unwritten,
    /// The unit spans two extents that are not one contiguous run, or
    /// mixes written and unwritten blocks.
    Split,
    /// The unit's physical start is not a multiple of the unit.
    Misaligned,
    /// The blocks are shared with another file (reflink, snapshot): a
    /// write copies them first.
    Shared,
    /// Anything else: delayed allocation, inline or encoded data, an
    /// unknown physical address.
    Other,
}

impl UnitFault {
    /// The name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            UnitFault::Hole => "hole",
            UnitFault::Unwritten => "unwritten",
            UnitFault::Split => "split",
            UnitFault::Misaligned => "misaligned",
            UnitFault::Shared => "shared",
            UnitFault::Other => "other",
        }
    }
}

/// One unit that fails, with what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BadUnit {
    /// The unit's file offset.
    pub offset: u64,
    /// What is wrong.
    pub fault: UnitFault,
    /// The unit's physical start, where it has one.
    pub physical: Option<u64>,
}

/// The result of [`check_layout`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LayoutCheck {
    /// The unit checked (bytes).
    pub unit: u64,
    /// The range checked: the range asked for, rounded inwards to whole
    /// units.
    pub start: u64,
    /// End of the range checked (exclusive).
    pub end: u64,
    /// Units checked.
    pub units: u64,
    /// Units in one written extent with an aligned physical start.
    pub ok: u64,
    /// Units failing, per fault, in [`UnitFault`]'s order.
    pub faults: Vec<(UnitFault, u64)>,
    /// The first failing units (at most [`FIRST_BAD`]).
    pub first_bad: Vec<BadUnit>,
}

/// How many failing units [`LayoutCheck::first_bad`] lists.
pub const FIRST_BAD: usize = 16;

impl LayoutCheck {
    /// Whether every unit checked passes (and there was at least one).
    pub fn passes(&self) -> bool {
        self.units > 0 && self.ok == self.units
    }

    /// One line for people.
    pub fn words(&self) -> String {
        let unit = format_human(self.unit);
        if self.units == 0 {
            return format!("no whole {unit} unit in the range");
        }
        if self.passes() {
            return format!(
                "all {} units of {unit} lie in one written extent with a physical start aligned to {unit}",
                self.units
            );
        }
        let faults: Vec<String> = self
            .faults
            .iter()
            .map(|(f, n)| format!("{n} {}", f.name()))
            .collect();
        format!(
            "{} of {} units of {unit} pass; failing: {}",
            self.ok,
            self.units,
            faults.join(", ")
        )
    }
}

/// Checks every `unit`-aligned unit of `range` of the open file `fd`
/// (`path` names it in errors): one extent (neighbours that continue each
/// other on the device count as one), written, not shared, with a physical
/// start that `unit` divides. Uses `FIEMAP` with `FIEMAP_FLAG_SYNC`, so
/// dirty data is allocated first. `unit` must be a power of two.
///
/// Refused first, with the reason, where the file takes no untorn writes
/// of `unit` (`EOPNOTSUPP` where it takes none at all, as on ext4 without
/// atomic-write support; `EINVAL` for a unit outside its `statx` limits):
/// a layout that passes there would say nothing about torn writes.
pub fn check_layout<Fd: AsFd>(
    fd: Fd,
    path: &Path,
    range: Range<u64>,
    unit: u64,
) -> Result<LayoutCheck> {
    valid_unit(path, unit)?;
    super::takes_unit("check_layout", path, fd.as_fd(), unit)?;
    layout_of(fd, path, range, unit)
}

fn valid_unit(path: &Path, unit: u64) -> Result<()> {
    if !unit.is_power_of_two() || unit < 512 {
        return Err(Error::refused(
            "check_layout",
            path,
            libc_einval(),
            format!("the unit must be a power of two of at least 512 bytes, not {unit}"),
        ));
    }
    Ok(())
}

/// [`check_layout`] without asking whether the file takes untorn writes
/// (the growth asked before it prepared the space).
pub(crate) fn layout_of<Fd: AsFd>(
    fd: Fd,
    path: &Path,
    range: Range<u64>,
    unit: u64,
) -> Result<LayoutCheck> {
    valid_unit(path, unit)?;
    let start = range.start.div_ceil(unit) * unit;
    let end = range.end / unit * unit;
    let mut check = LayoutCheck {
        unit,
        start,
        end: end.max(start),
        units: 0,
        ok: 0,
        faults: Vec::new(),
        first_bad: Vec::new(),
    };
    if end <= start {
        return Ok(check);
    }
    let raw = sys::fiemap(fd.as_fd(), start, end - start, true)
        .map_err(|e| Error::io("ioctl(FIEMAP)", path, Some(start..end), e))?;
    let runs = merge(raw);
    let mut counts = std::collections::BTreeMap::new();
    let mut at = 0usize;
    let mut o = start;
    while o < end {
        while at < runs.len() && runs[at].logical + runs[at].length <= o {
            at += 1;
        }
        let verdict = judge(&runs[at.min(runs.len())..], o, unit);
        check.units += 1;
        match verdict {
            Ok(()) => check.ok += 1,
            Err((fault, physical)) => {
                *counts.entry(fault).or_insert(0u64) += 1;
                if check.first_bad.len() < FIRST_BAD {
                    check.first_bad.push(BadUnit {
                        offset: o,
                        fault,
                        physical,
                    });
                }
            }
        }
        o += unit;
    }
    check.faults = counts.into_iter().collect();
    Ok(check)
}

fn libc_einval() -> i32 {
    rustix::io::Errno::INVAL.raw_os_error()
}

/// Joins neighbours that continue each other in the file and on the device
/// with the same flags: one run to the filesystem's I/O path.
pub(crate) fn merge(mut raw: Vec<RawExtent>) -> Vec<RawExtent> {
    raw.sort_by_key(|e| e.logical);
    // The last extent's flag says nothing about its blocks.
    let keep = !sys::FIEMAP_EXTENT_LAST;
    let mut out: Vec<RawExtent> = Vec::with_capacity(raw.len());
    for e in raw {
        if let Some(p) = out.last_mut() {
            if p.logical + p.length == e.logical
                && p.physical != 0
                && p.physical + p.length == e.physical
                && p.flags & keep == e.flags & keep
            {
                p.length += e.length;
                continue;
            }
        }
        out.push(e);
    }
    out
}

/// The verdict on the unit at `o`; `runs` starts with the first run that
/// ends after `o`.
fn judge(
    runs: &[RawExtent],
    o: u64,
    unit: u64,
) -> std::result::Result<(), (UnitFault, Option<u64>)> {
    let Some(e) = runs.first().filter(|e| e.logical <= o) else {
        return Err((UnitFault::Hole, None));
    };
    let physical = (e.physical != 0 && e.flags & sys::FIEMAP_EXTENT_UNKNOWN == 0)
        .then(|| e.physical + (o - e.logical));
    let odd = sys::FIEMAP_EXTENT_DELALLOC
        | sys::FIEMAP_EXTENT_DATA_INLINE
        | sys::FIEMAP_EXTENT_UNKNOWN
        | sys::FIEMAP_EXTENT_ENCODED;
    if e.flags & odd != 0 || physical.is_none() {
        return Err((UnitFault::Other, physical));
    }
    if e.logical + e.length < o + unit {
        // The unit goes on past this run: into a hole, or another run.
        let next = runs.get(1).filter(|n| n.logical == e.logical + e.length);
        return Err((
            if next.is_some() {
                UnitFault::Split
            } else {
                UnitFault::Hole
            },
            physical,
        ));
    }
    if e.flags & sys::FIEMAP_EXTENT_SHARED != 0 {
        return Err((UnitFault::Shared, physical));
    }
    if e.flags & sys::FIEMAP_EXTENT_UNWRITTEN != 0 {
        return Err((UnitFault::Unwritten, physical));
    }
    match physical {
        Some(p) if !p.is_multiple_of(unit) => Err((UnitFault::Misaligned, physical)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64, flags: u32) -> RawExtent {
        RawExtent {
            logical,
            physical,
            length,
            flags,
        }
    }

    #[test]
    fn each_fault_is_told_apart() {
        const K: u64 = 4096;
        let u = 4 * K;
        let runs = merge(vec![
            // [0, 16K): aligned, written.
            ext(0, 64 * K, 4 * K, 0),
            // [16K, 32K): misaligned physical start.
            ext(4 * K, 9 * K, 4 * K, 0),
            // [32K, 40K) then a discontiguous [40K, 48K): split.
            ext(8 * K, 100 * K, 2 * K, 0),
            ext(10 * K, 200 * K, 2 * K, 0),
            // [48K, 64K): unwritten.
            ext(12 * K, 300 * K, 4 * K, sys::FIEMAP_EXTENT_UNWRITTEN),
            // [64K, 80K): two contiguous pieces with the same flags: one.
            ext(16 * K, 400 * K, 2 * K, 0),
            ext(18 * K, 402 * K, 2 * K, sys::FIEMAP_EXTENT_LAST),
        ]);
        let verdicts: Vec<_> = (0..6)
            .map(|i| {
                let o = i * u;
                let at = runs
                    .iter()
                    .position(|e| e.logical + e.length > o)
                    .unwrap_or(runs.len());
                judge(&runs[at..], o, u).map_err(|(f, _)| f)
            })
            .collect();
        assert_eq!(
            verdicts,
            vec![
                Ok(()),
                Err(UnitFault::Misaligned),
                Err(UnitFault::Split),
                Err(UnitFault::Unwritten),
                Ok(()),
                Err(UnitFault::Hole),
            ]
        );
    }
}
