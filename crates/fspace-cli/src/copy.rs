//! `fspace copy`: progress and printing around [`fspace::copy`].

use crate::cli::CopyArgs;
use crate::fmt::{format_human, labelled};
use crate::output::{cancel_on_signals, emit, print_json, yes_no, Progress};
use fspace::{CopyMethod, CopyOptions, CopyReport};

/// `fspace copy`: validates the options in the library (a conflict is a
/// usage error), copies with progress, prints the report.
pub(crate) fn run(a: CopyArgs) -> fspace::Result<()> {
    let bar = Progress::bytes("copy");
    let show = |p| bar.update(p);
    let cancel = cancel_on_signals();
    let opts = CopyOptions::default()
        .sparse(a.sparse)
        .reflink(a.reflink)
        .force(a.force)
        .preserve(a.preserve)
        .sync(a.sync)
        .keep_allocation(a.keep_allocation)
        .target_is_zero(a.target_is_zero)
        .progress(Some(&show))
        .cancel(Some(&cancel));
    if let Err(e) = opts.validate() {
        crate::usage::usage_error(clap::error::ErrorKind::ArgumentConflict, e.message);
    }
    let r = fspace::copy(&a.src, &a.dst, &opts)?;
    drop(bar);
    if is_stdout(&a.dst) {
        // The data went to standard output: the report goes to stderr.
        let text = if a.json {
            serde_json::to_string_pretty(&r).unwrap_or_default() + "\n"
        } else {
            copy_text(&r)
        };
        eprint!("{text}");
        return Ok(());
    }
    if a.json {
        return print_json(&r);
    }
    emit(&copy_text(&r))
}

/// Whether `path` is the file standard output writes to (`/dev/stdout`, or
/// the pipe or terminal behind it by another name).
fn is_stdout(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(out), Ok(dst)) = (
        std::fs::metadata("/proc/self/fd/1"),
        std::fs::metadata(path),
    ) else {
        return false;
    };
    out.dev() == dst.dev() && out.ino() == dst.ino()
}

fn rate(bytes: u64, secs: f64) -> String {
    if secs <= 0.0 {
        return "-".into();
    }
    format!("{}/s", format_human((bytes as f64 / secs) as u64))
}

/// How the data moved, in words.
fn method_words(r: &CopyReport) -> &'static str {
    match r.method {
        CopyMethod::Clone => "clone: blocks shared with the source (FICLONE)",
        CopyMethod::CopyFileRange => "copy_file_range per data extent (kernel copy)",
        CopyMethod::ReadWrite => "read + sparse write",
        CopyMethod::Stream => "stream: read to the end, written in order",
        CopyMethod::Device => "onto a block device: data written, zero ranges zeroed",
        CopyMethod::None => "none: the source is empty",
    }
}

fn copy_text(r: &CopyReport) -> String {
    let mut o = String::new();
    let secs = r.elapsed.as_secs_f64();
    labelled(
        &mut o,
        "copied:       ",
        &format!(
            "{} -> {}{}",
            r.src.display(),
            r.dst.display(),
            if r.replaced { " (replaced)" } else { "" }
        ),
    );
    out!(
        o,
        "size:         {} ({}) in {:.3} s, {}",
        r.len,
        format_human(r.len),
        secs,
        rate(r.len, secs)
    );
    labelled(
        &mut o,
        "method:       ",
        &format!(
            "{} [--sparse {} --reflink {}]",
            method_words(r),
            r.sparse,
            r.reflink
        ),
    );
    for f in &r.fallbacks {
        crate::fmt::hanging(&mut o, "  ", 4, &format!("not {}: {}", f.method, f.reason));
    }
    labelled(
        &mut o,
        "data:         ",
        &format!(
            "{} cloned, {} by copy_file_range, {} written{}",
            format_human(r.bytes_cloned),
            format_human(r.bytes_offloaded),
            format_human(r.bytes_copied),
            r.data_extents.map_or(String::new(), |n| format!(
                ", in {n} source extent{}",
                if n == 1 { "" } else { "s" }
            ))
        ),
    );
    let holes = match (r.hole_bytes, r.holes) {
        (Some(bytes), Some(n)) => format!(
            "{} in {n} range{}",
            format_human(bytes),
            if n == 1 { "" } else { "s" }
        ),
        // A clone shares the extents without visiting them.
        _ => "kept as the source has them, not counted (`fspace map` counts them)".into(),
    };
    labelled(
        &mut o,
        "holes:        ",
        &format!(
            "{holes}{}",
            if r.zero_bytes_holed > 0 {
                format!(
                    " ({} of zeros found in data)",
                    format_human(r.zero_bytes_holed)
                )
            } else {
                String::new()
            }
        ),
    );
    space_lines(&mut o, r);
    for n in &r.notes {
        labelled(&mut o, "note:         ", &n.to_string());
    }
    o
}

/// The lines on space: zeroed (devices), kept allocation, allocation,
/// syscalls, attributes.
fn space_lines(o: &mut String, r: &CopyReport) {
    if r.method == CopyMethod::Device {
        labelled(
            o,
            "zeroed:       ",
            &format!(
                "{} by write-zeroes (fallocate PUNCH_HOLE, else BLKZEROOUT)",
                format_human(r.bytes_zeroed)
            ),
        );
    }
    if r.bytes_kept_allocated > 0 {
        labelled(
            o,
            "kept:         ",
            &format!(
                "{} of unwritten (fallocated) extents reserved in the copy",
                format_human(r.bytes_kept_allocated)
            ),
        );
    }
    let alloc = |a: Option<u64>| a.map_or("unknown".into(), format_human);
    out!(
        *o,
        "allocated:    source {}, copy {}",
        alloc(r.src_allocated),
        alloc(r.dst_allocated)
    );
    out!(
        *o,
        "syscalls:     {} ({} write-type)",
        r.syscalls,
        r.write_syscalls
    );
    out!(
        *o,
        "preserved:    {}   synced: {}",
        yes_no(r.preserved),
        yes_no(r.synced)
    );
}
