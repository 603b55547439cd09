//! The words every layer shares: the [`Strategy`] that gives a file more
//! bytes, the [`Intent`] the space is for, the [`SyncMethod`] that makes a
//! write durable, and the [`Fallback`] a growth
//! records when it abandons one strategy for the next. They sit below the
//! error type (which lists fallbacks), the policy (which orders strategies)
//! and every mechanism that uses them.

use crate::invalid::ParseError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One way to give a file more bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// `ftruncate`: logical growth; the new range is a hole.
    Sparse,
    /// `fallocate(KEEP_SIZE)`: blocks reserved past EOF; the length stays.
    Reserve,
    /// `fallocate` mode 0: unwritten blocks, length extended.
    Allocate,
    /// `fallocate(FALLOC_FL_WRITE_ZEROES)`: written zeroed blocks, no data
    /// moved (Linux 6.17+, devices with unmap write-zeroes).
    WriteZeroes,
    /// Large `pwritev`s of zeros from the current EOF: written blocks.
    ZeroFill,
}

impl Strategy {
    /// All strategies, in the order of the documentation.
    pub const ALL: [Strategy; 5] = [
        Strategy::Sparse,
        Strategy::Reserve,
        Strategy::Allocate,
        Strategy::WriteZeroes,
        Strategy::ZeroFill,
    ];

    /// Returns the name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Sparse => "sparse",
            Strategy::Reserve => "reserve",
            Strategy::Allocate => "allocate",
            Strategy::WriteZeroes => "write-zeroes",
            Strategy::ZeroFill => "zero-fill",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = ParseError;
    fn from_str(s: &str) -> std::result::Result<Self, ParseError> {
        Strategy::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| ParseError::new("strategy", s, Strategy::ALL.map(Strategy::name)))
    }
}

/// How a write is made durable: what a log commit (and the commit
/// benchmark's file modes) issues. Each makes the written bytes durable
/// before the commit returns; they differ in how many requests reach the
/// device and where the kernel waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncMethod {
    /// Buffered `pwritev`, then one `fdatasync` of the file: any number of
    /// writes (a whole commit group) share one flush.
    Fdatasync,
    /// Buffered `pwritev`, then `fsync`: as [`SyncMethod::Fdatasync`],
    /// and the inode's other metadata (times) too. A log never needs it
    /// (its segments do not change size after preparation); it is here to
    /// be measured beside the others, as `pg_test_fsync` does, and works in
    /// the log like `fdatasync`.
    Fsync,
    /// `pwritev2(RWF_DSYNC)`: each write is durable when it returns, with
    /// no separate sync call (`O_DSYNC` for one write).
    Dsync,
    /// `O_DIRECT` + `RWF_DSYNC` on written, page-aligned space: the write
    /// bypasses the page cache, and on a device with a volatile cache the
    /// kernel can send it as one FUA write instead of a write and a cache
    /// flush.
    DirectDsync,
}

impl SyncMethod {
    /// All methods, in the order of the documentation.
    pub const ALL: [SyncMethod; 4] = [
        SyncMethod::Fdatasync,
        SyncMethod::Fsync,
        SyncMethod::Dsync,
        SyncMethod::DirectDsync,
    ];

    /// Returns the name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
            SyncMethod::Dsync => "dsync",
            SyncMethod::DirectDsync => "direct-dsync",
        }
    }

    /// Whether writes go out with `O_DIRECT`.
    pub fn direct(self) -> bool {
        self == SyncMethod::DirectDsync
    }

    /// Whether each write carries `RWF_DSYNC` (no separate sync call).
    pub fn per_write(self) -> bool {
        matches!(self, SyncMethod::Dsync | SyncMethod::DirectDsync)
    }
}

impl fmt::Display for SyncMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SyncMethod {
    type Err = ParseError;
    fn from_str(s: &str) -> std::result::Result<Self, ParseError> {
        SyncMethod::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| ParseError::new("sync method", s, SyncMethod::ALL.map(SyncMethod::name)))
    }
}

/// What the space is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Intent {
    /// Written once, soon (restores, copies): reserve without writing.
    #[default]
    Bulk,
    /// Overwritten by small records with `fdatasync`: needs written extents.
    Log,
    /// May stay empty: only the length changes.
    Sparse,
}

impl Intent {
    /// Returns the name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Intent::Bulk => "bulk",
            Intent::Log => "log",
            Intent::Sparse => "sparse",
        }
    }
}

impl FromStr for Intent {
    type Err = ParseError;
    fn from_str(s: &str) -> std::result::Result<Self, ParseError> {
        match s {
            "bulk" => Ok(Intent::Bulk),
            "log" => Ok(Intent::Log),
            "sparse" => Ok(Intent::Sparse),
            _ => Err(ParseError::new("intent", s, ["bulk", "log", "sparse"])),
        }
    }
}

/// A strategy that was tried and abandoned for the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Fallback {
    /// The strategy tried.
    pub strategy: Strategy,
    /// Why it was abandoned: the failed call, its errno and kind.
    pub error: crate::reason::Reason,
}

impl Fallback {
    /// `strategy`, abandoned because of `error` (made from the
    /// [`Error`](crate::Error) that ended it).
    pub(crate) fn new(strategy: Strategy, error: crate::reason::Reason) -> Fallback {
        Fallback { strategy, error }
    }

    /// The errno it was abandoned with (0 where the error had none).
    pub fn errno(&self) -> i32 {
        self.error.errno.unwrap_or(0)
    }
}

/// Progress of a long operation (a zero-fill, a copy, a dig), in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Bytes done so far.
    pub done: u64,
    /// Bytes to do in all.
    pub total: u64,
}
