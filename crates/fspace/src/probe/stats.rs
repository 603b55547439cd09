//! Statistics of the probe's rounds: medians, the summary of one space
//! state's runs, and the UTC date formatter of its reports.

use super::schema::*;
use crate::bench::SpaceState;

pub(super) fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub(super) fn summarize(state: SpaceState, rs: &[crate::bench::CommitResult]) -> StateResult {
    let mut notes: Vec<String> = vec![];
    for r in rs {
        // Each run ends when its file is used up: that is the design here
        // (see `runs`), not worth a note per run.
        for n in r
            .notes
            .iter()
            .filter(|n| !n.starts_with("stopped after one pass"))
        {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let unsupported = rs.iter().find_map(|r| r.unsupported.clone());
    let ok: Vec<&crate::bench::CommitResult> =
        rs.iter().filter(|r| r.unsupported.is_none()).collect();
    let rounds: Vec<f64> = ok.iter().map(|r| r.commits_per_sec).collect();
    let mut p50: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency.as_ref().map(|l| l.p50_us))
        .collect();
    let mut p99: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency.as_ref().map(|l| l.p99_us))
        .collect();
    StateResult {
        state,
        unsupported,
        commits_per_sec: median(&mut rounds.clone()),
        runs: rounds,
        p50_us: median(&mut p50),
        p99_us: median(&mut p99),
        commits: ok.iter().map(|r| r.commits).sum(),
        vs_append: None,
        wal: ok.last().and_then(|r| r.wal.clone()),
        notes,
    }
}

/// Formats Unix seconds as `YYYY-MM-DD HH:MM:SS UTC` (civil-from-days,
/// proleptic Gregorian).
pub(crate) fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_342_923), "2026-11-22 10:22:03 UTC");
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut []), 0.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0]), 2.5);
    }
}
