//! What the C API's test binaries share.

use fspace_test_kit as common;
use std::path::PathBuf;

/// The installed prefix, or `None` (reported as skipped; a failure under
/// `FSPACE_REQUIRE_MATRIX=1`).
pub fn prefix(test: &str) -> Option<PathBuf> {
    match std::env::var_os("FSPACE_CAPI_PREFIX") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            assert!(
                !common::require_matrix(),
                "{test}: FSPACE_CAPI_PREFIX is not set: run the suite with ci/test.sh, which installs the C API"
            );
            common::skipped(
                test,
                "all",
                "FSPACE_CAPI_PREFIX not set (ci/test.sh installs the C API and sets it)",
            );
            None
        }
    }
}
