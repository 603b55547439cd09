#!/usr/bin/env bash
# The whole test suite: formatting, lints, docs, unit tests, and the
# integration tests and the Python package's tests (ci/python.sh) on the
# real filesystem matrix (ext4, xfs, btrfs, ext4-noextents, tmpfs, sshfs, and
# ext4-fast and xfs-fast, which the log's tests name; see ci/matrix.sh),
# which this script mounts and always unmounts again, even when a test fails.
#
# As root it installs what it needs (Debian packages) and builds the matrix.
# Without root there is no matrix: the per-filesystem cases are reported as
# ignored, and the tests that need none run on the current directory's filesystem.
# FSPACE_REQUIRE_MATRIX=1 turns a missing filesystem into a failure (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# rustup's cargo, also when the caller's PATH lacks it (sudo, CI).
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null || { echo "test: cargo not found (install Rust with rustup)" >&2; exit 1; }
# Each phase's line says how long the run has taken so far (the suite's
# time budget is 40 minutes: docs/testing.md, "Time").
phase() { printf '== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

if [ "$(id -u)" = 0 ]; then
    ci/matrix.sh deps
elif [ "${FSPACE_REQUIRE_MATRIX:-0}" = 1 ]; then
    echo "test: FSPACE_REQUIRE_MATRIX=1 needs root to build the filesystem matrix" >&2
    exit 1
fi

phase "cargo fmt --check"
cargo fmt --all --check
phase "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
phase "cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
phase "MSRV: the workspace checks with its declared rust-version"
# rustup fetches that toolchain (minimal profile) when it is missing; its
# own target directory, so that the main build's artifacts stay.
msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ -n "$msrv" ] || { echo "test: no rust-version in Cargo.toml" >&2; exit 1; }
case "$msrv" in *.*.*) ;; *) msrv="$msrv.0" ;; esac  # rustup names 1.89 as 1.89.0
rustup toolchain list | grep -q "^$msrv" || rustup toolchain install "$msrv" --profile minimal
msrv_target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/msrv
# The libraries and programs, which is what the rust-version promises to
# whoever builds them; the tests are ours, checked with the current Rust.
CARGO_TARGET_DIR="$msrv_target" cargo "+$msrv" check --workspace --lib --bins --quiet
phase "build"
cargo test --workspace --no-run --quiet
phase "cargo package: the publishable crates build from their tarballs"
# cargo verifies each tarball against the others through a local registry,
# and keeps what it unpacked from there under the registry's sources by
# name and version: a second run would build against the first run's
# sources of the same version. Removed first, so each run builds its own.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
for crate in fspace fspace-test-kit fspace-cli; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done
# The library alone first: it must build from its tarball with crates.io
# only (no build script, the test kit left out: issue 41).
cargo package --quiet --allow-dirty -p fspace
cargo package --quiet --allow-dirty -p fspace-test-kit -p fspace -p fspace-cli
phase "C API: build and install into a scratch prefix"
make -s -C crates/fspace-capi build CARGO="cargo --quiet"
FSPACE_CAPI_PREFIX=$(mktemp -d)
export FSPACE_CAPI_PREFIX
trap 'rm -rf "$FSPACE_CAPI_PREFIX"' EXIT
make -s -C crates/fspace-capi install PREFIX="$FSPACE_CAPI_PREFIX"
# Both from the dev profile's libfspace_capi.a (its debug information gives
# abidw the types), linked as the installed library is (the Makefile's
# `shared`: libfspace.map's symbol versions, the SONAME).
debug_lib=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/libfspace_capi.a
phase "C API: the ABI against its recorded baseline (ci/abi.sh)"
cargo build --quiet -p fspace-capi --lib
make -s -C crates/fspace-capi shared STATIC="$debug_lib" OUT="$FSPACE_CAPI_PREFIX/abi-libfspace.so"
ci/abi.sh check "$FSPACE_CAPI_PREFIX/abi-libfspace.so"
phase "C API: the ABI test's library, whose structs grew (docs/capi.md)"
# Only fspace-capi recompiles; the next cargo command rebuilds it without
# the feature. Kept beside the prefix.
cargo build --quiet -p fspace-capi --features abi-grown-test --lib
FSPACE_CAPI_GROWN="$FSPACE_CAPI_PREFIX/grown"
mkdir -p "$FSPACE_CAPI_GROWN"
make -s -C crates/fspace-capi shared STATIC="$debug_lib" OUT="$FSPACE_CAPI_GROWN/libfspace.so.0"
export FSPACE_CAPI_GROWN

if [ "$(id -u)" = 0 ]; then
    trap 'ci/matrix.sh down || echo "test: matrix teardown failed" >&2; rm -rf "$FSPACE_CAPI_PREFIX"' EXIT
    trap 'exit 130' INT TERM
    phase "filesystem matrix"
    # The last two lines: FSPACE_TEST_BIGALLOC=..., FSPACE_TEST_MOUNTS=...
    while read -r line; do
        export "${line?}"
        echo "$line"
    done < <(ci/matrix.sh up | tail -n 2)
else
    echo "test: not root: no filesystem matrix; per-filesystem cases are ignored; the rest runs on $(pwd)'s filesystem" >&2
fi

FSPACE_SKIP_LOG=$(mktemp)
export FSPACE_SKIP_LOG
# Saved `fspace probe --save` results steer the auto policy: the tests see
# none of the caller's (an empty state directory of their own).
FSPACE_STATE_DIR=$(mktemp -d)
export FSPACE_STATE_DIR
phase "cargo test"
status=0
# A test of a filesystem that is not mounted is marked ignored when it is
# built (crates/test-kit/src/build.rs, the build script of fspace-tests and
# the CLI): libtest prints it as "test NAME ... ignored, REASON" and counts
# it. Skips decided inside a test (no root, no strace, ...; the library's
# unit tests on the matrix, whose package has no build script) go to
# $FSPACE_SKIP_LOG. Both are listed below.
TEST_LOG=$(mktemp)
cargo test --workspace --no-fail-fast 2>&1 | tee "$TEST_LOG" || status=$?
sed -n 's/^test \(.*\) \.\.\. ignored, \(.*\)$/IGNORED \1: \2/p' "$TEST_LOG" >>"$FSPACE_SKIP_LOG"

# The Debian package, built and installed on this machine, checked, then
# purged (ci/deb.sh); it needs root and the matrix's ext4-noextents mount.
ext3=$(tr ',' '\n' <<<"${FSPACE_TEST_MOUNTS:-}" | sed -n 's/^ext4-noextents=//p')
if [ "$(id -u)" = 0 ] && [ -n "$ext3" ]; then
    phase "Debian package: build, install, check, purge"
    if ! { ci/deb.sh tools && deb=$(ci/deb.sh build) && ci/deb.sh check "$deb" "$ext3"; }; then
        echo "test: the Debian package's check failed" >&2
        status=1
    fi
else
    echo "SKIPPED the Debian package's check: needs root and the ext4-noextents mount" >>"$FSPACE_SKIP_LOG"
fi

# The Python package (crates/fspace-py): its wheel built by maturin into a
# fresh venv, and pytest on the same matrix (ci/python.sh; about 1 minute
# once the library is built in release).
if [ "$(id -u)" = 0 ]; then
    phase "python package"
    ci/python.sh || status=1
else
    echo "test: not root: no filesystem matrix; the Python package's tests (ci/python.sh) are not run" >&2
fi
if [ -s "$FSPACE_SKIP_LOG" ]; then
    phase "skipped"
    sort -u "$FSPACE_SKIP_LOG"
else
    phase "skipped: nothing"
fi
rm -f "$FSPACE_SKIP_LOG" "$TEST_LOG"
rm -rf "$FSPACE_STATE_DIR" "$FSPACE_CAPI_PREFIX"
phase "done (exit status $status)"
exit $status
