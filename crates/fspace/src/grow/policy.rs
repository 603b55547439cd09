//! The `auto` policy: which strategies to try, in order, for a filesystem and
//! an intent (DESIGN.md "Default policy"). Every rule is a named decision
//! with its evidence; callers can bypass it by naming a strategy.

use super::{Intent, Strategy};
use crate::fs_info::{FsInfo, FsKind};

/// A ladder of strategies to try in order, and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Strategies in the order they will be tried.
    pub ladder: Vec<Strategy>,
    /// Why, in one sentence.
    pub reason: String,
    /// The saved `fspace probe` measurement this plan follows, if any.
    pub saved: Option<std::path::PathBuf>,
}

/// Returns the ladder for an explicitly requested strategy: the strategy
/// itself, then (when `fallback` is set) the strategies that give the same
/// guarantee by other means.
///
/// `allocate` and `write-zeroes` both promise that the space is there and
/// reads as zeros, so both fall back to `zero-fill`. `reserve` (size kept)
/// and `sparse` (no space promised) have no equivalent to fall back to.
pub fn explicit(strategy: Strategy, fallback: bool) -> Plan {
    let mut ladder = vec![strategy];
    if fallback && matches!(strategy, Strategy::Allocate | Strategy::WriteZeroes) {
        ladder.push(Strategy::ZeroFill);
    }
    Plan {
        ladder,
        reason: format!("strategy {} requested", strategy.name()),
        saved: None,
    }
}

/// Returns true if FUSE and network filesystems should be treated alike:
/// their `fallocate` is missing or emulated by the server and the reported
/// block size is unreliable (seed 003: NFS preallocation fragments files;
/// sshfs returns EOPNOTSUPP). Evidence: DESIGN.md policy table.
const TREAT_FUSE_AS_NETWORK: bool = true;

/// Returns the `auto` ladder for `info` and `intent`.
///
/// The measured capabilities take precedence over the kind: a strategy the
/// probe found unsupported is left out rather than tried and failed (the
/// reason says so), which is how ext4 without extents gets `zero-fill`
/// directly.
pub fn auto(info: &FsInfo, intent: Intent) -> Plan {
    let caps = info.caps();
    let fallocate_ok = caps.is_none_or(|c| c.fallocate.supported);
    let write_zeroes_ok = caps.is_some_and(|c| c.write_zeroes.supported);
    let remote = info.network || (TREAT_FUSE_AS_NETWORK && info.kind == FsKind::Fuse);
    let fs = info.display_name();
    let plan = |ladder: Vec<Strategy>, reason: String| Plan {
        ladder,
        reason,
        saved: None,
    };
    match intent {
        Intent::Sparse => plan(
            vec![Strategy::Sparse],
            "intent sparse: the space may stay empty, so only the length changes".into(),
        ),
        Intent::Bulk => {
            if remote {
                plan(
                    vec![Strategy::ZeroFill],
                    format!(
                        "{fs} is a network/FUSE filesystem: fallocate is missing or emulated there, \
                         so large zero writes reserve the space (never glibc's 1-byte-per-block emulation)"
                    ),
                )
            } else if !fallocate_ok {
                plan(
                    vec![Strategy::ZeroFill],
                    format!("fallocate was measured unsupported on {fs} (e.g. ext4 without extents): zero-fill"),
                )
            } else if caps.is_none() {
                plan(
                    vec![Strategy::Allocate, Strategy::ZeroFill],
                    format!(
                        "bulk data on {fs}: fallocate reserves the space without writing it \
                         (capabilities could not be measured here, so zero-fill is the fallback)"
                    ),
                )
            } else {
                plan(
                    vec![Strategy::Allocate, Strategy::ZeroFill],
                    format!("bulk data on {fs}: fallocate reserves the space without writing it"),
                )
            }
        }
        Intent::Log => {
            if info.copy_on_write {
                plan(
                    vec![Strategy::Allocate, Strategy::Sparse],
                    format!(
                        "{fs} is copy-on-write: every overwrite allocates anyway, so zero-filling buys nothing; \
                         allocate checks and reserves the space"
                    ),
                )
            } else if matches!(info.kind, FsKind::Tmpfs | FsKind::Ramfs) {
                plan(
                    vec![Strategy::Allocate, Strategy::ZeroFill],
                    format!("{fs} is memory: no journal, so allocated pages are as good as written ones"),
                )
            } else if remote {
                plan(
                    vec![Strategy::ZeroFill],
                    format!("{fs} is a network/FUSE filesystem: zero-fill so later overwrites do not allocate"),
                )
            } else if write_zeroes_ok {
                plan(
                    vec![Strategy::WriteZeroes, Strategy::ZeroFill],
                    format!(
                        "log on {fs}: written extents make each later fdatasync flush data only; \
                         WRITE_ZEROES was measured supported"
                    ),
                )
            } else {
                let why = if caps.is_some() {
                    "WRITE_ZEROES was measured unsupported"
                } else {
                    "WRITE_ZEROES could not be measured here"
                };
                plan(
                    vec![Strategy::ZeroFill],
                    format!(
                        "log on {fs}: written extents make each later fdatasync flush data only \
                         (unwritten ones cost a journal commit each); {why}, so zero-fill"
                    ),
                )
            }
        }
    }
}
