//! The filesystem matrix, as tests see it.
//!
//! `FSPACE_TEST_MOUNTS=name=path,...` (made by `ci/matrix.sh up`) lists the
//! mounted filesystems. Without it, tests run on the current directory's
//! filesystem only, under the name `cwd`. [`per_fs!`] makes one `#[test]`
//! per case and filesystem; a filesystem that is not mounted makes its test
//! ignored, with the reason, in libtest's own count; under
//! `FSPACE_REQUIRE_MATRIX=1` it makes the test fail instead. That takes a
//! build script in the test's package (`build`); the library's own unit
//! tests, whose package has none, use [`per_fs_at_run_time!`].
//!
//! [`build`] is what the test-bearing packages' build scripts call (with
//! this crate's default features off, it has no dependencies); the rest is
//! the `kit` feature, for the tests themselves.

pub mod build;

#[cfg(feature = "kit")]
pub mod engines;
#[cfg(feature = "kit")]
mod kit;
#[cfg(feature = "kit")]
pub mod loop_fs;
#[cfg(feature = "kit")]
mod run_time;
#[cfg(feature = "kit")]
pub use kit::*;
