//! [`FsKind`]: a filesystem family, from the `statfs` magic number.

use serde::Serialize;
use std::fmt;

/// A filesystem family, from the `statfs` magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FsKind {
    /// ext2, ext3 or ext4 (one magic, `0xEF53`).
    Ext4,
    /// XFS.
    Xfs,
    /// Btrfs (copy-on-write).
    Btrfs,
    /// OpenZFS (copy-on-write).
    Zfs,
    /// bcachefs (copy-on-write).
    Bcachefs,
    /// F2FS.
    F2fs,
    /// tmpfs (memory).
    Tmpfs,
    /// ramfs (memory, no fallocate).
    Ramfs,
    /// NFS (network).
    Nfs,
    /// CIFS / SMB1 (network).
    Cifs,
    /// SMB2/3 (network).
    Smb2,
    /// Ceph (network).
    Ceph,
    /// 9P (network/virtual).
    NineP,
    /// Any FUSE filesystem; see [`FsInfo::fs_type`](super::FsInfo::fs_type) for the subtype.
    Fuse,
    /// overlayfs: behaviour comes from the upper layer.
    Overlay,
    /// exFAT.
    Exfat,
    /// FAT (msdos/vfat).
    Fat,
    /// Anything else; the magic is kept.
    Other(u64),
}

impl FsKind {
    /// Returns the kind for a `statfs` `f_type` magic.
    pub fn from_magic(magic: u64) -> FsKind {
        match magic {
            0xEF53 => FsKind::Ext4,
            0x5846_5342 => FsKind::Xfs,
            0x9123_683E => FsKind::Btrfs,
            0x2FC1_2FC1 => FsKind::Zfs,
            0xCA45_1A4E => FsKind::Bcachefs,
            0xF2F5_2010 => FsKind::F2fs,
            0x0102_1994 => FsKind::Tmpfs,
            0x8584_58F6 => FsKind::Ramfs,
            0x6969 => FsKind::Nfs,
            0xFF53_4D42 => FsKind::Cifs,
            0xFE53_4D42 => FsKind::Smb2,
            0x00C3_6400 => FsKind::Ceph,
            0x0102_1997 => FsKind::NineP,
            0x6573_5546 => FsKind::Fuse,
            0x794C_7630 => FsKind::Overlay,
            0x2011_BAB0 => FsKind::Exfat,
            0x4D44 => FsKind::Fat,
            other => FsKind::Other(other),
        }
    }

    /// Returns the short name (`ext4`, `xfs`, ..., or the magic in hex).
    pub fn name(self) -> String {
        match self {
            FsKind::Ext4 => "ext4".into(),
            FsKind::Xfs => "xfs".into(),
            FsKind::Btrfs => "btrfs".into(),
            FsKind::Zfs => "zfs".into(),
            FsKind::Bcachefs => "bcachefs".into(),
            FsKind::F2fs => "f2fs".into(),
            FsKind::Tmpfs => "tmpfs".into(),
            FsKind::Ramfs => "ramfs".into(),
            FsKind::Nfs => "nfs".into(),
            FsKind::Cifs => "cifs".into(),
            FsKind::Smb2 => "smb2".into(),
            FsKind::Ceph => "ceph".into(),
            FsKind::NineP => "9p".into(),
            FsKind::Fuse => "fuse".into(),
            FsKind::Overlay => "overlay".into(),
            FsKind::Exfat => "exfat".into(),
            FsKind::Fat => "fat".into(),
            FsKind::Other(m) => format!("unknown(0x{m:x})"),
        }
    }

    /// Returns true if and only if every overwrite allocates new blocks
    /// (btrfs, zfs, bcachefs), so zero-filling buys nothing.
    pub fn is_copy_on_write(self) -> bool {
        matches!(self, FsKind::Btrfs | FsKind::Zfs | FsKind::Bcachefs)
    }

    /// Returns true if and only if a write that extends a file may allocate
    /// blocks past its end (speculative preallocation, XFS), so that a hole
    /// that is only skipped, not punched, keeps them once a later write
    /// moves the end of file past it. Evidence: docs/design.md, "Measured
    /// when the project started" (no run folder; xfs: nearly the whole file
    /// allocated after a seek-only copy of half as much data). The sparse
    /// writer punches every hole that follows written data there, as
    /// `cp --sparse=always` does, and a copy does not set the length first:
    /// on xfs a punch inside the file's length flushes the range, and the
    /// 50% holes copy in bench/copy.py ran several times cp's time that way
    /// and close to it without (bench/runs/2026-11-22-copy-vs-cp/: xfs rows
    /// of ext4-btrfs.txt before, xfs.txt after).
    pub(crate) fn speculative_preallocation(self) -> bool {
        self == FsKind::Xfs
    }

    /// Returns true if and only if this process may count on `f_bfree`
    /// (the blocks reserved for root, ext4's 5%) rather than `f_bavail`
    /// here: only as root, and not on copy-on-write filesystems, where
    /// `f_bfree` is raw space and `f_bavail` what data can really use
    /// (btrfs, 512 MB: 442 vs 264 MiB; `df` and `btrfs filesystem usage`
    /// agree with the latter).
    pub(crate) fn reserve_usable_by_this_process(self) -> bool {
        rustix::process::geteuid().is_root() && !self.is_copy_on_write()
    }

    /// Returns true if and only if `SEEK_HOLE` here may be the kernel's
    /// generic one, which reports every byte as data (FUSE without an
    /// `lseek` handler, as sshfs; network filesystems before NFS 4.2), so
    /// that finding no hole proves nothing.
    pub fn seek_hole_may_be_blind(self) -> bool {
        self == FsKind::Fuse || self.is_network()
    }

    /// Returns true if and only if `st_blocks` here counts the blocks a
    /// file has allocated. False for FUSE (the daemon makes it up: sshfs
    /// reports size/512 whatever the holes) and network filesystems (the
    /// server's answer, if any, in its own units), where every allocation
    /// figure is unknown.
    pub fn st_blocks_measures_allocation(self) -> bool {
        self != FsKind::Fuse && !self.is_network()
    }

    /// Returns true if and only if the data lives behind a network protocol.
    /// FUSE is decided by its subtype in [`FsInfo::network`](super::FsInfo::network).
    pub fn is_network(self) -> bool {
        matches!(
            self,
            FsKind::Nfs | FsKind::Cifs | FsKind::Smb2 | FsKind::Ceph | FsKind::NineP
        )
    }
}

impl fmt::Display for FsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for FsKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}
