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
//! Then the layout is checked ([`check_layout`]) over the whole file.

use super::layout::{check_layout, LayoutCheck};
use crate::error::{Error, Result};
use crate::fs_info::FsKind;
use crate::sys::{self, Errno};
use rustix::fd::BorrowedFd;
use serde::Serialize;
use std::path::Path;

/// What a growth for untorn writes did beyond the growth itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Ready {
    /// The unit asked for (bytes).
    pub unit: u32,
    /// The file's extent-size hint afterwards (bytes; 0: none), where the
    /// filesystem has hints.
    pub extent_size_hint: Option<u32>,
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
    use serde::ser::SerializeMap;
    match v {
        Ok(c) => c.serialize(s),
        Err(why) => {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("error", why)?;
            m.end()
        }
    }
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
pub(crate) fn set_hint(fd: BorrowedFd<'_>, kind: FsKind, unit: u32) -> Option<String> {
    if kind != FsKind::Xfs {
        return None;
    }
    let block = sys::statx_atomic(fd).map_or(4096, |s| s.blksize.max(512));
    if unit <= block {
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
    hint_note: Option<String>,
) -> Ready {
    Ready {
        unit,
        extent_size_hint: sys::extent_size_hint(fd).ok().map(|(h, _)| h),
        hint_note,
        layout: check_layout(fd, path, 0..len, u64::from(unit)).map_err(|e| e.to_string()),
    }
}
