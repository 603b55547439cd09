//! A file's extent map (`fspace.map`).

use super::common::{json_of, os, report};
use pyo3::prelude::*;
use serde::Serialize;
use std::ffi::OsString;
use std::path::Path;

report! {
    /// One range of a file in one state.
    Extent {
        /// Byte offset in the file.
        offset: u64,
        /// Length in bytes.
        length: u64,
        /// `"hole"`, `"unwritten"`, `"written"`, `"shared"`, `"delalloc"`,
        /// `"inline"`, `"data"` (written or unwritten: SEEK_DATA cannot
        /// tell) or `"other"`.
        state: String,
    }
}

report! {
    /// Byte totals of an extent map; `None` where the filesystem cannot
    /// tell.
    MapSummary {
        /// File length.
        size: u64,
        /// Bytes backed by blocks or dirty data.
        allocated: Option<u64>,
        /// Written bytes (shared and inline included).
        written: Option<u64>,
        /// Unwritten bytes.
        unwritten: Option<u64>,
        /// Bytes in holes.
        holes: Option<u64>,
        /// Shared (reflinked) bytes.
        shared: Option<u64>,
        /// Delayed-allocation bytes.
        delalloc: Option<u64>,
        /// Non-hole extents.
        extents: u64,
        /// Bytes allocated past the block holding EOF.
        beyond_eof: Option<u64>,
    }
}

report! {
    /// A file's extent map (`fspace.map`).
    ExtentMap + json {
        /// The file.
        path: OsString,
        /// `"fiemap"` (every state known) or `"seek"` (holes and data only).
        method: String,
        /// What the method cannot tell, if anything.
        note: Option<super::common::Note>,
        /// Ranges covering the file in order, holes included.
        extents: Vec<Extent>,
        /// Totals.
        summary: MapSummary,
    }
}

fn state_name(s: fspace::ExtentState) -> &'static str {
    use fspace::ExtentState as S;
    match s {
        S::Hole => "hole",
        S::Unwritten => "unwritten",
        S::Written => "written",
        S::Shared => "shared",
        S::Delalloc => "delalloc",
        S::Data => "data",
        S::Inline => "inline",
        S::Other => "other",
    }
}

impl ExtentMap {
    pub(crate) fn from(path: &Path, m: &fspace::ExtentMap) -> Self {
        let s = &m.summary;
        #[derive(Serialize)]
        struct Doc<'a> {
            path: String,
            #[serde(flatten)]
            map: &'a fspace::ExtentMap,
        }
        ExtentMap {
            path: os(path),
            method: match m.method {
                fspace::MapMethod::Fiemap => "fiemap".into(),
                fspace::MapMethod::Seek => "seek".into(),
            },
            note: m.note.as_ref().map(super::common::note),
            extents: m
                .extents
                .iter()
                .map(|e| Extent {
                    offset: e.offset,
                    length: e.length,
                    state: state_name(e.state).into(),
                })
                .collect(),
            summary: MapSummary {
                size: s.size,
                allocated: s.allocated,
                written: s.written,
                unwritten: s.unwritten,
                holes: s.holes,
                shared: s.shared,
                delalloc: s.delalloc,
                extents: s.extents,
                beyond_eof: s.beyond_eof,
            },
            json: json_of(&Doc {
                path: path.to_string_lossy().into_owned(),
                map: m,
            }),
        }
    }
}
