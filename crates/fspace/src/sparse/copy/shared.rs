//! What the rungs of a copy share: their I/O sizes, and the judgements
//! they make of the source, its filesystem and an errno.

use crate::fs_info::FsKind;
use crate::sys::{self, Errno};
use rustix::fd::BorrowedFd;

/// Bytes per `pread` of a copy that reads its source (GNU cp's size):
/// read-ahead friendly from a cold cache, where 512 KiB reads ran behind
/// cp on xfs and 128 KiB ones ahead of it (bench/runs/2026-11-25-read-size/).
pub const SCAN_READ: usize = 128 << 10;

/// Bytes per `pwritev` of every copy that reads and writes its data (the
/// third rung): 128 KiB reads (`SCAN_READ`) land in the writer's buffer,
/// which goes out this much at a time. Chosen by measurement on every
/// filesystem of the matrix (bench/runs/2026-11-25-write-size/: `dd` with
/// each block size, 1 GiB from the page cache until on disk, alternating
/// rounds): 512 KiB is at least level with GNU cp's 128 KiB everywhere, with
/// a quarter of its write calls; 1 MiB (the size this project wrote before)
/// is much slower on ext4, ext3 and xfs on this VM (filling fresh large
/// page-cache folios), so no filesystem gets it.
pub const COPY_WRITE_SIZE: usize = 512 << 10;

/// Bytes per `copy_file_range` call: large, so a 1 GiB extent takes 16
/// calls, yet small enough that progress and cancellation stay responsive.
pub const OFFLOAD_CHUNK: u64 = 64 << 20;

/// Whether `copy_file_range` into a file on `kind` may share blocks instead
/// of copying them (it tries a reflink first on the same filesystem, since
/// Linux 5.3): with `--reflink never` it is used only where it cannot.
pub fn offload_may_share(kind: FsKind) -> bool {
    !matches!(
        kind,
        FsKind::Ext4 | FsKind::Tmpfs | FsKind::Ramfs | FsKind::F2fs | FsKind::Exfat | FsKind::Fat
    )
}

/// GNU cp's test for a sparse source (`st_blocks` below `st_size / 512`):
/// in sparse mode `auto` such a source's data is also read for zero runs,
/// so the default copy is at least as sparse as `cp`'s default. Where
/// `st_blocks` does not measure allocation (sshfs reports `st_size / 512`)
/// it says no, as it does for `cp`.
pub fn looks_sparse(st: &sys::Stat) -> bool {
    st.blocks < st.size / 512
}

/// Errnos that mean "this rung is not possible here" (fall to the next one
/// when nothing has been copied yet) for `FICLONE` and `copy_file_range`.
pub(super) fn not_possible(e: Errno) -> bool {
    crate::errno::unsupported(crate::errno::Call::Offload, e)
}

/// The length of the open file `fd` now: `st_size`, or the size of a block
/// device (whose `st_size` is 0).
pub(super) fn length_now(fd: BorrowedFd<'_>, st: &sys::Stat) -> std::result::Result<u64, Errno> {
    if st.is_block_device() {
        return sys::block_device_size(fd);
    }
    Ok(st.size)
}
