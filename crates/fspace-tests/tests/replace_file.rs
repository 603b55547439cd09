//! `fspace::replace_file` on the filesystem matrix: the new contents in
//! place with the mode asked, no temporary left; a failed rename leaves the
//! old file and no temporary; bad input names the operation and the path.

use fspace_test_kit as common;
use std::os::unix::fs::PermissionsExt;

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

common::per_fs! {
    /// Replaces an existing file and creates a missing one, whole, leaving
    /// nothing else in the directory.
    fn replaces_and_creates_whole(fs) {
        let dir = fs.tempdir();
        let p = dir.path().join("fspace.prom");
        std::fs::write(&p, "old\n").unwrap();
        fspace::replace_file(&p, b"new\n", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n", "{}", fs.name);
        let q = dir.path().join("fresh.cnf");
        let big = common::pattern(7, 3 << 20);
        fspace::replace_file(&q, &big, 0o600).unwrap();
        assert_eq!(std::fs::read(&q).unwrap(), big, "{}", fs.name);
        if !fs.is(&["sshfs"]) {
            let mode = std::fs::metadata(&q).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode & !0o600, 0, "{}: mode {mode:o}", fs.name);
        }
        assert_eq!(names(dir.path()), ["fresh.cnf", "fspace.prom"], "{}", fs.name);
    }
}

common::per_fs! {
    /// A rename that fails (a non-empty directory in the file's place)
    /// leaves what was there and no temporary; the error names the rename
    /// and the path and keeps its errno.
    fn a_failed_rename_changes_nothing(fs) {
        let dir = fs.tempdir();
        let p = dir.path().join("fspace.prom");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("keep"), "old").unwrap();
        let e = fspace::replace_file(&p, b"new\n", 0o644).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("rename") && msg.contains("fspace.prom"), "{}: {msg}", fs.name);
        assert!(e.raw_os_error().is_some(), "{}: {msg}", fs.name);
        assert_eq!(std::fs::read_to_string(p.join("keep")).unwrap(), "old");
        assert_eq!(names(dir.path()), ["fspace.prom"], "{}", fs.name);
    }
}

#[test]
fn a_missing_directory_or_no_file_name_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let e = fspace::replace_file(d.path().join("no/such/dir/f"), b"x", 0o644).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(2), "{e}");
    assert!(e.to_string().contains("no/such/dir/f"), "{e}");
    let e = fspace::replace_file("/", b"x", 0o644).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(22), "{e}");
}
