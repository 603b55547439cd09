//! `fspace map`: what a file holds, extent by extent.

use crate::cli::MapArgs;
use crate::fmt::format_human;
use crate::output::{emit, print_json, ser_path};
use fspace::{ExtentState, MapOptions};
use serde::Serialize;
use std::path::Path;

/// `fspace map`: the extents and their summary.
pub(crate) fn run(a: MapArgs) -> fspace::Result<()> {
    let (file, sync, summary_only, json) = (a.file.as_path(), a.sync, a.summary, a.json);
    let m = fspace::map_file(file, MapOptions::default().sync(sync))?;
    let untorn = a
        .untorn
        .map(|unit| untorn_check(file, m.summary.size, unit))
        .transpose()?;
    if json {
        return map_json(file, &m, summary_only, untorn.as_ref());
    }
    let mut o = text(&m, summary_only);
    if let Some(c) = &untorn {
        o.push_str(&untorn_text(c));
    }
    emit(&o)
}

/// Each unit of the whole file checked for the untorn hardware path.
fn untorn_check(file: &Path, size: u64, unit: u32) -> fspace::Result<fspace::untorn::LayoutCheck> {
    let f = std::fs::File::open(file).map_err(|e| fspace::Error::from_io("open", file, None, e))?;
    fspace::untorn::check_layout(&f, file, 0..size, u64::from(unit))
}

fn untorn_text(c: &fspace::untorn::LayoutCheck) -> String {
    let mut o = String::new();
    out!(o, "untorn {}:", format_human(c.unit));
    for line in crate::fmt::wrap(&c.words(), 76) {
        out!(o, "  {line}");
    }
    for b in &c.first_bad {
        out!(
            o,
            "  {:>20}  {}{}",
            b.offset,
            b.fault.name(),
            b.physical
                .map(|p| format!(" (physical {p})"))
                .unwrap_or_default()
        );
    }
    if c.units > c.ok + c.first_bad.len() as u64 {
        out!(
            o,
            "  (the first {} failing units are listed)",
            c.first_bad.len()
        );
    }
    o
}

/// The map as JSON (with `summary_only`, only its summary).
fn map_json(
    file: &Path,
    m: &fspace::ExtentMap,
    summary_only: bool,
    untorn: Option<&fspace::untorn::LayoutCheck>,
) -> fspace::Result<()> {
    {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(serialize_with = "ser_path")]
            path: &'a Path,
            #[serde(flatten)]
            map: &'a fspace::ExtentMap,
            #[serde(skip_serializing_if = "Option::is_none")]
            untorn: Option<&'a fspace::untorn::LayoutCheck>,
        }
        if summary_only {
            #[derive(Serialize)]
            struct Summary<'a> {
                #[serde(serialize_with = "ser_path")]
                path: &'a Path,
                method: fspace::MapMethod,
                #[serde(skip_serializing_if = "Option::is_none")]
                note: Option<&'a fspace::Note>,
                summary: &'a fspace::Summary,
                #[serde(skip_serializing_if = "Option::is_none")]
                untorn: Option<&'a fspace::untorn::LayoutCheck>,
            }
            return print_json(&Summary {
                path: file,
                method: m.method,
                note: m.note.as_ref(),
                summary: &m.summary,
                untorn,
            });
        }
        print_json(&Out {
            path: file,
            map: m,
            untorn,
        })
    }
}

/// The extents (unless `summary_only`), then the summary, in words.
fn text(m: &fspace::ExtentMap, summary_only: bool) -> String {
    let mut o = String::new();
    if !summary_only {
        out!(o, "{:>20} {:>31}  STATE", "OFFSET", "LENGTH");
    }
    for e in m.extents.iter().filter(|_| !summary_only) {
        out!(
            o,
            "{:>20} {:>20} {:>10}  {}",
            e.offset,
            e.length,
            format_human(e.length),
            state_name(e.state)
        );
    }
    let s = &m.summary;
    let opt = |v: Option<u64>| v.map(format_human).unwrap_or_else(|| "unknown".into());
    if !summary_only {
        out!(o);
    }
    out!(o, "size:       {} ({})", s.size, format_human(s.size));
    out!(o, "allocated:  {}", opt(s.allocated));
    out!(o, "written:    {}", opt(s.written));
    out!(o, "unwritten:  {}", opt(s.unwritten));
    out!(o, "holes:      {}", opt(s.holes));
    if let Some(d) = s.delalloc.filter(|&d| d > 0) {
        out!(
            o,
            "delalloc:   {} (not yet allocated; --sync flushes first)",
            format_human(d)
        );
    }
    if let Some(c) = s.unwritten_cached.filter(|&c| c > 0) {
        out!(
            o,
            "cached:     {} of the unwritten bytes have pages in the page cache:\n            \
             most likely data not yet written back, shown as unwritten until\n            \
             it is; --sync flushes the file first and maps where it lands",
            format_human(c)
        );
    }
    if let Some(sh) = s.shared.filter(|&d| d > 0) {
        out!(o, "shared:     {}", format_human(sh));
    }
    if let Some(b) = s.beyond_eof.filter(|&d| d > 0) {
        out!(
            o,
            "past EOF:   {} allocated beyond the end of file",
            format_human(b)
        );
    }
    out!(o, "extents:    {}", s.extents);
    out!(
        o,
        "method:     {}",
        if m.method == fspace::MapMethod::Fiemap {
            "fiemap"
        } else {
            "seek"
        }
    );
    if let Some(n) = &m.note {
        crate::fmt::labelled(&mut o, "note:       ", &n.text);
    }
    o
}

fn state_name(s: ExtentState) -> &'static str {
    match s {
        ExtentState::Hole => "hole",
        ExtentState::Unwritten => "unwritten",
        ExtentState::Written => "written",
        ExtentState::Shared => "shared",
        ExtentState::Delalloc => "delalloc",
        ExtentState::Data => "data",
        ExtentState::Inline => "inline",
        ExtentState::Other => "other",
    }
}
