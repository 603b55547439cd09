#!/usr/bin/env python3
"""A/B of a build's variants chosen by an environment variable, alternating
in each round: `fspace bench commit` (8 KiB records, 1 s, --file-size 64MiB)
once per value, the order reversed every other round; prints per value the
median (min-max over the rounds) of the log's commits/s, log ÷ appending
(with modes wal,appended), p99 and blocked followers.

The variable is read by a temporary switch in the build under test (see the
run folder's notes.md for which); the binary is $FSPACE_EXP (default
/tmp/fspace-exp). R rounds (default 5).

Usage: [R=5] [FSPACE_EXP=path] bench/variant_ab.py DIR WRITERS VAR=v1,v2[,...] [modes]
"""
import json, os, subprocess, sys, statistics
# usage: exp.py DIR WRITERS VAR=val1,val2 [modes]
d, w, var = sys.argv[1], sys.argv[2], sys.argv[3]
name, vals = var.split("=")
modes = sys.argv[4] if len(sys.argv) > 4 else "wal,appended"
res = {v: [] for v in vals.split(",")}
for r in range(int(os.environ.get("R", "5"))):
    order = list(res) if r % 2 == 0 else list(res)[::-1]
    for v in order:
        env = dict(os.environ, **{name: v})
        subprocess.run(["sync", "-f", d])
        out = subprocess.run([os.environ.get("FSPACE_EXP", "/tmp/fspace-exp"), "bench", "commit", "--json", "--seconds", "1", "--record", "8KiB",
                              "--writers", w, "--mode", modes, "--file-size", "64MiB", d], env=env, capture_output=True, text=True, check=True).stdout
        rr = {x["state"]: x for x in json.loads(out)["results"]}
        wal = rr["wal"]
        res[v].append((wal["commits_per_sec"], wal["commits_per_sec"] / rr["appended"]["commits_per_sec"] if "appended" in rr else 0, wal["latency"]["p99_us"], wal["wal"]["group"]["follower_waits"]))
for v, xs in res.items():
    f = lambda i: f"{statistics.median(x[i] for x in xs):.2f} ({min(x[i] for x in xs):.2f}-{max(x[i] for x in xs):.2f})"
    print(f"{name}={v}: rate {f(0)} ÷append {f(1)} p99 {f(2)} waits {f(3)}")
