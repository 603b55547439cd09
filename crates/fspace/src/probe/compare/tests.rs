//! Tests of the comparison: the verdict's rules and batches.
use super::*;

/// A batch of `runs` against `saved` runs, judged as the comparison
/// judges it.
fn batch(saved: &[f64], runs: &[f64], threshold: f64) -> Batch {
    let mut saved_sorted = saved.to_vec();
    let saved_median = super::super::stats::median(&mut saved_sorted);
    let median = super::super::stats::median(&mut runs.to_vec());
    let ratio = ratio_of(median, saved_median);
    let p_value = p_greater(saved, runs);
    Batch {
        slower: ratio < 1.0 - threshold && p_value <= ALPHA,
        runs: runs.to_vec(),
        commits_per_sec: median,
        ratio,
        p_value,
    }
}

/// The rule at the default threshold against a baseline measured on a
/// quiet machine.
fn rule(smallest: f64, busy: bool) -> Rule {
    Rule {
        threshold: 0.2,
        smallest,
        busy,
        from_baseline: true,
        busy_baseline: false,
    }
}

const SAVED: [f64; 8] = [900.0, 950.0, 980.0, 1000.0, 1000.0, 1020.0, 1050.0, 1100.0];

/// A batch within the threshold is no change, whatever the test says,
/// and asks for no second batch.
#[test]
fn within_the_threshold_is_no_change() {
    let b = batch(&SAVED, &[800.0, 810.0, 820.0, 830.0, 840.0], 0.2);
    assert!(b.ratio > 0.8 && b.p_value <= ALPHA, "{b:?}");
    assert!(!b.slower);
    let smallest = smallest_p(SAVED.len(), 5);
    assert!(!needs_confirmation(&b, &rule(smallest, false)));
    assert_eq!(
        conclude(&[b], &rule(smallest, false)).0,
        CompareVerdict::NoChange
    );
}

/// The false alarm: a median 30% below, from runs that overlap
/// the saved ones (p = 0.47), is no evidence: no change, with a note.
#[test]
fn a_lower_median_without_separation_is_no_evidence() {
    let saved = [811.0, 2000.0, 2801.0];
    let b = batch(&saved, &[500.0, 900.0, 1400.0, 2500.0, 3000.0], 0.2);
    assert!(b.ratio < 0.8, "{b:?}");
    assert!(b.p_value > ALPHA, "{b:?}");
    let smallest = smallest_p(saved.len(), 5);
    assert!(!needs_confirmation(&b, &rule(smallest, false)));
    let (v, why, note) = conclude(&[b], &rule(smallest, false));
    assert_eq!((v, why), (CompareVerdict::NoChange, None));
    assert!(note.unwrap().contains("no evidence"));
}

/// Slower with evidence needs a second batch; both slower on a quiet
/// machine is a regression, a second batch that is not makes it no
/// change.
#[test]
fn a_regression_is_confirmed_by_a_second_batch() {
    let slow = [450.0, 480.0, 500.0, 520.0, 540.0];
    let first = batch(&SAVED, &slow, 0.2);
    assert!(first.slower);
    assert!((first.p_value - 1.0 / 1287.0).abs() < 1e-12, "{first:?}");
    let smallest = smallest_p(SAVED.len(), 5);
    assert!(needs_confirmation(&first, &rule(smallest, false)));
    let second = batch(&SAVED, &slow, 0.2);
    assert_eq!(
        conclude(&[first.clone(), second], &rule(smallest, false)).0,
        CompareVerdict::Regressed
    );
    let back = batch(&SAVED, &[950.0, 990.0, 1000.0, 1010.0, 1060.0], 0.2);
    let (v, _, note) = conclude(&[first, back], &rule(smallest, false));
    assert_eq!(v, CompareVerdict::NoChange);
    assert!(note.unwrap().contains("not a lasting change"));
}

/// On a busy machine a slowdown with evidence is "could not tell":
/// no second batch is measured, and no regression is called.
#[test]
fn a_busy_machine_cannot_tell() {
    let slow = [450.0, 480.0, 500.0, 520.0, 540.0];
    let first = batch(&SAVED, &slow, 0.2);
    let smallest = smallest_p(SAVED.len(), 5);
    assert!(!needs_confirmation(&first, &rule(smallest, true)));
    assert_eq!(
        conclude(std::slice::from_ref(&first), &rule(smallest, true)),
        (
            CompareVerdict::CouldNotTell,
            Some(CouldNotTell::MachineBusy),
            None
        )
    );
    // Busy only after the second batch: still not a regression.
    let second = batch(&SAVED, &slow, 0.2);
    assert_eq!(
        conclude(&[first, second], &rule(smallest, true)).0,
        CompareVerdict::CouldNotTell
    );
    // A busy machine and no slowdown: no change.
    let fine = batch(&SAVED, &[990.0, 1000.0, 1000.0, 1010.0, 1020.0], 0.2);
    assert_eq!(
        conclude(&[fine], &rule(smallest, true)).0,
        CompareVerdict::NoChange
    );
}

/// Too few runs for the rank test to ever reach ALPHA: a lower median
/// is "could not tell", never a regression (1 saved run against 5:
/// at best 1/6).
#[test]
fn too_few_rounds_cannot_tell() {
    let saved = [1000.0];
    let b = batch(&saved, &[400.0, 410.0, 420.0, 430.0, 440.0], 0.2);
    let smallest = smallest_p(1, 5);
    assert!(smallest > ALPHA);
    assert!(!needs_confirmation(&b, &rule(smallest, false)));
    assert_eq!(
        conclude(&[b], &rule(smallest, false)).1,
        Some(CouldNotTell::TooFewRounds)
    );
}

/// A second batch that is not slower ends it as no change, even when
/// the machine was busy by then; a slower one on a busy machine is
/// "could not tell".
#[test]
fn a_second_batch_that_is_not_slower_is_no_change_even_when_busy() {
    let smallest = smallest_p(SAVED.len(), 5);
    let first = batch(&SAVED, &[450.0, 480.0, 500.0, 520.0, 540.0], 0.2);
    let back = batch(&SAVED, &[950.0, 990.0, 1000.0, 1010.0, 1060.0], 0.2);
    assert_eq!(
        conclude(&[first.clone(), back], &rule(smallest, true)).0,
        CompareVerdict::NoChange
    );
    let again = batch(&SAVED, &[450.0, 480.0, 500.0, 520.0, 540.0], 0.2);
    assert_eq!(
        conclude(&[first, again], &rule(smallest, true)).1,
        Some(CouldNotTell::MachineBusy)
    );
}

/// A baseline measured on a busy machine: not slower than it is
/// "could not tell" (a slower disk would not show); slower than it,
/// confirmed, is still a regression.
#[test]
fn a_busy_baseline_cannot_vouch_for_the_disk() {
    let smallest = smallest_p(SAVED.len(), 5);
    let r = Rule {
        busy_baseline: true,
        ..rule(smallest, false)
    };
    let fine = batch(&SAVED, &[990.0, 1000.0, 1000.0, 1010.0, 1020.0], 0.2);
    assert_eq!(
        conclude(std::slice::from_ref(&fine), &r).1,
        Some(CouldNotTell::BusyBaseline)
    );
    let slow = batch(&SAVED, &[450.0, 480.0, 500.0, 520.0, 540.0], 0.2);
    assert!(needs_confirmation(&slow, &r));
    assert_eq!(
        conclude(&[slow.clone(), slow], &r).0,
        CompareVerdict::Regressed
    );
}

/// A file without a baseline: a lower median is "could not tell", and
/// no second batch is measured; not lower is no change.
#[test]
fn without_a_baseline_a_lower_median_cannot_tell() {
    let saved = [900.0, 1000.0, 1100.0];
    let smallest = smallest_p(saved.len(), 5);
    let r = Rule {
        from_baseline: false,
        ..rule(smallest, false)
    };
    let slow = batch(&saved, &[400.0, 410.0, 420.0, 430.0, 440.0], 0.2);
    assert!(slow.slower);
    assert!(!needs_confirmation(&slow, &r));
    assert_eq!(
        conclude(std::slice::from_ref(&slow), &r).1,
        Some(CouldNotTell::NoBaseline)
    );
    let fine = batch(&saved, &[990.0, 1000.0, 1000.0, 1010.0, 1020.0], 0.2);
    assert_eq!(conclude(&[fine], &r).0, CompareVerdict::NoChange);
}

/// A saved median of 0 (nothing measured) never counts as slower.
#[test]
fn a_zero_saved_rate_is_no_regression() {
    assert_eq!(ratio_of(10.0, 0.0), 1.0);
}
