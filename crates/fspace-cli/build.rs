//! Marks the integration tests of filesystems that are not mounted as
//! ignored (`fspace_test_kit::build`), and compiles the crashtest recording
//! preload (`src/crashtest/record.c`) into `$OUT_DIR/libfspace-record.so`,
//! which the binary carries with `include_bytes!`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    fspace_test_kit::build::emit();
    build_record_preload();
}

fn build_record_preload() {
    const SRC: &str = "src/crashtest/record.c";
    println!("cargo:rerun-if-changed={SRC}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let so = out.join("libfspace-record.so");
    // A shared object, not the static archive cc::Build::compile makes: the
    // preload is loaded into other programs, never linked into fspace.
    let mut cmd: Command = cc::Build::new()
        .cargo_metadata(false)
        .get_compiler()
        .to_command();
    cmd.args([
        "-shared",
        "-fPIC",
        "-O2",
        // It is carried inside the fspace binary: no debug information.
        "-g0",
        "-D_GNU_SOURCE",
        "-Wall",
        "-Wextra",
    ])
    .arg("-o")
    .arg(&so)
    .arg(SRC)
    .args(["-ldl", "-pthread"]);
    let result = cmd
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler ({cmd:?}): {e}"));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "compiling {SRC} failed: {cmd:?} exited {}\n{stderr}",
        result.status
    );
    // Cargo shows a build script's output only when it fails: the compiler's
    // warnings would go unseen.
    for line in stderr.lines() {
        println!("cargo:warning={line}");
    }
}
