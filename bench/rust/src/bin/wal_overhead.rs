//! The log's own cost per commit, with the bare overwrite and the log
//! interleaved in short slices so that both see the same machine.
//!
//! `cargo run --release -p fspace-bench --bin wal_overhead -- DIR [SECONDS] [SLICE_MS] [METHOD]`
//!
//! In DIR (meant for tmpfs, where a flush costs nothing) this pre-writes a
//! 64 MiB file and opens a log, then alternates for SECONDS (default 10):
//! SLICE_MS (default 20) of bare 8 KiB overwrites (`pwrite` at the next
//! 8 KiB of the file + `fdatasync`), then SLICE_MS of 8 KiB `Wal::commit`s
//! with sync method METHOD (default `fdatasync`), the order swapping every
//! pair. Each second's pairs make one window; it prints the log's rate
//! divided by the overwrite's per window, the two rates and their ratio
//! overall, and the median and min-max of the windows. On this noisy VM two
//! `bench commit` runs a few seconds apart differ by 15% in that ratio; the
//! windows of one run here by up to 9%.
//! Durable segments are released between slices (outside the timing), as
//! a database's checkpoints would, so the log recycles its segments.

use fspace::wal::{Wal, WalOptions};
use fspace::SyncMethod;
use fspace_bench::{median, range};
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

const RECORD: usize = 8192;
const FILE: u64 = 64 << 20;

/// Runs `op` in batches of 16 until `slice` has passed; returns (ops, seconds).
fn slice(slice: Duration, mut op: impl FnMut() -> std::io::Result<()>) -> (u64, f64) {
    let t = Instant::now();
    let mut n = 0;
    while t.elapsed() < slice {
        for _ in 0..16 {
            if let Err(e) = op() {
                eprintln!("wal_overhead: {e}");
                std::process::exit(1);
            }
        }
        n += 16;
    }
    (n, t.elapsed().as_secs_f64())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| ".".into()));
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let slice_ms: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    if seconds == 0 || slice_ms == 0 || slice_ms > 500 {
        return Err("SECONDS must be at least 1 and SLICE_MS 1 to 500".into());
    }
    let method: SyncMethod = args
        .next()
        .map(|s| s.parse::<SyncMethod>())
        .transpose()?
        .unwrap_or(SyncMethod::Fdatasync);
    let work = dir.join("wal-overhead");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let buf = vec![0x5Au8; RECORD];
    let file = written_file(&work.join("overwrite"), &buf)?;
    let wal = Wal::open(
        work.join("log"),
        WalOptions::default().sync_method(Some(method)),
    )?;
    wal.wait_prepared()?;
    let mut at = 0u64;
    let mut bare = || {
        file.write_all_at(&buf, at)?;
        at = (at + RECORD as u64) % FILE;
        file.sync_data()
    };
    let mut log = || wal.commit(&buf).map(|_| ()).map_err(std::io::Error::other);
    let each = Duration::from_millis(slice_ms);
    let pairs_per_window = (1000 / (2 * slice_ms)).max(1);
    let (mut windows, mut totals) = (vec![], [(0u64, 0f64); 2]);
    for w in 0..seconds {
        let mut win = [(0u64, 0f64); 2];
        for p in 0..pairs_per_window {
            let first_bare = (w * pairs_per_window + p).is_multiple_of(2);
            for k in 0..2 {
                let is_bare = (k == 0) == first_bare;
                let (n, s) = if is_bare {
                    slice(each, &mut bare)
                } else {
                    slice(each, &mut log)
                };
                let i = usize::from(!is_bare);
                win[i].0 += n;
                win[i].1 += s;
            }
            wal.release_before(wal.durable_lsn())?;
        }
        let rate = |x: (u64, f64)| x.0 as f64 / x.1;
        windows.push(rate(win[1]) / rate(win[0]));
        for i in 0..2 {
            totals[i].0 += win[i].0;
            totals[i].1 += win[i].1;
        }
    }
    wal.close()?;
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "# {RECORD}-byte records, 1 writer, {slice_ms} ms slices alternating, {method} for the log, on {}",
        dir.display()
    );
    report(&windows, totals);
    Ok(())
}

/// A FILE-byte file at `path`, written whole with `buf` and synced.
fn written_file(path: &std::path::Path, buf: &[u8]) -> std::io::Result<std::fs::File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    for off in (0..FILE).step_by(buf.len()) {
        file.write_all_at(buf, off)?;
    }
    file.sync_data()?;
    Ok(file)
}

/// Prints the windows, the overall rates and the windows' median and min-max.
fn report(windows: &[f64], totals: [(u64, f64); 2]) {
    let rate = |x: (u64, f64)| x.0 as f64 / x.1;
    let list: Vec<String> = windows.iter().map(|r| format!("{r:.3}")).collect();
    println!("per-second windows, log ÷ overwrite: {}", list.join(" "));
    let (lo, hi) = range(windows);
    let median = median(windows);
    println!(
        "overwrite {:.0}/s, log {:.0}/s overall ({:.3}); log ÷ overwrite median of the windows {median:.3} (min-max {:.3}-{:.3})",
        rate(totals[0]),
        rate(totals[1]),
        rate(totals[1]) / rate(totals[0]),
        lo,
        hi
    );
}
