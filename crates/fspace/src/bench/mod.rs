//! The commit benchmark behind `fspace bench commit` (and, later, `fspace
//! probe`): records committed with `fdatasync` into space in each state,
//! and through the [`Wal`](crate::wal::Wal), measured in one run so the ratios are fair on a
//! noisy machine.
//!
//! Every mode works in a scratch file or directory inside the directory
//! given, removed afterwards (also after an error or a cancel).

mod commit;
mod curve;
mod engine;
mod file_mode;
mod suite;
mod types;
mod wal_mode;

pub use commit::{run_commit, BENCH_MARKER};
pub use curve::{writer_curves, CurvePoint, WriterCurve, CURVE_WRITERS, MAX_WRITERS};
pub use suite::{check_suite, run_suite, suite_runs, SuiteReport, SuiteRow, SuiteRun};
pub use types::{CommitBenchOptions, CommitResult, Latency, SpaceState, WalFigures};
