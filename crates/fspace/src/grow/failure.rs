//! How a strategy fails ([`Failure`]: try the next one, or stop), and the
//! free-space check that stops a growth before it writes what cannot fit.

use crate::error::Error;
use crate::fs_info;
use crate::sys::{self, Errno};
use crate::units::format_human;
use rustix::fd::BorrowedFd;
use std::path::Path;

/// How a strategy failed.
pub(super) enum Failure {
    /// Try the next strategy (EOPNOTSUPP, ENOSYS, EINVAL).
    Unsupported(Error),
    /// Stop (ENOSPC, EDQUOT, anything else).
    Fatal(Error),
}

pub(super) fn classify(err: Error) -> Failure {
    if crate::errno::unsupported_raw(crate::errno::Call::Fallocate, err.raw_os_error()) {
        Failure::Unsupported(err)
    } else {
        Failure::Fatal(err)
    }
}

pub(super) fn check_free_space(
    fd: BorrowedFd<'_>,
    path: &Path,
    range: std::ops::Range<u64>,
    op: &'static str,
) -> std::result::Result<(), Failure> {
    let need = range.end - range.start;
    check_free_space_for(fd, path, range, need, op)
}

/// As `check_free_space`, for `need` bytes somewhere in `range` (a range
/// allocation writes only its holes).
pub(super) fn check_free_space_for(
    fd: BorrowedFd<'_>,
    path: &Path,
    range: std::ops::Range<u64>,
    need: u64,
    op: &'static str,
) -> std::result::Result<(), Failure> {
    let sf = sys::fstatfs(fd).map_err(|e| Failure::Fatal(Error::io("fstatfs", path, None, e)))?;
    let blocks = if fs_info::FsKind::from_magic(sf.magic).reserve_usable_by_this_process() {
        sf.blocks_free
    } else {
        sf.blocks_available
    };
    let free = blocks.saturating_mul(sf.fragment_size);
    if sf.blocks > 0 && need > free {
        return Err(Failure::Fatal(Error::Refused {
            op,
            path: path.to_path_buf(),
            message: format!(
                "{} {} {} but the filesystem has {} free: No space left on device (os error 28); \
                 nothing was written",
                crate::units::format_range(&range),
                if op == "zero-fill" || op == "allocate range" {
                    "would write"
                } else {
                    "needs"
                },
                format_human(need),
                format_human(free)
            ),
            errno: Errno::NOSPC.raw_os_error(),
        }));
    }
    Ok(())
}
