//! The policy: the only place that answers "which strategies, in which
//! order, for this filesystem and this intent".
//!
//! An answer is a [`Plan`]: a ladder of strategies and the reason for it.
//! It comes from one of three sources, chosen by a [`StrategyChoice`]:
//!
//! - a strategy the caller named ([`StrategyChoice::exactly`],
//!   [`StrategyChoice::with_fallbacks`]);
//! - the built-in rules ([`built_in`], [`rules`]), each with its evidence;
//! - a measurement saved by `fspace probe --save` for this filesystem
//!   ([`SavedResults`]), when the caller names where saved measurements are
//!   kept ([`StrategyChoice::auto`]).
//!
//! Growth ([`crate::grow()`]), the log's preparer ([`crate::Wal`]), the
//! probe's recommendation, `fspace info` and the C API all ask [`plan`], so
//! their answers agree by construction.
//!
//! ```
//! use fspace::{plan, StrategyChoice};
//! use fspace::{fs_info, Intent};
//! # fn main() -> fspace::Result<()> {
//! let info = fs_info(".")?;
//! let p = plan(&info, Intent::Log, &StrategyChoice::built_in());
//! println!("log space here: {} ({})", p.first(), p.reason);
//! # Ok(()) }
//! ```

mod plan;
pub mod rules;
pub(crate) mod saved;

pub use plan::Plan;
pub use rules::built_in;
pub use saved::{
    Baseline, Expected, FsKey, LogSetup, LogVsAppend, Recommendation, SavedPolicy, SavedProbe,
    SavedResults, VsAppend, SCHEMA,
};

use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::strategy::{Intent, Strategy};

/// How the strategies of a growth are chosen. Each constructor says what it
/// means; there is no combination of flags to get wrong.
///
/// The default is [`StrategyChoice::built_in`]: the library reads no saved
/// measurement unless its caller says where they are
/// ([`StrategyChoice::auto`]). The CLI and the C API use
/// [`StrategyChoice::auto_from_state_dir`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StrategyChoice(Choice);

#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Choice {
    Auto(SavedResults),
    #[default]
    BuiltIn,
    Exactly(Strategy),
    WithFallbacks(Strategy),
}

impl StrategyChoice {
    /// The policy: the measurement saved in `saved` for the filesystem when
    /// there is one, else the built-in rules.
    pub fn auto(saved: SavedResults) -> StrategyChoice {
        StrategyChoice(Choice::Auto(saved))
    }

    /// The policy with the measurements of the state directory
    /// ([`SavedResults::state_dir`]); the built-in rules when no home is
    /// known.
    pub fn auto_from_state_dir() -> StrategyChoice {
        match SavedResults::state_dir() {
            Some(s) => StrategyChoice::auto(s),
            None => StrategyChoice::built_in(),
        }
    }

    /// The built-in rules only (`built_in`).
    pub fn built_in() -> StrategyChoice {
        StrategyChoice(Choice::BuiltIn)
    }

    /// Exactly `strategy`: when the filesystem does not support it, the
    /// growth fails.
    pub fn exactly(strategy: Strategy) -> StrategyChoice {
        StrategyChoice(Choice::Exactly(strategy))
    }

    /// `strategy`, then the strategies that give the same guarantee by
    /// other means when the filesystem does not support it
    /// (`rules::explicit`).
    pub fn with_fallbacks(strategy: Strategy) -> StrategyChoice {
        StrategyChoice(Choice::WithFallbacks(strategy))
    }

    /// Returns the strategy the caller named; `None` for the policy.
    pub fn named(&self) -> Option<Strategy> {
        match self.0 {
            Choice::Exactly(s) | Choice::WithFallbacks(s) => Some(s),
            Choice::Auto(_) | Choice::BuiltIn => None,
        }
    }

    /// Returns true if and only if the policy chooses (no strategy named).
    pub fn is_policy(&self) -> bool {
        self.named().is_none()
    }

    /// Returns where saved measurements are read from, if anywhere.
    pub fn saved_results(&self) -> Option<&SavedResults> {
        match &self.0 {
            Choice::Auto(s) => Some(s),
            _ => None,
        }
    }
}

/// Returns the plan for `intent` on `info`'s filesystem as `choice` asks:
/// the named strategy's ladder; or the saved measurement's plan when
/// `choice` names where measurements are and one exists for this
/// filesystem; else the built-in rules'. A saved measurement that exists but
/// cannot be read leaves a note, and the built-in rules decide.
///
/// For intent log, [`Plan::nocow`] says whether the file is made
/// no-copy-on-write first (`rules::log_nocow`: zero-filled log space on
/// btrfs), whoever chose the strategy.
pub fn plan(info: &FsInfo, intent: Intent, choice: &StrategyChoice) -> Plan {
    let mut p = choose(info, intent, choice);
    p.nocow = intent == Intent::Log && rules::log_nocow(Some(info.kind), p.first()).0;
    p
}

fn choose(info: &FsInfo, intent: Intent, choice: &StrategyChoice) -> Plan {
    match &choice.0 {
        Choice::Exactly(s) => rules::explicit(*s, false),
        Choice::WithFallbacks(s) => rules::explicit(*s, true),
        Choice::BuiltIn => built_in(info, intent),
        Choice::Auto(saved) => match saved.load(info) {
            Ok(found) => found
                .and_then(|s| s.plan(intent, info))
                .unwrap_or_else(|| built_in(info, intent)),
            Err(e) => {
                let mut p = built_in(info, intent);
                p.notes.push(Note::new(
                    NoteKind::SavedUnreadable,
                    format!(
                        "a saved probe measurement could not be read ({e}); the built-in policy decided"
                    ),
                ));
                p
            }
        },
    }
}
