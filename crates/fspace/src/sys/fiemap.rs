//! `ioctl(FS_IOC_FIEMAP)`: the extent map of a file.

use super::restart::{restart, Kind};
use rustix::fd::AsFd;
use rustix::io::Errno;

/// `FIEMAP_FLAG_SYNC`: flush dirty data before mapping.
pub const FIEMAP_FLAG_SYNC: u32 = 0x1;
/// `FIEMAP_EXTENT_LAST`.
pub const FIEMAP_EXTENT_LAST: u32 = 0x1;
/// `FIEMAP_EXTENT_UNKNOWN`: location not known yet.
pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x2;
/// `FIEMAP_EXTENT_DELALLOC`: delayed allocation, no blocks yet.
pub const FIEMAP_EXTENT_DELALLOC: u32 = 0x4;
/// `FIEMAP_EXTENT_DATA_INLINE`: data stored in the inode/metadata.
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x200;
/// `FIEMAP_EXTENT_ENCODED`: compressed or encrypted data.
pub const FIEMAP_EXTENT_ENCODED: u32 = 0x8;
/// `FIEMAP_EXTENT_UNWRITTEN`: allocated, reads as zeros.
pub const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
/// `FIEMAP_EXTENT_SHARED`: blocks shared with another file.
pub const FIEMAP_EXTENT_SHARED: u32 = 0x2000;

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: rustix::ioctl::Opcode = 0xC020_660B;
const BATCH: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct FiemapBuf {
    header: FiemapHeader,
    extents: [FiemapExtent; BATCH],
}

/// One extent as FIEMAP reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawExtent {
    /// Byte offset in the file.
    pub logical: u64,
    /// Byte offset on the device (0 when unknown).
    pub physical: u64,
    /// Length in bytes.
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

/// Returns the extents of `fd` overlapping `start..start+len`, issuing as
/// many `FS_IOC_FIEMAP` calls as needed (256 extents per call).
///
/// With `sync`, passes `FIEMAP_FLAG_SYNC` so that delayed allocations are
/// resolved to real extents first.
pub fn fiemap<Fd: AsFd>(fd: Fd, start: u64, len: u64, sync: bool) -> Result<Vec<RawExtent>, Errno> {
    let fd = fd.as_fd();
    let end = start.saturating_add(len);
    let mut out = Vec::new();
    let mut pos = start;
    let mut buf = Box::new(FiemapBuf {
        header: FiemapHeader::default(),
        extents: [FiemapExtent::default(); BATCH],
    });
    let mut first = true;
    while pos < end {
        buf.header = FiemapHeader {
            fm_start: pos,
            fm_length: end - pos,
            fm_flags: if sync && first { FIEMAP_FLAG_SYNC } else { 0 },
            fm_mapped_extents: 0,
            fm_extent_count: BATCH as u32,
            fm_reserved: 0,
        };
        first = false;
        restart(Kind::Read, || {
            // SAFETY: FS_IOC_FIEMAP takes a `struct fiemap` followed by
            // `fm_extent_count` `struct fiemap_extent`s, which is the layout
            // of `FiemapBuf` (both `repr(C)`, sizes 32 and 56 bytes).
            unsafe {
                let ctl = rustix::ioctl::Updater::<FS_IOC_FIEMAP, FiemapBuf>::new(&mut buf);
                rustix::ioctl::ioctl(fd, ctl)
            }
        })?;
        let n = (buf.header.fm_mapped_extents as usize).min(BATCH);
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &buf.extents[..n] {
            out.push(RawExtent {
                logical: e.fe_logical,
                physical: e.fe_physical,
                length: e.fe_length,
                flags: e.fe_flags,
            });
            last |= e.fe_flags & FIEMAP_EXTENT_LAST != 0;
        }
        let tail = &buf.extents[n - 1];
        let next = tail.fe_logical.saturating_add(tail.fe_length);
        if last || next <= pos {
            break;
        }
        pos = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<FiemapHeader>(), 32);
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
        assert_eq!(
            FS_IOC_FIEMAP,
            rustix::ioctl::opcode::read_write::<FiemapHeader>(b'f', 11)
        );
    }
}
