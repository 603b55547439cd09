//! The file `--prometheus FILE` names: refused before anything is
//! measured where it could not be written, and replaced atomically, as
//! node_exporter's textfile collector needs.

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

/// Replaces `path` with `text` atomically, as the textfile collector
/// needs (it may read at any moment): the library's
/// [`fspace::replace_file`] (a temporary name in the same directory,
/// hidden and not `*.prom`, so the collector skips it; fsynced, renamed
/// over `path`, the directory fsynced). A reader sees the old file or the
/// new one, whole; after a power cut the same holds.
pub(in crate::probe) fn write(path: &Path, text: &str) -> fspace::Result<()> {
    fspace::replace_file(path, text.as_bytes(), 0o644)
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
}
