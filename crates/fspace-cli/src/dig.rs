//! `fspace dig`: progress and printing around [`fspace::dig`].

use crate::cli::DigArgs;
use crate::output::{cancel_on_signals, emit, print_json, yes_no, Progress};
use fspace::sparse::{DigOptions, DigReport};
use fspace::units::format_human;

/// `fspace dig`: digs with progress, prints the report.
pub(crate) fn run(a: DigArgs) -> fspace::Result<()> {
    let bar = Progress::bytes("dig");
    let show = |p| bar.update(p);
    let cancel = cancel_on_signals();
    let opts = DigOptions {
        sync: a.sync,
        progress: Some(&show),
        cancel: Some(&cancel),
    };
    let r = fspace::dig(&a.file, &opts)?;
    drop(bar);
    if a.json {
        return print_json(&r);
    }
    emit(&dig_text(&r))
}

fn dig_text(r: &DigReport) -> String {
    let mut o = String::new();
    out!(o, "path:         {}", r.path.display());
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
        "punched:      {} in {} hole{}",
        format_human(r.bytes_punched),
        r.holes_punched,
        if r.holes_punched == 1 { "" } else { "s" }
    );
    out!(
        o,
        "allocated:    {} -> {} ({} freed)",
        format_human(r.allocated_before),
        format_human(r.allocated_after),
        format_human(r.bytes_freed)
    );
    out!(o, "syscalls:     {}", r.syscalls);
    out!(o, "synced:       {}", yes_no(r.synced));
    o
}
