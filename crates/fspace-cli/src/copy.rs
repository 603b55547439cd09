//! `fspace copy` and `fspace dig`: printing and progress around
//! [`fspace::copy`] and [`fspace::dig`].

use crate::{emit, print_json, yes_no};
use fspace::sparse::{CopyMethod, CopyOptions, CopyReport, DigOptions, DigReport};
use fspace::units::format_human;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Files at least this large get a progress bar (on a terminal only).
const PROGRESS_FROM: u64 = 64 << 20;

/// A progress bar on stderr, drawn only on a terminal and only for work of
/// at least [`PROGRESS_FROM`] bytes; created on the first report.
pub(crate) struct Bar {
    label: &'static str,
    bar: std::cell::OnceCell<Option<indicatif::ProgressBar>>,
}

impl Bar {
    pub(crate) fn new(label: &'static str) -> Bar {
        Bar {
            label,
            bar: std::cell::OnceCell::new(),
        }
    }

    pub(crate) fn update(&self, p: fspace::Progress) {
        let b = self.bar.get_or_init(|| {
            if p.total < PROGRESS_FROM {
                return None;
            }
            let b = indicatif::ProgressBar::with_draw_target(
                Some(p.total),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let template = format!(
                "{} {{bar:30}} {{binary_bytes}}/{{binary_total_bytes}} {{binary_bytes_per_sec}} eta {{eta}}",
                self.label
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
                b.set_style(style);
            }
            Some(b)
        });
        if let Some(b) = b {
            b.set_position(p.done);
        }
    }

    pub(crate) fn clear(&self) {
        if let Some(Some(b)) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}

/// A flag raised by SIGINT, SIGTERM or SIGHUP: the operation stops at its
/// next check and cleans up. If the handlers cannot be installed the
/// default behaviour (exit) stays.
pub(crate) fn cancel_on_signals() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    cancel
}

pub(crate) fn copy(
    src: &Path,
    dst: &Path,
    opts: CopyOptions<'_>,
    json: bool,
) -> fspace::Result<()> {
    let bar = Bar::new("copy");
    let show = |p| bar.update(p);
    let cancel = cancel_on_signals();
    let opts = CopyOptions {
        progress: Some(&show),
        cancel: Some(&cancel),
        ..opts
    };
    let result = fspace::copy(src, dst, &opts);
    bar.clear();
    let r = result?;
    if json {
        return print_json(&r);
    }
    emit(&copy_text(&r))
}

fn rate(bytes: u64, secs: f64) -> String {
    if secs <= 0.0 {
        return "-".into();
    }
    format!("{}/s", format_human((bytes as f64 / secs) as u64))
}

fn copy_text(r: &CopyReport) -> String {
    let mut o = String::new();
    let secs = r.elapsed.as_secs_f64();
    out!(
        o,
        "copied:       {} -> {}{}",
        r.src.display(),
        r.dst.display(),
        if r.replaced { " (replaced)" } else { "" }
    );
    out!(
        o,
        "size:         {} ({}) in {:.3} s, {}",
        r.len,
        format_human(r.len),
        secs,
        rate(r.len, secs)
    );
    let what = match r.method {
        CopyMethod::Clone => "clone: blocks shared with the source (FICLONE)",
        CopyMethod::CopyFileRange => "copy_file_range per data extent (kernel copy)",
        CopyMethod::ReadWrite if r.bytes_offloaded > 0 => {
            "read + sparse write (read for the zero scan; data runs moved by copy_file_range)"
        }
        CopyMethod::ReadWrite => "read + sparse write",
        CopyMethod::None => "none: the source is empty",
    };
    out!(
        o,
        "method:       {what} [--sparse {} --reflink {}]",
        r.sparse,
        r.reflink
    );
    for f in &r.fallbacks {
        out!(o, "  not {}: {}", f.method, f.reason);
    }
    out!(
        o,
        "data:         {} cloned, {} by copy_file_range, {} by pwritev, in {} source extent{}",
        format_human(r.bytes_cloned),
        format_human(r.bytes_offloaded),
        format_human(r.bytes_copied),
        r.data_extents,
        if r.data_extents == 1 { "" } else { "s" }
    );
    out!(
        o,
        "holes:        {} in {} range{}{}",
        format_human(r.hole_bytes),
        r.holes,
        if r.holes == 1 { "" } else { "s" },
        if r.zero_bytes_holed > 0 {
            format!(
                " ({} of zeros found in data)",
                format_human(r.zero_bytes_holed)
            )
        } else {
            String::new()
        }
    );
    out!(
        o,
        "allocated:    source {}, copy {}",
        format_human(r.src_allocated),
        format_human(r.dst_allocated)
    );
    out!(
        o,
        "syscalls:     {} ({} write-type)",
        r.syscalls,
        r.write_syscalls
    );
    out!(
        o,
        "preserved:    {}   synced: {}",
        yes_no(r.preserved),
        yes_no(r.synced)
    );
    for n in &r.notes {
        out!(o, "note:         {n}");
    }
    o
}

pub(crate) fn dig(file: &Path, sync: bool, json: bool) -> fspace::Result<()> {
    let bar = Bar::new("dig");
    let show = |p| bar.update(p);
    let cancel = cancel_on_signals();
    let opts = DigOptions {
        sync,
        progress: Some(&show),
        cancel: Some(&cancel),
    };
    let result = fspace::dig(file, &opts);
    bar.clear();
    let r = result?;
    if json {
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
