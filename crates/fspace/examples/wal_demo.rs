//! Writes a small log to look into with `fspace wal stat|verify|dump`:
//! `cargo run --release -p fspace --example wal_demo -- DIR [RECORDS]`
//! commits RECORDS (default 60) records of 20 to 5,000 bytes into the log in
//! DIR, with 64 KiB segments so that it spans several.

use fspace::wal::{Wal, WalOptions};

fn main() -> fspace::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: wal_demo DIR [RECORDS]");
        std::process::exit(2);
    };
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let opts = WalOptions::default().segment_size(64 << 10);
    let wal = Wal::open(&dir, opts)?;
    for i in 0..n {
        let len = 20 + (i * 4099 % 5000) as usize;
        let rec: Vec<u8> = (0..len).map(|j| ((j as u64 * 7) ^ i) as u8).collect();
        wal.commit(&rec)?;
    }
    println!(
        "{n} records committed to {dir} ({} segments, {})",
        wal.segments().len(),
        wal.stats().io.sync_method
    );
    wal.close()
}
