//! What every report shares: the `report!` macro that makes its class, and
//! the conversions of paths, durations and notes.

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

pub(super) fn notes(n: &[fspace::Note]) -> Vec<String> {
    n.iter().map(|n| n.to_string()).collect()
}
