#!/usr/bin/env python3
"""The log's own cost per commit: on tmpfs, where a flush costs nothing, the
log's commit rate against a bare 8 KiB pwrite + fdatasync overwrite, both
measured in the same `fspace bench commit` run (`--mode recycled,wal`), so
each ratio comes from one run on one machine state.

With BASE set, two builds alternate (the order swaps every round): each
round runs BASE, then CAND (or the reverse), and the summary gives, per
build, the median and min-max of wal ÷ overwrite over the rounds, and the
per-round CAND ÷ BASE of that ratio. A build is only called better when the
min-max of CAND ÷ BASE lies entirely above 1.

With HOW=interleaved, BASE and CAND are builds of the `wal_overhead` benchmark
(`cargo build --release -p fspace-bench --bin wal_overhead`, copied aside per
build) and each run is one of it: 20 ms slices of bare overwrites and log
commits alternating inside the run, the ratio the median of its per-second
windows. On a noisy VM two whole `bench commit` runs a few seconds apart
differ more than these windows do (bench/runs/2026-11-26-wal-overhead-interleaved/).

Usage: [BASE=/path/to/old/fspace] [CAND=target/release/fspace] [REPEAT=8]
       [SECONDS=2] [SYNC=fdatasync] [HOW=bench|interleaved] bench/wal_overhead.py [DIR]
DIR defaults to the matrix's tmpfs (FSPACE_TEST_MOUNTS or
/tmp/fspace-matrix/env), else a tmpfs this script mounts under /tmp (root).
Writes the run folder bench/runs/DATE-wal-overhead[-TAG]/ (output.txt,
README.md with the command and commit; say in it which commits BASE and CAND
were built at).
"""
import json, os, re, statistics, subprocess, sys, tempfile
from benchlib import mounts, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.environ.get("BASE")
HOW = os.environ.get("HOW", "bench")
CAND = os.environ.get("CAND", os.path.join(ROOT, "target", "release",
                                           "wal_overhead" if HOW == "interleaved" else "fspace"))
REPEAT = int(os.environ.get("REPEAT", "8"))
SECONDS = os.environ.get("SECONDS", "2")
SYNC = os.environ.get("SYNC", "fdatasync")


def tmpfs_dir():
    if len(sys.argv) > 1:
        return sys.argv[1], None
    try:
        m = mounts().get("tmpfs")
    except SystemExit:  # no matrix
        m = None
    if m:
        return m, None
    d = tempfile.mkdtemp(prefix="fspace-wal-overhead-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", d], check=True)
    return d, d


def one_run(binary, d):
    """wal ÷ overwrite and both rates, from one run."""
    if HOW == "interleaved":
        out = subprocess.run([binary, d, SECONDS, "20", SYNC],
                             check=True, capture_output=True, text=True).stdout
        m = re.search(r"overwrite (\d+)/s, log (\d+)/s.*?(?:median of the windows|log ÷ overwrite) ([0-9.]+)", out)
        if not m:
            sys.exit(f"wal_overhead.py: unexpected output of {binary}:\n{out}")
        return float(m.group(3)), float(m.group(1)), float(m.group(2))
    with tempfile.TemporaryDirectory(dir=d, prefix="wal-overhead-") as t:
        out = subprocess.run([binary, "bench", "commit", "--json", "--seconds", SECONDS,
                              "--record", "8KiB", "--sync-method", SYNC,
                              "--mode", "recycled,wal", t],
                             check=True, capture_output=True, text=True).stdout
    rate = {r["state"]: r["commits_per_sec"] for r in json.loads(out)["results"]}
    return rate["wal"] / rate["recycled"], rate["recycled"], rate["wal"]


def summary(name, v):
    return f"{name}: {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})"


def main():
    d, mounted = tmpfs_dir()
    start_run("wal-overhead")
    builds = [("base", BASE), ("cand", CAND)] if BASE else [("cand", CAND)]
    print(f"# wal ÷ overwrite, 8 KiB, 1 writer, {SYNC}, {SECONDS} s per run ({HOW}), on {d}")
    for name, b in builds:
        print(f"# {name}: {b}")
    print("# round build   overwrite/s       wal/s  wal÷overwrite")
    ratios = {name: [] for name, _ in builds}
    try:
        for r in range(REPEAT):
            order = builds if r % 2 == 0 else builds[::-1]
            for name, b in order:
                ratio, over, wal = one_run(b, d)
                ratios[name].append(ratio)
                print(f"{r + 1:7} {name:5} {over:13.0f} {wal:11.0f} {ratio:14.3f}", flush=True)
    finally:
        if mounted:
            subprocess.run(["umount", mounted])
            os.rmdir(mounted)
    for name, _ in builds:
        print(summary(f"wal ÷ overwrite, {name}", ratios[name]))
    if BASE:
        per = [c / b for b, c in zip(ratios["base"], ratios["cand"])]
        verdict = "better" if min(per) > 1 else "worse" if max(per) < 1 else "no difference shown"
        print(summary("cand ÷ base, per round", per) + f": {verdict}")


if __name__ == "__main__":
    main()
