//! Measures the zero scan behind sparse copies and `dig`: fspace's
//! [`fspace::internals::is_zero`] against a byte-at-a-time loop (the baseline),
//! in one run, over an all-zero buffer, per 4 KiB block as the writer calls it.
//!
//! ```text
//! cargo run --release -p fspace-bench --bin zero_scan [MiB] [rounds]
//! ```
//! Prints GB/s (10^9 bytes per second) for a 1 MiB buffer (cache-resident,
//! as in a copy) and for a buffer of MiB (default 256: main memory), and the
//! ratio to the baseline.

use std::hint::black_box;
use std::time::Instant;

fn naive(b: &[u8]) -> bool {
    // The obvious loop; black_box per byte keeps the compiler from turning
    // it into the vectorised scan we measure against.
    for &x in b {
        if black_box(x) != 0 {
            return false;
        }
    }
    true
}

fn rate(buf: &[u8], rounds: usize, f: impl Fn(&[u8]) -> bool) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        let mut all = true;
        for block in buf.chunks(4096) {
            all &= f(black_box(block));
        }
        assert!(black_box(all));
        best = best.min(t.elapsed().as_secs_f64());
    }
    buf.len() as f64 / best / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let big_mib: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(256);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    for (name, mib, reps) in [("1MiB", 1usize, 200usize), ("big", big_mib, 1)] {
        let buf = vec![0u8; mib << 20];
        // Touch every page so the measurement reads memory, not fresh zero pages.
        let buf: Vec<u8> = buf.iter().map(|&b| black_box(b)).collect();
        let r = rounds * reps;
        let ours = rate(&buf, r, fspace::internals::is_zero);
        let base = rate(&buf, rounds.min(r), naive);
        println!(
            "zero scan {name:>5} ({mib} MiB): fspace {ours:6.1} GB/s   byte loop {base:5.2} GB/s   ratio {:5.1}x",
            ours / base
        );
    }
}
