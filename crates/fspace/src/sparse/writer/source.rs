//! Source mode: data runs of a source on the same filesystem move by
//! `copy_file_range`, the writer's buffer only feeding the zero scan.

use super::*;

impl<'fd> SparseWriter<'fd> {
    /// `write` with a source: scan `data` in place; zero runs become holes,
    /// data runs grow the pending run, moved once it reaches the buffer size.
    pub(super) fn write_sourced(&mut self, data: &[u8]) -> Result<()> {
        let off = self.pos;
        let end = off + data.len() as u64;
        let at_eof = end >= self.end && end >= self.len_hint;
        let cap = self.buf.capacity() as u64;
        let mut err = None;
        let detect = self.opts.detect_zeros;
        let visit = |w: &mut Self, Run { start, end, zero }: Run| -> Result<()> {
            let r = off + start as u64..off + end as u64;
            if zero {
                w.stats.zero_bytes_found += r.end - r.start;
                w.move_run()?;
                return w.hole(r);
            }
            w.run = match w.run.take() {
                Some(p) if p.end == r.start => Some(p.start..r.end),
                Some(p) => {
                    w.run = Some(p);
                    w.move_run()?;
                    Some(r)
                }
                None => Some(r),
            };
            if w.run.as_ref().is_some_and(|p| p.end - p.start >= cap) {
                w.move_run()?;
            }
            Ok(())
        };
        if detect {
            scan::runs(data, off, self.block, at_eof, |run| {
                if err.is_none() {
                    err = visit(self, run).err();
                }
            });
        } else if !data.is_empty() {
            err = visit(
                self,
                Run {
                    start: 0,
                    end: data.len(),
                    zero: false,
                },
            )
            .err();
        }
        self.pos = end;
        self.end = self.end.max(end);
        err.map_or(Ok(()), Err)
    }

    /// Moves the pending data run from the source: `copy_file_range`, or,
    /// where that is refused, `pread` + `pwritev` (and no source from then
    /// on).
    pub(super) fn move_run(&mut self) -> Result<()> {
        let Some(r) = self.run.take() else {
            return Ok(());
        };
        self.settle()?;
        // A run exists only in source mode, and the source is never unset.
        let Some(src) = self.source else {
            debug_assert!(false, "a data run without a source");
            return self.rewrite_missing_source(r);
        };
        let mut pos = r.start;
        while pos < r.end {
            if self.offload_refused {
                return self.rewrite_from_source(src, pos..r.end);
            }
            let (mut s, mut d) = (pos, pos);
            let want = (r.end - pos).min(OFFLOAD_STEP) as usize;
            match sys::copy_file_range(src, &mut s, self.fd, &mut d, want) {
                Ok(0) => {
                    return Err(Error::refused(
                        "copy",
                        &self.path,
                        Errno::AGAIN,
                        format!("the source ended at byte {pos} while it was being copied"),
                    ))
                }
                Ok(n) => {
                    self.stats.offload_calls += 1;
                    self.stats.bytes_offloaded += n as u64;
                    pos += n as u64;
                }
                Err(e) if unsupported(Call::Offload, e) => {
                    // Refused here: read the bytes back and write them, for
                    // this run and every later one.
                    self.offload_refused = true;
                }
                Err(e) => {
                    return Err(Error::io(
                        "copy_file_range",
                        &self.path,
                        Some(pos..r.end),
                        e,
                    ))
                }
            }
        }
        self.note_written(r);
        Ok(())
    }

    pub(super) fn rewrite_missing_source(&self, r: Range<u64>) -> Result<()> {
        Err(Error::refused(
            "copy",
            &self.path,
            Errno::INVAL,
            format!("internal error: no source for the bytes at {r:?}"),
        ))
    }

    /// Writes `r` with the source's bytes, read back with `pread`
    /// (`copy_file_range` was refused).
    pub(super) fn rewrite_from_source(
        &mut self,
        src: BorrowedFd<'fd>,
        r: Range<u64>,
    ) -> Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(buf.capacity(), 0);
        let mut pos = r.start;
        let mut res = Ok(());
        while pos < r.end && res.is_ok() {
            let want = (r.end - pos).min(buf.len() as u64) as usize;
            res = match sys::pread(src, &mut buf[..want], pos) {
                Ok(0) => Err(Error::refused(
                    "copy",
                    &self.path,
                    Errno::AGAIN,
                    format!("the source ended at byte {pos} while it was being copied"),
                )),
                Ok(n) => {
                    let r = self.put(&buf[..n], pos);
                    pos += n as u64;
                    r
                }
                Err(e) => Err(Error::io("pread", &self.path, Some(pos..r.end), e)),
            };
        }
        buf.clear();
        self.buf = buf;
        res
    }
}
