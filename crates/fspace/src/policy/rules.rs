//! The built-in rules: which strategies to try, in order, for a filesystem
//! and an intent when nothing was measured there (`docs/design.md`, "Default
//! policy"), and the rules a measurement may not overrule. Every rule is a
//! named constant or a match arm with its evidence.

use super::plan::Plan;
use crate::fs_info::{FsInfo, FsKind};
use crate::strategy::{Intent, Strategy, SyncMethod};

/// FUSE and network filesystems are treated alike: their `fallocate` is
/// missing or emulated by the server and the reported block size is
/// unreliable (NFS preallocation fragments files, `docs/filesystems.md`;
/// sshfs returns `EOPNOTSUPP`).
pub const TREAT_FUSE_AS_NETWORK: bool = true;

/// How log space is prepared on copy-on-write filesystems (btrfs, zfs,
/// bcachefs): `sparse`, after checking that the space is free (a sparse file
/// reserves none). Zero-filling buys nothing there (every overwrite
/// allocates), and writing records into fallocated (preallocated) extents
/// measured slower than into holes: the log behind appending with
/// allocated segments, ahead of it with sparse ones
/// (bench/runs/2026-11-22-commit/, notes.md; and with allocated segments
/// bench/runs/2026-11-22-commit-before-cow-sparse/). A user's btrfs probe
/// agreed (in no run folder): allocated space was the slowest state it
/// measured.
pub const COW_LOG_STRATEGY: Strategy = Strategy::Sparse;

/// Tie-break order for log preparation on filesystems that overwrite in
/// place: `write-zeroes` and `allocate` move no data; `zero-fill` writes
/// the whole segment first. (`sparse` is no candidate there: holes reserve
/// nothing and make every commit allocate.)
pub const LOG_PREFERENCE: [Strategy; 3] = [
    Strategy::WriteZeroes,
    Strategy::Allocate,
    Strategy::ZeroFill,
];

/// Tie-break order on copy-on-write filesystems: [`COW_LOG_STRATEGY`]
/// first; `allocate` when a measurement finds it faster.
pub const LOG_PREFERENCE_COW: [Strategy; 2] = [COW_LOG_STRATEGY, Strategy::Allocate];

/// Tie-break order where zero-filled log space is made NOCOW
/// ([`LOG_NOCOW_ON`]): `zero-fill` (NOCOW, overwritten in place) first;
/// the copy-on-write preparations when a measurement finds them faster.
pub const LOG_PREFERENCE_NOCOW: [Strategy; 3] =
    [Strategy::ZeroFill, COW_LOG_STRATEGY, Strategy::Allocate];

/// On network and FUSE filesystems strategies built on `fallocate` are
/// never recommended for logs, whatever they measured
/// ([`TREAT_FUSE_AS_NETWORK`]).
pub const REMOTE_EXCLUDES_FALLOCATE: bool = true;

/// Tie-break order for bulk space: reserve without writing first.
pub const BULK_PREFERENCE: [Strategy; 3] = [
    Strategy::Allocate,
    Strategy::WriteZeroes,
    Strategy::ZeroFill,
];

/// On copy-on-write filesystems every overwrite allocates new blocks, so
/// zeros written ahead are thrown away by the first record: zero-fill only
/// doubles the writes (`docs/filesystems.md`).
pub const COW_EXCLUDES_ZERO_FILL: bool = true;

/// How a log commit is made durable where nothing was measured: `direct-dsync`
/// (O_DIRECT + RWF_DSYNC) on ext4 and xfs, `fdatasync` everywhere else
/// ([`log_sync_method`]).
///
/// Evidence (bench/runs/2026-11-25-sync-methods/: 8 KiB records, methods
/// alternating in each invocation): through the log with 1 writer,
/// direct-dsync beat fdatasync on ext4 and xfs in every round, and on
/// btrfs only with rounds on both sides; with 8 writers it was level; dsync
/// alone (buffered) was level, rounds on both sides. A bare overwrite with
/// 8 writers gains most (each writer's write is durable on its own, no
/// shared fdatasync). The cost (bench/runs/2026-11-25-sync-methods-1mib/):
/// with 1 MiB records direct-dsync was level or slower on ext4 and slower
/// in every round on xfs: each large
/// direct write waits for the device, where the page cache would absorb
/// it. A log of large records should ask for `fdatasync`. On btrfs nothing
/// was gained (copy-on-write allocates on every write either way); network
/// and FUSE filesystems keep `fdatasync` (O_DIRECT there is the server's).
pub const LOG_DIRECT_DSYNC_ON: [FsKind; 2] = [FsKind::Ext4, FsKind::Xfs];

/// The sync method for a log on a filesystem of `kind` (`None`: unknown),
/// and why ([`LOG_DIRECT_DSYNC_ON`]).
pub fn log_sync_method(kind: Option<FsKind>, remote: bool) -> (SyncMethod, &'static str) {
    match kind {
        Some(k) if !remote && LOG_DIRECT_DSYNC_ON.contains(&k) => (
            SyncMethod::DirectDsync,
            "O_DIRECT + RWF_DSYNC overwrites of written space measured 1.08-1.15x fdatasync with 8 KiB records on ext4 and xfs (LOG_DIRECT_DSYNC_ON)",
        ),
        _ if remote => (
            SyncMethod::Fdatasync,
            "network or FUSE filesystem: buffered writes and one fdatasync per group (LOG_DIRECT_DSYNC_ON)",
        ),
        _ => (
            SyncMethod::Fdatasync,
            "no sync method measured faster than fdatasync on this filesystem (LOG_DIRECT_DSYNC_ON)",
        ),
    }
}

/// Filesystems on which log space is made no-copy-on-write (`FS_NOCOW_FL`,
/// `chattr +C`, set while the file is empty) and zero-filled, so that
/// records overwrite written blocks in place, as on ext4: btrfs. This is
/// the built-in log answer there, for `fspace grow --for log` as for each
/// segment of fspace's log. fspace's log covers every record with its own
/// CRC32C; what btrfs gives up for these files is its data checksum (and,
/// on a RAID1 or DUP profile, repairing a bad block from the other copy)
/// and compression. Where the attribute is refused (a file that already
/// holds data, a directory with the compression attribute), the file stays
/// copy-on-write: [`log_if_nocow_refused`].
///
/// Evidence: docs/wal-format.md, "Choosing the layout" (the run folders
/// of its measurements): NOCOW zero-filled segments beat the copy-on-write
/// log 1.20x and plain appending 1.17x with 8 KiB records on btrfs.
pub const LOG_NOCOW_ON: [FsKind; 1] = [FsKind::Btrfs];

/// Whether log space grown by `strategy` on a filesystem of `kind` is made
/// no-copy-on-write first, and why ([`LOG_NOCOW_ON`]): on those
/// filesystems, space that is written ahead (`zero-fill`,
/// `write-zeroes`); holes and fallocated space stay copy-on-write.
pub fn log_nocow(kind: Option<FsKind>, strategy: Strategy) -> (bool, &'static str) {
    match kind {
        Some(k)
            if LOG_NOCOW_ON.contains(&k)
                && matches!(strategy, Strategy::ZeroFill | Strategy::WriteZeroes) =>
        {
            (true, "zero-filled, overwritten in place (LOG_NOCOW_ON)")
        }
        Some(k) if LOG_NOCOW_ON.contains(&k) => (
            false,
            "space not written ahead stays copy-on-write (LOG_NOCOW_ON)",
        ),
        _ => (
            false,
            "the filesystem overwrites in place already, or has no such attribute (LOG_NOCOW_ON)",
        ),
    }
}

/// The log plan where [`LOG_NOCOW_ON`] applies but the file could not be
/// made NOCOW (`why`: the refusal, or that the caller turned it off): the
/// copy-on-write rule, [`COW_LOG_STRATEGY`] after a free-space check (and,
/// in fspace's log, flushes padded to pages, [`LOG_PAD_FLUSHES_ON`]).
pub fn log_if_nocow_refused(info: &FsInfo, why: &str) -> Plan {
    Plan::new(
        vec![COW_LOG_STRATEGY],
        format!(
            "{}: {why}, so the file stays copy-on-write: \
             zero-filling would buy nothing, {COW_LOG_STRATEGY} \
             after checking that the space is free (LOG_NOCOW_ON)",
            info.display_name()
        ),
    )
}

/// Filesystems on which the log pads every flush to a page boundary
/// (`WalOptions::pad_flushes`) when its segments are copy-on-write (not
/// made NOCOW, [`LOG_NOCOW_ON`]): rewriting the partial last page of one
/// commit at the next allocates a new block for it and keeps the old
/// extent pinned while the rest of it is referenced; padded, no page is
/// written twice.
///
/// Evidence: docs/wal-format.md, "Choosing the layout".
pub const LOG_PAD_FLUSHES_ON: [FsKind; 1] = [FsKind::Btrfs];

/// Whether a log on a filesystem of `kind`, its segments NOCOW or not,
/// pads its flushes, and why ([`LOG_PAD_FLUSHES_ON`]).
pub fn log_pad_flushes(kind: Option<FsKind>, nocow: bool) -> (bool, &'static str) {
    match kind {
        Some(k) if LOG_PAD_FLUSHES_ON.contains(&k) && !nocow => (
            true,
            "copy-on-write segments: a page written twice pins its old block (LOG_PAD_FLUSHES_ON)",
        ),
        _ => (
            false,
            "pages are overwritten in place here: rewriting the partial last page costs nothing extra (LOG_PAD_FLUSHES_ON)",
        ),
    }
}

/// Returns true if and only if `info`'s filesystem is a network or FUSE one
/// for the policy's purposes ([`TREAT_FUSE_AS_NETWORK`]).
pub fn is_remote(info: &FsInfo) -> bool {
    info.network || info.kind.is_network() || (TREAT_FUSE_AS_NETWORK && info.kind == FsKind::Fuse)
}

/// Why `s` may not prepare log space on `info`'s filesystem, if it may not.
/// A measurement never overrules these.
pub fn log_excluded(info: &FsInfo, s: Strategy) -> Option<&'static str> {
    let cow = info.copy_on_write;
    // Zero-filled log space is made NOCOW there: not copy-on-write.
    let nocow = LOG_NOCOW_ON.contains(&info.kind);
    match s {
        Strategy::ZeroFill if cow && !nocow && COW_EXCLUDES_ZERO_FILL => Some(
            "copy-on-write: every overwrite allocates new blocks, so zeros written ahead are thrown away",
        ),
        Strategy::Sparse if !cow => Some(
            "holes reserve nothing and make every commit allocate, so a full disk would surface in a commit",
        ),
        Strategy::Allocate | Strategy::WriteZeroes
            if is_remote(info) && REMOTE_EXCLUDES_FALLOCATE =>
        {
            Some("network/FUSE filesystem: fallocate is missing or emulated by the server")
        }
        _ => None,
    }
}

/// The preparations a measurement may choose between for a log on
/// `info`'s filesystem, in tie-break order: [`LOG_PREFERENCE`]
/// ([`LOG_PREFERENCE_COW`] on copy-on-write filesystems) without the ones
/// [`log_excluded`] rules out. The probe asks this rather than picking an
/// order itself, so that what it measures and what it may recommend are
/// the policy's answer for this filesystem.
pub(crate) fn log_candidates(info: &FsInfo) -> Vec<Strategy> {
    let order: &[Strategy] = if LOG_NOCOW_ON.contains(&info.kind) {
        &LOG_PREFERENCE_NOCOW
    } else if info.copy_on_write {
        &LOG_PREFERENCE_COW
    } else {
        &LOG_PREFERENCE
    };
    order
        .iter()
        .copied()
        .filter(|&s| log_excluded(info, s).is_none())
        .collect()
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
    Plan::new(ladder, format!("strategy {} requested", strategy.name()))
}

/// Returns the ladder that follows a measured recommendation of `strategy`
/// for `intent`: the strategy, then the built-in fallback for it
/// (`zero-fill` after `allocate` or `write-zeroes`, the same guarantee by
/// other means; [`COW_LOG_STRATEGY`] instead for logs on copy-on-write
/// filesystems, where zero-fill is never used).
pub fn measured_ladder(info: &FsInfo, intent: Intent, strategy: Strategy) -> Vec<Strategy> {
    let mut ladder = vec![strategy];
    if matches!(strategy, Strategy::Allocate | Strategy::WriteZeroes) {
        if info.copy_on_write && intent == Intent::Log {
            ladder.push(COW_LOG_STRATEGY);
        } else {
            ladder.push(Strategy::ZeroFill);
        }
    }
    ladder
}

/// Returns the built-in ladder for `info` and `intent`.
///
/// The measured capabilities take precedence over the kind: a strategy the
/// capability probe found unsupported is left out rather than tried and
/// failed (the reason says so), which is how ext4 without extents gets
/// `zero-fill` directly.
pub fn built_in(info: &FsInfo, intent: Intent) -> Plan {
    match intent {
        Intent::Sparse => Plan::new(
            vec![Strategy::Sparse],
            "intent sparse: the space may stay empty, so only the length changes".into(),
        ),
        Intent::Bulk => bulk(info),
        Intent::Log => log(info),
    }
}

fn bulk(info: &FsInfo) -> Plan {
    let caps = info.caps();
    let fs = info.display_name();
    if is_remote(info) {
        Plan::new(
            vec![Strategy::ZeroFill],
            format!(
                "{fs} is a network/FUSE filesystem: fallocate is missing or emulated there, \
                 so large zero writes reserve the space (never glibc's 1-byte-per-block emulation)"
            ),
        )
    } else if !caps.is_none_or(|c| c.fallocate.supported) {
        Plan::new(
            vec![Strategy::ZeroFill],
            format!(
                "fallocate was measured unsupported on {fs} (e.g. ext4 without extents): zero-fill"
            ),
        )
    } else if caps.is_none() {
        Plan::new(
            vec![Strategy::Allocate, Strategy::ZeroFill],
            format!(
                "bulk data on {fs}: fallocate reserves the space without writing it \
                 (capabilities could not be measured here, so zero-fill is the fallback)"
            ),
        )
    } else {
        Plan::new(
            vec![Strategy::Allocate, Strategy::ZeroFill],
            format!("bulk data on {fs}: fallocate reserves the space without writing it"),
        )
    }
}

fn log(info: &FsInfo) -> Plan {
    let caps = info.caps();
    let fs = info.display_name();
    if LOG_NOCOW_ON.contains(&info.kind) {
        let mut p = Plan::new(
            vec![Strategy::ZeroFill],
            format!(
                "log on {fs}: the file is made NOCOW while empty and zero-filled, \
                 so records overwrite written blocks in place, as on ext4 (LOG_NOCOW_ON); \
                 where NOCOW is refused (a file holding data, compression): \
                 copy-on-write, {COW_LOG_STRATEGY} after a free-space check"
            ),
        );
        p.nocow = true;
        return p;
    }
    if info.copy_on_write {
        return Plan::new(
            vec![COW_LOG_STRATEGY],
            format!(
                "{fs} is copy-on-write: every overwrite allocates new blocks, so zero-filling buys nothing, \
                 and records written into preallocated extents measured slower than into holes; \
                 {COW_LOG_STRATEGY}, after checking that the space is free"
            ),
        );
    }
    if matches!(info.kind, FsKind::Tmpfs | FsKind::Ramfs) {
        return Plan::new(
            vec![Strategy::Allocate, Strategy::ZeroFill],
            format!("{fs} is memory: no journal, so allocated pages are as good as written ones"),
        );
    }
    if is_remote(info) {
        return Plan::new(
            vec![Strategy::ZeroFill],
            format!(
                "{fs} is a network/FUSE filesystem: zero-fill so later overwrites do not allocate"
            ),
        );
    }
    if caps.is_some_and(|c| c.write_zeroes.supported) {
        return Plan::new(
            vec![Strategy::WriteZeroes, Strategy::ZeroFill],
            format!(
                "log on {fs}: written extents make each later fdatasync flush data only; \
                 WRITE_ZEROES was measured supported"
            ),
        );
    }
    let why = if caps.is_some() {
        "WRITE_ZEROES was measured unsupported"
    } else {
        "WRITE_ZEROES could not be measured here"
    };
    Plan::new(
        vec![Strategy::ZeroFill],
        format!(
            "log on {fs}: written extents make each later fdatasync flush data only \
             (unwritten ones cost a journal commit each); {why}, so zero-fill"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_candidates_follow_the_preference_without_the_excluded() {
        let mut ext4 = crate::fs_info::identify(std::path::Path::new("/")).unwrap();
        ext4.kind = FsKind::Ext4;
        ext4.copy_on_write = false;
        ext4.network = false;
        assert_eq!(log_candidates(&ext4), LOG_PREFERENCE);
        let mut btrfs = ext4.clone();
        btrfs.kind = FsKind::Btrfs;
        btrfs.copy_on_write = true;
        assert_eq!(log_candidates(&btrfs), LOG_PREFERENCE_NOCOW);
        let mut zfs = btrfs.clone();
        zfs.kind = FsKind::Zfs;
        assert_eq!(log_candidates(&zfs), LOG_PREFERENCE_COW);
        // Network or FUSE: nothing built on fallocate.
        let mut sshfs = ext4.clone();
        sshfs.kind = FsKind::Fuse;
        sshfs.network = true;
        assert_eq!(log_candidates(&sshfs), [Strategy::ZeroFill]);
    }
}
