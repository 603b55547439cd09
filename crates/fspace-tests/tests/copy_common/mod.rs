//! What the copy tests share: the source files every copy is tested with,
//! the sparse and reflink modes, and a byte comparison.

#![allow(dead_code)] // each test binary uses its own part

use fspace::{ReflinkMode, SparseMode};
use fspace_test_kit as common;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const MIB: u64 = 1 << 20;

/// The source files every copy is tested with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Random,
    HalfHoles,
    VmImage,
    AllZeros,
    Empty,
    OneByte,
    Unaligned,
    TrailingHole,
}

pub const CASES: [Case; 8] = [
    Case::Random,
    Case::HalfHoles,
    Case::VmImage,
    Case::AllZeros,
    Case::Empty,
    Case::OneByte,
    Case::Unaligned,
    Case::TrailingHole,
];

pub fn make(dir: &Path, case: Case) -> PathBuf {
    let p = dir.join(format!("{case:?}"));
    let f = std::fs::File::create(&p).unwrap();
    match case {
        Case::Random => f
            .write_all_at(&common::random_bytes(1, 3 * MIB as usize + 4096), 0)
            .unwrap(),
        Case::HalfHoles => {
            // 1 MiB data, 1 MiB hole, ... over 8 MiB (ends in a hole).
            for i in (0..8).step_by(2) {
                f.write_all_at(&common::random_bytes(i + 2, MIB as usize), i * MIB)
                    .unwrap();
            }
            f.set_len(8 * MIB).unwrap();
        }
        Case::VmImage => {
            // 6 MiB of data with written zero runs of 4-64 KiB, and a real hole.
            let mut v = common::random_bytes(3, 6 * MIB as usize);
            let mut x = 12345u64;
            let mut off = 8192usize;
            while off < v.len() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let run = 4096 * (1 + (x >> 33) as usize % 16);
                let end = (off + run).min(v.len());
                v[off..end].fill(0);
                off = end + 4096 * (1 + (x >> 40) as usize % 8) + (x >> 50) as usize % 100;
            }
            f.write_all_at(&v[..4 * MIB as usize], 0).unwrap();
            f.write_all_at(&v[4 * MIB as usize..], 5 * MIB).unwrap();
        }
        Case::AllZeros => f.write_all_at(&vec![0u8; 4 * MIB as usize], 0).unwrap(),
        Case::Empty => {}
        Case::OneByte => f.write_all_at(b"x", 0).unwrap(),
        Case::Unaligned => f
            .write_all_at(&common::pattern(5, MIB as usize + 12345), 0)
            .unwrap(),
        Case::TrailingHole => {
            f.write_all_at(&common::random_bytes(6, MIB as usize), 0)
                .unwrap();
            f.set_len(5 * MIB + 100).unwrap();
        }
    }
    f.sync_all().unwrap();
    p
}

pub fn assert_same(a: &Path, b: &Path, what: &str) {
    if let Some(off) = common::first_difference(a, b) {
        panic!(
            "{what}: {} and {} differ at byte {off}",
            a.display(),
            b.display()
        );
    }
}

pub const MODES: [(SparseMode, ReflinkMode); 4] = [
    (SparseMode::Auto, ReflinkMode::Auto),
    (SparseMode::Auto, ReflinkMode::Never),
    (SparseMode::Always, ReflinkMode::Auto),
    (SparseMode::Never, ReflinkMode::Auto),
];
