//! `libfspace-preload.so` in unmodified programs: util-linux `fallocate -x`
//! (which calls `posix_fallocate`) issues at most 300 write-type syscalls for
//! 256 MiB where glibc issues 65,536, and leaves a file of zeros of the
//! right size; a C program gets the same return values and the same errno
//! behaviour from the preload as from glibc for good and bad arguments, and
//! keeps every data byte when the range covers data, holes and the part
//! beyond EOF.
//!
//! Times are not asserted here (they are measured by `bench/preload.py`).

mod capi_common;
use fspace_test_kit as common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The syscalls that change a file's contents, size or allocation.
const WRITE_TYPE: &str =
    "write,pwrite64,writev,pwritev,pwritev2,fallocate,ftruncate,copy_file_range";

fn preload_lib(prefix: &Path) -> PathBuf {
    prefix.join("lib/libfspace-preload.so")
}

/// Runs `cmd` under `strace -f -c` counting write-type syscalls; returns
/// the output and the count.
fn counted(cmd: Command, preload: Option<&Path>) -> (Output, u64) {
    let summary = tempfile::NamedTempFile::new().expect("strace summary file");
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-c", "-e", &format!("trace={WRITE_TYPE}"), "-o"])
        .arg(summary.path());
    if let Some(lib) = preload {
        // Given to the traced program only (strace itself is not preloaded).
        strace
            .arg("-E")
            .arg(format!("LD_PRELOAD={}", lib.display()));
    }
    strace.arg(cmd.get_program()).args(cmd.get_args());
    let o = strace.output().expect("run strace");
    let s = std::fs::read_to_string(summary.path()).unwrap_or_default();
    // The "total" line: "100.00 0.000018 18 257 1 total": the calls column
    // is the 4th field.
    let calls = s
        .lines()
        .find(|l| l.trim_end().ends_with("total"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (o, calls)
}

fn fallocate_x(file: &Path) -> Command {
    let mut c = Command::new("fallocate");
    c.args(["-x", "-l", "256M"]).arg(file);
    c
}

/// Checks that `file` is 256 MiB of zeros, allocated.
fn check_zeros(file: &Path, fs: &str) {
    use std::io::Read;
    let meta = std::fs::metadata(file).expect("stat the file");
    assert_eq!(meta.len(), 256 << 20, "size on {fs}");
    assert!(
        meta.blocks() * 512 >= 256 << 20,
        "on {fs} only {} bytes are allocated",
        meta.blocks() * 512
    );
    let mut f = std::fs::File::open(file).expect("open the file");
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf).expect("read the file");
        if n == 0 {
            break;
        }
        assert!(
            buf[..n].iter().all(|&b| b == 0),
            "non-zero byte near {total} on {fs}"
        );
        total += n as u64;
    }
    assert_eq!(total, 256 << 20, "bytes read on {fs}");
}

common::per_fs! {
    fn fallocate_x_256m_takes_hundreds_of_writes_not_65536(fs) on [ext4_noextents, sshfs] {
        let test = "fallocate_x_256m_takes_hundreds_of_writes_not_65536";
        let Some(prefix) = capi_common::prefix(test) else {
            return;
        };
        let lib = preload_lib(&prefix);
        let _g = fs.lock();
        let dir = fs.tempdir();
        let file = dir.path().join("preloaded");
        let (o, calls) = counted(fallocate_x(&file), Some(&lib));
        assert!(
            o.status.success(),
            "fallocate -x with the preload on {}: {}",
            fs.name,
            common::output_text(&o)
        );
        // At least the refused fallocate: 0 would mean strace's summary
        // was not read.
        assert!(
            (1..=300).contains(&calls),
            "{}: {calls} write-type syscalls with the preload (at most 300)",
            fs.name
        );
        check_zeros(&file, &fs.name);
        std::fs::remove_file(&file).expect("remove");

        // FSPACE_PRELOAD_VERBOSE: each call says what it did.
        let small = dir.path().join("verbose");
        let o = Command::new("fallocate")
            .args(["-x", "-l", "1M"])
            .arg(&small)
            .env("LD_PRELOAD", &lib)
            .env("FSPACE_PRELOAD_VERBOSE", "1")
            .output()
            .expect("fallocate -x");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("fspace-preload: posix_fallocate(fd ")
                && err.contains("zero-fill, 1048576 bytes of zeros written")
                && err.contains("verbose"),
            "{}: {err}",
            fs.name
        );
        std::fs::remove_file(&small).expect("remove");

        // The baseline, to show what the preload replaces.
        let file = dir.path().join("glibc");
        let (o, glibc_calls) = counted(fallocate_x(&file), None);
        assert!(
            o.status.success(),
            "fallocate -x on {}: {}",
            fs.name,
            common::output_text(&o)
        );
        assert!(
            glibc_calls >= 65_536,
            "{}: glibc's emulation made only {glibc_calls} write-type syscalls",
            fs.name
        );
        check_zeros(&file, &fs.name);
        eprintln!("{}: fallocate -x -l 256M: {calls} write-type syscalls with the preload, {glibc_calls} with glibc", fs.name);
    }
}

/// Compiles the cases program, plain and with 64-bit file offsets (which
/// makes glibc's headers call `posix_fallocate64`).
fn cases_programs(out: &Path) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/preload/posix_fallocate_cases.c");
    [("cases", None), ("cases64", Some("-D_FILE_OFFSET_BITS=64"))]
        .into_iter()
        .map(|(name, def)| {
            let exe = out.join(name);
            let mut cmd = Command::new("cc");
            cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"]);
            cmd.args(def);
            cmd.arg(&src).arg("-o").arg(&exe);
            let o = cmd.output().expect("cc");
            assert!(o.status.success(), "{}", common::output_text(&o));
            exe
        })
        .collect()
}

common::per_fs! {
    fn preload_keeps_glibc_contract_and_every_data_byte(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs] {
        let test = "preload_keeps_glibc_contract_and_every_data_byte";
        let Some(prefix) = capi_common::prefix(test) else {
            return;
        };
        let lib = preload_lib(&prefix);
        let out = tempfile::tempdir().expect("build directory");
        for exe in cases_programs(out.path()) {
            let _g = fs.lock();
            let dir = fs.tempdir();
            let run = |preload: bool| {
                let (o, calls) = counted(
                    Command::new(&exe).tap_arg(dir.path()),
                    preload.then_some(lib.as_path()),
                );
                assert!(
                    o.status.success(),
                    "{} on {}: {}",
                    exe.display(),
                    fs.name,
                    common::output_text(&o)
                );
                let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
                (stdout, calls)
            };
            let (glibc, glibc_calls) = run(false);
            let (ours, our_calls) = run(true);
            let compared = |s: &str| -> Vec<String> {
                s.lines()
                    .filter(|l| !l.starts_with("allocated "))
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(
                compared(&ours),
                compared(&glibc),
                "{} on {}: the preload and glibc differ",
                exe.display(),
                fs.name
            );
            assert!(
                ours.contains("keeps_data rc=0 (ok) errno_kept=1 size=3178496 bytes=kept"),
                "{ours}"
            );
            let allocated: u64 = ours
                .lines()
                .find_map(|l| l.strip_prefix("allocated "))
                .and_then(|n| n.trim().parse().ok())
                .expect("allocated line");
            assert!(
                allocated >= 3178496 - (64 << 10),
                "{}: only {allocated} bytes allocated after posix_fallocate",
                fs.name
            );
            if fs.is(&["ext4-noextents", "sshfs"]) {
                // glibc writes a byte per 4 KiB block (1 MiB + 3 MiB ranges);
                // the preload a few 1 MiB writes.
                assert!(
                    glibc_calls > 700,
                    "{}: glibc made {glibc_calls} write-type calls",
                    fs.name
                );
                assert!(
                    (1..40).contains(&our_calls),
                    "{}: the preload made {our_calls} write-type calls (is it loaded?)",
                    fs.name
                );
            }

        }
    }
}

/// `Command::arg` by value, for building a command in an expression.
trait TapArg {
    fn tap_arg(self, a: &Path) -> Command;
}

impl TapArg for Command {
    fn tap_arg(mut self, a: &Path) -> Command {
        self.arg(a);
        self
    }
}
