#!/usr/bin/env python3
"""`fspace probe` on every filesystem of the matrix, REPEAT times each, in a
rotating order of filesystems: how long each level takes against its
budget, what it recommends, and whether the recommended log strategy is
the fastest preparation measured in the same run or within 10% of it (the
issue's rule), run by run.

Every comparison is inside one probe run (the machine is noisy; absolute
rates mean little). Writes the raw JSON documents to
bench/results/DATE-probe.json and prints a Markdown table.

Needs the matrix (`sudo ci/matrix.sh up`; 512 MB per filesystem is enough)
and a release build (`cargo build --release`).
Usage: [REPEAT=3] [LEVEL=standard|quick|full] bench/probe.py [fs ...]
       bench/probe.py --from bench/results/DATE-probe-LEVEL.json   (tables from a recorded run)
"""
import json, os, statistics, subprocess, sys, time
from benchlib import mounts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
REPEAT = int(os.environ.get("REPEAT", "3"))
LEVEL = os.environ.get("LEVEL", "standard")
PREP = {"sparse": "sparse", "allocate": "allocated", "write-zeroes": "write-zeroed", "zero-fill": "zero-filled"}


def probe(d):
    args = [FSPACE, "probe", "--json", "-q"]
    if LEVEL != "standard":
        args.append("--" + LEVEL)
    subprocess.run(["sync", "-f", d])
    out = subprocess.run(args + [d], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def rates(doc):
    return {s["state"]: s["commits_per_sec"] for s in doc["commit"]["states"]
            if s["unsupported"] is None and s["commits"] > 0}


def main():
    if sys.argv[1:2] == ["--from"]:
        raw = json.load(open(sys.argv[2]))
        fss = list(dict.fromkeys(r["fs"] for r in raw["runs"]))
        per = {fs: [r["doc"] for r in raw["runs"] if r["fs"] == fs] for fs in fss}
        return tables(fss, per, raw["level"])
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs", "ext4-noextents", "tmpfs", "sshfs"]
    m = mounts()
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release, "level": LEVEL, "runs": []}
    per = {fs: [] for fs in fss}
    for r in range(REPEAT):
        order = fss[r % len(fss):] + fss[:r % len(fss)]
        for fs in order:
            doc = probe(m[fs])
            raw["runs"].append({"fs": fs, "round": r, "doc": doc})
            per[fs].append(doc)
            rt = rates(doc)
            log = next(x for x in doc["recommendations"] if x["intent"] == "log")
            prep = {k: rt[v] for k, v in PREP.items() if v in rt}
            best = max(prep.items(), key=lambda kv: kv[1])
            ok = prep[log["strategy"]] >= 0.9 * best[1]
            print(f"{fs:15} round {r}: {doc['elapsed_ms']/1e3:5.1f} s  log {log['strategy']:10} "
                  f"{prep[log['strategy']]:9.0f}/s  fastest {best[0]} {best[1]:.0f}/s  "
                  f"{'ok' if ok else 'NOT within 10%'}", flush=True)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    path = os.path.join(ROOT, "bench", "results", time.strftime("%Y-%m-%d") + f"-probe-{LEVEL}.json")
    with open(path, "w") as f:
        json.dump(raw, f, indent=1)
    print(f"\nraw: {path}\n")
    tables(fss, per, LEVEL)


def tables(fss, per, level):
    REPEAT = max(len(v) for v in per.values())
    LEVEL = level
    print(f"| fs ({LEVEL}, {REPEAT} runs) | time s (max) | log | within 10% of fastest | "
          "log ÷ append | allocated ÷ chosen | wal ÷ append | bulk | sparse allocated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fs in fss:
        docs = per[fs]
        times = [d["elapsed_ms"] / 1e3 for d in docs]
        logs, within, vs_app, alloc, wal, bulks = [], 0, [], [], [], []
        for d in docs:
            rt = rates(d)
            log = next(x for x in d["recommendations"] if x["intent"] == "log")
            bulk = next(x for x in d["recommendations"] if x["intent"] == "bulk")
            logs.append(log["strategy"] + (" +recycle" if log.get("recycle") else ""))
            bulks.append(bulk["strategy"])
            prep = {k: rt[v] for k, v in PREP.items() if v in rt}
            chosen = prep[log["strategy"]]
            within += chosen >= 0.9 * max(prep.values())
            vs_app.append(chosen / rt["appended"])
            if "allocated" in rt:
                alloc.append(rt["allocated"] / chosen)
            wal.append(rt["wal"] / rt["appended"])
        sparse = next(g for g in docs[-1]["growth"]["results"] if g["strategy"] == "sparse")
        fmt = lambda v: "-" if not v else f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"
        print(f"| {fs} | {statistics.median(times):.1f} ({max(times):.1f}) | {', '.join(sorted(set(logs)))} | "
              f"{within}/{len(docs)} | {fmt(vs_app)} | {fmt(alloc)} | {fmt(wal)} | {', '.join(sorted(set(bulks)))} | "
              f"{sparse['allocated_bytes'] >> 20} MiB |")

    print(f"\nCommits/s per space state, median of the {REPEAT} runs' medians (× appended in the same run, median):\n")
    states = ["appended", "sparse", "allocated", "write-zeroed", "zero-filled", "recycled", "wal"]
    print("| fs | " + " | ".join(states) + " |")
    print("|---|" + "---|" * len(states))
    for fs in fss:
        cells = []
        for st in states:
            vals, rel = [], []
            for d in per[fs]:
                rt = rates(d)
                if st in rt:
                    vals.append(rt[st])
                    rel.append(rt[st] / rt["appended"])
            cells.append("n/a" if not vals else f"{statistics.median(vals):,.0f} ({statistics.median(rel):.2f}x)")
        print(f"| {fs} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
