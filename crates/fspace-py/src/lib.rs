//! The Python package `fspace`: its native module `fspace._fspace`.
//!
//! Glue only, as the CLI and the C API are: every function turns its Python
//! arguments into the library's options, calls the library with the GIL
//! released (other Python threads run meanwhile), and turns the library's
//! report into a frozen report object, or its [`fspace::Error`] into an
//! `OSError` that keeps the errno and the path (see `errors.rs`). Every
//! decision (strategy, fallback, what a copy does with holes) stays in the
//! library. Documented in docs/python.md; tested by ci/python.sh.

mod args;
mod crashtest;
mod errors;
mod ops;
mod reports;
mod untorn;
mod wal;

use pyo3::prelude::*;

/// The native part of the `fspace` package; import `fspace` instead.
#[pymodule]
fn _fspace(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(ops::info, m)?)?;
    m.add_function(wrap_pyfunction!(ops::grow, m)?)?;
    m.add_function(wrap_pyfunction!(ops::allocate, m)?)?;
    m.add_function(wrap_pyfunction!(ops::copy, m)?)?;
    m.add_function(wrap_pyfunction!(ops::dig, m)?)?;
    m.add_function(wrap_pyfunction!(ops::map, m)?)?;
    m.add_function(wrap_pyfunction!(ops::probe, m)?)?;
    reports::register(m)?;
    crashtest::register(m)?;
    untorn::register(m)?;
    wal::register(m)?;
    Ok(())
}
