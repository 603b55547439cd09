//! Block device ioctls: size, and zeroing a range the cheapest correct way.

use super::restart::{restart, Kind};
use rustix::fd::AsFd;
use rustix::io::Errno;

/// `BLKGETSIZE64`: `_IOR(0x12, 114, size_t)`.
const BLKGETSIZE64: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<u64>(0x12, 114);
/// `BLKZEROOUT`: `_IO(0x12, 127)`, taking `[start, len]` in bytes.
const BLKZEROOUT: rustix::ioctl::Opcode = rustix::ioctl::opcode::none(0x12, 127);

/// `ioctl(fd, BLKGETSIZE64)`: the block device's size in bytes.
pub fn block_device_size<Fd: AsFd>(fd: Fd) -> Result<u64, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || {
        // SAFETY: BLKGETSIZE64 writes one u64 through the pointer it gets.
        unsafe { rustix::ioctl::ioctl(fd, rustix::ioctl::Getter::<BLKGETSIZE64, u64>::new()) }
    })
}

/// `ioctl(fd, BLKZEROOUT, [offset, len])`: makes the range read as zeros
/// with the device's write-zeroes command (which may unmap), or by writing
/// zero pages where it has none. Both must be multiples of the logical
/// block size.
pub fn block_zero_out<Fd: AsFd>(fd: Fd, offset: u64, len: u64) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || {
        // SAFETY: BLKZEROOUT reads two u64 (start, length) through the
        // pointer the Setter passes to its own copy of the array.
        unsafe {
            rustix::ioctl::ioctl(
                fd,
                rustix::ioctl::Setter::<BLKZEROOUT, [u64; 2]>::new([offset, len]),
            )
        }
    })
}
