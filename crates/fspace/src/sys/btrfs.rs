//! `ioctl(BTRFS_IOC_TREE_SEARCH)`: the on-disk extents behind a btrfs
//! file, whole, as `compsize` reads them.
//!
//! FIEMAP reports only the part of each extent the file still references.
//! On a copy-on-write filesystem an overwrite writes a new extent, and the
//! old one stays allocated, whole, for as long as any part of it is
//! referenced (the "bookend" extents): the space a file pins can exceed
//! its size. Only the file's extent items say so: each names its disk
//! extent (`disk_bytenr`, `disk_num_bytes`) and the part it references
//! (`num_bytes`).

use super::restart::{restart, Kind};
use rustix::fd::AsFd;
use rustix::io::Errno;

/// `f_type` of btrfs.
pub const BTRFS_SUPER_MAGIC: u64 = 0x9123_683E;
/// `_IOWR(0x94, 17, struct btrfs_ioctl_search_args)` (4096 bytes).
const BTRFS_IOC_TREE_SEARCH: rustix::ioctl::Opcode = 0xD000_9411;
/// `BTRFS_EXTENT_DATA_KEY`: a file extent item.
const EXTENT_DATA_KEY: u32 = 108;
/// `BTRFS_FILE_EXTENT_INLINE`: data inside the item, no disk extent.
const FILE_EXTENT_INLINE: u8 = 0;
const KEY_LEN: usize = 104;
const HEADER_LEN: usize = 32;
/// Bytes of a non-inline `btrfs_file_extent_item` (packed).
const ITEM_LEN: usize = 53;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SearchKey {
    tree_id: u64,
    min_objectid: u64,
    max_objectid: u64,
    min_offset: u64,
    max_offset: u64,
    min_transid: u64,
    max_transid: u64,
    min_type: u32,
    max_type: u32,
    nr_items: u32,
    unused: u32,
    unused1: [u64; 4],
}

#[repr(C)]
struct SearchArgs {
    key: SearchKey,
    buf: [u8; 4096 - KEY_LEN],
}

/// One file extent item: the part of a disk extent a file references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BtrfsExtent {
    /// Byte offset in the file.
    pub file_offset: u64,
    /// Start of the disk extent (0 for a hole).
    pub disk_bytenr: u64,
    /// Size of the whole disk extent, referenced or not.
    pub disk_num_bytes: u64,
    /// Bytes of it this item references.
    pub num_bytes: u64,
    /// `BTRFS_FILE_EXTENT_PREALLOC`: allocated, never written.
    pub prealloc: bool,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(a)
}

/// Item bytes are the on-disk leaf's: little-endian on every host (the
/// search headers are filled in the host's order).
fn le_u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(a)
}

/// Returns the file extent items of the btrfs file open as `fd` whose
/// inode is `ino`, in file order. Needs `CAP_SYS_ADMIN` (`EPERM`
/// otherwise); `ENOTTY` on other filesystems. Inline extents (small files
/// whose data sits in the metadata) are left out: they have no disk
/// extent of their own.
pub fn btrfs_extents<Fd: AsFd>(fd: Fd, ino: u64) -> Result<Vec<BtrfsExtent>, Errno> {
    let fd = fd.as_fd();
    let mut args = Box::new(SearchArgs {
        key: SearchKey::default(),
        buf: [0; 4096 - KEY_LEN],
    });
    let mut out = Vec::new();
    let mut from = 0u64;
    loop {
        args.key = SearchKey {
            // 0: the subvolume that holds `fd`.
            tree_id: 0,
            min_objectid: ino,
            max_objectid: ino,
            min_offset: from,
            max_offset: u64::MAX,
            min_transid: 0,
            max_transid: u64::MAX,
            min_type: EXTENT_DATA_KEY,
            max_type: EXTENT_DATA_KEY,
            nr_items: u32::MAX,
            ..SearchKey::default()
        };
        restart(Kind::Read, || {
            // SAFETY: BTRFS_IOC_TREE_SEARCH takes a 4096-byte
            // `struct btrfs_ioctl_search_args`: the 104-byte key, then the
            // buffer the kernel fills; `SearchArgs` is that layout.
            unsafe {
                let ctl =
                    rustix::ioctl::Updater::<BTRFS_IOC_TREE_SEARCH, SearchArgs>::new(&mut args);
                rustix::ioctl::ioctl(fd, ctl)
            }
        })?;
        let n = args.key.nr_items as usize;
        if n == 0 {
            return Ok(out);
        }
        let mut at = 0;
        let mut last = from;
        for _ in 0..n {
            let head = args.buf.get(at..at + HEADER_LEN).ok_or(Errno::IO)?;
            let (offset, kind, len) = (
                u64_at(head, 16),
                u32_at(head, 24),
                u32_at(head, 28) as usize,
            );
            let item = args
                .buf
                .get(at + HEADER_LEN..at + HEADER_LEN + len)
                .ok_or(Errno::IO)?;
            at += HEADER_LEN + len;
            last = offset;
            if kind != EXTENT_DATA_KEY || item.len() < 21 || item[20] == FILE_EXTENT_INLINE {
                continue;
            }
            if item.len() < ITEM_LEN {
                return Err(Errno::IO);
            }
            out.push(BtrfsExtent {
                file_offset: offset,
                disk_bytenr: le_u64_at(item, 21),
                disk_num_bytes: le_u64_at(item, 29),
                num_bytes: le_u64_at(item, 45),
                prealloc: item[20] == 2,
            });
        }
        match last.checked_add(1) {
            Some(next) => from = next,
            None => return Ok(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<SearchKey>(), KEY_LEN);
        assert_eq!(std::mem::size_of::<SearchArgs>(), 4096);
        assert_eq!(
            BTRFS_IOC_TREE_SEARCH,
            rustix::ioctl::opcode::read_write::<SearchArgs>(0x94, 17)
        );
    }
}
