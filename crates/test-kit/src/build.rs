//! The filesystem matrix as a build script sees it: which `per_fs!` tests
//! run and which are ignored is decided when the test binary is compiled.
//!
//! libtest can only count a test as ignored if the test is marked so when
//! compiled; a test that returns early at run time counts as `ok`. So every
//! package with `per_fs!` tests calls [`emit`] from its `build.rs`: it reads
//! `FSPACE_TEST_MOUNTS`, `FSPACE_TEST_BIGALLOC` and `FSPACE_REQUIRE_MATRIX`,
//! tells cargo to rebuild when they change, and sets the cfg
//! `fspace_test_fs = "<name>"` for each filesystem whose tests run. Under
//! `FSPACE_REQUIRE_MATRIX=1` every filesystem's tests run, so that a missing
//! one fails instead of being ignored.
//!
//! A test binary run by hand with another matrix than it was built with
//! would ignore or run the wrong tests: [`signature`] of the build-time
//! environment is compiled in, and the test kit refuses to run a test when
//! the run-time one differs (cargo rebuilds by itself).
//!
//! This module needs no dependency: it is compiled into build scripts with
//! the test kit's default features off.

/// The environment variables the matrix is described by.
pub const ENV: [&str; 3] = [
    "FSPACE_TEST_MOUNTS",
    "FSPACE_TEST_BIGALLOC",
    "FSPACE_REQUIRE_MATRIX",
];

/// Every filesystem a `per_fs!` test can ask for: the matrix's (its fast
/// ext4 and xfs included), and the bigalloc ext4 that `FSPACE_TEST_BIGALLOC`
/// names on its own.
pub const KNOWN: [&str; 9] = [
    "ext4",
    "xfs",
    "btrfs",
    "ext4-noextents",
    "tmpfs",
    "sshfs",
    "ext4-fast",
    "xfs-fast",
    "ext4-bigalloc",
];

/// The filesystems a test can make on a private loop image
/// (`loop_fs::LoopFs`), each with the tools that takes besides root.
pub const LOOP: [(&str, &str); 3] = [
    ("ext4", "mkfs.ext4"),
    ("xfs", "mkfs.xfs"),
    ("btrfs", "mkfs.btrfs"),
];

/// The commands every loop filesystem needs.
pub const LOOP_TOOLS: [&str; 4] = ["losetup", "mount", "umount", "cp"];

/// Why a loop image of `fs` cannot be made on this machine (root and the
/// tools on `PATH`), or `None` when it can.
pub fn loop_missing(fs: &str) -> Option<String> {
    let mkfs = LOOP.iter().find(|(n, _)| *n == fs).map(|(_, m)| *m)?;
    if !effective_root() {
        return Some("needs root (loop devices, mounts)".into());
    }
    LOOP_TOOLS
        .into_iter()
        .chain([mkfs])
        .find(|c| !on_path(c))
        .map(|c| format!("{c} is not installed"))
}

/// Whether this process runs as root, read from `/proc/self/status`
/// (this module has no dependencies).
fn effective_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Whether an executable named `cmd` is in a directory of `PATH`.
fn on_path(cmd: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            std::fs::metadata(d.join(cmd))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The database engines a test can start (`engines` in the test kit), each
/// as the `fspace_engine` cfg value names it.
pub const ENGINES: [&str; 3] = ["postgresql", "mariadb", "rocksdb"];

/// Rewritten by every Debian package installation or removal.
const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// Where Debian's postgresql-15 puts its server programs (not on `PATH`).
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// Why `engine` (one of [`ENGINES`]) cannot be started on this machine, or
/// `None` when it can: its programs are installed and, for the two servers,
/// this process is root (PostgreSQL runs as the `postgres` user, which only
/// root can switch to; MariaDB is started with `--user=root`).
pub fn engine_missing(engine: &str) -> Option<String> {
    let on_path_or = |c: &str, dir: &str| on_path(c) || std::path::Path::new(dir).join(c).is_file();
    let need_root = || (!effective_root()).then(|| format!("{engine} is started as root"));
    match engine {
        "postgresql" => ["initdb", "pg_ctl", "postgres", "psql", "pgbench"]
            .into_iter()
            .find(|c| !std::path::Path::new(PG_BIN).join(c).is_file())
            .map(|c| format!("{PG_BIN}/{c} is missing (Debian package postgresql-15)"))
            .or_else(|| (!on_path("runuser")).then(|| "runuser is not installed".into()))
            .or_else(|| {
                let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
                (!passwd.lines().any(|l| l.starts_with("postgres:")))
                    .then(|| "there is no postgres user".into())
            })
            .or_else(need_root),
        "mariadb" => ["mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin"]
            .into_iter()
            .find(|c| !on_path_or(c, "/usr/sbin"))
            .map(|c| format!("{c} is not installed (Debian package mariadb-server)"))
            .or_else(need_root),
        "rocksdb" => (!on_path("db_bench"))
            .then(|| "db_bench is not installed (Debian package rocksdb-tools)".into()),
        _ => Some(format!("unknown engine {engine}")),
    }
}

/// The name of the rustc-env variable that carries the build-time
/// [`signature`] into the test kit.
pub const BUILT_FOR: &str = "FSPACE_TEST_MATRIX_BUILT_FOR";

/// The filesystems named by a `FSPACE_TEST_MOUNTS` value and a
/// `FSPACE_TEST_BIGALLOC` value (empty values name none), sorted.
pub fn names(mounts: Option<&str>, bigalloc: Option<&str>) -> Vec<String> {
    let mut v: Vec<String> = mounts
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|kv| kv.split_once('=').map_or(kv, |(n, _)| n).to_string())
        .collect();
    if bigalloc.is_some_and(|b| !b.trim().is_empty()) {
        v.push("ext4-bigalloc".into());
    }
    v.sort();
    v.dedup();
    v
}

/// Whether a `FSPACE_REQUIRE_MATRIX` value asks for the whole matrix.
pub fn required(require: Option<&str>) -> bool {
    require == Some("1")
}

/// What a test binary's choice of tests depends on: the filesystems' names
/// (not their paths) and whether the matrix is required.
pub fn signature(mounts: Option<&str>, bigalloc: Option<&str>, require: Option<&str>) -> String {
    format!(
        "filesystems [{}], FSPACE_REQUIRE_MATRIX={}",
        names(mounts, bigalloc).join(", "),
        u8::from(required(require))
    )
}

/// The filesystems whose `per_fs!` tests run (all of [`KNOWN`] when the
/// matrix is required).
pub fn runs_on(
    mounts: Option<&str>,
    bigalloc: Option<&str>,
    require: Option<&str>,
) -> Vec<&'static str> {
    let have = names(mounts, bigalloc);
    KNOWN
        .into_iter()
        .filter(|k| required(require) || have.iter().any(|h| h == k))
        .collect()
}

/// Called from a `build.rs`: prints the cargo instructions described in the
/// module's documentation.
pub fn emit() {
    let var = |k: &str| std::env::var(k).ok();
    for k in ENV {
        println!("cargo:rerun-if-env-changed={k}");
    }
    let values: Vec<String> = KNOWN.iter().map(|k| format!("\"{k}\"")).collect();
    println!(
        "cargo::rustc-check-cfg=cfg(fspace_test_fs, values({}))",
        values.join(", ")
    );
    let (m, b, r) = (var(ENV[0]), var(ENV[1]), var(ENV[2]));
    for fs in runs_on(m.as_deref(), b.as_deref(), r.as_deref()) {
        println!("cargo::rustc-cfg=fspace_test_fs=\"{fs}\"");
    }
    let loops: Vec<String> = LOOP.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    println!(
        "cargo::rustc-check-cfg=cfg(fspace_loop_fs, values({}))",
        loops.join(", ")
    );
    let engines: Vec<String> = ENGINES.iter().map(|n| format!("\"{n}\"")).collect();
    println!(
        "cargo::rustc-check-cfg=cfg(fspace_engine, values({}))",
        engines.join(", ")
    );
    println!(
        "cargo::rustc-env={BUILT_FOR}={}",
        signature(m.as_deref(), b.as_deref(), r.as_deref())
    );
    // A crate built from a registry has no tests directory: none of what
    // follows decides anything there, and watching PATH or dpkg's status
    // would rebuild it (and whatever depends on it) after every change of
    // either.
    let has_tests = std::env::var_os("CARGO_MANIFEST_DIR")
        .is_some_and(|d| std::path::Path::new(&d).join("tests").is_dir());
    if !has_tests {
        return;
    }
    // Loop images: made only by tests that ask for them, so a machine
    // without root or a mkfs ignores those tests (counted as ignored)
    // rather than passing them; under FSPACE_REQUIRE_MATRIX they run and
    // fail on what is missing. PATH decides the tools, so it reruns this.
    println!("cargo:rerun-if-env-changed=PATH");
    for (fs, _) in LOOP {
        if required(r.as_deref()) || loop_missing(fs).is_none() {
            println!("cargo::rustc-cfg=fspace_loop_fs=\"{fs}\"");
        }
    }
    // Engines: a test that starts one is ignored where the build finds it
    // missing (not installed, or not root), like the loop images above;
    // under FSPACE_REQUIRE_MATRIX it runs and fails, naming what is missing.
    // Installing a package rewrites dpkg's status file, so the choice is
    // made again then (watched only where it exists: cargo reruns a build
    // script every time for a missing path).
    if std::path::Path::new(DPKG_STATUS).exists() {
        println!("cargo:rerun-if-changed={DPKG_STATUS}");
    }
    for engine in ENGINES {
        if required(r.as_deref()) || engine_missing(engine).is_none() {
            println!("cargo::rustc-cfg=fspace_engine=\"{engine}\"");
        }
    }
}
