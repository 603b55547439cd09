//! Untorn (atomic) writes: `statx(STATX_WRITE_ATOMIC)` limits,
//! `pwritev2(RWF_ATOMIC)`, and the extent-size hint (`FS_IOC_FS[GS]ETXATTR`)
//! that prepares XFS space for them.

use super::restart::{restart, Kind};
use rustix::fd::AsFd;
use rustix::io::{Errno, IoSlice, ReadWriteFlags};

/// `STATX_WRITE_ATOMIC` (Linux 6.11): ask for the untorn-write limits.
const STATX_WRITE_ATOMIC: u32 = 0x0001_0000;
/// `STATX_ATTR_WRITE_ATOMIC`: the file supports untorn writes.
const STATX_ATTR_WRITE_ATOMIC: u64 = 0x0040_0000;
/// `RWF_ATOMIC` (Linux 6.11): write all of the buffer or none of it, even
/// across a power cut.
const RWF_ATOMIC: u32 = 0x40;

/// What `statx(STATX_WRITE_ATOMIC)` returned for one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatxAtomic {
    /// `STATX_WRITE_ATOMIC` in `stx_mask`: the filesystem filled the fields.
    pub reported: bool,
    /// `STATX_ATTR_WRITE_ATOMIC` in `stx_attributes`.
    pub attribute: bool,
    /// `stx_atomic_write_unit_min`.
    pub unit_min: u32,
    /// `stx_atomic_write_unit_max`.
    pub unit_max: u32,
    /// `stx_atomic_write_unit_max_opt` (Linux 6.16; 0 where not reported).
    pub unit_max_opt: u32,
    /// `stx_atomic_write_segments_max`.
    pub segments_max: u32,
    /// `stx_blksize`.
    pub blksize: u32,
    /// `stx_dio_mem_align` (`STATX_DIOALIGN`): the buffer address
    /// alignment `O_DIRECT` needs; `None` where not reported.
    pub dio_mem_align: Option<u32>,
    /// `stx_dio_offset_align`: the file offset alignment `O_DIRECT`
    /// needs (0: no `O_DIRECT` on this file); `None` where not reported.
    pub dio_offset_align: Option<u32>,
}

/// `statx(fd, "", AT_EMPTY_PATH, STATX_WRITE_ATOMIC)`.
pub fn statx_atomic<Fd: AsFd>(fd: Fd) -> Result<StatxAtomic, Errno> {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    let fd = fd.as_fd();
    let st = restart(Kind::Read, || {
        statx(
            fd,
            "",
            AtFlags::EMPTY_PATH,
            StatxFlags::from_bits_retain(STATX_WRITE_ATOMIC) | StatxFlags::DIOALIGN,
        )
    })?;
    let reported = st.stx_mask & STATX_WRITE_ATOMIC != 0;
    Ok(StatxAtomic {
        reported,
        attribute: st.stx_attributes.bits() & STATX_ATTR_WRITE_ATOMIC != 0,
        unit_min: if reported {
            st.stx_atomic_write_unit_min
        } else {
            0
        },
        unit_max: if reported {
            st.stx_atomic_write_unit_max
        } else {
            0
        },
        unit_max_opt: if reported {
            st.stx_atomic_write_unit_max_opt
        } else {
            0
        },
        segments_max: if reported {
            st.stx_atomic_write_segments_max
        } else {
            0
        },
        blksize: st.stx_blksize,
        dio_mem_align: (st.stx_mask & StatxFlags::DIOALIGN.bits() != 0)
            .then_some(st.stx_dio_mem_align),
        dio_offset_align: (st.stx_mask & StatxFlags::DIOALIGN.bits() != 0)
            .then_some(st.stx_dio_offset_align),
    })
}

/// `pwritev2(fd, [buf], offset, RWF_ATOMIC [| RWF_DSYNC])`: one call. The
/// kernel writes all of `buf` or fails; it never returns a short count for
/// an untorn write.
pub fn pwrite_atomic<Fd: AsFd>(
    fd: Fd,
    buf: &[u8],
    offset: u64,
    dsync: bool,
) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    let mut flags = ReadWriteFlags::from_bits_retain(RWF_ATOMIC);
    if dsync {
        flags |= ReadWriteFlags::DSYNC;
    }
    restart(Kind::Write, || {
        rustix::io::pwritev2(fd, &[IoSlice::new(buf)], offset, flags)
    })
}

/// `struct fsxattr` (`FS_IOC_FSGETXATTR`): 28 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct FsXattr {
    fsx_xflags: u32,
    fsx_extsize: u32,
    fsx_nextents: u32,
    fsx_projid: u32,
    fsx_cowextsize: u32,
    fsx_pad: [u8; 8],
}

/// `FS_IOC_FSGETXATTR`: `_IOR('X', 31, struct fsxattr)`.
const FS_IOC_FSGETXATTR: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<FsXattr>(b'X', 31);
/// `FS_IOC_FSSETXATTR`: `_IOW('X', 32, struct fsxattr)`.
const FS_IOC_FSSETXATTR: rustix::ioctl::Opcode = rustix::ioctl::opcode::write::<FsXattr>(b'X', 32);
/// `FS_XFLAG_EXTSIZE`: the extent-size hint applies.
const FS_XFLAG_EXTSIZE: u32 = 0x0000_0800;

fn fsgetxattr<Fd: AsFd>(fd: Fd) -> Result<FsXattr, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || {
        // SAFETY: FS_IOC_FSGETXATTR writes one `struct fsxattr` (28 bytes,
        // laid out as FsXattr) through the pointer the Getter passes.
        unsafe {
            rustix::ioctl::ioctl(
                fd,
                rustix::ioctl::Getter::<FS_IOC_FSGETXATTR, FsXattr>::new(),
            )
        }
    })
}

/// The extent-size hint of `fd` in bytes (`fsx_extsize`, 0 when none is
/// set), and how many extents the file has (`fsx_nextents`).
pub fn extent_size_hint<Fd: AsFd>(fd: Fd) -> Result<(u32, u32), Errno> {
    let x = fsgetxattr(fd)?;
    let hint = if x.fsx_xflags & FS_XFLAG_EXTSIZE != 0 {
        x.fsx_extsize
    } else {
        0
    };
    Ok((hint, x.fsx_nextents))
}

/// Sets the extent-size hint of `fd` to `bytes` (XFS refuses a change on a
/// file that already has extents, with `EINVAL`), keeping its other
/// attributes.
pub fn set_extent_size_hint<Fd: AsFd>(fd: Fd, bytes: u32) -> Result<(), Errno> {
    let fd = fd.as_fd();
    let mut x = fsgetxattr(fd)?;
    x.fsx_xflags |= FS_XFLAG_EXTSIZE;
    x.fsx_extsize = bytes;
    restart(Kind::Write, || {
        // SAFETY: FS_IOC_FSSETXATTR reads one `struct fsxattr` (28 bytes,
        // laid out as FsXattr) from the Setter's own copy.
        unsafe {
            rustix::ioctl::ioctl(
                fd,
                rustix::ioctl::Setter::<FS_IOC_FSSETXATTR, FsXattr>::new(x),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The opcodes as the kernel's headers spell them.
    #[test]
    fn opcodes() {
        assert_eq!(std::mem::size_of::<FsXattr>(), 28);
        assert_eq!(FS_IOC_FSGETXATTR, 0x801c_581f);
        assert_eq!(FS_IOC_FSSETXATTR, 0x401c_5820);
    }
}
