//! Advice for the storage engines people run: `fspace probe --for ENGINE`.
//!
//! Each engine gets its own measurement: commits written the way that
//! engine writes its log (its record size, its file size, how it prepares,
//! recycles and syncs the files), one case per setting value, in
//! alternating rounds. The cases are compared with the probe's rule made
//! stricter (a challenger must beat the engine's default beyond the tie
//! margin, with runs that separate by the rank test, and every one of its
//! rounds above every one of the default's), so a setting changes, or a
//! trade-off is offered, only where every round shows a gain; otherwise the
//! engine's default stands, with the figures.
//!
//! Safety settings (`full_page_writes`, `innodb_doublewrite`) stay on:
//! none of the engine versions advised here asks the kernel for untorn
//! page writes, so a power cut can tear a page they write, whatever the
//! filesystem offers. Their reasons say both: the probe's answer for the
//! engine's page size and I/O path ([`untorn::answer`](crate::untorn::answer),
//! with the measured cost where untorn writes exist), and that the engine
//! does not ask for them. A setting that
//! measured faster but costs safety or a feature is a
//! [`AdviceKind::TradeOff`]: named with its cost and its gain, never
//! written into the fragment as applied.
//!
//! How each engine creates, extends and syncs its files, and why each
//! setting is decided by which case, is in `docs/engines.md`.

mod common;
mod mariadb;
mod postgresql;
mod rocksdb;
mod types;

use crate::fs_info::FsInfo;
use crate::note::{Note, NoteKind};
use crate::untorn::Answer;
pub use types::{AdviceKind, Engine, EngineAdvice, EngineCase, Gain, Setting};
pub(crate) use types::{CaseSpec, Plan};

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

#[cfg(test)]
mod tests;
