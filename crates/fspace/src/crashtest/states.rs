//! The crash states a trace allows under a model: crash points, what is
//! durable at each, and the bounded sample of what else may have persisted.

use super::effects::{Change, Effect};
use super::image::Tear;
use super::model::Model;
use super::trace::{OpKind, Trace};
use serde::Serialize;
use std::collections::HashSet;
use std::sync::Arc;

/// Why a crash point was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PointKind {
    /// Just before a durability call (fsync, fdatasync, sync, a
    /// synchronous write): the most is pending there.
    BeforeSync,
    /// While a synchronous write (`O_DSYNC`, `RWF_DSYNC`) is in flight:
    /// the write is there but not yet durable, and may tear.
    DuringSyncWrite,
    /// Just after an acknowledgement.
    AfterAck,
    /// Between those, sampled.
    Between,
    /// After the last operation.
    End,
}

impl PointKind {
    /// Its name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            PointKind::BeforeSync => "before-sync",
            PointKind::DuringSyncWrite => "during-sync-write",
            PointKind::AfterAck => "after-ack",
            PointKind::Between => "between",
            PointKind::End => "end",
        }
    }
}

/// A moment the power may fail: after the first `after` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CrashPoint {
    /// How many operations had returned (the state is after op number
    /// `after`; 0 is before the first).
    pub after: usize,
    /// Why it was chosen.
    pub kind: PointKind,
}

/// One crash state: at a point, under a model, which of the pending
/// effects persisted, and at most one torn write.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub point: CrashPoint,
    pub model: Model,
    /// Pending effects (indices into the effect list) that persisted.
    pub kept: Vec<usize>,
    /// Pending effects that did not.
    pub lost: Vec<usize>,
    pub tear: Option<Tear>,
    /// Effects durable at the point (shared by the point's states).
    pub durable: Arc<Vec<usize>>,
}

/// How many states to build per point, and how many points between.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub per_point: usize,
}

/// The crash points of a trace.
pub(crate) fn points(trace: &Trace, between: usize) -> Vec<CrashPoint> {
    let mut pts: Vec<CrashPoint> = Vec::new();
    for (i, op) in trace.ops.iter().enumerate() {
        if op.errno.is_some() {
            continue;
        }
        match &op.kind {
            OpKind::Fsync { .. } | OpKind::Sync | OpKind::Syncfs => pts.push(CrashPoint {
                after: i,
                kind: PointKind::BeforeSync,
            }),
            OpKind::Write { flags, .. } if flags.sync => {
                pts.push(CrashPoint {
                    after: i,
                    kind: PointKind::BeforeSync,
                });
                // And while it is in flight: it may tear.
                pts.push(CrashPoint {
                    after: i + 1,
                    kind: PointKind::DuringSyncWrite,
                });
            }
            OpKind::Ack { .. } => pts.push(CrashPoint {
                after: i + 1,
                kind: PointKind::AfterAck,
            }),
            _ => {}
        }
    }
    pts.push(CrashPoint {
        after: trace.ops.len(),
        kind: PointKind::End,
    });
    let key = |p: &CrashPoint| (p.after, p.kind == PointKind::DuringSyncWrite);
    pts.sort_by_key(key);
    pts.dedup_by_key(|p| key(p));
    let mut extra = Vec::new();
    let mut prev = 0;
    for p in &pts {
        let gap = p.after.saturating_sub(prev);
        if gap > 1 && between > 0 {
            let n = between.min(gap - 1);
            for k in 1..=n {
                extra.push(CrashPoint {
                    after: prev + gap * k / (n + 1),
                    kind: PointKind::Between,
                });
            }
        }
        prev = p.after;
    }
    pts.extend(extra);
    pts.sort_by_key(key);
    pts.dedup_by_key(|p| key(p));
    pts
}

/// Which effects are durable after each operation, under `model`:
/// `durable_at[e]` is the number of operations after which effect `e` is
/// durable (`usize::MAX`: never).
// Effect ids index both `effects` and the marks.
#[allow(clippy::needless_range_loop)]
pub(crate) fn durability(
    trace: &Trace,
    effects: &[Effect],
    op_ino: &[u64],
    model: Model,
) -> Vec<usize> {
    let mut m = Marks {
        effects,
        at: vec![usize::MAX; effects.len()],
        next: 0,
        done: 0,
    };
    for (i, op) in trace.ops.iter().enumerate() {
        while m.next < effects.len() && effects[m.next].op <= i {
            m.next += 1;
        }
        if op.errno.is_some() {
            continue;
        }
        m.done = i + 1;
        match &op.kind {
            OpKind::Sync | OpKind::Syncfs => {
                for e in 0..m.next {
                    m.mark(e);
                }
            }
            OpKind::Write { .. } => {
                // A synchronous write is durable by itself; one that grows
                // the file commits the journal on ext4 and XFS.
                for e in 0..m.next {
                    if effects[e].op == i && effects[e].sync {
                        m.mark(e);
                        if effects[e].grows && model.fsync_commits_all_metadata() {
                            m.commit_metadata();
                        }
                    }
                }
            }
            OpKind::Fsync { data_only, .. } => m.fsync(op_ino[i], *data_only, model),
            _ => {}
        }
        if model.metadata_in_order() && model != Model::Btrfs {
            // A journal commits in order: a durable metadata effect makes
            // every earlier one durable. btrfs's log tree is outside the
            // order (it persists a file's names without a commit).
            m.journal_prefix();
        }
    }
    m.at
}

/// The marking of effects durable, operation by operation.
struct Marks<'a> {
    effects: &'a [Effect],
    /// `at[e]`: the operations after which effect `e` is durable.
    at: Vec<usize>,
    /// Effects of the operations seen so far: `effects[..next]`.
    next: usize,
    /// The operations done, the current one included.
    done: usize,
}

impl Marks<'_> {
    fn mark(&mut self, e: usize) {
        if self.at[e] == usize::MAX {
            self.at[e] = self.done;
            for &t in &self.effects[e].ties {
                if self.at[t] == usize::MAX {
                    self.at[t] = self.done;
                }
            }
        }
    }

    fn commit_metadata(&mut self) {
        for e in 0..self.next {
            if self.effects[e].metadata {
                self.mark(e);
            }
        }
    }

    fn journal_prefix(&mut self) {
        let last = (0..self.next)
            .rev()
            .find(|&e| self.effects[e].metadata && self.at[e] == self.done);
        if let Some(last) = last {
            for e in 0..last {
                if self.effects[e].metadata {
                    self.mark(e);
                }
            }
        }
    }

    /// fsync or fdatasync of inode `ino`.
    fn fsync(&mut self, ino: u64, data_only: bool, model: Model) {
        let mut grows = false;
        for e in 0..self.next {
            let ef = &self.effects[e];
            let own = !ef.is_entry() && ef.ino == ino;
            let in_dir = ef.is_entry() && ef.dirs.contains(&ino);
            let own_name = ef.is_entry() && ef.ino == ino && model.fsync_persists_own_names();
            if self.at[e] == usize::MAX && own && (ef.metadata || ef.grows) {
                grows = true;
            }
            if own || in_dir || own_name {
                self.mark(e);
            }
        }
        if model.fsync_commits_all_metadata() && (!data_only || grows) {
            self.commit_metadata();
        }
        if model == Model::Btrfs {
            self.btrfs_parents();
        }
    }

    /// btrfs logs the directories a logged name needs
    /// (`btrfs_log_all_parents`): the creations above it.
    fn btrfs_parents(&mut self) {
        let mut changed = true;
        while changed {
            changed = false;
            for e in 0..self.next {
                if self.at[e] != self.done || !self.effects[e].is_entry() {
                    continue;
                }
                for d in 0..self.next {
                    let is_parent =
                        matches!(self.effects[d].change, Change::Create { dir: true, .. })
                            && self.effects[e].dirs.contains(&self.effects[d].ino);
                    if self.at[d] == usize::MAX && is_parent {
                        self.mark(d);
                        changed = true;
                    }
                }
            }
        }
    }
}

/// The states at one point: the pending effects and the sample of what
/// persisted of them.
pub(crate) fn states_at(
    effects: &[Effect],
    durable_at: &[usize],
    model: Model,
    point: CrashPoint,
    bounds: Bounds,
) -> Vec<State> {
    let before = effects.partition_point(|e| e.op < point.after);
    // In flight: what the write itself would make durable is not yet.
    let by = if point.kind == PointKind::DuringSyncWrite {
        point.after - 1
    } else {
        point.after
    };
    let durable: Arc<Vec<usize>> = Arc::new((0..before).filter(|&e| durable_at[e] <= by).collect());
    let p = Pending::new(
        effects,
        (0..before).filter(|&e| durable_at[e] > by).collect(),
        model,
    );
    let mut seen: HashSet<(Vec<bool>, Option<Tear>)> = HashSet::new();
    let mut out = Vec::new();
    for d in p.candidates(bounds) {
        let (set, tear) = p.build(d);
        if seen.insert((set.clone(), tear.clone())) {
            out.push(State {
                point,
                model,
                kept: (0..p.n).filter(|&i| set[i]).map(|i| p.list[i]).collect(),
                lost: (0..p.n).filter(|&i| !set[i]).map(|i| p.list[i]).collect(),
                tear,
                durable: durable.clone(),
            });
        }
    }
    out
}

/// A candidate state, described before it is built.
#[derive(Clone, Copy)]
enum Cand {
    All,
    Nothing,
    /// The first k pending effects, in order.
    Prefix(usize),
    LoseOne(usize),
    OnlyOne(usize),
    /// Pending write `i`, tear variant `v`, with the earlier effects
    /// (`false`) or all others (`true`).
    Tear(usize, usize, bool),
}

/// The effects pending at a point, and what the model ties among them.
struct Pending<'a> {
    effects: &'a [Effect],
    model: Model,
    list: Vec<usize>,
    n: usize,
    /// Journalled metadata, persisting in order.
    meta: Vec<bool>,
    /// ext4's replace heuristics: the pending data a pending effect carries
    /// (positions in `list`).
    ties: Vec<Vec<usize>>,
}

impl<'a> Pending<'a> {
    fn new(effects: &'a [Effect], list: Vec<usize>, model: Model) -> Pending<'a> {
        let meta = list
            .iter()
            .map(|&e| model.metadata_in_order() && effects[e].metadata)
            .collect();
        let ties = list
            .iter()
            .map(|&e| {
                if !model.replace_carries_data() {
                    return vec![];
                }
                effects[e]
                    .ties
                    .iter()
                    .filter_map(|t| list.binary_search(t).ok())
                    .collect()
            })
            .collect();
        Pending {
            effects,
            model,
            n: list.len(),
            list,
            meta,
            ties,
        }
    }

    /// What must persist with what is kept (a journal persists in order;
    /// ext4 carries the tied data): O(n).
    fn close_up(&self, set: &mut [bool]) {
        if let Some(last) = (0..self.n).rev().find(|&i| set[i] && self.meta[i]) {
            for (m, x) in self.meta[..last].iter().zip(set.iter_mut()) {
                if *m {
                    *x = true;
                }
            }
        }
        for i in 0..self.n {
            if set[i] {
                for &t in &self.ties[i] {
                    set[t] = true;
                }
            }
        }
    }

    /// What cannot persist without what is lost: O(n).
    fn close_down(&self, set: &mut [bool]) {
        for i in 0..self.n {
            if set[i] && self.ties[i].iter().any(|&t| !set[t]) {
                set[i] = false;
            }
        }
        if let Some(first) = (0..self.n).find(|&i| self.meta[i] && !set[i]) {
            for (m, x) in self.meta.iter().zip(set.iter_mut()).skip(first + 1) {
                if *m {
                    *x = false;
                }
            }
        }
    }

    /// The ways pending write `i` can tear: its first unit only, all but
    /// its first unit, or (where the size can persist without the data)
    /// the size alone.
    fn tears_of(&self, i: usize) -> Vec<(std::ops::Range<u64>, bool)> {
        let e = &self.effects[self.list[i]];
        let Change::Write { offset, len } = e.change else {
            return vec![];
        };
        let unit = self.model.tear_unit();
        let mut t = Vec::new();
        let first_end = ((offset / unit + 1) * unit).min(offset + len) - offset;
        if first_end < len {
            t.push((0..first_end, false));
            t.push((first_end..len, false));
        }
        if e.grows && !self.model.size_with_data() {
            t.push((0..0, true));
        }
        t
    }

    /// Everything, then nothing, then (latest first) in-order prefixes,
    /// each effect lost alone, each persisted alone, and torn writes;
    /// bounded: the first half of the budget in order, the other half an
    /// even sample of the rest.
    fn candidates(&self, bounds: Bounds) -> Vec<Cand> {
        let mut descs = vec![Cand::All, Cand::Nothing];
        let mut rest = Vec::new();
        for i in (0..self.n).rev() {
            if i > 0 {
                rest.push(Cand::Prefix(i));
            }
            rest.push(Cand::LoseOne(i));
            rest.push(Cand::OnlyOne(i));
            for v in 0..self.tears_of(i).len() {
                rest.push(Cand::Tear(i, v, false));
                rest.push(Cand::Tear(i, v, true));
            }
        }
        let budget = bounds.per_point.saturating_sub(descs.len());
        if rest.len() > budget {
            let head = budget / 2;
            let tail = rest.split_off(head);
            let want = budget - head;
            let step = tail.len() as f64 / want.max(1) as f64;
            rest.extend((0..want).map(|k| tail[((k as f64) * step) as usize]));
        }
        descs.extend(rest);
        descs
    }

    /// The persisted set (positions in `list`) and the tear of a candidate.
    fn build(&self, d: Cand) -> (Vec<bool>, Option<Tear>) {
        let n = self.n;
        match d {
            Cand::All => (vec![true; n], None),
            Cand::Nothing => (vec![false; n], None),
            Cand::Prefix(k) => {
                let mut s: Vec<bool> = (0..n).map(|i| i < k).collect();
                self.close_up(&mut s);
                (s, None)
            }
            Cand::LoseOne(i) => {
                let mut s = vec![true; n];
                s[i] = false;
                self.close_down(&mut s);
                (s, None)
            }
            Cand::OnlyOne(i) => {
                let mut s = vec![false; n];
                s[i] = true;
                self.close_up(&mut s);
                (s, None)
            }
            Cand::Tear(i, v, others) => {
                let (keep, size_anyway) = self.tears_of(i)[v].clone();
                let tear = Tear {
                    effect: self.list[i],
                    keep,
                    size_anyway,
                };
                let mut s: Vec<bool> = if others {
                    vec![true; n]
                } else {
                    (0..n).map(|j| j < i).collect()
                };
                if others {
                    self.close_down(&mut s);
                } else {
                    self.close_up(&mut s);
                }
                s[i] = true;
                (s, Some(tear))
            }
        }
    }
}
