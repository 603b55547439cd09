//! The record CRC's speed: the log's CRC-32C against `crc-fast`, in one run.
//!
//! `cargo run --release -p fspace-bench --bin crc_speed -- [SIZE] [ROUNDS]`
//! times CRC-32C of SIZE bytes (default 8208: an 8 KiB record with its
//! 16-byte header) with `fspace::internals::crc32c_append` (what the log
//! uses) and with `crc-fast` alone (what it used before), alternating the
//! two in each of ROUNDS rounds (default 7) of 200,000 calls each, and
//! prints ns per call, the per-round ratio, and the median with the
//! min-max of the rounds.

use fspace::internals::{crc32c_append, crc32c_append_portable, crc32c_folds};
use fspace_bench::{median, range};
use std::hint::black_box;
use std::time::Instant;

fn time(f: impl Fn(&[u8]) -> u32, data: &[u8], calls: u32) -> f64 {
    let t = Instant::now();
    let mut x = 0u32;
    for _ in 0..calls {
        x ^= f(black_box(data));
    }
    black_box(x);
    t.elapsed().as_nanos() as f64 / f64::from(calls)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(8208);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(7);
    let calls = 200_000;
    let data: Vec<u8> = (0..size).map(|i| (i * 131 + 17) as u8).collect();
    assert_eq!(
        crc32c_append(0, &data),
        crc32c_append_portable(0, &data),
        "the two CRCs disagree"
    );
    println!(
        "# CRC-32C of {size} bytes, {calls} calls per measurement; fold with VPCLMULQDQ here: {}",
        crc32c_folds()
    );
    println!("# round  crc-fast ns  fspace ns  crc-fast ÷ fspace");
    let mut ratios = vec![];
    for r in 0..rounds {
        // Alternate which goes first.
        let (a, b) = if r % 2 == 0 {
            let a = time(|d| crc32c_append_portable(0, d), &data, calls);
            (a, time(|d| crc32c_append(0, d), &data, calls))
        } else {
            let b = time(|d| crc32c_append(0, d), &data, calls);
            (time(|d| crc32c_append_portable(0, d), &data, calls), b)
        };
        println!("{:7} {a:12.0} {b:10.0} {:18.2}", r + 1, a / b);
        ratios.push(a / b);
    }
    let (lo, hi) = range(&ratios);
    let m = median(&ratios);
    println!("fspace is {m:.2}x as fast as crc-fast (rounds {lo:.2}-{hi:.2})");
}
