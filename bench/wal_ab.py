#!/usr/bin/env python3
"""Two builds of fspace, alternating, on the same mounts: the log's commit
rate (`fspace bench commit --mode wal`), to show that a change to the log
costs commits nothing (or what it costs).

For each filesystem (default ext4 xfs btrfs) and each of REPEAT rounds, runs
BASE then CAND (the order swaps every round, so neither always goes first):
  - 1 writer, 8 KiB records, SECONDS seconds  -> commits/s
  - 8 writers, 8 KiB records, SECONDS seconds -> commits/s
Prints each round, then per filesystem the median and min-max of CAND/BASE
over the rounds. A change is only called a change when the min-max of the
ratios lies entirely on one side of 1.

Usage: BASE=/path/to/old/fspace CAND=target/release/fspace \
       [REPEAT=5] [SECONDS=4] [TAG=name] bench/wal_ab.py [fs ...]
Writes the run folder bench/runs/DATE-wal-ab[-TAG]/ (output.txt, README.md with
the command and commit; say in it which commits BASE and CAND were built at).
Needs the matrix (`ci/matrix.sh up`; FSPACE_TEST_MOUNTS or /tmp/fspace-matrix/env).
"""
import json, os, statistics, subprocess, sys, tempfile, time
from benchlib import mounts, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.environ.get("BASE")
CAND = os.environ.get("CAND", os.path.join(ROOT, "target", "release", "fspace"))
REPEAT = int(os.environ.get("REPEAT", "5"))
SECONDS = os.environ.get("SECONDS", "4")


def commit_rate(binary, d, writers):
    subprocess.run(["sync", "-f", d])
    with tempfile.TemporaryDirectory(dir=d, prefix="wal-ab-") as t:
        out = subprocess.run([binary, "bench", "commit", "--json", "--seconds", SECONDS,
                              "--record", "8KiB", "--writers", str(writers), "--mode", "wal", t],
                             check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    # `state` since the benchmark speaks the probe's vocabulary; `mode` before.
    return next(r for r in doc["results"] if r.get("state", r.get("mode")) == "wal")["commits_per_sec"]


def main():
    if not BASE:
        sys.exit("set BASE to the fspace binary to compare against")
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs"]
    m = mounts()
    start_run("wal-ab")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {os.uname().release} BASE={BASE} CAND={CAND} "
          f"REPEAT={REPEAT} SECONDS={SECONDS}")
    summary = []
    for fs in fss:
        d = m[fs]
        ratios = {1: [], 8: []}
        for rnd in range(REPEAT):
            order = [("base", BASE), ("cand", CAND)]
            if rnd % 2:
                order.reverse()
            got = {}
            for writers in (1, 8):
                for name, binary in order:
                    got[(name, writers)] = commit_rate(binary, d, writers)
                ratios[writers].append(got[("cand", writers)] / got[("base", writers)])
            print(f"{fs} round {rnd}: 1 writer base {got[('base', 1)]:.0f} cand {got[('cand', 1)]:.0f} "
                  f"({ratios[1][-1]:.3f}x); 8 writers base {got[('base', 8)]:.0f} "
                  f"cand {got[('cand', 8)]:.0f} ({ratios[8][-1]:.3f}x)", flush=True)
        for w in (1, 8):
            r = ratios[w]
            summary.append(f"{fs} {w} writer(s): cand/base median {statistics.median(r):.3f}x, "
                           f"min-max {min(r):.3f}-{max(r):.3f} over {len(r)} rounds")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
