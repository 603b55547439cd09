#!/usr/bin/env bash
# Make, mount and tear down the filesystem matrix fspace is tested on:
#   ext4, xfs, btrfs, ext4-noextents (an ext3 image: fallocate returns EOPNOTSUPP),
#   tmpfs, and sshfs served by a private sshd on 127.0.0.1 (FUSE, no fallocate);
#   ext4-fast and xfs-fast: ext4 and xfs made and mounted as above, on loop
#   devices whose image files live in a tmpfs ($FSPACE_MATRIX_DIR/fast), so that
#   a durable write costs microseconds, as on an NVMe drive with power-loss
#   protection, where the others pay for the host disk's flush (listed in
#   FSPACE_TEST_MOUNTS, last; only the tests that name them use them: the
#   log's, and the check that each mount is what its name says);
#   and ext4-bigalloc (4 KiB blocks, 64 KiB clusters, 256 MB), exported on its
#   own as FSPACE_TEST_BIGALLOC so that only the tests that ask for it use it.
#
# What a durable 8 KiB overwrite costs (`fspace bench commit --record 8K
# --seconds 2 --mode recycled`, fdatasync after each; median (min-max) of 3
# alternating rounds on this busy 2-core VM, bench/runs/2026-12-02-fast-mounts/):
#   ext4       2,583 commits/s (1,366-4,788), p50 158 µs   disk-backed loop
#   ext4-fast 27,573 commits/s (21,571-44,393), p50 17.6 µs
#   xfs        1,545 commits/s (1,449-1,988), p50 142 µs   disk-backed loop
#   xfs-fast  44,706 commits/s (38,956-61,855), p50 13.4 µs
# Each commit sends one flush to its loop device on both; over tmpfs the flush
# ends there (fsync of a tmpfs file is a no-op), else it reaches the host disk.
#
# Usage (as root):
#   ci/matrix.sh up      make and mount everything; prints FSPACE_TEST_BIGALLOC=...
#                        then (last line) FSPACE_TEST_MOUNTS=..., and writes both
#                        to $FSPACE_MATRIX_DIR/env
#   ci/matrix.sh down    unmount everything, detach loops, unmount the fast images'
#                        tmpfs, stop sshd (by its PID); also after a partial `up`
#   ci/matrix.sh deps    install the Debian packages the matrix and the engine tests
#                        need, if missing (no service is started)
#
# FSPACE_MATRIX_DIR (default /tmp/fspace-matrix) holds images, mounts and keys.
# FSPACE_MATRIX_SIZE_MB (default 512) sizes each loop image and the tmpfs; the
# fast images' tmpfs holds both whole (2 x that + 16 MB; memory is taken only
# as the filesystems write: an ext4 or xfs does not give freed blocks back).
set -euo pipefail

BASE=${FSPACE_MATRIX_DIR:-/tmp/fspace-matrix}
SIZE_MB=${FSPACE_MATRIX_SIZE_MB:-512}
SSH_PORT=${FSPACE_MATRIX_SSH_PORT:-22722}
LOOP_FS=(ext4 xfs btrfs ext4-noextents)
# ext4 and xfs again, on loop devices over image files in a tmpfs.
FAST_FS=(ext4-fast xfs-fast)
FAST_DIR="$BASE/fast"
# Mounted like LOOP_FS but not listed in FSPACE_TEST_MOUNTS.
BIGALLOC_MB=256

log() { echo "matrix: $*" >&2; }
die() { echo "matrix: error: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (loop devices, mounts, sshd)"; }

deps() {
    need_root
    local missing=()
    command -v mkfs.xfs >/dev/null || missing+=(xfsprogs)
    command -v mkfs.btrfs >/dev/null || missing+=(btrfs-progs)
    command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
    command -v chattr >/dev/null || missing+=(e2fsprogs)
    command -v sshfs >/dev/null || missing+=(sshfs)
    [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
    command -v ssh-keygen >/dev/null || missing+=(openssh-client)
    command -v strace >/dev/null || missing+=(strace)
    # The Python package's tests (ci/python.sh) build its wheel in a venv.
    command -v python3 >/dev/null || missing+=(python3)
    python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
    command -v fallocate >/dev/null || missing+=(util-linux)
    command -v setpriv >/dev/null || missing+=(util-linux)
    command -v nm >/dev/null || missing+=(binutils)
    # The C API's tests: programs built with cc and c++ through pkg-config,
    # run under AddressSanitizer (libasan comes with gcc) and valgrind.
    command -v cc >/dev/null || missing+=(gcc)
    [ -e /usr/include/stdio.h ] || missing+=(libc6-dev)
    command -v c++ >/dev/null || missing+=(g++)
    command -v make >/dev/null || missing+=(make)
    command -v pkg-config >/dev/null || missing+=(pkg-config)
    command -v valgrind >/dev/null || missing+=(valgrind)
    # GNU coreutils' cp tests (crates/fspace-cli/tests/coreutils_cp/) use perl.
    command -v perl >/dev/null || missing+=(perl)
    # The probe's HTML report is checked in a real headless browser.
    command -v chromium >/dev/null || missing+=(chromium)
    [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
    # `fspace probe --prometheus` files are checked with promtool (in the
    # prometheus package; its server is not started, see below).
    command -v promtool >/dev/null || missing+=(prometheus)
    # The database engines fspace advises on (crates/fspace-cli/tests/engines.rs
    # starts each on every filesystem; sysbench is for the benchmarks).
    [ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
    command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
    command -v sysbench >/dev/null || missing+=(sysbench)
    command -v db_bench >/dev/null || missing+=(rocksdb-tools)
    # The Debian package's test (ci/deb.sh): dpkg-shlibdeps for its
    # dependencies, man -w for its pages.
    command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
    command -v man >/dev/null || missing+=(man-db)
    # The C ABI check against the recorded baseline (abidw, abidiff).
    command -v abidiff >/dev/null || missing+=(abigail-tools)
    # ... and systemd-analyze verify and systemctl enable for its units.
    command -v systemd-analyze >/dev/null || missing+=(systemd)
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2 || die "apt-get update failed"
        install_without_services "${missing[@]}"
    fi
}

# apt-get install, with no service started: the servers' packages
# (postgresql-15, mariadb-server, openssh-server) would otherwise start
# their system-wide daemons, which the tests never use (they start private
# ones) and which would keep running after the tests. invoke-rc.d and
# deb-systemd-invoke ask /usr/sbin/policy-rc.d first; exit 101 means
# "action forbidden". A policy-rc.d that was there before is put back.
install_without_services() { # packages...
    local policy=/usr/sbin/policy-rc.d saved=""
    if [ -e "$policy" ]; then
        saved=$(mktemp)
        cp -p "$policy" "$saved"
    fi
    restore_policy() {
        if [ -n "$saved" ]; then mv -f "$saved" "$policy"; else rm -f "$policy"; fi
    }
    trap 'restore_policy' EXIT
    printf '#!/bin/sh\n# ci/matrix.sh deps: no service starts during its install\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    local rc=0
    apt-get install -y -qq --no-install-recommends "$@" >&2 || rc=$?
    restore_policy
    trap - EXIT
    [ "$rc" = 0 ] || die "apt-get install failed (exit $rc) for: $*"
}

# The filesystem a fast mount is made as: ext4-fast is ext4, xfs-fast is xfs
# (same mkfs, same mount options; only the device under it differs).
base_of() { # name
    case "$1" in
        *-fast) echo "${1%-fast}" ;;
        *) echo "$1" ;;
    esac
}

mkfs_for() { # name image
    case "$(base_of "$1")" in
        ext4) mkfs.ext4 -q -F "$2" ;;
        xfs) mkfs.xfs -q -f "$2" ;;
        btrfs) mkfs.btrfs -q -f "$2" >/dev/null ;;
        # ext3 layout: block-mapped files, so fallocate returns EOPNOTSUPP.
        ext4-noextents) mkfs.ext3 -q -F "$2" ;;
        # Clusters of 16 blocks: the allocation unit is 64 KiB, not 4 KiB.
        ext4-bigalloc) mkfs.ext4 -q -F -b 4096 -O bigalloc -C 65536 "$2" ;;
        *) die "unknown filesystem $1" ;;
    esac
}

# btrfs commits every 5 s instead of 30: on this 512 MB image an fsync-heavy
# test run once had its 32 MiB of metadata all pinned (freed, awaiting the
# commit) and the commit itself failed with ENOSPC ("Transaction aborted
# (error -28)", forced read-only) while 344 MB were unallocated. (Mixed block
# groups avoid that too, but then data written without a sync was lost when
# a test filled the filesystem: writeback found no space.)
mount_options() { # name
    case "$(base_of "$1")" in
        btrfs) echo "commit=1" ;;
        *) echo "defaults" ;;
    esac
}

# btrfs gets at least 1536 MB: its metadata chunks grow with the
# filesystem, and on 512 MB a wal test's fsyncs pinned all 54 MB of metadata
# again (2026-11-25, commit=5 notwithstanding): "cleanup_transaction: errno=-28",
# forced read-only, with 375 MB unallocated. On 1536 MB the kill -9 tests
# then pinned all 80 MB within one 5 s commit interval, so btrfs now
# commits every second (commit=1): pinned blocks are freed at each commit.
size_for() { # name
    if [ "$1" = btrfs ] && [ "$SIZE_MB" -lt 1536 ]; then
        echo 1536
    else
        echo "$SIZE_MB"
    fi
}

mount_type() {
    case "$(base_of "$1")" in
        ext4-noextents) echo ext3 ;;
        ext4-bigalloc) echo ext4 ;;
        *) base_of "$1" ;;
    esac
}

# Where a filesystem's image file lives: the fast ones' in the tmpfs.
image_for() { # name
    case "$1" in
        *-fast) echo "$FAST_DIR/$1.img" ;;
        *) echo "$BASE/img/$1.img" ;;
    esac
}

loop_mount() { # name size_mb
    local fs=$1 img mnt="$BASE/mnt/$1"
    img=$(image_for "$fs")
    mkdir -p "$mnt"
    rm -f "$img"
    truncate -s "${2}M" "$img"
    mkfs_for "$fs" "$img"
    local dev
    dev=$(losetup --find --show --direct-io=on "$img")
    echo "$dev" >"$BASE/img/$fs.loop"
    mount -t "$(mount_type "$fs")" -o "$(mount_options "$fs")" "$dev" "$mnt"
    chmod 1777 "$mnt"
    log "$fs on $dev at $mnt"
}

up() {
    need_root
    # mkfs.xfs refuses filesystems under 300 MB.
    [ "$SIZE_MB" -ge 320 ] || die "FSPACE_MATRIX_SIZE_MB=$SIZE_MB is too small (xfs needs at least 320)"
    deps
    down 2>/dev/null || true
    # A half-built matrix is torn down rather than left mounted: on a failed
    # command (set -e) and on a die alike, both of which exit.
    trap 'echo "matrix: setup failed; tearing down" >&2; down || true' EXIT
    mkdir -p "$BASE/img" "$BASE/mnt"
    # Open to other users whatever the umask: the engine tests run
    # PostgreSQL as the postgres user, which must reach the mounts.
    chmod 755 "$BASE" "$BASE/mnt"
    local mounts=() fast=()
    for fs in "${LOOP_FS[@]}"; do
        loop_mount "$fs" "$(size_for "$fs")"
        mounts+=("$fs=$BASE/mnt/$fs")
    done
    loop_mount ext4-bigalloc "$BIGALLOC_MB"

    # The fast mounts: their images (sparse, SIZE_MB each) in a tmpfs that
    # holds both whole, so that a write to the loop device never finds the
    # tmpfs full; it takes only the memory the filesystems write.
    mkdir -p "$FAST_DIR"
    mount -t tmpfs -o "size=$(( ${#FAST_FS[@]} * SIZE_MB + 16 ))m,mode=700" fspace-fast "$FAST_DIR"
    for fs in "${FAST_FS[@]}"; do
        loop_mount "$fs" "$SIZE_MB"
        local back
        back=$(losetup -n -O BACK-FILE "$(cat "$BASE/img/$fs.loop")")
        [ "$(stat -f -c %T "$back")" = tmpfs ] || die "$fs: loop backing file $back is not on a tmpfs"
        fast+=("$fs=$BASE/mnt/$fs")
        log "$fs: $back is on a tmpfs"
    done

    mkdir -p "$BASE/mnt/tmpfs"
    mount -t tmpfs -o "size=${SIZE_MB}m,mode=1777" fspace-tmpfs "$BASE/mnt/tmpfs"
    mounts+=("tmpfs=$BASE/mnt/tmpfs")
    log "tmpfs at $BASE/mnt/tmpfs"

    # sshfs: a private sshd on 127.0.0.1 with its own keys, serving a directory.
    local ssh="$BASE/ssh" export="$BASE/sshfs-export" mnt="$BASE/mnt/sshfs"
    mkdir -p "$ssh" "$export" "$mnt" /run/sshd
    chmod 700 "$ssh"
    chmod 1777 "$export"
    ssh-keygen -q -t ed25519 -N '' -f "$ssh/host_key" <<<y >/dev/null 2>&1 || true
    ssh-keygen -q -t ed25519 -N '' -f "$ssh/client_key" <<<y >/dev/null 2>&1 || true
    cp "$ssh/client_key.pub" "$ssh/authorized_keys"
    cat >"$ssh/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $SSH_PORT
HostKey $ssh/host_key
AuthorizedKeysFile $ssh/authorized_keys
PidFile $ssh/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
CONF
    /usr/sbin/sshd -f "$ssh/sshd_config" -E "$ssh/sshd.log"
    for _ in $(seq 50); do [ -s "$ssh/sshd.pid" ] && break; sleep 0.1; done
    [ -s "$ssh/sshd.pid" ] || die "sshd did not start (see $ssh/sshd.log)"
    sshfs -o "IdentityFile=$ssh/client_key,port=$SSH_PORT,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR" \
        "root@127.0.0.1:$export" "$mnt"
    mounts+=("sshfs=$mnt")
    log "sshfs at $mnt (sshd pid $(cat "$ssh/sshd.pid"), port $SSH_PORT)"

    # Listed last: tests that take the matrix's first filesystem keep ext4.
    mounts+=("${fast[@]}")
    local joined
    joined=$(IFS=,; echo "${mounts[*]}")
    trap - EXIT
    printf 'FSPACE_TEST_BIGALLOC=%s\nFSPACE_TEST_MOUNTS=%s\n' "$BASE/mnt/ext4-bigalloc" "$joined" >"$BASE/env"
    echo "FSPACE_TEST_BIGALLOC=$BASE/mnt/ext4-bigalloc"
    echo "FSPACE_TEST_MOUNTS=$joined"
}

down() {
    [ "$(id -u)" = 0 ] || die "must run as root"
    local rc=0
    if mountpoint -q "$BASE/mnt/sshfs" 2>/dev/null; then
        fusermount -u "$BASE/mnt/sshfs" 2>/dev/null || umount -l "$BASE/mnt/sshfs" || rc=1
    fi
    if [ -s "$BASE/ssh/sshd.pid" ]; then
        local pid
        pid=$(cat "$BASE/ssh/sshd.pid")
        kill "$pid" 2>/dev/null || true
        rm -f "$BASE/ssh/sshd.pid"
    fi
    for fs in tmpfs "${LOOP_FS[@]}" ext4-bigalloc "${FAST_FS[@]}"; do
        local mnt="$BASE/mnt/$fs"
        if mountpoint -q "$mnt" 2>/dev/null; then
            # Leftover immutable flags or busy files must not keep a mount alive.
            umount "$mnt" 2>/dev/null || umount -l "$mnt" || rc=1
        fi
        if [ -s "$BASE/img/$fs.loop" ]; then
            losetup -d "$(cat "$BASE/img/$fs.loop")" 2>/dev/null || true
            rm -f "$BASE/img/$fs.loop"
        fi
        rm -f "$(image_for "$fs")"
    done
    # The fast mounts' images go with their tmpfs (once no loop device holds
    # them; a loop still held by a lazily unmounted filesystem keeps its
    # image's memory until it is released).
    if mountpoint -q "$FAST_DIR" 2>/dev/null; then
        umount "$FAST_DIR" 2>/dev/null || umount -l "$FAST_DIR" || rc=1
    fi
    rm -f "$BASE/env"
    return $rc
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    deps) deps ;;
    *) echo "usage: $0 up|down|deps" >&2; exit 2 ;;
esac
