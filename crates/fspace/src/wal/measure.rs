//! What group commit measures and keeps per log (group.rs decides with it):
//! the running average of a flush, the recent peak of committers, the
//! durable writes in flight, and how groups are counted by size.

use std::time::{Duration, Instant};

/// Weight of a new flush time in the log's running average: 1/8.
const FLUSH_AVG_SHIFT: u32 = 3;

/// A flush time counts at most this many times the running average.
const FLUSH_CLIP: u64 = 4;

/// What group commit has measured and decided, per log.
#[derive(Debug, Default)]
pub(super) struct Group {
    /// Running average of a durable flush's I/O (write and sync, or the
    /// sync alone), in ns; 0 until the first one.
    pub(super) flush_ns: u64,
    /// Most threads seen committing at once, over `PEAK_WINDOW` (writer.rs).
    pub(super) peak_committers: usize,
    pub(super) peak_since: Option<Instant>,
}

impl Group {
    /// Adds the I/O time of one flush to the running average.
    pub(super) fn record_flush(&mut self, took: Duration) {
        let ns = took.as_nanos().min(u128::from(u64::MAX) / 2) as u64;
        add_sample(&mut self.flush_ns, ns);
    }
}

/// Adds `ns` to the running average `avg` (0: none yet). A sample is
/// clipped at [`FLUSH_CLIP`] times the average: a flusher preempted in the
/// middle of its I/O (common with more threads than CPUs) measures the
/// scheduler, not the device. A device that really got slower still moves
/// the average up by a third per flush.
fn add_sample(avg: &mut u64, ns: u64) {
    *avg = if *avg == 0 {
        ns.max(1)
    } else {
        let ns = ns.min(avg.saturating_mul(FLUSH_CLIP));
        // avg += (ns - avg) / 8, in signed steps.
        let a = i128::from(*avg);
        (a + ((i128::from(ns) - a) >> FLUSH_AVG_SHIFT)).max(1) as u64
    };
}

/// Index in [`GroupStats::group_sizes`](crate::wal::GroupStats::group_sizes)
/// of a group of `n` records: 0 for 1, 1 for 2, 2 for 3-4, ..., 7 for more
/// than 64.
pub(super) fn size_bucket(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        ((64 - (n - 1).leading_zeros()) as usize).min(7)
    }
}

/// A durable write in flight (group.rs, `fly`).
#[derive(Debug)]
pub(super) struct InFlight {
    /// Its segment.
    pub(super) seq: u64,
    /// The last LSN it carries.
    pub(super) target: u64,
    /// The segment it made durable (its header, if it carried it).
    pub(super) synced_seq: u64,
    /// It returned.
    pub(super) done: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_sizes_fall_in_their_buckets() {
        let want = [
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (8, 3),
            (9, 4),
            (16, 4),
            (17, 5),
            (32, 5),
            (33, 6),
            (64, 6),
            (65, 7),
            (100_000, 7),
        ];
        for (n, b) in want {
            assert_eq!(size_bucket(n), b, "{n} records");
        }
        // The documented bounds say the same.
        for (i, bound) in crate::wal::GroupStats::SIZE_BOUNDS.iter().enumerate() {
            assert_eq!(size_bucket(*bound), i);
            assert_eq!(size_bucket(bound + 1), i + 1);
        }
    }

    #[test]
    fn a_preempted_flush_moves_the_average_a_bounded_step() {
        let mut g = Group::default();
        for _ in 0..50 {
            g.record_flush(Duration::from_micros(20));
        }
        assert_eq!(g.flush_ns, 20_000);
        // A flusher preempted for 10 ms counts as 4x the average at most.
        g.record_flush(Duration::from_millis(10));
        assert_eq!(g.flush_ns, 20_000 + (80_000 - 20_000) / 8);
        // A device that got slower for good is followed within a few
        // dozen flushes.
        for _ in 0..40 {
            g.record_flush(Duration::from_micros(400));
        }
        assert!(g.flush_ns > 380_000, "{}", g.flush_ns);
    }
}
