#!/usr/bin/env python3
"""The log's record layouts, measured against each other and against plain
appending and the bare overwrite, alternating in every round.

Variants (each one `fspace bench commit --json` invocation):
  v1       the log of an older build (OLD: format 1, the partial last page
           rewritten by the next commit), its own choices
  packed   this build's log, --pad-flushes off --nocow off (format 2, the
           same pattern as v1)
  padded   this build's log, --pad-flushes on --nocow off (every flush ends
           on a page boundary: no page written twice)
  nocow    (btrfs only) this build's log, --nocow on --pad-flushes off:
           segments chattr +C and zero-filled, overwritten in place
  append   --mode appended (O_APPEND write + fdatasync: the log's rival)
  overwrite --mode recycled with the log's sync method (direct-dsync on
           ext4 and xfs, fdatasync elsewhere): the ceiling, as
           pg_test_fsync measures it; only for 8 KiB records
For each filesystem (default ext4 xfs btrfs tmpfs), record size (SIZES,
default 512,8192,65536) and writer count (WRITERS, default 1,8), REPEAT
rounds (default 5); the order of the variants rotates every round. Prints
every round, then per cell the median and min-max of each variant's rate
divided by packed's (and by append's, by overwrite's), and on btrfs the
disk extents the log's files pin per byte they reference.

Usage: OLD=/path/to/fspace-v1 [REPEAT=5] [SECONDS=2] [SIZES=..] [WRITERS=..]
       [TAG=name] python3 bench/wal_layout.py [fs ...]
Without OLD the v1 variant is left out. Writes bench/runs/DATE-wal-layout[-TAG]/
(output.txt, raw.json, README.md). Needs the matrix (`ci/matrix.sh up`).
"""
import json, os, statistics, subprocess, sys, tempfile, time
from benchlib import FSPACE, base, mounts, save_raw, start_run

OLD = os.environ.get("OLD")
REPEAT = int(os.environ.get("REPEAT", "5"))
SECONDS = os.environ.get("SECONDS", "2")
SIZES = [int(s) for s in os.environ.get("SIZES", "512,8192,65536").split(",")]
WRITERS = [int(w) for w in os.environ.get("WRITERS", "1,8").split(",")]


def run(binary, d, args):
    """One invocation; returns (commits/s, pinned ratio or None). A failed
    invocation is printed and tried once more (a loop device shared with
    the host can refuse one, ENOSPC while the last run's files go)."""
    for attempt in (1, 2):
        subprocess.run(["sync", "-f", d])
        with tempfile.TemporaryDirectory(dir=d, prefix="layout-") as t:
            p = subprocess.run([binary, "bench", "commit", "--json", "--seconds", SECONDS, *args,
                                t], capture_output=True, text=True)
        if p.returncode == 0:
            break
        print(f"# failed (attempt {attempt}): {binary} {' '.join(args)}: {p.stderr.strip()}",
              flush=True)
        if attempt == 2:
            p.check_returncode()
    out = p.stdout
    doc = json.loads(out)
    r = doc["results"][0]
    pinned = None
    space = (r.get("wal") or {}).get("space") or {}
    if space.get("pinned_bytes") and space.get("allocated_bytes"):
        pinned = space["pinned_bytes"] / space["allocated_bytes"]
    return r["commits_per_sec"], pinned


def variants(fs, size, writers):
    common = ["--record", str(size), "--writers", str(writers)]
    v = []
    if OLD:
        v.append(("v1", OLD, common + ["--mode", "wal"]))
    v.append(("packed", FSPACE, common + ["--mode", "wal", "--pad-flushes", "off",
                                          "--nocow", "off"]))
    v.append(("padded", FSPACE, common + ["--mode", "wal", "--pad-flushes", "on",
                                          "--nocow", "off"]))
    if base(fs) == "btrfs":
        v.append(("nocow", FSPACE, common + ["--mode", "wal", "--pad-flushes", "off",
                                             "--nocow", "on"]))
    v.append(("append", FSPACE, common + ["--mode", "appended"]))
    if size == 8192:
        method = "direct-dsync" if base(fs) in ("ext4", "xfs") else "fdatasync"
        v.append(("overwrite", FSPACE, common + ["--mode", "recycled", "--sync-method", method]))
    return v


def span(xs):
    return f"{statistics.median(xs):.3f}x ({min(xs):.3f}-{max(xs):.3f})"


def main():
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs", "tmpfs"]
    m = mounts()
    run_dir = start_run("wal-layout")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {os.uname().release} OLD={OLD} NEW={FSPACE} "
          f"REPEAT={REPEAT} SECONDS={SECONDS} SIZES={SIZES} WRITERS={WRITERS}")
    raw = []
    summary = []
    for fs in fss:
        d = m[fs]
        for size in SIZES:
            for writers in WRITERS:
                vs = variants(fs, size, writers)
                n_before = len(summary)
                rates = {name: [] for name, _, _ in vs}
                pins = {name: [] for name, _, _ in vs}
                for rnd in range(REPEAT):
                    k = rnd % len(vs)
                    got = {}
                    for name, binary, args in vs[k:] + vs[:k]:
                        rate, pin = run(binary, d, args)
                        got[name] = rate
                        rates[name].append(rate)
                        if pin is not None:
                            pins[name].append(pin)
                        raw.append({"fs": fs, "record": size, "writers": writers, "round": rnd,
                                    "variant": name, "commits_per_sec": rate, "pinned": pin})
                    print(f"{fs} {size} B {writers}w round {rnd}: " +
                          " ".join(f"{n} {got[n]:.0f}" for n, _, _ in vs), flush=True)
                cell = f"{fs} {size} B {writers}w"
                for name in rates:
                    if name == "packed":
                        continue
                    r = [a / b for a, b in zip(rates[name], rates["packed"])]
                    summary.append(f"{cell}: {name}/packed {span(r)}")
                for name in ("v1", "packed", "padded", "nocow"):
                    if name not in rates:
                        continue
                    r = [a / b for a, b in zip(rates[name], rates["append"])]
                    summary.append(f"{cell}: {name}/append {span(r)}")
                    if "overwrite" in rates:
                        r = [a / b for a, b in zip(rates[name], rates["overwrite"])]
                        summary.append(f"{cell}: {name}/overwrite {span(r)}")
                    if pins[name]:
                        summary.append(f"{cell}: {name} pins {min(pins[name]):.2f}-"
                                       f"{max(pins[name]):.2f}x what it references")
                for name in rates:
                    summary.append(f"{cell}: {name} commits/s median "
                                   f"{statistics.median(rates[name]):.0f} "
                                   f"({min(rates[name]):.0f}-{max(rates[name]):.0f})")
                print("\n".join(summary[n_before:]), flush=True)
    save_raw(run_dir, "raw", raw)
    print("## summary")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
