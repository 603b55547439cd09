//! `fspace dig`: progress and printing around [`fspace::dig`].

use crate::cli::DigArgs;
use crate::fmt::{format_human, labelled};
use crate::output::{cancel_on_signals, emit, print_json, yes_no, Progress};
use fspace::{DigOptions, DigReport};

/// `fspace dig`: digs with progress, prints the report.
pub(crate) fn run(a: DigArgs) -> fspace::Result<()> {
    let bar = Progress::bytes("dig");
    let show = |p| bar.update(p);
    let cancel = cancel_on_signals();
    let opts = DigOptions::default()
        .sync(a.sync)
        .progress(Some(&show))
        .cancel(Some(&cancel));
    let r = fspace::dig(&a.file, &opts)?;
    drop(bar);
    if a.json {
        return print_json(&r);
    }
    emit(&dig_text(&r))
}

fn dig_text(r: &DigReport) -> String {
    let mut o = String::new();
    labelled(&mut o, "path:         ", &r.path.to_string_lossy());
    out!(o, "size:         {} ({})", r.len, format_human(r.len));
    out!(
        o,
        "scanned:      {} of data in {} blocks, {:.3} s",
        format_human(r.bytes_scanned),
        format_human(r.block_size),
        r.elapsed.as_secs_f64()
    );
    out!(
        o,
        "unit:         {}",
        match &r.allocation_unit {
            Some(u) => format!("{} ({})", format_human(u.bytes), u.source.name()),
            None => format!(
                "unknown (punches aligned to {} blocks)",
                format_human(r.block_size)
            ),
        }
    );
    out!(
        o,
        "punched:      {} in {} hole{} (whole units)",
        format_human(r.bytes_punched),
        r.holes_punched,
        if r.holes_punched == 1 { "" } else { "s" }
    );
    if r.zero_bytes_kept > 0 {
        out!(
            o,
            "kept:         {} of zeros in runs smaller than a unit",
            format_human(r.zero_bytes_kept)
        );
    }
    let opt = |v: Option<u64>| v.map_or_else(|| "unknown".to_string(), format_human);
    out!(
        o,
        "allocated:    {} -> {} ({} freed, measured)",
        opt(r.allocated_before),
        opt(r.allocated_after),
        opt(r.bytes_freed)
    );
    out!(o, "syscalls:     {}", r.syscalls);
    out!(o, "synced:       {}", yes_no(r.synced));
    o
}
