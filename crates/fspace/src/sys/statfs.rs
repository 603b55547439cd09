//! `fstatfs(2)` and `fstat(2)`.

use super::restart::{restart, Kind};
use rustix::fd::AsFd;
use rustix::io::Errno;

/// The parts of `struct statfs` fspace uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFs {
    /// `f_type`: the filesystem magic.
    pub magic: u64,
    /// `f_bsize`: the preferred I/O block size.
    pub block_size: u64,
    /// `f_frsize`: the fundamental block size (units of the counts below).
    pub fragment_size: u64,
    /// `f_blocks`.
    pub blocks: u64,
    /// `f_bavail`: blocks free for unprivileged users.
    pub blocks_available: u64,
    /// `f_bfree`: blocks free for root.
    pub blocks_free: u64,
    /// `f_flags`: `ST_RDONLY` etc.
    pub flags: u64,
}

/// `fstatfs(fd)`.
pub fn fstatfs<Fd: AsFd>(fd: Fd) -> Result<StatFs, Errno> {
    let fd = fd.as_fd();
    let s = restart(Kind::Read, || rustix::fs::fstatfs(fd))?;
    let frsize = if s.f_frsize > 0 {
        s.f_frsize as u64
    } else {
        s.f_bsize as u64
    };
    Ok(StatFs {
        // f_type is a signed word; magics such as XFS's fit in 32 bits, so
        // keep the low 32 bits of negative values (btrfs's is 0x9123683E).
        #[allow(clippy::unnecessary_cast)] // f_type is i64 or u32 depending on the backend
        magic: (s.f_type as i64 as u64) & 0xffff_ffff,
        block_size: s.f_bsize as u64,
        fragment_size: frsize,
        blocks: s.f_blocks,
        blocks_available: s.f_bavail,
        blocks_free: s.f_bfree,
        flags: s.f_flags as u64,
    })
}

/// `f_fsid` from `fstatvfs(fd)`: the filesystem's identifier (derived from
/// its UUID on ext4 and btrfs, from the device elsewhere).
pub fn fsid<Fd: AsFd>(fd: Fd) -> Result<u64, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || rustix::fs::fstatvfs(fd)).map(|s| s.f_fsid)
}

/// `struct fsuuid2` of `FS_IOC_GETFSUUID`.
#[repr(C)]
struct FsUuid2 {
    len: u8,
    uuid: [u8; 16],
}

/// `FS_IOC_GETFSUUID` = `_IOR(0x15, 0, struct fsuuid2)` (Linux 6.9+).
const FS_IOC_GETFSUUID: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<FsUuid2>(0x15, 0);

/// The filesystem's UUID from `FS_IOC_GETFSUUID` (ext4, xfs, btrfs and
/// others set one; ENOTTY where the filesystem has none or the kernel is
/// older than 6.9). `fd` must be a real descriptor, not `O_PATH`.
pub fn fs_uuid<Fd: AsFd>(fd: Fd) -> Result<Vec<u8>, Errno> {
    let fd = fd.as_fd();
    let r = restart(Kind::Read, || {
        // SAFETY: FS_IOC_GETFSUUID fills a `struct fsuuid2` (one length
        // byte, then 16 bytes), which is `FsUuid2`'s `repr(C)` layout.
        unsafe {
            let ctl = rustix::ioctl::Getter::<FS_IOC_GETFSUUID, FsUuid2>::new();
            rustix::ioctl::ioctl(fd, ctl)
        }
    })?;
    Ok(r.uuid[..(r.len as usize).min(16)].to_vec())
}

/// The parts of `struct stat` fspace uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `st_dev`.
    pub dev: u64,
    /// `st_rdev`: the device a device node stands for (0 for other files).
    pub rdev: u64,
    /// `st_ino`.
    pub ino: u64,
    /// `st_mode`.
    pub mode: u32,
    /// `st_size`.
    pub size: u64,
    /// `st_blocks`, in 512-byte units.
    pub blocks: u64,
    /// `st_blksize`.
    pub blksize: u64,
    /// `st_uid`.
    pub uid: u32,
    /// `st_gid`.
    pub gid: u32,
    /// `st_atime`, seconds and nanoseconds.
    pub atime: (i64, i64),
    /// `st_mtime`, seconds and nanoseconds.
    pub mtime: (i64, i64),
}

impl Stat {
    /// Returns true if and only if this is a regular file.
    pub fn is_regular(&self) -> bool {
        self.mode & 0o170000 == 0o100000
    }

    /// Returns true if and only if this is a symbolic link (only `lstat`
    /// can say so).
    pub fn is_symlink(&self) -> bool {
        self.mode & 0o170000 == 0o120000
    }

    /// Returns true if and only if this is a block device.
    pub fn is_block_device(&self) -> bool {
        self.mode & 0o170000 == 0o060000
    }

    /// Returns true if and only if this is a directory.
    pub fn is_dir(&self) -> bool {
        self.mode & 0o170000 == 0o040000
    }

    /// A pipe or FIFO.
    pub fn is_fifo(&self) -> bool {
        self.mode & 0o170000 == 0o010000
    }

    /// A character device.
    pub fn is_char_device(&self) -> bool {
        self.mode & 0o170000 == 0o020000
    }

    /// Returns a word for the file type (`regular file`, `directory`, ...).
    pub fn type_name(&self) -> &'static str {
        match self.mode & 0o170000 {
            0o100000 => "regular file",
            0o040000 => "directory",
            0o010000 => "FIFO",
            0o020000 => "character device",
            0o060000 => "block device",
            0o140000 => "socket",
            0o120000 => "symbolic link",
            _ => "unknown file type",
        }
    }
}

/// `fstat(fd)`.
pub fn fstat<Fd: AsFd>(fd: Fd) -> Result<Stat, Errno> {
    let fd = fd.as_fd();
    Ok(to_stat(restart(Kind::Read, || rustix::fs::fstat(fd))?))
}

/// `stat(path)`, following symbolic links.
pub fn stat(path: &std::path::Path) -> Result<Stat, Errno> {
    Ok(to_stat(restart(Kind::Read, || rustix::fs::stat(path))?))
}

#[allow(clippy::unnecessary_cast)] // field types differ between architectures
fn to_stat(s: rustix::fs::Stat) -> Stat {
    Stat {
        dev: s.st_dev,
        rdev: s.st_rdev,
        ino: s.st_ino,
        mode: s.st_mode,
        size: s.st_size as u64,
        blocks: s.st_blocks as u64,
        blksize: s.st_blksize as u64,
        uid: s.st_uid,
        gid: s.st_gid,
        atime: (s.st_atime as i64, s.st_atime_nsec as i64),
        mtime: (s.st_mtime as i64, s.st_mtime_nsec as i64),
    }
}

/// `lstat(path)`: the link itself, not its target.
pub fn lstat(path: &std::path::Path) -> Result<Stat, Errno> {
    Ok(to_stat(restart(Kind::Read, || rustix::fs::lstat(path))?))
}
