//! From an engine's measured cases to its advice: the cases to measure
//! ([`plan`]), the settings decided by each engine's rules ([`advise`]),
//! and the advice as the engine's configuration.

use super::common;
use super::types::{AdviceKind, Engine, EngineAdvice, EngineCase, Plan};
use super::{mariadb, postgresql, rocksdb};
use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::untorn::Answer;

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
    /// commented out, with their cost and gain. Where the probe's
    /// commits were not reaching stable storage (a `not-durable` note),
    /// it starts with comment lines that say so.
    pub fn fragment(&self) -> String {
        let body = match self.engine {
            Engine::Postgresql => postgresql::fragment(self),
            Engine::Mariadb => mariadb::fragment(self),
            Engine::Rocksdb => rocksdb::fragment(self),
        };
        match self.notes.iter().find(|n| n.kind == NoteKind::NotDurable) {
            Some(n) => format!("{}{body}", not_durable_comment(&n.text)),
            None => body,
        }
    }

    /// For RocksDB, how to run `db_bench` with the advice; `None` for the
    /// other engines.
    pub fn db_bench_flags(&self) -> Option<String> {
        (self.engine == Engine::Rocksdb).then(|| rocksdb::db_bench_flags(self))
    }
}

/// `# NOT DURABLE: TEXT` as comment lines, wrapped as every comment of
/// the fragments is.
fn not_durable_comment(text: &str) -> String {
    common::comment(&format!("NOT DURABLE: {text}"))
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

/// The advice from the measured cases (in the order of [`plan`]);
/// `untorn` holds the probe's answers on untorn page writes here (empty
/// where the facts could not be read), which the safety settings'
/// reasons quote for the engine's page size and I/O path.
pub(super) fn advise(
    engine: Engine,
    info: &FsInfo,
    plan: &Plan,
    cases: Vec<EngineCase>,
    rounds: usize,
    untorn: &[Answer],
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
        Engine::Postgresql => postgresql::decide(info, &mut a, untorn),
        Engine::Mariadb => mariadb::decide(info, &mut a, untorn),
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
