//! The probe's commit rounds: 8 KiB commits into space in every
//! [`SpaceState`](crate::bench::SpaceState), with each sync method, and
//! through fspace's log, in alternating rounds (`rounds.rs`), each case's
//! runs of a round one sample (`case.rs`); a decision too close to call
//! measured again (`close_call.rs`); the log's expected rate, checked
//! both ways where the states suggest a setup other than the built-in
//! one (`predict.rs`); the record-size sweep (`sweep.rs`); and the
//! concurrency curve, from one writer to many (`concurrency.rs`).

mod case;
mod close_call;
pub(super) mod concurrency;
mod predict;
mod rounds;
mod sweep;

pub(super) use rounds::measure;
pub(super) use sweep::sweep;
