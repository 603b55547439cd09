#!/usr/bin/env python3
"""Growth benchmarks: fspace against its baselines, measured in the same run.

  1. posix  - `fspace grow --for bulk` vs glibc posix_fallocate (util-linux
              `fallocate -x`), 256 MiB including the final fsync, on
              ext4-noextents and sshfs: time ratio and syscall ratio (strace -c),
              then sequential 64 KiB writes + fdatasync into each grown file.
  2. fill   - zero-fill throughput vs `dd if=/dev/zero bs=1M conv=fdatasync`.
  3. alloc  - `fspace grow --strategy allocate` vs util-linux `fallocate`,
              1 GiB, on ext4 and xfs.

Runs alternate baseline and fspace, REPEAT times each, and report medians and
the ratio. Needs the matrix (`ci/matrix.sh up`, as root) and a release build
(`cargo build --release`); the 1 GiB allocation needs filesystems larger than the
test suite's: `FSPACE_MATRIX_SIZE_MB=2048 ci/matrix.sh up`.
Usage: bench/grow.py [posix|fill|alloc ...]
Writes the run folder bench/runs/DATE-grow[-TAG]/ (raw.json, output.txt,
README.md with the command and commit) and prints a Markdown table.
"""
import json, os, platform, shutil, statistics, subprocess, sys, tempfile, time
from benchlib import mounts, save_raw, scratch_dirs, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
REPEAT = int(os.environ.get("REPEAT", "5"))
MiB = 1 << 20


def run(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - t


def syscalls(cmd, tmp):
    out = tmp + ".strace"
    subprocess.run(["strace", "-f", "-c", "-o", out, "-e",
                    "trace=write,pwrite64,writev,pwritev,pwritev2,fallocate,ftruncate"] + cmd,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for line in open(out):
        if line.rstrip().endswith("total"):
            return int(line.split()[3])
    raise RuntimeError("no strace total")


def settle(d):
    subprocess.run(["sync", "-f", d], check=False)


def fresh(d, name, create=False):
    """Empties the bench directory (the loop filesystems hold one file at a
    time); with `create`, makes `name` as an empty file."""
    for n in os.listdir(d):
        os.unlink(os.path.join(d, n))
    p = os.path.join(d, name)
    if create:
        open(p, "w").close()
    settle(d)
    return p


def seq_write(path, total, chunk=64 * 1024):
    """Sequential chunk writes + fdatasync each, over existing space."""
    buf = os.urandom(chunk)
    fd = os.open(path, os.O_WRONLY)
    try:
        t = time.perf_counter()
        for off in range(0, total, chunk):
            os.pwrite(fd, buf, off)
            os.fdatasync(fd)
        return time.perf_counter() - t
    finally:
        os.close(fd)


def med(xs):
    return statistics.median(xs)


def bench_posix(m, rows):
    size = 256 * MiB
    for fs, d in scratch_dirs(m, ("ext4-noextents", "sshfs")):
        base_t, ours_t, base_w, ours_w = [], [], [], []
        wtotal = 32 * MiB if fs == "sshfs" else 64 * MiB
        for _ in range(REPEAT):
            # Both start from an empty file that exists: util-linux
            # fallocate does not make a creation durable (no directory
            # fsync), so `fspace grow --create --sync` would pay for more.
            p = fresh(d, "posix", create=True)
            base_t.append(run(["sh", "-c", f'fallocate -x -l {size} "$0" && sync "$0"', p]))
            base_w.append(seq_write(p, wtotal))
            p = fresh(d, "fspace", create=True)
            ours_t.append(run([FSPACE, "grow", "--sync", "--for", "bulk", p, str(size)]))
            ours_w.append(seq_write(p, wtotal))
        p = fresh(d, "posix")
        base_sc = syscalls(["fallocate", "-x", "-l", str(size), p], d)
        p = fresh(d, "fspace")
        ours_sc = syscalls([FSPACE, "grow", "--create", "--sync", "--for", "bulk", p, str(size)], d)
        rows.append(dict(bench="grow 256 MiB bulk vs posix_fallocate (incl. fsync)", fs=fs,
                         baseline_s=med(base_t), fspace_s=med(ours_t), speedup=med(base_t) / med(ours_t),
                         baseline_syscalls=base_sc, fspace_syscalls=ours_sc,
                         syscall_ratio=base_sc / ours_sc))
        rows.append(dict(bench=f"then {wtotal // MiB} MiB of 64 KiB writes + fdatasync", fs=fs,
                         baseline_s=med(base_w), fspace_s=med(ours_w), speedup=med(base_w) / med(ours_w)))


def bench_fill(m, rows):
    size = 256 * MiB
    for fs in ("ext4", "xfs", "ext4-noextents", "btrfs", "tmpfs", "sshfs"):
        if fs not in m:
            continue
        d = tempfile.mkdtemp(prefix="bench-", dir=m[fs])
        try:
            base, ours = [], []
            for _ in range(REPEAT):
                p = fresh(d, "dd")
                base.append(run(["dd", "if=/dev/zero", f"of={p}", "bs=1M", f"count={size // MiB}",
                                 "conv=fdatasync", "status=none"]))
                # dd creates its file without a directory fsync; give fspace
                # an existing empty file rather than --create --sync.
                p = fresh(d, "fspace", create=True)
                ours.append(run([FSPACE, "grow", "--sync", "--strategy", "zero-fill", p, str(size)]))
            rows.append(dict(bench="zero-fill 256 MiB vs dd bs=1M conv=fdatasync", fs=fs,
                             baseline_s=med(base), fspace_s=med(ours), speedup=med(base) / med(ours),
                             baseline_MiBps=size / MiB / med(base), fspace_MiBps=size / MiB / med(ours)))
        finally:
            shutil.rmtree(d, ignore_errors=True)


def bench_alloc(m, rows):
    size = 1 << 30
    for fs in ("ext4", "xfs"):
        if fs not in m:
            continue
        d = tempfile.mkdtemp(prefix="bench-", dir=m[fs])
        try:
            base, ours = [], []
            for _ in range(REPEAT * 2):
                p = fresh(d, "ul")
                base.append(run(["fallocate", "-l", str(size), p]))
                p = fresh(d, "fspace")
                ours.append(run([FSPACE, "grow", "--create", "--strategy", "allocate", "--no-fallback", p, str(size)]))
            rows.append(dict(bench="allocate 1 GiB vs util-linux fallocate", fs=fs,
                             baseline_s=med(base), fspace_s=med(ours), speedup=med(base) / med(ours)))
        finally:
            shutil.rmtree(d, ignore_errors=True)


def main():
    if not os.path.exists(FSPACE):
        sys.exit("bench: build first: cargo build --release")
    which = sys.argv[1:] or ["posix", "fill", "alloc"]
    m = mounts()
    run_dir = start_run("grow")
    rows = []
    for w in which:
        {"posix": bench_posix, "fill": bench_fill, "alloc": bench_alloc}[w](m, rows)
    stamp = time.strftime("%Y-%m-%dT%H%M%S")
    meta = dict(date=stamp, kernel=platform.release(), cpus=os.cpu_count(), repeat=REPEAT, mounts=m)
    save_raw(run_dir, "raw", dict(meta=meta, rows=rows))
    print(f"kernel {meta['kernel']}, {meta['cpus']} CPUs, median of {REPEAT} alternating runs; "
          "speedup = baseline time / fspace time")
    print()
    print("| benchmark | fs | baseline | fspace | speedup | syscalls baseline / fspace |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        sc = f"{r['baseline_syscalls']:,} / {r['fspace_syscalls']:,} ({r['syscall_ratio']:.0f}x fewer)" \
            if "baseline_syscalls" in r else ""
        print(f"| {r['bench']} | {r['fs']} | {r['baseline_s'] * 1e3:.1f} ms | {r['fspace_s'] * 1e3:.1f} ms "
              f"| {r['speedup']:.2f}x | {sc} |")


if __name__ == "__main__":
    main()
