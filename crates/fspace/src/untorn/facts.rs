//! What the kernel, the filesystem and the devices say about untorn writes
//! on one file, or on a filesystem (measured on a scratch file).

use crate::durable::parent_dir;
use crate::error::{Error, Result};
use crate::fs_info::scratch::scratch;
use crate::fs_info::{self, BlockDevice, FsInfo, FsKind};
use crate::reason::Reason;
use crate::sys::{self, Errno, StatxAtomic};
use crate::units::format_human;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The untorn-write limits `statx(STATX_WRITE_ATOMIC)` gives for a file.
/// The first three cases are distinct facts: "not reported" says nothing
/// about the device, "zero" says the filesystem looked and found no way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Limits {
    /// `statx` itself failed, so nothing is known.
    Unknown {
        /// Why: the errno `statx` failed with, its kind, in words.
        reason: Reason,
    },
    /// `STATX_WRITE_ATOMIC` absent from `stx_mask`: the filesystem does not
    /// report untorn-write limits (btrfs, tmpfs, FUSE, NFS; every
    /// filesystem on kernels before 6.11). `RWF_ATOMIC` fails there.
    NotReported,
    /// Reported, with no unit (`stx_atomic_write_unit_max` 0, the
    /// attribute clear): the filesystem supports the call but cannot make
    /// this file's writes untorn (ext4 on a device without atomic writes).
    Zero,
    /// Reported with limits: a write of a power-of-two size between
    /// `unit_min` and `unit_max`, at an offset aligned to that size, is
    /// untorn when it asks with `RWF_ATOMIC` through `O_DIRECT`.
    Supported {
        /// `stx_atomic_write_unit_min`.
        unit_min: u32,
        /// `stx_atomic_write_unit_max`.
        unit_max: u32,
        /// `stx_atomic_write_unit_max_opt`: sizes up to it take the fast
        /// (hardware) path on XFS; 0 when not reported.
        unit_max_opt: u32,
        /// `stx_atomic_write_segments_max`: iovecs one untorn write may
        /// carry.
        segments_max: u32,
    },
}

impl Limits {
    pub(crate) fn from_statx(r: std::result::Result<StatxAtomic, Errno>) -> Limits {
        match r {
            Err(e) => Limits::Unknown {
                reason: Reason::errno(
                    e.raw_os_error(),
                    format!(
                        "statx failed: {}",
                        std::io::Error::from_raw_os_error(e.raw_os_error())
                    ),
                ),
            },
            Ok(s) if !s.reported => Limits::NotReported,
            Ok(s) if !s.attribute || s.unit_max == 0 => Limits::Zero,
            Ok(s) => Limits::Supported {
                unit_min: s.unit_min,
                unit_max: s.unit_max,
                unit_max_opt: s.unit_max_opt,
                segments_max: s.segments_max,
            },
        }
    }

    /// The limits of the open file `fd`.
    pub(crate) fn from_statx_of(fd: BorrowedFd<'_>) -> Limits {
        Limits::from_statx(sys::statx_atomic(fd))
    }

    /// Which of the four cases this is ([`State::name`] is its name in
    /// JSON and in `fspace info`).
    pub fn state(&self) -> State {
        match self {
            Limits::Unknown { .. } => State::Unknown,
            Limits::NotReported => State::NotReported,
            Limits::Zero => State::Zero,
            Limits::Supported { .. } => State::Supported,
        }
    }

    /// Whether untorn writes of some size are possible.
    pub fn supported(&self) -> bool {
        matches!(self, Limits::Supported { .. })
    }

    /// One line for people.
    pub fn words(&self) -> String {
        match self {
            Limits::Unknown { reason } => format!("unknown ({})", reason.text),
            Limits::NotReported => {
                "not reported (statx has no STATX_WRITE_ATOMIC here): no untorn writes".into()
            }
            Limits::Zero => "reported as 0 (statx: no unit): no untorn writes".into(),
            Limits::Supported {
                unit_min,
                unit_max,
                unit_max_opt,
                segments_max,
            } => format!(
                "supported: unit {} to {}{}, {} segment{}",
                format_human(u64::from(*unit_min)),
                format_human(u64::from(*unit_max)),
                if *unit_max_opt == 0 {
                    String::new()
                } else {
                    format!(
                        " (optimised up to {})",
                        format_human(u64::from(*unit_max_opt))
                    )
                },
                segments_max,
                if *segments_max == 1 { "" } else { "s" }
            ),
        }
    }
}

/// The case of [`Limits`], without its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum State {
    /// [`Limits::Unknown`].
    Unknown,
    /// [`Limits::NotReported`].
    NotReported,
    /// [`Limits::Zero`].
    Zero,
    /// [`Limits::Supported`].
    Supported,
}

impl State {
    /// `unknown`, `not-reported`, `zero`, `supported`.
    pub fn name(self) -> &'static str {
        match self {
            State::Unknown => "unknown",
            State::NotReported => "not-reported",
            State::Zero => "zero",
            State::Supported => "supported",
        }
    }
}

/// How an untorn write of a given size is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritePath {
    /// The device writes it atomically in one command.
    Hardware,
    /// The filesystem writes it out of place and switches the mapping in
    /// one transaction (XFS's copy-on-write path).
    Software,
    /// The filesystem reports support; fspace does not know its path.
    Unknown,
}

impl WritePath {
    /// The name used in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            WritePath::Hardware => "hardware",
            WritePath::Software => "software",
            WritePath::Unknown => "unknown",
        }
    }
}

/// Where the untorn-write support of a file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Source {
    /// None: untorn writes are not available.
    None,
    /// The device only (ext4, a block device, XFS up to the device's unit).
    Device,
    /// The filesystem's software path only (XFS on a device without atomic
    /// writes).
    Filesystem,
    /// The device up to [`UntornFacts::hardware_max`], the filesystem's
    /// software path above it (XFS).
    DeviceAndFilesystem,
    /// Reported by a filesystem whose path fspace does not know.
    Unknown,
}

impl Source {
    /// The name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            Source::None => "none",
            Source::Device => "device",
            Source::Filesystem => "filesystem",
            Source::DeviceAndFilesystem => "device-and-filesystem",
            Source::Unknown => "unknown",
        }
    }
}

/// The untorn-write facts of one block device under the filesystem
/// (`queue/atomic_write_*` in sysfs; `None` where the file is missing,
/// before Linux 6.11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DeviceAtomic {
    /// The kernel's name (`loop0`, `nvme0n1p2`).
    pub name: String,
    /// `atomic_write_unit_min_bytes`.
    pub unit_min_bytes: Option<u64>,
    /// `atomic_write_unit_max_bytes`: 0 when the device has none.
    pub unit_max_bytes: Option<u64>,
    /// `atomic_write_max_bytes`.
    pub max_bytes: Option<u64>,
    /// `atomic_write_boundary_bytes`.
    pub boundary_bytes: Option<u64>,
}

impl DeviceAtomic {
    fn of(d: &BlockDevice) -> DeviceAtomic {
        DeviceAtomic {
            name: d.name.clone(),
            unit_min_bytes: d.atomic_write_unit_min_bytes,
            unit_max_bytes: d.atomic_write_unit_max_bytes,
            max_bytes: d.atomic_write_max_bytes,
            boundary_bytes: d.atomic_write_boundary_bytes,
        }
    }
}

/// The geometry that decides untorn writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Geometry {
    /// `stx_blksize`: the filesystem block (ext4 untorn writes are one
    /// block, or one bigalloc cluster).
    pub block_size: u32,
    /// The allocation unit (the bigalloc cluster on ext4), when known.
    pub allocation_unit: Option<u64>,
    /// Whether reflink (`FICLONE`) works here, which XFS's software path
    /// needs; `None` where not measured.
    pub reflink: Option<bool>,
    /// The file's extent-size hint in bytes (0: none), where the filesystem
    /// has them (`FS_IOC_FSGETXATTR`; XFS).
    pub extent_size_hint: Option<u32>,
    /// The offset alignment `O_DIRECT` needs (`STATX_DIOALIGN`), when
    /// reported; 0 means `O_DIRECT` is not supported on the file.
    pub direct_io_align: Option<u32>,
}

/// One `RWF_ATOMIC` write tried on a scratch file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Trial {
    /// Bytes written.
    pub size: u32,
    /// Through `O_DIRECT` (else buffered).
    pub direct: bool,
    /// Whether the kernel took it.
    pub ok: bool,
    /// Why it was refused: the errno, or a short write without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::reason::Reason>,
}

/// What fspace knows about untorn writes on a file or a filesystem.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct UntornFacts {
    /// The file asked about, or the directory whose filesystem was
    /// measured on a scratch file.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// Whether the facts are of a scratch file made for the purpose (the
    /// filesystem's), not of an existing file.
    pub scratch: bool,
    /// The filesystem, as [`FsInfo::display_name`].
    pub filesystem: String,
    /// What `statx` reports.
    pub limits: Limits,
    /// Where the support comes from.
    pub source: Source,
    /// The largest size written by the hardware path (0: none).
    pub hardware_max: u32,
    /// The devices the filesystem is mounted on, or why there are none.
    #[serde(serialize_with = "ser_devices")]
    pub devices: std::result::Result<Vec<DeviceAtomic>, crate::reason::Reason>,
    /// The geometry that decides it.
    pub geometry: Geometry,
    /// `RWF_ATOMIC` writes tried on the scratch file (empty for an
    /// existing file, which fspace does not write).
    pub tried: Vec<Trial>,
    #[serde(skip)]
    pub(crate) kind: FsKind,
}

fn ser_devices<S: serde::Serializer>(
    v: &std::result::Result<Vec<DeviceAtomic>, crate::reason::Reason>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    fs_info::ser_result(v, s, "none")
}

impl UntornFacts {
    /// How an untorn write of `size` bytes goes here, or `None` when the
    /// limits do not take it (see [`check`](super::check) for which).
    pub fn path_for(&self, size: u64) -> Option<WritePath> {
        let Limits::Supported {
            unit_min, unit_max, ..
        } = self.limits
        else {
            return None;
        };
        if !size.is_power_of_two() || size < u64::from(unit_min) || size > u64::from(unit_max) {
            return None;
        }
        Some(match self.kind {
            _ if self.source == Source::Unknown => WritePath::Unknown,
            FsKind::Xfs if size <= u64::from(self.hardware_max) => WritePath::Hardware,
            FsKind::Xfs => WritePath::Software,
            FsKind::Ext4 => WritePath::Hardware,
            _ if self.hardware_max > 0 => WritePath::Hardware,
            _ => WritePath::Unknown,
        })
    }

    /// The trial of `size` bytes through `O_DIRECT` (`direct`) or the page
    /// cache, if one was made.
    pub fn trial(&self, size: u32, direct: bool) -> Option<&Trial> {
        self.tried
            .iter()
            .find(|t| t.size == size && t.direct == direct)
    }
}

/// Sizes tried on a scratch file: the page sizes databases use, and the
/// block.
pub const TRIAL_SIZES: [u32; 4] = [4096, 8192, 16384, 65536];
/// Sizes tried through the page cache.
const BUFFERED_TRIAL_SIZES: [u32; 2] = [8192, 16384];

/// The untorn-write facts of the existing file at `path` (nothing is
/// written). The devices and the reflink capability come from the
/// filesystem's description ([`fs_info()`](crate::fs_info())).
pub fn facts(path: impl AsRef<Path>) -> Result<UntornFacts> {
    let path = path.as_ref();
    let fd = sys::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY, 0)
        .map_err(|e| Error::io("open", path, None, e))?;
    let st = sys::fstat(&fd).map_err(|e| Error::io("fstat", path, None, e))?;
    if !st.is_regular() {
        // Filesystems fill the limits only for regular files: a
        // directory's "not reported" would read as the filesystem's.
        return Err(Error::refused(
            "untorn facts",
            path,
            if st.is_dir() {
                Errno::ISDIR.raw_os_error()
            } else {
                Errno::INVAL.raw_os_error()
            },
            format!(
                "is a {}: untorn-write limits belong to regular files (facts_of_fs measures a directory's filesystem)",
                st.type_name()
            ),
        ));
    }
    let info = fs_info::fs_info(path)?;
    Ok(describe(fd.as_fd(), path, &info, false, Vec::new()))
}

/// The untorn-write facts of the filesystem holding directory `dir`,
/// measured on a scratch file made there (removed before returning):
/// `statx`, then an `RWF_ATOMIC` write of 4, 8, 16 and 64 KiB through
/// `O_DIRECT` into written space, and of 8 and 16 KiB through the page
/// cache, each recorded with the kernel's answer.
pub fn facts_of_fs(dir: impl AsRef<Path>) -> Result<UntornFacts> {
    let dir = dir.as_ref();
    let info = fs_info::fs_info(dir)?;
    facts_of_fs_with(dir, &info)
}

/// [`facts_of_fs`] with the filesystem already described.
pub(crate) fn facts_of_fs_with(dir: &Path, info: &FsInfo) -> Result<UntornFacts> {
    let dir = if sys::stat(dir).is_ok_and(|s| s.is_dir()) {
        dir.to_path_buf()
    } else {
        parent_dir(dir)
    };
    crate::stale::remove_stale(&dir, fs_info::SCRATCH_PREFIX);
    let s = scratch(&dir)?;
    let largest = TRIAL_SIZES.iter().copied().max().unwrap_or(4096) as usize;
    // Written space first: an untorn write into a hole or unwritten
    // extent costs an allocation or conversion the trial is not about.
    let zeros = super::buf::AlignedBuf::new(largest);
    sys::pwrite_all(&s.fd, zeros.as_slice(), 0)
        .map_err(|(e, at)| Error::io("pwritev(scratch)", &s.path, Some(at..largest as u64), e))?;
    sys::fdatasync(&s.fd).map_err(|e| Error::io("fdatasync", &s.path, None, e))?;
    let mut tried = Vec::new();
    for size in BUFFERED_TRIAL_SIZES {
        tried.push(trial(&s.fd, size, false, zeros.as_slice()));
    }
    match sys::set_status_flags(&s.fd, OFlags::RDWR | OFlags::DIRECT) {
        Ok(()) => {
            for size in TRIAL_SIZES {
                tried.push(trial(&s.fd, size, true, zeros.as_slice()));
            }
        }
        Err(e) => {
            for size in TRIAL_SIZES {
                tried.push(refused(size, true, e, "O_DIRECT refused: "));
            }
        }
    }
    let mut f = describe(s.fd.as_fd(), &dir, info, true, tried);
    f.path = dir;
    Ok(f)
}

fn trial(fd: &rustix::fd::OwnedFd, size: u32, direct: bool, buf: &[u8]) -> Trial {
    match sys::pwrite_atomic(fd, &buf[..size as usize], 0, false) {
        Ok(n) if n == size as usize => Trial {
            size,
            direct,
            ok: true,
            error: None,
        },
        Ok(n) => Trial {
            size,
            direct,
            ok: false,
            // The kernel did not write it whole: not untorn here, not a
            // device failure.
            error: Some(crate::reason::Reason::new(
                crate::errno::ErrorKind::Unsupported,
                format!("short untorn write: {n} of {size} bytes"),
            )),
        },
        Err(e) => refused(size, direct, e, ""),
    }
}

fn refused(size: u32, direct: bool, e: Errno, prefix: &str) -> Trial {
    Trial {
        size,
        direct,
        ok: false,
        error: Some(crate::reason::Reason::errno(
            e.raw_os_error(),
            format!(
                "{prefix}{}",
                std::io::Error::from_raw_os_error(e.raw_os_error())
            ),
        )),
    }
}

fn describe(
    fd: BorrowedFd<'_>,
    path: &Path,
    info: &FsInfo,
    scratch: bool,
    tried: Vec<Trial>,
) -> UntornFacts {
    let st = sys::statx_atomic(fd);
    let block_size = st.map_or(0, |s| s.blksize);
    let limits = Limits::from_statx(st);
    let devices = match &info.block_devices {
        Ok(d) => Ok(d.iter().map(DeviceAtomic::of).collect()),
        Err(_) => fs_info::block_devices(path).map(|d| d.iter().map(DeviceAtomic::of).collect()),
    };
    let (hardware_max, source) = decide_source(info.kind, &limits, block_size, &devices);
    UntornFacts {
        path: path.to_path_buf(),
        scratch,
        filesystem: info.display_name(),
        limits,
        source,
        hardware_max,
        devices,
        geometry: Geometry {
            block_size,
            allocation_unit: info.allocation_unit.map(|u| u.bytes),
            reflink: info.caps().map(|c| c.ficlone.supported),
            extent_size_hint: sys::extent_size_hint(fd).ok().map(|(hint, _)| hint),
            direct_io_align: st.ok().and_then(|s| s.dio_offset_align),
        },
        tried,
        kind: info.kind,
    }
}

/// The largest hardware-path size, and where the support comes from.
///
/// XFS passes a write to the device when it fits the device's unit
/// (`xfs_inode_can_hw_atomic_write`: the device takes the block size) and
/// reports that limit as `unit_max_opt` when it exceeds one block; above
/// it, up to `unit_max`, it writes out of place. ext4 and raw block
/// devices have only the device's path.
fn decide_source(
    kind: FsKind,
    limits: &Limits,
    block_size: u32,
    devices: &std::result::Result<Vec<DeviceAtomic>, crate::reason::Reason>,
) -> (u32, Source) {
    let Limits::Supported {
        unit_max,
        unit_max_opt,
        ..
    } = *limits
    else {
        return (0, Source::None);
    };
    // The smallest unit the devices under the mount take: a write must
    // fit all of them.
    let device = devices.as_ref().ok().and_then(|d| {
        d.iter()
            .map(|x| {
                let min = x.unit_min_bytes.unwrap_or(0);
                let max = x.unit_max_bytes.unwrap_or(0);
                (min, max)
            })
            .reduce(|a, b| (a.0.max(b.0), a.1.min(b.1)))
    });
    match kind {
        // Without the devices' figures a unit_max_opt of 0 may be one
        // block by the device or everything by the software path.
        FsKind::Xfs if unit_max_opt == 0 && device.is_none() => (0, Source::Unknown),
        FsKind::Xfs => {
            let hw = if unit_max_opt > 0 {
                unit_max_opt
            } else {
                match device {
                    Some((min, max))
                        if max > 0
                            && min <= u64::from(block_size)
                            && max >= u64::from(block_size) =>
                    {
                        block_size
                    }
                    _ => 0,
                }
            };
            let source = if hw == 0 {
                Source::Filesystem
            } else if hw >= unit_max {
                Source::Device
            } else {
                Source::DeviceAndFilesystem
            };
            (hw, source)
        }
        FsKind::Ext4 => (unit_max, Source::Device),
        _ => (0, Source::Unknown),
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// The matrix's XFS: untorn 4 KiB to 1 MiB by the software path.
    pub(crate) fn xfs_software() -> UntornFacts {
        facts_with(
            FsKind::Xfs,
            Limits::Supported {
                unit_min: 4096,
                unit_max: 1 << 20,
                unit_max_opt: 0,
                segments_max: 1,
            },
        )
    }

    /// Facts of an imaginary file with these limits, on a device without
    /// atomic writes.
    pub(crate) fn facts_with(kind: FsKind, limits: Limits) -> UntornFacts {
        let devices = Ok(vec![DeviceAtomic {
            name: "loop0".into(),
            unit_min_bytes: Some(0),
            unit_max_bytes: Some(0),
            max_bytes: Some(0),
            boundary_bytes: Some(0),
        }]);
        let (hardware_max, source) = decide_source(kind, &limits, 4096, &devices);
        UntornFacts {
            path: "/x".into(),
            scratch: false,
            filesystem: kind.name(),
            limits,
            source,
            hardware_max,
            devices,
            geometry: Geometry {
                block_size: 4096,
                allocation_unit: Some(4096),
                reflink: Some(true),
                extent_size_hint: None,
                direct_io_align: Some(512),
            },
            tried: vec![],
            kind,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statx(reported: bool, attribute: bool, min: u32, max: u32, opt: u32) -> StatxAtomic {
        StatxAtomic {
            reported,
            attribute,
            unit_min: min,
            unit_max: max,
            unit_max_opt: opt,
            segments_max: 1,
            blksize: 4096,
            dio_mem_align: Some(512),
            dio_offset_align: Some(512),
        }
    }

    #[test]
    fn three_states_stay_apart() {
        assert_eq!(
            Limits::from_statx(Ok(statx(false, false, 0, 0, 0))),
            Limits::NotReported
        );
        assert_eq!(
            Limits::from_statx(Ok(statx(true, false, 0, 0, 0))),
            Limits::Zero
        );
        assert!(Limits::from_statx(Ok(statx(true, true, 4096, 1 << 20, 0))).supported());
        let u = Limits::from_statx(Err(Errno::NOSYS));
        assert_eq!(u.state(), State::Unknown);
    }

    #[test]
    fn xfs_paths_follow_max_opt_and_the_device() {
        let sup = Limits::from_statx(Ok(statx(true, true, 4096, 1 << 20, 0)));
        let none: std::result::Result<Vec<DeviceAtomic>, crate::reason::Reason> =
            Ok(vec![DeviceAtomic {
                name: "loop0".into(),
                unit_min_bytes: Some(0),
                unit_max_bytes: Some(0),
                max_bytes: Some(0),
                boundary_bytes: Some(0),
            }]);
        assert_eq!(
            decide_source(FsKind::Xfs, &sup, 4096, &none),
            (0, Source::Filesystem)
        );
        let opt = Limits::from_statx(Ok(statx(true, true, 4096, 1 << 20, 65536)));
        assert_eq!(
            decide_source(FsKind::Xfs, &opt, 4096, &none),
            (65536, Source::DeviceAndFilesystem)
        );
        let one_block: std::result::Result<Vec<DeviceAtomic>, crate::reason::Reason> =
            Ok(vec![DeviceAtomic {
                name: "nvme0n1".into(),
                unit_min_bytes: Some(512),
                unit_max_bytes: Some(4096),
                max_bytes: Some(4096),
                boundary_bytes: Some(0),
            }]);
        assert_eq!(
            decide_source(FsKind::Xfs, &sup, 4096, &one_block),
            (4096, Source::DeviceAndFilesystem)
        );
        assert_eq!(
            decide_source(FsKind::Ext4, &sup, 4096, &none),
            (1 << 20, Source::Device)
        );
        assert_eq!(
            decide_source(FsKind::Btrfs, &Limits::NotReported, 4096, &none),
            (0, Source::None)
        );
        // Devices unknown: one block by the device, or all by software.
        let unknown = Err(crate::reason::Reason::new(
            crate::errno::ErrorKind::NotRegular,
            "no block device found",
        ));
        assert_eq!(
            decide_source(FsKind::Xfs, &sup, 4096, &unknown),
            (0, Source::Unknown)
        );
    }
}
