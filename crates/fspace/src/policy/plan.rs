//! [`Plan`]: the policy's answer, a ladder of strategies and its reason.

use crate::note::Note;
use crate::strategy::Strategy;
use std::path::PathBuf;

/// A ladder of strategies to try in order, and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// Strategies in the order they will be tried (never empty).
    pub ladder: Vec<Strategy>,
    /// Why, in one sentence.
    pub reason: String,
    /// The saved `fspace probe` measurement this plan follows, if any.
    pub saved: Option<PathBuf>,
    /// Things worth knowing that did not decide the plan (a saved
    /// measurement that could not be read).
    pub notes: Vec<Note>,
    /// For intent log: the file is made no-copy-on-write (`chattr +C`)
    /// while empty, before it grows (`rules::log_nocow`, btrfs); where
    /// that is refused, `rules::log_if_nocow_refused` is the plan.
    pub nocow: bool,
}

impl Plan {
    pub(crate) fn new(ladder: Vec<Strategy>, reason: String) -> Plan {
        debug_assert!(!ladder.is_empty());
        Plan {
            ladder,
            reason,
            saved: None,
            notes: Vec::new(),
            nocow: false,
        }
    }

    /// Returns the strategy tried first.
    pub fn first(&self) -> Strategy {
        self.ladder.first().copied().unwrap_or(Strategy::ZeroFill)
    }
}
