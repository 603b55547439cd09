//! A power-cut model of storage, for tests: the log's seam
//! ([`Storage`]) over in-memory files and directories that keep a **live**
//! image (what the running process sees: the page cache) and a
//! **durable** one (what the device holds).
//!
//! - File data and size become durable only at `fdatasync`/`fsync` of that
//!   file (written through any name, or none); the bytes of one write also at
//!   its `pwritev2(RWF_DSYNC)`, and only those.
//! - Directory entries (create, rename, unlink, mkdir) become durable only
//!   at `fsync` of that directory. A file `fsync` does not make its name
//!   durable, nor does a directory `fsync` make the directory's own entry
//!   in its parent durable.
//! - A **cut** (power loss) before the N-th mutating call keeps the durable
//!   image plus, as a real device and journal may: a prefix of each
//!   directory's unsynced entry changes (journals commit metadata in
//!   order), and of the unsynced file writes: none, all, any subset of
//!   their 512-byte sectors (torn pages; a sector is atomic), any subset
//!   of their 4 KiB pages (the unit the log writes, padded or not), or a
//!   prefix of each write in sectors (a device that wrote in order and
//!   stopped). From then on every call of that process fails with `EIO`.
//! - A **crash** (kill -9) stops the process's calls the same way but keeps
//!   the live image: the next process sees the page cache, unsynced.
//!
//! Seam calls are counted (only those that change or sync state) so that
//! a test can cut at every point of a run; random choices come from the
//! seed, so a single-threaded run is reproducible from it.

use crate::error::{Error, Result};
use crate::grow::GrowOptions;
use crate::note::Note;
use crate::strategy::Strategy;
use crate::sys::Errno;
use crate::wal::format::FREE_PREFIX;
use crate::wal::site::Site;
use crate::wal::storage::{Entry, Grown, OpenMode, SegmentFile, Storage};
use rustix::io::IoSlice;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Granularity at which unsynced writes survive a cut: a sector.
const SECTOR: usize = 512;
/// The page: unsynced writes may also survive a cut in whole pages.
const PAGE: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    File(usize),
    Dir,
}

#[derive(Debug, Clone)]
enum DirOp {
    Insert(OsString, Node),
    Rename(OsString, OsString),
    Remove(OsString),
}

impl DirOp {
    fn apply(&self, m: &mut BTreeMap<OsString, Node>) {
        match self {
            DirOp::Insert(n, node) => {
                m.insert(n.clone(), *node);
            }
            DirOp::Rename(a, b) => {
                if let Some(node) = m.remove(a) {
                    m.insert(b.clone(), node);
                }
            }
            DirOp::Remove(n) => {
                m.remove(n);
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Dir {
    live: BTreeMap<OsString, Node>,
    durable: BTreeMap<OsString, Node>,
    pending: Vec<DirOp>,
}

#[derive(Debug, Clone, Default)]
struct Inode {
    live: Vec<u8>,
    durable: Vec<u8>,
    /// Writes since the last sync, in order.
    pending: Vec<(u64, Vec<u8>)>,
}

/// What ended a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// Power lost before mutating call number N.
    Cut(u64),
    /// Process killed (before call N, or right after the k-th rename).
    Crash(u64),
}

/// When to kill the process.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CrashAt {
    /// Before mutating call number N.
    Call(u64),
    /// Right after the k-th rename into a segment name (`*.seg`, not a
    /// pooled `free-` one): the rename→directory-`fsync` window.
    AfterSegmentRename(u64),
}

struct Inner {
    gen: u64,
    calls: u64,
    segment_renames: u64,
    cut_at: Option<u64>,
    crash_at: Option<CrashAt>,
    event: Option<Event>,
    /// Cut image: (dirs, inodes) as a cut left them.
    image: Option<(BTreeMap<PathBuf, Dir>, Vec<Inode>)>,
    dirs: BTreeMap<PathBuf, Dir>,
    inodes: Vec<Inode>,
    rng: u64,
    /// Print each counted call (`FSPACE_POWER_CUT_TRACE=1`).
    trace: bool,
    /// How long growing a file takes (outside the lock), as a real fill
    /// does: commits of other threads run meanwhile.
    grow_time: std::time::Duration,
}

/// Shared model state; [`Model::storage`] hands out the seam of the
/// current process.
#[derive(Clone)]
pub(crate) struct Model(Arc<Mutex<Inner>>);

/// The seam of one process of the model.
struct Proc {
    m: Model,
    gen: u64,
}

struct File {
    m: Model,
    gen: u64,
    ino: usize,
}

fn eio<T>() -> std::result::Result<T, Errno> {
    Err(Errno::IO)
}

impl Model {
    /// A model holding the directory `root` (durable), nothing else.
    pub(crate) fn new(root: &Path, seed: u64) -> Model {
        let mut dirs = BTreeMap::new();
        dirs.insert(root.to_path_buf(), Dir::default());
        Model(Arc::new(Mutex::new(Inner {
            gen: 1,
            calls: 0,
            segment_renames: 0,
            cut_at: None,
            crash_at: None,
            event: None,
            image: None,
            dirs,
            inodes: vec![],
            rng: seed ^ 0x5DEE_CE66_D1CE_4E5B,
            trace: std::env::var_os("FSPACE_POWER_CUT_TRACE").is_some(),
            grow_time: std::time::Duration::ZERO,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cuts the power before mutating call number `n` (counted from 1 over
    /// the model's whole life).
    pub(crate) fn cut_at(&self, n: u64) {
        self.lock().cut_at = Some(n);
    }

    /// Makes each growth take `t`.
    pub(crate) fn grow_time(&self, t: std::time::Duration) {
        self.lock().grow_time = t;
    }

    /// Kills the process at `when`.
    pub(crate) fn crash_at(&self, when: CrashAt) {
        self.lock().crash_at = Some(when);
    }

    /// The seam for the current process.
    pub(crate) fn storage(&self) -> Arc<dyn Storage> {
        let gen = self.lock().gen;
        Arc::new(Proc {
            m: self.clone(),
            gen,
        })
    }

    /// What the log is told about the filesystem behind the model: a
    /// local one of no known kind, with no policy to ask (segments are
    /// zero-filled).
    pub(crate) fn site() -> Site {
        Site::Given {
            network: false,
            kind: None,
        }
    }

    /// What ended the current process, if anything did.
    pub(crate) fn event(&self) -> Option<Event> {
        self.lock().event
    }

    /// Mutating calls so far.
    pub(crate) fn calls(&self) -> u64 {
        self.lock().calls
    }

    /// Starts the next process after an event: on the live image after a
    /// crash, on the cut image after a cut. Calls of earlier processes
    /// keep failing.
    pub(crate) fn restart(&self) {
        let mut m = self.lock();
        if let Some((dirs, inodes)) = m.image.take() {
            m.dirs = dirs;
            m.inodes = inodes;
        }
        m.event = None;
        m.gen += 1;
    }
}

impl Inner {
    fn rand(&mut self) -> u64 {
        // splitmix64
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.rand() % n
        }
    }

    /// Refuses calls of a dead or earlier process.
    fn alive(&self, gen: u64) -> std::result::Result<(), Errno> {
        if gen != self.gen || self.event.is_some() {
            return eio();
        }
        Ok(())
    }

    /// Counts a mutating call; a cut or crash due before it happens now,
    /// and the call fails.
    fn count(&mut self, gen: u64, what: std::fmt::Arguments<'_>) -> std::result::Result<(), Errno> {
        self.alive(gen)?;
        self.calls += 1;
        if self.trace {
            eprintln!("model: call {} (process {gen}): {what}", self.calls);
        }
        if self.cut_at == Some(self.calls) {
            self.cut();
            self.event = Some(Event::Cut(self.calls));
            return eio();
        }
        if let Some(CrashAt::Call(n)) = self.crash_at {
            if n == self.calls {
                self.event = Some(Event::Crash(self.calls));
                return eio();
            }
        }
        Ok(())
    }

    /// Takes the image a power loss leaves now.
    fn cut(&mut self) {
        if self.trace {
            eprintln!("model: power cut before call {}", self.calls);
        }
        // Which unsynced writes reach the device: none, all, each sector
        // by chance (torn pages), each page by chance, or a prefix of each
        // write (in sectors).
        let mode = self.below(5);
        let unit = if mode == 3 { PAGE } else { SECTOR };
        let mut inodes = self.inodes.clone();
        for ino in &mut inodes {
            let mut img = ino.durable.clone();
            for (off, data) in std::mem::take(&mut ino.pending) {
                let mut pos = 0usize;
                let prefix = off as usize + self.below(data.len() as u64 + 1) as usize;
                while pos < data.len() {
                    let abs = off as usize + pos;
                    let end = ((abs / unit + 1) * unit - off as usize).min(data.len());
                    let keep = match mode {
                        0 => false,
                        1 => true,
                        4 => abs + (end - pos) <= prefix.next_multiple_of(SECTOR),
                        _ => self.below(2) == 0,
                    };
                    if keep {
                        grow_zeroed(&mut img, abs + (end - pos));
                        img[abs..abs + (end - pos)].copy_from_slice(&data[pos..end]);
                    }
                    pos = end;
                }
            }
            ino.live = img.clone();
            ino.durable = img;
        }
        let mut dirs = self.dirs.clone();
        for d in dirs.values_mut() {
            let keep = self.below(d.pending.len() as u64 + 1) as usize;
            let mut img = d.durable.clone();
            for op in &d.pending[..keep] {
                op.apply(&mut img);
            }
            d.live = img.clone();
            d.durable = img;
            d.pending.clear();
        }
        // A directory whose own entry did not survive is gone, with all
        // below it.
        let paths: Vec<PathBuf> = dirs.keys().cloned().collect();
        for p in paths {
            if !reachable(&dirs, &p) {
                dirs.remove(&p);
            }
        }
        self.image = Some((dirs, inodes));
    }

    fn split<'a>(&self, path: &'a Path) -> std::result::Result<(PathBuf, &'a OsStr), Errno> {
        let parent = path.parent().ok_or(Errno::INVAL)?;
        let name = path.file_name().ok_or(Errno::INVAL)?;
        if !self.dirs.contains_key(parent) {
            return Err(Errno::NOENT);
        }
        Ok((parent.to_path_buf(), name))
    }

    fn lookup(&self, path: &Path) -> std::result::Result<Node, Errno> {
        let (parent, name) = self.split(path)?;
        self.dirs[&parent]
            .live
            .get(name)
            .copied()
            .ok_or(Errno::NOENT)
    }

    fn change(&mut self, dir: &Path, op: DirOp) {
        if let Some(d) = self.dirs.get_mut(dir) {
            op.apply(&mut d.live);
            d.pending.push(op);
        }
    }

    fn write(&mut self, ino: usize, off: u64, data: &[u8]) {
        let f = &mut self.inodes[ino];
        let end = off as usize + data.len();
        grow_zeroed(&mut f.live, end);
        f.live[off as usize..end].copy_from_slice(data);
        f.pending.push((off, data.to_vec()));
    }

    /// A write that is durable when it returns (`RWF_DSYNC`): these bytes
    /// only. Older unsynced writes over the same bytes are dropped from the
    /// pending list (the device holds the newer bytes there; a cut must not
    /// bring the older ones back); elsewhere they stay pending.
    fn write_durable(&mut self, ino: usize, off: u64, data: &[u8]) {
        let f = &mut self.inodes[ino];
        let (start, end) = (off as usize, off as usize + data.len());
        grow_zeroed(&mut f.live, end);
        f.live[start..end].copy_from_slice(data);
        let mut kept = Vec::with_capacity(f.pending.len());
        for (o, d) in std::mem::take(&mut f.pending) {
            let (ps, pe) = (o as usize, o as usize + d.len());
            if pe <= start || ps >= end {
                kept.push((o, d));
                continue;
            }
            if ps < start {
                kept.push((o, d[..start - ps].to_vec()));
            }
            if pe > end {
                kept.push((end as u64, d[end - ps..].to_vec()));
            }
        }
        f.pending = kept;
        grow_zeroed(&mut f.durable, end);
        f.durable[start..end].copy_from_slice(data);
    }

    fn sync(&mut self, ino: usize) {
        let f = &mut self.inodes[ino];
        f.durable = f.live.clone();
        f.pending.clear();
    }
}

fn reachable(dirs: &BTreeMap<PathBuf, Dir>, p: &Path) -> bool {
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => match dirs.get(parent) {
            Some(d) => d.live.get(name) == Some(&Node::Dir) && reachable(dirs, parent),
            // The model's root.
            None => !dirs.keys().any(|k| k.as_path() != p && p.starts_with(k)),
        },
        _ => true,
    }
}

impl Storage for Proc {
    fn create_dir(&self, dir: &Path) -> std::result::Result<bool, Errno> {
        let mut m = self.m.lock();
        m.alive(self.gen)?;
        if m.dirs.contains_key(dir) || m.lookup(dir).is_ok() {
            return Ok(false);
        }
        m.count(self.gen, format_args!("mkdir {}", dir.display()))?;
        let (parent, name) = m.split(dir)?;
        m.change(&parent, DirOp::Insert(name.to_owned(), Node::Dir));
        m.dirs.insert(dir.to_path_buf(), Dir::default());
        Ok(true)
    }

    fn dir_kind(&self, path: &Path) -> std::result::Result<Option<&'static str>, Errno> {
        let m = self.m.lock();
        m.alive(self.gen)?;
        if m.dirs.contains_key(path) {
            return Ok(None);
        }
        m.lookup(path).map(|_| Some("regular file"))
    }

    fn lock(&self, path: &Path) -> std::result::Result<Box<dyn Send + Sync>, Errno> {
        // One process at a time by construction; the file is created as
        // the real one would be.
        let mut m = self.m.lock();
        m.alive(self.gen)?;
        if m.lookup(path).is_err() {
            m.count(self.gen, format_args!("create {}", path.display()))?;
            let (parent, name) = m.split(path)?;
            m.inodes.push(Inode::default());
            let ino = m.inodes.len() - 1;
            m.change(&parent, DirOp::Insert(name.to_owned(), Node::File(ino)));
        }
        Ok(Box::new(()))
    }

    fn list(&self, dir: &Path) -> std::result::Result<Vec<Entry>, Errno> {
        let m = self.m.lock();
        m.alive(self.gen)?;
        let d = m.dirs.get(dir).ok_or(Errno::NOENT)?;
        Ok(d.live
            .iter()
            .map(|(n, node)| Entry {
                name: n.clone(),
                is_file: matches!(node, Node::File(_)),
            })
            .collect())
    }

    fn open(
        &self,
        path: &Path,
        mode: OpenMode,
    ) -> std::result::Result<Box<dyn SegmentFile>, Errno> {
        let mut m = self.m.lock();
        m.alive(self.gen)?;
        let ino = match (m.lookup(path), mode) {
            (Ok(_), OpenMode::CreateNew) => return Err(Errno::EXIST),
            (Ok(Node::File(ino)), _) => ino,
            (Ok(Node::Dir), _) => return Err(Errno::ISDIR),
            (Err(e), OpenMode::CreateNew) if e == Errno::NOENT => {
                m.count(self.gen, format_args!("create {}", path.display()))?;
                let (parent, name) = m.split(path)?;
                m.inodes.push(Inode::default());
                let ino = m.inodes.len() - 1;
                m.change(&parent, DirOp::Insert(name.to_owned(), Node::File(ino)));
                ino
            }
            (Err(e), _) => return Err(e),
        };
        Ok(Box::new(File {
            m: self.m.clone(),
            gen: self.gen,
            ino,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> std::result::Result<(), Errno> {
        let mut m = self.m.lock();
        m.alive(self.gen)?;
        m.lookup(from)?;
        let (dir, a) = m.split(from)?;
        let (dir2, b) = m.split(to)?;
        if dir != dir2 {
            return Err(Errno::XDEV);
        }
        m.count(
            self.gen,
            format_args!("rename {} -> {}", from.display(), to.display()),
        )?;
        m.change(&dir, DirOp::Rename(a.to_owned(), b.to_owned()));
        let name = b.to_string_lossy();
        if name.ends_with(".seg") && !name.starts_with(FREE_PREFIX) {
            m.segment_renames += 1;
            if let Some(CrashAt::AfterSegmentRename(k)) = m.crash_at {
                if k == m.segment_renames {
                    // The rename happened; the process dies before its
                    // next step.
                    m.event = Some(Event::Crash(m.calls));
                }
            }
        }
        Ok(())
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<Option<Note>> {
        let exists = self.m.lock().lookup(to).is_ok();
        if exists {
            return Err(Error::io("rename", to, None, Errno::EXIST));
        }
        self.rename(from, to)
            .map_err(|e| Error::io("rename", to, None, e))?;
        Ok(None)
    }

    fn unlink(&self, path: &Path) -> std::result::Result<(), Errno> {
        let mut m = self.m.lock();
        m.alive(self.gen)?;
        if m.lookup(path)? == Node::Dir {
            return Err(Errno::ISDIR);
        }
        m.count(self.gen, format_args!("unlink {}", path.display()))?;
        let (dir, name) = m.split(path)?;
        m.change(&dir, DirOp::Remove(name.to_owned()));
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> std::result::Result<(), (&'static str, Errno)> {
        let mut m = self.m.lock();
        m.alive(self.gen).map_err(|e| ("open", e))?;
        if !m.dirs.contains_key(dir) {
            return Err(("open", Errno::NOENT));
        }
        m.count(self.gen, format_args!("fsync dir {}", dir.display()))
            .map_err(|e| ("fsync", e))?;
        if let Some(d) = m.dirs.get_mut(dir) {
            d.durable = d.live.clone();
            d.pending.clear();
        }
        Ok(())
    }
}

impl SegmentFile for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::result::Result<usize, Errno> {
        let m = self.m.lock();
        m.alive(self.gen)?;
        let data = &m.inodes[self.ino].live;
        let start = (offset as usize).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn write_at(&self, bufs: &[IoSlice<'_>], offset: u64) -> std::result::Result<usize, Errno> {
        let mut m = self.m.lock();
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        m.count(
            self.gen,
            format_args!("pwrite inode {} {}+{len}", self.ino, offset),
        )?;
        let mut off = offset;
        for b in bufs {
            m.write(self.ino, off, b);
            off += b.len() as u64;
        }
        Ok((off - offset) as usize)
    }

    fn write_at_dsync(
        &self,
        bufs: &[IoSlice<'_>],
        offset: u64,
    ) -> std::result::Result<usize, Errno> {
        // Two steps, so that a cut can land inside the call: the bytes are
        // written (pending: any subset of their sectors may survive a cut
        // now), then durable when the call returns.
        let mut m = self.m.lock();
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        m.count(
            self.gen,
            format_args!(
                "pwritev2(RWF_DSYNC) inode {} {}+{len}: write",
                self.ino, offset
            ),
        )?;
        let mut off = offset;
        for b in bufs {
            m.write(self.ino, off, b);
            off += b.len() as u64;
        }
        m.count(
            self.gen,
            format_args!(
                "pwritev2(RWF_DSYNC) inode {} {}+{len}: durable",
                self.ino, offset
            ),
        )?;
        let mut off = offset;
        for b in bufs {
            m.write_durable(self.ino, off, b);
            off += b.len() as u64;
        }
        Ok((off - offset) as usize)
    }

    fn fdatasync(&self) -> std::result::Result<(), Errno> {
        let mut m = self.m.lock();
        m.count(self.gen, format_args!("fdatasync inode {}", self.ino))?;
        m.sync(self.ino);
        Ok(())
    }

    fn fsync(&self) -> std::result::Result<(), Errno> {
        self.fdatasync()
    }

    fn stat(&self) -> std::result::Result<(Option<&'static str>, u64), Errno> {
        let m = self.m.lock();
        m.alive(self.gen)?;
        Ok((None, m.inodes[self.ino].live.len() as u64))
    }

    fn set_direct(&self, _on: bool) -> std::result::Result<(), Errno> {
        Ok(())
    }

    fn grow(
        &self,
        path: &Path,
        _probe_path: &Path,
        target: u64,
        opts: &GrowOptions<'_>,
    ) -> Result<Grown> {
        let t = self.m.lock().grow_time;
        if !t.is_zero() {
            std::thread::sleep(t);
        }
        let mut m = self.m.lock();
        let len = m.inodes[self.ino].live.len() as u64;
        if len < target {
            m.count(
                self.gen,
                format_args!("zero-fill inode {} {len}..{target}", self.ino),
            )
            .map_err(|e| Error::io("pwritev", path, Some(len..target), e))?;
            m.write(self.ino, len, &vec![0u8; (target - len) as usize]);
        }
        if opts.sync {
            m.count(self.gen, format_args!("fdatasync inode {}", self.ino))
                .map_err(|e| Error::io("fdatasync", path, None, e))?;
            m.sync(self.ino);
        }
        Ok(Grown {
            strategy: Strategy::ZeroFill,
            fallbacks: vec![],
        })
    }
}

/// Grows `v` to `len` bytes with zeros, by one copy of zeroed memory: a
/// debug build's `Vec::resize` writes byte by byte, and was about half of
/// the power-cut test's time (perf, 1,500 cuts).
fn grow_zeroed(v: &mut Vec<u8>, len: usize) {
    if v.len() < len {
        v.extend_from_slice(&vec![0u8; len - v.len()]);
    }
}
