#!/usr/bin/env python3
"""What a growth strategy costs later: random 4 KiB overwrites + fdatasync
(a log's commit pattern) into a 64 MiB file grown by each strategy.

Files are grown with `fspace grow --sync --for log --strategy S` (zero-fill,
allocate, sparse), with a zero-fill for intent bulk (which keeps the fill's
pages cached) and, as the baseline for a written file, `dd oflag=direct`. Strategies
alternate, REPEAT rounds; prints median ms per commit and the ratio to
`allocate` (unwritten extents). Needs the matrix and a release build.
Usage: bench/overwrite.py [fs ...]   (default: ext4 xfs btrfs ext4-noextents)
"""
import os, random, statistics, subprocess, sys, time, json
from benchlib import mounts, save_raw, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
REPEAT = int(os.environ.get("REPEAT", "3"))
COMMITS = int(os.environ.get("COMMITS", "1500"))
SIZE = 64 << 20


def prep(d, kind):
    p = os.path.join(d, "overwrite-" + kind)
    if os.path.exists(p):
        os.unlink(p)
    subprocess.run(["sync", "-f", d])
    if kind == "zero-fill-cached":
        # The same fill with intent bulk: its pages stay in the page cache
        # (DROP_FILLED_PAGES_AFTER_SYNC applies to intent log only).
        subprocess.run([FSPACE, "grow", "--create", "--sync", "--for", "bulk", "--strategy", "zero-fill", p,
                        str(SIZE)], check=True, stdout=subprocess.DEVNULL)
    elif kind == "dd-direct":
        subprocess.run(["dd", "if=/dev/zero", "of=" + p, "bs=1M", f"count={SIZE >> 20}", "oflag=direct",
                        "conv=fsync", "status=none"], check=True)
    else:
        subprocess.run([FSPACE, "grow", "--create", "--sync", "--for", "log", "--no-fallback", "--strategy", kind, p, str(SIZE)],
                       check=True, stdout=subprocess.DEVNULL)
    return p


def commits(p):
    rnd = random.Random(1)
    buf = os.urandom(4096)
    fd = os.open(p, os.O_WRONLY)
    t = time.perf_counter()
    for _ in range(COMMITS):
        os.pwrite(fd, buf, rnd.randrange(SIZE // 4096) * 4096)
        os.fdatasync(fd)
    el = time.perf_counter() - t
    os.close(fd)
    os.unlink(p)
    return el * 1e3 / COMMITS


def main():
    m = mounts()
    run_dir = start_run("overwrite")
    names = sys.argv[1:] or ["ext4", "xfs", "btrfs", "ext4-noextents"]
    print(f"{COMMITS} random 4 KiB overwrites + fdatasync into a 64 MiB file; median of {REPEAT}; "
          "ratio = allocate's ms / this strategy's ms")
    print()
    print("| fs | zero-fill (log) | zero-fill, pages kept | allocate | sparse | dd oflag=direct |")
    print("|---|---|---|---|---|---|")
    out = {}
    for fs in names:
        if fs not in m:
            print(f"overwrite: {fs} not mounted, skipped", file=sys.stderr)
            continue
        kinds = ["zero-fill", "zero-fill-cached", "allocate", "sparse", "dd-direct"]
        if fs == "ext4-noextents":
            kinds.remove("allocate")
        res = {k: [] for k in kinds}
        for _ in range(REPEAT):
            for k in kinds:
                res[k].append(commits(prep(m[fs], k)))
        med = {k: statistics.median(v) for k, v in res.items()}
        out[fs] = med
        base = med.get("allocate")
        cell = lambda k: "—" if k not in med else (
            f"{med[k]:.3f} ms" + (f" ({base / med[k]:.1f}x)" if base else ""))
        cells = " | ".join(cell(k) for k in ["zero-fill", "zero-fill-cached", "allocate", "sparse", "dd-direct"])
        print(f"| {fs} | {cells} |")
    save_raw(run_dir, "raw", dict(commits=COMMITS, repeat=REPEAT, results=out))


if __name__ == "__main__":
    main()
