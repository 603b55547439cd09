//! The text of `fspace probe --compare-saved`: what was compared, the
//! saved and the fresh runs, the rule, and the verdict.

use crate::fmt::{format_count as commas, indented, labelled, wrap, LOG_VS_APPEND};
use fspace::probe::{CompareVerdict, Comparison, CouldNotTell, ALPHA};

/// The comparison's text, the verdict last.
pub(in crate::probe) fn comparison(c: &Comparison) -> String {
    let mut o = String::new();
    head(&mut o, c);
    runs(&mut o, c);
    rule(&mut o, c);
    o.push('\n');
    for line in wrap(&verdict(c), 78) {
        out!(o, "{line}");
    }
    for n in &c.notes {
        indented(&mut o, &format!("note: {n}"));
    }
    o
}

/// What was compared: the filesystem, the save, the log's standing
/// against appending when saved, and the machine.
fn head(o: &mut String, c: &Comparison) {
    labelled(
        o,
        "fspace probe --compare-saved: ",
        &c.directory.to_string_lossy(),
    );
    indented(
        o,
        &format!(
            "{} from {} at {}",
            c.key.fs_type, c.key.source, c.key.mount_point
        ),
    );
    indented(
        o,
        &format!(
            "saved {} by {} in {}",
            c.measured_utc,
            c.measured_by,
            c.saved_path.display()
        ),
    );
    indented(o, &format!("compared: {}", c.compared));
    if let Some(v) = &c.saved_log_vs_append {
        let ratio = match (v.ratio, v.ratio_low, v.ratio_high) {
            (Some(r), Some(lo), Some(hi)) => format!(" ({r:.2}x, runs {lo:.2}-{hi:.2}x)"),
            _ => String::new(),
        };
        indented(
            o,
            &format!(
                "when saved, {}: {}{ratio}; appending is not measured again here",
                LOG_VS_APPEND, v.outcome
            ),
        );
    }
    indented(
        o,
        &format!("machine while measuring: {}", c.machine.summary()),
    );
}

/// The saved runs' commit rate and each fresh batch's, with its ratio and
/// rank test.
fn runs(o: &mut String, c: &Comparison) {
    let range = |runs: &[f64]| {
        let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = runs.iter().copied().fold(0.0, f64::max);
        if runs.len() > 1 {
            format!("runs {}-{}", commas(lo), commas(hi))
        } else {
            format!("{} run", runs.len())
        }
    };
    out!(
        o,
        "  saved: {:>9} commits/s ({}, {})",
        commas(c.saved_commits_per_sec),
        range(&c.saved_runs),
        if c.from_baseline {
            "the baseline"
        } else {
            "the probe's"
        }
    );
    for (i, b) in c.batches.iter().enumerate() {
        out!(
            o,
            "  {}: {:>9} commits/s ({}), {:.2}x, p = {:.3}",
            if i == 0 { "fresh" } else { "again" },
            commas(b.commits_per_sec),
            range(&b.runs),
            b.ratio,
            b.p_value
        );
    }
}

/// The rule a regression is told by.
fn rule(o: &mut String, c: &Comparison) {
    // 0.2 * 100 is 20.000000000000004: whole percentages without digits.
    let pct = c.threshold * 100.0;
    let pct = if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    };
    indented(
        o,
        &format!(
            "rule: regressed when the fresh median is more than {pct}% below the saved one and the rank test separates the runs (p at most {ALPHA}), in two batches in a row, on a quiet machine"
        ),
    );
}

/// The verdict in words, with the exit status it brings.
fn verdict(c: &Comparison) -> String {
    let first = c.batches.first();
    match (c.verdict, c.could_not_tell) {
        (CompareVerdict::Regressed, _) => format!(
            "REGRESSED: two batches of fresh runs were each slower than the saved runs beyond the noise; all together {:.0}% below the saved median (exit status 1).",
            (1.0 - c.ratio) * 100.0
        ),
        (CompareVerdict::CouldNotTell, Some(CouldNotTell::MachineBusy)) => format!(
            "COULD NOT TELL: the fresh runs were {:.0}% below the saved median, but the machine was busy ({}), which slows commits as a slower disk does. Run again when it is quiet (exit status 4).",
            (1.0 - first.map_or(c.ratio, |b| b.ratio)) * 100.0,
            c.machine.reasons.join("; ")
        ),
        (CompareVerdict::CouldNotTell, Some(CouldNotTell::BusyBaseline)) => format!(
            "COULD NOT TELL: the fresh median is {:.0}% {} the baseline's, but the baseline was measured on a busy machine: a slow baseline hides a slower disk. Save again on a quiet machine (exit status 4).",
            ((c.ratio - 1.0) * 100.0).abs(),
            if c.ratio < 1.0 { "below" } else { "above" }
        ),
        (CompareVerdict::CouldNotTell, Some(CouldNotTell::NoBaseline)) => format!(
            "COULD NOT TELL: the fresh runs were {:.0}% below the saved median, but the saved file has no baseline (an earlier fspace saved it): the probe's own runs are shorter and were measured among other states. Save again with this version (exit status 4).",
            (1.0 - first.map_or(c.ratio, |b| b.ratio)) * 100.0
        ),
        (CompareVerdict::CouldNotTell, _) => format!(
            "COULD NOT TELL: the fresh runs were {:.0}% below the saved median, but {} saved against {} fresh runs are too few for the rank test to tell (p cannot go below {:.3}). Save again with this version (exit status 4).",
            (1.0 - first.map_or(c.ratio, |b| b.ratio)) * 100.0,
            c.saved_runs.len(),
            first.map_or(0, |b| b.runs.len()),
            c.smallest_p_value
        ),
        _ if c.ratio < 1.0 => format!(
            "No evidence of a change: the fresh median is {:.0}% below the saved one.",
            (1.0 - c.ratio) * 100.0
        ),
        _ => format!(
            "No evidence of a change: the fresh median is {:.0}% above the saved one.",
            (c.ratio - 1.0) * 100.0
        ),
    }
}
