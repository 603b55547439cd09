#!/usr/bin/env python3
"""Which write size copies fastest into each filesystem: the evidence behind
`sparse::writer::write_chunk` (the largest `pwritev` a copy issues).

Per filesystem (default: ext4 xfs btrfs ext3 tmpfs), a 1 GiB random source
in the page cache is copied by `dd` with ibs = obs = each size in SIZES
(default 64K,128K,256K,512K,1M), alternating sizes in a rotating order for
REPEAT rounds (default 5); the time is until the copy is on disk (dd
conv=fsync). Prints per size the median and the min-max of the rounds, and
the per-round ratio to 128 KiB (what cp writes). Needs root and the matrix
at 3072 MB (`FSPACE_MATRIX_SIZE_MB=3072 ci/matrix.sh up`).
Usage: [REPEAT=5] [SIZES=64K,128K,256K,512K,1M] bench/write_size.py [fs ...]
Writes the run folder bench/runs/DATE-write-size[-TAG]/ (output.txt,
README.md with the command and commit).
"""
import os, statistics, subprocess, sys, time
from benchlib import mounts, start_run

REPEAT = int(os.environ.get("REPEAT", "5"))
SIZES = os.environ.get("SIZES", "64K,128K,256K,512K,1M").split(",")
ALIASES = {"ext3": "ext4-noextents"}
GIB = 1 << 30


def prefault():
    """See bench/copy.py: this VM hands freed memory back to its host."""
    b = b"\1" * (2 * GIB)
    del b


def main():
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs", "ext3", "tmpfs"]
    m = mounts()
    start_run("write-size")
    lines = [f"# bench/write_size.py  {time.strftime('%Y-%m-%d %H:%M')}  Linux {os.uname().release}  "
             f"REPEAT={REPEAT}; 1 GiB from the page cache, dd ibs=obs=SIZE conv=fsync"]
    print(lines[0], flush=True)
    for fs in fss:
        d = os.path.join(m[ALIASES.get(fs, fs)], "bench-wsize")
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "src")
        out = os.path.join(d, "out")
        try:
            with open(src, "wb") as f:
                for _ in range(GIB >> 22):
                    f.write(os.urandom(4 << 20))
            times = {s: [] for s in SIZES}
            for r in range(REPEAT):
                order = SIZES[r % len(SIZES):] + SIZES[:r % len(SIZES)]
                for s in order:
                    if os.path.exists(out):
                        os.unlink(out)
                    subprocess.run(["sync", "-f", d])
                    subprocess.run(["cat", src], stdout=subprocess.DEVNULL)
                    prefault()
                    t = time.perf_counter()
                    subprocess.run(["dd", f"if={src}", f"of={out}", f"bs={s}", "conv=fsync", "status=none"],
                                   check=True)
                    times[s].append(time.perf_counter() - t)
            base = times.get("128K")
            for s in SIZES:
                v = times[s]
                row = f"{fs:<6} {s:>5}  median {statistics.median(v):6.3f}s  rounds {min(v):6.3f}-{max(v):6.3f}s"
                if base:
                    rr = [a / b for a, b in zip(v, base)]
                    row += f"  ÷128K median {statistics.median(rr):.2f}x (rounds {min(rr):.2f}-{max(rr):.2f})"
                print(row, flush=True)
                lines.append(row)
        finally:
            for p in (src, out):
                if os.path.exists(p):
                    os.unlink(p)
            os.rmdir(d)


if __name__ == "__main__":
    main()
