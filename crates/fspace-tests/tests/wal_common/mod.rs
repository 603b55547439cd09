//! What the log's test binaries share: options, payloads, reading a log
//! back, and damaging its files.

#![allow(dead_code)] // each test binary uses its own part

use fspace::wal::{Record, Wal, WalOptions};
use fspace::{Error, Lsn};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

pub const SEG: u64 = 256 << 10;

pub fn opts() -> WalOptions {
    WalOptions::default().segment_size(SEG)
}

/// xorshift64*: deterministic test randomness.
pub struct Rng(pub u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The payload a writer (`run`, `thread`) commits as its `n`th record:
/// 1 B to 64 KiB, content fixed by the three numbers.
pub fn payload(run: u64, thread: u64, n: u64) -> Vec<u8> {
    let mut r = Rng::new(run.wrapping_mul(1_000_003) ^ (thread << 40) ^ n);
    let len = 1 + r.below(64 << 10) as usize;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

pub fn hash(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

pub fn read_all(wal: &Wal) -> Vec<Record> {
    wal.read_from(Lsn(0))
        .expect("reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("read back")
}

pub fn seg_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    v.sort();
    v
}

/// Opens a log with committed records spread over 4 segments and closes
/// it; returns the records.
pub fn build_log(d: &Path) -> Vec<Record> {
    build_log_with(d, opts())
}

/// [`build_log`] with options `o` (padded flushes or not, say).
pub fn build_log_with(d: &Path, o: WalOptions) -> Vec<Record> {
    let wal = Wal::open(d, o).unwrap();
    while wal.stats().switches < 3 {
        let n = wal.next_lsn().0;
        wal.commit(&payload(4, 0, n)).unwrap();
    }
    for _ in 0..3 {
        let n = wal.next_lsn().0;
        wal.commit(&payload(4, 0, n)).unwrap();
    }
    let recs = read_all(&wal);
    wal.close().unwrap();
    recs
}

pub fn modify(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    std::fs::write(path, &b).unwrap();
}

/// Offset of the record with `lsn` in a segment file (scanning headers).
pub fn record_offset(path: &Path, lsn: u64) -> Option<usize> {
    let b = std::fs::read(path).unwrap();
    // Format 1 aligns records to 8 bytes; format 2 to 16, and marks
    // padding with bit 31 of the length word (docs/wal-format.md).
    let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
    let align = if version == 1 { 8 } else { 16 };
    let mut off = 64;
    while off + 16 <= b.len() {
        let word = u32::from_le_bytes(b[off..off + 4].try_into().unwrap());
        let l = u64::from_le_bytes(b[off + 8..off + 16].try_into().unwrap());
        let pad = version != 1 && word & (1 << 31) != 0;
        if l == lsn && !pad {
            return Some(off);
        }
        if word == 0 && l == 0 {
            return None;
        }
        let len = (word & !(1 << 31)) as usize;
        off += (16 + len).div_ceil(align) * align;
    }
    None
}

pub fn expect_corrupt(e: Error, path: &Path) {
    match &e {
        Error::Corrupt { path: p, .. } => assert_eq!(p, path, "{e}"),
        other => panic!("expected Corrupt naming {}: {other}", path.display()),
    }
    assert_eq!(e.raw_os_error(), Some(libc::EUCLEAN));
    assert!(e.to_string().contains("offset"), "{e}");
}
