//! The C API as C and C++ programs see it: the single-file programs in
//! `tests/c/` are compiled with `cc` and `c++` against the *installed*
//! header and library (found with `pkg-config`), shared and static, and run
//! on every filesystem of the matrix, plain, under AddressSanitizer and
//! under valgrind, which must report no errors and no leaks.
//!
//! The installation is made by `ci/test.sh` (`make -C crates/fspace-capi
//! install PREFIX=...`), which passes its prefix in `FSPACE_CAPI_PREFIX`.

mod capi_common;
use fspace_test_kit as common;

use capi_common::prefix;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

/// Runs `pkg-config ARGS fspace` against the installed prefix.
fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let o = Command::new("pkg-config")
        .args(args)
        .arg("fspace")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("run pkg-config");
    assert!(
        o.status.success(),
        "pkg-config {args:?} fspace: {}",
        text(&o)
    );
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// How a test program is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    /// C11, shared library.
    C,
    /// The same source as C++17.
    Cxx,
    /// C11 with AddressSanitizer (and LeakSanitizer).
    Asan,
    /// C11 against libfspace.a.
    Static,
}

impl Build {
    const ALL: [Build; 4] = [Build::C, Build::Cxx, Build::Asan, Build::Static];

    fn name(self) -> &'static str {
        match self {
            Build::C => "c",
            Build::Cxx => "c++",
            Build::Asan => "asan",
            Build::Static => "static",
        }
    }
}

/// Compiles `src` into `out_dir`; panics with the compiler's output.
fn compile(prefix: &Path, src: &Path, build: Build, out_dir: &Path) -> PathBuf {
    let stem = src
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("source name");
    let exe = out_dir.join(format!("{stem}-{}", build.name()));
    let libdir = prefix.join("lib");
    let mut cmd = match build {
        Build::Cxx => {
            let mut c = Command::new("c++");
            c.args(["-x", "c++", "-std=c++17"]);
            c
        }
        _ => {
            let mut c = Command::new("cc");
            c.arg("-std=c11");
            c
        }
    };
    cmd.args(["-Wall", "-Wextra", "-Werror", "-O1", "-g"]);
    if build == Build::Asan {
        cmd.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
    }
    cmd.arg(src).arg("-o").arg(&exe);
    cmd.args(pkg_config(prefix, &["--cflags"]));
    if build == Build::Static {
        cmd.arg(libdir.join("libfspace.a"));
        cmd.args(pkg_config(prefix, &["--variable=static_libs"]));
    } else {
        if build == Build::Cxx {
            // The libraries follow the source; `-x c++` must not apply to them.
            cmd.args(["-x", "none"]);
        }
        cmd.args(pkg_config(prefix, &["--libs"]));
        cmd.arg(format!("-Wl,-rpath,{}", libdir.display()));
    }
    let o = cmd.output().expect("run the compiler");
    assert!(
        o.status.success(),
        "{} ({}) does not compile: {cmd:?}\n{}",
        src.display(),
        build.name(),
        text(&o)
    );
    if build == Build::Static {
        // Really static in libfspace: no libfspace.so among its needs.
        let ldd = Command::new("ldd").arg(&exe).output().expect("ldd");
        assert!(
            !String::from_utf8_lossy(&ldd.stdout).contains("libfspace"),
            "{} links libfspace.so: {}",
            exe.display(),
            text(&ldd)
        );
    }
    exe
}

/// The test programs, sorted.
fn programs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("tests/c"))
        .expect("tests/c")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no C test programs in tests/c");
    v
}

/// Exit status 77: the program does not apply on this filesystem.
const SKIP: i32 = 77;

/// Runs one program on `dir`, optionally under valgrind; returns an error
/// text on failure, and records a skip.
fn run_program(
    test: &str,
    fs: &str,
    exe: &Path,
    dir: &Path,
    valgrind: bool,
    env: &[(&str, &Path)],
) -> Option<String> {
    let mut cmd = if valgrind {
        let mut c = Command::new("valgrind");
        c.args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--show-leak-kinds=definite,indirect,possible",
            "--errors-for-leak-kinds=definite,indirect,possible",
        ]);
        // Only the inode-flags ioctl's int-for-long quirk (see the file).
        c.arg(format!(
            "--suppressions={}/tests/c/valgrind.supp",
            env!("CARGO_MANIFEST_DIR")
        ));
        c.arg(exe);
        c
    } else {
        Command::new(exe)
    };
    cmd.arg(dir);
    cmd.envs(env.iter().copied());
    // LeakSanitizer is on by default with -fsanitize=address; make it fatal.
    cmd.env(
        "ASAN_OPTIONS",
        "detect_leaks=1:abort_on_error=0:exitcode=98",
    );
    let o = cmd.output().expect("run a C test program");
    let name = format!(
        "{}{}",
        exe.file_name().and_then(|s| s.to_str()).unwrap_or("?"),
        if valgrind { " under valgrind" } else { "" }
    );
    match o.status.code() {
        Some(0) => None,
        Some(SKIP) => {
            common::skipped(test, fs, &format!("{name}: {}", text(&o).trim()));
            None
        }
        _ => Some(format!("{name} on {fs}: {}\n{}", o.status, text(&o))),
    }
}

/// Every test program in every build, compiled once per test binary (into
/// cargo's scratch directory for tests) for all the filesystems' tests.
fn builds(prefix: &Path) -> &'static [(Build, PathBuf)] {
    static BUILDS: OnceLock<Vec<(Build, PathBuf)>> = OnceLock::new();
    BUILDS.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_api_programs");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).expect("build directory");
        let mut builds = Vec::new();
        for src in programs() {
            for b in Build::ALL {
                builds.push((b, compile(prefix, &src, b, &out)));
            }
        }
        builds
    })
}

common::per_fs! {
    fn c_programs_pass_on_every_filesystem(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        let test = "c_programs_pass_on_every_filesystem";
        let Some(prefix) = prefix(test) else { return };
        let builds = builds(&prefix);
        let mut failures = Vec::new();
        let _g = fs.lock();
        let dir = fs.tempdir();
        for (b, exe) in builds {
            failures.extend(run_program(test, &fs.name, exe, dir.path(), false, &[]));
            if *b == Build::C {
                failures.extend(run_program(test, &fs.name, exe, dir.path(), true, &[]));
            }
        }
        assert_eq!(
            common::listing(dir.path()),
            Vec::<String>::new(),
            "the programs left files behind on {}",
            fs.name
        );
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

common::per_fs! {
    /// The C programs, built against the header in the tree, run against the
    /// ABI test's build of the library (`--features abi-grown-test`, made by
    /// ci/test.sh into `$FSPACE_CAPI_GROWN`), whose every struct gained a
    /// field: what a program built against this release's header meets
    /// when a later library's structs grew (docs/capi.md, "Structs that
    /// grow"). test_abi.c checks, with `FSPACE_ABI_GROWN=1`, that the grown
    /// library is the one that ran.
    fn c_programs_run_against_a_library_whose_structs_grew(fs) on [ext4, tmpfs] {
        let test = "c_programs_run_against_a_library_whose_structs_grew";
        let Some(prefix) = prefix(test) else { return };
        let grown = match std::env::var_os("FSPACE_CAPI_GROWN") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => {
                assert!(
                    !common::require_matrix(),
                    "{test}: FSPACE_CAPI_GROWN is not set: run the suite with ci/test.sh"
                );
                common::skipped(test, &fs.name, "FSPACE_CAPI_GROWN not set (ci/test.sh builds it)");
                return;
            }
        };
        // Preloaded: its SONAME is the one the programs need, so the loader
        // takes it for theirs whatever their RPATH says.
        let lib = grown.join("libfspace.so.0");
        assert!(lib.is_file(), "{}: no libfspace.so.0", grown.display());
        let builds = builds(&prefix);
        let mut failures = Vec::new();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let one = Path::new("1");
        for (b, exe) in builds {
            if *b == Build::C || *b == Build::Cxx {
                let env = [("LD_PRELOAD", lib.as_path()), ("FSPACE_ABI_GROWN", one)];
                failures.extend(run_program(test, &fs.name, exe, dir.path(), false, &env));
            }
        }
        assert!(
            failures.is_empty(),
            "{} failures against the grown library:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// The exported functions, read from the header.
fn header_functions() -> BTreeSet<String> {
    let h = std::fs::read_to_string(crate_dir().join("include/fspace.h")).expect("fspace.h");
    let mut names = BTreeSet::new();
    for line in h.lines() {
        let line = line.trim_start();
        if line.starts_with("//") || line.starts_with('*') || line.starts_with('#') {
            continue;
        }
        if let Some(open) = line.find('(') {
            let before = &line[..open];
            if let Some(name) = before
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next_back()
            {
                if name.starts_with("fspace_")
                    && (before.starts_with("int ")
                        || before.starts_with("void ")
                        || before.starts_with("const char *"))
                {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

/// Returns C source without its comments (a function named only in a
/// comment is not called).
fn without_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while !rest.is_empty() {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

#[test]
fn every_function_in_the_header_is_called_by_a_c_test() {
    let functions = header_functions();
    assert!(
        functions.len() > 40,
        "read only {} functions from fspace.h",
        functions.len()
    );
    let sources: String = programs()
        .iter()
        .map(|p| without_comments(&std::fs::read_to_string(p).expect("read a test program")))
        .collect();
    let called = |f: &str| {
        sources.match_indices(f).any(|(i, _)| {
            let after = sources[i + f.len()..].chars().next();
            after.is_some_and(|c| c == '(' || c.is_whitespace())
        })
    };
    let missing: Vec<&String> = functions.iter().filter(|f| !called(f)).collect();
    assert!(missing.is_empty(), "functions no C test calls: {missing:?}");
}

#[test]
fn installed_library_exports_only_the_fspace_prefix() {
    let test = "installed_library_exports_only_the_fspace_prefix";
    let Some(prefix) = prefix(test) else { return };
    let o = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(prefix.join("lib/libfspace.so"))
        .output()
        .expect("nm");
    assert!(o.status.success(), "{}", text(&o));
    let symbols: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(" T "))
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    // Every function at the version of libfspace.map (`fspace_x@@FSPACE_0`).
    let unversioned: Vec<&String> = symbols
        .iter()
        .filter(|s| !s.ends_with("@@FSPACE_0"))
        .collect();
    assert!(
        unversioned.is_empty(),
        "libfspace.so exports functions without the symbol version FSPACE_0 (libfspace.map): {unversioned:?}"
    );
    let exported: BTreeSet<String> = symbols
        .iter()
        .map(|s| s.split('@').next().unwrap_or(s).to_string())
        .collect();
    let stray: Vec<&String> = exported
        .iter()
        .filter(|s| !s.starts_with("fspace_"))
        .collect();
    assert!(
        stray.is_empty(),
        "libfspace.so exports symbols without the prefix: {stray:?}"
    );
    assert_eq!(
        exported,
        header_functions(),
        "the header and the library disagree"
    );
    // The library never interposes posix_fallocate (that is the preload's job).
    assert!(!exported.iter().any(|s| s.contains("posix_fallocate")));
    let readelf = Command::new("readelf")
        .arg("-d")
        .arg(prefix.join("lib/libfspace.so"))
        .output()
        .expect("readelf");
    assert!(
        String::from_utf8_lossy(&readelf.stdout).contains("[libfspace.so.0]"),
        "libfspace.so has no SONAME libfspace.so.0: {}",
        text(&readelf)
    );
}

common::per_fs! {
    fn example_wal_writer_builds_through_pkg_config(fs) on [ext4, sshfs] {
        let test = "example_wal_writer_builds_through_pkg_config";
        let Some(prefix) = prefix(test) else { return };
        let example = crate_dir().join("../../examples/c");
        let out = tempfile::tempdir().expect("build directory");
        let exe = out.path().join("wal_writer");
        let o = Command::new("make")
            .arg("-C")
            .arg(&example)
            .arg(format!("OUT={}", exe.display()))
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .env(
                "LDFLAGS",
                format!("-Wl,-rpath,{}", prefix.join("lib").display()),
            )
            .output()
            .expect("make");
        assert!(o.status.success(), "make -C examples/c: {}", text(&o));
        let dir = fs.tempdir();
        let log = dir.path().join("log");
        let run = |n: &str| {
            Command::new(&exe)
                .arg(&log)
                .arg(n)
                .output()
                .expect("run wal_writer")
        };
        let o = run("100");
        assert!(
            o.status.success(),
            "wal_writer on {}: {}",
            fs.name,
            text(&o)
        );
        let first = text(&o);
        assert!(first.contains("committed 100 records"), "{first}");
        let o = run("50");
        assert!(
            o.status.success(),
            "wal_writer again on {}: {}",
            fs.name,
            text(&o)
        );
        let second = text(&o);
        assert!(second.contains("recovered 100 records"), "{second}");
        assert!(second.contains("committed 50 records"), "{second}");
        let o = run("not-a-number");
        assert_eq!(o.status.code(), Some(2), "bad argument: {}", text(&o));
    }
}
