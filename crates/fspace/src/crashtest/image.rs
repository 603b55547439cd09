//! A directory tree in memory: the initial copy plus the effects a crash
//! state keeps, written out as a real directory for the checker.

use super::effects::{rename_names, Change, Effect, Ino};
use super::trace::{EntryKind, OpKind, Trace};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub(crate) enum Node {
    File(Arc<Vec<u8>>),
    Dir,
    Symlink(PathBuf),
}

/// The part of a write a torn state keeps: bytes `keep` of the write
/// (relative to its offset), and whether the file's size grows to the
/// write's end anyway (a size without its data: zeros).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Tear {
    pub effect: usize,
    pub keep: std::ops::Range<u64>,
    pub size_anyway: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Image {
    pub names: HashMap<PathBuf, Ino>,
    pub nodes: HashMap<Ino, Node>,
}

impl Image {
    /// The directory as it was when the recording started.
    pub(crate) fn initial(trace: &Trace) -> Result<Image> {
        let mut img = Image::default();
        let base = trace.initial_dir();
        for e in &trace.manifest.initial {
            let node = match e.kind {
                EntryKind::Dir => Node::Dir,
                EntryKind::Symlink => Node::Symlink(e.target.clone().unwrap_or_default()),
                EntryKind::File => {
                    let p = base.join(&e.path);
                    let bytes = std::fs::read(&p)
                        .map_err(|err| Error::from_io("read crashtest trace", &p, None, err))?;
                    Node::File(Arc::new(bytes))
                }
            };
            img.names.insert(e.path.clone(), e.ino);
            img.nodes.entry(e.ino).or_insert(node);
        }
        Ok(img)
    }

    fn file(&mut self, ino: Ino) -> &mut Vec<u8> {
        let node = self
            .nodes
            .entry(ino)
            .or_insert_with(|| Node::File(Arc::new(Vec::new())));
        if !matches!(node, Node::File(_)) {
            *node = Node::File(Arc::new(Vec::new()));
        }
        match node {
            Node::File(b) => Arc::make_mut(b),
            _ => unreachable!("made a file above"),
        }
    }

    /// Applies one effect, whole or torn.
    pub(crate) fn apply(&mut self, trace: &Trace, e: &Effect, tear: Option<&Tear>) {
        match &e.change {
            Change::Write { offset, len } => {
                let OpKind::Write { data, .. } = &trace.ops[e.op].kind else {
                    return;
                };
                let f = self.file(e.ino);
                let (keep, size_anyway) = match tear {
                    Some(t) => (t.keep.clone(), t.size_anyway),
                    None => (0..*len, false),
                };
                let end = offset + len;
                if size_anyway && (f.len() as u64) < end {
                    set_len(f, end as usize);
                }
                if keep.start < keep.end {
                    let (s, t) = ((offset + keep.start) as usize, (offset + keep.end) as usize);
                    if f.len() < t {
                        set_len(f, t);
                    }
                    f[s..t].copy_from_slice(&data[keep.start as usize..keep.end as usize]);
                }
            }
            Change::SetSize(n) => set_len(self.file(e.ino), *n as usize),
            Change::Zero { offset, len } => {
                let f = self.file(e.ino);
                let s = (*offset as usize).min(f.len());
                let t = ((offset + len) as usize).min(f.len());
                f[s..t].fill(0);
            }
            Change::Collapse { offset, len } => {
                let f = self.file(e.ino);
                let s = (*offset as usize).min(f.len());
                let t = ((offset + len) as usize).min(f.len());
                f.drain(s..t);
            }
            Change::Insert { offset, len } => {
                let f = self.file(e.ino);
                let s = (*offset as usize).min(f.len());
                f.splice(s..s, vec![0u8; *len as usize]);
            }
            Change::Create { path, dir } => {
                self.names.insert(path.clone(), e.ino);
                self.nodes.entry(e.ino).or_insert_with(|| {
                    if *dir {
                        Node::Dir
                    } else {
                        Node::File(Arc::new(Vec::new()))
                    }
                });
            }
            Change::Link { path } => {
                self.names.insert(path.clone(), e.ino);
                self.nodes
                    .entry(e.ino)
                    .or_insert_with(|| Node::File(Arc::new(Vec::new())));
            }
            Change::Unlink { path } => {
                self.names.remove(path);
            }
            Change::Rename { from, to, exchange } => {
                if self.names.contains_key(from) {
                    rename_names(&mut self.names, from, to, *exchange);
                }
            }
            Change::CloseAfterTruncate => {}
        }
    }

    /// The entries reachable from the root (a name whose directory did
    /// not persist is not), sorted, parents first.
    fn reachable(&self) -> BTreeMap<&Path, Ino> {
        let mut out = BTreeMap::new();
        let mut paths: Vec<(&PathBuf, &Ino)> = self.names.iter().collect();
        paths.sort_by_key(|(p, _)| p.components().count());
        for (p, ino) in paths {
            if p.as_os_str().is_empty() {
                continue;
            }
            let parent = p.parent().unwrap_or(Path::new(""));
            let parent_ok = parent.as_os_str().is_empty()
                || (out.contains_key(parent)
                    && matches!(
                        self.names.get(parent).and_then(|i| self.nodes.get(i)),
                        Some(Node::Dir)
                    ));
            if parent_ok {
                out.insert(p.as_path(), *ino);
            }
        }
        out
    }

    /// A fingerprint of what a checker would see: names, kinds, contents
    /// and which names share an inode.
    pub(crate) fn fingerprint(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        let mut first: HashMap<Ino, &Path> = HashMap::new();
        for (p, ino) in self.reachable() {
            p.hash(&mut h);
            if let Some(other) = first.get(&ino) {
                (2u8, other).hash(&mut h);
                continue;
            }
            first.insert(ino, p);
            match self.nodes.get(&ino) {
                // CRC-64 of the bytes (SIMD even in a debug build; SipHash
                // over every byte of every state dominated a check's time).
                Some(Node::File(b)) => (
                    0u8,
                    b.len(),
                    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc64Nvme, b),
                )
                    .hash(&mut h),
                Some(Node::Dir) => 1u8.hash(&mut h),
                Some(Node::Symlink(t)) => (3u8, t).hash(&mut h),
                None => 4u8.hash(&mut h),
            }
        }
        h.finish()
    }

    /// Writes the tree into `dir` (which must exist and be empty). Names
    /// of one inode become hard links.
    pub(crate) fn write_to(&self, dir: &Path) -> Result<()> {
        let io = |op: &'static str, p: &Path| {
            let p = p.to_path_buf();
            move |e| Error::from_io(op, &p, None, e)
        };
        let mut first: HashMap<Ino, PathBuf> = HashMap::new();
        for (p, ino) in self.reachable() {
            let target = dir.join(p);
            if let Some(other) = first.get(&ino) {
                if matches!(self.nodes.get(&ino), Some(Node::File(_))) {
                    std::fs::hard_link(other, &target).map_err(io("link", &target))?;
                    continue;
                }
            }
            match self.nodes.get(&ino) {
                Some(Node::Dir) => std::fs::create_dir(&target).map_err(io("mkdir", &target))?,
                Some(Node::Symlink(t)) => {
                    std::os::unix::fs::symlink(t, &target).map_err(io("symlink", &target))?;
                }
                Some(Node::File(b)) => {
                    std::fs::write(&target, b.as_slice()).map_err(io("write", &target))?;
                }
                None => std::fs::write(&target, b"").map_err(io("write", &target))?,
            }
            first.insert(ino, target);
        }
        Ok(())
    }
}

/// `v.resize(n, 0)`, by a zeroed allocation and one copy: resize fills
/// byte by byte in a debug build, which dominated a check's time.
fn set_len(v: &mut Vec<u8>, n: usize) {
    if n <= v.len() {
        v.truncate(n);
    } else {
        v.extend_from_slice(&vec![0u8; n - v.len()]);
    }
}
