//! Whether the probe's durable commits reached the device: the cache
//! flushes counted around every commit run ([`Flushes`]), summed per
//! sync method, and one verdict for the run ([`Durability`]).
//!
//! A commit rate measured where syncs send no flush (a `nobarrier`
//! mount on a volatile write cache) is not a rate of durable commits:
//! the probe says so in a note, and the engines' advice carries it.

use crate::bench::{CommitResult, SpaceState};
use crate::fs_info::{sum_flushes, FlushVerdict, Flushes, WriteCache};
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;
use serde::Serialize;

/// The flushes of the commits made durable one way.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct MethodFlushes {
    /// `fdatasync`, `fsync`, `dsync`, `direct-dsync` (commits into a
    /// file, every space state for `fdatasync`), or `wal` (fspace's log,
    /// its own sync method).
    pub method: String,
    /// Their counts and verdict.
    #[serde(flatten)]
    pub flushes: Flushes,
}

/// Whether the run's durable commits reached stable storage, as the
/// devices' flush counters tell.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Durability {
    /// The verdict of the run: `not-durable` when any way of syncing
    /// sent no flush to a volatile cache, `fewer-flushes` when any sent
    /// fewer than one per sync, else that of `fdatasync`.
    pub verdict: FlushVerdict,
    /// The write cache the devices declare.
    pub write_cache: WriteCache,
    /// Whether they take FUA writes.
    pub fua: Option<bool>,
    /// The devices counted.
    pub devices: Vec<String>,
    /// The verdict in words.
    pub reason: String,
    /// One entry per way of syncing measured.
    pub methods: Vec<MethodFlushes>,
}

impl Durability {
    /// Whether the commit figures must not be taken as durable commits.
    pub fn not_durable(&self) -> bool {
        self.verdict.not_durable()
    }

    /// The note the probe's result (and each engine's advice) carries
    /// when commits are not reaching stable storage.
    pub fn note(&self) -> Option<Note> {
        self.not_durable().then(|| {
            Note::new(
                NoteKind::NotDurable,
                format!(
                    "{}: the commit figures here are not figures of durable \
                     commits, and no advice drawn from them is",
                    self.reason
                ),
            )
        })
    }
}

/// One measured case's runs: the space state, the sync method it was asked
/// for (`None`: the state's own), and its runs.
pub(super) type CaseRuns<'a> = (SpaceState, Option<SyncMethod>, &'a [CommitResult]);

/// The durability of the commits in `runs` (one entry per measured case),
/// their flushes summed per sync method; `None` when no run counted any.
pub(super) fn durability(runs: &[CaseRuns<'_>]) -> Option<Durability> {
    let of = |keep: &dyn Fn(SpaceState, Option<SyncMethod>) -> bool| {
        sum_flushes(
            runs.iter()
                .filter(|(state, method, _)| keep(*state, *method))
                .flat_map(|(_, _, rs)| rs.iter().filter_map(|r| r.flushes.as_ref())),
        )
    };
    let mut out = vec![];
    let mut add = |method: &str, f: Option<Flushes>| {
        if let Some(flushes) = f {
            out.push(MethodFlushes {
                method: method.into(),
                flushes,
            });
        }
    };
    add(
        SyncMethod::Fdatasync.name(),
        of(&|state, method| state != SpaceState::Wal && method.is_none()),
    );
    for m in SyncMethod::ALL
        .iter()
        .filter(|&&m| m != SyncMethod::Fdatasync)
    {
        add(m.name(), of(&|_, method| method == Some(*m)));
    }
    add("wal", of(&|state, _| state == SpaceState::Wal));
    let worst = |v: FlushVerdict| out.iter().find(|m| m.flushes.verdict == v);
    let lead = worst(FlushVerdict::NotDurable)
        .or_else(|| worst(FlushVerdict::FewerFlushes))
        .or_else(|| out.first())?;
    let f = &lead.flushes;
    let reason = if out.len() > 1 && lead.method != out[0].method {
        format!("{}: {}", lead.method, f.reason)
    } else {
        f.reason.clone()
    };
    Some(Durability {
        verdict: f.verdict,
        write_cache: f.write_cache,
        fua: f.fua,
        devices: f.devices.iter().map(|d| d.name.clone()).collect(),
        reason,
        methods: out,
    })
}
