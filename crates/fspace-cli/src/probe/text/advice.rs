//! The advice in the probe's text: the recommendations, the rate the log
//! should reach, the notes, and what `--save` kept of them.

use super::commits::runs_range;
use crate::fmt::{format_count as commas, within, wrap, LOG_VS_APPEND};
use fspace::probe::{ProbeResult, Recommendation};
use fspace::NoteKind;
use std::path::Path;

/// The recommendations, what the log should reach, and the notes.
pub(super) fn recommendations_text(r: &ProbeResult) -> String {
    let mut o = String::new();
    out!(o, "\nRecommendations");
    for rec in &r.recommendations {
        recommendation(&mut o, rec, &r.directory);
    }
    expected(&mut o, r);
    notes(&mut o, r);
    o
}

/// One intent's recommendation: the strategy, the log's sync method and
/// how the log compared with appending, each with its reason; scratch
/// files named within the probed directory `dir`.
fn recommendation(o: &mut String, rec: &Recommendation, dir: &Path) {
    out!(o, "  {:<7} {}", rec.intent.name(), rec.summary);
    if rec.too_noisy {
        out!(o, "          (too noisy to decide: the built-in choice)");
    }
    for line in wrap(&within(&rec.reason, dir), 70) {
        out!(o, "          {line}");
    }
    if let (Some(m), Some(why)) = (rec.sync_method, &rec.sync_reason) {
        out!(o, "          commits made durable by {m}");
        if rec.sync_too_noisy {
            out!(o, "          (too noisy to decide: the built-in choice)");
        }
        for line in wrap(why, 70) {
            out!(o, "          {line}");
        }
    }
    if let Some(v) = &rec.log_vs_append {
        out!(o, "          {}: {}", LOG_VS_APPEND, v.outcome);
        for line in wrap(&v.text, 70) {
            out!(o, "          {line}");
        }
    }
}

/// The "Expected" section: whether the log's suggested setup was checked
/// against its built-in one, the rate the log should reach, and the space
/// its files took.
fn expected(o: &mut String, r: &ProbeResult) {
    let c = &r.commit;
    if c.prediction.is_some() || c.log_check.is_some() || c.log_space.is_some() {
        out!(o, "\nExpected");
    }
    if let Some(k) = c.log_check.as_ref().filter(|k| !k.measured()) {
        let text = format!(
            "The states suggested {}; no time was left to measure fspace's log that way against its built-in setup ({}), so the built-in setup stays.",
            k.setup, k.built_in_setup
        );
        for line in wrap(&text, 76) {
            out!(o, "  {line}");
        }
    }
    if let Some(k) = c.log_check.as_ref().filter(|k| k.measured()) {
        let text = format!(
            "The states suggested {}; fspace's log measured that way {} against {} commits/s with its built-in setup ({}), {} alternating runs each: {}.",
            k.setup,
            runs_range(&k.recommended),
            runs_range(&k.built_in),
            k.built_in_setup,
            k.recommended.runs.len(),
            if k.confirmed {
                "the log itself is faster, so the suggestion stands"
            } else {
                "the log itself is not faster, so the built-in setup stays"
            }
        );
        for line in wrap(&text, 76) {
            out!(o, "  {line}");
        }
    }
    if let Some(p) = &c.prediction {
        let runs = if p.low < p.high {
            format!("runs {}-{}; ", commas(p.low), commas(p.high))
        } else {
            String::new()
        };
        let w = p.log.as_ref().map_or(1, |l| l.writers);
        let (writers, flag) = match w {
            1 => ("1 writer".to_string(), String::new()),
            w => (format!("{w} writers"), format!(" --writers {w}")),
        };
        let text = format!(
            "fspace's log with {} should reach about {} commits/s here ({runs}{writers}, 8 KiB records; from {}). Check it: fspace bench commit --mode wal{flag} --seconds 30 {}",
            p.setup,
            commas(p.commits_per_sec),
            p.basis,
            r.directory.display()
        );
        for line in wrap(&text, 76) {
            out!(o, "  {line}");
        }
    }
    if let Some(u) = &c.log_space {
        for line in wrap(
            &format!("The log's files after its runs: {}.", u.words()),
            76,
        ) {
            out!(o, "  {line}");
        }
    }
}

/// The probe's notes and each state's (but the one-pass notes, which the
/// tables say already).
fn notes(o: &mut String, r: &ProbeResult) {
    let c = &r.commit;
    let notes: Vec<String> = r
        .notes
        .iter()
        .map(|n| within(&n.text, &r.directory))
        .chain(c.states.iter().flat_map(|s| {
            s.notes
                .iter()
                .filter(|n| n.kind != NoteKind::OnePass)
                .map(move |n| {
                    format!(
                        "{}: {}",
                        s.state.name(),
                        within(&n.to_string(), &r.directory)
                    )
                })
        }))
        .collect();
    if !notes.is_empty() {
        out!(o, "\nNotes");
        for n in notes {
            for (i, line) in wrap(&n, 74).iter().enumerate() {
                out!(o, "  {} {line}", if i == 0 { "-" } else { " " });
            }
        }
    }
}

/// Why `--save` kept the built-in choice for some intents: too noisy to
/// decide (nothing when every intent was decided).
pub(in crate::probe) fn undecided(r: &ProbeResult) -> String {
    let mut o = String::new();
    let undecided = r.undecided();
    if undecided.is_empty() {
        return o;
    }
    let names: Vec<String> = undecided
        .iter()
        .map(|x| {
            if x.too_noisy {
                x.intent.name().to_string()
            } else {
                format!("the {} sync method", x.intent.name())
            }
        })
        .collect();
    let text = format!(
        "Not saved for {}: too noisy to decide (see above), so the built-in choice stays. Run again on a quieter machine, or add --force to keep the result anyway.",
        names.join(", ")
    );
    o.push('\n');
    for line in wrap(&text, 78) {
        out!(o, "{line}");
    }
    o
}

/// Where the recommendations were saved (`saved`), with the baseline that
/// a later `--compare-saved` compares with, or how to save them.
pub(in crate::probe) fn saved(r: &ProbeResult, saved: Option<&Path>) -> String {
    let mut o = String::new();
    let baseline = match &r.commit.baseline {
        Some(b) => format!(
            " `fspace probe --compare-saved` will compare with {} runs of {:.0} s of the recommended log setup measured after the probe: {} commits/s (runs {}-{}){}.",
            b.runs.len(),
            b.seconds_per_run,
            commas(b.commits_per_sec),
            commas(b.runs.iter().copied().fold(f64::INFINITY, f64::min)),
            commas(b.runs.iter().copied().fold(0.0, f64::max)),
            if b.machine_busy {
                ", on a busy machine: save again on a quiet one"
            } else {
                ""
            }
        ),
        None => " The log could not be measured here: nothing for `fspace probe --compare-saved` to compare with.".into(),
    };
    let after = match saved {
        Some(p) => format!(
            "Saved to {}: `fspace grow --strategy auto`, `fspace info`, the C API and library callers that name the state directory now follow these recommendations on this filesystem ({} at {}).{baseline}",
            p.display(),
            r.key.source,
            r.key.mount_point
        ),
        None => "Not saved: add --save so that `fspace grow --strategy auto` and the C API follow it here.".into(),
    };
    o.push('\n');
    for line in wrap(&after, 78) {
        out!(o, "{line}");
    }
    o
}
