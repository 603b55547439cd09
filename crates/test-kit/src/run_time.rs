//! Per-filesystem tests decided when they run, for the one package that
//! cannot have the build script [`crate::per_fs!`] relies on: the library itself,
//! whose build script every crate depending on `fspace` would build. The
//! log's unit tests on the matrix (`src/wal/tests/faults.rs`) use it.

/// [`crate::per_fs!`] (its one-parameter forms) for tests in a package without the
/// build script that marks a missing filesystem's test ignored: the
/// library's own unit tests. Each test looks for its filesystem when it
/// runs ([`crate::fs_or_skip`]): a missing one fails under
/// `FSPACE_REQUIRE_MATRIX=1`; otherwise the test records the skip and
/// returns, and libtest counts it as passed.
#[macro_export]
macro_rules! per_fs_at_run_time {
    ($(#[$attr:meta])* fn $case:ident($fs:ident) $body:block) => {
        $crate::per_fs_at_run_time! {
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

            $( $crate::__fs_name! { $name __per_fs_at_run_time_one $name } )+
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __per_fs_at_run_time_one {
    ($fs:literal $why:literal $name:ident) => {
        #[test]
        fn $name() {
            let test = concat!(module_path!(), "::", stringify!($name));
            if let Some(fs) = $crate::fs_or_skip(test, $fs, $why) {
                case(&fs);
            }
        }
    };
}
