#!/usr/bin/env bash
# The guard rails CI runs after the test suite (.ci/run): cargo deny over
# the dependency graph (deny.toml) and every fuzz target for a fixed time
# (ci/fuzz.sh). Apart from ci/test.sh so that the suite's time stays its
# own; both install what they need from crates.io when it is missing
# (cargo-deny, cargo-fuzz; debug builds, about a minute once).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
echo "== cargo deny: licences, bans, sources (deny.toml), advisories where reachable"
# --debug: half the build time of a release build, and the check is small.
command -v cargo-deny >/dev/null || cargo install --locked --quiet --debug cargo-deny --version 0.20.2
# The advisory database is a git repository on GitHub; where it cannot be
# fetched (this project's CI machines reach package registries only) the
# other checks still run, and the log says the advisories were not checked.
# A time limit: where packets to github.com are dropped, not refused, the
# fetch would otherwise wait for TCP to give up.
if timeout 60 cargo deny --log-level error fetch db >/dev/null 2>&1; then
    cargo deny --log-level error check
else
    echo "cargo deny: advisories NOT checked: the advisory database (github.com/RustSec/advisory-db) is unreachable"
    cargo deny --log-level error check bans licenses sources
fi
echo "== fuzz: every target of fuzz/ for ${FSPACE_FUZZ_SECONDS:=15} s (ci/fuzz.sh)"
ci/fuzz.sh "$FSPACE_FUZZ_SECONDS"
