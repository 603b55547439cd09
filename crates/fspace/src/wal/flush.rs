//! The I/O of a flush, done without the state lock: pages out in segment
//! order, each segment synced before any page of a later one, the last one
//! synced when asked.

use super::storage::SegmentFile;
use super::writer::{
    aligned, pad_to_page, round_down, sync_failure, write_all_to, Chunk, Poison, State,
};
use super::Faults;
use crate::error::Error;
use crate::sys::Errno;
use std::path::PathBuf;
use std::sync::Arc;

/// Takes every page waiting to be written: sealed chunks of earlier
/// segments, then the current segment's buffer, keeping a copy of its
/// partial last page, which the next flush writes again, whole (no
/// read-before-write).
pub(super) fn hand_over(st: &mut State) -> Vec<Chunk> {
    let mut chunks: Vec<Chunk> = st.sealed.drain(..).collect();
    st.sealed_bytes = 0;
    if st.cur.end > st.cur.handed {
        let tail_start = round_down(st.cur.end);
        let keep_from = (tail_start - st.buf_start) as usize;
        let mut next = std::mem::take(&mut st.spare);
        next.clear();
        next.extend_from_slice(&st.buf[keep_from..]);
        let mut bytes = std::mem::replace(&mut st.buf, next);
        pad_to_page(&mut bytes);
        chunks.push(st.chunk_of_current(bytes));
        st.buf_start = tail_start;
        st.cur.handed = st.cur.end;
    }
    chunks
}

/// The I/O of one flush, done without the state lock.
pub(super) struct FlushIo {
    pub(super) faults: Option<Arc<Faults>>,
    /// A segment written but not yet `fdatasync`ed.
    pub(super) dirty: Option<(u64, Arc<dyn SegmentFile>, Arc<PathBuf>)>,
    /// Page-aligned buffer for `O_DIRECT` writes.
    pub(super) staging: Vec<u8>,
    pub(super) writes: u64,
    pub(super) syncs: u64,
    /// Highest segment made durable by this flush.
    pub(super) synced_seq: u64,
}

impl FlushIo {
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
            let bytes: &[u8] = if c.direct {
                // O_DIRECT wants a page-aligned buffer: stage the pages.
                let slice = aligned(&mut self.staging, c.bytes.len());
                slice.copy_from_slice(&c.bytes);
                slice
            } else {
                &c.bytes
            };
            if let Err(e) = write_all_to(&*c.fd, &c.path, bytes, c.offset) {
                let errno = e.raw_os_error().unwrap_or(Errno::IO.raw_os_error());
                let p = Poison {
                    op: "pwritev",
                    path: c.path.to_path_buf(),
                    errno,
                };
                return Err(Box::new((e, p)));
            }
            self.dirty = Some((c.seq, c.fd.clone(), c.path.clone()));
        }
        if sync {
            if let Some(d) = self.dirty.take() {
                self.datasync(&d)?;
            }
        }
        Ok(())
    }

    /// `fdatasync` of segment `d` (or the fault injected for it).
    fn datasync(
        &mut self,
        d: &(u64, Arc<dyn SegmentFile>, Arc<PathBuf>),
    ) -> std::result::Result<(), Box<(Error, Poison)>> {
        self.syncs += 1;
        let r = match self
            .faults
            .as_ref()
            .and_then(|f| Faults::take(&f.fdatasync))
        {
            Some(e) => Err(e),
            None => d.1.fdatasync(),
        };
        r.map_err(|e| Box::new(sync_failure(&d.2, e)))?;
        self.synced_seq = self.synced_seq.max(d.0);
        Ok(())
    }
}
