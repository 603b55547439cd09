//! Turns every ```rust example of the repository's README.md and docs/*.md
//! into code the test `tests/readme_examples.rs` compiles and runs: each
//! block goes into a module of its own, with a `run()` that calls the
//! block's `fn NAME() -> fspace::Result<()>`.
//!
//! It also marks the integration tests of filesystems that are not mounted
//! as ignored (`fspace_test_kit::build`).
//!
//! Both live here, in a test crate that is never published, and not in
//! `crates/fspace`: there every crate depending on the library would build
//! the test kit and run a script reading files outside the crate.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    fspace_test_kit::build::emit();
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../..");
    let mut files = vec![root.join("README.md")];
    if let Ok(dir) = std::fs::read_dir(root.join("docs")) {
        let mut docs: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        docs.sort();
        files.extend(docs);
    }
    // The folder too, not only its files: a new docs/*.md reruns this.
    println!("cargo:rerun-if-changed={}", root.join("docs").display());
    println!("cargo:rerun-if-changed=build.rs");
    let mut code = String::new();
    let mut list = String::new();
    let mut n = 0;
    for f in files.iter().filter(|f| f.exists()) {
        println!("cargo:rerun-if-changed={}", f.display());
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (line, block) in rust_blocks(&text) {
            n += 1;
            let name = entry_point(&block).unwrap_or_else(|| {
                panic!(
                    "{}:{line}: a rust example needs a `fn NAME() -> fspace::Result<()>` to run",
                    f.display()
                )
            });
            let _ = writeln!(
                code,
                "#[allow(dead_code, unused_imports, clippy::all)]\nmod example_{n} {{\n{block}\npub(super) fn run() -> fspace::Result<()> {{ {name}() }}\n}}"
            );
            let _ = writeln!(
                list,
                "    (\"{}:{line} {name}\", example_{n}::run),",
                rel(f, &root)
            );
        }
    }
    let _ = writeln!(
        code,
        "/// An example's entry point.\npub type Example = fn() -> fspace::Result<()>;\n/// Every example: (where it is, its entry point).\npub const EXAMPLES: &[(&str, Example)] = &[\n{list}];"
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::write(out.join("readme_examples.rs"), code) {
        panic!("writing readme_examples.rs: {e}");
    }
}

/// The ```rust blocks of a Markdown text, with the line each starts on.
fn rust_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = vec![];
    let mut cur: Option<(usize, String)> = None;
    for (i, l) in text.lines().enumerate() {
        match &mut cur {
            None if l.trim_start() == "```rust" => cur = Some((i + 1, String::new())),
            Some(_) if l.trim_start() == "```" => blocks.extend(cur.take()),
            Some((_, b)) => {
                b.push_str(l);
                b.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// The name of the block's `fn NAME() -> fspace::Result<()>`.
fn entry_point(block: &str) -> Option<String> {
    block.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("fn ")?;
        let (name, sig) = rest.split_once("()")?;
        sig.trim_start()
            .starts_with("-> fspace::Result<()>")
            .then(|| name.to_string())
    })
}

fn rel(f: &Path, root: &Path) -> String {
    f.strip_prefix(root)
        .unwrap_or(f)
        .to_string_lossy()
        .into_owned()
}
