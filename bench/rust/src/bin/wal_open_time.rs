//! How long `Wal::open` takes on a log of several live segments.
//!
//! `cargo run --release -p fspace-bench --bin wal_open_time -- DIR [SEGMENTS] [OPENS]`
//! builds a log in `DIR/wal-open-time` with SEGMENTS (default 16) live
//! 1 MiB segments, then opens and closes it OPENS (default 20) times,
//! releasing the segment each open adds so the log keeps its size, and
//! prints the median and min-max of the opens in milliseconds. Used by
//! `bench/wal_ab.py`-style comparisons of two builds (run it from each).

use fspace::wal::{Lsn, Wal, WalOptions};
use std::time::Instant;

fn main() -> fspace::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| ".".into());
    let segments: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(16);
    let opens: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let d = std::path::Path::new(&dir).join("wal-open-time");
    let _ = std::fs::remove_dir_all(&d);
    let o = WalOptions::default().segment_size(1 << 20);
    let wal = Wal::open(&d, o.clone())?;
    let rec = vec![7u8; 64 << 10];
    while wal.stats().switches < segments {
        wal.commit(&rec)?;
    }
    wal.close()?;
    let mut times = vec![];
    for _ in 0..opens {
        let t = Instant::now();
        let wal = Wal::open(&d, o.clone())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        // Keep the log the same size: release what the open added.
        let first = wal.segments().get(1).map_or(Lsn(0), |s| s.first_lsn);
        wal.release_before(first)?;
        wal.close()?;
    }
    let live = Wal::open(&d, o)?.segments().len();
    times.sort_by(f64::total_cmp);
    println!(
        "open of a log with {live} live segments: median {:.2} ms, min-max {:.2}-{:.2} ms over {opens} opens",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
    let _ = std::fs::remove_dir_all(&d);
    Ok(())
}
