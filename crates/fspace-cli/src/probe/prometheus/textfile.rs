//! The file `--prometheus FILE` names: refused before anything is
//! measured where it could not be written, and replaced atomically, as
//! node_exporter's textfile collector needs.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Refuses a metrics path whose directory is missing or not writable, or
/// that names a directory, before anything is measured.
pub(in crate::probe) fn check_path(p: &Path) -> fspace::Result<()> {
    use rustix::io::Errno;
    let refuse = |errno: Errno, msg: String| {
        fspace::Error::refused("prometheus", p, errno.raw_os_error(), msg)
    };
    if p.is_dir() {
        return Err(refuse(
            Errno::ISDIR,
            "is a directory; give a file name such as fspace.prom".into(),
        ));
    }
    if p.file_name().is_none() {
        return Err(refuse(
            Errno::INVAL,
            "has no file name; give one such as fspace.prom".into(),
        ));
    }
    let dir = parent(p);
    if !dir.is_dir() {
        return Err(refuse(Errno::NOENT, "its directory does not exist".into()));
    }
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    if let Err(e) = accessat(
        CWD,
        &dir,
        Access::WRITE_OK | Access::EXEC_OK,
        AtFlags::EACCESS,
    ) {
        return Err(refuse(
            e,
            format!(
                "cannot create files in {}: {} (the file is replaced by renaming a new one over it)",
                dir.display(),
                std::io::Error::from(e)
            ),
        ));
    }
    Ok(())
}

fn parent(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file removed when dropped, unless renamed into place.
struct Temp {
    path: PathBuf,
    armed: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The prefix of the temporary names `write` uses for `name`:
/// `.NAME.tmp-`, which the textfile collector skips (it reads `*.prom`).
fn temp_prefix(name: &str) -> String {
    format!(".{name}.tmp-")
}

/// Removes temporary files a killed writer of `name` left in `dir`: those
/// whose process (the number after the prefix) no longer exists.
fn remove_stale(dir: &Path, name: &str) {
    let prefix = temp_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name();
        let Some(pid) = n.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Replaces `path` with `text` atomically, as the textfile collector
/// needs (it may read at any moment): written to a temporary name in the
/// same directory (`.NAME.tmp-PID`, skipped by the collector), fsynced,
/// renamed over `path`, the directory fsynced. A reader sees the old file
/// or the new one, whole; after a power cut the same holds. On any error
/// the temporary file is removed and `path` is left as it was.
pub(in crate::probe) fn write(path: &Path, text: &str) -> fspace::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            fspace::Error::refused(
                "prometheus",
                path,
                rustix::io::Errno::INVAL.raw_os_error(),
                "has no file name",
            )
        })?;
    let dir = parent(path);
    remove_stale(&dir, &name);
    let tmp = Temp {
        path: dir.join(format!("{}{}", temp_prefix(&name), std::process::id())),
        armed: false,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp.path)
        .map_err(|e| fspace::Error::from_io("create", &tmp.path, None, e))?;
    let mut tmp = tmp;
    tmp.armed = true;
    file.write_all(text.as_bytes())
        .map_err(|e| fspace::Error::from_io("write", &tmp.path, None, e))?;
    // The data must be on disk before the name points at it, or a power
    // cut could leave an empty FILE where the old one was.
    file.sync_all()
        .map_err(|e| fspace::Error::from_io("fsync", &tmp.path, None, e))?;
    drop(file);
    std::fs::rename(&tmp.path, path)
        .map_err(|e| fspace::Error::from_io("rename", path, None, e))?;
    tmp.armed = false;
    // The rename itself is durable once the directory is synced.
    std::fs::File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| fspace::Error::from_io("fsync", &dir, None, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_the_file_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fspace.prom");
        std::fs::write(&p, "old\n").unwrap();
        write(&p, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["fspace.prom"]);
    }

    #[test]
    fn a_failed_rename_keeps_the_old_file_and_removes_the_temporary() {
        let d = tempfile::tempdir().unwrap();
        // A non-empty directory in FILE's place: the rename fails.
        let p = d.path().join("fspace.prom");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("keep"), "old").unwrap();
        let e = write(&p, "new\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("rename") && msg.contains("fspace.prom"),
            "{msg}"
        );
        assert!(e.raw_os_error().is_some(), "{msg}");
        assert_eq!(std::fs::read_to_string(p.join("keep")).unwrap(), "old");
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["fspace.prom"]);
    }

    #[test]
    fn stale_temporaries_of_dead_writers_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fspace.prom");
        // PIDs above pid_max's largest value never exist.
        let dead = d.path().join(".fspace.prom.tmp-4294967294");
        let other = d.path().join(".other.prom.tmp-4294967294");
        std::fs::write(&dead, "x").unwrap();
        std::fs::write(&other, "x").unwrap();
        write(&p, "new\n").unwrap();
        assert!(!dead.exists());
        assert!(other.exists(), "another file's temporary was removed");
    }
}
