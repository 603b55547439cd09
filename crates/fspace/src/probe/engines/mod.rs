//! Advice for the storage engines people run: `fspace probe --for ENGINE`.
//!
//! Each engine gets its own measurement: commits written the way that
//! engine writes its log (its record size, its file size, how it prepares,
//! recycles and syncs the files), one case per setting value, in
//! alternating rounds. The cases are compared with the probe's rule made
//! stricter (a challenger must beat the engine's default beyond the tie
//! margin, with runs that separate by the rank test, and every one of its
//! rounds above every one of the default's), so a setting changes, or a
//! trade-off is offered, only where every round shows a gain; otherwise the
//! engine's default stands, with the figures.
//!
//! Safety settings (`full_page_writes`, `innodb_doublewrite`) stay on:
//! none of the engine versions advised here asks the kernel for untorn
//! page writes, so a power cut can tear a page they write, whatever the
//! filesystem offers. Their reasons say both: the probe's answer for the
//! engine's page size and I/O path ([`untorn::answer`](crate::untorn::answer),
//! with the measured cost where untorn writes exist), and that the engine
//! does not ask for them. A setting that
//! measured faster but costs safety or a feature is a
//! [`AdviceKind::TradeOff`]: named with its cost and its gain, never
//! written into the fragment as applied.
//!
//! How each engine creates, extends and syncs its files, and why each
//! setting is decided by which case, is in `docs/engines.md`.
//!
//! `rounds.rs` measures the cases; `advice.rs` turns them into advice by
//! each engine's rules (`postgresql.rs`, `mariadb.rs`, `rocksdb.rs`), with
//! what those share in `common.rs` and the advice as data in `types.rs`.

mod advice;
mod common;
mod mariadb;
mod postgresql;
mod rocksdb;
mod rounds;
mod types;

pub use rounds::engine_time;
pub(super) use rounds::{measure, steps};
pub use types::{AdviceKind, Engine, EngineAdvice, EngineCase, Gain, Setting};

#[cfg(test)]
mod tests;
