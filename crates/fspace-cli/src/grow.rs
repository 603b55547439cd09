//! `fspace grow`: growth with the right strategy, and its report.

use crate::cli::GrowArgs;
use crate::fmt::{format_human, labelled};
use crate::output::{cancel_on_signals, emit, print_json, yes_no, Progress};
use fspace::{GrowOptions, GrowReport, StrategyChoice};

/// `fspace grow`: the choice from the flags (auto follows the state
/// directory's saved measurements), growth with progress, the report.
pub(crate) fn run(a: GrowArgs) -> fspace::Result<()> {
    if a.no_fallback && a.strategy.0.is_none() {
        crate::usage::usage_error(
            clap::error::ErrorKind::ArgumentConflict,
            "--no-fallback needs an explicit --strategy (auto always uses its fallback ladder)"
                .into(),
        );
    }
    let opts = GrowOptions::default()
        .choice(match a.strategy.0 {
            Some(s) if a.no_fallback => StrategyChoice::exactly(s),
            Some(s) => StrategyChoice::with_fallbacks(s),
            None => StrategyChoice::auto_from_state_dir(),
        })
        .intent(a.intent)
        .sync(a.sync)
        .create(a.create)
        .check_free_space(!a.no_space_check)
        .untorn_unit(a.untorn);
    let bar = Progress::bytes("zero-fill");
    let show = |p: fspace::Progress| bar.update(p);
    // Ctrl-C, SIGTERM or SIGHUP stop a zero-fill and put the file back.
    // Further signals do not cut the rollback short (SIGKILL still works);
    // if the handlers cannot be installed the default behaviour (exit) stays.
    let cancel = cancel_on_signals();
    let opts = opts.progress(Some(&show)).cancel(Some(&cancel));
    let r = fspace::grow(&a.file, a.size, &opts)?;
    drop(bar);
    if a.json {
        return print_json(&r);
    }
    emit(&text(&r))
}

/// The report in words.
fn text(r: &GrowReport) -> String {
    let mut o = String::new();
    let how = match r.requested {
        None => format!("auto, intent {}", r.intent.name()),
        Some(s) => format!("requested {s}"),
    };
    labelled(
        &mut o,
        "path:          ",
        &format!(
            "{}{}",
            r.path.display(),
            if r.created { " (created)" } else { "" }
        ),
    );
    out!(o, "filesystem:    {}", r.filesystem);
    let nocow = if r.nocow { ", NOCOW file" } else { "" };
    out!(o, "strategy:      {} ({how}{nocow})", r.strategy);
    labelled(&mut o, "reason:        ", &r.reason);
    if r.fallbacks.is_empty() {
        out!(o, "fallbacks:     none");
    } else {
        out!(o, "fallbacks:");
        for f in &r.fallbacks {
            labelled(&mut o, "  - ", &format!("{}: {}", f.strategy, f.error));
        }
    }
    for n in &r.notes {
        labelled(&mut o, "note:          ", &n.to_string());
    }
    out!(
        o,
        "old_len:       {} ({})",
        r.old_len,
        format_human(r.old_len)
    );
    out!(
        o,
        "new_len:       {} ({})",
        r.new_len,
        format_human(r.new_len)
    );
    if r.new_len != r.target_len {
        out!(
            o,
            "reserved to:   {} ({}) past EOF",
            r.target_len,
            format_human(r.target_len)
        );
    }
    out!(
        o,
        "bytes_written: {} ({})",
        r.bytes_written,
        format_human(r.bytes_written)
    );
    out!(
        o,
        "syscalls:      {} ({} write-type)",
        r.syscalls,
        r.write_syscalls
    );
    out!(o, "synced:        {}", yes_no(r.synced));
    if let Some(u) = &r.untorn {
        let hint = match (u.extent_size_hint, &u.hint_note) {
            (_, Some(note)) => note.text.clone(),
            (Some(0), None) => "none (set on XFS only)".into(),
            (Some(h), None) => format_human(u64::from(h)),
            (None, None) => "not supported here".into(),
        };
        out!(o, "untorn unit:   {}", format_human(u64::from(u.unit)));
        labelled(&mut o, "  limits:      ", &u.limits.words());
        labelled(&mut o, "  size hint:   ", &hint);
        if u.collapses > 0 {
            labelled(
                &mut o,
                "  aligned:     ",
                &format!(
                    "{} range{} cut out to put units at aligned device addresses",
                    u.collapses,
                    if u.collapses == 1 { "" } else { "s" }
                ),
            );
        }
        let layout = match &u.layout {
            Ok(c) => c.words(),
            Err(e) => format!("unknown ({e})"),
        };
        for (i, line) in crate::fmt::wrap(&layout, 64).iter().enumerate() {
            out!(o, "  {:<13}{line}", if i == 0 { "layout:" } else { "" });
        }
    }
    out!(o, "elapsed_ms:    {:.3}", r.elapsed.as_secs_f64() * 1e3);
    o
}
