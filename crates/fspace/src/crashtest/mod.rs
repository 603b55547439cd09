//! Crash testing for storage programs: a recorded run of a program
//! ([`Trace`]), the crash states a filesystem may leave after a power cut
//! during it ([`Model`]), a checker run on each ([`check()`]), and static
//! rules one trace can break ([`lint()`]). docs/crashtest.md is the guide.
//!
//! ```no_run
//! use fspace::crashtest::{check, CheckOptions, Trace};
//! # fn main() -> fspace::Result<()> {
//! let trace = Trace::load("kv.trace")?;
//! // The checker runs inside each state: its script by an absolute path.
//! let checker = ["python3".into(), "/home/me/kv/check_kv.py".into()];
//! let report = check(&trace, &checker, &CheckOptions::default(), &|_, _| {})?;
//! for f in &report.failures {
//!     println!("{}", f.story(&trace).join("\n"));
//! }
//! # Ok(()) }
//! ```

mod check;
mod effects;
pub use effects::describe_ops;
mod image;
mod lint;
mod load;
mod model;
mod raw;
mod record;
mod report;
mod runner;
mod states;
mod trace;

pub use check::check;
pub use lint::{lint, lint_document, Finding, Rule, LINT_FORMAT};
pub use model::Model;
pub use raw::{MAGIC as OPS_MAGIC, VERSION as OPS_VERSION};
pub use record::{begin, Recording};
pub use report::{
    CheckOptions, CheckReport, CheckerExit, Failure, FailureKind, TornWrite, CHECK_FORMAT,
};
pub use states::{CrashPoint, PointKind};
pub use trace::{
    AckChannel, EntryKind, InitialEntry, Manifest, Op, OpKind, Trace, WriteFlags, TRACE_FORMAT,
};

#[cfg(test)]
mod tests;
