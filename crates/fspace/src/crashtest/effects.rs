//! From operations to effects: the units a crash can keep or lose. An
//! operation changes file data, a file's size, or directory entries; the
//! names it used are resolved here, once, against the namespace as the
//! program saw it.

use super::trace::{EntryKind, OpKind, Trace};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub(crate) type Ino = u64;

const FALLOC_FL_KEEP_SIZE: u32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: u32 = 0x02;
const FALLOC_FL_COLLAPSE_RANGE: u32 = 0x08;
const FALLOC_FL_ZERO_RANGE: u32 = 0x10;
const FALLOC_FL_INSERT_RANGE: u32 = 0x20;
const RENAME_EXCHANGE: u32 = 0x2;

/// What an effect changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// The bytes of operation `op` at `offset`.
    Write {
        offset: u64,
        len: u64,
    },
    /// The size set (truncate, or allocation past the end).
    SetSize(u64),
    /// A range reads as zeros (punch hole, zero range).
    Zero {
        offset: u64,
        len: u64,
    },
    /// Bytes removed (collapse range) or inserted as zeros (insert range).
    Collapse {
        offset: u64,
        len: u64,
    },
    Insert {
        offset: u64,
        len: u64,
    },
    /// A new name for a new inode.
    Create {
        path: PathBuf,
        dir: bool,
    },
    /// A new name for an existing inode.
    Link {
        path: PathBuf,
    },
    Unlink {
        path: PathBuf,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        exchange: bool,
    },
    /// ext4's close after a truncate to zero: carries the data written
    /// since (`ties`); changes nothing itself.
    CloseAfterTruncate,
}

/// One effect of one operation.
#[derive(Clone, Debug)]
pub(crate) struct Effect {
    /// Index into `Trace::ops`.
    pub op: usize,
    /// The file whose data or size changes, or the inode a name is made
    /// or removed for.
    pub ino: Ino,
    /// Directories whose entries change.
    pub dirs: Vec<Ino>,
    pub change: Change,
    /// A journalled metadata change (names, explicit size changes,
    /// allocation), as opposed to file data.
    pub metadata: bool,
    /// A write past the old end of the file.
    pub grows: bool,
    /// Durable when the call returned (`O_DSYNC`, `RWF_DSYNC`).
    pub sync: bool,
    /// Effects that persist with this one (ext4's replace heuristics).
    pub ties: Vec<usize>,
}

impl Effect {
    pub(crate) fn is_entry(&self) -> bool {
        matches!(
            self.change,
            Change::Create { .. }
                | Change::Link { .. }
                | Change::Unlink { .. }
                | Change::Rename { .. }
        )
    }
}

fn parent(p: &Path) -> PathBuf {
    p.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Inode identities: an inode number the filesystem gave again to a new
/// file (after the old one was unlinked) is another inode here, or the
/// new file would inherit the old one's bytes. The first life of a number
/// keeps the number; later ones get ids with the top bit set.
struct Ids {
    life: HashMap<u64, Ino>,
    next: Ino,
}

impl Ids {
    fn current(&mut self, ino: u64) -> Ino {
        *self.life.entry(ino).or_insert(ino)
    }
    /// A new inode with number `ino` (created, not opened).
    fn fresh(&mut self, ino: u64) -> Ino {
        let id = if self.life.contains_key(&ino) {
            self.next += 1;
            (1 << 63) | self.next
        } else {
            ino
        };
        self.life.insert(ino, id);
        id
    }
}

/// The effects of a trace, in the order of its operations, and the inode
/// each operation is about (`op_ino[i]`, 0 when none) as the effects name
/// it.
pub(crate) struct Effects {
    pub list: Vec<Effect>,
    pub op_ino: Vec<Ino>,
}

/// The effects of a trace (see [`Effects`]).
pub(crate) fn effects(trace: &Trace) -> Effects {
    let mut names: HashMap<PathBuf, Ino> = HashMap::new();
    let mut sizes: HashMap<Ino, u64> = HashMap::new();
    let mut ids = Ids {
        life: HashMap::new(),
        next: 0,
    };
    let mut op_ino = vec![0; trace.ops.len()];
    for e in &trace.manifest.initial {
        ids.life.insert(e.ino, e.ino);
        names.insert(e.path.clone(), e.ino);
        if e.kind == EntryKind::File {
            sizes.insert(e.ino, e.size);
        }
    }
    let root_ino = names.get(Path::new("")).copied().unwrap_or(0);
    let dir_of = |names: &HashMap<PathBuf, Ino>, p: &Path| {
        names.get(&parent(p)).copied().unwrap_or(root_ino)
    };
    // Writes on each inode since its last truncate to zero (ext4's
    // replace-via-truncate), and all its writes (replace-via-rename).
    let mut writes: HashMap<Ino, Vec<usize>> = HashMap::new();
    let mut since_trunc0: HashMap<Ino, Vec<usize>> = HashMap::new();
    let mut out: Vec<Effect> = Vec::new();
    for (i, op) in trace.ops.iter().enumerate() {
        if op.errno.is_some() {
            continue;
        }
        // The op's inode as the effects name it: a creation starts a new
        // life of its number.
        let raw = op_raw_ino(&op.kind);
        let created = matches!(
            op.kind,
            OpKind::Open { created: true, .. }
                | OpKind::Open { tmpfile: true, .. }
                | OpKind::Mkdir { .. }
        );
        let id = match raw {
            Some(r) if created => ids.fresh(r),
            Some(r) => ids.current(r),
            None => 0,
        };
        op_ino[i] = id;
        let push =
            |out: &mut Vec<Effect>, ino: Ino, dirs: Vec<Ino>, change: Change, metadata: bool| {
                out.push(Effect {
                    op: i,
                    ino,
                    dirs,
                    change,
                    metadata,
                    grows: false,
                    sync: false,
                    ties: vec![],
                });
                out.len() - 1
            };
        match &op.kind {
            OpKind::Open {
                path,
                ino: _,
                flags,
                created,
                tmpfile,
                ..
            } => {
                if *tmpfile {
                    sizes.insert(id, 0);
                    continue;
                }
                if *created {
                    let d = dir_of(&names, path);
                    let dir = *flags & 0o200000 != 0;
                    push(
                        &mut out,
                        id,
                        vec![d],
                        Change::Create {
                            path: path.clone(),
                            dir,
                        },
                        true,
                    );
                    names.insert(path.clone(), id);
                    sizes.insert(id, 0);
                } else if *flags & 0o1000 != 0 && sizes.get(&id).copied().unwrap_or(0) > 0 {
                    // O_TRUNC on a file with bytes.
                    push(&mut out, id, vec![], Change::SetSize(0), true);
                    sizes.insert(id, 0);
                    since_trunc0.insert(id, vec![]);
                }
            }
            OpKind::Close { ino: _, .. } => {
                if let Some(t) = since_trunc0.remove(&id) {
                    if !t.is_empty() {
                        let e = push(&mut out, id, vec![], Change::CloseAfterTruncate, true);
                        out[e].ties = t;
                    }
                }
            }
            OpKind::Write {
                ino: _,
                offset,
                len,
                flags,
                ..
            } => {
                let old = sizes.get(&id).copied().unwrap_or(0);
                let end = offset + len;
                let e = push(
                    &mut out,
                    id,
                    vec![],
                    Change::Write {
                        offset: *offset,
                        len: *len,
                    },
                    false,
                );
                out[e].grows = end > old;
                out[e].sync = flags.sync;
                sizes.insert(id, old.max(end));
                writes.entry(id).or_default().push(e);
                if let Some(t) = since_trunc0.get_mut(&id) {
                    t.push(e);
                }
            }
            OpKind::Truncate { ino: _, len } => {
                push(&mut out, id, vec![], Change::SetSize(*len), true);
                sizes.insert(id, *len);
                if *len == 0 {
                    since_trunc0.insert(id, vec![]);
                }
            }
            OpKind::Fallocate {
                ino: _,
                mode,
                offset,
                len,
            } => {
                let old = sizes.get(&id).copied().unwrap_or(0);
                let keep = mode & FALLOC_FL_KEEP_SIZE != 0;
                if mode & FALLOC_FL_COLLAPSE_RANGE != 0 {
                    push(
                        &mut out,
                        id,
                        vec![],
                        Change::Collapse {
                            offset: *offset,
                            len: *len,
                        },
                        true,
                    );
                    sizes.insert(id, old.saturating_sub(*len));
                } else if mode & FALLOC_FL_INSERT_RANGE != 0 {
                    push(
                        &mut out,
                        id,
                        vec![],
                        Change::Insert {
                            offset: *offset,
                            len: *len,
                        },
                        true,
                    );
                    sizes.insert(id, old + len);
                } else {
                    if mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0 {
                        push(
                            &mut out,
                            id,
                            vec![],
                            Change::Zero {
                                offset: *offset,
                                len: *len,
                            },
                            true,
                        );
                    }
                    if !keep && offset + len > old {
                        push(&mut out, id, vec![], Change::SetSize(offset + len), true);
                        sizes.insert(id, offset + len);
                    }
                }
            }
            OpKind::PosixFallocate {
                ino: _,
                offset,
                len,
                ..
            } => {
                let old = sizes.get(&id).copied().unwrap_or(0);
                if offset + len > old {
                    push(&mut out, id, vec![], Change::SetSize(offset + len), true);
                    sizes.insert(id, offset + len);
                }
            }
            OpKind::Rename {
                from,
                to,
                ino: _,
                replaced,
                flags,
            } => match (from, to) {
                (Some(from), Some(to)) => {
                    let dirs = vec![dir_of(&names, from), dir_of(&names, to)];
                    let exchange = flags & RENAME_EXCHANGE != 0;
                    let e = push(
                        &mut out,
                        id,
                        dirs,
                        Change::Rename {
                            from: from.clone(),
                            to: to.clone(),
                            exchange,
                        },
                        true,
                    );
                    if replaced.is_some() {
                        out[e].ties = writes.get(&id).cloned().unwrap_or_default();
                    }
                    rename_names(&mut names, from, to, exchange);
                }
                (Some(from), None) => {
                    let d = dir_of(&names, from);
                    push(
                        &mut out,
                        id,
                        vec![d],
                        Change::Unlink { path: from.clone() },
                        true,
                    );
                    names.remove(from);
                }
                (None, Some(to)) => {
                    // Arrived from outside: its bytes were not recorded; it
                    // is modelled as an empty file (a limit the trace names).
                    let d = dir_of(&names, to);
                    push(
                        &mut out,
                        id,
                        vec![d],
                        Change::Create {
                            path: to.clone(),
                            dir: false,
                        },
                        true,
                    );
                    names.insert(to.clone(), id);
                }
                (None, None) => {}
            },
            OpKind::Link { to, ino: _, .. } => {
                let d = dir_of(&names, to);
                push(
                    &mut out,
                    id,
                    vec![d],
                    Change::Link { path: to.clone() },
                    true,
                );
                names.insert(to.clone(), id);
            }
            OpKind::Unlink { path, ino: _ } | OpKind::Rmdir { path, ino: _ } => {
                let d = dir_of(&names, path);
                push(
                    &mut out,
                    id,
                    vec![d],
                    Change::Unlink { path: path.clone() },
                    true,
                );
                names.remove(path);
            }
            OpKind::Mkdir { path, ino: _ } => {
                let d = dir_of(&names, path);
                push(
                    &mut out,
                    id,
                    vec![d],
                    Change::Create {
                        path: path.clone(),
                        dir: true,
                    },
                    true,
                );
                names.insert(path.clone(), id);
            }
            _ => {}
        }
    }
    Effects { list: out, op_ino }
}

/// Each operation in words (`#17 write(c, 0..1)`), its file named as it
/// was called when the operation ran: an inode number given again to a
/// new file names the new file from its creation on.
pub fn describe_ops(trace: &Trace) -> Vec<String> {
    let fx = effects(trace);
    let mut name: HashMap<Ino, PathBuf> = HashMap::new();
    for e in &trace.manifest.initial {
        name.insert(e.ino, e.path.clone());
    }
    let mut next = 0;
    let mut out = Vec::with_capacity(trace.ops.len());
    for (i, op) in trace.ops.iter().enumerate() {
        // The names this op gives (a create, link or rename) count for it.
        while next < fx.list.len() && fx.list[next].op <= i {
            let e = &fx.list[next];
            match &e.change {
                Change::Create { path, .. } | Change::Link { path } => {
                    name.insert(e.ino, path.clone());
                }
                Change::Rename { to, .. } => {
                    name.insert(e.ino, to.clone());
                }
                _ => {}
            }
            next += 1;
        }
        let id = fx.op_ino[i];
        let this = name.get(&id).map(|p| super::trace::show(p));
        out.push(op.describe(&|raw| this.clone().unwrap_or_else(|| format!("inode {raw}"))));
    }
    out
}

/// The inode number an operation names, if any.
fn op_raw_ino(k: &OpKind) -> Option<u64> {
    match k {
        OpKind::Open { ino, .. }
        | OpKind::Close { ino, .. }
        | OpKind::Write { ino, .. }
        | OpKind::Truncate { ino, .. }
        | OpKind::Fallocate { ino, .. }
        | OpKind::PosixFallocate { ino, .. }
        | OpKind::Rename { ino, .. }
        | OpKind::Link { ino, .. }
        | OpKind::Unlink { ino, .. }
        | OpKind::Mkdir { ino, .. }
        | OpKind::Rmdir { ino, .. }
        | OpKind::Fsync { ino, .. }
        | OpKind::SyncFileRange { ino, .. } => Some(*ino),
        _ => None,
    }
}

/// Moves `from` (and, for a directory, everything below it) to `to`.
pub(crate) fn rename_names<V: Clone>(
    names: &mut HashMap<PathBuf, V>,
    from: &Path,
    to: &Path,
    exchange: bool,
) {
    let moved: Vec<(PathBuf, V)> = names
        .iter()
        .filter(|(p, _)| p.starts_with(from))
        .map(|(p, v)| (p.clone(), v.clone()))
        .collect();
    let swapped: Vec<(PathBuf, V)> = if exchange {
        names
            .iter()
            .filter(|(p, _)| p.starts_with(to))
            .map(|(p, v)| (p.clone(), v.clone()))
            .collect()
    } else {
        names.retain(|p, _| !p.starts_with(to));
        vec![]
    };
    for (p, _) in moved.iter().chain(swapped.iter()) {
        names.remove(p);
    }
    for (p, v) in moved {
        let rest = p.strip_prefix(from).unwrap_or(Path::new(""));
        names.insert(
            if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            },
            v,
        );
    }
    for (p, v) in swapped {
        let rest = p.strip_prefix(to).unwrap_or(Path::new(""));
        names.insert(
            if rest.as_os_str().is_empty() {
                from.to_path_buf()
            } else {
                from.join(rest)
            },
            v,
        );
    }
}
