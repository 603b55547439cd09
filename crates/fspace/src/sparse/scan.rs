//! Finding zero blocks: the scan every sparse write and `dig` runs over
//! each byte of data, so it must cost far less than the copy it serves.
//!
//! The test of one block is [`crate::zeros::is_zero`].

use crate::zeros::is_zero;

/// A run of whole blocks that are all zero, or a run of bytes holding data,
/// as offsets into the scanned buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub start: usize,
    pub end: usize,
    pub zero: bool,
}

/// Splits `buf`, which holds the file's bytes from offset `file_off`, into
/// alternating data and zero runs. Zero runs are whole blocks of `block`
/// bytes aligned to the file (a partial block at either edge counts as
/// data), except that when `at_eof` a zero tail shorter than a block is a
/// zero run too (nothing follows it in the file). Calls `f` for each run,
/// in order; runs of the same kind are merged.
pub(crate) fn runs(buf: &[u8], file_off: u64, block: usize, at_eof: bool, mut f: impl FnMut(Run)) {
    if buf.is_empty() {
        return;
    }
    let lead = match (file_off % block as u64) as usize {
        0 => 0,
        r => (block - r).min(buf.len()),
    };
    let mut cur = Run {
        start: 0,
        end: lead,
        zero: false,
    };
    let mut pos = lead;
    while pos < buf.len() {
        let end = (pos + block).min(buf.len());
        let whole = end - pos == block || at_eof;
        let zero = whole && is_zero(&buf[pos..end]);
        if cur.end > cur.start && cur.zero != zero {
            f(cur);
            cur = Run {
                start: pos,
                end,
                zero,
            };
        } else {
            if cur.end == cur.start {
                cur.start = pos;
            }
            cur.end = end;
            cur.zero = zero;
        }
        pos = end;
    }
    if cur.end > cur.start {
        f(cur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn collect(buf: &[u8], off: u64, block: usize, eof: bool) -> Vec<Run> {
        let mut v = Vec::new();
        runs(buf, off, block, eof, |r| v.push(r));
        v
    }

    #[test]
    fn runs_cover_the_buffer_and_respect_alignment() {
        let mut b = vec![0u8; 5 * 4096];
        b[4096 + 3] = 9; // block 1 is data
        let r = collect(&b, 0, 4096, false);
        assert_eq!(
            r,
            vec![
                Run {
                    start: 0,
                    end: 4096,
                    zero: true
                },
                Run {
                    start: 4096,
                    end: 8192,
                    zero: false
                },
                Run {
                    start: 8192,
                    end: 5 * 4096,
                    zero: true
                },
            ]
        );
        // Unaligned start: the partial first block is data.
        let r = collect(&b[100..], 100, 4096, false);
        assert_eq!(
            r[0],
            Run {
                start: 0,
                end: 8192 - 100,
                zero: false
            }
        );
        // A partial zero tail is data unless it ends the file.
        let z = vec![0u8; 4096 + 10];
        assert_eq!(
            collect(&z, 0, 4096, false),
            vec![
                Run {
                    start: 0,
                    end: 4096,
                    zero: true
                },
                Run {
                    start: 4096,
                    end: 4106,
                    zero: false
                },
            ]
        );
        assert_eq!(
            collect(&z, 0, 4096, true),
            vec![Run {
                start: 0,
                end: 4106,
                zero: true
            }]
        );
    }

    proptest! {
        #[test]
        fn runs_agree_with_a_byte_by_byte_model(
            blocks in proptest::collection::vec(0u8..3, 0..40),
            off in 0u64..3000,
            cut in 0usize..600,
            eof: bool,
        ) {
            let block = 512usize;
            let mut buf = Vec::new();
            for (i, k) in blocks.iter().enumerate() {
                let mut b = vec![0u8; block];
                if *k == 1 { b[(i * 37) % block] = 0xa5; }
                buf.extend_from_slice(&b);
            }
            let take = buf.len().saturating_sub(cut);
            let buf = &buf[..take];
            let r = collect(buf, off, block, eof);
            // Contiguous, alternating, covering everything.
            let mut pos = 0;
            for (i, run) in r.iter().enumerate() {
                prop_assert_eq!(run.start, pos);
                prop_assert!(run.end > run.start);
                if i > 0 { prop_assert_ne!(run.zero, r[i - 1].zero); }
                pos = run.end;
                if run.zero {
                    prop_assert!(buf[run.start..run.end].iter().all(|&b| b == 0));
                    // Aligned to the file, whole blocks unless at the end of file.
                    prop_assert_eq!((off + run.start as u64) % block as u64, 0);
                    if run.end != buf.len() || !eof {
                        prop_assert_eq!((run.end - run.start) % block, 0);
                    }
                }
            }
            prop_assert_eq!(pos, buf.len());
            // Every aligned whole zero block lies in a zero run.
            let first = ((block as u64 - off % block as u64) % block as u64) as usize;
            let mut s = first;
            while s + block <= buf.len() {
                if buf[s..s + block].iter().all(|&b| b == 0) {
                    prop_assert!(r.iter().any(|x| x.zero && x.start <= s && s + block <= x.end));
                }
                s += block;
            }
        }
    }
}
