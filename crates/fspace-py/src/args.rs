//! Python arguments in the library's types: paths (`str`, `bytes`,
//! `os.PathLike`), sizes, the names of intents, strategies and modes.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::str::FromStr;

/// A path given as `str`, `bytes` or `os.PathLike`, as Python's own `os`
/// functions take it: `os.fsencode` gives its bytes (a `str` encoded with
/// the filesystem encoding and `surrogateescape`, so that any name Python
/// read from a directory comes back as the same bytes).
pub(crate) fn path(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let encoded = obj.py().import("os")?.call_method1("fsencode", (obj,))?;
    let bytes = encoded.cast::<PyBytes>()?;
    Ok(PathBuf::from(OsString::from_vec(bytes.as_bytes().to_vec())))
}

/// A size or offset in bytes: a non-negative `int`, or for `what` that
/// allow it a string in fspace's size syntax (`"16M"`, `"1MiB"`, `"1MB"`;
/// `fspace::Size`). A negative or too large number is a `ValueError`.
pub(crate) fn bytes_arg(obj: &Bound<'_, PyAny>, what: &str, text: bool) -> PyResult<u64> {
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<u64>().map_err(|_| {
            PyValueError::new_err(format!(
                "{what} must be between 0 and 2**64 - 1 bytes, not {}",
                obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ))
        });
    }
    if text && obj.is_instance_of::<PyString>() {
        let s: String = obj.extract()?;
        return fspace::Size::from_str(&s)
            .map(fspace::Size::bytes)
            .map_err(|e| PyValueError::new_err(format!("{what}: {e}")));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be an int{}, not {}",
        if text {
            " or a size string such as \"16M\""
        } else {
            ""
        },
        obj.get_type().name()?
    )))
}

/// A count of bytes that must fit 32 bits (an untorn unit, a page size):
/// as [`bytes_arg`], and a `ValueError` above 2**32 - 1.
pub(crate) fn u32_arg(obj: &Bound<'_, PyAny>, what: &str, text: bool) -> PyResult<u32> {
    let v = bytes_arg(obj, what, text)?;
    u32::try_from(v).map_err(|_| {
        PyValueError::new_err(format!(
            "{what} must be between 0 and 2**32 - 1 bytes, not {v}"
        ))
    })
}

/// A name the library parses (`FromStr`: intents, strategies, modes, sync
/// methods); an unknown one is a `ValueError` with the library's message,
/// which lists the known names.
pub(crate) fn named<T: FromStr<Err = fspace::ParseError>>(s: &str) -> PyResult<T> {
    T::from_str(s).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A name that may also be `"auto"` (`None`): the library's error, with
/// `auto` among the names accepted.
fn named_or_auto<T: FromStr<Err = fspace::ParseError>>(s: &str) -> PyResult<Option<T>> {
    if s == "auto" {
        return Ok(None);
    }
    T::from_str(s).map(Some).map_err(|mut e| {
        e.expected.insert(0, "auto");
        PyValueError::new_err(e.to_string())
    })
}

/// A strategy argument: `"auto"` (`None`) or a strategy's name.
pub(crate) fn strategy(s: &str) -> PyResult<Option<fspace::Strategy>> {
    named_or_auto(s)
}

/// A sync method argument: `"auto"` (`None`) or a method's name.
pub(crate) fn sync_method(s: &str) -> PyResult<Option<fspace::SyncMethod>> {
    named_or_auto(s)
}

/// The policy's choice from a strategy argument, as the CLI and the C API
/// make it: `auto` follows a measurement `fspace probe --save` saved in the
/// state directory (else the built-in rules); a named strategy falls back
/// along the ladder unless `fallback` is false.
pub(crate) fn choice(strategy: Option<fspace::Strategy>, fallback: bool) -> fspace::StrategyChoice {
    match strategy {
        Some(s) if fallback => fspace::StrategyChoice::with_fallbacks(s),
        Some(s) => fspace::StrategyChoice::exactly(s),
        None => fspace::StrategyChoice::auto_from_state_dir(),
    }
}

/// Record payload: `bytes` as they are, anything else `bytes()` accepts
/// (`bytearray`, `memoryview`, ...) copied. A `str` is refused: a record
/// holds bytes, and guessing an encoding is the caller's decision.
pub(crate) fn data<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    bytes_like(obj, "a record")
}

/// `obj` as `bytes` (see [`data`]); `what` names it in the errors.
pub(crate) fn bytes_like<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.clone());
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} is bytes, not str (encode it first)"
        )));
    }
    // bytes(5) would be five zero bytes, not data.
    if obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be bytes-like, not int"
        )));
    }
    let b = obj.py().get_type::<PyBytes>().call1((obj,)).map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be bytes-like, not {}",
            obj.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    Ok(b.cast_into::<PyBytes>()?)
}
