//! The engines' advice as data: [`Engine`], the settings advised
//! ([`Setting`], [`AdviceKind`], [`Gain`]), the measured cases and the
//! whole [`EngineAdvice`]; and what a measurement of an engine is made of
//! ([`Plan`], [`CaseSpec`]).

use super::super::schema::{Prediction, StateResult};
use super::super::stats::range;
use crate::bench::SpaceState;
use crate::note::Note;
use crate::strategy::SyncMethod;
use serde::{Deserialize, Serialize};

/// A storage engine fspace advises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Engine {
    /// PostgreSQL: its WAL (`pg_wal/`, 16 MiB segments of 8 KiB pages).
    Postgresql,
    /// MariaDB's InnoDB: its redo log (`ib_logfile0`).
    Mariadb,
    /// RocksDB: its write-ahead log (`*.log`).
    Rocksdb,
}

impl Engine {
    /// Every engine, in the order they are reported.
    pub const ALL: [Engine; 3] = [Engine::Postgresql, Engine::Mariadb, Engine::Rocksdb];

    /// Returns the name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Postgresql => "postgresql",
            Engine::Mariadb => "mariadb",
            Engine::Rocksdb => "rocksdb",
        }
    }

    /// The engine versions whose file handling the advice was built on
    /// and checked against.
    pub fn versions(self) -> &'static str {
        match self {
            Engine::Postgresql => "PostgreSQL 15",
            Engine::Mariadb => "MariaDB 10.11",
            Engine::Rocksdb => "RocksDB 7.8",
        }
    }

    /// Every setting the advice for this engine can name, with every value
    /// it can give it (applied, kept, or as a trade-off and what that
    /// needs), the engine's default first: what fspace's tests start the
    /// real engine with and read back, so that no advice names a setting
    /// or value the engine rejects or silently replaces.
    pub fn advisable(self) -> &'static [(&'static str, &'static [&'static str])] {
        match self {
            Engine::Postgresql => &[
                ("wal_sync_method", &["fdatasync", "open_datasync"]),
                ("wal_recycle", &["on", "off"]),
                ("wal_init_zero", &["on", "off"]),
                ("full_page_writes", &["on"]),
                // What the O_DIRECT trade-off needs.
                ("wal_level", &["replica", "minimal"]),
                ("max_wal_senders", &["10", "0"]),
                ("archive_mode", &["off"]),
            ],
            Engine::Mariadb => &[
                ("innodb_flush_method", &["O_DIRECT", "O_DSYNC"]),
                ("innodb_log_file_buffering", &["OFF", "ON"]),
                ("innodb_doublewrite", &["ON"]),
                ("innodb_flush_log_at_trx_commit", &["1"]),
            ],
            Engine::Rocksdb => &[
                ("allow_fallocate", &["true", "false"]),
                ("wal_bytes_per_sync", &["0"]),
                ("use_direct_io_for_flush_and_compaction", &["false"]),
                ("recycle_log_file_num", &["0", "4"]),
                (
                    "wal_recovery_mode",
                    &["kPointInTimeRecovery", "kSkipAnyCorruptedRecords"],
                ),
            ],
        }
    }

    /// What the advice is written as.
    pub fn config_file(self) -> &'static str {
        match self {
            Engine::Postgresql => "postgresql.conf",
            Engine::Mariadb => "my.cnf",
            Engine::Rocksdb => "OPTIONS file",
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Engine {
    type Err = crate::invalid::ParseError;
    fn from_str(s: &str) -> std::result::Result<Self, crate::invalid::ParseError> {
        match s.to_ascii_lowercase().as_str() {
            "postgresql" | "postgres" => Ok(Engine::Postgresql),
            "mariadb" => Ok(Engine::Mariadb),
            "rocksdb" => Ok(Engine::Rocksdb),
            _ => Err(crate::invalid::ParseError::new(
                "engine",
                s,
                ["postgresql", "mariadb", "rocksdb"],
            )),
        }
    }
}

/// What the measurement says about one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AdviceKind {
    /// Another value measured faster than the engine's default, beyond
    /// the noise: set it.
    Change,
    /// The engine's default measured best, or no value could be told
    /// apart from it: "your default is right here".
    KeepDefault,
    /// A safety setting, kept on whatever it costs.
    KeepForSafety,
    /// Measured faster, but costs safety or a feature: named with its cost
    /// and gain, not applied unless the user chooses it.
    TradeOff,
    /// Not decided by what the probe measures (it does not touch commits,
    /// or cannot be measured here): the default stands, with the reason.
    NotMeasured,
}

/// A measured gain: commits/s with the advised value against the engine's
/// default, in the same alternating rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Gain {
    /// Median commits/s with the advised value ÷ with the default.
    pub ratio: f64,
    /// Median commits/s with the advised value.
    pub advised_commits_per_sec: f64,
    /// Slowest and fastest round with the advised value.
    pub advised_range: (f64, f64),
    /// Median commits/s with the default.
    pub default_commits_per_sec: f64,
    /// Slowest and fastest round with the default.
    pub default_range: (f64, f64),
}

impl Gain {
    pub(crate) fn of(advised: &StateResult, default: &StateResult) -> Option<Gain> {
        (advised.measured() && default.measured() && default.commits_per_sec > 0.0).then(|| Gain {
            ratio: advised.commits_per_sec / default.commits_per_sec,
            advised_commits_per_sec: advised.commits_per_sec,
            advised_range: range(&advised.runs),
            default_commits_per_sec: default.commits_per_sec,
            default_range: range(&default.runs),
        })
    }
}

/// One setting of the engine, with the value advised here and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Setting {
    /// Its name in the engine's configuration (`wal_sync_method`).
    pub name: String,
    /// The value advised here (for a trade-off: the value that measured
    /// faster, not applied).
    pub value: String,
    /// The engine's default.
    pub default: String,
    /// What the measurement says.
    pub kind: AdviceKind,
    /// Why, in one sentence.
    pub reason: String,
    /// The measured gain (or loss) of `value` against the default, where
    /// both were measured.
    pub gain: Option<Gain>,
    /// Other settings `value` needs (`name=value`), where it needs any.
    pub requires: Vec<String>,
}

/// One way of writing the engine's log that the probe measured.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct EngineCase {
    /// The engine settings the case stands for (`wal_recycle=on,
    /// wal_sync_method=fdatasync`).
    pub settings: String,
    /// How it was measured, in words.
    pub how: String,
    /// Whether records went out with `O_DIRECT`.
    pub direct_io: bool,
    /// The figures over the rounds. Where the engine prepares a new file
    /// for every file's worth of commits (`figures.state` sparse or
    /// zero-filled), each run's time includes that preparation.
    pub figures: StateResult,
}

/// The advice for one engine on this filesystem.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct EngineAdvice {
    /// The engine.
    pub engine: Engine,
    /// The versions the advice was built on ([`Engine::versions`]).
    pub versions: &'static str,
    /// The filesystem measured, in words (`ext4 on /dev/loop0`).
    pub filesystem: String,
    /// Bytes per commit in its cases (the engine's page or log block).
    pub record_size: usize,
    /// Bytes of each file the cases commit into (the engine's segment or
    /// log file, or the probe's file size).
    pub file_size: u64,
    /// Alternating rounds measured.
    pub rounds: usize,
    /// Every case measured.
    pub cases: Vec<EngineCase>,
    /// Every setting advised on, in the order of the fragment; trade-offs
    /// last.
    pub settings: Vec<Setting>,
    /// The commits/s the engine's log should sustain with the advice, from
    /// the case that stands for it, and how that case is set up.
    pub expected: Option<Prediction>,
    /// What qualifies the advice.
    pub notes: Vec<Note>,
    /// The advice as the engine's configuration, as
    /// [`fragment`](Self::fragment) rendered it when the advice was made.
    pub config: String,
    /// For RocksDB, how to run `db_bench` with it
    /// ([`db_bench_flags`](Self::db_bench_flags)).
    pub db_bench: Option<String>,
}

/// One case to measure for an engine.
#[derive(Debug, Clone)]
pub(crate) struct CaseSpec {
    pub(crate) settings: &'static str,
    pub(crate) how: String,
    pub(crate) state: SpaceState,
    pub(crate) method: SyncMethod,
    pub(crate) direct_io: bool,
    /// The engine makes a new file for every file's worth of commits:
    /// the preparation counts in the rate.
    pub(crate) new_file_each: bool,
}

/// What an engine's measurement is made of.
pub(crate) struct Plan {
    pub(crate) record_size: usize,
    pub(crate) file_size: u64,
    pub(crate) cases: Vec<CaseSpec>,
}
