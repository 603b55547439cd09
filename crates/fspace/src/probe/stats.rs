//! Statistics of the probe's rounds: medians, the rank test that decides
//! whether one state beat another, and the UTC date formatter of its
//! reports.

/// The median of `v` (sorting it; the mean of the middle two for an even
/// count; 0 when empty).
pub fn median(v: &mut [f64]) -> f64 {
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

/// Significance level of the probe's decisions: a state beats another only
/// when a difference this unlikely by chance (one-sided) separates their
/// runs. With three runs each that takes all three of one above all three
/// of the other (p = 1/20); with two each it cannot happen (p >= 1/6).
pub const ALPHA: f64 = 0.05;

/// Largest number of ways to split the pooled runs that
/// [`p_greater`] enumerates exactly; beyond it, the normal approximation.
pub const EXACT_SPLITS: u64 = 200_000;

/// The one-sided p-value of the Mann-Whitney rank test that the values in
/// `a` tend to be larger than those in `b`: the share of all ways to split
/// the pooled values into groups of `a.len()` and `b.len()` whose rank sum
/// for the first group is at least `a`'s (ties get mid-ranks). Exact up to
/// [`EXACT_SPLITS`] splits (3 against 3 runs: 20), else the normal
/// approximation with a continuity correction. 1.0 when either side is
/// empty.
pub fn p_greater(a: &[f64], b: &[f64]) -> f64 {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return 1.0;
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let ranks = mid_ranks(&pooled);
    let observed: f64 = ranks[..n].iter().sum();
    if choose(n + m, n) <= EXACT_SPLITS {
        let (mut at_least, mut all) = (0u64, 0u64);
        count_splits(&ranks, n, 0, 0.0, observed - 1e-9, &mut at_least, &mut all);
        return at_least as f64 / all as f64;
    }
    p_normal(observed, n, m)
}

/// The smallest p-value [`p_greater`] can give for `n` against `m` runs
/// (all of one above all of the other): 1 ÷ C(n+m, n). Above [`ALPHA`],
/// no outcome of the runs can be significant (2 against 2: 1/6).
pub(crate) fn smallest_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    1.0 / choose(n + m, n) as f64
}

/// The normal approximation of [`p_greater`] for rank sum `observed` of
/// the first of groups of `n` and `m`.
fn p_normal(observed: f64, n: usize, m: usize) -> f64 {
    let (nf, mf) = (n as f64, m as f64);
    let u = observed - nf * (nf + 1.0) / 2.0;
    let mean = nf * mf / 2.0;
    let sd = (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
    let z = (u - mean - 0.5) / sd;
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Ranks 1..=n of `v`, ties sharing the mean of their ranks.
fn mid_ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut ranks = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

/// Counts the `k`-subsets of `ranks[from..]` (added to `sum`) and those
/// whose total reaches `need`.
fn count_splits(
    ranks: &[f64],
    k: usize,
    from: usize,
    sum: f64,
    need: f64,
    at_least: &mut u64,
    all: &mut u64,
) {
    if k == 0 {
        *all += 1;
        if sum >= need {
            *at_least += 1;
        }
        return;
    }
    for i in from..=ranks.len() - k {
        count_splits(ranks, k - 1, i + 1, sum + ranks[i], need, at_least, all);
    }
}

/// n choose k, saturating.
fn choose(n: usize, k: usize) -> u64 {
    let k = k.min(n - k);
    let mut c: u64 = 1;
    for i in 0..k {
        c = c.saturating_mul((n - i) as u64) / (i as u64 + 1);
    }
    c
}

/// The complementary error function (Numerical Recipes' erfcc, relative
/// error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The smallest and largest of `v` (0, 0 when empty).
pub fn range(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
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
    fn rank_test_exact_values() {
        // All three above all three: 1 split of 20.
        assert!((p_greater(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]) - 0.05).abs() < 1e-12);
        // Two against two can never reach ALPHA.
        assert!((p_greater(&[3.0, 4.0], &[1.0, 2.0]) - 1.0 / 6.0).abs() < 1e-12);
        // One overlap among 3 and 3: U = 8 of 9, P(U >= 8) = 2/20.
        assert!((p_greater(&[2.5, 5.0, 6.0], &[1.0, 2.0, 3.0]) - 0.1).abs() < 1e-12);
        // The other direction, and all ties.
        assert!((p_greater(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 1.0).abs() < 1e-12);
        assert!((p_greater(&[1.0; 3], &[1.0; 3]) - 1.0).abs() < 1e-12);
        assert_eq!(p_greater(&[], &[1.0]), 1.0);
        // The most one-sided split is what smallest_p says.
        assert!((smallest_p(3, 3) - 0.05).abs() < 1e-12);
        assert!((smallest_p(2, 2) - 1.0 / 6.0).abs() < 1e-12);
        assert!((smallest_p(1, 3) - 0.25).abs() < 1e-12);
        assert_eq!(smallest_p(0, 3), 1.0);
    }

    #[test]
    fn rank_test_normal_approximation_agrees() {
        // 12 against 12 (2.7 million splits): approximated. Separated
        // samples give a tiny p; interleaved ones about a half.
        let a: Vec<f64> = (0..12).map(|i| 100.0 + f64::from(i)).collect();
        let b: Vec<f64> = (0..12).map(f64::from).collect();
        assert!(p_greater(&a, &b) < 1e-4);
        let c: Vec<f64> = (0..12).map(|i| f64::from(2 * i)).collect();
        let d: Vec<f64> = (0..12).map(|i| f64::from(2 * i + 1)).collect();
        let p = p_greater(&c, &d);
        assert!((0.4..0.7).contains(&p), "{p}");
        // Exact and approximate agree: 8 against 8 (12,870 splits, exact)
        // against the formula on the same rank sum.
        let e: Vec<f64> = (0..8).map(|i| f64::from(i + 3)).collect();
        let f: Vec<f64> = (0..8).map(|i| f64::from(i) + 0.5).collect();
        let exact = p_greater(&e, &f);
        let ranks = mid_ranks(&e.iter().chain(&f).copied().collect::<Vec<_>>());
        let approx = p_normal(ranks[..8].iter().sum(), 8, 8);
        assert!((0.01..0.2).contains(&exact), "{exact}");
        assert!((exact - approx).abs() < 0.01, "{exact} {approx}");
        assert!((erfc(0.0) - 1.0).abs() < 1e-7 && (erfc(1.0) - 0.157_299_2).abs() < 1e-6);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut []), 0.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0]), 2.5);
    }
}
