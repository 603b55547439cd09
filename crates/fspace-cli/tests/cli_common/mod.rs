//! What the `fspace` binary's test files share.

#![allow(dead_code)] // each test binary uses its own part

use fspace_test_kit as common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::SystemTime;

pub use common::output_text as text;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fspace")
}

pub fn fspace(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("run fspace")
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// Length, content and mtime of a file, to prove it was not touched.
pub fn snapshot(p: &Path) -> (u64, Vec<u8>, SystemTime) {
    let m = std::fs::metadata(p).unwrap();
    (m.len(), std::fs::read(p).unwrap(), m.modified().unwrap())
}

/// Whether `t` says `w`, allowing for the wrapping to 80 columns (a line
/// break inside the phrase, or inside a long path).
pub fn has(t: &str, w: &str) -> bool {
    common::unwrapped(t).contains(&common::unwrapped(w))
}

pub fn expect_failure(args: &[&str], words: &[&str]) -> String {
    let o = Command::new(bin()).args(args).output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {t}");
    // The error may be wrapped to 80 columns.
    for w in words {
        assert!(has(&t, w), "{args:?}: expected {w:?} in: {t}");
    }
    t
}

pub fn write_random(p: &Path, len: usize, seed: u64) {
    std::fs::write(p, common::random_bytes(seed, len)).unwrap();
}

pub fn temp_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".fspace-tmp-"))
        .collect()
}
