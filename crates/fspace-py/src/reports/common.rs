//! What every report shares: the `report!` macro that makes its class, and
//! the conversions of paths, durations and notes.

use pyo3::prelude::*;
use serde::Serialize;
use std::ffi::OsString;
use std::path::Path;

/// Defines a frozen report class: its fields readable from Python, a
/// `__repr__` naming each (`GrowReport(path='f', strategy='allocate', ...)`)
/// and, with `json`, a hidden JSON document behind `to_dict()`; fields in
/// `hidden { ... }` are kept for the module's own use, not shown.
macro_rules! report {
    ($(#[$m:meta])* $name:ident $(+ $json:ident)? { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }
     $(hidden { $($(#[$hm:meta])* $hidden:ident : $hty:ty),* $(,)? })?) => {
        $(#[$m])*
        #[pyclass(frozen, module = "fspace")]
        #[derive(Clone, Debug)]
        pub(crate) struct $name {
            $($(#[$fm])* #[pyo3(get)] pub(crate) $field: $ty,)*
            $(pub(crate) $json: String,)?
            $($($(#[$hm])* pub(crate) $hidden: $hty,)*)?
        }

        #[pymethods]
        impl $name {
            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                let mut parts: Vec<String> = Vec::new();
                $(parts.push(format!(
                    "{}={}",
                    stringify!($field),
                    slf.getattr(stringify!($field))?.repr()?
                ));)*
                Ok(format!("{}({})", stringify!($name), parts.join(", ")))
            }

            $(
            /// Returns the report as the JSON document of the CLI's
            /// `--json` (a dict of plain values; the field names of
            /// docs/cli.md and docs/probe-json.md).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                py.import("json")?.call_method1("loads", (&self.$json,))
            }

            /// Returns the report as that JSON document, as text.
            fn to_json(&self) -> String {
                self.$json.clone()
            }
            )?
        }
    };
}
// A `macro_rules!` is seen only below its definition in this file; this
// makes it a path the sibling files import.
pub(super) use report;

/// Serializes a library report for `to_dict()`; a failure (it has none:
/// every report is plain data) leaves `{"error": ...}` rather than a panic.
pub(super) fn json_of<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot serialize the report: {e}") }).to_string()
    })
}

pub(super) fn os(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

pub(super) fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

/// Something a report says that qualifies its figures or its outcome:
/// `kind` to match on (`"few-commits"`, the names of docs/api.md), `text`
/// for people; `str(note)` is the text.
#[pyclass(frozen, module = "fspace")]
#[derive(Clone, Debug)]
pub(crate) struct Note {
    /// What it is about, as in JSON (`"one-pass"`).
    #[pyo3(get)]
    pub(crate) kind: String,
    /// The sentence, in words (it may be reworded; the kind is kept).
    #[pyo3(get)]
    pub(crate) text: String,
}

#[pymethods]
impl Note {
    fn __repr__(&self) -> String {
        format!("Note(kind={:?}, text={:?})", self.kind, self.text)
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }
}

/// Why something could not be done or measured: `kind` (`"unsupported"`,
/// `"no-space"`, ...), `errno` when a system call said so, `text` for
/// people; `str(reason)` is the text.
#[pyclass(frozen, module = "fspace")]
#[derive(Clone, Debug)]
pub(crate) struct Reason {
    /// The class a program acts on, as in JSON (`"unsupported"`).
    #[pyo3(get)]
    pub(crate) kind: String,
    /// The errno, when a system call said so.
    #[pyo3(get)]
    pub(crate) errno: Option<i32>,
    /// The whole story for people: the call, the path, the OS's words.
    #[pyo3(get)]
    pub(crate) text: String,
}

#[pymethods]
impl Reason {
    fn __repr__(&self) -> String {
        let errno = self.errno.map_or("None".to_string(), |e| e.to_string());
        format!(
            "Reason(kind={:?}, errno={errno}, text={:?})",
            self.kind, self.text
        )
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }
}

pub(super) fn note(n: &fspace::Note) -> Note {
    Note {
        kind: n.kind.name().to_string(),
        text: n.text.clone(),
    }
}

pub(super) fn notes(n: &[fspace::Note]) -> Vec<Note> {
    n.iter().map(note).collect()
}

pub(super) fn reason(r: &fspace::Reason) -> Reason {
    Reason {
        kind: r.kind.name().to_string(),
        errno: r.errno,
        text: r.text.clone(),
    }
}
