//! Static rules one trace can break, without building a crash state.
//! Each finding names the operations and where the rule comes from.

use super::effects::{effects, Change, Effect};
use super::model::Model;
use super::states::durability;
use super::trace::{AckChannel, OpKind, Trace};
use serde::Serialize;

/// A rule of `crashtest lint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A create, rename or link not made durable by an fsync of its
    /// directory before the next acknowledgement.
    UnsyncedName,
    /// A rename over an existing file of a file whose data was not synced.
    RenameUnsyncedData,
    /// An acknowledgement before the fsync that makes its data durable.
    AckBeforeSync,
    /// An fsync that failed, then another on the same file (fsyncgate).
    FsyncRetry,
    /// `O_DIRECT` writes with no later fsync before the next
    /// acknowledgement, on a device that may have a volatile cache.
    DirectWithoutSync,
    /// `posix_fallocate` where glibc emulates it by writing a byte per
    /// block.
    EmulatedPosixFallocate,
    /// A file grown and flushed with `sync_file_range` only: its size is
    /// metadata, which `sync_file_range` does not write.
    SyncFileRangeOnly,
}

impl Rule {
    /// The rule's name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Rule::UnsyncedName => "unsynced-name",
            Rule::RenameUnsyncedData => "rename-unsynced-data",
            Rule::AckBeforeSync => "ack-before-sync",
            Rule::FsyncRetry => "fsync-retry",
            Rule::DirectWithoutSync => "direct-without-sync",
            Rule::EmulatedPosixFallocate => "emulated-posix-fallocate",
            Rule::SyncFileRangeOnly => "sync-file-range-only",
        }
    }

    /// Where the rule comes from.
    pub fn source(self) -> &'static str {
        match self {
            Rule::UnsyncedName => "fsync(2): \"an explicit fsync() on a file descriptor for the directory is also needed\"",
            Rule::RenameUnsyncedData => "ext4(5) auto_da_alloc (the replace-via-rename heuristic is ext4's alone); ALICE (OSDI '14) atomicity vulnerabilities",
            Rule::AckBeforeSync => "ALICE (OSDI '14) durability vulnerabilities: a result reported before it is durable",
            Rule::FsyncRetry => "PostgreSQL fsyncgate (2018); Rebello et al., \"Can applications recover from fsync failures?\" (USENIX ATC '20)",
            Rule::DirectWithoutSync => "open(2) O_DIRECT: it does not make data durable; \"use O_SYNC in addition\"",
            Rule::EmulatedPosixFallocate => "posix_fallocate(3) and glibc's sysdeps/posix/posix_fallocate.c: one byte written per block where fallocate(2) is unsupported",
            Rule::SyncFileRangeOnly => "sync_file_range(2): \"none of these operations writes out the file's metadata\"",
        }
    }
}

/// One rule broken by the trace.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The rule.
    pub rule: Rule,
    /// The operations involved, by number.
    pub ops: Vec<usize>,
    /// What happened, for people.
    pub text: String,
}

const NETWORK_OR_FUSE_MAGICS: [u64; 5] =
    [0x6573_5546, 0x6969, 0xfe53_4d42, 0xff53_4d42, 0x0102_1997];

fn is_ack(k: &OpKind) -> bool {
    // stderr carries diagnostics far more often than acknowledgements.
    matches!(k, OpKind::Ack { channel, .. } if *channel != AckChannel::Stderr)
}

/// The schema of [`lint_document`].
pub const LINT_FORMAT: &str = "fspace-crashtest-lint/1";

/// `findings` (from [`lint`] of `trace`) as the JSON document of `fspace
/// crashtest lint --json` (schema [`LINT_FORMAT`], docs/crashtest.md): the
/// trace's path, each finding with its rule's source, and the operation
/// numbers of the recorder's limits. The Python package's `to_dict()` is
/// the same document.
pub fn lint_document<'a>(
    trace_path: &'a std::path::Path,
    trace: &'a Trace,
    findings: &'a [Finding],
) -> impl Serialize + 'a {
    #[derive(Serialize)]
    struct Sourced<'a> {
        source: &'static str,
        #[serde(flatten)]
        finding: &'a Finding,
    }
    #[derive(Serialize)]
    struct Document<'a> {
        format: &'static str,
        // Lossy: the document must not fail after the lint was made.
        trace: std::borrow::Cow<'a, str>,
        findings: Vec<Sourced<'a>>,
        limits: Vec<usize>,
    }
    Document {
        format: LINT_FORMAT,
        trace: trace_path.to_string_lossy(),
        findings: findings
            .iter()
            .map(|f| Sourced {
                source: f.rule.source(),
                finding: f,
            })
            .collect(),
        limits: trace.limits().iter().map(|o| o.number).collect(),
    }
}

/// Checks `trace` against every rule; findings in trace order per rule.
pub fn lint(trace: &Trace) -> Vec<Finding> {
    let fx = effects(trace);
    let durable_at = durability(trace, &fx.list, &fx.op_ino, Model::Posix);
    let acks: Vec<usize> = (0..trace.ops.len())
        .filter(|&i| trace.ops[i].errno.is_none() && is_ack(&trace.ops[i].kind))
        .collect();
    let cx = Cx {
        trace,
        effects: fx.list,
        op_ino: fx.op_ino,
        durable_at,
        ops: super::effects::describe_ops(trace),
        acks,
    };
    let mut out = Vec::new();
    unsynced_names(&cx, &mut out);
    rename_unsynced_data(&cx, &mut out);
    ack_before_sync(&cx, &mut out);
    fsync_retry(&cx, &mut out);
    direct_without_sync(&cx, &mut out);
    emulated_posix_fallocate(&cx, &mut out);
    sync_file_range_only(&cx, &mut out);
    out
}

/// What every rule reads: the trace, its effects, when each became
/// durable under the worst case, and the acknowledgements.
struct Cx<'a> {
    trace: &'a Trace,
    effects: Vec<Effect>,
    op_ino: Vec<u64>,
    durable_at: Vec<usize>,
    ops: Vec<String>,
    acks: Vec<usize>,
}

impl Cx<'_> {
    fn describe(&self, i: usize) -> String {
        self.ops[i].clone()
    }
    fn next_ack(&self, i: usize) -> Option<usize> {
        self.acks.iter().copied().find(|&a| a > i)
    }
}

fn unsynced_names(cx: &Cx, out: &mut Vec<Finding>) {
    // Names made and not made durable before the next acknowledgement;
    // a name removed again before it (a temporary) does not count.
    for (e, ef) in cx.effects.iter().enumerate() {
        let path = match &ef.change {
            Change::Create { path, .. } | Change::Link { path } => path,
            Change::Rename { to, .. } => to,
            _ => continue,
        };
        let Some(a) = cx.next_ack(ef.op) else {
            continue;
        };
        if cx.durable_at[e] <= a {
            continue;
        }
        let removed = cx.effects.iter().any(|o| {
            o.op > ef.op
                && o.op < a
                && match &o.change {
                    Change::Unlink { path: p } => p == path,
                    Change::Rename { from, .. } => from == path,
                    _ => false,
                }
        });
        if removed {
            continue;
        }
        out.push(Finding {
            rule: Rule::UnsyncedName,
            ops: vec![cx.trace.ops[ef.op].number, cx.trace.ops[a].number],
            text: format!(
                "{} is not made durable by an fsync of its directory before {}",
                cx.describe(ef.op),
                cx.describe(a)
            ),
        });
    }
}

fn rename_unsynced_data(cx: &Cx, out: &mut Vec<Finding>) {
    // Renames over an existing file of data not yet synced.
    for (e, ef) in cx.effects.iter().enumerate() {
        let Change::Rename { .. } = ef.change else {
            continue;
        };
        let OpKind::Rename {
            replaced: Some(_), ..
        } = cx.trace.ops[ef.op].kind
        else {
            continue;
        };
        let unsynced: Vec<usize> = cx.effects[..e]
            .iter()
            .enumerate()
            .filter(|(w, w_ef)| {
                w_ef.ino == ef.ino
                    && matches!(w_ef.change, Change::Write { .. })
                    && cx.durable_at[*w] > ef.op
            })
            .map(|(_, w_ef)| w_ef.op)
            .collect();
        if let Some(&last) = unsynced.last() {
            out.push(Finding {
                rule: Rule::RenameUnsyncedData,
                ops: vec![cx.trace.ops[last].number, cx.trace.ops[ef.op].number],
                text: format!(
                    "{} replaces a file, but {}{} had not been synced: a crash can leave the new name with missing data",
                    cx.describe(ef.op),
                    cx.describe(last),
                    match unsynced.len() - 1 {
                        0 => String::new(),
                        n => format!(" (and {n} earlier writes to it)"),
                    }
                ),
            });
        }
    }
}

fn ack_before_sync(cx: &Cx, out: &mut Vec<Finding>) {
    // Acknowledgements before the sync that covers what came before them.
    for &a in &cx.acks {
        let late: Vec<(usize, usize)> = cx
            .effects
            .iter()
            .enumerate()
            .filter(|(e, ef)| {
                ef.op < a
                    && cx.durable_at[*e] > a + 1
                    && cx.durable_at[*e] != usize::MAX
                    && !is_temporary(&cx.effects, ef)
            })
            .map(|(e, ef)| (ef.op, cx.durable_at[e] - 1))
            .collect();
        if let Some(&(op, sync)) = late.first() {
            // Only when the sync is the next durability call on that file
            // after the acknowledgement, not a much later unrelated one.
            out.push(Finding {
                rule: Rule::AckBeforeSync,
                ops: vec![
                    cx.trace.ops[op].number,
                    cx.trace.ops[a].number,
                    cx.trace.ops[sync].number,
                ],
                text: format!(
                    "{} comes before {}, which makes {} durable",
                    cx.describe(a),
                    cx.describe(sync),
                    cx.describe(op)
                ),
            });
        }
    }
}

fn fsync_retry(cx: &Cx, out: &mut Vec<Finding>) {
    // fsyncgate: a failed fsync, then another on the same file.
    for (i, op) in cx.trace.ops.iter().enumerate() {
        let (OpKind::Fsync { ino, .. }, Some(errno)) = (&op.kind, op.errno) else {
            continue;
        };
        if errno == 4 || errno == 22 {
            continue; // EINTR, EINVAL: nothing was lost
        }
        if let Some(j) = (i + 1..cx.trace.ops.len())
            .find(|&j| matches!(cx.trace.ops[j].kind, OpKind::Fsync { ino: x, .. } if x == *ino))
        {
            out.push(Finding {
                rule: Rule::FsyncRetry,
                ops: vec![op.number, cx.trace.ops[j].number],
                text: format!(
                    "{} failed, and the program went on to {}: after a failed fsync the kernel may have dropped the dirty pages, so a later success proves nothing",
                    cx.describe(i),
                    cx.describe(j)
                ),
            });
        }
    }
}

fn direct_without_sync(cx: &Cx, out: &mut Vec<Finding>) {
    // O_DIRECT without a later sync.
    if cx.trace.manifest.volatile_cache != Some(false) {
        for (e, ef) in cx.effects.iter().enumerate() {
            let OpKind::Write { flags, .. } = &cx.trace.ops[ef.op].kind else {
                continue;
            };
            if !flags.direct || flags.sync {
                continue;
            }
            let until = cx.next_ack(ef.op).map_or(cx.trace.ops.len(), |a| a + 1);
            if cx.durable_at[e] > until {
                out.push(Finding {
                    rule: Rule::DirectWithoutSync,
                    ops: vec![cx.trace.ops[ef.op].number],
                    text: format!(
                        "{} is an O_DIRECT write with no fsync after it{}: the device's cache may still hold it",
                        cx.describe(ef.op),
                        cx.next_ack(ef.op).map_or(String::new(), |a| format!(" before {}", cx.describe(a)))
                    ),
                });
                break;
            }
        }
    }
}

fn emulated_posix_fallocate(cx: &Cx, out: &mut Vec<Finding>) {
    // posix_fallocate that glibc emulates.
    for (i, op) in cx.trace.ops.iter().enumerate() {
        let OpKind::PosixFallocate { fs_magic, .. } = op.kind else {
            continue;
        };
        let emulated = NETWORK_OR_FUSE_MAGICS.contains(&fs_magic)
            || cx.trace.manifest.fallocate == Some(false);
        if emulated {
            out.push(Finding {
                rule: Rule::EmulatedPosixFallocate,
                ops: vec![op.number],
                text: format!(
                    "{} on {}, where fallocate(2) is not supported: glibc writes one byte into every block instead (use fallocate(2) and handle EOPNOTSUPP, or fspace's allocate_range)",
                    cx.describe(i),
                    cx.trace.manifest.filesystem
                ),
            });
        }
    }
}

fn sync_file_range_only(cx: &Cx, out: &mut Vec<Finding>) {
    // sync_file_range as the only flush of a grown file.
    for (i, op) in cx.trace.ops.iter().enumerate() {
        let OpKind::SyncFileRange { .. } = op.kind else {
            continue;
        };
        let Some(a) = cx.next_ack(i) else { continue };
        let ino = cx.op_ino[i];
        let grown =
            cx.effects.iter().enumerate().find(|(e, ef)| {
                ef.ino == ino && ef.op < i && ef.grows && cx.durable_at[*e] > a + 1
            });
        if let Some((_, ef)) = grown {
            out.push(Finding {
                rule: Rule::SyncFileRangeOnly,
                ops: vec![cx.trace.ops[ef.op].number, op.number, cx.trace.ops[a].number],
                text: format!(
                    "{} grew the file and {} is its only flush before {}: the new size is metadata, which sync_file_range does not write",
                    cx.describe(ef.op),
                    cx.describe(i),
                    cx.describe(a)
                ),
            });
        }
    }
}

/// A name later removed again, or data of a file later unlinked: not
/// what an acknowledgement is about.
fn is_temporary(effects: &[Effect], ef: &Effect) -> bool {
    effects
        .iter()
        .any(|o| o.op > ef.op && o.ino == ef.ino && matches!(o.change, Change::Unlink { .. }))
}
