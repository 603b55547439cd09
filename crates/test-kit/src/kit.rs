//! The helpers tests use; see the crate's documentation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Every filesystem the matrix must provide in CI.
pub const EXPECTED: [&str; 8] = [
    "ext4",
    "xfs",
    "btrfs",
    "ext4-noextents",
    "tmpfs",
    "sshfs",
    "ext4-fast",
    "xfs-fast",
];

/// The filesystems of the matrix that live on a small loop device or in
/// bounded memory, where filling them (ENOSPC) is cheap and safe.
pub const BOUNDED: [&str; 7] = [
    "ext4",
    "xfs",
    "btrfs",
    "ext4-noextents",
    "tmpfs",
    "ext4-fast",
    "xfs-fast",
];

/// The matrix's fast mounts, each with the filesystem it is: made and
/// mounted as that one, on a loop device whose image lives in a tmpfs, so
/// that a durable write costs microseconds (as on an NVMe drive with
/// power-loss protection) instead of the host disk's flush. Only tests that
/// name them run on them (the log's), not `per_fs!`'s default list.
pub const FAST: [(&str, &str); 2] = [("ext4-fast", "ext4"), ("xfs-fast", "xfs")];

#[derive(Debug, Clone)]
pub struct Fs {
    pub name: String,
    pub root: PathBuf,
}

impl Fs {
    /// Takes this filesystem for the calling test: tests that fill a
    /// filesystem (ENOSPC) must not run beside others on the same one.
    pub fn lock(&self) -> MutexGuard<'static, ()> {
        static LOCKS: OnceLock<Mutex<HashMap<String, &'static Mutex<()>>>> = OnceLock::new();
        let m = {
            let mut map = LOCKS
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *map.entry(self.name.clone())
                .or_insert_with(|| Box::leak(Box::new(Mutex::new(()))))
        };
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes a fresh directory on this filesystem, removed when dropped.
    pub fn tempdir(&self) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("fspace-test-")
            .tempdir_in(&self.root)
            .unwrap_or_else(|e| panic!("tempdir in {} ({}): {e}", self.root.display(), self.name))
    }

    /// The filesystem of the matrix this one is: `ext4` for `ext4-fast` and
    /// `xfs` for `xfs-fast` (the same mkfs and mount options on a faster
    /// device, see [`FAST`]), the name itself for every other.
    pub fn base(&self) -> &str {
        FAST.iter()
            .find(|(fast, _)| *fast == self.name)
            .map_or(self.name.as_str(), |(_, base)| base)
    }

    /// Whether this is one of the matrix's fast mounts ([`FAST`]).
    pub fn is_fast(&self) -> bool {
        self.base() != self.name
    }

    /// Whether this filesystem is one of `names`, by its name or by the
    /// filesystem it is ([`Fs::base`]): `fs.is(&["ext4"])` holds on
    /// `ext4-fast` too, whose facts are ext4's. (`fs.name` is the mount's
    /// own name, for what differs: the device, the locks.)
    pub fn is(&self, names: &[&str]) -> bool {
        names.contains(&self.name.as_str()) || names.contains(&self.base())
    }
}

pub fn require_matrix() -> bool {
    crate::build::required(std::env::var("FSPACE_REQUIRE_MATRIX").ok().as_deref())
}

/// Fails the calling test when the matrix it runs with is not the one its
/// binary was built for: the build decided which tests are ignored (see
/// [`crate::build`]), so a binary run by hand with another matrix would
/// silently run the wrong set. `cargo test` rebuilds by itself when the
/// environment changes.
pub fn check_built_for_this_matrix() {
    let var = |k: &str| std::env::var(k).ok();
    let now = crate::build::signature(
        var("FSPACE_TEST_MOUNTS").as_deref(),
        var("FSPACE_TEST_BIGALLOC").as_deref(),
        var("FSPACE_REQUIRE_MATRIX").as_deref(),
    );
    let built = env!("FSPACE_TEST_MATRIX_BUILT_FOR");
    assert_eq!(
        now, built,
        "this test binary was built for {built} but runs with {now}: rebuild it \
         (`cargo test` does so by itself when FSPACE_TEST_MOUNTS, FSPACE_TEST_BIGALLOC \
         or FSPACE_REQUIRE_MATRIX change)"
    );
}

/// Returns the configured filesystems (or `cwd`).
pub fn all() -> Vec<Fs> {
    check_built_for_this_matrix();
    mounted()
}

/// [`all`], without the check that the binary was built for this matrix:
/// for tests that decide at run time ([`fs_or_skip`]).
fn mounted() -> Vec<Fs> {
    match std::env::var("FSPACE_TEST_MOUNTS") {
        Ok(v) if !v.trim().is_empty() => v
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|kv| {
                let (n, p) = kv
                    .split_once('=')
                    .unwrap_or_else(|| panic!("bad FSPACE_TEST_MOUNTS entry {kv:?}"));
                Fs {
                    name: n.to_string(),
                    root: PathBuf::from(p),
                }
            })
            .collect(),
        _ => {
            assert!(
                !require_matrix(),
                "FSPACE_REQUIRE_MATRIX=1 but FSPACE_TEST_MOUNTS is not set"
            );
            vec![Fs {
                name: "cwd".into(),
                root: std::env::current_dir().expect("cwd"),
            }]
        }
    }
}

/// Filesystem `name` of the matrix (`ext4-bigalloc` is the one
/// `FSPACE_TEST_BIGALLOC` names). A test that asks for one that is missing
/// fails: `per_fs!` has marked it ignored at build time unless
/// `FSPACE_REQUIRE_MATRIX=1` (or it was run with `--ignored`).
pub fn fs(name: &str) -> Fs {
    check_built_for_this_matrix();
    find(name).unwrap_or_else(|| {
        fail_if_required(name);
        panic!(
            "filesystem {name} is missing from {} (this test is ignored unless run with --ignored)",
            var_of(name)
        );
    })
}

/// Filesystem `name` of the matrix, for a test whose package has no build
/// script to mark it ignored (the library's own unit tests: a build script
/// there would be built by every crate that depends on `fspace`). When it
/// is missing, a failure under `FSPACE_REQUIRE_MATRIX=1`; otherwise the
/// skip is recorded (as [`skipped`] does, `why`; shown even though the test
/// passes) and `None` returned, which libtest counts as a pass: where a
/// build script can be had, use [`crate::per_fs!`].
pub fn fs_or_skip(test: &str, name: &str, why: &str) -> Option<Fs> {
    let found = find(name);
    if found.is_none() {
        fail_if_required(name);
        skipped_past_capture(test, name, why);
    }
    found
}

/// Filesystem `name` of the matrix, if mounted.
fn find(name: &str) -> Option<Fs> {
    if name == "ext4-bigalloc" {
        std::env::var("FSPACE_TEST_BIGALLOC")
            .ok()
            .filter(|p| !p.trim().is_empty())
            .map(|p| Fs {
                name: name.into(),
                root: PathBuf::from(p),
            })
    } else {
        mounted().into_iter().find(|f| f.name == name)
    }
}

/// The variable that names filesystem `name` of the matrix.
fn var_of(name: &str) -> &'static str {
    if name == "ext4-bigalloc" {
        "FSPACE_TEST_BIGALLOC"
    } else {
        "FSPACE_TEST_MOUNTS"
    }
}

/// Fails the calling test for the missing filesystem `name` under
/// `FSPACE_REQUIRE_MATRIX=1`.
fn fail_if_required(name: &str) {
    assert!(
        !require_matrix(),
        "filesystem {name} is missing from {} and FSPACE_REQUIRE_MATRIX=1",
        var_of(name)
    );
}

/// Records a skip: printed, and appended to `$FSPACE_SKIP_LOG` if set so
/// that the test script can list every skip at the end.
pub fn skipped(test: &str, fs: &str, why: &str) {
    let line = format!("SKIPPED {test} on {fs}: {why}");
    eprintln!("{line}");
    log_skip(&line);
}

/// [`skipped`], for a skip libtest will count as a pass: the line is
/// written to the process's stderr directly, past libtest's capture
/// (which keeps a passing test's output to itself), so that `cargo test`
/// shows it.
pub(crate) fn skipped_past_capture(test: &str, fs: &str, why: &str) {
    use std::io::Write;
    let line = format!("SKIPPED {test} on {fs}: {why}");
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    log_skip(&line);
}

/// Appends a skip's line to `$FSPACE_SKIP_LOG`, if set.
fn log_skip(line: &str) {
    if let Ok(p) = std::env::var("FSPACE_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A deterministic pseudo-random byte stream (xorshift) with zero runs.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x.is_multiple_of(7) {
            let run = (x >> 8) as usize % 9000;
            out.extend(std::iter::repeat_n(0u8, run.min(len - out.len())));
        } else {
            out.extend_from_slice(&x.to_le_bytes()[..8.min(len - out.len())]);
        }
    }
    out
}

pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Free bytes (for root: f_bfree) of the filesystem holding `path`, after
/// syncing it, so that freed blocks are accounted.
pub fn free_after_sync(path: &Path) -> u64 {
    let f = std::fs::File::open(path).expect("open for syncfs");
    let _ = rustix::fs::syncfs(&f);
    let s = rustix::fs::fstatfs(&f).expect("fstatfs");
    let frsize = if s.f_frsize > 0 {
        s.f_frsize as u64
    } else {
        s.f_bsize as u64
    };
    s.f_bfree * frsize
}

/// Takes the locks of two filesystems in a fixed order (no deadlock between
/// tests that take the same pair the other way round).
pub fn lock_pair<'a>(a: &'a Fs, b: &'a Fs) -> Vec<MutexGuard<'static, ()>> {
    let (x, y) = if a.name <= b.name { (a, b) } else { (b, a) };
    let mut g = vec![x.lock()];
    if x.name != y.name {
        g.push(y.lock());
    }
    g
}

/// Returns the first offset where `a` and `b` differ (a length difference
/// counts at the shorter length), or `None` if they are byte-identical.
/// Ranges that are holes in both files are not read: they read as zeros in
/// both by definition.
pub fn first_difference(a: &Path, b: &Path) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let fa = std::fs::File::open(a).unwrap_or_else(|e| panic!("open {}: {e}", a.display()));
    let fb = std::fs::File::open(b).unwrap_or_else(|e| panic!("open {}: {e}", b.display()));
    let (la, lb) = (fa.metadata().unwrap().len(), fb.metadata().unwrap().len());
    let len = la.min(lb);
    let next_data = |f: &std::fs::File, off: u64| -> u64 {
        match rustix::fs::seek(f, rustix::fs::SeekFrom::Data(off)) {
            Ok(o) => o,
            Err(rustix::io::Errno::NXIO) => u64::MAX,
            Err(_) => off,
        }
    };
    let mut ba = vec![0u8; 1 << 20];
    let mut bb = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < len {
        let skip_to = next_data(&fa, off).min(next_data(&fb, off)).min(len);
        if skip_to > off {
            off = skip_to;
            continue;
        }
        let n = ((len - off) as usize).min(ba.len());
        fa.read_exact_at(&mut ba[..n], off).unwrap();
        fb.read_exact_at(&mut bb[..n], off).unwrap();
        if ba[..n] != bb[..n] {
            let i = ba[..n]
                .iter()
                .zip(&bb[..n])
                .position(|(x, y)| x != y)
                .unwrap();
            return Some(off + i as u64);
        }
        off += n as u64;
    }
    (la != lb).then_some(len)
}

/// Bytes allocated to `path` (`st_blocks` * 512) after an fsync.
pub fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let f = std::fs::File::open(path).unwrap();
    let _ = f.sync_all();
    f.metadata().unwrap().blocks() * 512
}

/// Names in `dir` that carry fspace's temporary-file marker.
pub fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".fspace-tmp-"))
        .collect()
}

/// Bytes without zero runs (xorshift; a zero byte now and then).
pub fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// A mount made by a test, unmounted when dropped (also when the test
/// fails).
pub struct Mounted(pub PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Bind-mounts `src` at `target` (read-only when `read_only`); `None` if
/// `mount` refuses (not root).
pub fn bind_mount(src: &Path, target: &Path, read_only: bool) -> Option<Mounted> {
    let run = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("mount")
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !run(&["--bind".as_ref(), src.as_os_str(), target.as_os_str()]) {
        return None;
    }
    let m = Mounted(target.to_path_buf());
    if read_only
        && !run(&[
            "-o".as_ref(),
            "remount,ro,bind".as_ref(),
            target.as_os_str(),
        ])
    {
        return None; // dropping `m` unmounts
    }
    Some(m)
}

/// Mounts a tmpfs of `size` (`96m`) at `at`, created if missing.
pub fn mount_tmpfs(at: &Path, size: &str) -> Mounted {
    std::fs::create_dir_all(at).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "fspace-test"])
        .arg(at)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mount tmpfs at {}", at.display());
    Mounted(at.to_path_buf())
}

/// A directory's entry names, sorted.
pub fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `s` without its whitespace: what a test looks for words in when the
/// CLI wrapped them to 80 columns, where a line break may fall inside a
/// phrase or cut a long path (match `unwrapped(needle)` in it).
pub fn unwrapped(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A finished command's stdout and stderr, for assertion messages.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Generates one `#[test]` per filesystem for a case:
///
/// ```ignore
/// per_fs! {
///     /// What the case checks.
///     fn grows_and_keeps_bytes(fs) {
///         let dir = fs.tempdir();
///         // ...
///     }
/// }
/// ```
///
/// makes `mod grows_and_keeps_bytes` with `#[test] fn ext4()`, `xfs()`,
/// `btrfs()`, `ext4_noextents()`, `tmpfs()` and `sshfs()`, each running the
/// body with that filesystem (`fs: &Fs`). `on [ext4, xfs]` after the
/// parameter names the filesystems instead (`ext4_bigalloc` is the one
/// `FSPACE_TEST_BIGALLOC` names; `ext4_fast` and `xfs_fast`, the fast
/// mounts of [`FAST`], are in no default list and run only where named).
/// Two parameters and `on pairs [ext4_to_xfs: (ext4, xfs), ...]` make one
/// test per named pair.
///
/// A test whose filesystem is not mounted is `#[ignore]`d with the reason
/// (the build script of the test's package decides, see [`crate::build`]),
/// so libtest counts it as ignored, not `ok`; under
/// `FSPACE_REQUIRE_MATRIX=1` it runs and fails.
#[macro_export]
macro_rules! per_fs {
    ($(#[$attr:meta])* fn $case:ident($fs:ident) $body:block) => {
        $crate::per_fs! {
            $(#[$attr])*
            fn $case($fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] $body
        }
    };
    ($(#[$attr:meta])* fn $case:ident($fs:ident) on [$($name:ident),+ $(,)?] $body:block) => {
        $(#[$attr])*
        mod $case {
            #[allow(unused_imports)]
            use super::*;

            fn case($fs: &$crate::Fs) $body

            $( $crate::__fs_name! { $name __per_fs_one $name } )+
        }
    };
    ($(#[$attr:meta])* fn $case:ident($a:ident, $b:ident)
        on pairs [$($test:ident: ($x:ident, $y:ident)),+ $(,)?] $body:block) => {
        $(#[$attr])*
        mod $case {
            #[allow(unused_imports)]
            use super::*;

            fn case($a: &$crate::Fs, $b: &$crate::Fs) $body

            $( $crate::__fs_name! { $x __per_fs_pair_first $y $test } )+
        }
    };
}

/// Calls `$crate::$then!` with the filesystem's name and the reason its
/// tests are ignored when it is missing, both as literals (what `cfg` and
/// `ignore` take), then the remaining tokens.
#[doc(hidden)]
#[macro_export]
macro_rules! __fs_name {
    (ext4 $then:ident $($rest:tt)*) => {
        $crate::$then! { "ext4" "ext4 is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (xfs $then:ident $($rest:tt)*) => {
        $crate::$then! { "xfs" "xfs is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (btrfs $then:ident $($rest:tt)*) => {
        $crate::$then! { "btrfs" "btrfs is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (ext4_noextents $then:ident $($rest:tt)*) => {
        $crate::$then! { "ext4-noextents" "ext4-noextents is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (tmpfs $then:ident $($rest:tt)*) => {
        $crate::$then! { "tmpfs" "tmpfs is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (sshfs $then:ident $($rest:tt)*) => {
        $crate::$then! { "sshfs" "sshfs is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (ext4_bigalloc $then:ident $($rest:tt)*) => {
        $crate::$then! { "ext4-bigalloc" "FSPACE_TEST_BIGALLOC is not set" $($rest)* }
    };
    (ext4_fast $then:ident $($rest:tt)*) => {
        $crate::$then! { "ext4-fast" "ext4-fast is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
    (xfs_fast $then:ident $($rest:tt)*) => {
        $crate::$then! { "xfs-fast" "xfs-fast is not in FSPACE_TEST_MOUNTS" $($rest)* }
    };
}

/// Like [`per_fs!`], for a case that starts a database engine
/// ([`crate::engines`]): `needs postgresql` (or `mariadb`, `rocksdb`) before
/// the filesystem list.
///
/// ```ignore
/// per_fs_engine! {
///     /// What the case checks.
///     fn starts_with_advice(fs) needs postgresql on [ext4, xfs] {
///         // The handle makes its own directory in the mount (the postgres
///         // user must reach it: not in fs.tempdir(), which is root-only).
///         let pg = Postgres::start(&fs.root, &[]).unwrap_or_else(|e| panic!("{e}"));
///     }
/// }
/// ```
///
/// Each test is ignored, with the reason, when its filesystem is not
/// mounted or its engine was missing when it was built (the build script
/// sets `fspace_engine`, see [`crate::build`]); under
/// `FSPACE_REQUIRE_MATRIX=1` it runs and fails on what is missing.
#[macro_export]
macro_rules! per_fs_engine {
    ($(#[$attr:meta])* fn $case:ident($fs:ident) needs $engine:ident
        on [$($name:ident),+ $(,)?] $body:block) => {
        $(#[$attr])*
        mod $case {
            #[allow(unused_imports)]
            use super::*;

            fn case($fs: &$crate::Fs) $body

            $( $crate::__fs_name! { $name __per_fs_engine_fs $engine $name } )+
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __per_fs_engine_fs {
    ($fs:literal $why:literal $engine:ident $name:ident) => {
        $crate::__engine_name! { $engine __per_fs_engine_one $fs $why $name }
    };
}

/// Calls `$crate::$then!` with the engine's cfg value and the reason its
/// tests are ignored when it is missing, then the remaining tokens.
#[doc(hidden)]
#[macro_export]
macro_rules! __engine_name {
    (postgresql $then:ident $($rest:tt)*) => {
        $crate::$then! { "postgresql" "PostgreSQL 15 was not installed (or not root) when this test was built" $($rest)* }
    };
    (mariadb $then:ident $($rest:tt)*) => {
        $crate::$then! { "mariadb" "MariaDB was not installed (or not root) when this test was built" $($rest)* }
    };
    (rocksdb $then:ident $($rest:tt)*) => {
        $crate::$then! { "rocksdb" "db_bench (rocksdb-tools) was not installed when this test was built" $($rest)* }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __per_fs_engine_one {
    ($engine:literal $engine_why:literal $fs:literal $why:literal $name:ident) => {
        #[test]
        #[cfg_attr(not(fspace_test_fs = $fs), ignore = $why)]
        #[cfg_attr(
                                            all(fspace_test_fs = $fs, not(fspace_engine = $engine)),
                                            ignore = $engine_why
                                        )]
        fn $name() {
            case(&$crate::fs($fs));
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __per_fs_one {
    ($fs:literal $why:literal $name:ident) => {
        #[test]
        #[cfg_attr(not(fspace_test_fs = $fs), ignore = $why)]
        fn $name() {
            case(&$crate::fs($fs));
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __per_fs_pair_first {
    ($x:literal $why:literal $y:ident $test:ident) => {
        $crate::__fs_name! { $y __per_fs_pair $x $test }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __per_fs_pair {
    ($y:literal $why:literal $x:literal $test:ident) => {
        #[test]
        #[cfg_attr(
                                    not(all(fspace_test_fs = $x, fspace_test_fs = $y)),
                                    ignore = "a filesystem of the pair is not in FSPACE_TEST_MOUNTS"
                                )]
        fn $test() {
            case(&$crate::fs($x), &$crate::fs($y));
        }
    };
}
