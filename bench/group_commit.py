#!/usr/bin/env python3
"""Group commit at several writer counts: fspace's log against plain appending
and the bare overwrite, and against an earlier build of the log (BASE), in
one run (issue 40).

Per filesystem (default: tmpfs ext4-fast xfs-fast ext4 xfs btrfs) and writer
count (WRITERS, default 1,2,8,16,64), REPEAT rounds (default 5) of, in turn:
  candidate   `fspace bench commit --mode wal,appended,recycled` (one process)
  base        BASE's `fspace bench commit --mode wal` (when BASE is set)
  rocksdb     RocksDB's whole write path, `db_bench --benchmarks=fillrandom
              --sync=1 --value_size=8192 --threads=N` (Debian's rocksdb-tools;
              its defaults otherwise: Snappy, fdatasync, a fresh database per
              run; ROCKSDB=0 leaves it out)
each for SECONDS (default 1), 8 KiB records. The order within a round
rotates (each variant first in turn).

Prints per filesystem and writer count the medians and min-max over the
rounds of: commits/s, log ÷ appending, log ÷ overwrite, log ÷ its own
1-writer rate (median of rounds ÷ median of rounds), candidate ÷ base, log ÷
RocksDB, p99 ÷ the 1-writer p99 (and the same for appending), and the group figures (records per group, flush time).
Raw JSON and output.txt go to bench/runs/DATE-group-commit[-TAG]/.

Needs the matrix (`ci/matrix.sh up`, which mounts the fast ones too) and a
release build. A BASE binary is built from an earlier commit, e.g.
  git worktree add /tmp/base <commit> && cargo build --release \\
      --manifest-path /tmp/base/Cargo.toml -p fspace-cli
Usage: [REPEAT=5] [SECONDS=1] [WRITERS=1,2,8] [BASE=path] [ROCKSDB=0] [FILE_SIZE=size] [TAG=name] \\
       bench/group_commit.py [fs ...]
"""
import json, os, re, shutil, statistics, subprocess, sys, time
from benchlib import FSPACE, mounts, scratch_dirs, start_run

REPEAT = int(os.environ.get("REPEAT", "5"))
SECONDS = os.environ.get("SECONDS", "1")
WRITERS = [int(w) for w in os.environ.get("WRITERS", "1,2,8,16,64").split(",")]
BASE = os.environ.get("BASE")
ROCKSDB = os.environ.get("ROCKSDB", "1") != "0"
# Each writer's file in the file modes (MiB): 256 MiB shared by the writers,
# at most 64 and at least 4 each, so that 64 writers fit the matrix's 512 MB
# mounts (the tmpfs holds everything in memory) and one writer's file, like
# the log's 16 MiB segments, is larger than the CPU's caches.
FILE_SIZE = os.environ.get("FILE_SIZE")


def file_size(writers):
    return FILE_SIZE or f"{max(4, min(64, 256 // writers))}MiB"


def bench(binary, d, writers, modes):
    subprocess.run(["sync", "-f", d], check=False)
    out = subprocess.run([binary, "bench", "commit", "--json", "--seconds", SECONDS,
                          "--record", "8KiB", "--writers", str(writers), "--mode", modes,
                          "--file-size", file_size(writers), d],
                         check=True, capture_output=True, text=True).stdout
    return {r["state"]: r for r in json.loads(out)["results"]}


def rocksdb(d, writers):
    """db_bench fillrandom with a synced WAL: ops/s and p99 (µs) of its
    whole write path (the memtable insert, the WAL write, fdatasync)."""
    db = os.path.join(d, "rocksdb-bench")
    # Debian's db_bench 7.8.3 is built with assertions on: one aborted once
    # (SIGABRT) at 64 threads on tmpfs. A failed run is tried once more,
    # then reported as missing rather than ending the whole benchmark.
    for attempt in (1, 2):
        shutil.rmtree(db, ignore_errors=True)
        subprocess.run(["sync", "-f", d], check=False)
        try:
            p = subprocess.run(["db_bench", "--benchmarks=fillrandom", f"--db={db}", "--sync=1",
                                "--value_size=8192", "--key_size=16", f"--threads={writers}",
                                f"--duration={SECONDS}", "--histogram=1",
                                # Time checked after every write, not every 1000 per
                                # thread: 64 threads would write 512 MB past the end.
                                "--ops_between_duration_checks=1"],
                               capture_output=True, text=True)
        finally:
            shutil.rmtree(db, ignore_errors=True)
        if p.returncode == 0:
            break
        print(f"# db_bench failed (attempt {attempt}, status {p.returncode}): "
              f"{(p.stderr or p.stdout).strip()[-300:]}", flush=True)
    else:
        return None
    out = p.stdout
    ops = re.search(r"^fillrandom\s*:.*?([0-9.]+) ops/sec", out, re.M)
    p99 = re.search(r"P99: ([0-9.]+)", out)
    if not ops or not p99:
        raise SystemExit(f"db_bench output not understood:\n{out}")
    return {"commits_per_sec": float(ops.group(1)), "latency": {"p99_us": float(p99.group(1))},
            "command_output": out}


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main():
    fss = sys.argv[1:] or ["tmpfs", "ext4-fast", "xfs-fast", "ext4", "xfs", "btrfs"]
    run = start_run("group-commit")
    raw = {"writers": WRITERS, "seconds": SECONDS, "repeat": REPEAT, "base": BASE, "rows": []}
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}; 8 KiB records; {SECONDS} s per mode; "
          f"{REPEAT} rounds; load {os.getloadavg()[0]:.2f}")
    for fs, d in scratch_dirs(mounts(), fss):
        one = {}
        for w in WRITERS:
            rounds = []
            who_all = ["cand"] + (["base"] if BASE else []) + (["rocksdb"] if ROCKSDB else [])
            for r in range(REPEAT):
                order = who_all[r % len(who_all):] + who_all[:r % len(who_all)]
                got = {}
                for who in order:
                    if who == "cand":
                        got.update(bench(FSPACE, d, w, "wal,appended,recycled"))
                    elif who == "base":
                        got["base"] = bench(BASE, d, w, "wal")["wal"]
                    elif (r := rocksdb(d, w)) is not None:
                        got["rocksdb"] = r
                rounds.append(got)
                raw["rows"].append({"fs": fs, "writers": w, "round": r, "results": got,
                                    "load": os.getloadavg()[0]})
            rate = lambda g, m: g[m]["commits_per_sec"] if m in g else None
            p99 = lambda g, m: g[m]["latency"]["p99_us"] if m in g else None
            wal = [rate(g, "wal") for g in rounds]
            med = statistics.median(wal)
            if w == 1:
                one = {"rate": med, "p99": statistics.median(p99(g, "wal") for g in rounds),
                       "p99_append": statistics.median(p99(g, "appended") for g in rounds)}
            grp = [g["wal"]["wal"]["group"] for g in rounds]
            size = [x["group_records"] / max(1, x["groups"]) for x in grp]
            flush = [x["flush_time_ns"] / 1000 for x in grp]
            print(f"{fs:9} {w:>2} writers: log {med:>9,.0f}/s"
                  f" | ÷append {spread([rate(g, 'wal') / rate(g, 'appended') for g in rounds])}"
                  f" | ÷overwrite {spread([rate(g, 'wal') / rate(g, 'recycled') for g in rounds])}"
                  f" | ÷own 1-writer {med / one['rate']:.2f}"
                  f" | ÷base {spread([rate(g, 'wal') / rate(g, 'base') if 'base' in g else None for g in rounds])}"
                  f" | ÷rocksdb {spread([rate(g, 'wal') / rate(g, 'rocksdb') if 'rocksdb' in g else None for g in rounds])}"
                  + (f" (rocksdb {statistics.median(rate(g, 'rocksdb') for g in rounds if 'rocksdb' in g):,.0f}/s,"
                     f" p99 {statistics.median(p99(g, 'rocksdb') for g in rounds if 'rocksdb' in g):.0f} µs)"
                     if any('rocksdb' in g for g in rounds) else "")
                  + f" | p99 {statistics.median(p99(g, 'wal') for g in rounds):.0f} µs"
                  f" = {statistics.median(p99(g, 'wal') for g in rounds) / one['p99']:.1f}x 1-writer"
                  f" (appending {statistics.median(p99(g, 'appended') for g in rounds) / one['p99_append']:.1f}x)"
                  f" | group {spread(size)} | flush {spread(flush)} µs")
            sys.stdout.flush()
            # After every row: an error later keeps what was measured.
            with open(os.path.join(run, "raw.json"), "w") as f:
                json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
