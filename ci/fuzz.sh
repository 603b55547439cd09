#!/usr/bin/env bash
# The fuzz targets of fuzz/ (cargo-fuzz, libFuzzer, on the nightly toolchain).
#
#   ci/fuzz.sh [SECONDS]          every target for SECONDS (default 20) on its
#                                 corpus in fuzz/corpus/; fails on a finding
#   ci/fuzz.sh long SECONDS DIR   every target at once for SECONDS, niced, each
#                                 on a scratch copy of its corpus; logs and the
#                                 command go to DIR (a bench/runs/ folder)
#
# A finding leaves its input in fuzz/artifacts/TARGET/; replay it with
# `cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...`.
# Installs cargo-fuzz (crates.io) and the nightly toolchain when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
# --debug: it builds in half the time and only drives the build.
command -v cargo-fuzz >/dev/null || cargo install --locked --quiet --debug cargo-fuzz --version 0.13.2
targets=$(sed -n 's/^name = "\(.*\)"/\1/p' fuzz/Cargo.toml | grep -v '^fspace-fuzz$')
log=$(mktemp)
(cd fuzz && cargo +nightly fuzz build > "$log" 2>&1) || { cat "$log" >&2; echo "fuzz: build failed" >&2; exit 1; }
rm -f "$log"

if [ "${1:-}" = long ]; then
    secs=${2:?seconds}; out=${3:?output folder}
    mkdir -p "$out"
    { echo "ci/fuzz.sh long $secs $out"; echo "commit: $(git rev-parse HEAD)"; date -u; nproc; } > "$out/command.txt"
    pids=()
    for t in $targets; do
        scratch=$(mktemp -d); cp -r "fuzz/corpus/$t/." "$scratch/" 2>/dev/null || true
        (cd fuzz && nice -n 19 cargo +nightly fuzz run "$t" "$scratch" -- \
            -max_total_time="$secs" -print_final_stats=1 > "../$out/$t.log" 2>&1
         echo "exit=$?" >> "../$out/$t.log") &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    exit 0
fi

secs=${1:-20}
fail=0
for t in $targets; do
    log=$(mktemp); scratch=$(mktemp -d)
    # On a scratch copy of the corpus: what a short run adds is not kept
    # (the tree's corpus grows only from the long runs, minimised).
    cp -r "fuzz/corpus/$t/." "$scratch/" 2>/dev/null || true
    if (cd fuzz && cargo +nightly fuzz run "$t" "$scratch" -- -max_total_time="$secs" > "$log" 2>&1); then
        echo "fuzz: $t: $(grep -E '^Done [0-9]+ runs' "$log" | tail -1)"
    else
        echo "fuzz: $t: FOUND something (input in fuzz/artifacts/$t/):" >&2
        grep -E 'panicked|ERROR|SUMMARY' -A3 "$log" | head -20 >&2
        fail=1
    fi
    rm -rf "$log" "$scratch"
done
exit "$fail"
