//! The allocation unit: the smallest amount of space a file's data is
//! given or freed in (the cluster on ext4 with `bigalloc`, the block
//! elsewhere).
//!
//! Two ways to learn it, tried in this order:
//!
//! - **superblock** (ext2/3/4 only): `s_log_cluster_size` when the
//!   `bigalloc` feature is set, else `s_log_block_size`, read from the block
//!   device under the mount (`/dev/block/MAJ:MIN`, else the mount's source
//!   from mountinfo, accepted only if its `st_rdev` is the filesystem's
//!   `st_dev`). Exact and free of side effects, but needs read access to
//!   the device (root, or the `disk` group).
//! - **measured**: one byte written at 1 MiB into a scratch file in the
//!   directory, `fsync`, then `st_blocks`: what the filesystem allocated for
//!   the smallest write. Works for any filesystem whose `st_blocks` measures
//!   allocation, at the cost of one small `fsync` (once per device and
//!   process); the byte is random so that compression cannot shrink it and
//!   it is past offset 0 so that it cannot be stored inline.
//!
//! Where `st_blocks` does not measure allocation (FUSE, network
//! filesystems: [`FsKind::st_blocks_measures_allocation`]) the unit is
//! unknown.

use super::kind::FsKind;
use super::scratch::scratch;
use crate::error::{Error, Result};
use crate::sys;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// How an [`AllocUnit`] was learnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocUnitSource {
    /// Read from the ext2/3/4 superblock on the block device.
    Superblock,
    /// Measured with a one-byte write into a scratch file.
    Measured,
}

impl AllocUnitSource {
    /// Returns the word the CLI shows.
    pub fn name(self) -> &'static str {
        match self {
            AllocUnitSource::Superblock => "superblock",
            AllocUnitSource::Measured => "measured",
        }
    }
}

/// The filesystem's allocation unit (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AllocUnit {
    /// Bytes; a power of two, at least 512.
    pub bytes: u64,
    /// How it was learnt.
    pub source: AllocUnitSource,
}

/// Where the measuring byte is written: past offset 0, so that no
/// filesystem stores it inline (btrfs and ext4 `inline_data` inline only
/// small files starting at 0), and inside the first MiB of a sparse file,
/// below XFS's speculative preallocation threshold (it preallocates only
/// for files already 64 KiB or larger).
const MEASURE_OFFSET: u64 = 1 << 20;

/// Largest unit believed: ext4 clusters are at most 2^16 blocks, but a
/// measurement above this is more likely preallocation than a unit.
const MAX_UNIT: u64 = 64 << 20;

fn cache() -> &'static Mutex<BTreeMap<u64, AllocUnit>> {
    static CACHE: OnceLock<Mutex<BTreeMap<u64, AllocUnit>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Returns the allocation unit of the filesystem holding the open file or
/// directory `fd` (`path` names it in errors; scratch files for the
/// measurement go into `dir`; the device is found through mountinfo).
/// `Ok(None)` where `st_blocks` does not
/// measure allocation. With `measure` false, only the cache and the
/// superblock are consulted (no scratch file), and `Ok(None)` may mean
/// "not measured yet". Results are cached per device.
pub fn allocation_unit(
    fd: BorrowedFd<'_>,
    path: &Path,
    dir: &Path,
    measure: bool,
) -> Result<Option<AllocUnit>> {
    let st = sys::fstat(fd).map_err(|e| Error::io("fstat", path, None, e))?;
    let sf = sys::fstatfs(fd).map_err(|e| Error::io("fstatfs", path, None, e))?;
    let kind = FsKind::from_magic(sf.magic);
    if !kind.st_blocks_measures_allocation() {
        return Ok(None);
    }
    if let Some(u) = cache().lock().ok().and_then(|c| c.get(&st.dev).copied()) {
        return Ok(Some(u));
    }
    let unit = match superblock_unit(kind, st.dev, path) {
        Some(u) => Some(u),
        None if measure => Some(measure_unit(dir)?),
        None => None,
    };
    if let (Some(u), Ok(mut c)) = (unit, cache().lock()) {
        c.insert(st.dev, u);
    }
    Ok(unit)
}

/// The unit from the ext2/3/4 superblock, when the device can be read.
fn superblock_unit(kind: FsKind, dev: u64, path: &Path) -> Option<AllocUnit> {
    if kind != FsKind::Ext4 {
        return None;
    }
    let source = super::mountinfo::find_mount(path, dev).map(|m| m.source);
    let by_number = format!(
        "/dev/block/{}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    let candidates = [
        Some(by_number.as_str()),
        source.as_deref().filter(|s| s.starts_with('/')),
    ];
    let unit = candidates.into_iter().flatten().find_map(|dev_path| {
        let fd = sys::open(
            Path::new(dev_path),
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            0,
        )
        .ok()?;
        let st = sys::fstat(&fd).ok()?;
        if !st.is_block_device() || st.rdev != dev {
            return None;
        }
        let mut sb = [0u8; 1024];
        let n = sys::pread(fd.as_fd(), &mut sb, 1024).ok()?;
        ext4_unit(&sb[..n]).map(|bytes| AllocUnit {
            bytes,
            source: AllocUnitSource::Superblock,
        })
    });
    unit
}

/// The allocation unit in an ext2/3/4 superblock (its 1024 bytes).
fn ext4_unit(sb: &[u8]) -> Option<u64> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(sb.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(sb.get(o..o + 4)?.try_into().ok()?));
    const MAGIC: usize = 0x38;
    const LOG_BLOCK_SIZE: usize = 0x18;
    const LOG_CLUSTER_SIZE: usize = 0x1C;
    const FEATURE_RO_COMPAT: usize = 0x64;
    const RO_COMPAT_BIGALLOC: u32 = 0x200;
    if u16_at(MAGIC)? != 0xEF53 {
        return None;
    }
    let log = if u32_at(FEATURE_RO_COMPAT)? & RO_COMPAT_BIGALLOC != 0 {
        u32_at(LOG_CLUSTER_SIZE)?
    } else {
        u32_at(LOG_BLOCK_SIZE)?
    };
    (log <= 20).then(|| 1024u64 << log)
}

/// Measures the unit with a scratch file in `dir` (see the module docs).
fn measure_unit(dir: &Path) -> Result<AllocUnit> {
    let s = scratch(dir)?;
    let mut byte = [0u8; 1];
    while byte[0] == 0 {
        sys::getrandom(&mut byte).map_err(|e| Error::io("getrandom", &s.path, None, e))?;
    }
    let at = MEASURE_OFFSET;
    sys::pwrite_all(&s.fd, &byte, at)
        .map_err(|(e, _)| Error::io("pwritev(scratch)", &s.path, Some(at..at + 1), e))?;
    sys::fsync(&s.fd).map_err(|e| Error::io("fsync", &s.path, None, e))?;
    let st = sys::fstat(&s.fd).map_err(|e| Error::io("fstat", &s.path, None, e))?;
    let bytes = st.blocks.saturating_mul(512);
    if bytes < 512 || !bytes.is_power_of_two() || bytes > MAX_UNIT {
        return Err(Error::refused_errno(
            "allocation unit",
            &s.path,
            sys::Errno::NOTSUP,
            format!(
                "a one-byte write allocated {bytes} bytes (st_blocks {}), which is not an \
                 allocation unit",
                st.blocks
            ),
        ));
    }
    Ok(AllocUnit {
        bytes,
        source: AllocUnitSource::Measured,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superblock_fields() {
        let mut sb = vec![0u8; 1024];
        sb[0x38..0x3A].copy_from_slice(&0xEF53u16.to_le_bytes());
        sb[0x18..0x1C].copy_from_slice(&2u32.to_le_bytes()); // 4 KiB blocks
        sb[0x1C..0x20].copy_from_slice(&6u32.to_le_bytes()); // 64 KiB clusters
        assert_eq!(ext4_unit(&sb), Some(4096));
        sb[0x64..0x68].copy_from_slice(&0x200u32.to_le_bytes());
        assert_eq!(ext4_unit(&sb), Some(65536));
        sb[0x38] = 0;
        assert_eq!(ext4_unit(&sb), None);
        assert_eq!(ext4_unit(&sb[..10]), None);
    }
}
