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
// Effect ids index both `effects` and `at`, which the loops mark.
#[allow(clippy::needless_range_loop)]
pub(crate) fn durability(
    trace: &Trace,
    effects: &[Effect],
    op_ino: &[u64],
    model: Model,
) -> Vec<usize> {
    let mut at = vec![usize::MAX; effects.len()];
    let mut next = 0; // effects[..next] belong to operations already seen
    for (i, op) in trace.ops.iter().enumerate() {
        while next < effects.len() && effects[next].op <= i {
            next += 1;
        }
        if op.errno.is_some() {
            continue;
        }
        let done = i + 1;
        let mark = |at: &mut Vec<usize>, e: usize| {
            if at[e] == usize::MAX {
                at[e] = done;
                for &t in &effects[e].ties {
                    if at[t] == usize::MAX {
                        at[t] = done;
                    }
                }
            }
        };
        let commit_metadata = |at: &mut Vec<usize>| {
            for e in 0..next {
                if effects[e].metadata {
                    mark(at, e);
                }
            }
        };
        match &op.kind {
            OpKind::Sync | OpKind::Syncfs => {
                for e in 0..next {
                    mark(&mut at, e);
                }
            }
            OpKind::Write { .. } => {
                // A synchronous write is durable by itself; one that grows
                // the file commits the journal on ext4 and XFS.
                for e in 0..next {
                    if effects[e].op == i && effects[e].sync {
                        mark(&mut at, e);
                        if effects[e].grows && model.fsync_commits_all_metadata() {
                            commit_metadata(&mut at);
                        }
                    }
                }
            }
            OpKind::Fsync { data_only, .. } => {
                let ino = op_ino[i];
                let mut grows = false;
                for e in 0..next {
                    let ef = &effects[e];
                    let own = !ef.is_entry() && ef.ino == ino;
                    let in_dir = ef.is_entry() && ef.dirs.contains(&ino);
                    let own_name =
                        ef.is_entry() && ef.ino == ino && model.fsync_persists_own_names();
                    if at[e] == usize::MAX && own && (ef.metadata || ef.grows) {
                        grows = true;
                    }
                    if own || in_dir || own_name {
                        mark(&mut at, e);
                    }
                }
                if model.fsync_commits_all_metadata() && (!data_only || grows) {
                    commit_metadata(&mut at);
                }
                if model == Model::Btrfs {
                    // btrfs logs the directories a logged name needs
                    // (`btrfs_log_all_parents`): the creations above it.
                    let mut changed = true;
                    while changed {
                        changed = false;
                        for e in 0..next {
                            if at[e] == done && effects[e].is_entry() {
                                for d in 0..next {
                                    if at[d] == usize::MAX
                                        && matches!(
                                            effects[d].change,
                                            Change::Create { dir: true, .. }
                                        )
                                        && effects[e].dirs.contains(&effects[d].ino)
                                    {
                                        mark(&mut at, d);
                                        changed = true;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        if model.metadata_in_order() {
            // A journal commits in order: a durable metadata effect makes
            // every earlier one durable. btrfs's log tree is outside the
            // order (it persists a file's names without a commit).
            if model != Model::Btrfs {
                if let Some(last) = (0..next)
                    .rev()
                    .find(|&e| effects[e].metadata && at[e] == done)
                {
                    for e in 0..last {
                        if effects[e].metadata {
                            mark(&mut at, e);
                        }
                    }
                }
            }
        }
    }
    at
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
    let pending: Vec<usize> = (0..before).filter(|&e| durable_at[e] > by).collect();
    let n = pending.len();
    let meta: Vec<bool> = pending
        .iter()
        .map(|&e| model.metadata_in_order() && effects[e].metadata)
        .collect();
    // ext4's replace heuristics: the pending data a pending effect carries.
    let ties: Vec<Vec<usize>> = pending
        .iter()
        .map(|&e| {
            if !model.replace_carries_data() {
                return vec![];
            }
            effects[e]
                .ties
                .iter()
                .filter_map(|t| pending.binary_search(t).ok())
                .collect()
        })
        .collect();
    // What must persist with what is kept (a journal persists in order;
    // ext4 carries the tied data): O(n).
    let close_up = |set: &mut Vec<bool>| {
        if let Some(last) = (0..n).rev().find(|&i| set[i] && meta[i]) {
            for j in 0..last {
                if meta[j] {
                    set[j] = true;
                }
            }
        }
        for i in 0..n {
            if set[i] {
                for &t in &ties[i] {
                    set[t] = true;
                }
            }
        }
    };
    // What cannot persist without what is lost: O(n).
    let close_down = |set: &mut Vec<bool>| {
        for i in 0..n {
            if set[i] && ties[i].iter().any(|&t| !set[t]) {
                set[i] = false;
            }
        }
        if let Some(first) = (0..n).find(|&i| meta[i] && !set[i]) {
            for j in first + 1..n {
                if meta[j] {
                    set[j] = false;
                }
            }
        }
    };
    // The candidates, described before they are built: everything, then
    // nothing, then (latest first) in-order prefixes, each effect lost
    // alone, each persisted alone, and torn writes.
    #[derive(Clone, Copy)]
    enum Cand {
        All,
        Nothing,
        Prefix(usize),
        LoseOne(usize),
        OnlyOne(usize),
        /// Pending write `i`, tear variant `v`, with the earlier effects
        /// (`false`) or all others (`true`).
        Tear(usize, usize, bool),
    }
    let unit = model.tear_unit();
    let tears_of = |i: usize| -> Vec<(std::ops::Range<u64>, bool)> {
        let e = &effects[pending[i]];
        let Change::Write { offset, len } = e.change else {
            return vec![];
        };
        let mut t = Vec::new();
        let first_end = ((offset / unit + 1) * unit).min(offset + len) - offset;
        if first_end < len {
            t.push((0..first_end, false));
            t.push((first_end..len, false));
        }
        if e.grows && !model.size_with_data() {
            t.push((0..0, true));
        }
        t
    };
    let mut descs = vec![Cand::All, Cand::Nothing];
    let mut rest = Vec::new();
    for i in (0..n).rev() {
        if i > 0 {
            rest.push(Cand::Prefix(i));
        }
        rest.push(Cand::LoseOne(i));
        rest.push(Cand::OnlyOne(i));
        for v in 0..tears_of(i).len() {
            rest.push(Cand::Tear(i, v, false));
            rest.push(Cand::Tear(i, v, true));
        }
    }
    // Bounded: the first half of the budget in order (the latest effects
    // first), the other half an even sample of the rest.
    let budget = bounds.per_point.saturating_sub(descs.len());
    if rest.len() > budget {
        let head = budget / 2;
        let tail = rest.split_off(head);
        let want = budget - head;
        let step = tail.len() as f64 / want.max(1) as f64;
        rest.extend((0..want).map(|k| tail[((k as f64) * step) as usize]));
    }
    descs.extend(rest);
    let mut seen: HashSet<(Vec<bool>, Option<Tear>)> = HashSet::new();
    let mut out = Vec::new();
    for d in descs {
        let (set, tear) = match d {
            Cand::All => (vec![true; n], None),
            Cand::Nothing => (vec![false; n], None),
            Cand::Prefix(k) => {
                let mut s: Vec<bool> = (0..n).map(|i| i < k).collect();
                close_up(&mut s);
                (s, None)
            }
            Cand::LoseOne(i) => {
                let mut s = vec![true; n];
                s[i] = false;
                close_down(&mut s);
                (s, None)
            }
            Cand::OnlyOne(i) => {
                let mut s = vec![false; n];
                s[i] = true;
                close_up(&mut s);
                (s, None)
            }
            Cand::Tear(i, v, others) => {
                let (keep, size_anyway) = tears_of(i)[v].clone();
                let tear = Tear {
                    effect: pending[i],
                    keep,
                    size_anyway,
                };
                let mut s = if others {
                    vec![true; n]
                } else {
                    (0..n).map(|j| j < i).collect()
                };
                if others {
                    close_down(&mut s);
                } else {
                    close_up(&mut s);
                }
                s[i] = true;
                (s, Some(tear))
            }
        };
        if seen.insert((set.clone(), tear.clone())) {
            out.push(State {
                point,
                model,
                kept: (0..n).filter(|&i| set[i]).map(|i| pending[i]).collect(),
                lost: (0..n).filter(|&i| !set[i]).map(|i| pending[i]).collect(),
                tear,
                durable: durable.clone(),
            });
        }
    }
    out
}
