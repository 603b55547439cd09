//! The library's part of a recording: the trace directory, the initial
//! copy of the directory (holes kept) and the manifest. Running the program under the
//! recording preload is the command line's (`fspace crashtest record`).

use super::raw::MAGIC;
use super::trace::{EntryKind, InitialEntry, Manifest, TRACE_FORMAT};
use crate::error::{Error, Result};
use crate::sparse::{copy, CopyOptions};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A trace directory being recorded: made by [`begin`], finished by
/// [`Recording::finish`].
#[derive(Debug)]
pub struct Recording {
    /// The trace directory.
    pub dir: PathBuf,
    /// `ops.bin`, where the preload appends (`FSPACE_CRASHTEST_OPS`).
    pub ops: PathBuf,
    /// The manifest so far.
    pub manifest: Manifest,
}

/// Starts a trace of `root` in `trace_dir`: refuses a `trace_dir` that
/// exists and is not empty, or lies inside `root`; copies `root` to
/// `trace_dir/initial`; creates `ops.bin` with its magic. `filesystem`
/// and `volatile_cache` describe what is under `root`.
pub fn begin(
    root: &Path,
    trace_dir: &Path,
    program: Vec<String>,
    filesystem: String,
    volatile_cache: Option<bool>,
) -> Result<Recording> {
    const OP: &str = "crashtest record";
    let root = std::fs::canonicalize(root).map_err(|e| Error::from_io(OP, root, None, e))?;
    let meta = std::fs::metadata(&root).map_err(|e| Error::from_io(OP, &root, None, e))?;
    if !meta.is_dir() {
        return Err(Error::refused(OP, &root, 20, "--root must be a directory"));
    }
    // Inside the root? Decided before anything is created.
    let mut probe =
        std::path::absolute(trace_dir).map_err(|e| Error::from_io(OP, trace_dir, None, e))?;
    let mut tail = Vec::new();
    while !probe.exists() {
        match (probe.file_name().map(|n| n.to_os_string()), probe.parent()) {
            (Some(n), Some(p)) => {
                tail.push(n);
                probe = p.to_path_buf();
            }
            _ => break,
        }
    }
    let mut resolved = std::fs::canonicalize(&probe).unwrap_or(probe);
    for n in tail.into_iter().rev() {
        resolved.push(n);
    }
    if resolved.starts_with(&root) {
        return Err(Error::refused(
            OP,
            trace_dir,
            22,
            "the trace directory is inside --root: the recording would record itself",
        ));
    }
    match std::fs::read_dir(trace_dir) {
        Ok(mut it) => {
            if it.next().is_some() {
                return Err(Error::refused(
                    OP,
                    trace_dir,
                    17,
                    "the trace directory exists and is not empty; nothing was recorded",
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(trace_dir)
                .map_err(|e| Error::from_io(OP, trace_dir, None, e))?;
        }
        Err(e) => return Err(Error::from_io(OP, trace_dir, None, e)),
    }
    let dir =
        std::fs::canonicalize(trace_dir).map_err(|e| Error::from_io(OP, trace_dir, None, e))?;
    if dir.starts_with(&root) {
        return Err(Error::refused(
            OP,
            &dir,
            22,
            "the trace directory is inside --root: the recording would record itself",
        ));
    }
    let initial_dir = dir.join("initial");
    std::fs::create_dir(&initial_dir).map_err(|e| Error::from_io(OP, &initial_dir, None, e))?;
    let mut initial = vec![InitialEntry {
        path: PathBuf::new(),
        kind: EntryKind::Dir,
        ino: meta.ino(),
        size: 0,
        target: None,
    }];
    copy_tree(&root, &root, &initial_dir, meta.dev(), &mut initial)?;
    let ops = dir.join("ops.bin");
    std::fs::write(&ops, MAGIC).map_err(|e| Error::from_io(OP, &ops, None, e))?;
    let manifest = Manifest {
        format: TRACE_FORMAT.into(),
        root: root.clone(),
        program,
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        exit_code: None,
        signal: None,
        filesystem,
        dev: meta.dev(),
        volatile_cache,
        fallocate: None,
        initial,
    };
    let rec = Recording { dir, ops, manifest };
    rec.write_manifest()?;
    Ok(rec)
}

fn copy_tree(
    root: &Path,
    dir: &Path,
    to: &Path,
    dev: u64,
    out: &mut Vec<InitialEntry>,
) -> Result<()> {
    const OP: &str = "crashtest record: copy the initial state";
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::from_io(OP, dir, None, e))?
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::from_io(OP, dir, None, e))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).map_err(|err| Error::from_io(OP, &p, None, err))?;
        let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
        let target = to.join(&rel);
        if m.dev() != dev {
            // A mount below the root: not modelled, not copied.
            continue;
        }
        let ft = m.file_type();
        if ft.is_dir() {
            std::fs::create_dir(&target).map_err(|err| Error::from_io(OP, &target, None, err))?;
            out.push(InitialEntry {
                path: rel,
                kind: EntryKind::Dir,
                ino: m.ino(),
                size: 0,
                target: None,
            });
            copy_tree(root, &p, to, dev, out)?;
        } else if ft.is_symlink() {
            let t = std::fs::read_link(&p).map_err(|err| Error::from_io(OP, &p, None, err))?;
            out.push(InitialEntry {
                path: rel,
                kind: EntryKind::Symlink,
                ino: m.ino(),
                size: 0,
                target: Some(t),
            });
        } else if ft.is_file() {
            // fspace's own copy: holes stay holes (a database's
            // preallocated file costs the trace nothing), a reflink where
            // the filesystem shares blocks, mode and times kept.
            copy(&p, &target, &CopyOptions::default().preserve(true))?;
            out.push(InitialEntry {
                path: rel,
                kind: EntryKind::File,
                ino: m.ino(),
                size: m.len(),
                target: None,
            });
        }
    }
    Ok(())
}

impl Recording {
    /// Writes `trace.json` (replacing it durably).
    pub fn write_manifest(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.manifest).map_err(|e| {
            Error::refused(
                "crashtest record",
                &self.dir,
                22,
                format!("cannot encode the manifest: {e}"),
            )
        })?;
        crate::durable::replace_file(self.dir.join("trace.json"), text.as_bytes(), 0o644)
    }

    /// Records how the program ended and writes the manifest.
    pub fn finish(mut self, exit_code: Option<i32>, signal: Option<i32>) -> Result<Manifest> {
        self.manifest.exit_code = exit_code;
        self.manifest.signal = signal;
        self.write_manifest()?;
        Ok(self.manifest)
    }
}
