//! The library's reports as frozen Python objects: one attribute per field
//! (paths as `str`, strategies and states by their names, durations in
//! seconds), a `__repr__` listing them, and for the top-level reports
//! `to_dict()`, the same JSON document the CLI's `--json` prints.
//!
//! One file per part of the library, as `fspace` itself is laid out;
//! `common` holds the `report!` macro that makes each class and the
//! conversions every report shares.

mod common;
mod crashtest;
mod extents;
mod grow;
mod info;
mod probe;
mod sparse;
mod untorn;
mod wal;

pub(crate) use crashtest::{CrashCheckReport, LintReport};
pub(crate) use extents::ExtentMap;
pub(crate) use grow::{GrowReport, RangeReport};
pub(crate) use info::FsInfo;
pub(crate) use probe::ProbeResult;
pub(crate) use sparse::{CopyReport, DigReport};
pub(crate) use untorn::{UntornAnswer, UntornFacts, UntornLayout};
pub(crate) use wal::{Record, ReleaseReport};

use crashtest::{CrashFailure, LintFinding, TornWrite};
use extents::{Extent, MapSummary};
use grow::Fallback;
use info::{Capability, Plan};
use probe::Recommendation;
use pyo3::prelude::*;
use sparse::CopyFallback;
use untorn::{BadUnit, UntornDevice, UntornReady, UntornTrial};

/// Adds the report classes to the module (for `isinstance` and stubs).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<common::Note>()?;
    m.add_class::<common::Reason>()?;
    m.add_class::<Fallback>()?;
    m.add_class::<Capability>()?;
    m.add_class::<Plan>()?;
    m.add_class::<FsInfo>()?;
    m.add_class::<GrowReport>()?;
    m.add_class::<RangeReport>()?;
    m.add_class::<CopyFallback>()?;
    m.add_class::<CopyReport>()?;
    m.add_class::<DigReport>()?;
    m.add_class::<Extent>()?;
    m.add_class::<MapSummary>()?;
    m.add_class::<ExtentMap>()?;
    m.add_class::<Recommendation>()?;
    m.add_class::<ProbeResult>()?;
    m.add_class::<Record>()?;
    m.add_class::<ReleaseReport>()?;
    m.add_class::<UntornTrial>()?;
    m.add_class::<UntornDevice>()?;
    m.add_class::<UntornFacts>()?;
    m.add_class::<UntornAnswer>()?;
    m.add_class::<BadUnit>()?;
    m.add_class::<UntornLayout>()?;
    m.add_class::<UntornReady>()?;
    m.add_class::<TornWrite>()?;
    m.add_class::<CrashFailure>()?;
    m.add_class::<CrashCheckReport>()?;
    m.add_class::<LintFinding>()?;
    m.add_class::<LintReport>()?;
    Ok(())
}
