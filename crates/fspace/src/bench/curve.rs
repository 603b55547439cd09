//! How a mode's commit rate follows the number of threads committing at
//! once: one point per writer count, each with its ratio to the same
//! mode's one-writer rate, and the writer count where adding writers
//! stopped paying. On fast storage a log's behaviour changes completely
//! with the number of writers (group commit shares one sync among them;
//! plain appending serialises on the inode), so one writer's figure says
//! little about sixteen.

use super::types::{CommitResult, SpaceState};
use crate::strategy::SyncMethod;
use serde::Serialize;

/// Most writers one run may start: more threads than this measure the
/// scheduler, not the storage (and a typo like `--writers 10000` would
/// start ten thousand threads).
pub const MAX_WRITERS: usize = 1024;

/// The writer counts the probe's curve measures, and a good first list
/// for `fspace bench commit --writers`: doublings up to 16, where most
/// groups form, then 64, where a busy server's connections are.
pub const CURVE_WRITERS: [usize; 6] = [1, 2, 4, 8, 16, 64];

/// One writer count of a [`WriterCurve`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CurvePoint {
    /// Threads committing at once.
    pub writers: usize,
    /// Why the mode could not run here, if so (the figures are then zero).
    pub unsupported: Option<crate::reason::Reason>,
    /// Commits per second.
    pub commits_per_sec: f64,
    /// Median commit latency, µs.
    pub p50_us: f64,
    /// 99th percentile commit latency, µs.
    pub p99_us: f64,
    /// `commits_per_sec` ÷ the same curve's at one writer (`None` when
    /// one writer was not measured, or measured no commit).
    pub vs_one_writer: Option<f64>,
    /// The log's group commit in that run (its `wal` mode only): groups
    /// and their sizes, its flush time, its waits.
    pub group: Option<crate::wal::GroupStats>,
}

impl CurvePoint {
    /// The point of one run's figures (its ratio is filled in by
    /// [`WriterCurve::new`]).
    pub fn of(r: &CommitResult) -> CurvePoint {
        let l = r.latency.clone().unwrap_or_default();
        CurvePoint {
            writers: r.writers,
            unsupported: r.unsupported.clone(),
            commits_per_sec: r.commits_per_sec,
            p50_us: l.p50_us,
            p99_us: l.p99_us,
            vs_one_writer: None,
            group: r.wal.as_ref().map(|w| w.group.clone()),
        }
    }

    /// Returns true if and only if the point measured commits.
    pub fn measured(&self) -> bool {
        self.unsupported.is_none() && self.commits_per_sec > 0.0
    }
}

/// One mode's commit rate at each writer count measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WriterCurve {
    /// The mode.
    pub state: SpaceState,
    /// The sync method its runs named (`None`: the mode's default).
    pub sync_method: Option<SyncMethod>,
    /// One point per writer count, fewest writers first.
    pub points: Vec<CurvePoint>,
    /// The first writer count whose rate was not above the previous
    /// measured count's: where adding writers stopped paying. `None`:
    /// still scaling at the most writers measured (or fewer than two
    /// counts measured).
    pub stops_scaling_at: Option<usize>,
}

impl WriterCurve {
    /// The curve of `points` (any order; sorted by writer count here,
    /// each count once: the first given wins), with each point's ratio to
    /// the one-writer point and where the rate stopped rising.
    pub fn new(
        state: SpaceState,
        sync_method: Option<SyncMethod>,
        points: Vec<CurvePoint>,
    ) -> WriterCurve {
        let mut points = points;
        points.sort_by_key(|p| p.writers);
        points.dedup_by_key(|p| p.writers);
        let one = points
            .iter()
            .find(|p| p.writers == 1 && p.measured())
            .map(|p| p.commits_per_sec);
        for p in &mut points {
            p.vs_one_writer = one.filter(|_| p.measured()).map(|o| p.commits_per_sec / o);
        }
        let measured: Vec<&CurvePoint> = points.iter().filter(|p| p.measured()).collect();
        let stops_scaling_at = measured
            .windows(2)
            .find(|w| w[1].commits_per_sec <= w[0].commits_per_sec)
            .map(|w| w[1].writers);
        WriterCurve {
            state,
            sync_method,
            points,
            stops_scaling_at,
        }
    }

    /// Returns the point at `writers`, if measured.
    pub fn at(&self, writers: usize) -> Option<&CurvePoint> {
        self.points
            .iter()
            .find(|p| p.writers == writers && p.measured())
    }

    /// Where the curve stops scaling, in words: `stops scaling at 8
    /// writers (no faster than 4)`, `still scaling at 64 writers`, or
    /// `not measured`.
    pub fn scaling_words(&self) -> String {
        let measured: Vec<&CurvePoint> = self.points.iter().filter(|p| p.measured()).collect();
        match (self.stops_scaling_at, measured.last()) {
            (_, None) => "not measured".into(),
            (Some(w), _) => {
                let before = measured
                    .iter()
                    .take_while(|p| p.writers < w)
                    .last()
                    .map_or(0, |p| p.writers);
                format!("stops scaling at {w} writers (no faster than {before})")
            }
            (None, Some(_)) if measured.len() < 2 => "one writer count measured".into(),
            (None, Some(last)) => format!("still scaling at {} writers", last.writers),
        }
    }
}

/// The curves of `results`: one per mode and sync method, in the order
/// they first appear, each with one point per writer count.
pub fn writer_curves(results: &[CommitResult]) -> Vec<WriterCurve> {
    let mut keys: Vec<(SpaceState, Option<SyncMethod>)> = vec![];
    for r in results {
        if !keys.contains(&(r.state, r.sync_method)) {
            keys.push((r.state, r.sync_method));
        }
    }
    keys.into_iter()
        .map(|(state, method)| {
            let points = results
                .iter()
                .filter(|r| r.state == state && r.sync_method == method)
                .map(CurvePoint::of)
                .collect();
            WriterCurve::new(state, method, points)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(writers: usize, rate: f64) -> CurvePoint {
        CurvePoint {
            writers,
            unsupported: None,
            commits_per_sec: rate,
            p50_us: 100.0,
            p99_us: 200.0,
            vs_one_writer: None,
            group: None,
        }
    }

    #[test]
    fn stops_at_the_first_count_no_faster_than_the_one_before() {
        let c = WriterCurve::new(
            SpaceState::Wal,
            None,
            vec![
                point(4, 3000.0),
                point(1, 1000.0),
                point(2, 1800.0),
                point(8, 2900.0),
                point(16, 5000.0),
            ],
        );
        let w: Vec<usize> = c.points.iter().map(|p| p.writers).collect();
        assert_eq!(w, [1, 2, 4, 8, 16]);
        assert_eq!(c.stops_scaling_at, Some(8));
        assert_eq!(c.points[2].vs_one_writer, Some(3.0));
        assert_eq!(
            c.scaling_words(),
            "stops scaling at 8 writers (no faster than 4)"
        );
    }

    #[test]
    fn still_scaling_and_without_one_writer() {
        let c = WriterCurve::new(
            SpaceState::Appended,
            None,
            vec![point(1, 10.0), point(64, 20.0)],
        );
        assert_eq!(c.stops_scaling_at, None);
        assert_eq!(c.scaling_words(), "still scaling at 64 writers");
        let c = WriterCurve::new(
            SpaceState::Appended,
            None,
            vec![point(2, 10.0), point(4, 10.0)],
        );
        assert_eq!(c.stops_scaling_at, Some(4));
        assert!(c.points.iter().all(|p| p.vs_one_writer.is_none()));
    }

    #[test]
    fn unsupported_points_are_skipped() {
        let mut bad = point(2, 0.0);
        bad.unsupported = Some(crate::reason::Reason::new(
            crate::errno::ErrorKind::Unsupported,
            "no",
        ));
        let c = WriterCurve::new(
            SpaceState::Allocated,
            None,
            vec![point(1, 10.0), bad, point(4, 12.0)],
        );
        assert_eq!(c.stops_scaling_at, None);
        assert_eq!(c.points[1].vs_one_writer, None);
        assert!(c.at(2).is_none());
    }
}
