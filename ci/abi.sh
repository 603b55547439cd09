#!/usr/bin/env bash
# The C ABI of libfspace.so.0 against its recorded baseline, with
# libabigail (Debian's abigail-tools: abidw, abidiff).
#
#   ci/abi.sh check LIB     compare LIB with crates/fspace-capi/abi/libfspace.abi;
#                           fails on a change that breaks programs built
#                           against the baseline, unless LIB's SONAME moved
#   ci/abi.sh record LIB    write LIB's ABI as the new baseline (after a
#                           release, or with the SONAME moved)
#
# LIB must carry debug information (the types of the functions' arguments):
# ci/test.sh links it from the debug build's libfspace_capi.a with the
# Makefile's `shared` target, as the installed library is linked.
#
# What counts (docs/capi.md, "Structs that grow"): a removed or renamed
# function or symbol version, a changed function signature, and a changed
# size or layout of a public struct fail; added functions and a struct
# grown at its end (a field after the last one) pass. The opaque handles'
# insides (fspace_wal, fspace_grow_report, ...) are private: their changes
# are not ABI changes (abi/suppressions.ini). No public struct may have
# padding (ci/abi_padding.py): it is spelled out as `reserved` fields, so
# that every field added later grows sizeof. The types carry their Rust
# paths (fspace_capi::resize::fspace_grow_summary): moving a struct to
# another module shows as a change; read the report and record again.
set -euo pipefail
cd "$(dirname "$0")/.."
BASELINE=crates/fspace-capi/abi/libfspace.abi
SUPP=crates/fspace-capi/abi/suppressions.ini
die() { echo "abi: $*" >&2; exit 1; }
command -v abidw >/dev/null || die "abidw not found (apt-get install abigail-tools; ci/matrix.sh deps installs it)"

soname() { # file (ELF or abidw XML)
    if [ "${1##*.}" = abi ]; then
        sed -n 's/.*soname=.\([^"'"'"']*\).*/\1/p' "$1" | head -n 1
    else
        readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p'
    fi
}

# No struct of the header has padding: a field put there would not change
# sizeof, and the size scheme could not see it (ci/abi_padding.py). Checked
# in both modes, also when the SONAME moved (when layouts are redrawn).
no_padding() { # lib
    local now
    now=$(mktemp --suffix=.abi)
    abidw --no-corpus-path --drop-undefined-syms --suppressions "$SUPP" --out-file "$now" "$1"
    python3 ci/abi_padding.py "$now" crates/fspace-capi/include/fspace.h \
        || { rm -f "$now"; die "a public struct of $1 has padding"; }
    rm -f "$now"
}

case "${1:-}" in
    record)
        [ -f "${2:-}" ] || die "usage: ci/abi.sh record LIB"
        no_padding "$2"
        abidw --no-corpus-path --drop-undefined-syms --suppressions "$SUPP" \
            --out-file "$BASELINE" "$2"
        echo "abi: recorded $BASELINE from $2 ($(soname "$2"))"
        ;;
    check)
        [ -f "${2:-}" ] || die "usage: ci/abi.sh check LIB"
        [ -f "$BASELINE" ] || die "no baseline $BASELINE (ci/abi.sh record LIB)"
        no_padding "$2"
        old=$(soname "$BASELINE") new=$(soname "$2")
        [ -n "$old" ] && [ -n "$new" ] || die "no SONAME read from $BASELINE ('$old') or $2 ('$new')"
        if [ "$old" != "$new" ]; then
            echo "abi: SONAME moved ($old -> $new): no compatibility promised; record a new baseline"
            exit 0
        fi
        rc=0
        report=$(abidiff --no-added-syms --suppressions "$SUPP" "$BASELINE" "$2") || rc=$?
        # abidiff's status is a bit mask: 1 error, 2 usage, 4 an ABI
        # change, 8 an incompatible one.
        if [ $((rc & 3)) -ne 0 ]; then
            die "abidiff failed (status $rc): $report"
        fi
        if [ $((rc & 12)) -ne 0 ]; then
            echo "$report" >&2
            die "libfspace.so ($new) changed its ABI against $BASELINE: a program built against the baseline may break. Grow structs at their ends only (docs/capi.md, \"Structs that grow\"), or move the SONAME."
        fi
        echo "abi: $2 keeps the ABI of $BASELINE ($new)"
        ;;
    *)
        die "usage: ci/abi.sh check|record LIB"
        ;;
esac
