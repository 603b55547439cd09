//! GNU coreutils' own tests of `cp` (tests/cp/*.sh), ported to `fspace
//! copy` and run on every filesystem of the matrix. The scripts live in
//! `tests/coreutils_cp/`; each says at its top what it checks and where it
//! was adapted (shared adaptations are in `lib.sh`, and docs/copy.md lists
//! them). A script exits 0 (pass), 1 (fail) or 77 (skip); a skip not listed
//! in [`EXPECTED_SKIPS`] fails the test under `FSPACE_REQUIRE_MATRIX=1`.

use fspace_test_kit as common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Scripts that cannot run on a filesystem, and why.
const EXPECTED_SKIPS: &[(&str, &str, &str)] = &[
    (
        "sparse-2",
        "sshfs",
        "SEEK_DATA there is the kernel's generic one: no holes are seen",
    ),
    (
        "sparse-extents",
        "sshfs",
        "no SEEK_DATA holes and no fallocate over sshfs",
    ),
    (
        "sparse-extents",
        "ext4-noextents",
        "ext4 without extents has no fallocate",
    ),
    ("fiemap-empty", "sshfs", "no fallocate over sshfs"),
    (
        "fiemap-empty",
        "ext4-noextents",
        "ext4 without extents has no fallocate",
    ),
    (
        "fiemap-empty",
        "tmpfs",
        "tmpfs has no FIEMAP: filefrag cannot see unwritten extents",
    ),
    (
        "sparse-perf",
        "sshfs",
        "no SEEK_DATA holes: a 1 TiB file would be read whole",
    ),
];

fn script_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/coreutils_cp")
}

/// A directory on another filesystem of the matrix (for the tests that copy
/// across filesystems).
fn other_dir(fs: &common::Fs) -> tempfile::TempDir {
    let others = common::all();
    let other = others
        .iter()
        .find(|o| o.name != fs.name && o.is(&["tmpfs", "ext4", "xfs"]))
        .unwrap_or_else(|| panic!("no second filesystem beside {} in the matrix", fs.name));
    other.tempdir()
}

/// Runs `tests/coreutils_cp/NAME.sh` in a fresh directory on `fs`.
fn run(fs: &common::Fs, name: &str) {
    let _g = fs.lock();
    let dir = fs.tempdir();
    let other = other_dir(fs);
    let script = script_dir().join(format!("{name}.sh"));
    let o = Command::new("bash")
        .arg(&script)
        .current_dir(dir.path())
        .env("FSPACE", env!("CARGO_BIN_EXE_fspace"))
        .env("OTHER_DIR", other.path())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    let out = common::output_text(&o);
    let tail: String = {
        let lines: Vec<&str> = out.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    match o.status.code() {
        Some(0) => {}
        Some(77) => {
            let expected = EXPECTED_SKIPS
                .iter()
                .find(|(n, f, _)| *n == name && *f == fs.name);
            match expected {
                Some((_, _, why)) => common::skipped(name, &fs.name, why),
                None if common::require_matrix() => {
                    panic!("{name} on {}: skipped unexpectedly:\n{tail}", fs.name)
                }
                None => common::skipped(name, &fs.name, tail.trim()),
            }
        }
        code => panic!("{name} on {}: exit {code:?}\n{tail}", fs.name),
    }
}

macro_rules! ported {
    ($($case:ident => $script:literal),+ $(,)?) => {
        $(
            common::per_fs! {
                fn $case(fs) {
                    run(fs, $script);
                }
            }
        )+
    };
}

ported! {
    sparse => "sparse",
    sparse_2 => "sparse-2",
    sparse_extents => "sparse-extents",
    sparse_extents_2 => "sparse-extents-2",
    sparse_perf => "sparse-perf",
    sparse_to_pipe => "sparse-to-pipe",
    copy_fmr => "copy-FMR",
    fiemap_fmr => "fiemap-FMR",
    fiemap_empty => "fiemap-empty",
    reflink_auto => "reflink-auto",
    proc_zero_len => "proc-zero-len",
    proc_short_read => "proc-short-read",
}
