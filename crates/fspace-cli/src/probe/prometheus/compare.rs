//! The metrics of `fspace probe --compare-saved`: the verdict, the rates
//! compared, and the comparison's run.

use super::exposition::{flag, Metrics};
use fspace::probe::{CompareVerdict, Comparison};

/// The metrics of a `--compare-saved` comparison.
pub(in crate::probe) fn compare_metrics(c: &Comparison) -> Metrics {
    let mut m = Metrics::with_labels(vec![
        ("path", c.directory.to_string_lossy().into_owned()),
        ("device", c.key.source.clone()),
        ("fstype", c.key.fs_type.clone()),
        ("mountpoint", c.key.mount_point.clone()),
    ]);
    let s = &c.saved.setup;
    let setup = [
        ("strategy", s.strategy.name()),
        ("sync", s.sync_method.name()),
    ];
    verdict_samples(&mut m, c, &setup);
    rate_samples(&mut m, c, &setup);
    run_samples(&mut m, c);
    m
}

/// The verdict, and what it rests on: the saved runs, the fresh batches
/// and how busy the CPUs were.
fn verdict_samples(m: &mut Metrics, c: &Comparison, setup: &[(&'static str, &str)]) {
    m.gauge(
        "fspace_probe_compare_regressed",
        "1 if two batches of fresh runs were each slower than the saved runs beyond the threshold and the noise, else 0.",
        setup,
        flag(c.regressed),
    );
    m.gauge(
        "fspace_probe_compare_could_not_tell",
        "1 if the fresh runs looked slower but the comparison could not tell (a busy machine, too few runs), else 0.",
        &[("reason", c.could_not_tell.map_or("none", |w| w.name()))],
        flag(c.could_not_tell.is_some()),
    );
    for v in [
        CompareVerdict::NoChange,
        CompareVerdict::Regressed,
        CompareVerdict::CouldNotTell,
    ] {
        m.gauge(
            "fspace_probe_compare_verdict",
            "1 for the comparison's verdict (no-change, regressed, could-not-tell), 0 for the others.",
            &[("verdict", v.name())],
            flag(c.verdict == v),
        );
    }
    m.gauge(
        "fspace_probe_compare_saved_runs",
        "Saved runs compared with (the save's baseline, or the probe's runs in a file without one).",
        &[],
        c.saved_runs.len() as f64,
    );
    m.gauge(
        "fspace_probe_compare_batches",
        "Batches of fresh runs measured: 2 when the first was slower and a second confirmed or refuted it.",
        &[],
        c.batches.len() as f64,
    );
    if let Some(p) = c.machine.cpu_pressure {
        m.gauge(
            "fspace_probe_compare_cpu_pressure_ratio",
            "Share of the comparison's time some task waited for a CPU (/proc/pressure/cpu).",
            &[],
            p,
        );
    }
}

/// The saved and the fresh commit rates, their ratio, the threshold and
/// the rank test's p-value.
fn rate_samples(m: &mut Metrics, c: &Comparison, setup: &[(&'static str, &str)]) {
    m.gauge(
        "fspace_probe_compare_ratio",
        "The fresh median commit rate divided by the saved median.",
        setup,
        c.ratio,
    );
    m.gauge(
        "fspace_probe_compare_threshold_ratio",
        "How far below the saved median the fresh one may fall (0.2: 20%).",
        setup,
        c.threshold,
    );
    m.gauge(
        "fspace_probe_compare_saved_commits_per_second",
        "The saved median commit rate compared with (the save's baseline, or the probe's runs in a file without one).",
        setup,
        c.saved_commits_per_sec,
    );
    let (lo, hi) = c.fresh.range();
    m.gauge(
        "fspace_probe_compare_fresh_commits_per_second",
        "The fresh median commit rate of fspace's log set up as saved.",
        setup,
        c.fresh.commits_per_sec,
    );
    m.gauge(
        "fspace_probe_compare_fresh_commits_per_second_min",
        "Commits per second of the slowest fresh run.",
        setup,
        lo,
    );
    m.gauge(
        "fspace_probe_compare_fresh_commits_per_second_max",
        "Commits per second of the fastest fresh run.",
        setup,
        hi,
    );
    m.gauge(
        "fspace_probe_compare_fresh_runs",
        "Fresh runs the median is taken over.",
        setup,
        c.fresh.runs.len() as f64,
    );
    m.gauge(
        "fspace_probe_compare_p_value",
        "One-sided rank test p-value that the saved runs are larger than the fresh ones.",
        setup,
        c.p_value,
    );
}

/// The fresh runs' machine, start and duration.
fn run_samples(m: &mut Metrics, c: &Comparison) {
    m.gauge(
        "fspace_probe_compare_machine_busy",
        "1 if others were busy while the fresh runs were measured (noisier figures), else 0.",
        &[],
        flag(c.machine.busy),
    );
    m.gauge(
        "fspace_probe_compare_timestamp_seconds",
        "When the comparison's fresh runs started, seconds since the Unix epoch.",
        &[],
        c.started_unix as f64,
    );
    m.gauge(
        "fspace_probe_compare_duration_seconds",
        "How long the comparison's fresh runs took.",
        &[],
        c.elapsed.as_secs_f64(),
    );
}
