//! The probe's untorn rounds: what untorn page writes cost here. Where a
//! page size of [`UNTORN_PAGES`] is untorn, durable `O_DIRECT` page writes
//! into written space are timed with and without `RWF_ATOMIC` in
//! alternating rounds (`rounds.rs`); the section, the figures of the
//! rounds and their words are `cost.rs`, which measures nothing.

mod cost;
mod rounds;

pub use cost::{UntornCost, UntornSection, WriteRuns, UNTORN_PAGES};
pub(super) use rounds::{measure, reserve, sizes, steps};
