//! A private filesystem on a loop image, whose power a test can cut: the
//! cut copies the image file at once, without unmounting or syncing, so
//! the copy holds what the filesystem had submitted to the device, which
//! is what a power cut keeps (the page cache and an uncommitted journal
//! transaction are lost). Only then is the original unmounted (which
//! writes everything back); the copy is mounted (its journal replays).
//!
//! Needs root, `losetup` and the filesystem's `mkfs`. A test that makes one
//! carries `#[cfg_attr(not(fspace_loop_fs = "ext4"), ignore = "...")]`: the
//! build script (`build::emit`) sets that cfg where the machine can, so
//! elsewhere the test counts as ignored, not as passed; under
//! `FSPACE_REQUIRE_MATRIX=1` it always runs, and [`LoopFs::new`] fails on
//! what is missing. The library's own unit tests, whose package has no
//! build script, ask [`available_or_skip`] when they run instead.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Loop devices and mounts, unmounted, detached and removed on drop, also
/// when the test fails.
struct Scratch {
    dir: tempfile::TempDir,
    loops: Vec<String>,
    mounts: Vec<PathBuf>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for m in self.mounts.drain(..).rev() {
            let _ = Command::new("umount").arg(&m).status();
        }
        for l in self.loops.drain(..) {
            let _ = Command::new("losetup").args(["-d", &l]).status();
        }
        let _ = &self.dir;
    }
}

/// Runs `cmd` and returns its stdout; panics with its stderr if it fails.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Scratch {
    fn attach(&mut self, image: &Path) -> String {
        let image = image.to_str().expect("utf-8 path");
        // Parallel tests race for free loop devices: retry a busy one.
        let mut last = String::new();
        for _ in 0..5 {
            let out = Command::new("losetup")
                .args(["--find", "--show", image])
                .output()
                .expect("losetup");
            if out.status.success() {
                let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
                self.loops.push(dev.clone());
                return dev;
            }
            last = String::from_utf8_lossy(&out.stderr).to_string();
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("losetup --find --show {image}: {last}");
    }

    fn mount(&mut self, dev: &str, at: &Path, opts: &str) {
        std::fs::create_dir_all(at).expect("mount point");
        let at_s = at.to_str().expect("utf-8 path");
        if opts.is_empty() {
            run("mount", &[dev, at_s]);
        } else {
            run("mount", &["-o", opts, dev, at_s]);
        }
        self.mounts.push(at.to_path_buf());
    }

    fn unmount(&mut self, at: &Path) {
        run("umount", &[at.to_str().expect("utf-8 path")]);
        self.mounts.retain(|m| m != at);
    }

    fn detach(&mut self, dev: &str) {
        run("losetup", &["-d", dev]);
        self.loops.retain(|l| l != dev);
    }
}

/// Whether `test` can make a loop image of `fs` here, asked when it runs by
/// a test whose package has no build script to mark it ignored (the
/// library's own unit tests). When it cannot: a failure under
/// `FSPACE_REQUIRE_MATRIX=1`, naming what is missing; otherwise the skip is
/// recorded (as [`crate::skipped`] does; shown even though the test
/// passes) and `false` returned, which libtest counts as a pass.
pub fn available_or_skip(test: &str, fs: &str) -> bool {
    let Some(why) = crate::build::loop_missing(fs) else {
        return true;
    };
    assert!(
        !crate::require_matrix(),
        "{test} on {fs}: {why} and FSPACE_REQUIRE_MATRIX=1"
    );
    crate::kit::skipped_past_capture(test, fs, &why);
    false
}

/// A private filesystem of type `fs` (ext4, xfs or btrfs), mounted, and
/// what is needed to cut its power.
pub struct LoopFs {
    s: Scratch,
    pub fs: &'static str,
    image: PathBuf,
    dev: String,
    /// Where it is mounted (after [`cut`](Self::cut): the copy).
    pub mnt: PathBuf,
}

impl LoopFs {
    /// Makes and mounts the filesystem. Panics, naming what is missing,
    /// when this machine cannot: the test was compiled to run here (see
    /// the module's documentation), so a missing tool is a failure.
    pub fn new(test: &str, fs: &'static str) -> LoopFs {
        LoopFs::sized(test, fs, None, None)
    }

    /// As [`new`](Self::new), with an image of `size_mb` MiB and mounted
    /// with `mount_opts` where given (instead of the filesystem's
    /// defaults above).
    pub fn sized(
        test: &str,
        fs: &'static str,
        size_mb: Option<u64>,
        mount_opts: Option<&str>,
    ) -> LoopFs {
        let (mkfs, default_mb, default_opts): (&str, u64, &str) = match fs {
            // commit=600: no periodic journal commit inside the test's
            // window, so the result does not depend on racing ext4's 5 s
            // timer (the report that found the log's lost-rename defect
            // lost records in 15 of 20 attempts with the default).
            "ext4" => ("mkfs.ext4", 64, "commit=600"),
            "xfs" => ("mkfs.xfs", 300, ""),
            "btrfs" => ("mkfs.btrfs", 256, ""),
            _ => panic!("no loop filesystem {fs}"),
        };
        let size_mb = size_mb.unwrap_or(default_mb);
        let mount_opts = mount_opts.unwrap_or(default_opts);
        if let Some(why) = crate::build::loop_missing(fs) {
            panic!("{test} on {fs}: {why} (rebuild the tests to have them ignored here)");
        }
        let base = tempfile::Builder::new()
            .prefix("fspace-power-cut-")
            .tempdir_in("/var/tmp")
            .expect("scratch directory");
        let mut s = Scratch {
            dir: base,
            loops: vec![],
            mounts: vec![],
        };
        let root = s.dir.path().to_path_buf();
        let image = root.join("fs.img");
        let f = std::fs::File::create(&image).expect("image");
        f.set_len(size_mb << 20).expect("image size");
        drop(f);
        let quiet = if fs == "ext4" { "-qF" } else { "-qf" };
        run(mkfs, &[quiet, image.to_str().expect("utf-8")]);
        let dev = s.attach(&image);
        let mnt = root.join("mnt");
        s.mount(&dev, &mnt, mount_opts);
        LoopFs {
            s,
            fs,
            image,
            dev,
            mnt,
        }
    }

    /// The loop device, `/dev/loopN`.
    pub fn device(&self) -> &str {
        &self.dev
    }

    /// Remounts it with `opts` (`remount,` is added); panics if refused.
    pub fn remount(&self, opts: &str) {
        let at = self.mnt.to_str().expect("utf-8 path");
        run("mount", &["-o", &format!("remount,{opts}"), at]);
    }

    /// Cuts the power: copies the image as the device holds it now, then
    /// unmounts the original and mounts the copy. Returns where the copy
    /// is mounted.
    pub fn cut(&mut self) -> PathBuf {
        let root = self.s.dir.path().to_path_buf();
        let cut = root.join("cut.img");
        run(
            "cp",
            &[
                "--sparse=always",
                self.image.to_str().expect("utf-8"),
                cut.to_str().expect("utf-8"),
            ],
        );
        let (mnt, dev) = (self.mnt.clone(), self.dev.clone());
        self.s.unmount(&mnt);
        self.s.detach(&dev);
        let dev2 = self.s.attach(&cut);
        let mnt2 = root.join("mnt-cut");
        self.s.mount(&dev2, &mnt2, "");
        self.dev = dev2;
        self.mnt.clone_from(&mnt2);
        mnt2
    }
}
