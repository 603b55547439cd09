//! Advice for the storage engines people run: `fspace probe --for ENGINE`.
//!
//! Each engine gets its own measurement: commits written the way that
//! engine writes its log (its record size, its file size, how it prepares,
//! recycles and syncs the files), one case per setting value, in
//! alternating rounds. The cases are compared with the probe's rule
//! (a challenger must beat the engine's default beyond the tie margin,
//! with runs that separate), so a setting changes only where the measurement
//! shows a gain; otherwise the engine's default stands, with the figures.
//!
//! Safety settings (`full_page_writes`, `innodb_doublewrite`) stay on:
//! none of the engine versions advised here asks the kernel for untorn
//! page writes, so a power cut can tear a page they write. A setting that
//! measured faster but costs safety or a feature is a
//! [`AdviceKind::TradeOff`]: named with its cost and its gain, never
//! written into the fragment as applied.
//!
//! How each engine creates, extends and syncs its files, and why each
//! setting is decided by which case, is in `docs/engines.md`.
//!
//! [`TIE_MARGIN`]: crate::probe::TIE_MARGIN

mod mariadb;
mod postgresql;
mod rocksdb;

use super::schema::{Prediction, StateResult};
use super::stats::range;
use super::verdict::{verdict, Verdict};
use crate::bench::SpaceState;
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;
use crate::units::format_count as commas;
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
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "postgresql" | "postgres" => Ok(Engine::Postgresql),
            "mariadb" => Ok(Engine::Mariadb),
            "rocksdb" => Ok(Engine::Rocksdb),
            _ => Err(format!(
                "unknown engine {s:?} (one of: postgresql, mariadb, rocksdb)"
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
    fn of(advised: &StateResult, default: &StateResult) -> Option<Gain> {
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

impl EngineAdvice {
    /// The settings the fragment applies (every one but the trade-offs),
    /// as `(name, value)`: what the engine should read back.
    pub fn applied(&self) -> Vec<(String, String)> {
        self.settings
            .iter()
            .filter(|s| s.kind != AdviceKind::TradeOff)
            .map(|s| (s.name.clone(), s.value.clone()))
            .collect()
    }

    /// The advice as the engine's configuration: a `postgresql.conf`
    /// fragment, a `my.cnf` `[mysqld]` fragment, or a RocksDB OPTIONS
    /// file. Each line has its reason as a comment; trade-offs are
    /// commented out, with their cost and gain.
    pub fn fragment(&self) -> String {
        match self.engine {
            Engine::Postgresql => postgresql::fragment(self),
            Engine::Mariadb => mariadb::fragment(self),
            Engine::Rocksdb => rocksdb::fragment(self),
        }
    }

    /// For RocksDB, how to run `db_bench` with the advice; `None` for the
    /// other engines.
    pub fn db_bench_flags(&self) -> Option<String> {
        (self.engine == Engine::Rocksdb).then(|| rocksdb::db_bench_flags(self))
    }
}

/// One case to measure for an engine.
#[derive(Debug, Clone)]
pub(super) struct CaseSpec {
    pub(super) settings: &'static str,
    pub(super) how: String,
    pub(super) state: SpaceState,
    pub(super) method: SyncMethod,
    pub(super) direct_io: bool,
    /// The engine makes a new file for every file's worth of commits:
    /// the preparation counts in the rate.
    pub(super) new_file_each: bool,
}

/// What an engine's measurement is made of.
pub(super) struct Plan {
    pub(super) record_size: usize,
    pub(super) file_size: u64,
    pub(super) cases: Vec<CaseSpec>,
}

/// The cases for `engine` on this filesystem; `file_size` is what the
/// probe's level allows for a file.
pub(super) fn plan(engine: Engine, info: &FsInfo, file_size: u64) -> Plan {
    match engine {
        Engine::Postgresql => postgresql::plan(info),
        Engine::Mariadb => mariadb::plan(info, file_size),
        Engine::Rocksdb => rocksdb::plan(file_size),
    }
}

/// The advice from the measured cases (in the order of [`plan`]).
pub(super) fn advise(
    engine: Engine,
    info: &FsInfo,
    plan: &Plan,
    cases: Vec<EngineCase>,
    rounds: usize,
) -> EngineAdvice {
    let mut a = EngineAdvice {
        engine,
        versions: engine.versions(),
        filesystem: info.display_name(),
        record_size: plan.record_size,
        file_size: plan.file_size,
        rounds,
        cases,
        settings: vec![],
        expected: None,
        notes: vec![],
        config: String::new(),
        db_bench: None,
    };
    match engine {
        Engine::Postgresql => postgresql::decide(info, &mut a),
        Engine::Mariadb => mariadb::decide(info, &mut a),
        Engine::Rocksdb => rocksdb::decide(info, &mut a),
    }
    a.notes.extend(filesystem_note(info, engine));
    a.config = a.fragment();
    a.db_bench = a.db_bench_flags();
    a
}

/// What the filesystem itself says about the engine's durability settings,
/// beyond the measurement: memory, or a network round trip per sync.
fn filesystem_note(info: &FsInfo, engine: Engine) -> Option<Note> {
    use crate::fs_info::FsKind;
    if matches!(info.kind, FsKind::Tmpfs | FsKind::Ramfs) {
        return Some(Note::new(
            NoteKind::MemoryFilesystem,
            format!(
                "{} is memory, with no journal and no disk: a sync writes nothing and nothing survives a reboot, so the advice only says which {engine} settings copy the least; data meant to survive belongs on a disk",
                info.display_name()
            ),
        ));
    }
    crate::policy::rules::is_remote(info).then(|| {
        Note::new(
            NoteKind::NetworkFilesystem,
            format!(
                "{} is a network or FUSE filesystem: every sync is a round trip to its server, which the figures include, and what a power cut keeps depends on the server; a setting whose case could not be measured here keeps {engine}'s default",
                info.display_name()
            ),
        )
    })
}

/// Whether `challenger` beat `default` by the probe's rule; the words
/// that say how they compared either way.
pub(super) fn beats(challenger: &StateResult, default: &StateResult) -> (bool, String) {
    if !challenger.measured() {
        let why = challenger
            .unsupported
            .as_deref()
            .unwrap_or("no commit completed");
        return (false, format!("it could not be measured here ({why})"));
    }
    if !default.measured() {
        return (false, "the default could not be measured here".into());
    }
    let (lo, hi) = range(&challenger.runs);
    let (dlo, dhi) = range(&default.runs);
    let figures = format!(
        "{} commits/s ({}-{}) against {} ({}-{}), {:.2}x",
        commas(challenger.commits_per_sec),
        commas(lo),
        commas(hi),
        commas(default.commits_per_sec),
        commas(dlo),
        commas(dhi),
        challenger.commits_per_sec / default.commits_per_sec.max(f64::MIN_POSITIVE)
    );
    match verdict(challenger, default) {
        Verdict::Faster { p } => (true, format!("measured faster: {figures} (p = {p:.3})")),
        Verdict::TooNoisy { p } => (
            false,
            format!("faster in the medians but the rounds overlap: {figures} (p = {p:.3})"),
        ),
        Verdict::Tie => (false, format!("not faster beyond the noise: {figures}")),
    }
}

/// The case whose `settings` are `settings`.
pub(super) fn case<'a>(a: &'a EngineAdvice, settings: &str) -> Option<&'a EngineCase> {
    a.cases.iter().find(|c| c.settings == settings)
}

/// A setting kept at its default because no value beat it.
pub(super) fn keep(name: &str, default: &str, reason: String) -> Setting {
    Setting {
        name: name.into(),
        value: default.into(),
        default: default.into(),
        kind: AdviceKind::KeepDefault,
        reason,
        gain: None,
        requires: vec![],
    }
}

/// The expected rate from the case that stands for the advice.
pub(super) fn expect(c: &EngineCase, basis: &str) -> Option<Prediction> {
    c.figures.measured().then(|| {
        let (low, high) = range(&c.figures.runs);
        Prediction {
            commits_per_sec: c.figures.commits_per_sec,
            low,
            high,
            setup: c.settings.clone(),
            basis: format!("{} rounds of {basis}", c.figures.runs.len()),
        }
    })
}

/// `# reason` comment lines, wrapped near 76 columns.
pub(super) fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for w in text.split_whitespace() {
        if line.len() + 1 + w.len() > 76 && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(w);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A setting's comment: its kind, reason and gain.
pub(super) fn explain(s: &Setting) -> String {
    let what = match s.kind {
        AdviceKind::Change => format!("changed from the default {}", s.default),
        AdviceKind::KeepDefault => "the default: right here".into(),
        AdviceKind::KeepForSafety => "kept on for safety".into(),
        AdviceKind::TradeOff => format!(
            "a trade-off, not applied (the default is {}); it needs {}",
            s.default,
            if s.requires.is_empty() {
                "nothing else".to_string()
            } else {
                s.requires.join(", ")
            }
        ),
        AdviceKind::NotMeasured => "the default: not decided by a measurement".into(),
    };
    comment(&format!("{}: {what}. {}", s.name, s.reason))
}

#[cfg(test)]
mod tests;
