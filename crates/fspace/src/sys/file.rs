//! Opening, writing, truncating, syncing and seeking.

use super::restart::{restart, Kind};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags, SeekFrom};
use rustix::io::Errno;
use rustix::io::IoSlice;
use std::path::Path;

/// `open(path, flags, mode)` with `O_CLOEXEC` added.
pub fn open(path: &Path, flags: OFlags, mode: u32) -> Result<OwnedFd, Errno> {
    restart(Kind::Read, || {
        rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::from_raw_mode(mode))
    })
}

/// The alignment `O_DIRECT` needs of file offsets and lengths on `fd`
/// (`statx(STATX_DIOALIGN)`, Linux 6.1): `Ok(Some(0))` when the filesystem
/// reports that this file does not support `O_DIRECT`, `Ok(None)` where
/// the kernel or the filesystem does not report it (the mask bit absent).
pub fn dio_offset_align<Fd: AsFd>(fd: Fd) -> Result<Option<u32>, Errno> {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    let fd = fd.as_fd();
    let st = restart(Kind::Read, || {
        statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN)
    })?;
    Ok((st.stx_mask & StatxFlags::DIOALIGN.bits() != 0).then_some(st.stx_dio_offset_align))
}

/// `fcntl(fd, F_SETFL, flags)`.
pub fn set_status_flags<Fd: AsFd>(fd: Fd, flags: OFlags) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || rustix::fs::fcntl_setfl(fd, flags))
}

/// `flock(fd, LOCK_EX | LOCK_NB)`: an exclusive lock, or `EWOULDBLOCK`.
pub fn flock_exclusive_nonblocking<Fd: AsFd>(fd: Fd) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || {
        rustix::fs::flock(fd, rustix::fs::FlockOperation::NonBlockingLockExclusive)
    })
}

/// `fcntl(fd, F_GETFL)`: the file status flags.
pub fn status_flags<Fd: AsFd>(fd: Fd) -> Result<OFlags, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || rustix::fs::fcntl_getfl(fd))
}

/// `pwritev(fd, bufs, offset)`: one call; the caller handles short writes.
pub fn pwritev<Fd: AsFd>(fd: Fd, bufs: &[IoSlice<'_>], offset: u64) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || rustix::io::pwritev(fd, bufs, offset))
}

/// `pwrite(fd, buf, offset)`: one call; the caller handles short writes.
/// The kernel takes it without importing an iovec, which a one-buffer
/// `pwritev` pays for on every log commit: a few percent of a commit on
/// tmpfs (bench/runs/2026-11-26-perf-commit-tmpfs/: `vfs_writev` and
/// `copy_iovec_from_user` in the profile).
pub fn pwrite<Fd: AsFd>(fd: Fd, buf: &[u8], offset: u64) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || rustix::io::pwrite(fd, buf, offset))
}

/// `pwritev2(fd, bufs, offset, RWF_DSYNC)`: one call, durable (data and
/// the metadata needed to read it back) when it returns; the caller
/// handles short writes.
pub fn pwritev_dsync<Fd: AsFd>(fd: Fd, bufs: &[IoSlice<'_>], offset: u64) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || {
        rustix::io::pwritev2(fd, bufs, offset, rustix::io::ReadWriteFlags::DSYNC)
    })
}

/// `pread(fd, buf, offset)`: one call; the caller handles short reads.
pub fn pread<Fd: AsFd>(fd: Fd, buf: &mut [u8], offset: u64) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || rustix::io::pread(fd, &mut *buf, offset))
}

/// `read(fd, buf)` at the file position: one call; `Ok(0)` is end of file.
pub fn read<Fd: AsFd>(fd: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || rustix::io::read(fd, &mut *buf))
}

/// `write(fd, bytes)` at the file position (pipes, FIFOs, devices): one
/// call; the caller handles short writes.
pub fn write<Fd: AsFd>(fd: Fd, bytes: &[u8]) -> Result<usize, Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || rustix::io::write(fd, bytes))
}

/// `write` until all of `bytes` is written; on failure, the errno and how
/// many bytes were written.
pub fn write_all<Fd: AsFd>(fd: Fd, mut bytes: &[u8]) -> Result<(), (Errno, u64)> {
    let fd = fd.as_fd();
    let mut done = 0u64;
    while !bytes.is_empty() {
        match write(fd, bytes) {
            Ok(0) => return Err((Errno::IO, done)),
            Ok(n) => {
                bytes = &bytes[n..];
                done += n as u64;
            }
            Err(e) => return Err((e, done)),
        }
    }
    Ok(())
}

/// Waits up to `timeout_ms` for `fd` to be readable (or at end of file):
/// true when it is. For reading a pipe while staying cancellable.
pub fn wait_readable<Fd: AsFd>(fd: Fd, timeout_ms: i32) -> Result<bool, Errno> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let fd = fd.as_fd();
    let timeout = Timespec {
        tv_sec: i64::from(timeout_ms / 1000),
        tv_nsec: i64::from(timeout_ms % 1000) * 1_000_000,
    };
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    restart(Kind::Read, || poll(&mut fds, Some(&timeout))).map(|n| n > 0)
}

/// `posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)`: the whole file will be
/// read in order, so the kernel may read ahead further (Linux doubles the
/// window), as GNU cp asks before it reads a file.
pub fn fadvise_sequential<Fd: AsFd>(fd: Fd) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || {
        rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::Sequential)
    })
}

/// `ftruncate(fd, len)`.
pub fn ftruncate<Fd: AsFd>(fd: Fd, len: u64) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Write, || rustix::fs::ftruncate(fd, len))
}

/// `fdatasync(fd)`.
///
/// Never restarted, not even on `EINTR`: after a failed sync the kernel may
/// already have dropped the dirty pages and marked them clean, so a second
/// call could report success for data that is lost (docs/design.md rule 6).
pub fn fdatasync<Fd: AsFd>(fd: Fd) -> Result<(), Errno> {
    super::restart::TOTAL.with(|c| c.set(c.get() + 1));
    rustix::fs::fdatasync(fd)
}

/// `fsync(fd)`. Never restarted, for the same reason as [`fdatasync`].
pub fn fsync<Fd: AsFd>(fd: Fd) -> Result<(), Errno> {
    super::restart::TOTAL.with(|c| c.set(c.get() + 1));
    rustix::fs::fsync(fd)
}

/// Sets the no-copy-on-write attribute of `fd` (`FS_NOCOW_FL`, `chattr
/// +C`), keeping its other attributes, and reads it back: btrfs ignores
/// the flag on a file that already holds data, and refuses it (`EINVAL`)
/// beside the compression attribute. `EOPNOTSUPP` when it did not stick;
/// the filesystem's error (`ENOTTY`, `EOPNOTSUPP`) where it has no such
/// attribute.
pub fn set_nocow<Fd: AsFd>(fd: Fd) -> Result<(), Errno> {
    let fd = fd.as_fd();
    let flags = restart(Kind::Read, || rustix::fs::ioctl_getflags(fd))?;
    if !flags.contains(rustix::fs::IFlags::NOCOW) {
        restart(Kind::Read, || {
            rustix::fs::ioctl_setflags(fd, flags | rustix::fs::IFlags::NOCOW)
        })?;
    }
    let now = restart(Kind::Read, || rustix::fs::ioctl_getflags(fd))?;
    if now.contains(rustix::fs::IFlags::NOCOW) {
        Ok(())
    } else {
        Err(Errno::NOTSUP)
    }
}

/// `lseek(fd, offset, SEEK_DATA)`; `Ok(None)` when there is no data at or
/// after `offset` (`ENXIO`).
pub fn seek_data<Fd: AsFd>(fd: Fd, offset: u64) -> Result<Option<u64>, Errno> {
    let fd = fd.as_fd();
    match restart(Kind::Read, || rustix::fs::seek(fd, SeekFrom::Data(offset))) {
        Ok(o) => Ok(Some(o)),
        Err(Errno::NXIO) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `lseek(fd, offset, SEEK_HOLE)`; `Ok(None)` when `offset` is at or past
/// EOF (`ENXIO`).
pub fn seek_hole<Fd: AsFd>(fd: Fd, offset: u64) -> Result<Option<u64>, Errno> {
    let fd = fd.as_fd();
    match restart(Kind::Read, || rustix::fs::seek(fd, SeekFrom::Hole(offset))) {
        Ok(o) => Ok(Some(o)),
        Err(Errno::NXIO) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `ioctl(dst, FICLONE, src)`: share all of `src`'s blocks with `dst`.
pub fn ficlone<Dst: AsFd, Src: AsFd>(dst: Dst, src: Src) -> Result<(), Errno> {
    let (dst, src) = (dst.as_fd(), src.as_fd());
    restart(Kind::Write, || rustix::fs::ioctl_ficlone(dst, src))
}

/// `unlink(path)`.
pub fn unlink(path: &Path) -> Result<(), Errno> {
    restart(Kind::Read, || rustix::fs::unlink(path))
}

/// `rename(from, to)`.
pub fn rename(from: &Path, to: &Path) -> Result<(), Errno> {
    restart(Kind::Read, || rustix::fs::rename(from, to))
}

/// `renameat2(from, to, RENAME_NOREPLACE)`: fails with `EEXIST` when `to`
/// exists; `EINVAL` where the filesystem refuses the flag (FUSE, NFS).
pub fn rename_noreplace(from: &Path, to: &Path) -> Result<(), Errno> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    restart(Kind::Read, || {
        renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE)
    })
}

/// `mkdir(path, mode)`.
pub fn mkdir(path: &Path, mode: u32) -> Result<(), Errno> {
    restart(Kind::Read, || {
        rustix::fs::mkdir(path, rustix::fs::Mode::from_raw_mode(mode))
    })
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub struct DirEntry {
    /// Its name (never `.` or `..`).
    pub name: std::ffi::OsString,
    /// Its type as the directory reports it, or from `lstat` where the
    /// filesystem does not say (`DT_UNKNOWN`).
    pub file_type: rustix::fs::FileType,
}

/// Lists directory `dir` (`getdents64`), without `.` and `..`.
pub fn read_dir(dir: &Path) -> Result<Vec<DirEntry>, Errno> {
    use std::os::unix::ffi::OsStrExt;
    let fd = open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, 0)?;
    let mut d = restart(Kind::Read, || rustix::fs::Dir::read_from(&fd))?;
    let mut out = Vec::new();
    while let Some(e) = d.read() {
        let e = e?;
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name = std::ffi::OsStr::from_bytes(name).to_os_string();
        let mut file_type = e.file_type();
        if file_type == rustix::fs::FileType::Unknown {
            if let Ok(st) = super::statfs::lstat(&dir.join(&name)) {
                file_type = rustix::fs::FileType::from_raw_mode(st.mode);
            }
        }
        out.push(DirEntry { name, file_type });
    }
    Ok(out)
}

/// `getrandom(buf)`: fills `buf` from the kernel's random pool.
pub fn getrandom(buf: &mut [u8]) -> Result<(), Errno> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        done += restart(Kind::Read, || {
            rustix::rand::getrandom(&mut *rest, rustix::rand::GetRandomFlags::empty())
        })?;
    }
    Ok(())
}

/// Writes all of `bytes` at `offset` through `pwritev` (a short write
/// continues where it stopped). On failure, returns the errno and the offset
/// reached; a write of 0 bytes is `EIO`.
pub fn pwrite_all_with(
    pwritev: impl Fn(&[IoSlice<'_>], u64) -> Result<usize, Errno>,
    bytes: &[u8],
    offset: u64,
) -> Result<(), (Errno, u64)> {
    let mut done = 0;
    while done < bytes.len() {
        let at = offset + done as u64;
        match pwritev(&[IoSlice::new(&bytes[done..])], at) {
            Ok(0) => return Err((Errno::IO, at)),
            Ok(n) => done += n,
            Err(e) => return Err((e, at)),
        }
    }
    Ok(())
}

/// [`pwrite_all_with`] on a descriptor.
pub fn pwrite_all<Fd: AsFd>(fd: Fd, bytes: &[u8], offset: u64) -> Result<(), (Errno, u64)> {
    let fd = fd.as_fd();
    pwrite_all_with(|b, o| pwritev(fd, b, o), bytes, offset)
}

/// `posix_fadvise(fd, offset, len, POSIX_FADV_DONTNEED)`: drop clean cached
/// pages of a range (dirty pages are only queued for writeback).
pub fn fadvise_dontneed<Fd: AsFd>(fd: Fd, offset: u64, len: u64) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || {
        rustix::fs::fadvise(
            fd,
            offset,
            std::num::NonZeroU64::new(len),
            rustix::fs::Advice::DontNeed,
        )
    })
}

/// `copy_file_range(src, &src_off, dst, &dst_off, len, 0)`: one call that
/// copies (or, on the same filesystem, may share) up to `len` bytes inside
/// the kernel; advances both offsets by what it copied and returns that,
/// 0 at the source's end of file.
pub fn copy_file_range<Src: AsFd, Dst: AsFd>(
    src: Src,
    src_off: &mut u64,
    dst: Dst,
    dst_off: &mut u64,
    len: usize,
) -> Result<usize, Errno> {
    let (src, dst) = (src.as_fd(), dst.as_fd());
    restart(Kind::Write, || {
        rustix::fs::copy_file_range(src, Some(&mut *src_off), dst, Some(&mut *dst_off), len)
    })
}

/// `fchmod(fd, mode)`.
pub fn fchmod<Fd: AsFd>(fd: Fd, mode: u32) -> Result<(), Errno> {
    let fd = fd.as_fd();
    restart(Kind::Read, || {
        rustix::fs::fchmod(fd, Mode::from_raw_mode(mode))
    })
}

/// `fchown(fd, uid, gid)`.
pub fn fchown<Fd: AsFd>(fd: Fd, uid: u32, gid: u32) -> Result<(), Errno> {
    let fd = fd.as_fd();
    let (u, g) = (
        rustix::fs::Uid::from_raw(uid),
        rustix::fs::Gid::from_raw(gid),
    );
    restart(Kind::Read, || rustix::fs::fchown(fd, Some(u), Some(g)))
}

/// `futimens(fd, [atime, mtime])`, each as (seconds, nanoseconds).
pub fn futimens<Fd: AsFd>(fd: Fd, atime: (i64, i64), mtime: (i64, i64)) -> Result<(), Errno> {
    let fd = fd.as_fd();
    let ts = |(sec, nsec): (i64, i64)| rustix::fs::Timespec {
        tv_sec: sec,
        tv_nsec: nsec as _,
    };
    let times = rustix::fs::Timestamps {
        last_access: ts(atime),
        last_modification: ts(mtime),
    };
    restart(Kind::Read, || rustix::fs::futimens(fd, &times))
}

/// Opens directory `dir` and `fsync`s it, so that names created, renamed or
/// removed in it survive a crash. Returns which step failed with its errno.
pub fn fsync_dir(dir: &Path) -> Result<(), (&'static str, Errno)> {
    let d = open(dir, OFlags::RDONLY | OFlags::DIRECTORY, 0).map_err(|e| ("open", e))?;
    fsync(&d).map_err(|e| ("fsync", e))
}
