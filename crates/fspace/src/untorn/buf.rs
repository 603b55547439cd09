//! Buffers for `O_DIRECT` writes.

/// A zeroed buffer whose start is aligned for `O_DIRECT` (4 KiB).
pub(crate) struct AlignedBuf {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    const ALIGN: usize = 4096;

    pub(crate) fn new(len: usize) -> AlignedBuf {
        let v = vec![0u8; len + Self::ALIGN];
        let off = v.as_ptr().align_offset(Self::ALIGN).min(Self::ALIGN);
        AlignedBuf { v, off, len }
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.v[self.off..self.off + self.len]
    }

    #[allow(dead_code)]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.v[self.off..self.off + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_start_on_a_page() {
        let mut b = AlignedBuf::new(8192);
        assert_eq!(b.as_slice().as_ptr() as usize % 4096, 0);
        assert_eq!(b.as_mut_slice().len(), 8192);
    }
}
