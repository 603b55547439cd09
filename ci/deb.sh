#!/usr/bin/env bash
# The Debian package: build it, and check it on this machine.
#
#   ci/deb.sh tools   install cargo-deb and cargo-about (pinned) if missing
#   ci/deb.sh build   build the release binaries and the C API, stage the man
#                     pages, completions and copyright file in
#                     target/deb-assets, and run cargo deb; prints the .deb's path
#   ci/deb.sh check DEB EXT3_DIR
#                     as root, on a machine without fspace installed: dpkg -i,
#                     every file the package lists is there, fspace info /,
#                     man -w fspace, the documents the man pages cite are
#                     installed, Recommends names bash-completion, the
#                     systemd units are installed disabled and pass
#                     systemd-analyze verify (templates and an instance;
#                     one enabled here is unlinked by the purge), a C
#                     program built with pkg-config runs,
#                     the preload library replaces posix_fallocate for
#                     `fallocate -x` in EXT3_DIR (a filesystem without
#                     fallocate); then dpkg --purge and nothing is left.
#
# ci/test.sh runs `tools`, `build` and `check` (the last on the matrix's
# ext4-noextents mount). docs/install.md says what the package holds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

CARGO_DEB_VERSION=3.8.0
CARGO_ABOUT_VERSION=0.9.3
STAGE=target/deb-assets

log() { echo "deb: $*" >&2; }
die() { echo "deb: error: $*" >&2; exit 1; }

# Debug builds: they compile in about half the time of release ones. But
# cargo-about's licence matching (the spdx crate's n-grams, hashed, matched
# with regex-automata and aho-corasick, allocated by mimalloc) is about 6
# times slower unoptimised: 2 minutes per manifest, three manifests. Those
# four crates alone are built optimised: install 77 s, 19 s per manifest,
# where an all-debug build took 60 s and 124 s (measured 2026-12-02, 2 cores).
ABOUT_OPTIMISED=(spdx libmimalloc-sys regex-automata aho-corasick)
tools() {
    if ! cargo deb --version 2>/dev/null | grep -qx "cargo-deb $CARGO_DEB_VERSION"; then
        log "installing cargo-deb $CARGO_DEB_VERSION"
        cargo install --quiet --locked --debug cargo-deb --version "$CARGO_DEB_VERSION"
    fi
    if ! cargo about --version 2>/dev/null | grep -qx "cargo-about $CARGO_ABOUT_VERSION"; then
        log "installing cargo-about $CARGO_ABOUT_VERSION"
        local crate optimised=(--config profile.dev.debug=0)
        for crate in "${ABOUT_OPTIMISED[@]}"; do
            optimised+=(--config "profile.dev.package.$crate.opt-level=3")
        done
        cargo install --quiet --locked --debug "${optimised[@]}" cargo-about --features cli --version "$CARGO_ABOUT_VERSION"
    fi
}

build() {
    local target_dir
    target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    cargo build --quiet --release -p fspace-cli
    # The C API's libraries (libfspace.so linked with its symbol versions).
    make -s -C crates/fspace-capi build TARGET_DIR="$target_dir" CARGO="cargo --quiet"
    rm -rf "$STAGE"
    mkdir -p "$STAGE/man" "$STAGE/completions"
    # The C API as `make install` lays it out under /usr (its libfspace.so.0
    # SONAME link, the .pc file with prefix /usr), into the staging root.
    make -s -C crates/fspace-capi install TARGET_DIR="$target_dir" \
        DESTDIR="$PWD/$STAGE/root" PREFIX=/usr LIBDIR=/usr/lib >/dev/null
    "$target_dir/release/fspace" generate man "$STAGE/man" >/dev/null
    gzip -9n "$STAGE"/man/*.1
    "$target_dir/release/fspace" generate complete bash >"$STAGE/completions/fspace"
    "$target_dir/release/fspace" generate complete zsh >"$STAGE/completions/_fspace"
    "$target_dir/release/fspace" generate complete fish >"$STAGE/completions/fspace.fish"
    gzip -9nc CHANGELOG.md >"$STAGE/changelog.gz"
    copyright >"$STAGE/copyright" || die "the copyright file could not be made"
    # The package's Maintainer: whoever builds it, by Debian's convention
    # (DEBFULLNAME, DEBEMAIL); without them the project's name, with no
    # address (dpkg accepts it; lintian and Debian's archive would not).
    local maintainer=()
    if [ -n "${DEBEMAIL:-}" ]; then
        maintainer=(--maintainer "${DEBFULLNAME:-$(id -un)} <$DEBEMAIL>")
    else
        log "DEBEMAIL is not set: the package's Maintainer field has no address"
    fi
    cargo deb --quiet -p fspace-cli --no-build --output target/debian/ "${maintainer[@]}"
}

# The copyright file in Debian's machine-readable format: fspace's own
# licence, then one paragraph per licence the package is distributed under,
# with its text and the crates linked in under it, as cargo-about reads them
# from each crate (its licence field and licence files); ci/deb-copyright.py
# writes it.
copyright() {
    local manifest err
    err=$(mktemp)
    for manifest in crates/fspace-cli/Cargo.toml crates/fspace-capi/Cargo.toml \
        crates/fspace-capi/preload/Cargo.toml; do
        # --offline: the licences come from the crates' own files, not from
        # a network service.
        cargo about generate --offline --format json --fail -c ci/about.toml -m "$manifest" 2>"$err" ||
            { cat "$err" >&2; rm -f "$err"; die "cargo about generate failed for $manifest"; }
        echo
    done | python3 ci/deb-copyright.py
    rm -f "$err"
}

check() {
    local deb=${1:?usage: ci/deb.sh check DEB EXT3_DIR} ext3=${2:?usage: ci/deb.sh check DEB EXT3_DIR}
    [ "$(id -u)" = 0 ] || die "check installs the package: run it as root"
    dpkg -s fspace >/dev/null 2>&1 && die "the fspace package is already installed; this check needs a machine without it"
    local files
    files=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./|/|; s|/$||' | grep -v '^/\?$')
    for f in $files; do
        [ -d "$f" ] && continue
        [ -e "$f" ] || [ -L "$f" ] && die "$f exists before the install"
    done
    log "dpkg -i $deb"
    dpkg -i "$deb" >/dev/null
    # Global: the EXIT trap runs after this function has returned.
    work=$(mktemp -d)
    # Purge on every exit, so that a failed check leaves the machine as it was.
    trap 'dpkg --purge fspace >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
    for f in $files; do
        [ -e "$f" ] || [ -L "$f" ] || die "$f is listed in the package but not installed"
    done
    for f in /usr/bin/fspace /usr/lib/libfspace.so.0 /usr/lib/libfspace.so /usr/lib/libfspace-preload.so \
        /usr/include/fspace.h /usr/lib/pkgconfig/fspace.pc /usr/share/man/man1/fspace.1.gz \
        /usr/share/man/man1/fspace-copy.1.gz /usr/share/bash-completion/completions/fspace \
        /usr/share/zsh/vendor-completions/_fspace /usr/share/fish/vendor_completions.d/fspace.fish \
        /usr/share/doc/fspace/copyright; do
        [ -e "$f" ] || die "$f is missing after the install"
    done
    [ "$(readlink /usr/lib/libfspace.so.0)" = "libfspace.so.0.1.0" ] ||
        die "/usr/lib/libfspace.so.0 is not the SONAME link to libfspace.so.0.1.0"
    # Not `objdump | grep -q`: grep exits at the match, the writer may then
    # die of SIGPIPE, and pipefail fails the check.
    grep -q 'SONAME *libfspace.so.0$' <<<"$(objdump -p /usr/lib/libfspace.so.0)" ||
        die "libfspace.so.0 has no SONAME libfspace.so.0"

    log "fspace info /"
    fspace info / >/dev/null || die "fspace info / failed"
    log "man -w fspace"
    [ "$(man -w fspace)" = /usr/share/man/man1/fspace.1.gz ] || die "man -w fspace: $(man -w fspace 2>&1)"
    man -w fspace-wal-dump >/dev/null || die "man -w fspace-wal-dump failed"
    log "the documents the man pages cite"
    local cited doc
    # roff writes a hyphen as \-.
    cited=$(zcat /usr/share/man/man1/fspace*.1.gz | sed 's/\\-/-/g' |
        grep -o '/usr/share/doc/fspace/[A-Za-z0-9/._-]*\.md' | sort -u)
    [ -n "$cited" ] || die "the man pages cite no document under /usr/share/doc/fspace"
    for doc in $cited; do
        [ -f "$doc" ] || die "the man pages cite $doc, which the package does not install"
    done
    log "cited and installed: $(echo "$cited" | wc -l) documents"
    local recommends
    recommends=$(dpkg-deb -f "$deb" Recommends)
    grep -qw bash-completion <<<"$recommends" ||
        die "the package does not recommend bash-completion: $recommends"

    log "systemd units: installed disabled, systemd-analyze verify"
    local unitdir=/usr/lib/systemd/system u
    local units=("$unitdir/fspace-probe@.service" "$unitdir/fspace-probe@.timer"
        "$unitdir/fspace-compare@.service" "$unitdir/fspace-compare@.timer"
        "$unitdir/fspace-alert@.service")
    for u in "${units[@]}"; do
        [ -f "$u" ] || die "$u is missing after the install"
        ! grep -q /usr/local "$u" || die "$u names /usr/local: $(grep /usr/local "$u")"
    done
    for u in fspace-probe@.service fspace-compare@.service; do
        grep -q '^ExecStart=/usr/bin/fspace probe ' "$unitdir/$u" || die "$u does not run /usr/bin/fspace"
    done
    local links
    links=$(find /etc/systemd/system -lname '*fspace*' 2>/dev/null || true)
    [ -z "$links" ] || die "units enabled by the install: $links"
    if [ -d /run/systemd/system ]; then
        local loaded
        loaded=$(systemctl list-units --all --no-legend 'fspace-*' || true)
        [ -z "$loaded" ] || die "units loaded or started by the install: $loaded"
    fi
    # The templates (verify instantiates them), and the instances for
    # /srv/data as docs/monitoring.md enables them: a unit's name comes
    # from its file's, so links named as the instances.
    mkdir "$work/units"
    for u in probe@.service probe@.timer compare@.service compare@.timer; do
        ln -s "$unitdir/fspace-$u" "$work/units/fspace-${u/@/@srv-data}"
    done
    ln -s "$unitdir/fspace-alert@.service" "$work/units/fspace-alert@fspace-compare@srv-data.service.service"
    systemd-analyze verify "${units[@]}" "$work"/units/* >"$work/verify" 2>&1 ||
        die "systemd-analyze verify failed: $(cat "$work/verify")"
    # verify exits 0 after some warnings: any line about these units fails.
    if grep -qi fspace "$work/verify"; then
        cat "$work/verify" >&2
        die "systemd-analyze verify warned about the units"
    fi
    log "systemd-analyze verify: $(ls "$work/units" | wc -l) instances and ${#units[@]} templates, no warning"
    # Enabled as the docs do (not started: no --now): the purge below must
    # remove the links.
    systemctl enable fspace-probe@srv-data.timer >/dev/null 2>&1 ||
        die "systemctl enable fspace-probe@srv-data.timer failed: $(systemctl enable fspace-probe@srv-data.timer 2>&1)"
    [ -n "$(find /etc/systemd/system -lname '*fspace-probe@.timer')" ] ||
        die "systemctl enable fspace-probe@srv-data.timer made no link"

    log "a C program built with pkg-config"
    cat >"$work/app.c" <<'C'
#include <fspace.h>
#include <stdio.h>
int main(int argc, char **argv) {
    struct fspace_fs_info *info;
    const char *json;
    int rc;
    if (argc < 2) return 2;
    rc = fspace_fs_info_new(argv[1], &info);
    if (rc < 0) {
        fprintf(stderr, "fspace_fs_info_new(%s): %s\n", argv[1], fspace_last_error());
        return 1;
    }
    rc = fspace_fs_info_json(info, &json);
    if (rc == 0) printf("%.1s\n", json);
    fspace_fs_info_free(info);
    return rc == 0 ? 0 : 1;
}
C
    # shellcheck disable=SC2046 # pkg-config's flags are words
    cc -Wall -Werror -o "$work/app" "$work/app.c" $(pkg-config --cflags --libs fspace) ||
        die "cc with pkg-config --cflags --libs fspace failed"
    [ "$("$work/app" /)" = "{" ] || die "the C program failed"
    # /lib is /usr/lib on a merged-/usr system.
    local libs
    libs=$(ldd "$work/app")
    grep -Eq 'libfspace.so.0 => (/usr)?/lib/libfspace.so.0 ' <<<"$libs" ||
        die "the C program did not load /usr/lib/libfspace.so.0: $libs"

    log "LD_PRELOAD=/usr/lib/libfspace-preload.so fallocate -x -l 16M in $ext3"
    local f="$ext3/fspace-deb-check.$$"
    strace -f -e trace=pwrite64 -o "$work/strace" -E LD_PRELOAD=/usr/lib/libfspace-preload.so \
        -E FSPACE_PRELOAD_VERBOSE=1 fallocate -x -l 16M "$f" 2>"$work/preload.err" ||
        die "fallocate -x with the preload failed: $(cat "$work/preload.err")"
    grep -q 'fspace-preload: posix_fallocate' "$work/preload.err" || die "the preload library did not run: $(cat "$work/preload.err")"
    [ "$(stat -c %s "$f")" = 16777216 ] || die "$f is not 16 MiB"
    local one_byte
    one_byte=$(grep -c 'pwrite64(.*, 1, ' "$work/strace" || true)
    rm -f "$f"
    [ "$one_byte" = 0 ] || die "$one_byte one-byte pwrite64 calls with the preload"
    # Without it, glibc writes one byte per block here: the check above
    # could have failed.
    strace -f -e trace=pwrite64 -o "$work/strace" fallocate -x -l 16M "$f" ||
        die "fallocate -x without the preload failed"
    local glibc
    glibc=$(grep -c 'pwrite64(.*, 1, ' "$work/strace" || true)
    rm -f "$f"
    [ "$glibc" -gt 0 ] || die "glibc's posix_fallocate wrote no single bytes in $ext3: is it a filesystem without fallocate?"
    log "one-byte writes for 16 MiB: $one_byte with the preload, $glibc with glibc's posix_fallocate"

    log "dpkg --purge fspace"
    dpkg --purge fspace >/dev/null
    trap 'rm -rf "$work"' EXIT
    for f in $files; do
        [ -d "$f" ] && continue
        [ -e "$f" ] || [ -L "$f" ] && die "$f is left after the purge"
    done
    [ -e /usr/share/doc/fspace ] && die "/usr/share/doc/fspace is left after the purge"
    links=$(find /etc/systemd/system -lname '*fspace*' 2>/dev/null || true)
    [ -z "$links" ] || die "links to the units are left after the purge: $links"
    ldconfig -p | grep -q libfspace && die "the loader's cache still lists libfspace after the purge"
    hash -r
    command -v fspace >/dev/null && die "fspace is still on PATH after the purge: $(command -v fspace)"
    log "ok: installed, checked and purged $deb"
}

case "${1:-}" in
    tools) tools ;;
    build) build ;;
    check) shift; check "$@" ;;
    *) echo "usage: $0 tools|build|check DEB EXT3_DIR" >&2; exit 2 ;;
esac
