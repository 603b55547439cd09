//! Nothing: this crate holds the library's integration tests (`tests/`).
//!
//! They live here, not in `crates/fspace`, because they need a build
//! script: one that marks the `per_fs!` tests of unmounted filesystems as
//! ignored (`fspace_test_kit::build`) and one that turns the Rust examples
//! of README.md and docs/*.md into code (`build.rs`). In the library's own
//! package that script, and its dependency on the test kit, would be built
//! by every crate that depends on `fspace`.
