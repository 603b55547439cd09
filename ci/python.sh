#!/usr/bin/env bash
# The Python package's tests, against the wheel as a user installs it:
#   1. a fresh venv in a temporary directory (python3 -m venv);
#   2. maturin in it, which builds the abi3 wheel of crates/fspace-py
#      (release; maturin's manylinux check, which passes: the wheel is
#      tagged cp39-abi3-manylinux_2_*_x86_64);
#   3. that wheel, pytest and mypy installed into the venv (not an editable
#      install: `import fspace` must find the installed copy);
#   4. the `fspace` command built (release) and put on PATH: the crash-test
#      tests record their traces with it;
#   5. pytest on crates/fspace-py/tests, per filesystem of
#      FSPACE_TEST_MOUNTS (ci/matrix.sh up); FSPACE_REQUIRE_MATRIX=1 turns a
#      missing filesystem into a failure.
# ci/test.sh runs it after the cargo tests on the matrix it mounted. Skipped
# cases are listed at the end, and appended to $FSPACE_SKIP_LOG when set.
# About 1 minute with the library already built in release, 3-4 from cold.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
# Pinned so that a run builds the wheel as the last one did.
MATURIN_VERSION=${MATURIN_VERSION:-1.16.0}
PYTEST_VERSION=${PYTEST_VERSION:-8.3.5}
PYTHON=${PYTHON:-python3}

command -v "$PYTHON" >/dev/null || { echo "python: $PYTHON not found" >&2; exit 1; }
# For tests/test_stubs.py: stubtest checks the .pyi stubs against the module.
# mypy 2 needs Python 3.10; 1.19.1 is the last for 3.9 (PYTHON=python3.9).
if "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    MYPY_VERSION=${MYPY_VERSION:-2.4.1}
else
    MYPY_VERSION=${MYPY_VERSION:-1.19.1}
fi
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "== python: venv in $WORK ($("$PYTHON" --version))"
"$PYTHON" -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
"$PY" -m pip install --quiet --disable-pip-version-check \
    "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION"

echo "== python: build the wheel (maturin $MATURIN_VERSION)"
"$WORK/venv/bin/maturin" build --release --quiet -m crates/fspace-py/Cargo.toml \
    -o "$WORK/wheels" >&2
wheels=("$WORK"/wheels/fspace-*.whl)
if [ ${#wheels[@]} != 1 ] || [ ! -f "${wheels[0]}" ]; then
    echo "python: expected one wheel, found: ${wheels[*]}" >&2
    exit 1
fi
wheel=${wheels[0]}
case "$(basename "$wheel")" in
    fspace-*-cp39-abi3-manylinux*_x86_64.whl | fspace-*-cp39-abi3-linux_x86_64.whl) ;;
    *) echo "python: unexpected wheel tag: $(basename "$wheel")" >&2; exit 1 ;;
esac
echo "wheel: $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"
"$PY" -m pip install --quiet --disable-pip-version-check "$wheel"

# Run from outside the source tree, and check that the installed package is
# the one imported.
cd "$WORK"
"$PY" - "$WORK/venv" <<'EOF'
import sys, fspace
venv = sys.argv[1]
assert fspace.__file__.startswith(venv), f"fspace imported from {fspace.__file__}, not the venv"
print(f"fspace {fspace.__version__} from {fspace._fspace.__file__}")
EOF

# The crash test's functions check traces that the `fspace` command records
# (its preload is inside the binary): the tests and docs/python.md's example
# find it on PATH. ci/test.sh's Debian package step has built it already.
echo "== python: the fspace command, for the crash-test traces (cargo build --release)"
(cd "$REPO" && cargo build --release --quiet -p fspace-cli)
target_dir=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export PATH="$target_dir/release:$PATH"

echo "== python: pytest"
status=0
"$PY" -m pytest "$REPO/crates/fspace-py/tests" -p no:cacheprovider -rs \
    --basetemp="$WORK/pytest" 2>&1 | tee "$WORK/pytest.log" || status=$?
if [ -n "${FSPACE_SKIP_LOG:-}" ]; then
    sed -n 's/^SKIPPED \[[0-9]*\] \(.*\)$/PYTHON SKIPPED \1/p' "$WORK/pytest.log" >>"$FSPACE_SKIP_LOG"
fi
exit $status
