//! What the log asks about the filesystem under its directory, above the
//! storage seam: whether it is a network or FUSE filesystem and its kind
//! (asked of `fs_info` once, at open, to choose how records go out), and
//! the policy's plan for each new segment (asked when the segment is
//! prepared, with the free space it needs). The seam below
//! ([`Storage`](super::storage::Storage)) only does I/O.

use crate::error::{Error, Result};
use crate::fs_info::{self, FsKind};
use crate::policy::{self, StrategyChoice};
use crate::strategy::{Intent, Strategy};
use crate::sys::Errno;
use crate::units::format_human;
use std::path::Path;

/// Where the log's answers about its filesystem come from.
#[derive(Debug, Clone)]
pub(crate) enum Site {
    /// The filesystem the log's directory is on: `fs_info` and `policy`
    /// answer.
    Filesystem,
    /// Answers given as plain data, for storage with no filesystem behind
    /// it (the power-cut model): no segment plan is asked.
    #[cfg(test)]
    Given { network: bool, kind: Option<FsKind> },
}

impl Site {
    /// Whether `dir` is on a network or FUSE filesystem (true when
    /// unknown), and its kind when known.
    pub(crate) fn facts(&self, dir: &Path) -> (bool, Option<FsKind>) {
        match self {
            Site::Filesystem => match fs_info::identify(dir) {
                Ok(i) => (i.network || i.kind.is_network(), Some(i.kind)),
                Err(_) => (true, None),
            },
            #[cfg(test)]
            Site::Given { network, kind } => (*network, *kind),
        }
    }

    /// Whether the policy makes the log's segments in `dir` NOCOW
    /// ([`crate::Plan::nocow`], for `choice`), and why: the log asks the
    /// plan that `grow --for log` and `fspace info` give.
    pub(crate) fn nocow(&self, dir: &Path, choice: &StrategyChoice) -> (bool, String) {
        match self {
            Site::Filesystem => {
                let info = if choice.is_policy() {
                    fs_info::fs_info(dir)
                } else {
                    fs_info::identify(dir)
                };
                match info {
                    Ok(info) => {
                        let p = policy::plan(&info, Intent::Log, choice);
                        let why = policy::rules::log_nocow(Some(info.kind), p.first()).1;
                        (p.nocow, why.to_string())
                    }
                    Err(e) => (
                        false,
                        format!("the filesystem could not be described ({e})"),
                    ),
                }
            }
            #[cfg(test)]
            Site::Given { kind, .. } => {
                let (on, why) = policy::rules::log_nocow(*kind, Strategy::ZeroFill);
                (on, why.to_string())
            }
        }
    }

    /// The policy's plan for a segment of `size` bytes at `path` in `dir`,
    /// as its reason (`None` where no filesystem answers). When it (or the
    /// caller) prepares log space with holes (copy-on-write filesystems,
    /// [`crate::policy::rules::COW_LOG_STRATEGY`]), checks that the whole
    /// segment's `size` is free before the first step: a sparse file
    /// reserves nothing, so ENOSPC must be found here, not in a commit.
    /// Elsewhere the growth itself reserves the space.
    pub(crate) fn segment_plan(
        &self,
        dir: &Path,
        path: &Path,
        size: u64,
        choice: &StrategyChoice,
        not_nocow: Option<&str>,
    ) -> Result<Option<String>> {
        match self {
            Site::Filesystem => segment_plan(dir, path, size, choice, not_nocow).map(Some),
            #[cfg(test)]
            Site::Given { .. } => Ok(None),
        }
    }
}

fn segment_plan(
    dir: &Path,
    path: &Path,
    size: u64,
    choice: &StrategyChoice,
    not_nocow: Option<&str>,
) -> Result<String> {
    // Measured (once per device, then cached), as the growth that follows
    // asks it: the same plan and reason, the segment NOCOW or not as the
    // growth will find it (`not_nocow`: why it is not, where the policy
    // would have it so).
    let info = if choice.is_policy() {
        fs_info::fs_info(dir)?
    } else {
        fs_info::identify(dir)?
    };
    let mut plan = policy::plan(&info, Intent::Log, choice);
    if let Some(why) = not_nocow.filter(|_| plan.nocow && choice.is_policy()) {
        plan = policy::rules::log_if_nocow_refused(&info, why);
    }
    if plan.first() != Strategy::Sparse {
        return Ok(plan.reason);
    }
    // Copy-on-write: f_bavail is what data can use (f_bfree is raw space).
    let free = info.free_bytes;
    if free < size {
        return Err(Error::refused_errno(
            "prepare",
            path,
            Errno::NOSPC,
            format!(
                "a {} segment needs that much free space; the filesystem has {}",
                format_human(size),
                format_human(free)
            ),
        ));
    }
    Ok(plan.reason)
}
