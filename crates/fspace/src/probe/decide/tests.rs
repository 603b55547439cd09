//! Unit tests of the probe's decisions ([`super`]).
use super::super::verdict::TIE_MARGIN;
use super::*;
use crate::bench::SpaceState;
use crate::strategy::{Intent, SyncMethod};

/// A state measured in three runs 3% apart around `rate` (negative:
/// unsupported).
fn st(state: SpaceState, rate: f64) -> StateResult {
    with_runs(state, &[rate * 0.97, rate, rate * 1.03])
}

/// A state measured in `runs` (the first negative: unsupported).
fn with_runs(state: SpaceState, runs: &[f64]) -> StateResult {
    let bad = runs.first().is_some_and(|r| *r < 0.0);
    let runs: Vec<f64> = if bad { vec![] } else { runs.to_vec() };
    let median = super::super::stats::median(&mut runs.clone());
    StateResult {
        state,
        unsupported: bad.then(|| {
            crate::reason::Reason::errno(95, "fallocate(x): Operation not supported (os error 95)")
        }),
        commits_per_sec: median,
        runs_p50_us: runs.iter().map(|r| 1e6 / r).collect(),
        runs,
        p50_us: if median > 0.0 { 1e6 / median } else { 0.0 },
        p99_us: 2.0,
        commits: if median > 0.0 { 100 } else { 0 },
        vs_append: None,
        wal: None,
        notes: vec![],
    }
}

fn info(kind: crate::fs_info::FsKind) -> FsInfo {
    let mut i = crate::fs_info::identify(std::path::Path::new("/")).unwrap();
    i.kind = kind;
    i.fs_type = Some(kind.name());
    i.copy_on_write = kind.is_copy_on_write();
    i
}

fn states(r: [f64; 7]) -> Vec<StateResult> {
    SpaceState::ALL
        .iter()
        .zip(r)
        .map(|(&s, r)| st(s, r))
        .collect()
}

#[test]
fn ext4_like_picks_zero_fill_and_says_why() {
    // append, sparse, allocated, write-zeroed, zero-filled, recycled, wal
    let s = states([1830.0, 1900.0, 3100.0, -1.0, 7034.0, 7100.0, 6900.0]);
    let r = log(&info(crate::fs_info::FsKind::Ext4), &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill);
    assert_eq!(r.recycle, Some(true));
    assert!(
        r.reason
            .starts_with("7,034 commits/s vs 1,830 appending (3.8x)"),
        "{}",
        r.reason
    );
    assert!(r.reason.contains("journal commit"), "{}", r.reason);
}

#[test]
fn ties_prefer_cheaper_preparation() {
    let s = states([
        50_000.0, 52_000.0, 50_500.0, -1.0, 53_000.0, 52_000.0, 40_000.0,
    ]);
    let r = log(&info(crate::fs_info::FsKind::Tmpfs), &s, true);
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    assert!(r.reason.contains("memory-copy rates"), "{}", r.reason);
}

#[test]
fn cow_never_zero_fill() {
    let s = states([1000.0, 1050.0, 1040.0, -1.0, 1300.0, 1000.0, 1000.0]);
    let r = log(&info(crate::fs_info::FsKind::Zfs), &s, true);
    assert_eq!(r.strategy, Strategy::Sparse, "{}", r.reason);
    assert_eq!(r.recycle, Some(false));
    assert!(
        r.reason.contains("ruled out: copy-on-write"),
        "{}",
        r.reason
    );
    // Allocate wins on copy-on-write only when clearly faster.
    let s = states([1000.0, 1000.0, 1200.0, -1.0, 1100.0, 1000.0, 1000.0]);
    assert_eq!(
        log(&info(crate::fs_info::FsKind::Zfs), &s, true).strategy,
        Strategy::Allocate
    );
}

/// On btrfs zero-filled log space is NOCOW (LOG_NOCOW_ON): the
/// recommendation is what fspace's log does there, zero-fill, when the
/// copy-on-write preparations tie with it, and says why.
#[test]
fn btrfs_recommends_the_logs_nocow_zero_fill() {
    let btrfs = info(crate::fs_info::FsKind::Btrfs);
    // appended, sparse, allocated, write-zeroed, zero-filled, recycled, log
    let s = states([1000.0, 1040.0, 1000.0, -1.0, 1000.0, 1010.0, 1000.0]);
    let r = log(&btrfs, &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert_eq!(
        r.strategy,
        crate::policy::built_in(&btrfs, Intent::Log).first()
    );
    assert!(
        r.summary.starts_with("NOCOW zero-fill segments"),
        "{}",
        r.summary
    );
    assert!(r.reason.contains("NOCOW"), "{}", r.reason);
    assert!(!r.reason.contains("ruled out"), "{}", r.reason);
    // Recycled NOCOW segments are written blocks, as on ext4.
    assert_eq!(r.recycle, Some(true), "{}", r.reason);
}

#[test]
fn cow_preference_holds_when_the_fastest_is_ruled_out() {
    // zero-filled 1000 (ruled out), sparse 850, allocate 880: sparse,
    // as allocate is not more than the margin faster than it.
    let s = states([800.0, 850.0, 880.0, -1.0, 1000.0, 800.0, 800.0]);
    let r = log(&info(crate::fs_info::FsKind::Zfs), &s, true);
    assert_eq!(r.strategy, Strategy::Sparse, "{}", r.reason);
    assert!(r.reason.contains("ruled out"), "{}", r.reason);
}

#[test]
fn holes_are_no_log_preparation_in_place() {
    // Sparse measured fastest on an in-place filesystem: not chosen.
    let s = states([1000.0, 5000.0, 1000.0, -1.0, 4800.0, 4900.0, 4700.0]);
    let r = log(&info(crate::fs_info::FsKind::Ext4), &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert!(r.reason.contains("sparse measured 5,000"), "{}", r.reason);
}

#[test]
fn remote_never_fallocate() {
    let mut i = info(crate::fs_info::FsKind::Fuse);
    i.network = true;
    let s = states([1000.0, 1000.0, 3000.0, -1.0, 1500.0, 1500.0, 1500.0]);
    let r = log(&i, &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert!(r.reason.contains("network/FUSE"), "{}", r.reason);
}

#[test]
fn no_fallocate_never_picks_it() {
    let s = states([800.0, 820.0, -1.0, -1.0, 2500.0, 2600.0, 2400.0]);
    let r = log(&info(crate::fs_info::FsKind::Ext4), &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill);
    assert!(
        r.reason.contains("fallocate is not supported"),
        "{}",
        r.reason
    );
}

#[test]
fn noise_leaves_the_built_in_choice_and_says_so() {
    // The user's flipped ext4 probe: zero-filled 1,412, 1,453, 5,631
    // commits/s against allocated 1,775, 1,302, 2,177. The medians favour
    // allocate by 22%; the runs do not.
    let mut s = states([900.0, 900.0, 1.0, -1.0, 1.0, 1500.0, 1500.0]);
    s[2] = with_runs(SpaceState::Allocated, &[1775.0, 1302.0, 2177.0]);
    s[4] = with_runs(SpaceState::ZeroFilled, &[1412.0, 1453.0, 5631.0]);
    let r = log(&info(crate::fs_info::FsKind::Ext4), &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert!(r.too_noisy);
    assert!(
        r.reason.contains("too noisy to decide between zero-fill and allocate: allocate 1,302-2,177 against zero-fill 1,412-5,631 commits/s"),
        "{}",
        r.reason
    );
    // Recycled slower in the medians only: still recycled.
    assert_eq!(r.recycle, Some(true), "{}", r.reason);
    // The same gap with runs that separate decides it.
    s[2] = with_runs(SpaceState::Allocated, &[1900.0, 2000.0, 2100.0]);
    s[4] = with_runs(SpaceState::ZeroFilled, &[1400.0, 1450.0, 1500.0]);
    let r = log(&info(crate::fs_info::FsKind::Ext4), &s, true);
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    assert!(!r.too_noisy);
    assert!(r.reason.contains("allocate beat zero-fill (the built-in choice) across the runs: 1,900-2,100 against 1,400-1,500 commits/s over 3 runs and 3 runs (rank test p = 0.050)"), "{}", r.reason);
}

#[test]
fn latency_against_throughput_is_too_noisy() {
    let mut s = states([900.0, 900.0, 1.0, -1.0, 1.0, 1500.0, 1500.0]);
    s[2] = with_runs(SpaceState::Allocated, &[1900.0, 2000.0, 2100.0]);
    s[4] = with_runs(SpaceState::ZeroFilled, &[1400.0, 1450.0, 1500.0]);
    // Faster runs, but every median latency worse.
    s[2].runs_p50_us = vec![900.0, 910.0, 920.0];
    s[4].runs_p50_us = vec![600.0, 610.0, 620.0];
    let r = log(&info(crate::fs_info::FsKind::Ext4), &s, true);
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert!(r.too_noisy, "{}", r.reason);
}

#[test]
fn recycling_stops_only_when_the_runs_say_so() {
    // Zero-filled and recycled segments are the same physical state: the
    // runs may separate them, recycling stays.
    let mut s = states([900.0, 900.0, 400.0, -1.0, 3000.0, 2000.0, 2800.0]);
    let ext4 = info(crate::fs_info::FsKind::Ext4);
    let r = log(&ext4, &s, true);
    assert_eq!(r.recycle, Some(true), "{}", r.reason);
    assert!(
        r.reason.contains("the difference is the measurement's"),
        "{}",
        r.reason
    );
    // Allocated (unwritten) space chosen: recycled (written) space that
    // measured slower across the runs is not recycled.
    s[2] = st(SpaceState::Allocated, 5000.0);
    let r = log(&ext4, &s, true);
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    assert_eq!(r.recycle, Some(false), "{}", r.reason);
    assert!(
        r.reason.contains("recycled segments measured slower"),
        "{}",
        r.reason
    );
    // ...but overlapping runs are no reason to stop.
    s[5] = with_runs(SpaceState::Recycled, &[1500.0, 5300.0, 2000.0]);
    assert_eq!(log(&ext4, &s, true).recycle, Some(true));
}

fn methods(r: [f64; 4]) -> Vec<SyncMethodResult> {
    SyncMethod::ALL
        .iter()
        .zip(r)
        .map(|(&method, r)| SyncMethodResult {
            method,
            figures: st(SpaceState::Recycled, r),
        })
        .collect()
}

#[test]
fn sync_method_built_in_unless_beaten_never_fsync() {
    use super::super::verdict::sync_choice;
    let ext4 = info(crate::fs_info::FsKind::Ext4);
    // fdatasync, fsync, dsync, direct-dsync
    let c = sync_choice(&ext4, &methods([3000.0, 2500.0, 3100.0, 3200.0]), true).unwrap();
    assert_eq!(c.method, SyncMethod::DirectDsync, "{}", c.reason);
    assert!(
        c.reason
            .contains("fdatasync 3,000, fsync 2,500, dsync 3,100"),
        "{}",
        c.reason
    );
    let c = sync_choice(&ext4, &methods([4000.0, 2500.0, 3100.0, 3200.0]), true).unwrap();
    assert_eq!(c.method, SyncMethod::Fdatasync, "{}", c.reason);
    assert!(
        c.reason.contains("fdatasync beat direct-dsync"),
        "{}",
        c.reason
    );
    // fsync fastest: never chosen.
    let c = sync_choice(&ext4, &methods([3000.0, 9000.0, 3100.0, 3200.0]), true).unwrap();
    assert_eq!(c.method, SyncMethod::DirectDsync, "{}", c.reason);
    // btrfs: fdatasync built in; direct-dsync must beat it.
    let btrfs = info(crate::fs_info::FsKind::Btrfs);
    let c = sync_choice(&btrfs, &methods([3000.0, 2500.0, 3100.0, 3200.0]), true).unwrap();
    assert_eq!(c.method, SyncMethod::Fdatasync, "{}", c.reason);
    // Remote: fdatasync whatever.
    let mut fuse = info(crate::fs_info::FsKind::Fuse);
    fuse.network = true;
    let c = sync_choice(&fuse, &methods([1000.0, 900.0, 3100.0, 5200.0]), true).unwrap();
    assert_eq!(c.method, SyncMethod::Fdatasync, "{}", c.reason);
    // Overlapping runs: too noisy, the built-in stands.
    let mut m = methods([3000.0, 2500.0, 3100.0, 3200.0]);
    m[0].figures = with_runs(SpaceState::Recycled, &[1500.0, 4500.0, 4400.0]);
    m[3].figures = with_runs(SpaceState::Recycled, &[3000.0, 3900.0, 2000.0]);
    let c = sync_choice(&ext4, &m, true).unwrap();
    assert_eq!(c.method, SyncMethod::DirectDsync, "{}", c.reason);
    assert!(c.too_noisy, "{}", c.reason);
}

#[test]
fn chosen_is_built_in_or_beat_it() {
    use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest};
    proptest!(|(r in proptest::collection::vec(proptest::collection::vec(-1.0f64..1e5, 1..5), 7), cow in any::<bool>())| {
        let s: Vec<StateResult> = SpaceState::ALL
            .iter()
            .zip(&r)
            .map(|(&st, runs)| with_runs(st, runs))
            .collect();
        let kind = if cow { crate::fs_info::FsKind::Zfs } else { crate::fs_info::FsKind::Xfs };
        let i = info(kind);
        let rec = log(&i, &s, true);
        let allowed_states: &[SpaceState] = if cow {
            &[SpaceState::Sparse, SpaceState::Allocated]
        } else {
            &[SpaceState::Allocated, SpaceState::WriteZeroed, SpaceState::ZeroFilled]
        };
        let measured = |x: &SpaceState| s.iter().any(|y| y.state == *x && y.measured());
        if !allowed_states.iter().any(measured) {
            prop_assert!(!rec.measured);
            return Ok(());
        }
        prop_assert!(rec.measured);
        let chosen = SpaceState::of_strategy(rec.strategy).unwrap();
        prop_assert!(allowed_states.contains(&chosen));
        let c = log_contest(&i, &s).unwrap();
        if rec.strategy != c.standing.0 {
            // Only a significant difference moves it off the built-in.
            prop_assert!(!rec.too_noisy);
            prop_assert_eq!(rec.strategy, c.challenger.0);
            let p = super::super::stats::p_greater(&c.challenger.1.runs, &c.standing.1.runs);
            prop_assert!(p <= super::super::stats::ALPHA, "p = {}", p);
            prop_assert!(c.challenger.1.commits_per_sec >= (1.0 + TIE_MARGIN) * c.standing.1.commits_per_sec);
            prop_assert!(rec.reason.contains("across the runs"));
        }
    });
}

#[test]
fn the_log_itself_must_confirm_a_change() {
    let mut s = states([900.0, 900.0, 1.0, -1.0, 1.0, 1500.0, 1500.0]);
    s[2] = with_runs(SpaceState::Allocated, &[1900.0, 2000.0, 2100.0]);
    s[4] = with_runs(SpaceState::ZeroFilled, &[1400.0, 1450.0, 1500.0]);
    let ext4 = info(crate::fs_info::FsKind::Ext4);
    let check = |confirmed| LogCheck {
        setup: "allocate segments, direct-dsync".into(),
        built_in_setup: "zero-fill segments, direct-dsync".into(),
        recommended: with_runs(SpaceState::Wal, &[1000.0, 1500.0, 1200.0]),
        built_in: with_runs(SpaceState::Wal, &[1400.0, 1300.0, 1450.0]),
        confirmed,
    };
    let r = recommend(&ext4, &s, &[], &[], Some(&check(false)));
    assert_eq!(r[0].strategy, Strategy::ZeroFill, "{}", r[0].reason);
    assert!(
        r[0].reason.contains("but fspace's log set up that way (allocate segments, direct-dsync) did not beat its built-in setup (zero-fill segments, direct-dsync): 1,000-1,500 against 1,300-1,450 commits/s over 3 and 3 alternating runs"),
        "{}",
        r[0].reason
    );
    let r = recommend(&ext4, &s, &[], &[], Some(&check(true)));
    assert_eq!(r[0].strategy, Strategy::Allocate, "{}", r[0].reason);
}

/// Growth of 256 MiB by `s`, one round per time in `secs`.
fn grew(s: Strategy, secs: &[f64]) -> GrowthResult {
    let bytes = 256u64 << 20;
    let runs: Vec<f64> = secs.iter().map(|t| bytes as f64 / t).collect();
    // The median round's rate, as the probe reports it.
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let rate = sorted[(sorted.len() - 1) / 2];
    GrowthResult {
        strategy: s,
        unsupported: None,
        bytes,
        seconds: bytes as f64 / rate,
        bytes_per_sec: rate,
        runs,
        allocated_bytes: bytes,
        capped: false,
    }
}

fn bulk_of(kind: crate::fs_info::FsKind, growth: &[GrowthResult]) -> Recommendation {
    // Whatever the machine's root filesystem can do: capabilities not
    // measured and a local filesystem give the built-in ladder allocate,
    // then zero-fill.
    let mut i = info(kind);
    i.capabilities = Err(crate::reason::Reason::new(
        crate::errno::ErrorKind::NotMeasured,
        "not measured in this test",
    ));
    i.network = false;
    assert_eq!(
        crate::policy::built_in(&i, Intent::Bulk).ladder,
        [Strategy::Allocate, Strategy::ZeroFill]
    );
    let r = recommend(&i, &[], &[], growth, None);
    r.into_iter().find(|r| r.intent == Intent::Bulk).unwrap()
}

#[test]
fn one_growth_timing_each_never_moves_bulk() {
    // Three quick probes on tmpfs in a row once recommended zero-fill from
    // one 230 ms against 118 ms timing, and allocate twice.
    let g = [
        grew(Strategy::Sparse, &[0.0001]),
        grew(Strategy::Allocate, &[0.230]),
        grew(Strategy::ZeroFill, &[0.118]),
    ];
    let r = bulk_of(crate::fs_info::FsKind::Tmpfs, &g);
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    assert!(r.too_noisy, "{}", r.reason);
    assert!(r.reason.contains("not faster here"), "{}", r.reason);
    assert!(
        r.reason.contains(
            "too noisy to decide between allocate and zero-fill: zero-fill took 118.0 ms against allocate 230.0 ms to grow 256 MiB in one round each (rank test p = 0.500, 0.05 needed), so the built-in choice, allocate, stands"
        ),
        "{}",
        r.reason
    );
}

#[test]
fn bulk_moves_only_when_every_round_says_so() {
    let ext4 = crate::fs_info::FsKind::Ext4;
    // Zero-fill faster in every one of four rounds, by far more than the
    // margin: it beats allocate.
    let g = [
        grew(Strategy::Allocate, &[0.30, 0.32, 0.31, 0.29]),
        grew(Strategy::ZeroFill, &[0.12, 0.13, 0.11, 0.12]),
    ];
    let r = bulk_of(ext4, &g);
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert!(!r.too_noisy);
    assert!(
        r.reason.contains("zero-fill beat allocate (the built-in choice) across the rounds: zero-fill took 110.0 ms-130.0 ms against allocate 290.0 ms-320.0 ms to grow 256 MiB over 4 rounds each (rank test p = 0.014)"),
        "{}",
        r.reason
    );
    // The same medians with the rounds overlapping: too noisy, allocate stands.
    let g = [
        grew(Strategy::Allocate, &[0.30, 0.10, 0.31, 0.29]),
        grew(Strategy::ZeroFill, &[0.12, 0.13, 0.35, 0.12]),
    ];
    let r = bulk_of(ext4, &g);
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    assert!(r.too_noisy);
    // Within the margin: the built-in choice, without a word of noise.
    let g = [
        grew(Strategy::Allocate, &[0.20, 0.21, 0.20, 0.19]),
        grew(Strategy::ZeroFill, &[0.19, 0.19, 0.18, 0.19]),
    ];
    let r = bulk_of(ext4, &g);
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    assert!(!r.too_noisy);
    assert!(!r.reason.contains("too noisy"), "{}", r.reason);
}

#[test]
fn challengers_within_the_margin_go_by_preference() {
    // write-zeroes and zero-fill both beat allocate in every round;
    // zero-fill is 5% faster than write-zeroes, within the margin, so the
    // one that reserves without writing wins.
    let g = [
        grew(Strategy::Allocate, &[0.30, 0.31, 0.32, 0.29]),
        grew(Strategy::WriteZeroes, &[0.105, 0.11, 0.10, 0.105]),
        grew(Strategy::ZeroFill, &[0.10, 0.10, 0.095, 0.10]),
    ];
    let r = bulk_of(crate::fs_info::FsKind::Ext4, &g);
    assert_eq!(r.strategy, Strategy::WriteZeroes, "{}", r.reason);
    assert!(
        r.reason.contains("write-zeroes beat allocate"),
        "{}",
        r.reason
    );
}

/// The log recommendation of `recommend` on `s` (and a check of the log's
/// setup, if any), on ext4.
fn log_rec(s: &[StateResult], check: Option<&LogCheck>) -> Recommendation {
    let r = recommend(&info(crate::fs_info::FsKind::Ext4), s, &[], &[], check);
    r.into_iter().find(|r| r.intent == Intent::Log).unwrap()
}

#[test]
fn log_that_beats_appending_is_recommended_as_today() {
    // append, sparse, allocated, write-zeroed, zero-filled, recycled, wal
    let mut s = states([1000.0, 1000.0, 1500.0, -1.0, 3000.0, 3000.0, 1.0]);
    s[6] = with_runs(SpaceState::Wal, &[2900.0, 3000.0, 3100.0]);
    let r = log_rec(&s, None);
    let v = r.log_vs_append.as_ref().unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Faster, "{}", v.text);
    assert_eq!(r.summary, "zero-fill segments, recycle them");
    assert_eq!(v.log_runs, [2900.0, 3000.0, 3100.0]);
    assert_eq!(v.append_runs, [970.0, 1000.0, 1030.0]);
    assert_eq!(v.ratio, Some(3.0));
    assert!(v.alternating && v.instead.is_none());
    assert_eq!(
        v.text,
        "fspace's log, set up as recommended, beat plain appending (an O_APPEND write + fdatasync per commit) across the runs: 3,000 (2,900-3,100) against 1,000 (970-1,030) commits/s, 3.00x (2.82-3.20x) over 3 and 3 runs (rank test p = 0.050)"
    );
    // The reason no longer quotes the log's rate beside it: one finding.
    assert!(!r.reason.contains("fspace's log did"), "{}", r.reason);
}

#[test]
fn log_level_with_appending_says_it_buys_no_speed() {
    let mut s = states([1000.0, 1000.0, 1500.0, -1.0, 3000.0, 3000.0, 1.0]);
    s[0] = with_runs(SpaceState::Appended, &[1100.0, 1130.0, 1159.0]);
    // Medians within the margin.
    s[6] = with_runs(SpaceState::Wal, &[1050.0, 1100.0, 1150.0]);
    let r = log_rec(&s, None);
    let v = r.log_vs_append.as_ref().unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Level, "{}", v.text);
    assert_eq!(r.summary, "zero-fill segments, recycle them");
    assert!(
        v.text.starts_with("fspace's log, set up as recommended, is level with plain appending (an O_APPEND write + fdatasync per commit): 1,100 (1,050-1,150) against 1,130 (1,100-1,159) commits/s, 0.97x (0.91-1.05x) over 3 and 3 runs, within the 10% margin. The log buys its other properties here (recovery to the last commit, segment recycling, and group commit"),
        "{}",
        v.text
    );
    assert!(
        v.text.ends_with("not speed: appending is as fast"),
        "{}",
        v.text
    );
    // Medians 16% apart, but the ranges overlap: level within the noise.
    s[6] = with_runs(SpaceState::Wal, &[700.0, 950.0, 1300.0]);
    let v = log_rec(&s, None).log_vs_append.unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Level, "{}", v.text);
    assert!(v.p_value.unwrap() > super::super::stats::ALPHA);
    assert!(
        v.text.starts_with("fspace's log, set up as recommended, measured slower than plain appending (an O_APPEND write + fdatasync per commit) in the medians but not across the runs: 950 (700-1,300) against 1,130 (1,100-1,159) commits/s, 0.84x (0.60-1.18x) over 3 and 3 runs (rank test p = 0.350, 0.05 needed), so it is level within the noise."),
        "{}",
        v.text
    );
    // Faster in the medians, overlapping: level, and no speed is shown.
    s[6] = with_runs(SpaceState::Wal, &[1000.0, 1600.0, 1700.0]);
    let v = log_rec(&s, None).log_vs_append.unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Level, "{}", v.text);
    assert!(
        v.text.contains("measured faster than plain appending"),
        "{}",
        v.text
    );
    assert!(
        v.text
            .contains("a speed gain over appending is not shown beyond the noise"),
        "{}",
        v.text
    );
    // Appending measured once (short of time): far apart in the medians,
    // but one run against three can never separate.
    s[0] = with_runs(SpaceState::Appended, &[1130.0]);
    s[6] = with_runs(SpaceState::Wal, &[600.0, 610.0, 620.0]);
    let v = log_rec(&s, None).log_vs_append.unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Level, "{}", v.text);
    assert!(
        v.text
            .contains("(rank test p = 0.250: 3 and 1 runs cannot separate at p <= 0.05)"),
        "{}",
        v.text
    );
}

#[test]
fn log_slower_than_appending_says_so_and_what_to_do_instead() {
    // The btrfs figures: the log 917-982 against appending
    // 1,100-1,159 commits/s.
    let btrfs = info(crate::fs_info::FsKind::Btrfs);
    let mut s = states([1000.0, 1000.0, 1000.0, -1.0, 1000.0, 1000.0, 1.0]);
    s[0] = with_runs(SpaceState::Appended, &[1100.0, 1130.0, 1159.0]);
    s[6] = with_runs(SpaceState::Wal, &[917.0, 950.0, 982.0]);
    let rec = recommend(&btrfs, &s, &[], &[], None);
    let r = rec.iter().find(|r| r.intent == Intent::Log).unwrap();
    let v = r.log_vs_append.as_ref().unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Slower, "{}", v.text);
    // What fspace's log does on btrfs: NOCOW, zero-filled (LOG_NOCOW_ON).
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    assert_eq!(
        r.summary,
        "NOCOW zero-fill segments, recycle them; appending was faster here"
    );
    assert_eq!(v.instead.as_deref(), Some("appended"));
    assert_eq!(
        (
            v.ratio_low.map(|x| (x * 100.0).round()),
            v.ratio_high.map(|x| (x * 100.0).round())
        ),
        (Some(79.0), Some(89.0))
    );
    assert_eq!(
        v.text,
        "fspace's log, set up as recommended, is slower than plain appending (an O_APPEND write + fdatasync per commit) here, across the runs: 950 (917-982) against 1,130 (1,100-1,159) commits/s, 0.84x (0.79-0.89x) over 3 and 3 runs (rank test p = 0.050). Instead, for a log of your own on this filesystem: append with O_APPEND + fdatasync. fspace's log still buys its other properties (recovery to the last commit, segment recycling, and group commit among many writers, which these one-writer runs do not measure), not speed"
    );
    // Another state beat appending across the runs: it comes first.
    s[5] = with_runs(SpaceState::Recycled, &[2000.0, 2100.0, 2200.0]);
    let rec = recommend(&btrfs, &s, &[], &[], None);
    let v = rec[0].log_vs_append.as_ref().unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Slower, "{}", v.text);
    assert_eq!(v.instead.as_deref(), Some("recycled"));
    assert!(
        v.text.contains("Instead, for a log of your own on this filesystem: commit into a file written before (a recycled segment), overwritten in place, which measured fastest: 2,100 commits/s (2,000-2,200), 1.86x appending across the runs (rank test p = 0.050); or append with O_APPEND + fdatasync."),
        "{}",
        v.text
    );
    // The JSON names.
    let j = serde_json::to_value(&rec[0]).unwrap();
    let o = &j["log_vs_append"];
    assert_eq!(o["outcome"], "slower", "{j}");
    assert_eq!(o["instead"], "recycled", "{j}");
    for k in [
        "log_commits_per_sec",
        "log_runs",
        "append_commits_per_sec",
        "append_runs",
        "ratio",
        "ratio_low",
        "ratio_high",
        "p_value",
        "alternating",
        "text",
    ] {
        assert!(o.get(k).is_some(), "{k} missing: {o}");
    }
}

#[test]
fn log_or_appending_not_measured_is_said() {
    let mut s = states([1000.0, 1000.0, 1500.0, -1.0, 3000.0, 3000.0, -1.0]);
    let v = log_rec(&s, None).log_vs_append.unwrap();
    assert_eq!(
        v.outcome,
        crate::policy::VsAppend::NotMeasured,
        "{}",
        v.text
    );
    assert_eq!(
        v.text,
        "not measured: fspace's log could not be measured here (Operation not supported), so this probe cannot say whether fspace's log is faster than plain appending (an O_APPEND write + fdatasync per commit) here"
    );
    assert!(v.ratio.is_none() && v.p_value.is_none() && v.log_runs.is_empty());
    assert_eq!(v.append_commits_per_sec, Some(1000.0));
    // No appended state at all (and the log measured).
    s[6] = st(SpaceState::Wal, 2000.0);
    s.remove(0);
    let r = log_rec(&s, None);
    let v = r.log_vs_append.unwrap();
    assert_eq!(
        v.outcome,
        crate::policy::VsAppend::NotMeasured,
        "{}",
        v.text
    );
    assert!(
        v.text
            .starts_with("not measured: appending was not measured"),
        "{}",
        v.text
    );
    assert!(!r.summary.contains("appending"), "{}", r.summary);
    // Nothing measured at all: the log recommendation is the built-in
    // one, and the comparison says neither was measured.
    let v = log_rec(&[], None).log_vs_append.unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::NotMeasured);
    assert!(
        v.text.starts_with(
            "not measured: fspace's log was not measured and appending was not measured"
        ),
        "{}",
        v.text
    );
}

#[test]
fn log_against_appending_uses_the_runs_of_the_recommended_setup() {
    // A check of the log's setup: its runs are the recommended setup's,
    // and the same runs the prediction comes from.
    let mut s = states([900.0, 900.0, 1.0, -1.0, 1.0, 1500.0, 1500.0]);
    s[2] = with_runs(SpaceState::Allocated, &[1900.0, 2000.0, 2100.0]);
    s[4] = with_runs(SpaceState::ZeroFilled, &[1400.0, 1450.0, 1500.0]);
    s[0] = with_runs(SpaceState::Appended, &[1000.0, 1050.0, 1100.0]);
    let check = |confirmed| LogCheck {
        setup: "allocate segments, direct-dsync".into(),
        built_in_setup: "zero-fill segments, direct-dsync".into(),
        recommended: with_runs(SpaceState::Wal, &[2500.0, 2600.0, 2700.0]),
        built_in: with_runs(SpaceState::Wal, &[800.0, 820.0, 850.0]),
        confirmed,
    };
    let r = log_rec(&s, Some(&check(true)));
    assert_eq!(r.strategy, Strategy::Allocate, "{}", r.reason);
    let v = r.log_vs_append.unwrap();
    assert_eq!(v.outcome, crate::policy::VsAppend::Faster, "{}", v.text);
    assert_eq!(v.log_runs, [2500.0, 2600.0, 2700.0]);
    assert!(!v.alternating);
    assert!(v.text.ends_with("; the log's runs come from the check of its setup, after appending's, not alternating with them"), "{}", v.text);
    // Not confirmed: the built-in setup stays, and so do its runs.
    let r = log_rec(&s, Some(&check(false)));
    assert_eq!(r.strategy, Strategy::ZeroFill, "{}", r.reason);
    let v = r.log_vs_append.unwrap();
    assert_eq!(v.log_runs, [800.0, 820.0, 850.0]);
    assert_eq!(v.outcome, crate::policy::VsAppend::Slower, "{}", v.text);
    assert!(
        r.summary.ends_with("; appending was faster here"),
        "{}",
        r.summary
    );
}
