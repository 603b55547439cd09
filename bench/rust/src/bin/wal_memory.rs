//! Shows that a `Wal`'s memory stays bounded however long the log grows:
//! commits GIB gibibytes of records (a checkpoint releases what is durable
//! every 64 MiB, as a database would) and prints the process's resident
//! memory after each GiB.
//!
//! `cargo run --release -p fspace-bench --bin wal_memory -- DIR [GIB] [RECORD]`
//! (defaults: 8 GiB of 64 KiB records; DIR/wal-memory is removed after).

use fspace::wal::{Wal, WalOptions};

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: wal_memory DIR [GIB] [RECORD]")?);
    let gib: u64 = args.next().map_or(Ok(8), |s| s.parse())?;
    let record: usize = args.next().map_or(Ok(64 << 10), |s| s.parse())?;
    let d = dir.join("wal-memory");
    let wal = Wal::open(&d, WalOptions::default())?;
    let payload = vec![0x5Au8; record];
    let per_gib = (1u64 << 30) / record as u64;
    let per_checkpoint = (64u64 << 20) / record as u64;
    let t0 = std::time::Instant::now();
    println!("GiB written   VmRSS     VmHWM     live segments  elapsed");
    for g in 1..=gib {
        for i in 0..per_gib {
            let lsn = wal.commit(&payload)?;
            if i % per_checkpoint == 0 {
                wal.release_before(lsn)?;
            }
        }
        println!(
            "{g:>9}   {:>6} KiB {:>6} KiB {:>13}  {:.1} s",
            rss_kib("VmRSS:"),
            rss_kib("VmHWM:"),
            wal.segments().len(),
            t0.elapsed().as_secs_f64()
        );
    }
    let st = wal.stats();
    println!(
        "{} records, {} switches, {} segments created, {} recycled",
        st.records, st.switches, st.prepared_created, st.prepared_recycled
    );
    wal.close()?;
    std::fs::remove_dir_all(&d)?;
    Ok(())
}
