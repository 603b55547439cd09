//! From measurements to a policy: one recommended [`Strategy`] per
//! [`Intent`](crate::strategy::Intent), with the figures that decided it.
//!
//! The rules, each a named constant below:
//!
//! - **log**: the candidates are the preparations whose commits could be
//!   measured here, among those the policy allows for a log on this
//!   filesystem, in its order (the ruled-out ones left out: zero-fill on
//!   copy-on-write filesystems
//!   ([`COW_EXCLUDES_ZERO_FILL`](crate::policy::rules::COW_EXCLUDES_ZERO_FILL)),
//!   sparse elsewhere (holes reserve nothing), fallocate-based ones on
//!   network and FUSE filesystems
//!   ([`REMOTE_EXCLUDES_FALLOCATE`](crate::policy::rules::REMOTE_EXCLUDES_FALLOCATE))). The
//!   first candidate in
//!   [`LOG_PREFERENCE`](crate::policy::rules::LOG_PREFERENCE)
//!   ([`LOG_PREFERENCE_COW`](crate::policy::rules::LOG_PREFERENCE_COW) on
//!   copy-on-write) whose rate
//!   is within [`TIE_MARGIN`](super::verdict::TIE_MARGIN) of the fastest
//!   preparation measured wins; if
//!   none is, the fastest candidate does, and the reason names the faster
//!   one that was ruled out. Filesystems without `fallocate` (ext4 without
//!   extents, sshfs) never get a strategy built on it.
//! - **bulk**: among the strategies that reserve space (and, on network and
//!   FUSE filesystems, do not need `fallocate`), the built-in policy's
//!   choice stands unless another one's growth beat it by the same rule as
//!   the log's (median faster by more than
//!   [`TIE_MARGIN`](super::verdict::TIE_MARGIN) and the rank test
//!   separating the rounds); when the medians differ but the rounds do not,
//!   the built-in choice stands and the reason says the result was too
//!   noisy. Where the built-in choice could not be measured, the first
//!   measured strategy in
//!   [`BULK_PREFERENCE`](crate::policy::rules::BULK_PREFERENCE) stands in
//!   for it.
//! - **sparse**: `ftruncate` (the intent is that the space may stay
//!   empty); the reason says what it cost and whether holes are kept.
//!
//! The log's decision is `log.rs`; bulk and sparse growth are
//! `growth.rs`; the figures both look up are `figures.rs`.

mod figures;
mod growth;
mod log;

use super::schema::{GrowthResult, LogCheck, StateResult, SyncMethodResult};
use super::verdict::sync_choice;
use super::versus_append;
use crate::fs_info::FsInfo;
use crate::policy::Recommendation;
use crate::strategy::Strategy;
use crate::units::{format_human, format_seconds as duration};
use figures::grown;
use growth::{bulk, sparse};
use log::log;
pub(crate) use log::log_contest;

/// Returns the recommendations for log (with its sync method, when the
/// methods were measured), bulk and sparse. A `check` of fspace's log set
/// up as the states suggest ([`LogCheck`]) that did not beat the log's
/// built-in setup keeps the built-in setup, and says why.
pub fn recommend(
    info: &FsInfo,
    states: &[StateResult],
    methods: &[SyncMethodResult],
    growth: &[GrowthResult],
    check: Option<&LogCheck>,
) -> Vec<Recommendation> {
    let confirmed = check.is_none_or(|c| c.confirmed);
    let mut log = log(info, states, confirmed);
    versus_append::apply(&mut log, versus_append::log_vs_append(states, check));
    if log.measured {
        if let Some(c) = sync_choice(info, methods, confirmed) {
            log.sync_method = Some(c.method);
            log.sync_reason = Some(c.reason);
            log.sync_too_noisy = c.too_noisy;
        }
        if let Some(c) = check.filter(|c| !c.confirmed) {
            log.reason = format!("{}; {}", log.reason, c.words());
        }
    }
    if let Some(cost) = log
        .measured
        .then(|| segment_cost(growth, log.strategy))
        .flatten()
    {
        log.reason = format!("{}; {cost}", log.reason);
    }
    vec![log, bulk(info, growth, states), sparse(info, growth)]
}

/// What preparing one log segment by `s` costs, from the growth measured.
fn segment_cost(growth: &[GrowthResult], s: Strategy) -> Option<String> {
    let g = grown(growth, s)?;
    let seg = crate::wal::DEFAULT_SEGMENT_SIZE;
    let t = g.seconds * seg as f64 / g.bytes as f64;
    Some(format!(
        "preparing a {} segment this way costs about {} here (growth measured: {} in {})",
        format_human(seg),
        duration(t),
        format_human(g.bytes),
        duration(g.seconds)
    ))
}

#[cfg(test)]
mod tests;
