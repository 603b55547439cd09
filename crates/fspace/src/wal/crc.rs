//! CRC-32C (Castagnoli) of the log's records, folded 32 bytes at a time
//! with `VPCLMULQDQ` on x86-64 CPUs that have it with AVX2.
//!
//! Why by hand: `crc-fast` (used everywhere else, and here as the fallback)
//! takes its `VPCLMULQDQ` path only with AVX-512. On CPUs that have
//! `VPCLMULQDQ` with AVX2 but no AVX-512 (AMD Zen 3, Intel Alder Lake and
//! later client cores) it folds 16 bytes at a time mixed with the `crc32`
//! instruction. On the EPYC (Zen 3) this project is measured on, the fold
//! was faster than `crc-fast` on an 8 KiB record in every one of 7
//! alternating rounds (`cargo run --release -p fspace-bench --bin
//! crc_speed`, bench/runs/2026-11-26-crc-speed/), and the record CRC was
//! the largest item of the log's own time on the commit path
//! (bench/runs/2026-11-26-perf-commit-tmpfs/). CPUs with AVX-512 keep `crc-fast`'s
//! 512-bit path, which this was not measured against.
//!
//! The method is the one of Intel's "Fast CRC Computation for Generic
//! Polynomials Using PCLMULQDQ": the running remainder, held as 128-bit
//! lanes, is multiplied forward over the distance to the next block by
//! `x^(d±32) mod P` and the block is added; the last 128 bits are reduced
//! with the `crc32` instruction, which computes the same remainder. The
//! constants are computed at compile time from the polynomial.

/// Shorter input goes to `crc-fast`: the fold needs 128 bytes to start,
/// and below a few hundred bytes its setup is not repaid.
const FOLD_MIN: usize = 256;

/// `crc32c(a ++ bytes)` given `crc = crc32c(a)` (the convention of the
/// `crc32c` crate's `crc32c_append`; `crc = 0` for a fresh CRC).
pub(crate) fn append(crc: u32, bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= FOLD_MIN && x86::available() {
        // SAFETY: `available` checked every feature `fold` is compiled for.
        return unsafe { x86::fold(crc, bytes) };
    }
    portable(crc, bytes)
}

/// [`append`] with `crc-fast` alone (whatever path it picks for this CPU).
pub(crate) fn portable(crc: u32, bytes: &[u8]) -> u32 {
    let mut d =
        crc_fast::Digest::new_with_init_state(crc_fast::CrcAlgorithm::Crc32Iscsi, u64::from(!crc));
    d.update(bytes);
    d.finalize() as u32
}

/// Whether [`append`] folds with `VPCLMULQDQ` on this CPU (for long input).
pub(crate) fn folds_here() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::{
        __m128i, __m256i, _mm256_castsi256_si128, _mm256_clmulepi64_epi128,
        _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_set_epi32, _mm256_set_epi64x,
        _mm256_setzero_si256, _mm256_xor_si256, _mm_clmulepi64_si128, _mm_crc32_u64, _mm_crc32_u8,
        _mm_cvtsi128_si64, _mm_extract_epi64, _mm_loadu_si128, _mm_set_epi64x, _mm_xor_si128,
    };

    /// The CRC-32C polynomial with its x^32 term.
    const P: u64 = 0x1_1EDC_6F41;

    /// x^n mod P, in the usual bit order.
    const fn xpow(n: u32) -> u32 {
        let mut r: u64 = 1;
        let mut i = 0;
        while i < n {
            r <<= 1;
            if r >> 32 != 0 {
                r ^= P;
            }
            i += 1;
        }
        r as u32
    }

    /// The multipliers that move a 128-bit lane `d` bits forward: for its
    /// low and its high 64 bits, bit-reflected and shifted left by one
    /// (the product of two reflected values comes out one bit short).
    const fn keys(d: u32) -> (u64, u64) {
        (
            (xpow(d + 32).reverse_bits() as u64) << 1,
            (xpow(d - 32).reverse_bits() as u64) << 1,
        )
    }

    /// Accumulators of the main loop: 4 × 32 bytes, 128 bytes a round.
    const LANES: usize = 4;
    const K_ROUND: (u64, u64) = keys(256 * LANES as u32);
    const K256: (u64, u64) = keys(256);
    const K128: (u64, u64) = keys(128);

    /// The CPU has what [`fold`] is compiled for, and no AVX-512 (there
    /// `crc-fast` folds 64 bytes at a time; not measured against this).
    pub(super) fn available() -> bool {
        use std::sync::OnceLock;
        static AVAILABLE: OnceLock<bool> = OnceLock::new();
        *AVAILABLE.get_or_init(|| {
            std::is_x86_feature_detected!("vpclmulqdq")
                && std::is_x86_feature_detected!("avx")
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("pclmulqdq")
                && std::is_x86_feature_detected!("sse4.1")
                && std::is_x86_feature_detected!("sse4.2")
                && !std::is_x86_feature_detected!("avx512vl")
        })
    }

    #[inline]
    #[target_feature(enable = "avx2,vpclmulqdq")]
    fn fold256(x: __m256i, k: __m256i) -> __m256i {
        _mm256_xor_si256(
            _mm256_clmulepi64_epi128(x, k, 0x00),
            _mm256_clmulepi64_epi128(x, k, 0x11),
        )
    }

    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    fn fold128(x: __m128i, k: __m128i) -> __m128i {
        _mm_xor_si128(
            _mm_clmulepi64_si128(x, k, 0x00),
            _mm_clmulepi64_si128(x, k, 0x11),
        )
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    /// # Safety
    /// `at + 32 <= b.len()`.
    unsafe fn load32(b: &[u8], at: usize) -> __m256i {
        debug_assert!(at + 32 <= b.len());
        // SAFETY: the caller keeps the 32 bytes at `at` inside `b` (an
        // unaligned load).
        unsafe { _mm256_loadu_si256(b.as_ptr().add(at).cast::<__m256i>()) }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn load16(b: &[u8], at: usize) -> __m128i {
        assert!(at + 16 <= b.len());
        // SAFETY: the 16 bytes at `at` are inside `b` (an unaligned load).
        unsafe { _mm_loadu_si128(b.as_ptr().add(at).cast::<__m128i>()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn both(k: (u64, u64)) -> __m256i {
        _mm256_set_epi64x(k.1 as i64, k.0 as i64, k.1 as i64, k.0 as i64)
    }

    /// [`super::append`] by folding.
    ///
    /// # Safety
    /// The CPU must have every feature [`available`] checks, and
    /// `bytes.len() >= 32 * LANES`.
    #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.2")]
    pub(super) unsafe fn fold(crc: u32, bytes: &[u8]) -> u32 {
        let n = bytes.len();
        assert!(n >= 32 * LANES);
        let mut y = [_mm256_setzero_si256(); LANES];
        // SAFETY (each `load32`): the loops keep `at + 32 <= n`, and
        // `n >= 32 * LANES` for the first ones.
        for (j, v) in y.iter_mut().enumerate() {
            *v = unsafe { load32(bytes, 32 * j) };
        }
        // The running CRC enters as the first 32 bits of the message.
        y[0] = _mm256_xor_si256(y[0], _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, !crc as i32));
        let k_round = both(K_ROUND);
        let mut i = 32 * LANES;
        while i + 32 * LANES <= n {
            for (j, v) in y.iter_mut().enumerate() {
                *v = _mm256_xor_si256(fold256(*v, k_round), unsafe { load32(bytes, i + 32 * j) });
            }
            i += 32 * LANES;
        }
        let k256 = both(K256);
        let mut acc = y[0];
        for v in &y[1..] {
            acc = _mm256_xor_si256(*v, fold256(acc, k256));
        }
        while i + 32 <= n {
            acc = _mm256_xor_si256(fold256(acc, k256), unsafe { load32(bytes, i) });
            i += 32;
        }
        let k128 = _mm_set_epi64x(K128.1 as i64, K128.0 as i64);
        let mut x = _mm_xor_si128(
            _mm256_extracti128_si256(acc, 1),
            fold128(_mm256_castsi256_si128(acc), k128),
        );
        if i + 16 <= n {
            x = _mm_xor_si128(fold128(x, k128), load16(bytes, i));
            i += 16;
        }
        // The 128 bits left are a message whose CRC (from 0) is the one of
        // everything folded so far; the rest goes through `crc32` too.
        let lo = _mm_cvtsi128_si64(x) as u64;
        let hi = _mm_extract_epi64(x, 1) as u64;
        let mut c = _mm_crc32_u64(_mm_crc32_u64(0, lo), hi) as u32;
        let mut words = bytes[i..].chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            c = _mm_crc32_u64(u64::from(c), u64::from_le_bytes(b)) as u32;
        }
        for &b in words.remainder() {
            c = _mm_crc32_u8(c, b);
        }
        !c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bit by bit, from the definition (reflected, polynomial 0x82F63B78).
    fn reference(crc: u32, bytes: &[u8]) -> u32 {
        let mut c = !crc;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn check_value_and_every_length_around_the_fold_thresholds() {
        assert_eq!(append(0, b"123456789"), 0xE306_9283);
        let data: Vec<u8> = (0..1200u32).map(|i| (i * 131 + 17) as u8).collect();
        for len in 0..data.len() {
            for crc in [0, 1, 0xFFFF_FFFF, 0xDEAD_BEEF] {
                let want = reference(crc, &data[..len]);
                assert_eq!(append(crc, &data[..len]), want, "len {len} crc {crc:#x}");
                assert_eq!(portable(crc, &data[..len]), want, "len {len} crc {crc:#x}");
            }
        }
    }

    #[test]
    fn the_fold_runs_on_this_machine_when_the_cpu_has_it() {
        // The matrix machines have VPCLMULQDQ with AVX2: there the tests
        // above exercise the fold, not only the fallback.
        let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let has = |f: &str| cpu.split_whitespace().any(|w| w == f);
        let expect = cfg!(target_arch = "x86_64")
            && has("vpclmulqdq")
            && has("avx")
            && has("avx2")
            && has("pclmulqdq")
            && has("sse4_1")
            && has("sse4_2")
            && !has("avx512vl");
        assert_eq!(folds_here(), expect);
    }

    proptest! {
        #[test]
        fn fold_equals_crc_fast(
            data in proptest::collection::vec(any::<u8>(), 0..20_000),
            skip in 0usize..32,
            crc in any::<u32>(),
        ) {
            // `skip` moves the start off any alignment.
            let d = &data[skip.min(data.len())..];
            prop_assert_eq!(append(crc, d), portable(crc, d));
            let (a, b) = d.split_at(d.len() / 3);
            prop_assert_eq!(append(append(crc, a), b), append(crc, d));
        }
    }
}
