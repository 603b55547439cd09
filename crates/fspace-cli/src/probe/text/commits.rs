//! The commit figures in the probe's text: the rate per space state and
//! per sync method, and the record-size sweep.

use crate::fmt::{format_count as commas, format_human, hanging, indented, within};
use fspace::probe::{ProbeResult, SpaceState};
use std::path::Path;

/// `lo-hi` of a state's runs (the median alone for one run).
pub(super) fn runs_range(s: &fspace::probe::StateResult) -> String {
    let (lo, hi) = s.range();
    if s.runs.len() < 2 {
        return commas(s.commits_per_sec);
    }
    let full = format!("{}-{}", commas(lo), commas(hi));
    if full.chars().count() <= 14 {
        return full;
    }
    // Above a million commits/s (tmpfs): thousands, to keep 80 columns.
    format!("{:.0}k-{:.0}k", lo / 1e3, hi / 1e3)
}

/// One row of the commit tables (76 columns); scratch files named within
/// the probed directory `dir`.
fn commit_row(o: &mut String, label: &str, s: &fspace::probe::StateResult, dir: &Path) {
    if let Some(u) = &s.unsupported {
        let why = format!("not supported here: {}", within(&u.text, dir));
        hanging(o, &format!("  {label:<25} "), 28, &why);
        return;
    }
    out!(
        o,
        "  {:<25} {:>9} {:>14} {:>7} {:>7} {:>7}",
        label,
        commas(s.commits_per_sec),
        runs_range(s),
        s.vs_append.map_or("-".into(), |v| format!("{v:.2}x")),
        commas(s.p50_us),
        commas(s.p99_us)
    );
}

/// The commit rate per space state and per sync method.
pub(super) fn commits_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    let c = &r.commit;
    out!(
        o,
        "\nCommits: {} pwrite + fdatasync, one writer; {} alternating round{}",
        format_human(c.record_size as u64),
        c.rounds,
        if c.rounds == 1 { "" } else { "s" },
    );
    out!(
        o,
        "of up to {:.2} s per state; median and range of the runs",
        c.seconds_per_mode
    );
    let header = |o: &mut String, first: &str| {
        out!(
            o,
            "  {:<25} {:>9} {:>14} {:>7} {:>7} {:>7}",
            first,
            "commits/s",
            "runs",
            "vs app.",
            "p50 µs",
            "p99 µs"
        );
    };
    indented(
        &mut o,
        &format!("machine while measuring: {}", r.machine.summary()),
    );
    header(&mut o, "space");
    for s in &c.states {
        commit_row(&mut o, s.state.label(), s, &r.directory);
    }
    if let Some(w) = r.state(SpaceState::Wal).and_then(|s| s.wal.as_ref()) {
        let text = format!(
            "(fspace wal: {} fdatasync{}, {} segment switch{}, {} wait{} for a segment; new segments by {})",
            commas(w.syncs as f64),
            if w.syncs == 1 { "" } else { "s" },
            w.switches,
            if w.switches == 1 { "" } else { "es" },
            w.switch_waits,
            if w.switch_waits == 1 { "" } else { "s" },
            w.prepare_strategy
                .as_ref()
                .map_or_else(|| "none during the run".to_string(), ToString::to_string)
        );
        indented(&mut o, &text);
    }
    if c.sync_methods.len() > 1 {
        out!(
            o,
            "\nSync methods: 8 KiB commits into written (recycled) space, same rounds"
        );
        header(&mut o, "method");
        for m in &c.sync_methods {
            let label = match m.method {
                fspace::SyncMethod::Fdatasync => "pwrite + fdatasync",
                fspace::SyncMethod::Fsync => "pwrite + fsync",
                fspace::SyncMethod::Dsync => "pwritev2(RWF_DSYNC)",
                fspace::SyncMethod::DirectDsync => "O_DIRECT + RWF_DSYNC",
            };
            commit_row(&mut o, label, &m.figures, &r.directory);
        }
    }
    o
}

/// The record-size sweep (full runs only).
pub(super) fn sweep_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    if let Some(sw) = &r.sweep {
        out!(o, "\nRecord-size sweep (commits/s; MiB/s)");
        out!(
            o,
            "  {:<9} {:>22} {:>22} {:>22}",
            "record",
            "appended",
            "recycled",
            "fspace wal"
        );
        for rec in fspace::probe::SWEEP_RECORDS {
            let cell = |st: SpaceState| {
                sw.iter()
                    .find(|p| p.record_size == rec && p.state == st)
                    .map_or("-".into(), |p| {
                        if p.unsupported.is_some() {
                            "n/a".into()
                        } else {
                            format!("{} ; {:.1}", commas(p.commits_per_sec), p.mib_per_sec)
                        }
                    })
            };
            out!(
                o,
                "  {:<9} {:>22} {:>22} {:>22}",
                format_human(rec as u64),
                cell(SpaceState::Appended),
                cell(SpaceState::Recycled),
                cell(SpaceState::Wal)
            );
        }
    }
    o
}
