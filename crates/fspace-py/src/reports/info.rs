//! What fspace knows about a filesystem (`fspace.info`).

use super::common::{os, report};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::ffi::OsString;

report! {
    /// Whether one operation works on a filesystem, measured on a scratch
    /// file there.
    Capability {
        /// True if and only if it succeeded and behaved as specified.
        supported: bool,
        /// The errno it failed with, if it failed.
        errno: Option<i32>,
        /// The failure or caveat in words.
        detail: Option<String>,
    }
}

report! {
    /// The policy's answer for one intent: the ladder of strategies tried
    /// in order, and why.
    Plan {
        /// `"bulk"`, `"log"` or `"sparse"`.
        intent: String,
        /// Strategy names, first choice first.
        ladder: Vec<String>,
        /// Why this ladder.
        reason: String,
        /// The saved probe measurement followed, if any.
        saved_probe: Option<OsString>,
    }
}

report! {
    /// What fspace knows about the filesystem holding a path
    /// (`fspace.info`).
    FsInfo + json {
        /// The path asked about.
        path: OsString,
        /// The family from the statfs magic (`"ext4"`, `"xfs"`, `"fuse"`).
        kind: String,
        /// The name to show: the mount's type when known (`"ext3"`,
        /// `"fuse.sshfs"`), else the kind.
        filesystem: String,
        /// The statfs magic.
        magic: u64,
        /// The mount's type from mountinfo, when found.
        fs_type: Option<String>,
        /// The FUSE subtype (`"sshfs"`), when visible.
        fuse_subtype: Option<String>,
        /// The mount point, when found.
        mount_point: Option<OsString>,
        /// The mounted device or source, when found.
        source: Option<String>,
        /// `st_dev` of the path.
        device: u64,
        /// The mount's and the superblock's options, when found.
        mount_options: Option<String>,
        /// `f_bsize`: preferred I/O size (unreliable on network filesystems).
        block_size: u64,
        /// Total bytes.
        total_bytes: u64,
        /// Bytes available to unprivileged users.
        free_bytes: u64,
        /// Bytes available to root.
        free_bytes_root: u64,
        /// Whether the mount is read-only.
        read_only: bool,
        /// Whether overwrites allocate new blocks (btrfs, zfs, bcachefs).
        copy_on_write: bool,
        /// Whether the data goes over a network protocol.
        network: bool,
        /// Whether `st_blocks` measures allocation here (false on FUSE and
        /// network filesystems, where allocation figures are `None`).
        st_blocks_measures_allocation: bool,
        /// The allocation unit in bytes, when known.
        allocation_unit: Option<u64>,
        /// The capabilities measured here, by name (`"fallocate"`,
        /// `"keep-size"`, `"punch-hole"`, `"zero-range"`, `"write-zeroes"`,
        /// `"seek-hole"`, `"fiemap"`, `"ficlone"`); empty when they could
        /// not be measured (`capabilities_error` says why).
        capabilities: BTreeMap<String, Capability>,
        /// Why the capabilities could not be measured, if so.
        capabilities_error: Option<super::common::Reason>,
        /// The policy's answer per intent (bulk, log, sparse).
        policy: Vec<Plan>,
    }
}

/// The policy's answer for `intent` here, as `fspace info` gives it (saved
/// measurements from the state directory).
fn plan_of(info: &fspace::FsInfo, intent: fspace::Intent) -> fspace::Plan {
    fspace::plan(info, intent, &fspace::StrategyChoice::auto_from_state_dir())
}

fn plan_reason(p: &fspace::Plan) -> String {
    if p.notes.is_empty() {
        p.reason.clone()
    } else {
        let n: Vec<String> = p.notes.iter().map(|n| n.text.clone()).collect();
        format!("{} ({})", p.reason, n.join("; "))
    }
}

const INTENTS: [fspace::Intent; 3] = [
    fspace::Intent::Bulk,
    fspace::Intent::Log,
    fspace::Intent::Sparse,
];

impl FsInfo {
    pub(crate) fn from(i: &fspace::FsInfo) -> Self {
        let plans: Vec<(fspace::Intent, fspace::Plan)> = INTENTS
            .iter()
            .map(|&intent| (intent, plan_of(i, intent)))
            .collect();
        let policy: Vec<Plan> = plans
            .iter()
            .map(|(intent, p)| Plan {
                intent: intent.name().into(),
                ladder: p.ladder.iter().map(|s| s.name().to_string()).collect(),
                reason: plan_reason(p),
                saved_probe: p.saved.as_deref().map(os),
            })
            .collect();
        let (capabilities, capabilities_error) = match &i.capabilities {
            Ok(c) => (
                c.named()
                    .into_iter()
                    .map(|(name, c)| {
                        (
                            name.to_string(),
                            Capability {
                                supported: c.supported,
                                errno: c.errno,
                                detail: c.detail.clone(),
                            },
                        )
                    })
                    .collect(),
                None,
            ),
            Err(why) => (BTreeMap::new(), Some(super::common::reason(why))),
        };
        // The document of `fspace info --json`: the facts, then the policy.
        let mut doc = serde_json::to_value(i).unwrap_or_default();
        if let Some(m) = doc.as_object_mut() {
            let entries: Vec<serde_json::Value> = plans
                .iter()
                .map(|(intent, p)| {
                    serde_json::json!({
                        "intent": intent,
                        "ladder": p.ladder,
                        "reason": plan_reason(p),
                        "saved_probe": p.saved.as_ref().map(|s| s.to_string_lossy().into_owned()),
                    })
                })
                .collect();
            m.insert("policy".into(), serde_json::Value::Array(entries));
        }
        FsInfo {
            path: os(&i.path),
            kind: i.kind.name(),
            filesystem: i.display_name(),
            magic: i.magic,
            fs_type: i.fs_type.clone(),
            fuse_subtype: i.fuse_subtype.clone(),
            mount_point: i.mount_point.as_deref().map(os),
            source: i.source.clone(),
            device: i.device,
            mount_options: i.mount_options.clone(),
            block_size: i.block_size,
            total_bytes: i.total_bytes,
            free_bytes: i.free_bytes,
            free_bytes_root: i.free_bytes_root,
            read_only: i.read_only,
            copy_on_write: i.copy_on_write,
            network: i.network,
            st_blocks_measures_allocation: i.st_blocks_measures_allocation,
            allocation_unit: i.allocation_unit.as_ref().map(|u| u.bytes),
            capabilities,
            capabilities_error,
            policy,
            json: doc.to_string(),
        }
    }
}
