//! `fspace probe --prometheus FILE`: the probe's figures (or a
//! `--compare-saved` comparison's) in the Prometheus text exposition
//! format, for node_exporter's textfile collector, written atomically.
//!
//! Every family is a gauge with `# HELP` and `# TYPE`, named
//! `fspace_probe_*` in base units (seconds, bytes), without sample
//! timestamps (the collector refuses them); every sample carries the
//! filesystem's labels (`path`, `device`, `fstype`, `mountpoint`: the last
//! three as node_exporter's `node_filesystem_*` metrics spell them, so
//! that the two join). The names and labels are documented in
//! docs/monitoring.md.

mod advice;
mod commits;
mod compare;
mod concurrency;
mod durability;
mod exposition;
mod filesystem;
mod textfile;
mod untorn;

use exposition::{flag, Metrics};
use fspace::probe::{GrowthSection, ProbeResult};

pub(super) use compare::compare_metrics;
pub(super) use textfile::{check_path, write};

/// The metrics of a probe: the run, then each measurement, the
/// recommendations and the filesystem.
pub(super) fn probe_metrics(r: &ProbeResult) -> Metrics {
    let f = &r.filesystem;
    let mut m = Metrics::with_labels(filesystem::labels(&r.directory, f));
    run_samples(&mut m, r);
    commits::samples(&mut m, &r.commit);
    concurrency::samples(&mut m, &r.concurrency);
    growth_samples(&mut m, &r.growth);
    advice::samples(&mut m, &r.recommendations);
    untorn::samples(&mut m, &r.untorn);
    durability::samples(&mut m, r.commit.durability.as_ref());
    filesystem::samples(&mut m, f);
    m
}

/// The run's facts: its level and version, when it ran, how long it took
/// and was given, and whether the machine was busy.
fn run_samples(m: &mut Metrics, r: &ProbeResult) {
    m.gauge(
        "fspace_probe_info",
        "Always 1: the probe's level, fspace version and JSON schema as labels.",
        &[
            ("level", r.level.name()),
            ("version", r.fspace_version),
            ("schema", r.schema),
        ],
        1.0,
    );
    m.gauge(
        "fspace_probe_run_timestamp_seconds",
        "When the probe started, seconds since the Unix epoch.",
        &[],
        r.started_unix as f64,
    );
    m.gauge(
        "fspace_probe_duration_seconds",
        "How long the probe took.",
        &[],
        r.elapsed.as_secs_f64(),
    );
    m.gauge(
        "fspace_probe_budget_seconds",
        "The probe level's time budget.",
        &[],
        r.budget_seconds,
    );
    m.gauge(
        "fspace_probe_rounds",
        "Alternating rounds of commit measurements.",
        &[],
        r.commit.rounds as f64,
    );
    m.gauge(
        "fspace_probe_machine_busy",
        "1 if other processes, the hypervisor or other writers were busy while measuring (noisier figures).",
        &[],
        flag(r.machine.busy),
    );
}

/// Growth by each strategy, or that it is not supported here.
fn growth_samples(m: &mut Metrics, growth: &GrowthSection) {
    for g in &growth.results {
        let l = [("strategy", g.strategy.name())];
        m.gauge(
            "fspace_probe_growth_supported",
            "1 if growing a file by this strategy works here, else 0.",
            &l,
            flag(g.unsupported.is_none()),
        );
        if g.unsupported.is_some() {
            continue;
        }
        m.gauge(
            "fspace_probe_growth_bytes_per_second",
            "Growth of a fresh file by this strategy, fdatasync included: bytes per second of the median round.",
            &l,
            g.bytes_per_sec,
        );
        m.gauge(
            "fspace_probe_growth_seconds",
            "Time of the median round's growth, fdatasync included.",
            &l,
            g.seconds,
        );
        m.gauge(
            "fspace_probe_growth_bytes",
            "Bytes grown in the median round.",
            &l,
            g.bytes as f64,
        );
    }
}
