//! A recorded run: the manifest (`trace.json`), the initial state of the
//! directory (`initial/`) and the operations (`ops.bin`), read into typed
//! operations with paths relative to the directory.

use super::raw::{self, RawRecord};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The manifest's `format`: the trace format this library reads and writes.
pub const TRACE_FORMAT: &str = "fspace-crashtest-trace/1";

/// `trace.json`: what was recorded, where, and what the directory held
/// before the program started.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// [`TRACE_FORMAT`].
    pub format: String,
    /// The directory recorded (canonical, absolute).
    pub root: PathBuf,
    /// The program and its arguments.
    pub program: Vec<String>,
    /// When the recording started, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The program's exit status, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the program, when one did.
    pub signal: Option<i32>,
    /// The filesystem under the directory, as fspace names it (`ext4`, ...).
    pub filesystem: String,
    /// `st_dev` of the directory: operations on other filesystems below it
    /// are not modelled.
    pub dev: u64,
    /// Whether the device under the directory has a volatile write cache
    /// (`None`: not known, e.g. tmpfs or a network filesystem).
    pub volatile_cache: Option<bool>,
    /// Whether `fallocate(2)` works on the directory's filesystem (`None`:
    /// not measured): where it does not, glibc's `posix_fallocate` writes
    /// a byte per block.
    #[serde(default)]
    pub fallocate: Option<bool>,
    /// The entries of the directory when the recording started, parents
    /// before children; their contents are under `initial/`.
    pub initial: Vec<InitialEntry>,
}

/// One entry of the directory when the recording started.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct InitialEntry {
    /// Relative to the root; empty for the root itself.
    pub path: PathBuf,
    /// What it is.
    pub kind: EntryKind,
    /// Its inode number then.
    pub ino: u64,
    /// Its size in bytes (files).
    pub size: u64,
    /// A symbolic link's target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
}

/// The kind of a directory entry.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
}

/// Where an acknowledgement went.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AckChannel {
    /// File descriptor 1.
    Stdout,
    /// File descriptor 2.
    Stderr,
    /// A pipe or FIFO.
    Pipe,
    /// A socket.
    Socket,
    /// A terminal or another character device.
    CharDevice,
}

/// How a write asked to be made durable by itself.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct WriteFlags {
    /// `O_SYNC`/`O_DSYNC` on the descriptor or `RWF_SYNC`/`RWF_DSYNC`.
    pub sync: bool,
    /// `O_DIRECT`.
    pub direct: bool,
    /// `RWF_ATOMIC`.
    pub atomic: bool,
    /// `O_APPEND`.
    pub append: bool,
}

/// What an operation did. Paths are relative to the recorded directory;
/// `None` is a path outside it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "op", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum OpKind {
    /// open/openat/creat.
    Open {
        /// The path opened.
        path: PathBuf,
        /// The descriptor.
        fd: i32,
        /// The inode opened.
        ino: u64,
        /// The open flags.
        flags: i32,
        /// The file did not exist before (`O_CREAT`).
        created: bool,
        /// `O_TMPFILE`: an inode without a name.
        tmpfile: bool,
    },
    /// close.
    Close {
        /// The descriptor.
        fd: i32,
        /// Its inode.
        ino: u64,
    },
    /// write/pwrite/pwritev/pwritev2.
    Write {
        /// The inode written.
        ino: u64,
        /// Where the bytes went.
        offset: u64,
        /// The bytes written.
        #[serde(skip)]
        data: Vec<u8>,
        /// Their count.
        len: u64,
        /// How the write asked to be durable.
        flags: WriteFlags,
    },
    /// ftruncate/truncate.
    Truncate {
        /// The inode.
        ino: u64,
        /// The new size.
        len: u64,
    },
    /// fallocate.
    Fallocate {
        /// The inode.
        ino: u64,
        /// `FALLOC_FL_*`.
        mode: u32,
        /// The range's start.
        offset: u64,
        /// The range's length.
        len: u64,
    },
    /// posix_fallocate.
    PosixFallocate {
        /// The inode.
        ino: u64,
        /// The range's start.
        offset: u64,
        /// The range's length.
        len: u64,
        /// The filesystem's magic (`statfs.f_type`).
        fs_magic: u64,
    },
    /// rename/renameat/renameat2.
    Rename {
        /// The old name.
        from: Option<PathBuf>,
        /// The new name.
        to: Option<PathBuf>,
        /// The inode renamed.
        ino: u64,
        /// The inode the new name held before, if any.
        replaced: Option<u64>,
        /// `RENAME_*`.
        flags: u32,
    },
    /// link/linkat.
    Link {
        /// The existing name (`None` for `AT_EMPTY_PATH` or outside).
        from: Option<PathBuf>,
        /// The new name.
        to: PathBuf,
        /// The inode.
        ino: u64,
    },
    /// unlink.
    Unlink {
        /// The name removed.
        path: PathBuf,
        /// Its inode.
        ino: u64,
    },
    /// mkdir.
    Mkdir {
        /// The new directory.
        path: PathBuf,
        /// Its inode.
        ino: u64,
    },
    /// rmdir.
    Rmdir {
        /// The directory removed.
        path: PathBuf,
        /// Its inode.
        ino: u64,
    },
    /// fsync (`data_only` false) or fdatasync (true).
    Fsync {
        /// The inode (a file or a directory).
        ino: u64,
        /// fdatasync.
        data_only: bool,
    },
    /// sync_file_range: starts writeback; makes nothing durable.
    SyncFileRange {
        /// The inode.
        ino: u64,
        /// The range's start.
        offset: u64,
        /// The range's length (0: to the end).
        len: u64,
        /// `SYNC_FILE_RANGE_*`.
        flags: u32,
    },
    /// syncfs on the directory's filesystem.
    Syncfs,
    /// sync.
    Sync,
    /// Bytes the program told the world (an acknowledgement).
    Ack {
        /// Where they went.
        channel: AckChannel,
        /// The bytes (at most 64 KiB of one call).
        #[serde(skip)]
        data: Vec<u8>,
        /// How many bytes the call wrote.
        len: u64,
    },
    /// Something the recorder cannot follow (`mmap-shared-writable`,
    /// `io_uring`, `raw-syscall`, `stdio-stream`, `copy-range`, ...).
    Limit {
        /// Its short name.
        what: String,
        /// What it concerned.
        detail: String,
    },
}

/// One recorded operation.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Op {
    /// Its number in the trace, from 1: what stories and findings cite.
    pub number: usize,
    /// The process that made it.
    pub pid: u32,
    /// Monotonic clock after it returned, nanoseconds.
    pub t_ns: u64,
    /// Its errno when it failed.
    pub errno: Option<i32>,
    /// What it did.
    #[serde(flatten)]
    pub kind: OpKind,
}

/// A recorded run, loaded.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The trace directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The operations, in the order they returned.
    pub ops: Vec<Op>,
    /// The processes the preload started in (their pids), in order: none
    /// means the program was not recorded at all.
    pub processes: Vec<u32>,
}

/// The kinds of raw records (the spec's table).
mod kind {
    pub const OPEN: u16 = 1;
    pub const CLOSE: u16 = 2;
    pub const WRITE: u16 = 3;
    pub const TRUNCATE: u16 = 4;
    pub const FALLOCATE: u16 = 5;
    pub const POSIX_FALLOCATE: u16 = 6;
    pub const RENAME: u16 = 7;
    pub const LINK: u16 = 8;
    pub const UNLINK: u16 = 9;
    pub const MKDIR: u16 = 10;
    pub const RMDIR: u16 = 11;
    pub const FSYNC: u16 = 12;
    pub const FDATASYNC: u16 = 13;
    pub const SYNC_FILE_RANGE: u16 = 14;
    pub const SYNCFS: u16 = 15;
    pub const SYNC: u16 = 16;
    pub const ACK: u16 = 17;
    pub const LIMIT: u16 = 18;
    pub const START: u16 = 19;
    pub const INHERITED: u16 = 20;
    pub const DUP: u16 = 21;
}

const O_APPEND: u64 = 0o2000;
const O_DSYNC: u64 = 0o10000;
const O_DIRECT: u64 = 0o40000;
const O_TMPFILE_BITS: u64 = 0o20200000;
const RWF_DSYNC: u64 = 0x2;
const RWF_SYNC: u64 = 0x4;
const RWF_ATOMIC: u64 = 0x40;

impl Trace {
    /// Reads the trace in `dir` (written by `fspace crashtest record`).
    pub fn load(dir: impl AsRef<Path>) -> Result<Trace> {
        let dir = dir.as_ref();
        let mpath = dir.join("trace.json");
        let text = std::fs::read_to_string(&mpath)
            .map_err(|e| Error::from_io("read crashtest trace", &mpath, None, e))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| Error::Corrupt {
            op: "read crashtest trace",
            path: mpath.clone(),
            offset: 0,
            message: format!("not a trace manifest: {e}"),
        })?;
        if manifest.format != TRACE_FORMAT {
            return Err(Error::refused(
                "read crashtest trace",
                &mpath,
                rustix::io::Errno::PROTONOSUPPORT.raw_os_error(),
                format!(
                    "format {:?}; this fspace reads {TRACE_FORMAT:?}",
                    manifest.format
                ),
            ));
        }
        let opath = dir.join("ops.bin");
        let bytes = std::fs::read(&opath)
            .map_err(|e| Error::from_io("read crashtest trace", &opath, None, e))?;
        let records = raw::decode(&bytes, &opath)?;
        let mut processes: Vec<u32> = records
            .iter()
            .filter(|r| r.kind == kind::START)
            .map(|r| r.pid)
            .collect();
        processes.dedup();
        let mut seen = std::collections::HashSet::new();
        processes.retain(|p| seen.insert(*p));
        let ops = convert(&manifest, records);
        Ok(Trace {
            dir: dir.to_path_buf(),
            manifest,
            ops,
            processes,
        })
    }

    /// Where the initial copy of the directory is.
    pub fn initial_dir(&self) -> PathBuf {
        self.dir.join("initial")
    }

    /// What the program wrote to stdout in the first `n` operations: the
    /// acknowledgements a crash after operation `n` must honour.
    pub fn stdout_before(&self, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for op in self.ops.iter().take(n) {
            if let OpKind::Ack {
                channel: AckChannel::Stdout,
                data,
                ..
            } = &op.kind
            {
                out.extend_from_slice(data);
            }
        }
        out
    }

    /// The limits the recorder met: what it could not see.
    pub fn limits(&self) -> Vec<&Op> {
        self.ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Limit { .. }))
            .collect()
    }
}

/// A path from a record, relative to the root; `None` when outside.
fn relative(root: &Path, p: &[u8]) -> Option<PathBuf> {
    let p = Path::new(std::ffi::OsStr::from_bytes(p));
    let rest = p.strip_prefix(root).ok()?;
    Some(rest.to_path_buf())
}

fn convert(m: &Manifest, records: Vec<RawRecord>) -> Vec<Op> {
    let root = m.root.as_path();
    // The status flags of each (pid, fd), from open, dup and inherited
    // records: writes carry them too, this only fills gaps.
    let mut fd_flags: HashMap<(u32, i32), u64> = HashMap::new();
    let mut ops = Vec::with_capacity(records.len());
    for r in records {
        let errno = (r.ret < 0).then_some(r.err);
        let other_fs = r.dev != 0 && r.dev != m.dev;
        let k = match r.kind {
            kind::START | kind::INHERITED | kind::DUP => {
                if r.kind == kind::INHERITED || r.kind == kind::DUP {
                    fd_flags.insert((r.pid, r.fd), r.d);
                }
                continue;
            }
            _ if other_fs && r.kind != kind::ACK && r.kind != kind::LIMIT => OpKind::Limit {
                what: "other-filesystem".into(),
                detail: format!(
                    "{} on a filesystem mounted below the directory (inode {}): not modelled",
                    kind_name(r.kind),
                    r.ino
                ),
            },
            kind::OPEN => {
                let Some(path) = relative(root, &r.path1) else {
                    continue;
                };
                if errno.is_none() {
                    fd_flags.insert((r.pid, r.fd), r.a);
                }
                OpKind::Open {
                    path,
                    fd: r.ret as i32,
                    ino: r.ino,
                    flags: r.a as i32,
                    created: r.c == 1,
                    tmpfile: r.c == 2 || r.a & O_TMPFILE_BITS == O_TMPFILE_BITS,
                }
            }
            kind::CLOSE => OpKind::Close {
                fd: r.fd,
                ino: r.ino,
            },
            kind::WRITE => {
                let status = if r.d != 0 {
                    r.d
                } else {
                    fd_flags.get(&(r.pid, r.fd)).copied().unwrap_or(0)
                };
                OpKind::Write {
                    ino: r.ino,
                    offset: r.a,
                    len: r.data.len() as u64,
                    data: r.data,
                    flags: WriteFlags {
                        sync: status & O_DSYNC != 0 || r.c & (RWF_DSYNC | RWF_SYNC) != 0,
                        direct: status & O_DIRECT != 0,
                        atomic: r.c & RWF_ATOMIC != 0,
                        append: status & O_APPEND != 0,
                    },
                }
            }
            kind::TRUNCATE => OpKind::Truncate {
                ino: r.ino,
                len: r.a,
            },
            kind::FALLOCATE => OpKind::Fallocate {
                ino: r.ino,
                mode: r.a as u32,
                offset: r.b,
                len: r.c,
            },
            kind::POSIX_FALLOCATE => OpKind::PosixFallocate {
                ino: r.ino,
                offset: r.b,
                len: r.c,
                fs_magic: r.d,
            },
            kind::RENAME => OpKind::Rename {
                from: relative(root, &r.path1),
                to: relative(root, &r.path2),
                ino: r.ino,
                replaced: (r.ino2 != 0).then_some(r.ino2),
                flags: r.a as u32,
            },
            kind::LINK => {
                let Some(to) = relative(root, &r.path2) else {
                    continue;
                };
                OpKind::Link {
                    from: if r.path1.is_empty() {
                        None
                    } else {
                        relative(root, &r.path1)
                    },
                    to,
                    ino: r.ino,
                }
            }
            kind::UNLINK | kind::RMDIR | kind::MKDIR => {
                let Some(path) = relative(root, &r.path1) else {
                    continue;
                };
                match r.kind {
                    kind::UNLINK => OpKind::Unlink { path, ino: r.ino },
                    kind::RMDIR => OpKind::Rmdir { path, ino: r.ino },
                    _ => OpKind::Mkdir { path, ino: r.ino },
                }
            }
            kind::FSYNC | kind::FDATASYNC => OpKind::Fsync {
                ino: r.ino,
                data_only: r.kind == kind::FDATASYNC,
            },
            kind::SYNC_FILE_RANGE => OpKind::SyncFileRange {
                ino: r.ino,
                offset: r.a,
                len: r.b,
                flags: r.c as u32,
            },
            kind::SYNCFS => OpKind::Syncfs,
            kind::SYNC => OpKind::Sync,
            kind::ACK => OpKind::Ack {
                channel: match r.a {
                    1 => AckChannel::Stdout,
                    2 => AckChannel::Stderr,
                    3 => AckChannel::Pipe,
                    4 => AckChannel::Socket,
                    _ => AckChannel::CharDevice,
                },
                len: r.b.max(r.data.len() as u64),
                data: r.data,
            },
            kind::LIMIT => OpKind::Limit {
                what: String::from_utf8_lossy(&r.path1).into_owned(),
                detail: String::from_utf8_lossy(&r.path2).into_owned(),
            },
            other => OpKind::Limit {
                what: "unknown-record".into(),
                detail: format!("record kind {other} at byte {} (a newer recorder?)", r.at),
            },
        };
        ops.push(Op {
            number: ops.len() + 1,
            pid: r.pid,
            t_ns: r.t_ns,
            errno,
            kind: k,
        });
    }
    ops
}

fn kind_name(k: u16) -> &'static str {
    match k {
        kind::OPEN => "open",
        kind::CLOSE => "close",
        kind::WRITE => "write",
        kind::TRUNCATE => "truncate",
        kind::FALLOCATE => "fallocate",
        kind::POSIX_FALLOCATE => "posix_fallocate",
        kind::RENAME => "rename",
        kind::LINK => "link",
        kind::UNLINK => "unlink",
        kind::MKDIR => "mkdir",
        kind::RMDIR => "rmdir",
        kind::FSYNC => "fsync",
        kind::FDATASYNC => "fdatasync",
        kind::SYNC_FILE_RANGE => "sync_file_range",
        kind::SYNCFS => "syncfs",
        kind::SYNC => "sync",
        _ => "operation",
    }
}

impl Op {
    /// The operation in a few words, as stories and findings print it:
    /// `write(data.db, 4096..8192)`, `rename(tmp -> data.db)`.
    pub fn describe(&self, names: &dyn Fn(u64) -> String) -> String {
        let p = |p: &Option<PathBuf>| p.as_ref().map_or("(outside)".to_string(), |p| show(p));
        let s = match &self.kind {
            OpKind::Open {
                path,
                created,
                flags,
                ..
            } => {
                if *created {
                    format!("create({})", show(path))
                } else if *flags & 0o1000 != 0 {
                    format!("open({}, O_TRUNC)", show(path))
                } else {
                    format!("open({})", show(path))
                }
            }
            OpKind::Close { ino, .. } => format!("close({})", names(*ino)),
            OpKind::Write {
                ino,
                offset,
                len,
                flags,
                ..
            } => format!(
                "write({}, {}..{}{})",
                names(*ino),
                offset,
                offset + len,
                if flags.sync { ", sync" } else { "" }
            ),
            OpKind::Truncate { ino, len } => format!("truncate({}, {len})", names(*ino)),
            OpKind::Fallocate {
                ino,
                mode,
                offset,
                len,
            } => {
                format!(
                    "fallocate({}, mode {mode:#x}, {offset}..{})",
                    names(*ino),
                    offset + len
                )
            }
            OpKind::PosixFallocate {
                ino, offset, len, ..
            } => {
                format!(
                    "posix_fallocate({}, {offset}..{})",
                    names(*ino),
                    offset + len
                )
            }
            OpKind::Rename { from, to, .. } => format!("rename({} -> {})", p(from), p(to)),
            OpKind::Link { from, to, ino } => format!(
                "link({} -> {})",
                from.as_ref().map_or_else(|| names(*ino), |f| show(f)),
                show(to)
            ),
            OpKind::Unlink { path, .. } => format!("unlink({})", show(path)),
            OpKind::Mkdir { path, .. } => format!("mkdir({})", show(path)),
            OpKind::Rmdir { path, .. } => format!("rmdir({})", show(path)),
            OpKind::Fsync { ino, data_only } => {
                format!(
                    "{}({})",
                    if *data_only { "fdatasync" } else { "fsync" },
                    names(*ino)
                )
            }
            OpKind::SyncFileRange {
                ino, offset, len, ..
            } => {
                format!("sync_file_range({}, {offset}, {len})", names(*ino))
            }
            OpKind::Syncfs => "syncfs".into(),
            OpKind::Sync => "sync".into(),
            OpKind::Ack { channel, data, len } => {
                let text =
                    String::from_utf8_lossy(&data[..data.len().min(40)]).replace('\n', "\\n");
                format!(
                    "ack({}, {len} {}: \"{text}\")",
                    serde_plain(channel),
                    if *len == 1 { "byte" } else { "bytes" }
                )
            }
            OpKind::Limit { what, detail } => format!("LIMIT {what}: {detail}"),
        };
        match self.errno {
            Some(e) => format!(
                "#{} {s} failed: {}",
                self.number,
                std::io::Error::from_raw_os_error(e)
            ),
            None => format!("#{} {s}", self.number),
        }
    }
}

fn serde_plain(c: &AckChannel) -> &'static str {
    match c {
        AckChannel::Stdout => "stdout",
        AckChannel::Stderr => "stderr",
        AckChannel::Pipe => "pipe",
        AckChannel::Socket => "socket",
        AckChannel::CharDevice => "char-device",
    }
}

/// A relative path for people: `.` for the root.
pub(crate) fn show(p: &Path) -> String {
    if p.as_os_str().is_empty() {
        ".".into()
    } else {
        p.display().to_string()
    }
}
