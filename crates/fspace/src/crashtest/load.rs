//! Reading a trace: the manifest, and `ops.bin`'s records turned into
//! typed operations with paths relative to the recorded directory.

use super::raw::{self, RawRecord};
use super::trace::{AckChannel, Manifest, Op, OpKind, Trace, WriteFlags, TRACE_FORMAT};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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
        let (pid, t_ns) = (r.pid, r.t_ns);
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
            _ => match other_kind(r, root) {
                Some(k) => k,
                None => continue,
            },
        };
        ops.push(Op {
            number: ops.len() + 1,
            pid,
            t_ns,
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

/// The operations that need nothing but their record (and the root).
fn other_kind(r: RawRecord, root: &Path) -> Option<OpKind> {
    Some(match r.kind {
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
            let to = relative(root, &r.path2)?;
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
            let path = relative(root, &r.path1)?;
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
    })
}
