//! What a growth is asked ([`GrowOptions`]) and what it reports
//! ([`GrowReport`]).

use crate::note::Note;
use crate::policy::StrategyChoice;
use crate::strategy::{Fallback, Intent, Progress, Strategy};
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Drop the zeros of a synced zero-fill for intent `log` from the page
/// cache. Evidence (bench/runs/2026-11-22-overwrite-pages-kept/): random
/// 4 KiB overwrites + fdatasync into a zero-filled file were slower on ext4
/// and xfs with the fill's pages cached than after dropping them, and with
/// them dropped level with a file filled with O_DIRECT.
/// The pages are clean after the sync, so dropping them is cheap. Only done
/// with `sync` (on dirty pages the advice starts writeback instead) and for
/// intent `log`: dropping the pages of a large fill takes time (measured by
/// hand, in no run folder), which bulk data, overwritten once and soon,
/// would not get back. Override with
/// [`GrowOptions::drop_filled_pages`].
pub const DROP_FILLED_PAGES_AFTER_SYNC: bool = true;

/// How to grow.
#[derive(Clone)]
#[non_exhaustive]
pub struct GrowOptions<'a> {
    /// How the strategies are chosen: the policy (built-in rules, or a saved
    /// measurement when it names where they are kept), or a strategy the
    /// caller names. Default [`StrategyChoice::built_in`]: the library reads
    /// no saved measurement unless told where ([`StrategyChoice::auto`]).
    pub choice: StrategyChoice,
    /// What the space is for (drives the policy).
    pub intent: Intent,
    /// `fdatasync` once at the end (and, for a created file, `fsync` it
    /// before the rename and `fsync` the directory after): when the call
    /// returns, the growth (and a created file's name) is on disk.
    ///
    /// Without it, a power cut soon after may leave an existing file at
    /// any length between its old one and the new one (never shorter, its
    /// old bytes unchanged), and a created file missing, or present under
    /// its name with any length from 0 up: the rename may reach the disk
    /// before the data. Measured (`tests/power_cut.rs`, 8 MiB, a journal
    /// commit after it): zero-fill came back as a 0-byte file on ext4 and
    /// xfs, and on btrfs for intent log (NOCOW, zero-filled); allocate
    /// (ext4, xfs, btrfs) and sparse (btrfs, before log space there was
    /// zero-filled) came back whole,
    /// their length being metadata that commits with the rename.
    pub sync: bool,
    /// Create the file when missing: it is grown under a temporary name in
    /// the same directory and renamed into place when complete (never
    /// replacing a file that appeared meanwhile). What a power cut may
    /// leave depends on [`sync`](Self::sync).
    pub create: bool,
    /// Refuse a zero-fill up front when the filesystem reports less free
    /// space than it needs, instead of writing until `ENOSPC`.
    pub check_free_space: bool,
    /// After a synced zero-fill for intent `log`, drop the filled range from
    /// the page cache (default `DROP_FILLED_PAGES_AFTER_SYNC`).
    pub drop_filled_pages: bool,
    /// Checked between zero-fill writes: when it becomes true the growth
    /// stops, the file is put back to its old length (a created file is
    /// removed) and the call fails with `ECANCELED`.
    pub cancel: Option<&'a AtomicBool>,
    /// Called after each zero-fill write.
    pub progress: Option<&'a dyn Fn(Progress)>,
    /// Make the space ready for untorn writes of this many bytes (a power
    /// of two, at least 512): written extents (intent `log`'s plan,
    /// whatever [`intent`](Self::intent) says) and, on XFS, an extent-size
    /// hint of the unit while the file has no extents. The report's
    /// [`untorn`](GrowReport::untorn) says what was done and checks every
    /// unit's layout (docs/untorn.md). Refused first, before anything
    /// changes, where the file takes no untorn writes of the unit
    /// (`EOPNOTSUPP` where it takes none, `EINVAL` outside its `statx`
    /// limits), with the reason. Default `None`.
    pub untorn_unit: Option<u32>,
    /// For intent log: make the file no-copy-on-write (`chattr +C`) while
    /// it is empty, before it grows. `None` (the default) follows the
    /// plan ([`Plan::nocow`](crate::Plan::nocow): zero-filled log space on
    /// btrfs, `policy::rules::LOG_NOCOW_ON`); `Some(false)` keeps the file
    /// copy-on-write, and the policy then plans for that
    /// (`policy::rules::log_if_nocow_refused`). The report's
    /// [`nocow`](GrowReport::nocow) says what was done.
    pub nocow: Option<bool>,
}

impl Default for GrowOptions<'_> {
    fn default() -> Self {
        GrowOptions {
            choice: StrategyChoice::built_in(),
            intent: Intent::Bulk,
            sync: false,
            create: false,
            check_free_space: true,
            drop_filled_pages: DROP_FILLED_PAGES_AFTER_SYNC,
            cancel: None,
            progress: None,
            untorn_unit: None,
            nocow: None,
        }
    }
}

impl fmt::Debug for GrowOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowOptions")
            .field("choice", &self.choice)
            .field("intent", &self.intent)
            .field("sync", &self.sync)
            .field("create", &self.create)
            .field("check_free_space", &self.check_free_space)
            .field("drop_filled_pages", &self.drop_filled_pages)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .field("untorn_unit", &self.untorn_unit)
            .field("nocow", &self.nocow)
            .finish()
    }
}

/// What a growth did.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct GrowReport {
    /// The file grown.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub path: PathBuf,
    /// The filesystem, as [`FsInfo::display_name`](crate::FsInfo::display_name).
    pub filesystem: String,
    /// The intent followed: the one given, or `log` with
    /// [`GrowOptions::untorn_unit`].
    pub intent: Intent,
    /// The strategy asked for; `None` means `auto`.
    pub requested: Option<Strategy>,
    /// The strategy that did the work.
    pub strategy: Strategy,
    /// Why that ladder was chosen.
    pub reason: String,
    /// The saved `fspace probe` measurement that `auto` followed, if any
    /// (`None`: the built-in policy, or an explicit strategy).
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub saved_probe: Option<PathBuf>,
    /// Strategies tried before it, with their errors.
    pub fallbacks: Vec<Fallback>,
    /// Other things worth knowing that did not change the outcome.
    pub notes: Vec<Note>,
    /// Length before.
    pub old_len: u64,
    /// Length after (unchanged by `reserve`).
    pub new_len: u64,
    /// The length asked for (`reserve` allocates up to it past EOF).
    pub target_len: u64,
    /// Bytes written by `pwritev` (zero-fill only).
    pub bytes_written: u64,
    /// Every syscall the growth issued; describing the filesystem is not
    /// counted (nor the capability probe, which runs once per device).
    pub syscalls: u64,
    /// Of those, the write-type ones (`pwritev`, `fallocate`, `ftruncate`).
    pub write_syscalls: u64,
    /// Whether the result was made durable.
    pub synced: bool,
    /// Whether the file was created.
    pub created: bool,
    /// Wall time.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
    /// With [`GrowOptions::untorn_unit`]: the extent-size hint and the
    /// layout of every unit afterwards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untorn: Option<crate::untorn::Ready>,
    /// Whether the file is no-copy-on-write (`chattr +C`) for this growth
    /// ([`GrowOptions::nocow`]): set for log space on btrfs, where the
    /// reason says so, and where it was refused.
    pub nocow: bool,
}
