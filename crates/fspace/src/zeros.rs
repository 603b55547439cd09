//! Zeros, written and found: the one zeroed buffer, the `zero-fill` writer
//! (large `pwritev`s of that buffer, used by growth, range allocation and
//! the sparse writer), and the zero scan every sparse write and `dig` runs
//! over each byte of data.
//!
//! [`is_zero`] ORs 256-byte chunks together 16 bytes at a time (LLVM turns
//! the fixed-size fold into SIMD `por` on x86-64 and `orr` on aarch64) and
//! stops at the first chunk that is not all zero, so data costs one chunk
//! per block and zeros stream at memory speed. Measured by
//! `cargo run --release -p fspace-bench --bin zero_scan` (bench/copy.py
//! records it): bench/runs/2026-11-22-copy-vs-cp/ (the zero-scan lines).

use crate::strategy::Progress;
use crate::sys::{self, Errno};
use rustix::fd::BorrowedFd;
use rustix::io::IoSlice;
use std::sync::atomic::{AtomicBool, Ordering};

/// Size of the one zeroed buffer (docs/design.md rule 4: at least 1 MiB). Each
/// iovec of a `pwritev` points at it.
pub const ZERO_FILL_BUFFER: usize = 1 << 20;

/// Iovecs per `pwritev` (each is the whole 1 MiB buffer): 1, so a 256 MiB
/// fill takes 256 write syscalls where glibc's `posix_fallocate` emulation
/// takes 65,536 (docs/design.md, source S3). Evidence (2026-11-22, a shell
/// loop recorded in docs/design.md, "Measurements behind the choices", not
/// in a run folder: alternating runs of a 256 MiB fill + fdatasync on loop
/// devices): 1 MiB calls were level with `dd bs=1M conv=fdatasync` on
/// ext4-noextents and xfs; 2 and 8 MiB calls had the same best case but
/// tails more than twice as long (dirty-page throttling hits a larger call
/// harder).
pub const ZERO_FILL_IOVECS: usize = 1;

/// The zeroed buffer: page-aligned (so that `O_DIRECT` descriptors accept
/// it) and in `.bss` (zero-initialised by the loader, never uninitialised,
/// and no 1 MiB of zeros in the library file: an `UnsafeCell` keeps it out of
/// `.rodata`). Never written.
#[repr(C, align(4096))]
struct Zeros(std::cell::UnsafeCell<[u8; ZERO_FILL_BUFFER]>);

// SAFETY: never written after the loader zeroes it; shared reads only.
unsafe impl Sync for Zeros {}

static ZEROS: Zeros = Zeros(std::cell::UnsafeCell::new([0; ZERO_FILL_BUFFER]));

/// Returns the shared zeroed buffer: no allocation and no lock, so it is
/// usable in a child after `fork` too (the preload runs inside any program).
pub fn zero_buffer() -> &'static [u8] {
    // SAFETY: nothing ever writes through the cell.
    unsafe { &*ZEROS.0.get() }
}

/// Writes zeros to `start..end` of `fd`; returns the bytes written. On error,
/// returns the errno and the offset reached.
pub(crate) fn fill(
    fd: BorrowedFd<'_>,
    start: u64,
    end: u64,
    cancel: Option<&AtomicBool>,
    progress: Option<&dyn Fn(Progress)>,
) -> Result<u64, (Errno, u64)> {
    let zeros = zero_buffer();
    let mut pos = start;
    while pos < end {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err((Errno::CANCELED, pos));
        }
        // Whole buffers, then the remainder; no allocation per call.
        let mut left = end - pos;
        let mut iov = [IoSlice::new(&[]); ZERO_FILL_IOVECS];
        let mut used = 0;
        while used < ZERO_FILL_IOVECS && left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            iov[used] = IoSlice::new(&zeros[..n]);
            used += 1;
            left -= n as u64;
        }
        match sys::pwritev(fd, &iov[..used], pos) {
            Ok(0) => return Err((Errno::IO, pos)),
            Ok(n) => pos += n as u64,
            Err(e) => return Err((e, pos)),
        }
        if let Some(p) = progress {
            p(Progress {
                done: pos - start,
                total: end - start,
            });
        }
    }
    Ok(pos - start)
}

/// Bytes OR-ed together before each early-exit test. Large enough for the
/// compiler to unroll and vectorise, small enough that a data block is
/// rejected after reading 256 bytes of it.
const CHUNK: usize = 256;

/// A zeroed byte buffer whose first byte is page-aligned (4 KiB). A plain
/// `vec![0u8; 128 << 10]` comes from `mmap` through malloc with a 16-byte
/// header, so every `read` into it and `write` from it copies to and from
/// memory 16 bytes off the page: on this project's VM a copy through such a
/// buffer took more CPU than GNU cp's, whose buffer is page-aligned, and
/// about as much once aligned (bench/runs/2026-11-25-copy-ab/, `perf stat`
/// task-clock on tmpfs).
pub struct PageBuf {
    mem: Vec<u8>,
    off: usize,
    len: usize,
}

impl PageBuf {
    /// A buffer of `len` zero bytes starting on a page boundary.
    pub fn new(len: usize) -> PageBuf {
        const PAGE: usize = 4096;
        let mem = vec![0u8; len + PAGE];
        let off = mem.as_ptr().align_offset(PAGE).min(PAGE);
        PageBuf { mem, off, len }
    }
}

impl std::ops::Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.mem[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.off..self.off + self.len]
    }
}

/// A page-aligned buffer of fixed capacity whose first `len` bytes are in
/// use: what a `SparseWriter` gathers data in and reads a copy's source
/// into. Aligned for the same reason as [`PageBuf`]: `pread`s of 128 KiB
/// on tmpfs into memory 16 bytes off a page were slower in every round
/// than into a page-aligned buffer (bench/runs/2026-11-25-copy-ab/,
/// `bench/micro/align_read.c`).
pub struct PageVec {
    mem: PageBuf,
    len: usize,
}

impl PageVec {
    /// An empty buffer that can hold `cap` bytes.
    pub fn with_capacity(cap: usize) -> PageVec {
        PageVec {
            mem: PageBuf::new(cap),
            len: 0,
        }
    }

    /// A buffer of capacity 0 that allocates nothing (a placeholder).
    pub fn empty() -> PageVec {
        PageVec {
            mem: PageBuf {
                mem: Vec::new(),
                off: 0,
                len: 0,
            },
            len: 0,
        }
    }

    /// Bytes it can hold.
    pub fn capacity(&self) -> usize {
        self.mem.len()
    }

    /// Appends `data`.
    ///
    /// # Panics
    /// If `data` does not fit in the spare space.
    pub fn extend_from_slice(&mut self, data: &[u8]) {
        assert!(
            data.len() <= self.capacity() - self.len,
            "PageVec::extend_from_slice past capacity"
        );
        self.mem[self.len..self.len + data.len()].copy_from_slice(data);
        self.len += data.len();
    }

    /// The unused space after the bytes in use, to be filled and then
    /// counted with [`grow`](Self::grow).
    pub fn spare_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.len..]
    }

    /// Counts `n` more bytes of the spare space as in use.
    ///
    /// # Panics
    /// If `n` is more than the spare space.
    pub fn grow(&mut self, n: usize) {
        assert!(
            n <= self.capacity() - self.len,
            "PageVec::grow past capacity"
        );
        self.len += n;
    }

    /// Drops the first `n` bytes in use, moving the rest to the front.
    ///
    /// # Panics
    /// If `n` is more than the bytes in use.
    pub fn consume(&mut self, n: usize) {
        assert!(n <= self.len, "PageVec::consume past the bytes in use");
        self.mem.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

impl std::ops::Deref for PageVec {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.mem[..self.len]
    }
}

/// Returns true if and only if every byte of `buf` is zero.
#[inline]
pub fn is_zero(buf: &[u8]) -> bool {
    let mut chunks = buf.chunks_exact(CHUNK);
    for c in &mut chunks {
        if or_chunk(c) != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| b == 0)
}

#[inline(always)]
fn or_chunk(c: &[u8]) -> u8 {
    // A fold over a slice of known length: vectorised, no bounds checks.
    let c: &[u8; CHUNK] = match c.try_into() {
        Ok(c) => c,
        Err(_) => return c.iter().fold(0, |a, &b| a | b),
    };
    let mut acc = [0u8; 16];
    for lane in c.chunks_exact(16) {
        for (a, b) in acc.iter_mut().zip(lane) {
            *a |= *b;
        }
    }
    acc.iter().fold(0, |a, &b| a | b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_buf_is_page_aligned_zeroed_and_sized() {
        for len in [1usize, 4096, 128 << 10, (512 << 10) + 7] {
            let mut b = PageBuf::new(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % 4096, 0);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 1;
            assert_eq!(b[len - 1], 1);
        }
    }

    #[test]
    fn is_zero_finds_a_single_set_byte_anywhere() {
        let mut b = vec![0u8; 4096 + 77];
        assert!(is_zero(&b));
        assert!(is_zero(&[]));
        for i in [0, 1, 15, 16, 255, 256, 4095, 4096, 4096 + 76] {
            b[i] = 1;
            assert!(!is_zero(&b), "byte {i}");
            b[i] = 0;
        }
    }
}
