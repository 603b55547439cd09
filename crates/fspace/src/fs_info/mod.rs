//! What filesystem a path is on, and what it can do — measured, not guessed.
//!
//! The kind comes from the `statfs` magic (refined by `/proc/self/mountinfo`
//! for the FUSE subtype and the ext2/3/4 mount type). The capabilities come
//! from trying each operation on a scratch file in the directory itself,
//! because the kind alone does not tell: ext4 without the `extents` feature
//! refuses `fallocate`, FALLOC_FL_WRITE_ZEROES depends on the device, and
//! SEEK_HOLE on FUSE depends on the daemon. Capabilities are cached per
//! device (`st_dev`).

pub mod alloc_unit;
pub mod device;
pub mod flushes;
mod kind;
mod mountinfo;
pub(crate) mod scratch;

pub use alloc_unit::{allocation_unit, AllocUnit, AllocUnitSource};
pub use device::{block_devices, BlockDevice};
pub use flushes::{
    sum_flushes, DeviceFlushCount, FlushCounter, FlushSnapshot, FlushVerdict, Flushes, WriteCache,
};
pub use kind::FsKind;
pub use scratch::SCRATCH_PREFIX;

use scratch::{scratch, Scratch};

use crate::durable::parent_dir;
use crate::errno::{unsupported, Call};
use crate::error::{Error, Result};
use crate::note::{Note, NoteKind};
use crate::sys::{self, Errno, FallocMode};
use mountinfo::find_mount;
use rustix::fd::OwnedFd;
use rustix::fs::OFlags;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// FUSE subtypes known to sit on a network protocol.
const NETWORK_FUSE_SUBTYPES: &[&str] = &[
    "sshfs",
    "s3fs",
    "gcsfuse",
    "rclone",
    "glusterfs",
    "davfs",
    "curlftpfs",
    "cephfs",
    "juicefs",
    "goofys",
];

/// Whether one operation works here, as measured on a scratch file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Capability {
    /// True if and only if the operation succeeded and behaved as specified.
    pub supported: bool,
    /// The errno it failed with, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
    /// The failure or caveat in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Capability {
    fn yes() -> Self {
        Capability {
            supported: true,
            errno: None,
            detail: None,
        }
    }

    fn no(detail: impl Into<String>) -> Self {
        Capability {
            supported: false,
            errno: None,
            detail: Some(detail.into()),
        }
    }

    fn from_result<T>(r: std::result::Result<T, Errno>) -> Self {
        match r {
            Ok(_) => Capability::yes(),
            Err(e) => Capability {
                supported: false,
                errno: Some(e.raw_os_error()),
                detail: Some(std::io::Error::from_raw_os_error(e.raw_os_error()).to_string()),
            },
        }
    }
}

/// Capabilities measured on a scratch file (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Capabilities {
    /// `fallocate` mode 0.
    pub fallocate: Capability,
    /// `FALLOC_FL_KEEP_SIZE`.
    pub keep_size: Capability,
    /// `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`.
    pub punch_hole: Capability,
    /// `FALLOC_FL_ZERO_RANGE`.
    pub zero_range: Capability,
    /// `FALLOC_FL_WRITE_ZEROES` (0x80).
    pub write_zeroes: Capability,
    /// `SEEK_DATA`/`SEEK_HOLE` that report a hole before EOF.
    pub seek_hole: Capability,
    /// `FS_IOC_FIEMAP`.
    pub fiemap: Capability,
    /// `FICLONE` (reflink).
    pub ficlone: Capability,
}

impl Capabilities {
    /// Returns every capability with the name the CLI shows it under, in
    /// a fixed order.
    pub fn named(&self) -> [(&'static str, &Capability); 8] {
        [
            ("fallocate", &self.fallocate),
            ("keep-size", &self.keep_size),
            ("punch-hole", &self.punch_hole),
            ("zero-range", &self.zero_range),
            ("write-zeroes", &self.write_zeroes),
            ("seek-hole", &self.seek_hole),
            ("fiemap", &self.fiemap),
            ("ficlone", &self.ficlone),
        ]
    }
}

/// Everything fspace knows about the filesystem holding a path.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct FsInfo {
    /// The path asked about.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// The family from the statfs magic.
    pub kind: FsKind,
    /// The statfs magic.
    #[serde(serialize_with = "ser_hex")]
    pub magic: u64,
    /// The mount's type from mountinfo (`ext4`, `ext3`, `fuse.sshfs`), when found.
    pub fs_type: Option<String>,
    /// The FUSE subtype (`sshfs`), when visible.
    pub fuse_subtype: Option<String>,
    /// The mount point, when found in mountinfo.
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub mount_point: Option<PathBuf>,
    /// The mounted device or source, when found.
    pub source: Option<String>,
    /// `st_dev` of the path.
    pub device: u64,
    /// `f_fsid` from `statvfs` (0 where the filesystem reports none).
    #[serde(serialize_with = "ser_hex")]
    pub fsid: u64,
    /// The filesystem's UUID (`FS_IOC_GETFSUUID`, Linux 6.9+), in hex,
    /// where it has one and the path could be opened for reading.
    pub uuid: Option<String>,
    /// The mount's options and the filesystem's (super block) options from
    /// mountinfo, as `MOUNT_OPTS | SUPER_OPTS`.
    pub mount_options: Option<String>,
    /// `f_bsize`: preferred I/O size (unreliable on network filesystems).
    pub block_size: u64,
    /// Total bytes.
    pub total_bytes: u64,
    /// Bytes available to unprivileged users (`f_bavail`).
    pub free_bytes: u64,
    /// Bytes available to root (`f_bfree`; ext4 keeps some for root), which
    /// is what a zero-fill run as root may use.
    pub free_bytes_root: u64,
    /// Whether the mount is read-only.
    pub read_only: bool,
    /// Whether overwrites allocate new blocks (btrfs, zfs, bcachefs).
    pub copy_on_write: bool,
    /// Whether the data goes over a network protocol.
    pub network: bool,
    /// Whether `st_blocks` measures allocation here
    /// ([`FsKind::st_blocks_measures_allocation`]); where it does not,
    /// allocation figures are reported as unknown.
    pub st_blocks_measures_allocation: bool,
    /// The allocation unit (cluster on ext4 `bigalloc`, block elsewhere),
    /// when known (`alloc_unit`).
    pub allocation_unit: Option<AllocUnit>,
    /// Why the allocation unit is unknown, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation_unit_note: Option<crate::note::Note>,
    /// The block devices under the filesystem (`block_devices`), or why
    /// there are none; looked up only by [`FsInfo::with_block_devices`]
    /// (`fspace info` and the probe): a walk of sysfs, and a `stat` of a
    /// loop device's backing file, have no place in every growth.
    #[serde(serialize_with = "ser_devices")]
    pub block_devices: std::result::Result<Vec<BlockDevice>, crate::reason::Reason>,
    /// Measured capabilities, or why they could not be measured.
    #[serde(serialize_with = "ser_caps")]
    pub capabilities: std::result::Result<Arc<Capabilities>, crate::reason::Reason>,
}

fn ser_hex<S: serde::Serializer>(v: &u64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&format!("0x{v:x}"))
}

/// Serializes `Ok(v)` as `v` and `Err(why)` as `{key: why}`.
pub(crate) fn ser_result<T: Serialize, E: Serialize, S: serde::Serializer>(
    v: &std::result::Result<T, E>,
    s: S,
    key: &'static str,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    match v {
        Ok(x) => x.serialize(s),
        Err(why) => {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry(key, why)?;
            m.end()
        }
    }
}

fn ser_devices<S: serde::Serializer>(
    v: &std::result::Result<Vec<BlockDevice>, crate::reason::Reason>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    ser_result(v, s, "none")
}

fn ser_caps<S: serde::Serializer>(
    v: &std::result::Result<Arc<Capabilities>, crate::reason::Reason>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    ser_result(&v.as_ref().map(Arc::as_ref), s, "error")
}

impl FsInfo {
    /// Returns the kind's display name, preferring mountinfo's type
    /// (`fuse.sshfs`, `ext3`) over the magic's family name.
    pub fn display_name(&self) -> String {
        self.fs_type.clone().unwrap_or_else(|| self.kind.name())
    }

    /// Looks up the block devices under the filesystem
    /// ([`FsInfo::block_devices`]).
    pub fn with_block_devices(mut self) -> Self {
        self.block_devices = block_devices(&self.path);
        self
    }

    /// Returns the measured capabilities, if they could be measured.
    pub fn caps(&self) -> Option<&Capabilities> {
        self.capabilities.as_ref().ok().map(|c| c.as_ref())
    }
}

/// The capabilities measured per device, for the life of the process. A
/// `BTreeMap` rather than a `HashMap`: its nodes are referenced from their
/// start, so leak checkers (valgrind, run on the C API's programs) see the
/// cache as reachable rather than "possibly lost".
fn cache() -> &'static Mutex<BTreeMap<u64, Arc<Capabilities>>> {
    static CACHE: OnceLock<Mutex<BTreeMap<u64, Arc<Capabilities>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Describes the filesystem holding `path` (a file or a directory), probing
/// its capabilities with a scratch file in the directory the first time a
/// device is seen.
pub fn fs_info(path: impl AsRef<Path>) -> Result<FsInfo> {
    let path = path.as_ref();
    fs_info_impl(path, Probe::Cached)
}

/// Like [`fs_info`] but always measures the capabilities again.
pub fn fs_info_uncached(path: &Path) -> Result<FsInfo> {
    fs_info_impl(path, Probe::Fresh)
}

/// Describes the filesystem holding `path` without measuring capabilities
/// (no scratch files): kind, mount, sizes. [`FsInfo::capabilities`] holds
/// the cached measurement if this device was already probed, else an error
/// saying it was not measured.
pub fn identify(path: &Path) -> Result<FsInfo> {
    fs_info_impl(path, Probe::CachedOnly)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Probe {
    Cached,
    Fresh,
    CachedOnly,
}

fn fs_info_impl(path: &Path, probe: Probe) -> Result<FsInfo> {
    let fd = sys::open(path, OFlags::PATH, 0).map_err(|e| Error::io("open", path, None, e))?;
    let st = sys::fstat(&fd).map_err(|e| Error::io("fstat", path, None, e))?;
    let sf = sys::fstatfs(&fd).map_err(|e| Error::io("fstatfs", path, None, e))?;
    let kind = FsKind::from_magic(sf.magic);
    let fsid = sys::fsid(&fd).unwrap_or(0);
    let uuid = fs_uuid(path, &st);
    let mount = find_mount(path, st.dev);
    let fs_type = mount.as_ref().map(|m| m.fs_type.clone());
    let fuse_subtype = fs_type
        .as_deref()
        .and_then(|t| {
            t.strip_prefix("fuse.")
                .or_else(|| t.strip_prefix("fuseblk."))
        })
        .map(str::to_string);
    let network = kind.is_network()
        || fuse_subtype
            .as_deref()
            .is_some_and(|s| NETWORK_FUSE_SUBTYPES.contains(&s));
    let read_only = sf.flags & 1 != 0 || mount.as_ref().is_some_and(|m| m.read_only);
    let dir = if st.is_dir() {
        path.to_path_buf()
    } else {
        parent_dir(path)
    };
    let (allocation_unit, allocation_unit_note) =
        unit_of(&fd, path, &dir, probe != Probe::CachedOnly && !read_only);
    let capabilities = if read_only {
        Err(crate::reason::Reason::new(
            crate::errno::ErrorKind::ReadOnly,
            "read-only filesystem: capabilities cannot be measured",
        ))
    } else {
        capabilities_of(&dir, st.dev, probe)
    };
    Ok(FsInfo {
        path: path.to_path_buf(),
        kind,
        magic: sf.magic,
        fs_type,
        fuse_subtype,
        mount_point: mount.as_ref().map(|m| m.mount_point.clone()),
        source: mount.as_ref().map(|m| m.source.clone()),
        device: st.dev,
        fsid,
        uuid,
        mount_options: mount.as_ref().map(|m| m.options.clone()),
        block_size: sf.block_size,
        total_bytes: sf.blocks.saturating_mul(sf.fragment_size),
        free_bytes: sf.blocks_available.saturating_mul(sf.fragment_size),
        free_bytes_root: sf.blocks_free.saturating_mul(sf.fragment_size),
        read_only,
        copy_on_write: kind.is_copy_on_write(),
        network,
        st_blocks_measures_allocation: kind.st_blocks_measures_allocation(),
        allocation_unit,
        allocation_unit_note,
        block_devices: Err(crate::reason::Reason::new(
            crate::errno::ErrorKind::NotMeasured,
            "not looked up",
        )),
        capabilities,
    })
}

/// The allocation unit for [`FsInfo`], or why it is unknown.
fn unit_of(
    fd: &OwnedFd,
    path: &Path,
    dir: &Path,
    measure: bool,
) -> (Option<AllocUnit>, Option<crate::note::Note>) {
    use rustix::fd::AsFd;
    match allocation_unit(fd.as_fd(), path, dir, measure) {
        Ok(Some(u)) => (Some(u), None),
        Ok(None)
            if !FsKind::from_magic(sys::fstatfs(fd).map_or(0, |f| f.magic))
                .st_blocks_measures_allocation() =>
        {
            (
                None,
                Some(Note::new(
                    NoteKind::NotMeasurable,
                    "st_blocks does not measure allocation on this filesystem",
                )),
            )
        }
        Ok(None) => (None, Some(Note::new(NoteKind::NotMeasured, "not measured"))),
        Err(e) => (None, Some(Note::new(NoteKind::ReadFailed, e.to_string()))),
    }
}

/// The filesystem's UUID in hex (`FS_IOC_GETFSUUID`), where it has one.
/// The ioctl needs a real descriptor: open the directory (the path's, or
/// its parent's for a file), never a device node or FIFO.
fn fs_uuid(path: &Path, st: &sys::Stat) -> Option<String> {
    let dir = if st.is_dir() {
        path.to_path_buf()
    } else if st.is_regular() {
        parent_dir(path)
    } else {
        return None;
    };
    sys::open(
        &dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        0,
    )
    .and_then(sys::fs_uuid)
    .ok()
    .filter(|u| u.iter().any(|b| *b != 0))
    .map(|u| u.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The capabilities of device `dev`, measured in `dir` (or from the
/// per-device cache, as `probe` allows); the reason when they are not
/// known.
fn capabilities_of(
    dir: &Path,
    dev: u64,
    probe: Probe,
) -> std::result::Result<Arc<Capabilities>, crate::reason::Reason> {
    let cached = if probe == Probe::Fresh {
        None
    } else {
        cache().lock().ok().and_then(|c| c.get(&dev).cloned())
    };
    match cached {
        Some(c) => Ok(c),
        None if probe == Probe::CachedOnly => Err(crate::reason::Reason::new(
            crate::errno::ErrorKind::NotMeasured,
            "not measured",
        )),
        None => match probe_capabilities(dir) {
            Ok(c) => {
                let c = Arc::new(c);
                if let Ok(mut m) = cache().lock() {
                    m.insert(dev, c.clone());
                }
                Ok(c)
            }
            Err(e) => Err(crate::reason::Reason::from(&e)),
        },
    }
}

/// Turns the result of one probe into a [`Capability`]: success, or an
/// errno that means "not supported here". Any other errno (ENOSPC, EIO,
/// EPERM...) says nothing about support, so the whole probe fails and
/// nothing is cached.
fn judge<T>(
    what: &'static str,
    path: &Path,
    r: std::result::Result<T, Errno>,
) -> Result<Capability> {
    match r {
        Ok(_) => Ok(Capability::yes()),
        Err(e) if unsupported(Call::CapabilityProbe, e) => {
            Ok(Capability::from_result::<()>(Err(e)))
        }
        Err(e) => Err(Error::io(what, path, None, e)),
    }
}

/// Unit of the probe's test ranges: large enough to span whole blocks on
/// every filesystem we know (64 KiB covers 4 KiB and 64 KiB pages/blocks).
const PROBE_UNIT: u64 = 64 << 10;

/// Measures every capability in [`Capabilities`] with scratch files in
/// `dir` (removed before returning; leftovers of killed probes on this host
/// are removed first). Fails, rather than guessing, when an operation fails
/// for a reason other than "not supported" (a full disk, an I/O error).
pub fn probe_capabilities(dir: &Path) -> Result<Capabilities> {
    crate::stale::remove_stale(dir, SCRATCH_PREFIX);
    let u = PROBE_UNIT;
    let a = scratch(dir)?;
    let p = &a.path;
    let mut fallocate = judge(
        "fallocate",
        p,
        sys::fallocate(&a.fd, FallocMode::Allocate, 0, u),
    )?;
    if fallocate.supported {
        // A successful fallocate that reserved nothing (ZFS before 2.2,
        // some FUSE servers) is no preallocation: say so.
        let got = sys::fstat(&a.fd).map(|st| st.blocks * 512).unwrap_or(u);
        if got < u {
            fallocate.detail = Some(format!(
                "succeeded, but st_blocks shows {got} of {u} bytes allocated afterwards: it may reserve nothing here"
            ));
        }
    }
    let keep_size = judge(
        "fallocate",
        p,
        sys::fallocate(&a.fd, FallocMode::KeepSize, u, u),
    )?;
    let data = vec![0xA5u8; u as usize];
    write_all(&a, &data, 0)?;
    let punch_hole = judge(
        "fallocate",
        p,
        sys::fallocate(&a.fd, FallocMode::PunchHole, 0, u / 2),
    )?;
    let zero_range = judge(
        "fallocate",
        p,
        sys::fallocate(&a.fd, FallocMode::ZeroRange, u / 2, u / 2),
    )?;
    let write_zeroes = judge(
        "fallocate",
        p,
        sys::fallocate(&a.fd, FallocMode::WriteZeroes, 2 * u, u),
    )?;

    // SEEK_HOLE: data in the first unit, then a hole up to 16 units.
    let b = scratch(dir)?;
    write_all(&b, &data, 0)?;
    sys::ftruncate(&b.fd, 16 * u).map_err(|e| Error::io("ftruncate", &b.path, None, e))?;
    let seek_hole = match sys::seek_hole(&b.fd, 0) {
        Ok(Some(h)) if h < 16 * u => match sys::seek_data(&b.fd, h) {
            Ok(None) => Capability::yes(),
            Ok(Some(d)) => Capability::no(format!("SEEK_DATA found data at {d} inside a hole")),
            Err(e) => judge("lseek", &b.path, Err::<(), _>(e))?,
        },
        Ok(_) => Capability::no("no hole reported before EOF (generic implementation)"),
        Err(e) => judge("lseek", &b.path, Err::<(), _>(e))?,
    };
    let fiemap = judge(
        "ioctl(FIEMAP)",
        &b.path,
        sys::fiemap(&b.fd, 0, 16 * u, false),
    )?;
    let c = scratch(dir)?;
    let ficlone = judge("ioctl(FICLONE)", &c.path, sys::ficlone(&c.fd, &b.fd))?;
    Ok(Capabilities {
        fallocate,
        keep_size,
        punch_hole,
        zero_range,
        write_zeroes,
        seek_hole,
        fiemap,
        ficlone,
    })
}

fn write_all(s: &Scratch, data: &[u8], offset: u64) -> Result<()> {
    sys::pwrite_all(&s.fd, data, offset).map_err(|(e, at)| {
        Error::io(
            "pwritev(scratch)",
            &s.path,
            Some(at..offset + data.len() as u64),
            e,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics() {
        assert_eq!(FsKind::from_magic(0xEF53), FsKind::Ext4);
        assert_eq!(FsKind::from_magic(0x9123683E), FsKind::Btrfs);
        assert_eq!(FsKind::from_magic(0x1234).name(), "unknown(0x1234)");
        assert!(FsKind::Btrfs.is_copy_on_write());
        assert!(!FsKind::Xfs.is_copy_on_write());
        assert!(FsKind::Nfs.is_network());
        assert!(FsKind::Ext4.st_blocks_measures_allocation());
        assert!(!FsKind::Fuse.st_blocks_measures_allocation());
        assert!(!FsKind::Nfs.st_blocks_measures_allocation());
    }

    #[test]
    fn mountinfo_unescape() {
        use mountinfo::unescape_mountinfo;
        assert_eq!(unescape_mountinfo("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape_mountinfo("plain"), "plain");
    }
}
