//! A recorded run: the manifest (`trace.json`), the initial state of the
//! directory (`initial/`) and the operations (`ops.bin`), read into typed
//! operations with paths relative to the directory.

use serde::{Deserialize, Serialize};
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

impl Trace {
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
