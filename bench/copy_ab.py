#!/usr/bin/env python3
"""Two builds of fspace against cp, in one run: is a change to `fspace copy`
faster, on one row of bench/copy.py?

Usage: OLD=path/to/fspace NEW=path/to/fspace [R=5] [SIZE_MIB=256]
       bench/copy_ab.py FS SOURCE CACHE MODE
  FS      ext4 xfs btrfs ext3 tmpfs (the matrix's mounts, as bench/copy.py)
  SOURCE  random holes vm extents (bench/copy.py's sources)
  CACHE   warm cold
  MODE    default (cp vs fspace copy) or always (--sparse always --reflink never)
Each round runs cp, OLD and NEW in a rotating order, with bench/copy.py's
preparation and timing (command + fsync of the copy); prints each build's
time ÷ cp per round as median (min-max). Build the old binary from a
worktree: `git worktree add /tmp/old REV && (cd /tmp/old && cargo build --release)`.
Each row is appended to the run folder bench/runs/DATE-copy-ab[-TAG]/
(output.txt, README.md with every row's command and the commit).
"""
import os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("SIZE_MIB", "256")
import copy as C  # noqa: E402  (bench/copy.py: sources, preparation, timing)
from benchlib import mounts, start_run  # noqa: E402


def main():
    if len(sys.argv) != 5 or "OLD" not in os.environ or "NEW" not in os.environ:
        sys.exit(__doc__)
    fs, name, cache, mode = sys.argv[1:5]
    rounds = int(os.environ.get("R", "5"))
    start_run("copy-ab")
    d = os.path.join(mounts()[C.ALIASES.get(fs, fs)], "bench-copy-ab")
    os.makedirs(d, exist_ok=True)
    src = C.make_source(d, name)
    out = os.path.join(d, "copy")
    fl = ["--sparse", "always", "--reflink", "never"] if mode == "always" else []
    cmds = {"cp": ["cp"] + (["--sparse=always", "--reflink=never"] if mode == "always" else []),
            "old": [os.environ["OLD"], "copy"] + fl, "new": [os.environ["NEW"], "copy"] + fl}
    t = {k: [] for k in cmds}
    order = list(cmds)
    for r in range(rounds):
        for k in order[r % 3:] + order[:r % 3]:
            C.prepare(d, src, out, cache)
            t[k].append(C.timed(cmds[k], src, out))
    line = f"{fs:6} {name:8} {cache:5} {mode:8} cp {statistics.median(t['cp']):.3f}s"
    for k in ("old", "new"):
        rs = [a / b for a, b in zip(t[k], t["cp"])]
        line += f"  {k} {statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})"
    print(line, flush=True)
    os.unlink(src)
    os.unlink(out)


if __name__ == "__main__":
    main()
