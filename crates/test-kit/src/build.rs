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

/// Every filesystem a `per_fs!` test can ask for: the matrix's, and the
/// bigalloc ext4 that `FSPACE_TEST_BIGALLOC` names on its own.
pub const KNOWN: [&str; 7] = [
    "ext4",
    "xfs",
    "btrfs",
    "ext4-noextents",
    "tmpfs",
    "sshfs",
    "ext4-bigalloc",
];

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
    println!(
        "cargo::rustc-env={BUILT_FOR}={}",
        signature(m.as_deref(), b.as_deref(), r.as_deref())
    );
}
