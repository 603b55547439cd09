//! `fallocate(2)`, called directly: never glibc's `posix_fallocate`, which
//! silently falls back to writing one byte per block (docs/design.md rule 1).

use super::restart::{restart, Kind};
use rustix::fd::AsFd;
use rustix::fs::FallocateFlags;
use rustix::io::Errno;

/// `FALLOC_FL_WRITE_ZEROES` (Linux 6.17+): allocate *written* zeroed extents
/// using the device's unmap-write-zeroes command instead of moving data.
pub const FALLOC_FL_WRITE_ZEROES: u32 = 0x80;

/// A `fallocate(2)` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallocMode {
    /// Mode 0: allocate (unwritten) blocks and extend the size.
    Allocate,
    /// `FALLOC_FL_KEEP_SIZE`: allocate blocks without changing the size.
    KeepSize,
    /// `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`: deallocate a range.
    PunchHole,
    /// `FALLOC_FL_ZERO_RANGE`: zero a range, leaving unwritten extents.
    ZeroRange,
    /// `FALLOC_FL_WRITE_ZEROES`: allocate written, zeroed extents.
    WriteZeroes,
    /// `FALLOC_FL_COLLAPSE_RANGE`: remove a range, shifting what follows
    /// down; the blocks that follow keep their places on the device.
    CollapseRange,
}

impl FallocMode {
    fn flags(self) -> FallocateFlags {
        match self {
            FallocMode::Allocate => FallocateFlags::empty(),
            FallocMode::KeepSize => FallocateFlags::KEEP_SIZE,
            FallocMode::PunchHole => FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
            FallocMode::ZeroRange => FallocateFlags::ZERO_RANGE,
            FallocMode::WriteZeroes => FallocateFlags::from_bits_retain(FALLOC_FL_WRITE_ZEROES),
            FallocMode::CollapseRange => FallocateFlags::COLLAPSE_RANGE,
        }
    }

    /// Returns the flags as error messages show them (`KEEP_SIZE`); `None`
    /// for mode 0.
    pub fn flag_names(self) -> Option<&'static str> {
        match self {
            FallocMode::Allocate => None,
            FallocMode::KeepSize => Some("KEEP_SIZE"),
            FallocMode::PunchHole => Some("PUNCH_HOLE|KEEP_SIZE"),
            FallocMode::ZeroRange => Some("ZERO_RANGE"),
            FallocMode::WriteZeroes => Some("WRITE_ZEROES"),
            FallocMode::CollapseRange => Some("COLLAPSE_RANGE"),
        }
    }
}

/// `fallocate(fd, mode, offset, len)`.
///
/// Restarted on `EINTR`: allocating a range again is a no-op for the part
/// already allocated, so the restart continues from what the interrupted call
/// had done.
pub fn fallocate<Fd: AsFd>(fd: Fd, mode: FallocMode, offset: u64, len: u64) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || {
        rustix::fs::fallocate(fd, mode.flags(), offset, len)
    })
}
