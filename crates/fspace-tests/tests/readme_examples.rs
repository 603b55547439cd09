//! Every Rust example of README.md and docs/*.md compiles (build.rs turns
//! each ```rust block into a module) and runs, here, in a scratch directory
//! on the matrix's ext4 (or the system's temporary directory outside the
//! matrix) holding the files the examples name: `vm.img`, `backup/`,
//! `wal/`, `db/`.

use fspace_test_kit as common;

include!(concat!(env!("OUT_DIR"), "/readme_examples.rs"));

#[test]
fn every_rust_example_in_the_readme_and_docs_runs() {
    assert!(EXAMPLES.len() >= 4, "the README's examples were not found");
    // Outside the matrix the examples still run (in a temporary directory).
    let fs = common::all().into_iter().find(|f| f.name == "ext4");
    assert!(
        fs.is_some() || !common::require_matrix(),
        "ext4 is missing from FSPACE_TEST_MOUNTS and FSPACE_REQUIRE_MATRIX=1"
    );
    let dir = match &fs {
        Some(fs) => fs.tempdir(),
        None => tempfile::tempdir().unwrap(),
    };
    let _g = fs.as_ref().map(fspace_test_kit::Fs::lock);
    // The only test of this binary: changing the working directory touches
    // no other test.
    std::env::set_current_dir(dir.path()).unwrap();
    for d in ["backup", "wal", "db"] {
        std::fs::create_dir(d).unwrap();
    }
    let mut img = common::random_bytes(7, 1 << 20);
    img.resize(4 << 20, 0);
    img.extend(common::random_bytes(8, 1 << 20));
    std::fs::write("vm.img", &img).unwrap();
    for (name, run) in EXAMPLES {
        eprintln!("running {name}");
        if let Err(e) = run() {
            panic!("{name}: {e}");
        }
    }
}
