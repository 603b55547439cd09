//! The crash states a trace allows under a model: crash points, what is
//! durable at each, and the bounded sample of what else may have persisted.

use super::effects::{Change, Effect};
use super::image::Tear;
use super::model::Model;
use super::trace::{OpKind, Trace};
use serde::Serialize;
use std::collections::HashSet;

/// Why a crash point was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PointKind {
    /// Just before a durability call (fsync, fdatasync, sync, a
    /// synchronous write): the most is pending there.
    BeforeSync,
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
    /// Effects durable at the point.
    pub durable: Vec<usize>,
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
            OpKind::Write { flags, .. } if flags.sync => pts.push(CrashPoint {
                after: i,
                kind: PointKind::BeforeSync,
            }),
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
    pts.sort_by_key(|p| p.after);
    pts.dedup_by_key(|p| p.after);
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
    pts.sort_by_key(|p| p.after);
    pts.dedup_by_key(|p| p.after);
    pts
}

/// Which effects are durable after each operation, under `model`:
/// `durable_at[e]` is the number of operations after which effect `e` is
/// durable (`usize::MAX`: never).
// Effect ids index both `effects` and `at`, which the loops mark.
#[allow(clippy::needless_range_loop)]
pub(crate) fn durability(trace: &Trace, effects: &[Effect], model: Model) -> Vec<usize> {
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
            OpKind::Fsync { ino, data_only } => {
                let ino = *ino;
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
    trace: &Trace,
    effects: &[Effect],
    durable_at: &[usize],
    model: Model,
    point: CrashPoint,
    bounds: Bounds,
) -> Vec<State> {
    let before: Vec<usize> = (0..effects.len())
        .filter(|&e| effects[e].op < point.after)
        .collect();
    let durable: Vec<usize> = before
        .iter()
        .copied()
        .filter(|&e| durable_at[e] <= point.after)
        .collect();
    let pending: Vec<usize> = before
        .iter()
        .copied()
        .filter(|&e| durable_at[e] > point.after)
        .collect();
    let n = pending.len();
    // Requirements among pending effects, as positions in `pending`.
    let requires = |i: usize| -> Vec<usize> {
        let e = &effects[pending[i]];
        let mut r = Vec::new();
        if model.metadata_in_order() && e.metadata {
            r.extend((0..i).filter(|&j| effects[pending[j]].metadata));
        }
        if model.replace_carries_data() {
            r.extend((0..n).filter(|&j| e.ties.contains(&pending[j])));
        }
        r
    };
    let close_up = |set: &mut Vec<bool>| loop {
        let mut changed = false;
        for i in 0..n {
            if set[i] {
                for j in requires(i) {
                    if !set[j] {
                        set[j] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    };
    let close_down = |set: &mut Vec<bool>| loop {
        let mut changed = false;
        for i in 0..n {
            if set[i] && requires(i).iter().any(|&j| !set[j]) {
                set[i] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    };
    let mut cands: Vec<(Vec<bool>, Option<Tear>)> = Vec::new();
    let mut seen: HashSet<(Vec<bool>, Option<Tear>)> = HashSet::new();
    let mut add =
        |set: Vec<bool>, tear: Option<Tear>, cands: &mut Vec<(Vec<bool>, Option<Tear>)>| {
            if seen.insert((set.clone(), tear.clone())) {
                cands.push((set, tear));
            }
        };
    // Everything pending persisted (what the program saw), then nothing.
    add(vec![true; n], None, &mut cands);
    add(vec![false; n], None, &mut cands);
    // In-order prefixes, the latest first: a filesystem that writes back
    // in order and stopped part way.
    for k in (1..n).rev() {
        let mut s: Vec<bool> = (0..n).map(|i| i < k).collect();
        close_up(&mut s);
        add(s, None, &mut cands);
    }
    // Each pending effect lost alone (with what cannot persist without it).
    for i in (0..n).rev() {
        let mut s = vec![true; n];
        s[i] = false;
        close_down(&mut s);
        add(s, None, &mut cands);
    }
    // Each pending effect persisted alone (with what it needs).
    for i in (0..n).rev() {
        let mut s = vec![false; n];
        s[i] = true;
        close_up(&mut s);
        add(s, None, &mut cands);
    }
    // Torn writes: the write's first unit only, all but its first unit,
    // or (worst case) a grown size without the data; with the effects
    // before it persisted and those after lost, or all others persisted.
    let unit = model.tear_unit();
    for i in (0..n).rev() {
        let e = &effects[pending[i]];
        let Change::Write { offset, len } = e.change else {
            continue;
        };
        let mut tears = Vec::new();
        let first_end = ((offset / unit + 1) * unit).min(offset + len) - offset;
        if first_end < len {
            tears.push((0..first_end, false));
            tears.push((first_end..len, false));
        }
        if e.grows && !model.size_with_data() {
            tears.push((0..0, true));
        }
        for (keep, size_anyway) in tears {
            let tear = Tear {
                effect: pending[i],
                keep,
                size_anyway,
            };
            let mut s: Vec<bool> = (0..n).map(|j| j < i).collect();
            close_up(&mut s);
            s[i] = true;
            add(s, Some(tear.clone()), &mut cands);
            let mut s = vec![true; n];
            close_down(&mut s);
            add(s, Some(tear), &mut cands);
        }
    }
    // Bounded: keep the first ones (everything, nothing, the latest
    // prefixes) and an even sample of the rest.
    if cands.len() > bounds.per_point {
        let keep_first = bounds.per_point / 2;
        let rest = cands.split_off(keep_first);
        let want = bounds.per_point - keep_first;
        let step = rest.len() as f64 / want as f64;
        for k in 0..want {
            cands.push(rest[(k as f64 * step) as usize].clone());
        }
    }
    let _ = trace;
    cands
        .into_iter()
        .map(|(set, tear)| State {
            point,
            model,
            kept: (0..n).filter(|&i| set[i]).map(|i| pending[i]).collect(),
            lost: (0..n).filter(|&i| !set[i]).map(|i| pending[i]).collect(),
            tear,
            durable: durable.clone(),
        })
        .collect()
}
