//! The copy's vocabulary: sparse and reflink modes, the options, the rungs
//! and the report.

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::note::Note;
use crate::strategy::Progress;

/// What to do with zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SparseMode {
    /// Keep the source's holes as holes; copy its data as it is.
    #[default]
    Auto,
    /// Also turn zero blocks inside the data into holes (reads every byte).
    Always,
    /// Write everything, holes as zeros: the copy ends fully allocated.
    Never,
}

/// Whether the copy may share the source's blocks (reflink).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReflinkMode {
    /// Share blocks when the filesystem can (`FICLONE`), else copy.
    #[default]
    Auto,
    /// Share blocks or fail.
    Always,
    /// Never share: every block of the copy is its own.
    Never,
}

macro_rules! mode_names {
    ($t:ident, $what:literal) => {
        impl $t {
            /// Returns the name used on the command line and in JSON.
            pub fn name(self) -> &'static str {
                match self {
                    $t::Auto => "auto",
                    $t::Always => "always",
                    $t::Never => "never",
                }
            }
        }
        impl FromStr for $t {
            type Err = crate::invalid::ParseError;
            fn from_str(s: &str) -> std::result::Result<Self, crate::invalid::ParseError> {
                match s {
                    "auto" => Ok($t::Auto),
                    "always" => Ok($t::Always),
                    "never" => Ok($t::Never),
                    _ => Err(crate::invalid::ParseError::new(
                        concat!($what, " mode"),
                        s,
                        ["auto", "always", "never"],
                    )),
                }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
mode_names!(SparseMode, "sparse");
mode_names!(ReflinkMode, "reflink");

/// The rung of the copy ladder that moved the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyMethod {
    /// `FICLONE`: the copy shares the source's blocks.
    Clone,
    /// `copy_file_range` per data extent: the kernel (or the filesystem)
    /// moved the data.
    CopyFileRange,
    /// `pread` + [`SparseWriter`](super::super::SparseWriter).
    ReadWrite,
    /// `read` to the end of a source whose size says nothing (a pipe, a
    /// file in /proc), or in-order writes into a pipe, FIFO or device.
    Stream,
    /// Onto a block device: data written, zero ranges zeroed by
    /// `BLKZEROOUT` (or skipped with `target_is_zero`).
    Device,
    /// Nothing to move: the source is empty.
    None,
}

impl CopyMethod {
    /// Returns the name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            CopyMethod::Clone => "clone",
            CopyMethod::CopyFileRange => "copy_file_range",
            CopyMethod::ReadWrite => "read_write",
            CopyMethod::Stream => "stream",
            CopyMethod::Device => "device",
            CopyMethod::None => "none",
        }
    }
}

impl fmt::Display for CopyMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rung that was tried (or ruled out) before the one that did the work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CopyFallback {
    /// The rung.
    pub method: CopyMethod,
    /// Why it was not used.
    pub reason: String,
    /// The errno of the failed call, if one failed.
    pub errno: Option<i32>,
}

/// How to copy.
#[derive(Clone, Copy, Default)]
#[non_exhaustive]
pub struct CopyOptions<'a> {
    /// What to do with zeros (default `auto`: keep the source's holes).
    pub sparse: SparseMode,
    /// Whether blocks may be shared (default `auto`).
    pub reflink: ReflinkMode,
    /// Replace an existing destination (never the source itself).
    pub force: bool,
    /// Give the copy the source's mode (with setuid/setgid/sticky), owner
    /// and group (when permitted) and access and modification times.
    pub preserve: bool,
    /// Make the copy durable: `fsync` it before the rename and `fsync` the
    /// directory after; when `copy` returns, the complete copy is on disk
    /// under its name.
    ///
    /// Without it, a power cut soon after may leave: for a new name, no
    /// file, or a file of any length from 0 to the source's (its data not
    /// yet written) under the name; when replacing an existing file
    /// (`force`), the old file or the complete copy, never a partial one
    /// (the copy is fsynced before it replaces a file even without `sync`,
    /// and the report notes it).
    pub sync: bool,
    /// Keep the source's allocation: its unwritten extents (allocated by
    /// `fallocate`, never written) become unwritten extents of the copy,
    /// inside and past its end, instead of holes; holes stay holes. Not the
    /// default: the default copy is at least as sparse as `cp`'s, and a
    /// backup target should not have space reserved that nobody asked for.
    /// Only with sparse mode `auto`. Where the copy's filesystem cannot
    /// allocate without writing (ext3, sshfs) the report says so.
    pub keep_allocation: bool,
    /// The destination is a block device known to read zeros everywhere
    /// (freshly discarded, or a new thin volume): zero ranges are skipped
    /// instead of zeroed. Ignored for files, which start empty.
    pub target_is_zero: bool,
    /// Checked between chunks: when it becomes true the copy stops, the
    /// temporary file is removed and the call fails with `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called after each chunk with the source bytes done (holes included).
    pub progress: Option<&'a dyn Fn(Progress)>,
}

impl CopyOptions<'_> {
    /// Checks that the options can go together; the error names the
    /// option and says why not (the CLI prints it as a usage error, the C
    /// API returns `-EINVAL` with it, [`copy()`](super::copy) refuses with
    /// `EINVAL`).
    pub fn validate(&self) -> std::result::Result<(), crate::invalid::InvalidOption> {
        if self.keep_allocation && self.sparse != SparseMode::Auto {
            return Err(crate::invalid::InvalidOption::new("sparse", format!(
                "keep allocation copies unwritten extents as unwritten, and sparse mode {} would make them {}; use sparse mode auto with it",
                self.sparse,
                if self.sparse == SparseMode::Always { "holes" } else { "written zeros" }
            )));
        }
        if self.reflink == ReflinkMode::Always && self.sparse != SparseMode::Auto {
            return Err(crate::invalid::InvalidOption::new("sparse", format!(
                "reflink always shares the source's blocks as they are, so sparse mode {} cannot apply; use one or the other",
                self.sparse
            )));
        }
        Ok(())
    }
}

impl fmt::Debug for CopyOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CopyOptions")
            .field("sparse", &self.sparse)
            .field("reflink", &self.reflink)
            .field("force", &self.force)
            .field("preserve", &self.preserve)
            .field("sync", &self.sync)
            .field("keep_allocation", &self.keep_allocation)
            .field("target_is_zero", &self.target_is_zero)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What a copy did.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CopyReport {
    /// The source.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub src: PathBuf,
    /// The destination written (inside DST when DST is a directory).
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub dst: PathBuf,
    /// Bytes in the copy: the source's length when the copy began.
    pub len: u64,
    /// The rung that moved the data.
    pub method: CopyMethod,
    /// Rungs tried or ruled out before it, and why.
    pub fallbacks: Vec<CopyFallback>,
    /// The sparse mode used.
    pub sparse: SparseMode,
    /// The reflink mode used.
    pub reflink: ReflinkMode,
    /// Bytes shared with the source by `FICLONE`.
    pub bytes_cloned: u64,
    /// Bytes moved by `copy_file_range` (method `copy_file_range`).
    pub bytes_offloaded: u64,
    /// Bytes written by `pwritev` (zeros written as data included).
    pub bytes_copied: u64,
    /// Data extents of the source (ranges between holes) visited; `None`
    /// after a clone, which shares the source's extents, holes included,
    /// without visiting them (`fspace map` counts them).
    pub data_extents: Option<u64>,
    /// Hole ranges in the copy (the source's, and zero runs made holes);
    /// `None` after a clone. Counting them there took one `FIEMAP` of the
    /// source, a visible share of cp's whole time for a source of 20,000
    /// extents on xfs (bench/runs/2026-11-25-copy-ab/: the clone rows).
    pub holes: Option<u64>,
    /// Bytes in those holes; `None` after a clone.
    pub hole_bytes: Option<u64>,
    /// Of those, zeros found inside the source's data (`--sparse always`).
    pub zero_bytes_holed: u64,
    /// Bytes of the source's unwritten extents reserved as unwritten in the
    /// copy (`keep_allocation`), counted by the ranges reserved.
    pub bytes_kept_allocated: u64,
    /// Bytes a block device destination was made to read as zeros by
    /// `BLKZEROOUT` (method `device`).
    pub bytes_zeroed: u64,
    /// Bytes the source has allocated (`st_blocks`); `None` (JSON `null`)
    /// where `st_blocks` does not measure allocation (FUSE and network
    /// filesystems, pipes).
    pub src_allocated: Option<u64>,
    /// Bytes the copy has allocated (`st_blocks`, delayed allocations
    /// included); `None` where that cannot be known.
    pub dst_allocated: Option<u64>,
    /// Whether the source's size could be trusted; false for pipes, FIFOs
    /// and files read to their end because their size said nothing (see
    /// the notes).
    pub size_reliable: bool,
    /// Syscalls the copy issued through fspace's counted wrappers (opens,
    /// stats, seeks, reads, writes, syncs, the final rename, the directory
    /// scan for stale temporary files; not closes).
    pub syscalls: u64,
    /// Of those, the write-type ones (`pwritev`, `fallocate`, `ftruncate`,
    /// `copy_file_range`, `FICLONE`).
    pub write_syscalls: u64,
    /// Whether an existing destination was replaced.
    pub replaced: bool,
    /// Whether mode, owner and times were copied.
    pub preserved: bool,
    /// Whether the copy was made durable.
    pub synced: bool,
    /// Other things worth knowing.
    pub notes: Vec<Note>,
    /// Wall time.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
}

setters!(CopyOptions<'a> { sparse: SparseMode, reflink: ReflinkMode, force: bool, preserve: bool, sync: bool, keep_allocation: bool, target_is_zero: bool, cancel: Option<&'a AtomicBool>, progress: Option<&'a dyn Fn(Progress)> });
