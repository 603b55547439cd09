# The little of GNU coreutils' tests/init.sh that the ported cp tests use,
# and `cp` itself standing for `fspace copy`. Sourced by each test, which
# runs in an empty directory on the filesystem under test with FSPACE (the
# binary) and OTHER_DIR (a directory on another filesystem) set.
#
# Adaptations every test shares (docs/copy.md, "GNU cp's tests"):
# - `cp SRC DST` is `fspace copy --force SRC DST`: cp writes over an existing
#   destination; fspace refuses to unless told (--force).
# - a bare `--reflink` is cp's `--reflink=always`; fspace's --reflink always
#   takes a value, so the wrapper spells it out.
# - `--debug` (cp's report of how it copied) is dropped; the tests that read
#   that report look at `fspace copy --json` instead.
set -u
fail=0
export LC_ALL=C

# `cp` is a program on PATH, not a function, so that `timeout 10 cp ...`
# runs fspace too.
_bin=$(mktemp -d)
cleanup_() { :; }
trap 'cleanup_; rm -rf "$_bin"' EXIT
cat > "$_bin/cp" <<'CP'
#!/bin/bash
args=()
for a in "$@"; do
    case $a in
        --reflink) args+=(--reflink=always) ;;
        --debug) ;;
        *) args+=("$a") ;;
    esac
done
exec "$FSPACE" copy --force "${args[@]}" > fspace-copy.out
CP
chmod +x "$_bin/cp"
PATH="$_bin:$PATH"

framework_failure_() { echo "framework failure (line ${BASH_LINENO[0]})" >&2; exit 99; }
skip_() { echo "skip: $*" >&2; exit 77; }
fail_() { echo "FAIL: $*" >&2; exit 1; }
warn_() { echo "warning: $*" >&2; }
returns_() { local want=$1; shift; "$@"; test $? = "$want"; }
compare() { cmp "$@"; }
Exit() { exit "$1"; }
require_sparse_support_() { :; }

# Whether SEEK_DATA sees the hole at the start of a file: coreutils'
# seek_data_capable_. sshfs (the kernel's generic SEEK_DATA) says no.
seek_data_capable_() {
    python3 - "$1" <<'PY'
import os, sys
p = sys.argv[1]
with open(p, "r+b") as f:
    f.truncate(0)
    f.truncate(1 << 20)
    f.seek((1 << 20) - 4096)
    f.write(b"x" * 4096)
    f.flush()
    os.fsync(f.fileno())
    sys.exit(0 if os.lseek(f.fileno(), 0, os.SEEK_DATA) > 0 else 1)
PY
}

# Whether fallocate can reserve space here without changing the size.
fallocate_capable_() {
    touch falloc.test && fallocate -l 1 -o 1 -n falloc.test 2>/dev/null
    local r=$?
    rm -f falloc.test
    return $r
}
