#!/usr/bin/env python3
"""`fspace probe` on every filesystem of the matrix, REPEAT times each, in a
rotating order of filesystems: how long each level takes against its
budget, what it recommends (log strategy, recycling, sync method), whether
a decision was too noisy to make, whether the machine was busy, and the
prediction for the recommended log setup, run by run.

Every comparison is inside one probe run (the machine is noisy; absolute
rates mean little). Writes the run folder bench/runs/DATE-probe-LEVEL[-TAG]/
(raw.json: the probe's JSON documents; output.txt; README.md with the command
and commit) and prints a Markdown table.

Needs the matrix (`sudo ci/matrix.sh up`; 512 MB per filesystem is enough)
and a release build (`cargo build --release`).
Usage: [REPEAT=3] [LEVEL=standard|quick|full] bench/probe.py [fs ...]
       bench/probe.py --from bench/runs/DATE-probe-LEVEL/raw.json   (tables from a recorded run)
"""
import json, os, statistics, subprocess, sys, time
from benchlib import mounts, save_raw, start_run

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
    run_dir = start_run(f"probe-{LEVEL}")
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
            pred = doc["commit"].get("prediction") or {}
            bulk = next(x for x in doc["recommendations"] if x["intent"] == "bulk")
            growth = {g["strategy"]: g for g in doc["growth"]["results"] if g["unsupported"] is None}
            rounds = lambda g: g.get("runs") or [g["bytes_per_sec"]]
            ms = lambda g: "/".join(f"{g['bytes'] / r * 1e3:.1f} ms" for r in rounds(g))
            mib = lambda g: "/".join(f"{r / 2**20:.0f} MiB/s" for r in rounds(g))
            print(f"{fs:15} round {r}: {doc['elapsed_ms']/1e3:5.1f} s  log {log['strategy']:10} "
                  f"{prep[log['strategy']]:9.0f}/s  fastest {best[0]} {best[1]:.0f}/s  "
                  f"sync {log.get('sync_method')}  {'TOO NOISY ' if log.get('too_noisy') else ''}"
                  f"{'SYNC TOO NOISY ' if log.get('sync_too_noisy') else ''}"
                  f"{'busy ' if doc['machine']['busy'] else ''}predicted {pred.get('commits_per_sec', 0):.0f}/s  "
                  f"bulk {bulk['strategy']}{' TOO NOISY' if bulk.get('too_noisy') else ''} (rounds: "
                  + ", ".join([f"allocate {ms(growth['allocate'])}"] if "allocate" in growth else [])
                  + (f"; zero-fill {mib(growth['zero-fill'])}" if "zero-fill" in growth else "") + ")",
                  flush=True)
    save_raw(run_dir, "raw", raw)
    print()
    tables(fss, per, LEVEL)


def tables(fss, per, level):
    REPEAT = max(len(v) for v in per.values())
    LEVEL = level
    print(f"| fs ({LEVEL}, {REPEAT} runs) | time s (max) | log | sync | too noisy (log, sync) | "
          "log ÷ append | allocated ÷ chosen | wal ÷ append | bulk | busy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fs in fss:
        docs = per[fs]
        times = [d["elapsed_ms"] / 1e3 for d in docs]
        logs, vs_app, alloc, wal, bulks, syncs = [], [], [], [], [], []
        noisy, sync_noisy, busy = 0, 0, 0
        for d in docs:
            rt = rates(d)
            log = next(x for x in d["recommendations"] if x["intent"] == "log")
            bulk = next(x for x in d["recommendations"] if x["intent"] == "bulk")
            logs.append(log["strategy"] + (" +recycle" if log.get("recycle") else ""))
            bulks.append(bulk["strategy"] + (" (too noisy)" if bulk.get("too_noisy") else ""))
            prep = {k: rt[v] for k, v in PREP.items() if v in rt}
            chosen = prep[log["strategy"]]
            syncs.append(str(log.get("sync_method")))
            noisy += bool(log.get("too_noisy"))
            sync_noisy += bool(log.get("sync_too_noisy"))
            busy += bool(d.get("machine", {}).get("busy"))
            vs_app.append(chosen / rt["appended"])
            if "allocated" in rt:
                alloc.append(rt["allocated"] / chosen)
            wal.append(rt["wal"] / rt["appended"])
        fmt = lambda v: "-" if not v else f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"
        print(f"| {fs} | {statistics.median(times):.1f} ({max(times):.1f}) | {', '.join(sorted(set(logs)))} | "
              f"{', '.join(sorted(set(syncs)))} | {noisy}, {sync_noisy} of {len(docs)} | {fmt(vs_app)} | "
              f"{fmt(alloc)} | {fmt(wal)} | {', '.join(f'{b} x{bulks.count(b)}' for b in sorted(set(bulks)))} | {busy} of {len(docs)} |")

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
