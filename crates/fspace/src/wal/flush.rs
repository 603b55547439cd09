//! The I/O of a flush, done without the state lock: pages out in segment
//! order, each segment synced before any page of a later one, the last one
//! synced when asked.

use super::options::WRITE_PAGE;
use super::storage::SegmentFile;
use crate::error::{Error, Result};
use crate::sys::Errno;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The I/O of one flush, done without the state lock.
pub(super) struct FlushIo {
    /// A segment written but not yet `fdatasync`ed.
    pub(super) dirty: Option<(u64, Arc<dyn SegmentFile>, Arc<PathBuf>)>,
    /// Page-aligned buffer for `O_DIRECT` writes.
    pub(super) staging: Vec<u8>,
    /// `fsync` instead of `fdatasync` (the sync method `fsync`).
    pub(super) fsync: bool,
    pub(super) writes: u64,
    pub(super) syncs: u64,
    /// Highest segment made durable by this flush.
    pub(super) synced_seq: u64,
}

impl FlushIo {
    /// The I/O of one flush or sync: `dirty` is the segment left written
    /// but not synced, `staging` the page-aligned buffer it may reuse.
    pub(super) fn new(
        dirty: Option<(u64, Arc<dyn SegmentFile>, Arc<PathBuf>)>,
        staging: Vec<u8>,
        fsync: bool,
    ) -> FlushIo {
        FlushIo {
            dirty,
            staging,
            fsync,
            writes: 0,
            syncs: 0,
            synced_seq: 0,
        }
    }

    /// Writes `chunks` in order, syncing a segment before any page of a
    /// later one goes out (recovery relies on it: recovery.rs, invariant
    /// 1), and the last one when `sync`. Stops at the first failure, with
    /// the poison it leaves.
    pub(super) fn write(
        &mut self,
        chunks: &[Chunk],
        sync: bool,
    ) -> std::result::Result<(), Box<(Error, Poison)>> {
        for c in chunks {
            if let Some(d) = self.dirty.take_if(|d| d.0 != c.seq) {
                self.datasync(&d)?;
            }
            self.writes += 1;
            // With a per-write sync method, a synced flush's writes are
            // durable when they return: no fdatasync for them. Pages an
            // earlier unsynced flush left dirty stay in `dirty` (RWF_DSYNC
            // flushes only its own range) and get their fdatasync.
            let durable_write = sync && c.dsync;
            let bytes: &[u8] = if c.direct {
                // O_DIRECT wants a page-aligned buffer: stage the pages.
                let slice = aligned(&mut self.staging, c.bytes.len());
                slice.copy_from_slice(&c.bytes);
                slice
            } else {
                &c.bytes
            };
            if let Err(e) = write_all_to(&*c.fd, &c.path, bytes, c.offset, durable_write) {
                let errno = e.raw_os_error().unwrap_or(Errno::IO.raw_os_error());
                let p = Poison {
                    op: write_op(durable_write),
                    path: c.path.to_path_buf(),
                    errno,
                };
                return Err(Box::new((e, p)));
            }
            if durable_write {
                self.synced_seq = self.synced_seq.max(c.seq);
            } else {
                self.dirty = Some((c.seq, c.fd.clone(), c.path.clone()));
            }
        }
        if sync {
            if let Some(d) = self.dirty.take() {
                self.datasync(&d)?;
            }
        }
        Ok(())
    }

    /// `fdatasync` (or `fsync`) of segment `d`.
    fn datasync(
        &mut self,
        d: &(u64, Arc<dyn SegmentFile>, Arc<PathBuf>),
    ) -> std::result::Result<(), Box<(Error, Poison)>> {
        self.syncs += 1;
        let r = if self.fsync {
            d.1.fsync()
        } else {
            d.1.fdatasync()
        };
        let op = if self.fsync { "fsync" } else { "fdatasync" };
        r.map_err(|e| Box::new(sync_failure(&d.2, e, op)))?;
        self.synced_seq = self.synced_seq.max(d.0);
        Ok(())
    }
}

pub(super) struct Poison {
    pub(super) op: &'static str,
    pub(super) path: PathBuf,
    pub(super) errno: i32,
}

/// Whole pages of one segment, ready to be written.
pub(super) struct Chunk {
    pub(super) seq: u64,
    /// Its descriptor has `O_DIRECT`: write from a page-aligned buffer.
    pub(super) direct: bool,
    /// Written with `RWF_DSYNC` when the flush syncs (the sync method is
    /// per write).
    pub(super) dsync: bool,
    pub(super) fd: Arc<dyn SegmentFile>,
    pub(super) path: Arc<PathBuf>,
    pub(super) offset: u64,
    pub(super) bytes: Vec<u8>,
}

/// Returns `len` bytes of `v` starting at a page boundary.
pub(super) fn aligned(v: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if v.len() < len + WRITE_PAGE {
        v.resize(len + WRITE_PAGE, 0);
    }
    let off = v.as_ptr().align_offset(WRITE_PAGE).min(WRITE_PAGE);
    &mut v[off..off + len]
}

/// The error and the poison of a failed `fdatasync`.
pub(super) fn sync_failure(path: &Path, e: Errno, op: &'static str) -> (Error, Poison) {
    (
        Error::io(op, path, None, e),
        Poison {
            op,
            path: path.to_path_buf(),
            errno: e.raw_os_error(),
        },
    )
}

/// Writes all of `bytes` at `offset` of a segment file, each call with
/// `RWF_DSYNC` when `dsync`.
pub(super) fn write_all_to(
    fd: &dyn SegmentFile,
    path: &Path,
    bytes: &[u8],
    offset: u64,
    dsync: bool,
) -> Result<()> {
    let end = offset + bytes.len() as u64;
    let r = if dsync {
        crate::sys::pwrite_all_with(|b, o| fd.write_at_dsync(b, o), bytes, offset)
    } else {
        crate::sys::pwrite_all_with(|b, o| fd.write_at(b, o), bytes, offset)
    };
    r.map_err(|(errno, at)| Error::io(write_op(dsync), path, Some(at..end), errno))
}

/// The name of the call that writes a segment's pages: `pwrite`, or
/// `pwritev2(RWF_DSYNC)` when each write is durable.
pub(super) fn write_op(dsync: bool) -> &'static str {
    if dsync {
        "pwritev2(RWF_DSYNC)"
    } else {
        "pwrite"
    }
}
