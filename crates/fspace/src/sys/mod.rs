//! Thin wrappers, one per syscall or ioctl family, over [`rustix`].
//!
//! Nothing here decides anything: each wrapper issues exactly one kind of
//! call, restarts it on `EINTR` through `restart` (the only place that
//! handles `EINTR`), and counts what it issued in per-thread `Counters` so
//! that higher layers can report the syscalls an operation cost (docs/design.md
//! rule 3). Offsets and lengths are `u64`; errors are raw `Errno`s that the
//! caller wraps with the operation, path and range (rule 7).

pub use rustix::io::Errno;

mod blockdev;
mod btrfs;
mod fallocate;
mod fiemap;
mod file;
mod restart;
mod statfs;
mod untorn;

pub use blockdev::{block_device_size, block_zero_out};
pub use btrfs::{btrfs_extents, BTRFS_SUPER_MAGIC};
pub use fallocate::{fallocate, FallocMode};
pub use fiemap::{
    fiemap, RawExtent, FIEMAP_EXTENT_DATA_INLINE, FIEMAP_EXTENT_DELALLOC, FIEMAP_EXTENT_ENCODED,
    FIEMAP_EXTENT_LAST, FIEMAP_EXTENT_SHARED, FIEMAP_EXTENT_UNKNOWN, FIEMAP_EXTENT_UNWRITTEN,
};
pub use file::{
    copy_file_range, dio_offset_align, fadvise_dontneed, fadvise_sequential, fchmod, fchown,
    fdatasync, ficlone, flock_exclusive_nonblocking, fsync, fsync_dir, ftruncate, futimens,
    getrandom, mkdir, open, pread, pwrite, pwrite_all, pwrite_all_with, pwritev, pwritev_dsync,
    read, read_dir, rename, rename_noreplace, seek_data, seek_hole, set_nocow, set_status_flags,
    status_flags, unlink, wait_readable, write_all,
};
pub use restart::{counters, Counters};
pub use statfs::{fs_uuid, fsid, fstat, fstatfs, lstat, stat, Stat};
pub use untorn::{
    extent_size_hint, pwrite_atomic, set_extent_size_hint, statx_atomic, StatxAtomic,
};
