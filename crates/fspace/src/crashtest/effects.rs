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
    let mut w = Walk {
        names: HashMap::new(),
        sizes: HashMap::new(),
        ids: Ids {
            life: HashMap::new(),
            next: 0,
        },
        root: 0,
        writes: HashMap::new(),
        since_trunc0: HashMap::new(),
        out: Vec::new(),
    };
    let mut op_ino = vec![0; trace.ops.len()];
    for e in &trace.manifest.initial {
        w.ids.life.insert(e.ino, e.ino);
        w.names.insert(e.path.clone(), e.ino);
        if e.kind == EntryKind::File {
            w.sizes.insert(e.ino, e.size);
        }
    }
    w.root = w.names.get(Path::new("")).copied().unwrap_or(0);
    for (i, op) in trace.ops.iter().enumerate() {
        if op.errno.is_some() {
            continue;
        }
        // The op's inode as the effects name it: a creation starts a new
        // life of its number.
        let created = matches!(
            op.kind,
            OpKind::Open { created: true, .. }
                | OpKind::Open { tmpfile: true, .. }
                | OpKind::Mkdir { .. }
        );
        let id = match op_raw_ino(&op.kind) {
            Some(r) if created => w.ids.fresh(r),
            Some(r) => w.ids.current(r),
            None => 0,
        };
        op_ino[i] = id;
        if !w.data_op(i, id, &op.kind) {
            w.name_op(i, id, &op.kind);
        }
    }
    Effects {
        list: w.out,
        op_ino,
    }
}

/// The walk over a trace that turns operations into effects.
struct Walk {
    /// The namespace as the program saw it.
    names: HashMap<PathBuf, Ino>,
    sizes: HashMap<Ino, u64>,
    ids: Ids,
    root: Ino,
    /// Writes on each inode (ext4's replace-via-rename), and those since
    /// its last truncate to zero (replace-via-truncate).
    writes: HashMap<Ino, Vec<usize>>,
    since_trunc0: HashMap<Ino, Vec<usize>>,
    out: Vec<Effect>,
}

impl Walk {
    fn push(
        &mut self,
        op: usize,
        ino: Ino,
        dirs: Vec<Ino>,
        change: Change,
        metadata: bool,
    ) -> usize {
        self.out.push(Effect {
            op,
            ino,
            dirs,
            change,
            metadata,
            grows: false,
            sync: false,
            ties: vec![],
        });
        self.out.len() - 1
    }

    fn dir_of(&self, p: &Path) -> Ino {
        self.names.get(&parent(p)).copied().unwrap_or(self.root)
    }

    fn size(&self, id: Ino) -> u64 {
        self.sizes.get(&id).copied().unwrap_or(0)
    }

    /// Operations on a file's bytes and size; false for any other.
    fn data_op(&mut self, i: usize, id: Ino, kind: &OpKind) -> bool {
        match kind {
            OpKind::Open {
                flags,
                created: false,
                tmpfile: false,
                ..
            } => {
                if *flags & 0o1000 != 0 && self.size(id) > 0 {
                    // O_TRUNC on a file with bytes.
                    self.push(i, id, vec![], Change::SetSize(0), true);
                    self.sizes.insert(id, 0);
                    self.since_trunc0.insert(id, vec![]);
                }
            }
            OpKind::Close { .. } => {
                if let Some(t) = self.since_trunc0.remove(&id) {
                    if !t.is_empty() {
                        let e = self.push(i, id, vec![], Change::CloseAfterTruncate, true);
                        self.out[e].ties = t;
                    }
                }
            }
            OpKind::Write {
                offset, len, flags, ..
            } => {
                let old = self.size(id);
                let e = self.push(
                    i,
                    id,
                    vec![],
                    Change::Write {
                        offset: *offset,
                        len: *len,
                    },
                    false,
                );
                self.out[e].grows = offset + len > old;
                self.out[e].sync = flags.sync;
                self.sizes.insert(id, old.max(offset + len));
                self.writes.entry(id).or_default().push(e);
                if let Some(t) = self.since_trunc0.get_mut(&id) {
                    t.push(e);
                }
            }
            OpKind::Truncate { len, .. } => {
                self.push(i, id, vec![], Change::SetSize(*len), true);
                self.sizes.insert(id, *len);
                if *len == 0 {
                    self.since_trunc0.insert(id, vec![]);
                }
            }
            OpKind::Fallocate {
                mode, offset, len, ..
            } => self.fallocate(i, id, *mode, *offset, *len),
            OpKind::PosixFallocate { offset, len, .. } => {
                if offset + len > self.size(id) {
                    self.push(i, id, vec![], Change::SetSize(offset + len), true);
                    self.sizes.insert(id, offset + len);
                }
            }
            _ => return false,
        }
        true
    }

    fn fallocate(&mut self, i: usize, id: Ino, mode: u32, offset: u64, len: u64) {
        let old = self.size(id);
        if mode & FALLOC_FL_COLLAPSE_RANGE != 0 {
            self.push(i, id, vec![], Change::Collapse { offset, len }, true);
            self.sizes.insert(id, old.saturating_sub(len));
        } else if mode & FALLOC_FL_INSERT_RANGE != 0 {
            self.push(i, id, vec![], Change::Insert { offset, len }, true);
            self.sizes.insert(id, old + len);
        } else {
            if mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0 {
                self.push(i, id, vec![], Change::Zero { offset, len }, true);
            }
            if mode & FALLOC_FL_KEEP_SIZE == 0 && offset + len > old {
                self.push(i, id, vec![], Change::SetSize(offset + len), true);
                self.sizes.insert(id, offset + len);
            }
        }
    }

    /// Operations on names: creations, links, renames, removals.
    fn name_op(&mut self, i: usize, id: Ino, kind: &OpKind) {
        match kind {
            OpKind::Open { tmpfile: true, .. } => {
                self.sizes.insert(id, 0);
            }
            OpKind::Open {
                path,
                flags,
                created: true,
                ..
            } => {
                let d = self.dir_of(path);
                let dir = *flags & 0o200000 != 0;
                self.push(
                    i,
                    id,
                    vec![d],
                    Change::Create {
                        path: path.clone(),
                        dir,
                    },
                    true,
                );
                self.names.insert(path.clone(), id);
                self.sizes.insert(id, 0);
            }
            OpKind::Rename {
                from,
                to,
                replaced,
                flags,
                ..
            } => self.rename(
                i,
                id,
                from.as_deref(),
                to.as_deref(),
                replaced.is_some(),
                *flags,
            ),
            OpKind::Link { to, .. } => {
                let d = self.dir_of(to);
                self.push(i, id, vec![d], Change::Link { path: to.clone() }, true);
                self.names.insert(to.clone(), id);
            }
            OpKind::Unlink { path, .. } | OpKind::Rmdir { path, .. } => {
                let d = self.dir_of(path);
                self.push(i, id, vec![d], Change::Unlink { path: path.clone() }, true);
                self.names.remove(path);
            }
            OpKind::Mkdir { path, .. } => {
                let d = self.dir_of(path);
                self.push(
                    i,
                    id,
                    vec![d],
                    Change::Create {
                        path: path.clone(),
                        dir: true,
                    },
                    true,
                );
                self.names.insert(path.clone(), id);
            }
            _ => {}
        }
    }

    fn rename(
        &mut self,
        i: usize,
        id: Ino,
        from: Option<&Path>,
        to: Option<&Path>,
        replaces: bool,
        flags: u32,
    ) {
        match (from, to) {
            (Some(from), Some(to)) => {
                let dirs = vec![self.dir_of(from), self.dir_of(to)];
                let exchange = flags & RENAME_EXCHANGE != 0;
                let change = Change::Rename {
                    from: from.to_path_buf(),
                    to: to.to_path_buf(),
                    exchange,
                };
                let e = self.push(i, id, dirs, change, true);
                if replaces {
                    self.out[e].ties = self.writes.get(&id).cloned().unwrap_or_default();
                }
                rename_names(&mut self.names, from, to, exchange);
            }
            (Some(from), None) => {
                let d = self.dir_of(from);
                self.push(
                    i,
                    id,
                    vec![d],
                    Change::Unlink {
                        path: from.to_path_buf(),
                    },
                    true,
                );
                self.names.remove(from);
            }
            (None, Some(to)) => {
                // Arrived from outside: its bytes were not recorded; it is
                // modelled as an empty file (a limit the trace names).
                let d = self.dir_of(to);
                self.push(
                    i,
                    id,
                    vec![d],
                    Change::Create {
                        path: to.to_path_buf(),
                        dir: false,
                    },
                    true,
                );
                self.names.insert(to.to_path_buf(), id);
            }
            (None, None) => {}
        }
    }
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
