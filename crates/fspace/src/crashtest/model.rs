//! What a filesystem may leave after a power cut: the persistence models
//! the crash states are built under. Each rule cites where it comes from
//! (docs/crashtest.md "Models" has the sources in full).

use crate::invalid::ParseError;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A persistence model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// The worst case POSIX allows: nothing is ordered, a new name needs an
    /// fsync of its directory, a file's size can persist without its data,
    /// writes tear at 512-byte sectors.
    Posix,
    /// ext4 with `data=ordered` (the default) and `auto_da_alloc`: one
    /// journal (metadata persists in order, any fsync commits all of it),
    /// appended data persists with its size, a rename over an existing
    /// file and a truncate to zero carry the file's data with them.
    Ext4,
    /// XFS: an ordered metadata log that any fsync forces, sizes updated
    /// only when the data is written, no replace-via-rename heuristic.
    Xfs,
    /// btrfs: transactions persist metadata in order, copy-on-write data
    /// never tears inside a page, fsync logs the file's data and its own
    /// names but not other metadata.
    Btrfs,
}

impl Model {
    /// Every model, the worst case first.
    pub const ALL: [Model; 4] = [Model::Posix, Model::Ext4, Model::Xfs, Model::Btrfs];

    /// Its name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Model::Posix => "posix",
            Model::Ext4 => "ext4",
            Model::Xfs => "xfs",
            Model::Btrfs => "btrfs",
        }
    }

    /// The unit a write can tear into: a sector for the worst case (a
    /// device promises no more, Linux `Documentation/block/atomic-writes`),
    /// a page where the filesystem writes data back page by page (ext4,
    /// XFS) or copies it on write (btrfs).
    pub fn tear_unit(self) -> u64 {
        match self {
            Model::Posix => 512,
            _ => 4096,
        }
    }

    /// Metadata operations (names, truncation, allocation) persist as a
    /// prefix of the order they were made in: a journal or a log (jbd2,
    /// the XFS log, btrfs transactions).
    pub(crate) fn metadata_in_order(self) -> bool {
        self != Model::Posix
    }

    /// An fsync or a growing fdatasync commits every earlier metadata
    /// operation, of any file (one journal: ext4 `ext4_sync_file` →
    /// `jbd2_complete_transaction`; XFS `xfs_log_force_seq`).
    pub(crate) fn fsync_commits_all_metadata(self) -> bool {
        matches!(self, Model::Ext4 | Model::Xfs)
    }

    /// An fsync of a file makes its own new names durable (btrfs logs the
    /// inode's references, `btrfs_log_inode`; ext4 and XFS through the
    /// journal commit above).
    pub(crate) fn fsync_persists_own_names(self) -> bool {
        self != Model::Posix
    }

    /// A file's size grows on disk only with the data that grew it
    /// (delayed allocation with ordered data; XFS updates the on-disk size
    /// at I/O completion; btrfs references data extents after writing
    /// them). The worst case allows a size without its data (zeros).
    pub(crate) fn size_with_data(self) -> bool {
        self != Model::Posix
    }

    /// `auto_da_alloc`: a rename over an existing file, and a truncate to
    /// zero followed by close, write the file's delayed data before the
    /// journal commits the rename (ext4(5)).
    pub(crate) fn replace_carries_data(self) -> bool {
        self == Model::Ext4
    }

    /// Where the model's rules come from, in one line.
    pub fn source(self) -> &'static str {
        match self {
            Model::Posix => "POSIX fsync(2)/rename(2); ALICE's abstract persistence model (Pillai et al., OSDI '14)",
            Model::Ext4 => "ext4(5) data=ordered and auto_da_alloc; Documentation/filesystems/ext4 (journal); ALICE's ext4 APM",
            Model::Xfs => "xfs(5); Documentation/filesystems/xfs/xfs-delayed-logging-design; xfs_file_fsync",
            Model::Btrfs => "btrfs(5); Documentation/filesystems/btrfs (log tree); btrfs_sync_file",
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Model {
    type Err = ParseError;
    /// A model by its [`name`](Model::name); any other text is a
    /// [`ParseError`] listing the names.
    fn from_str(s: &str) -> Result<Model, ParseError> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| ParseError::new("crash model", s, Model::ALL.map(Model::name)))
    }
}
