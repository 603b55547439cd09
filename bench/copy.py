#!/usr/bin/env python3
"""fspace copy against GNU cp (same flags) and rsync --sparse, in one run,
on the same files, per filesystem, warm and cold page cache.

Per filesystem (default: ext4 xfs btrfs ext3 tmpfs; `ext3` is the matrix's
ext4-noextents mount, an ext3 image), source and copy on that filesystem,
four sources of SIZE_MIB (default 512):
  random     no zeros, no holes
  holes      1 MiB data / 1 MiB hole, alternating (50% holes)
  vm         a VM image: the first 40% written, mostly zeros with one 4 KiB
             block of data in eight (scattered), the rest a hole
  extents    20,000 data extents of 4 KiB spread over the file, holes between
Pairs, alternating inside each round in a rotating order (REPEAT rounds):
  always     cp --sparse=always --reflink=never  vs  fspace copy --sparse always --reflink never
  default    cp                                  vs  fspace copy
  rsync      rsync --sparse (reference; ratio to fspace --sparse always)
Time is what cp's users feel: the command and then fsync of the copy (until
the copy is on disk). Warm: the source is in the page cache (read before
each command). Cold: `sync; echo 3 > /proc/sys/vm/drop_caches` before each
command (not on tmpfs, whose pages are the file). The ratio per row is the
median of the per-round ratios fspace ÷ cp, with the min-max of the rounds;
a row is "met" when the median is at most 1.0, and "unclear" when the
rounds straddle 1.0 so widely that the median says little.
Then one pass per tool under `strace -f -c` counts write-type syscalls, and
each copy's allocation (st_blocks after fsync) and bytes (cmp) are checked.

Needs root, the matrix at 3072 MB (`FSPACE_MATRIX_SIZE_MB=3072 ci/matrix.sh
up`), a release build (`cargo build --release`), strace and rsync (installed
with apt-get if missing). Writes the run folder bench/runs/DATE-copy-vs-cp[-TAG]/
(FS[-FS...].json raw, output.txt, README.md with the command and commit; a
loop over filesystems on one day fills one folder).
Usage: [REPEAT=3] [SIZE_MIB=512] [CACHE=warm,cold] [SOURCES=random,holes,vm,extents] [TAG=name]
       bench/copy.py [fs ...]
"""
import json, os, random, shutil, statistics, subprocess, sys, time
from benchlib import mounts, save_raw, start_run, FSPACE, ROOT

REPEAT = int(os.environ.get("REPEAT", "3"))
SIZE = int(os.environ.get("SIZE_MIB", "512")) << 20
CACHES = os.environ.get("CACHE", "warm,cold").split(",")
SOURCES = os.environ.get("SOURCES", "random,holes,vm,extents").split(",")
PREFAULT_GIB = int(os.environ.get("PREFAULT_GIB", "2"))
MIB = 1 << 20
WRITE_CALLS = ("write", "pwrite64", "pwritev", "pwritev2", "writev", "fallocate", "ftruncate",
               "copy_file_range", "ioctl", "sendfile", "lseek")
ALIASES = {"ext3": "ext4-noextents"}


def make_source(d, name):
    rnd = random.Random(42)
    p = os.path.join(d, name + ".src")
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        data = lambda n: rnd.randbytes(n).replace(b"\0", b"\1")
        if name == "random":
            for off in range(0, SIZE, 4 * MIB):
                os.pwrite(fd, data(min(4 * MIB, SIZE - off)), off)
        elif name == "holes":
            for off in range(0, SIZE, 2 * MIB):
                os.pwrite(fd, data(MIB), off)
        elif name == "vm":
            written = SIZE * 4 // 10 // (4 * MIB) * (4 * MIB)
            for off in range(0, written, 4 * MIB):
                chunk = bytearray(4 * MIB)
                for blk in range(0, 4 * MIB, 32768):
                    at = blk + rnd.randrange(8) * 4096
                    chunk[at:at + 4096] = data(4096)
                os.pwrite(fd, bytes(chunk), off)
        elif name == "extents":
            step = (SIZE // 20000) // 4096 * 4096
            for i in range(20000):
                os.pwrite(fd, data(4096), i * step)
        os.ftruncate(fd, SIZE)
        os.fsync(fd)
    finally:
        os.close(fd)
    return p


def pairs(fs):
    return {
        "cp-always": ["cp", "--sparse=always", "--reflink=never"],
        "fspace-always": [FSPACE, "copy", "--sparse", "always", "--reflink", "never"],
        "cp-default": ["cp"],
        "fspace-default": [FSPACE, "copy"],
        "rsync": ["rsync", "--sparse"],
    }


def prefault():
    """Touches PREFAULT_GIB of memory and frees it before each timed command:
    this VM hands freed memory back to its host, and a copy whose page cache
    lands on such memory faults in the host (0.05-2.4 s for the same copy);
    see bench/runs/2026-11-22-copy-noisy-first-run/."""
    b = b"\1" * (PREFAULT_GIB << 30)
    del b


def prepare(d, src, out, cache):
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run(["sync", "-f", d])
    prefault()
    if cache == "cold":
        subprocess.run(["sync"])
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    else:
        with open(src, "rb") as f:
            while f.read(16 * MIB):
                pass


def timed(cmd, src, out):
    t = time.perf_counter()
    subprocess.run(cmd + [src, out], check=True, stdout=subprocess.DEVNULL)
    fd = os.open(out, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - t


def strace_writes(cmd, src, out, d):
    log = os.path.join(d, "strace.txt")
    subprocess.run(["strace", "-f", "-c", "-o", log, *cmd, src, out], check=True,
                   stdout=subprocess.DEVNULL)
    calls = {}
    for line in open(log):
        parts = line.split()
        if len(parts) >= 5 and parts[-1] in WRITE_CALLS and parts[3].isdigit():
            calls[parts[-1]] = int(parts[3])
    os.unlink(log)
    return calls


def allocated(p):
    fd = os.open(p, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    return os.stat(p).st_blocks * 512


def verdict(ratios):
    med = statistics.median(ratios)
    lo, hi = min(ratios), max(ratios)
    if med <= 1.0:
        word = "met" if hi <= 1.0 or med <= 0.95 else "met (rounds straddle 1.0)"
    else:
        word = "not met" if lo > 1.0 or med >= 1.05 else "not met (rounds straddle 1.0)"
    return med, lo, hi, word


def bench_source(fs, d, name, lines):
    src = make_source(d, name)
    out = os.path.join(d, "copy")
    t = pairs(fs)
    res = {"times": {}, "info": {}}
    for cache in CACHES:
        if cache == "cold" and fs == "tmpfs":
            continue
        times = {k: [] for k in t}
        order = list(t)
        for r in range(REPEAT):
            for k in order[r % len(order):] + order[:r % len(order)]:
                prepare(d, src, out, cache)
                times[k].append(timed(t[k], src, out))
        res["times"][cache] = times
        for mode in ("always", "default"):
            ratios = [f / c for f, c in zip(times["fspace-" + mode], times["cp-" + mode])]
            med, lo, hi, word = verdict(ratios)
            row = (f"{fs:<6} {name:<8} {cache:<5} {mode:<8} cp {statistics.median(times['cp-' + mode]):7.3f}s  "
                   f"fspace {statistics.median(times['fspace-' + mode]):7.3f}s  "
                   f"÷cp {med:.2f}x (rounds {lo:.2f}-{hi:.2f})  {word}")
            if mode == "always":
                rs = [r_ / f for r_, f in zip(times["rsync"], times["fspace-always"])]
                row += f"  rsync÷fspace {statistics.median(rs):.2f}x"
            print(row, flush=True)
            lines.append(row)
    for k, cmd in t.items():
        prepare(d, src, out, "warm")
        subprocess.run(cmd + [src, out], check=True, stdout=subprocess.DEVNULL)
        same = subprocess.run(["cmp", "-s", src, out]).returncode == 0
        info = {"allocated": allocated(out), "identical": same}
        prepare(d, src, out, "warm")
        info["write_calls"] = strace_writes(cmd, src, out, d)
        res["info"][k] = info
        w = sum(v for c, v in info["write_calls"].items() if c != "lseek")
        row = (f"    {k:<15} write-type syscalls {w:>7} {info['write_calls']}  "
               f"allocated {info['allocated'] / MIB:8.1f} MiB  identical {same}")
        print(row, flush=True)
        lines.append(row)
    os.unlink(src)
    if os.path.exists(out):
        os.unlink(out)
    return res


def main():
    for tool, pkg in (("rsync", "rsync"), ("strace", "strace")):
        if shutil.which(tool) is None:
            subprocess.run(["apt-get", "install", "-y", "-qq", pkg], check=True)
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs", "ext3", "tmpfs"]
    m = mounts()
    run_dir = start_run("copy-vs-cp")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release, "repeat": REPEAT,
           "size": SIZE, "caches": CACHES,
           "cp": subprocess.run(["cp", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
           "fspace": subprocess.run([FSPACE, "--version"], capture_output=True, text=True).stdout.strip(),
           "filesystems": {}}
    lines = [f"# bench/copy.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT} SIZE_MIB={SIZE >> 20}",
             f"# {raw['cp']}; {raw['fspace']}; time = command + fsync of the copy"]
    print("\n".join(lines), flush=True)
    for fs in fss:
        d = os.path.join(m[ALIASES.get(fs, fs)], "bench-copy")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        try:
            raw["filesystems"][fs] = {name: bench_source(fs, d, name, lines) for name in SOURCES}
        finally:
            shutil.rmtree(d, ignore_errors=True)
    save_raw(run_dir, "-".join(fss), raw)


if __name__ == "__main__":
    main()
