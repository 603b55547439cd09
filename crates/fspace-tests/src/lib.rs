//! Nothing: this crate holds the library's integration tests (`tests/`).
//!
//! They live here, not in `crates/fspace`, because they need a build
//! script: one that marks the `per_fs!` tests of unmounted filesystems as
//! ignored (`fspace_test_kit::build`) and one that turns the Rust examples
//! of README.md and docs/*.md into code (`build.rs`). In the library's own
//! package that script, and its dependency on the test kit, would be built
//! by every crate that depends on `fspace`.
//!
//! Its doctests are the ```rust blocks of README.md and docs/*.md (below),
//! compiled against `fspace` as a caller's code is; the integration test
//! `readme_examples` runs them.

/// The ```rust blocks of README.md and docs/*.md, compiled as doctests
/// (`crates/fspace-cli/tests/docs.rs` checks that every file is listed;
/// they reach `fspace` as a dev-dependency, as doctests may).
#[cfg(doctest)]
pub mod markdown_doctests {
    macro_rules! doctest {
        ($name:ident, $file:literal) => {
            #[doc = include_str!($file)]
            pub struct $name;
        };
    }
    doctest!(Readme, "../../../README.md");
    doctest!(DocsIndex, "../../../docs/README.md");
    doctest!(Cli, "../../../docs/cli.md");
    doctest!(Library, "../../../docs/library.md");
    doctest!(Api, "../../../docs/api.md");
    doctest!(Capi, "../../../docs/capi.md");
    doctest!(Copy, "../../../docs/copy.md");
    doctest!(Design, "../../../docs/design.md");
    doctest!(Engines, "../../../docs/engines.md");
    doctest!(Filesystems, "../../../docs/filesystems.md");
    doctest!(Install, "../../../docs/install.md");
    doctest!(Measurements, "../../../docs/measurements.md");
    doctest!(Monitoring, "../../../docs/monitoring.md");
    doctest!(Probe, "../../../docs/probe.md");
    doctest!(ProbeJson, "../../../docs/probe-json.md");
    doctest!(Python, "../../../docs/python.md");
    doctest!(Testing, "../../../docs/testing.md");
    doctest!(Wal, "../../../docs/wal.md");
    doctest!(WalFormat, "../../../docs/wal-format.md");
    doctest!(Untorn, "../../../docs/untorn.md");
    doctest!(Crashtest, "../../../docs/crashtest.md");
}
