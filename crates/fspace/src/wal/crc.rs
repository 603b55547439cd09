//! CRC-32C (Castagnoli) of the log's records, by `crc-fast`.
//!
//! A hand-written 256-bit `VPCLMULQDQ` fold (for AVX2 CPUs without
//! AVX-512, where `crc-fast` folds 16 bytes at a time) was measured
//! against `crc-fast`'s own path in the log's commit rate and removed: on
//! ext4, xfs and btrfs the difference was within the noise of 5
//! alternating rounds, only tmpfs gained a few percent
//! (bench/runs/2026-11-27-wal-ab-crc-fold/; docs/wal.md, "The record
//! CRC"). The library keeps no `unsafe` it cannot justify on a device.

/// `crc32c(a ++ bytes)` given `crc = crc32c(a)` (the convention of the
/// `crc32c` crate's `crc32c_append`; `crc = 0` for a fresh CRC).
pub(crate) fn append(crc: u32, bytes: &[u8]) -> u32 {
    let mut d =
        crc_fast::Digest::new_with_init_state(crc_fast::CrcAlgorithm::Crc32Iscsi, u64::from(!crc));
    d.update(bytes);
    d.finalize() as u32
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
    fn check_value_and_every_length_to_1200_bytes() {
        assert_eq!(append(0, b"123456789"), 0xE306_9283);
        let data: Vec<u8> = (0..1200u32).map(|i| (i * 131 + 17) as u8).collect();
        for len in 0..data.len() {
            for crc in [0, 1, 0xFFFF_FFFF, 0xDEAD_BEEF] {
                let want = reference(crc, &data[..len]);
                assert_eq!(append(crc, &data[..len]), want, "len {len} crc {crc:#x}");
            }
        }
    }

    proptest! {
        #[test]
        fn appending_in_pieces_equals_the_whole(
            data in proptest::collection::vec(any::<u8>(), 0..20_000),
            skip in 0usize..32,
            crc in any::<u32>(),
        ) {
            // `skip` moves the start off any alignment.
            let d = &data[skip.min(data.len())..];
            let (a, b) = d.split_at(d.len() / 3);
            prop_assert_eq!(append(append(crc, a), b), append(crc, d));
            if d.len() <= 2_000 {
                prop_assert_eq!(append(crc, d), reference(crc, d));
            }
        }
    }
}
