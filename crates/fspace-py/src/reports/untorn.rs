//! Untorn (atomic) writes: the facts of a file or a filesystem, the answer
//! for one page size, and the layout of a range (`fspace.untorn_facts`,
//! `fspace.untorn_answer`, `fspace.check_untorn_layout`).

use super::common::{json_of, os, report};
use pyo3::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::OsString;

report! {
    /// One `RWF_ATOMIC` write tried on a scratch file.
    UntornTrial {
        /// Bytes written.
        size: u32,
        /// Through `O_DIRECT` (else through the page cache).
        direct: bool,
        /// Whether the kernel took it.
        ok: bool,
        /// The errno it was refused with.
        errno: Option<i32>,
        /// Why it was refused: the errno and its kind, or a short write.
        error: Option<super::common::Reason>,
    }
}

report! {
    /// The untorn-write limits of one block device under the filesystem
    /// (`queue/atomic_write_*` in sysfs; `None` before Linux 6.11).
    UntornDevice {
        /// The kernel's name (`"loop0"`, `"nvme0n1p2"`).
        name: String,
        /// `atomic_write_unit_min_bytes`.
        unit_min_bytes: Option<u64>,
        /// `atomic_write_unit_max_bytes`: 0 when the device has none.
        unit_max_bytes: Option<u64>,
        /// `atomic_write_max_bytes`.
        max_bytes: Option<u64>,
        /// `atomic_write_boundary_bytes`.
        boundary_bytes: Option<u64>,
    }
}

/// The name a value has in the library's JSON (its kebab-case serde name).
fn json_name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

report! {
    /// What fspace knows about untorn (atomic) writes on a file, or on a
    /// filesystem measured on a scratch file (`fspace.untorn_facts`,
    /// `fspace.untorn_facts_of_fs`).
    UntornFacts + json {
        /// The file asked about, or the directory whose filesystem was
        /// measured.
        path: OsString,
        /// True for a filesystem's facts (a scratch file was measured),
        /// false for an existing file's (nothing was written).
        scratch: bool,
        /// The filesystem's name (`"xfs"`, `"ext4"`, `"fuse.sshfs"`).
        filesystem: String,
        /// What `statx(STATX_WRITE_ATOMIC)` reports: `"supported"`,
        /// `"zero"` (reported, no unit: ext4 on a device without atomic
        /// writes), `"not-reported"` (btrfs, tmpfs, FUSE; kernels before
        /// 6.11) or `"unknown"` (statx failed: `error` says why).
        state: String,
        /// Why the state is unknown (statx's errno and kind).
        error: Option<super::common::Reason>,
        /// `stx_atomic_write_unit_min`; `None` unless supported.
        unit_min: Option<u32>,
        /// `stx_atomic_write_unit_max`; `None` unless supported.
        unit_max: Option<u32>,
        /// `stx_atomic_write_unit_max_opt` (0: not reported); `None` unless
        /// supported.
        unit_max_opt: Option<u32>,
        /// `stx_atomic_write_segments_max`; `None` unless supported.
        segments_max: Option<u32>,
        /// Where the support comes from: `"none"`, `"device"`,
        /// `"filesystem"` (XFS's software path), `"device-and-filesystem"`
        /// or `"unknown"`.
        source: String,
        /// The largest size the hardware path writes (0: none).
        hardware_max: u32,
        /// The devices under the filesystem (empty when `devices_error`).
        devices: Vec<UntornDevice>,
        /// Why the devices are not known, if so.
        devices_error: Option<super::common::Reason>,
        /// `stx_blksize`.
        block_size: u32,
        /// The allocation unit (the bigalloc cluster on ext4), when known.
        allocation_unit: Option<u64>,
        /// Whether reflink works here (XFS's software path needs it), when
        /// measured.
        reflink: Option<bool>,
        /// The file's extent-size hint in bytes (0: none), where the
        /// filesystem has hints (XFS).
        extent_size_hint: Option<u32>,
        /// The alignment `O_DIRECT` needs (`STATX_DIOALIGN`; 0: no
        /// `O_DIRECT`), when reported.
        direct_io_align: Option<u32>,
        /// `RWF_ATOMIC` writes tried on the scratch file (empty for an
        /// existing file).
        tried: Vec<UntornTrial>,
    }
    hidden {
        /// The library's facts, which `untorn_answer` answers from.
        facts: fspace::untorn::UntornFacts,
    }
}

impl UntornFacts {
    pub(crate) fn from(f: fspace::untorn::UntornFacts) -> Self {
        use fspace::untorn::Limits;
        let (unit_min, unit_max, unit_max_opt, segments_max) = match f.limits {
            Limits::Supported {
                unit_min,
                unit_max,
                unit_max_opt,
                segments_max,
            } => (
                Some(unit_min),
                Some(unit_max),
                Some(unit_max_opt),
                Some(segments_max),
            ),
            _ => (None, None, None, None),
        };
        let error = match &f.limits {
            Limits::Unknown { reason } => Some(super::common::reason(reason)),
            _ => None,
        };
        let (devices, devices_error) = match &f.devices {
            Ok(d) => (
                d.iter()
                    .map(|d| UntornDevice {
                        name: d.name.clone(),
                        unit_min_bytes: d.unit_min_bytes,
                        unit_max_bytes: d.unit_max_bytes,
                        max_bytes: d.max_bytes,
                        boundary_bytes: d.boundary_bytes,
                    })
                    .collect(),
                None,
            ),
            Err(why) => (Vec::new(), Some(super::common::reason(why))),
        };
        let g = &f.geometry;
        UntornFacts {
            path: os(&f.path),
            scratch: f.scratch,
            filesystem: f.filesystem.clone(),
            state: f.limits.state().name().into(),
            error,
            unit_min,
            unit_max,
            unit_max_opt,
            segments_max,
            source: json_name(&f.source),
            hardware_max: f.hardware_max,
            devices,
            devices_error,
            block_size: g.block_size,
            allocation_unit: g.allocation_unit,
            reflink: g.reflink,
            extent_size_hint: g.extent_size_hint,
            direct_io_align: g.direct_io_align,
            tried: f
                .tried
                .iter()
                .map(|t| UntornTrial {
                    size: t.size,
                    direct: t.direct,
                    ok: t.ok,
                    errno: t.error.as_ref().and_then(|r| r.errno),
                    error: t.error.as_ref().map(super::common::reason),
                })
                .collect(),
            json: json_of(&f),
            facts: f,
        }
    }
}

report! {
    /// Whether a page write of one size through one I/O path is untorn
    /// here, and why (`fspace.untorn_answer`).
    UntornAnswer + json {
        /// The page size asked about.
        page_size: u64,
        /// `"direct"` or `"buffered"`.
        io: String,
        /// True when such a write that asks for it (`RWF_ATOMIC`) is
        /// untorn.
        untorn: bool,
        /// The path that makes it untorn (`"hardware"`, `"software"`,
        /// `"unknown"`); `None` when it is not.
        path: Option<String>,
        /// When it is not: the limit or rule that fails (`"buffered"`,
        /// `"not-supported"`, `"not-power-of-two"`, `"below-minimum"`,
        /// `"above-maximum"`, `"misaligned"`, `"refused-by-kernel"`).
        limit: Option<String>,
        /// Whether a trial write of this size and path on a scratch file
        /// was taken by the kernel; `None` when none was made (an existing
        /// file's facts).
        confirmed: Option<bool>,
        /// The answer in words: the rule and the figures behind it.
        reason: String,
    }
}

impl UntornAnswer {
    pub(crate) fn from(a: &fspace::untorn::Answer) -> Self {
        UntornAnswer {
            page_size: a.page_size,
            io: a.io.name().into(),
            untorn: a.untorn,
            path: a.path.map(|p| p.name().into()),
            limit: a.limit.map(|l| l.name().to_string()),
            confirmed: a.confirmed,
            reason: a.reason.clone(),
            json: json_of(a),
        }
    }
}

report! {
    /// One unit that fails the layout check.
    BadUnit {
        /// The unit's file offset.
        offset: u64,
        /// What is wrong: `"hole"`, `"unwritten"`, `"split"`,
        /// `"misaligned"`, `"shared"` or `"other"`.
        fault: String,
        /// The unit's physical start, where it has one.
        physical: Option<u64>,
    }
}

report! {
    /// Whether a range of a file is laid out for the hardware path of
    /// untorn writes, unit by unit (`fspace.check_untorn_layout`).
    UntornLayout + json {
        /// The unit checked (bytes).
        unit: u64,
        /// Start of the range checked: the range asked for, rounded
        /// inwards to whole units.
        start: u64,
        /// End of the range checked (exclusive).
        end: u64,
        /// Units checked.
        units: u64,
        /// Units in one written extent with an aligned physical start.
        ok: u64,
        /// Failing units per fault (`"unwritten"`: 3, ...).
        faults: BTreeMap<String, u64>,
        /// The first failing units (at most 16).
        first_bad: Vec<BadUnit>,
        /// Every unit checked passes, and there was at least one.
        passes: bool,
        /// The result in words.
        words: String,
    }
}

impl UntornLayout {
    pub(crate) fn from(c: &fspace::untorn::LayoutCheck) -> Self {
        UntornLayout {
            unit: c.unit,
            start: c.start,
            end: c.end,
            units: c.units,
            ok: c.ok,
            faults: c
                .faults
                .iter()
                .map(|(f, n)| (f.name().to_string(), *n))
                .collect(),
            first_bad: c
                .first_bad
                .iter()
                .map(|b| BadUnit {
                    offset: b.offset,
                    fault: b.fault.name().into(),
                    physical: b.physical,
                })
                .collect(),
            passes: c.passes(),
            words: c.words(),
            json: json_of(c),
        }
    }
}

report! {
    /// What a growth with `untorn_unit` did beyond the growth itself
    /// (`GrowReport.untorn`).
    UntornReady {
        /// The unit asked for (bytes).
        unit: u32,
        /// The grown file's untorn-write state (`"supported"`, `"zero"`,
        /// `"not-reported"`, `"unknown"`): whether the space can take
        /// untorn writes at all.
        state: String,
        /// Ranges cut out of the new allocation to put its units at
        /// aligned device addresses (XFS; 0 elsewhere).
        collapses: u32,
        /// The file's extent-size hint afterwards (bytes; 0: none), where
        /// the filesystem has hints (XFS).
        extent_size_hint: Option<u32>,
        /// Why the hint is not the unit when it should be.
        hint_note: Option<super::common::Note>,
        /// The layout of the whole file, unit by unit; `None` when it
        /// could not be read (`layout_error`).
        layout: Option<UntornLayout>,
        /// Why the layout could not be read (no FIEMAP: tmpfs, FUSE).
        layout_error: Option<super::common::Reason>,
    }
}

impl UntornReady {
    pub(crate) fn from(r: &fspace::untorn::Ready) -> Self {
        let (layout, layout_error) = match &r.layout {
            Ok(c) => (Some(UntornLayout::from(c)), None),
            Err(why) => (None, Some(super::common::reason(why))),
        };
        UntornReady {
            unit: r.unit,
            state: r.limits.state().name().into(),
            collapses: r.collapses,
            extent_size_hint: r.extent_size_hint,
            hint_note: r.hint_note.as_ref().map(super::common::note),
            layout,
            layout_error,
        }
    }
}
