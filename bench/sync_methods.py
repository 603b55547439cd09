#!/usr/bin/env python3
"""The three sync methods side by side: `fspace bench commit --sync-method`.

Per filesystem (default ext4 xfs btrfs tmpfs), REPEAT rounds; each round is
one invocation per writer count (1 and 8 writers, 8 KiB records) that runs
the modes `recycled` (a bare overwrite of a written file, pg_test_fsync's
pattern) and `wal` (the log) once per method, the methods' order rotating
from round to round. Prints, per filesystem, mode and writer count, each
method's commits/s and its ratio to fdatasync of the same invocation:
the median over the rounds and the min-max of the rounds. Run folder:
bench/runs/DATE-sync-methods[-TAG]/ (raw.json, output.txt, README.md with
the command and commit).

Needs the matrix (`ci/matrix.sh up`) and a release build.
Usage: [REPEAT=5] [SECONDS=3] [WRITERS=1,8] [TAG=name] bench/sync_methods.py [fs ...]
"""
import json, os, statistics, subprocess, sys, time
from benchlib import mounts, save_raw, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
REPEAT = int(os.environ.get("REPEAT", "5"))
SECONDS = os.environ.get("SECONDS", "3")
WRITERS = [int(w) for w in os.environ.get("WRITERS", "1,8").split(",")]
METHODS = ["fdatasync", "dsync", "direct-dsync"]


def run(d, writers, methods):
    subprocess.run(["sync", "-f", d])
    out = subprocess.run(
        [FSPACE, "bench", "commit", "--json", "--seconds", SECONDS, "--record", "8KiB",
         "--writers", str(writers), "--mode", "recycled,wal", "--sync-method", ",".join(methods), d],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs", "tmpfs"]
    m = mounts()
    run_dir = start_run("sync-methods")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release,
           "seconds": SECONDS, "repeat": REPEAT, "runs": []}
    print(f"# bench/sync_methods.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT} SECONDS={SECONDS}")
    print("# commits/s per method (median of rounds); ratio = method ÷ fdatasync of the same invocation,"
          " median (min-max of rounds)")
    for fs in fss:
        d = m[fs]
        for w in WRITERS:
            # (mode, method) -> [commits/s per round], [ratio per round]
            cps, ratio = {}, {}
            for rnd in range(REPEAT):
                order = METHODS[rnd % 3:] + METHODS[:rnd % 3]
                doc = run(d, w, order)
                raw["runs"].append({"fs": fs, "writers": w, "round": rnd, "doc": doc})
                for r in doc["results"]:
                    key = (r["state"], r["sync_method"])
                    if r.get("unsupported"):
                        continue
                    cps.setdefault(key, []).append(r["commits_per_sec"])
                    if r.get("vs_fdatasync") is not None:
                        ratio.setdefault(key, []).append(r["vs_fdatasync"])
            for mode in ("recycled", "wal"):
                cells = []
                for meth in METHODS:
                    v = cps.get((mode, meth))
                    if not v:
                        cells.append(f"{meth} unsupported")
                        continue
                    rs = ratio.get((mode, meth), [1.0])
                    cells.append(f"{meth} {statistics.median(v):7.0f}/s {statistics.median(rs):.2f}x"
                                 f" ({min(rs):.2f}-{max(rs):.2f})")
                print(f"{fs:6} {mode:8} {w:2} writer{'s' if w > 1 else ' '}  " + "  ".join(cells), flush=True)
    save_raw(run_dir, "raw", raw)


if __name__ == "__main__":
    main()
