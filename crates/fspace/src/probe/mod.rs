//! The measurements behind `fspace probe`: what each way of preparing space
//! is worth on one filesystem, measured in one run, and the policy that
//! follows from them.
//!
//! A probe works in a scratch directory inside the directory given, which is
//! removed afterwards, also after an error or a cancel. It measures:
//!
//! - the filesystem's facts and capabilities (`fs_info_uncached`);
//! - growth of a fresh file by each [`Strategy`](crate::Strategy) that works here (256 MiB,
//!   `fdatasync` included);
//! - 8 KiB commits (`pwrite` + `fdatasync`) into space in each
//!   [`SpaceState`] and through the [`Wal`](crate::Wal), with the
//!   [`bench`](crate::bench) engine, in alternating rounds;
//! - with [`Level::Full`], a record-size sweep;
//! - the concurrency curve: commits through the log, by appending and into
//!   recycled space at 1 to 64 writers ([`ConcurrencySection`]), and the
//!   log's expected rate at [`ProbeOptions::writers`];
//! - where untorn writes of 8 or 16 KiB pages exist, what they cost:
//!   durable `O_DIRECT` page writes into written space with and without
//!   `RWF_ATOMIC`, in alternating rounds ([`UntornSection`], with the
//!   facts and the answers of [`crate::untorn`] for both page sizes and
//!   I/O paths);
//! - around every commit run, the cache flushes the devices under the
//!   filesystem completed, against the durable syncs made: whether the
//!   commits reached stable storage ([`Durability`]);
//! - for each engine in [`ProbeOptions::engines`], commits written the way
//!   that engine writes its log, one case per setting value, and the
//!   settings that follow ([`EngineAdvice`]).
//!
//! From those it recommends a strategy per `Intent` with the
//! measured reason, and [`save`] keeps the recommendations in a
//! [`SavedResults`](crate::SavedResults) store, where the policy finds them for that filesystem
//! (`crate::policy`).
//!
//! The JSON form ([`ProbeResult`]) is versioned by [`SCHEMA`]; its fields
//! are documented in `docs/probe-json.md`.
//!
//! [`compare_saved`] measures again only what a save kept of the log's
//! recommended setup ([`Expected`]) and compares the median with the saved
//! one ([`Comparison`]): a fleet's check that a filesystem did not get
//! slower.

// `entry.rs` runs a probe: the growth through `run.rs`, then each section
// from a folder of its own: `commit/` (the commit rounds, the sweep and
// the concurrency curve), `untorn/` (what untorn page writes cost) and
// `engines/` (each engine's cases and advice). `decide/` draws the
// recommendations from the figures; `compare/` measures a save again.
mod busy;
mod commit;
mod compare;
pub(crate) mod decide;
mod durability;
mod engines;
mod entry;
mod plan;
mod result;
mod run;
mod schema;
mod stats;
mod untorn;
pub(crate) mod verdict;
mod versus_append;

pub use crate::bench::SpaceState;
pub use crate::policy::{
    Baseline, Expected, FsKey, LogSetup, LogVsAppend, Recommendation, SavedPolicy, VsAppend,
    SCHEMA as SAVED_SCHEMA,
};
pub use busy::{Busy, DeviceWrites};
pub use commit::concurrency::{
    concurrency_time, ConcurrencySection, AT_WRITERS_RUNS, CONCURRENCY_STATES,
};
pub use compare::{
    compare_saved, measure_baseline, Batch, CompareOptions, CompareVerdict, Comparison,
    CouldNotTell, BASELINE_ROUNDS, COMPARE_ROUNDS, COMPARE_RUN, COMPARE_SCHEMA, DEFAULT_THRESHOLD,
};
pub use durability::{Durability, MethodFlushes};
pub use engines::{engine_time, AdviceKind, Engine, EngineAdvice, EngineCase, Gain, Setting};
pub use entry::{probe, GROWTH_SIZE, PROBE_MARKER};
pub use plan::{RECORD_SIZE, SWEEP_RECORDS};
pub use result::{save, ProbeResult};
pub use run::ProbeOptions;
pub use schema::{
    CommitSection, GrowthResult, GrowthSection, Level, LogCheck, Prediction, ProbeProgress,
    StateResult, SweepPoint, SyncMethodResult, SCHEMA,
};
pub use stats::ALPHA;
pub use untorn::{UntornCost, UntornSection, WriteRuns, UNTORN_PAGES};
