//! Undoing a growth that failed: the file goes back to its old length and
//! the blocks this growth allocated past it are released, keeping any that
//! were reserved before (docs/design.md rule 2).

use crate::sys::{self, FallocMode};
use rustix::fd::BorrowedFd;

/// What the file held past its end before growing, so that a rollback
/// releases only what this growth allocated.
pub(super) struct Before {
    old_len: u64,
    blocks: u64,
    /// Block-aligned ranges past EOF that were allocated before (an earlier
    /// `reserve`, or speculative preallocation). `None` when they cannot be
    /// known (no FIEMAP) but `st_blocks` says there were some.
    reserved: Option<Vec<std::ops::Range<u64>>>,
}

pub(super) fn state_before(fd: BorrowedFd<'_>, st: &sys::Stat) -> Before {
    // The block holding EOF is the file's own; "past EOF" starts after it.
    let bs = st.blksize.clamp(512, 1 << 20);
    let eof_block_end = st.size.div_ceil(bs) * bs;
    let reserved = match sys::fiemap(fd, eof_block_end, u64::MAX - eof_block_end, false) {
        Ok(raw) => Some(
            raw.iter()
                .map(|e| e.logical.max(eof_block_end)..e.logical.saturating_add(e.length))
                .filter(|r| r.start < r.end)
                .collect(),
        ),
        Err(_) if st.blocks.saturating_mul(512) <= eof_block_end => Some(Vec::new()),
        Err(_) => None,
    };
    Before {
        old_len: st.size,
        blocks: st.blocks,
        reserved,
    }
}

/// Puts the file back to its old length and releases the blocks this
/// growth allocated past it, keeping any that were reserved before. Best
/// effort: the original error is what the caller reports.
///
/// Filesystems differ: ext4 frees every block past EOF on truncate (even to
/// the same length) and ignores a punch past EOF; xfs, btrfs and tmpfs
/// honour the punch. So: truncate, punch what was not reserved before, then
/// reserve again what was (a no-op where it survived).
pub(super) fn rollback(fd: BorrowedFd<'_>, prior: &Before, target: u64) {
    let Ok(st) = sys::fstat(fd) else { return };
    if st.size > target {
        // Someone else extended the file past our target: not ours to cut.
        return;
    }
    if st.size == prior.old_len && st.blocks <= prior.blocks {
        return; // nothing changed
    }
    let Some(reserved) = &prior.reserved else {
        // Unknown earlier reservations: only restore the length.
        if st.size != prior.old_len {
            let _ = sys::ftruncate(fd, prior.old_len);
        }
        return;
    };
    let _ = sys::ftruncate(fd, prior.old_len);
    let mut pos = prior.old_len;
    let punch = |from: u64, to: u64| {
        if to > from {
            let _ = sys::fallocate(fd, FallocMode::PunchHole, from, to - from);
        }
    };
    for r in reserved.iter().filter(|r| r.start < target) {
        punch(pos, r.start);
        pos = pos.max(r.end);
    }
    punch(pos, target);
    for r in reserved {
        let _ = sys::fallocate(fd, FallocMode::KeepSize, r.start, r.end - r.start);
    }
}

/// Reserves again the ranges past the old end that were reserved before
/// (a no-op where they still are): after an untorn growth's collapses
/// shifted them down.
pub(super) fn reserve_again(fd: BorrowedFd<'_>, prior: &Before) {
    for r in prior.reserved.iter().flatten() {
        let _ = sys::fallocate(fd, FallocMode::KeepSize, r.start, r.end - r.start);
    }
}
