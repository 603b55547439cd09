#!/usr/bin/env python3
"""CPU time (perf stat task-clock) of cp and two builds of `fspace copy
--sparse always --reflink never`, one process at a time, alternating, R
runs (default 20): fspace's own cost where the page cache makes the wall
time noisy (tmpfs). Prints each tool's median and its per-run ratio to cp.

Usage: OLD=path/to/fspace NEW=path/to/fspace [R=20] bench/copy_cpu.py SRC DSTDIR
(SRC: e.g. 256 MiB of random data on tmpfs; needs `perf`.) Writes the run folder
bench/runs/DATE-copy-cpu[-TAG]/ (output.txt, README.md with the command and commit).
"""
import os, statistics, subprocess, sys
from benchlib import start_run


def main():
    if len(sys.argv) != 3 or "OLD" not in os.environ or "NEW" not in os.environ:
        sys.exit(__doc__)
    src, out = sys.argv[1], os.path.join(sys.argv[2], "copy_cpu.out")
    rounds = int(os.environ.get("R", "20"))
    start_run("copy-cpu")
    fl = ["copy", "--sparse", "always", "--reflink", "never"]
    cmds = {"cp": ["cp", "--sparse=always", "--reflink=never"],
            "old": [os.environ["OLD"]] + fl, "new": [os.environ["NEW"]] + fl}
    t = {k: [] for k in cmds}
    order = list(cmds)
    for r in range(rounds):
        for k in order[r % 3:] + order[:r % 3]:
            if os.path.exists(out):
                os.unlink(out)
            p = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "--"] + cmds[k] + [src, out],
                               capture_output=True, text=True, check=True)
            t[k].append(float(p.stderr.strip().splitlines()[-1].split(",")[0]))
    os.unlink(out)
    for k in order:
        rs = [a / b for a, b in zip(t[k], t["cp"])]
        print(f"{k:4} task-clock median {statistics.median(t[k]):.1f} ms  "
              f"÷cp {statistics.median(rs):.3f} ({min(rs):.2f}-{max(rs):.2f})")


if __name__ == "__main__":
    main()
