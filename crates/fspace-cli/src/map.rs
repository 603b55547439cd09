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
    if json {
        return map_json(file, &m, summary_only);
    }
    emit(&text(&m, summary_only))
}

/// The map as JSON (with `summary_only`, only its summary).
fn map_json(file: &Path, m: &fspace::ExtentMap, summary_only: bool) -> fspace::Result<()> {
    {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(serialize_with = "ser_path")]
            path: &'a Path,
            #[serde(flatten)]
            map: &'a fspace::ExtentMap,
        }
        if summary_only {
            #[derive(Serialize)]
            struct Summary<'a> {
                #[serde(serialize_with = "ser_path")]
                path: &'a Path,
                method: fspace::MapMethod,
                #[serde(skip_serializing_if = "Option::is_none")]
                note: Option<&'a str>,
                summary: &'a fspace::Summary,
            }
            return print_json(&Summary {
                path: file,
                method: m.method,
                note: m.note,
                summary: &m.summary,
            });
        }
        print_json(&Out { path: file, map: m })
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
    if let Some(n) = m.note {
        out!(o, "note:       {n}");
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
