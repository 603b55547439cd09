//! The block devices under a filesystem, as sysfs describes them: the
//! device the filesystem is mounted on, then what that device sits on
//! (a partition's disk, a loop device's backing file's device, a
//! device-mapper or md device's slaves), each with its queue's facts:
//! write cache, FUA, rotational, discard and write-zeroes limits, block
//! sizes. These decide what a flush costs (a volatile write cache makes
//! every `fdatasync` a cache flush; FUA lets `O_DIRECT` + `O_DSYNC` skip it)
//! and whether `FALLOC_FL_WRITE_ZEROES` can unmap instead of writing.

use super::mountinfo::find_mount;
use crate::note::{Note, NoteKind};
use crate::reason::Reason;
use crate::sys;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Deepest chain of devices followed (a loop on a file on a loop ...).
const MAX_DEPTH: usize = 8;

/// One block device and the ones under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BlockDevice {
    /// The kernel's name (`loop0`, `vda`, `sda1`, `dm-0`).
    pub name: String,
    /// `MAJOR:MINOR`.
    pub dev: String,
    /// For a partition: the disk whose queue the facts below are read
    /// from.
    pub disk: Option<String>,
    /// `queue/write_cache`: `write back` (a volatile cache: flushes are
    /// sent) or `write through`.
    pub write_cache: Option<String>,
    /// `queue/fua`: writes can bypass the cache (Force Unit Access); else
    /// the kernel follows a durable write with a flush.
    pub fua: Option<bool>,
    /// `queue/rotational` (a driver's default; virtio disks say 1).
    pub rotational: Option<bool>,
    /// `queue/discard_max_bytes`: largest discard; 0 is no discard.
    pub discard_max_bytes: Option<u64>,
    /// `queue/discard_granularity`.
    pub discard_granularity: Option<u64>,
    /// `queue/write_zeroes_max_bytes`: largest write-zeroes command; 0 is
    /// none (zeroing then writes zero pages).
    pub write_zeroes_max_bytes: Option<u64>,
    /// `queue/write_zeroes_unmap_max_bytes` (Linux 6.17+): nonzero when the
    /// device zeroes by unmapping, what `FALLOC_FL_WRITE_ZEROES` needs.
    pub write_zeroes_unmap_max_bytes: Option<u64>,
    /// `queue/logical_block_size`.
    pub logical_block_size: Option<u64>,
    /// `queue/physical_block_size`.
    pub physical_block_size: Option<u64>,
    /// `queue/atomic_write_unit_min_bytes` (Linux 6.11+): the smallest
    /// write the device makes untorn; 0 when it makes none.
    pub atomic_write_unit_min_bytes: Option<u64>,
    /// `queue/atomic_write_unit_max_bytes`: the largest single untorn
    /// write; 0 when the device has no atomic writes.
    pub atomic_write_unit_max_bytes: Option<u64>,
    /// `queue/atomic_write_max_bytes`: the largest untorn write the queue
    /// takes (merged or split limits included).
    pub atomic_write_max_bytes: Option<u64>,
    /// `queue/atomic_write_boundary_bytes`: an untorn write may not cross
    /// a multiple of this (0: no boundary).
    pub atomic_write_boundary_bytes: Option<u64>,
    /// For a loop device: its backing file.
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub backing_file: Option<PathBuf>,
    /// The devices this one sits on: a loop device's backing file's
    /// device, a device-mapper or md device's slaves.
    pub lower: Vec<BlockDevice>,
    /// Why a loop device's backing file has no device listed under it
    /// (a file on tmpfs, a deleted file).
    pub lower_note: Option<crate::note::Note>,
}

/// The block devices the filesystem holding `path` is on (several for a
/// multi-device btrfs seen through its mount source: only the mounted one),
/// or why there are none (tmpfs, FUSE, network filesystems).
pub fn block_devices(path: &Path) -> std::result::Result<Vec<BlockDevice>, Reason> {
    let dev = devices_of(path)?;
    let mut seen = Vec::new();
    dev.into_iter()
        .map(|d| describe(&sysfs_dir(d)?, 0, &mut seen))
        .collect()
}

/// The device number(s) of the filesystem holding `path`: `st_dev` where
/// sysfs knows it as a block device, else the mount source's (btrfs
/// reports an anonymous `st_dev` per subvolume).
fn devices_of(path: &Path) -> std::result::Result<Vec<u64>, Reason> {
    let st = sys::stat(path).map_err(|e| errno_reason(e, format!("stat {}", path.display())))?;
    if Path::new(&format!("/sys/dev/block/{}", majmin(st.dev))).exists() {
        return Ok(vec![st.dev]);
    }
    let Some(mount) = find_mount(path, st.dev) else {
        return Err(no_device(
            "no block device (the mount was not found in /proc/self/mountinfo)".into(),
        ));
    };
    // tmpfs, FUSE (`host:/dir`), NFS, CIFS (`//server/share`): no device.
    let none = || no_device(format!("no block device under {}", mount.fs_type));
    if !mount.source.starts_with("/dev/") {
        return Err(none());
    }
    match sys::stat(Path::new(&mount.source)) {
        Ok(s) if s.is_block_device() => Ok(vec![s.rdev]),
        Ok(_) => Err(none()),
        Err(e) => Err(errno_reason(e, mount.source.clone())),
    }
}

fn majmin(dev: u64) -> String {
    format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev))
}

/// The sysfs directory of device `dev`.
fn sysfs_dir(dev: u64) -> std::result::Result<PathBuf, Reason> {
    let link = format!("/sys/dev/block/{}", majmin(dev));
    std::fs::canonicalize(&link).map_err(|e| Reason::of_io(&link, &e))
}

/// `what: <the errno's words>`, with the errno.
fn errno_reason(e: sys::Errno, what: String) -> Reason {
    Reason::of_io(&what, &std::io::Error::from_raw_os_error(e.raw_os_error()))
}

/// No block device under a filesystem: not a failed call but a fact of
/// its kind (tmpfs, FUSE, NFS), so no errno.
fn no_device(text: String) -> Reason {
    Reason::new(crate::errno::ErrorKind::NotRegular, text)
}

/// The note a loop device carries when what is under its backing file
/// cannot be listed.
fn lower_note(why: Reason) -> Note {
    let kind = if why.errno.is_some() {
        NoteKind::ReadFailed
    } else {
        NoteKind::NoBlockDevice
    };
    Note::new(kind, why.text)
}

/// Reads one sysfs attribute, trimmed.
fn attr(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

fn number(dir: &Path, name: &str) -> Option<u64> {
    attr(dir, name)?.parse().ok()
}

fn flag(dir: &Path, name: &str) -> Option<bool> {
    number(dir, name).map(|n| n != 0)
}

/// Describes the device whose sysfs directory is `dir`, and what it sits
/// on; `seen` stops cycles.
fn describe(
    dir: &Path,
    depth: usize,
    seen: &mut Vec<PathBuf>,
) -> std::result::Result<BlockDevice, Reason> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            Reason::new(
                crate::errno::ErrorKind::NotFound,
                format!("{}: not a device directory", dir.display()),
            )
        })?;
    seen.push(dir.to_path_buf());
    // A partition has no queue of its own: its disk's is the one I/O meets.
    let (disk, qdir) = if dir.join("partition").exists() {
        let parent = dir.parent().unwrap_or(dir);
        let disk = parent.file_name().map(|n| n.to_string_lossy().into_owned());
        (disk, parent.join("queue"))
    } else {
        (None, dir.join("queue"))
    };
    let whole = qdir.parent().unwrap_or(dir).to_path_buf();
    let backing_file = attr(&whole, "loop/backing_file").map(PathBuf::from);
    let mut lower = Vec::new();
    let mut note = None;
    if depth < MAX_DEPTH {
        if let Some(file) = &backing_file {
            // A loop device: what its backing file is on (a file on a
            // filesystem, or a block device itself).
            let devs = match sys::stat(file) {
                Ok(s) if s.is_block_device() => Ok(vec![s.rdev]),
                Ok(_) => devices_of(file),
                Err(e) => Err(errno_reason(e, format!("stat {}", file.display()))),
            };
            match devs {
                Ok(devs) => {
                    for d in devs {
                        match sysfs_dir(d) {
                            Ok(sub) if !seen.contains(&sub) => {
                                lower.push(describe(&sub, depth + 1, seen)?);
                            }
                            Ok(_) => {}
                            Err(e) => note = Some(lower_note(e)),
                        }
                    }
                }
                Err(e) => note = Some(lower_note(e)),
            }
        }
        // device-mapper and md: one entry per device underneath.
        if let Ok(entries) = std::fs::read_dir(whole.join("slaves")) {
            let mut subs: Vec<PathBuf> = entries
                .filter_map(|e| std::fs::canonicalize(e.ok()?.path()).ok())
                .collect();
            subs.sort();
            for sub in subs {
                if !seen.contains(&sub) {
                    lower.push(describe(&sub, depth + 1, seen)?);
                }
            }
        }
    }
    Ok(BlockDevice {
        name,
        dev: attr(dir, "dev").unwrap_or_default(),
        disk,
        write_cache: attr(&qdir, "write_cache"),
        fua: flag(&qdir, "fua"),
        rotational: flag(&qdir, "rotational"),
        discard_max_bytes: number(&qdir, "discard_max_bytes"),
        discard_granularity: number(&qdir, "discard_granularity"),
        write_zeroes_max_bytes: number(&qdir, "write_zeroes_max_bytes"),
        write_zeroes_unmap_max_bytes: number(&qdir, "write_zeroes_unmap_max_bytes"),
        logical_block_size: number(&qdir, "logical_block_size"),
        physical_block_size: number(&qdir, "physical_block_size"),
        atomic_write_unit_min_bytes: number(&qdir, "atomic_write_unit_min_bytes"),
        atomic_write_unit_max_bytes: number(&qdir, "atomic_write_unit_max_bytes"),
        atomic_write_max_bytes: number(&qdir, "atomic_write_max_bytes"),
        atomic_write_boundary_bytes: number(&qdir, "atomic_write_boundary_bytes"),
        backing_file,
        lower,
        lower_note: note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A device directory in a fake sysfs tree: `dev`, and a `queue/` with
    /// the facts unless it is a partition.
    fn device(dir: &Path, dev: &str, partition: bool, cache: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
        if partition {
            std::fs::write(dir.join("partition"), "1\n").unwrap();
            return;
        }
        let q = dir.join("queue");
        std::fs::create_dir_all(&q).unwrap();
        for (name, value) in [
            ("write_cache", cache),
            ("fua", "1"),
            ("rotational", "0"),
            ("discard_max_bytes", "2199023255040"),
            ("discard_granularity", "4096"),
            ("write_zeroes_max_bytes", "0"),
            ("logical_block_size", "512"),
            ("physical_block_size", "4096"),
        ] {
            std::fs::write(q.join(name), format!("{value}\n")).unwrap();
        }
    }

    /// A partition reports its own name and number with its disk's queue;
    /// a device-mapper device lists its slaves (a partition here), and a
    /// cycle of slaves ends instead of recursing forever.
    #[test]
    fn partitions_and_slaves_in_a_fake_tree() {
        let t = tempfile::tempdir().unwrap();
        // As sysfs_dir gives them: canonical paths.
        let root = &std::fs::canonicalize(t.path()).unwrap();
        let sda = root.join("devices/pci/block/sda");
        device(&sda, "8:0", false, "write back");
        device(&sda.join("sda1"), "8:1", true, "");
        let d = describe(&sda.join("sda1"), 0, &mut Vec::new()).unwrap();
        assert_eq!((d.name.as_str(), d.dev.as_str()), ("sda1", "8:1"));
        assert_eq!(d.disk.as_deref(), Some("sda"));
        assert_eq!(d.write_cache.as_deref(), Some("write back"));
        assert_eq!((d.fua, d.rotational), (Some(true), Some(false)));
        assert_eq!(d.discard_max_bytes, Some(2199023255040));
        assert_eq!(d.write_zeroes_max_bytes, Some(0));
        // Missing on kernels before 6.17: unknown, not zero.
        assert_eq!(d.write_zeroes_unmap_max_bytes, None);
        // Missing before 6.11: unknown, not "no atomic writes".
        assert_eq!(d.atomic_write_unit_max_bytes, None);
        assert_eq!(
            (d.logical_block_size, d.physical_block_size),
            (Some(512), Some(4096))
        );

        let dm0 = root.join("devices/virtual/block/dm-0");
        device(&dm0, "253:0", false, "write through");
        std::fs::create_dir_all(dm0.join("slaves")).unwrap();
        symlink(sda.join("sda1"), dm0.join("slaves/sda1")).unwrap();
        let d = describe(&dm0, 0, &mut Vec::new()).unwrap();
        assert_eq!(d.write_cache.as_deref(), Some("write through"));
        assert_eq!(d.lower.len(), 1, "{d:?}");
        assert_eq!(d.lower[0].name, "sda1");
        assert_eq!(d.lower[0].disk.as_deref(), Some("sda"));

        // dm-1 and dm-2 each list the other.
        let dm1 = root.join("devices/virtual/block/dm-1");
        let dm2 = root.join("devices/virtual/block/dm-2");
        device(&dm1, "253:1", false, "write back");
        device(&dm2, "253:2", false, "write back");
        std::fs::create_dir_all(dm1.join("slaves")).unwrap();
        std::fs::create_dir_all(dm2.join("slaves")).unwrap();
        symlink(&dm2, dm1.join("slaves/dm-2")).unwrap();
        symlink(&dm1, dm2.join("slaves/dm-1")).unwrap();
        let d = describe(&dm1, 0, &mut Vec::new()).unwrap();
        assert_eq!(d.lower.len(), 1);
        assert_eq!(d.lower[0].name, "dm-2");
        assert!(d.lower[0].lower.is_empty(), "{d:?}");
    }
}
