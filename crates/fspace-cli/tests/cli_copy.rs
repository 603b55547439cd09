//! `fspace copy` and `fspace dig`: reports, bad input, read-only mounts,
//! Ctrl-C, names that are not UTF-8.

mod cli_common;
use fspace_test_kit as common;

use cli_common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

common::per_fs! {
    /// `fspace copy` and `fspace dig`: human output, JSON, and the copy's bytes.
    fn copy_and_dig_report_what_they_did(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let src = d.join("image");
        {
            use std::os::unix::fs::FileExt;
            let f = std::fs::File::create(&src).unwrap();
            f.write_all_at(&[5u8; 100_000], 0).unwrap();
            f.write_all_at(&[0u8; 1 << 20], 100_000).unwrap();
            f.write_all_at(&[6u8; 5000], 3 << 20).unwrap();
        }
        let o = fspace(&["copy", "--sparse", "always", &s(&src), &s(&d.join("c1"))]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        for key in [
            "copied:",
            "method:",
            "data:",
            "holes:",
            "allocated:",
            "syscalls:",
        ] {
            assert!(out.contains(key), "{}: no {key} in {out}", fs.name);
        }
        assert!(out.contains("read + sparse write"), "{out}");
        assert_eq!(
            std::fs::read(&src).unwrap(),
            std::fs::read(d.join("c1")).unwrap()
        );
        let o = fspace(&["copy", "--json", &s(&src), &s(&d.join("c2"))]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        for key in [
            "src",
            "dst",
            "len",
            "method",
            "fallbacks",
            "bytes_cloned",
            "bytes_offloaded",
            "bytes_copied",
            "holes",
            "hole_bytes",
            "dst_allocated",
            "syscalls",
            "write_syscalls",
            "elapsed_ms",
        ] {
            assert!(v.get(key).is_some(), "{}: JSON lacks {key}: {v}", fs.name);
        }
        assert_eq!(v["len"], (3 << 20) + 5000);
        assert_eq!(
            std::fs::read(&src).unwrap(),
            std::fs::read(d.join("c2")).unwrap()
        );
        // Into a directory, under the source's name.
        std::fs::create_dir(d.join("into")).unwrap();
        let o = fspace(&["copy", &s(&src), &s(&d.join("into"))]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(d.join("into/image").exists());
        // dig: bytes unchanged; JSON and text. The default copy already made
        // the zero runs holes (the source looks sparse), so dig a copy that
        // wrote them.
        let o = fspace(&["copy", "--force", "--sparse", "never", &s(&src), &s(&d.join("c2"))]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let before = std::fs::read(d.join("c2")).unwrap();
        let o = fspace(&["dig", "--json", &s(&d.join("c2"))]);
        if fs.name == "sshfs" {
            assert_eq!(o.status.code(), Some(1), "{}", text(&o));
            let v = json(&o);
            assert_eq!(v["errno"], 95, "{v}");
            assert!(has(&text(&o), "cannot punch holes"), "{}", text(&o));
        } else {
            assert!(o.status.success(), "{}: {}", fs.name, text(&o));
            let v = json(&o);
            for key in [
                "holes_punched",
                "bytes_punched",
                "bytes_freed",
                "allocated_after",
            ] {
                assert!(v.get(key).is_some(), "{}: JSON lacks {key}: {v}", fs.name);
            }
            assert!(
                v["bytes_punched"].as_u64().unwrap() >= 1 << 19,
                "{}: {v}",
                fs.name
            );
            let o = fspace(&["dig", &s(&d.join("c2"))]);
            assert!(o.status.success(), "{}", text(&o));
            assert!(String::from_utf8_lossy(&o.stdout).contains("punched:"));
        }
        assert_eq!(std::fs::read(d.join("c2")).unwrap(), before);
        assert!(temp_names(d).is_empty());
    }
}

common::per_fs! {
    /// Bad input to `fspace copy`: exit 1, the operation and the path named,
    /// nothing created or changed.
    fn copy_bad_input_fails_cleanly(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let src = d.join("src");
        write_random(&src, 300_000, 3);
        let content = std::fs::read(&src).unwrap();
        let out = s(&d.join("out"));
        expect_failure(
            &["copy", &s(&d.join("missing")), &out],
            &["open(", &s(&d.join("missing")), "No such file"],
        );
        expect_failure(
            &["copy", &s(d), &out],
            &["is a directory, not a regular file"],
        );
        expect_failure(
            &["copy", "/dev/null", &out],
            &["/dev/null", "is a character device"],
        );
        if fs.name != "sshfs" {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                d.join("fifo"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
            // A FIFO is read to its end (it used to be refused).
            let fifo = d.join("fifo");
            let writer = std::thread::spawn(move || std::fs::write(fifo, b"fifo bytes"));
            let o = fspace(&["copy", &s(&d.join("fifo")), &out]);
            writer.join().unwrap().unwrap();
            assert!(o.status.success(), "{}", text(&o));
            assert_eq!(std::fs::read(&out).unwrap(), b"fifo bytes");
            std::fs::remove_file(&out).unwrap();
        }
        expect_failure(
            &["copy", "--force", &s(&src), &s(&src)],
            &["is the same file as"],
        );
        if fs.name != "sshfs" {
            std::fs::hard_link(&src, d.join("link")).unwrap();
            expect_failure(
                &["copy", "--force", &s(&src), &s(&d.join("link"))],
                &["is the same file as"],
            );
            std::os::unix::fs::symlink(&src, d.join("sym")).unwrap();
            expect_failure(
                &["copy", "--force", &s(&d.join("sym")), &s(&src)],
                &["is the same file as"],
            );
        }
        std::fs::write(d.join("exists"), b"mine").unwrap();
        let t = expect_failure(
            &["copy", &s(&src), &s(&d.join("exists"))],
            &[
                "copy(",
                &s(&d.join("exists")),
                "already exists; replace it with the force option",
            ],
        );
        assert!(t.contains("fspace: error:"), "{t}");
        assert_eq!(std::fs::read(d.join("exists")).unwrap(), b"mine");
        expect_failure(
            &["copy", &s(&src), &s(&d.join("no/dir/f"))],
            &[
                "create(",
                &s(&d.join("no/dir/f")),
                "No such file",
                "does not exist",
            ],
        );
        // JSON errors are JSON.
        let o = fspace(&["copy", "--json", &s(&src), &s(&d.join("exists"))]);
        assert_eq!(o.status.code(), Some(1));
        let v = json(&o);
        assert_eq!(v["errno"], 17);
        assert_eq!(v["op"], "copy");
        let o = fspace(&[
            "copy",
            "--reflink",
            "always",
            "--sparse",
            "always",
            &s(&src),
            &out,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(has(&text(&o), "cannot apply"), "{}", text(&o));
        // Usage errors exit 2.
        let o = fspace(&["copy", "--sparse", "sometimes", &s(&src), &out]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(has(&text(&o), "unknown sparse mode"), "{}", text(&o));
        // A read-only destination directory, for an unprivileged user.
        if common::is_root() && fs.name != "sshfs" {
            let ro = d.join("ro");
            std::fs::create_dir(&ro).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
            std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o644)).unwrap();
            let o = Command::new("setpriv")
                .args([
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    bin(),
                    "copy",
                ])
                .arg(&src)
                .arg(ro.join("f"))
                .output()
                .expect("setpriv");
            let t = text(&o);
            assert_eq!(o.status.code(), Some(1), "{}: {t}", fs.name);
            assert!(
                has(&t, "Permission denied") && has(&t, &s(&ro.join("f"))),
                "{}: {t}",
                fs.name
            );
            assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
        }
        assert_eq!(std::fs::read(&src).unwrap(), content);
        assert!(!d.join("out").exists());
        assert!(temp_names(d).is_empty(), "{}", fs.name);
    }
}

common::per_fs! {
    /// A read-only mount as destination: EROFS, named, nothing created.
    fn copy_to_a_read_only_mount_fails_cleanly(fs) on [ext4] {
        if !common::is_root() {
            common::skipped("copy-read-only-mount", "cwd", "needs root");
            return;
        }
        let _g = fs.lock();
        let dir = fs.tempdir();
        let src = dir.path().join("src");
        write_random(&src, 10_000, 4);
        let inner = dir.path().join("inner");
        let target = dir.path().join("ro-mount");
        std::fs::create_dir(&inner).unwrap();
        std::fs::create_dir(&target).unwrap();
        let mounted = common::bind_mount(&inner, &target, true).expect("bind mount");
        let o = Command::new(bin())
            .arg("copy")
            .arg(&src)
            .arg(target.join("f"))
            .output()
            .unwrap();
        drop(mounted);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            has(&t, "Read-only file system") && has(&t, "ro-mount/f"),
            "{t}"
        );
        assert!(has(&t, "mounted read-only"), "{t}");
        assert_eq!(std::fs::read_dir(&inner).unwrap().count(), 0);
    }
}

common::per_fs! {
    /// Ctrl-C during a long copy: exit 130, no destination, no temporary file.
    fn sigint_during_copy_leaves_nothing(t, sh) on pairs [tmpfs_to_sshfs: (tmpfs, sshfs)] {
        let _g = common::lock_pair(t, sh);
        let sdir = t.tempdir();
        let ddir = sh.tempdir();
        let src = sdir.path().join("big");
        write_random(&src, 192 << 20, 8);
        let dst = ddir.path().join("copy");
        let mut child = Command::new(bin())
            .args(["copy", "--sparse", "always"])
            .arg(&src)
            .arg(&dst)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(400));
        assert!(
            child.try_wait().unwrap().is_none(),
            "the copy finished before the signal; make the file larger"
        );
        let pid = rustix::process::Pid::from_child(&child);
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        let st = child.wait().unwrap();
        assert_eq!(st.code(), Some(130), "{st:?}");
        assert!(!dst.exists());
        assert!(temp_names(ddir.path()).is_empty());
    }
}

/// A file name that is not UTF-8 does not turn a done copy into a failure
/// under --json (nor an error report into a panic).
#[test]
fn json_with_a_non_utf8_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir_in(".").unwrap();
    let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
    std::fs::write(&bad, b"data").unwrap();
    let dst = dir.path().join("copy");
    let o = Command::new(bin())
        .args(["copy", "--json"])
        .arg(&bad)
        .arg(&dst)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(json(&o)["src"].as_str().unwrap().contains("bad"));
    let o = Command::new(bin())
        .args(["copy", "--json"])
        .arg(&bad)
        .arg(&dst)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(json(&o)["errno"], 17);
    let o = Command::new(bin())
        .args(["dig", "--json"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{}", text(&o));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("JSON either way");
}
