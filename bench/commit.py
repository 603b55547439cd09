#!/usr/bin/env python3
"""The segment log against its baselines, with `fspace bench commit` (every
mode of one invocation runs in the same process, one after the other).

Per filesystem (default ext4 xfs btrfs), REPEAT rounds of:
  1. 1 writer, 8 KiB records, all six modes, then append/overwrite/wal twice more,
     alternating (one invocation)                    -> wal ÷ overwrite, wal ÷ append (median of
                                                        the three alternations), segment-opening
                                                        commits vs p99
  2. 16 writers, 8 KiB records, wal                 -> ÷ the 1-writer wal of step 1
  3. 1 MiB records, append + wal                    -> wal ÷ raw sequential write+fdatasync
Prints each figure with the issue's threshold and writes the raw JSON to
the run folder bench/runs/DATE-commit[-TAG]/ (raw.json, output.txt,
README.md with the command and commit). Needs the matrix at 2048 MB
(`FSPACE_MATRIX_SIZE_MB=2048 ci/matrix.sh up`: a 512 MB btrfs keeps only
175 MiB for data) and a release build (`cargo build --release`).
Usage: [REPEAT=3] [SECONDS=5] bench/commit.py [fs ...]
"""
import json, os, statistics, subprocess, sys, time
from benchlib import mounts, save_raw, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
REPEAT = int(os.environ.get("REPEAT", "3"))
SECONDS = os.environ.get("SECONDS", "5")


def run(d, *args):
    subprocess.run(["sync", "-f", d])
    out = subprocess.run([FSPACE, "bench", "commit", "--json", "--seconds", SECONDS, *args, d],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def by_mode(doc):
    return {r["state"]: r for r in doc["results"]}


def alternations(doc):
    """(append, overwrite, wal) commits/s for each pass through the three."""
    seq = [r for r in doc["results"] if r["state"] in ("appended", "recycled", "wal")]
    out, cur = [], {}
    for r in seq:
        cur[r["state"]] = r["commits_per_sec"]
        if len(cur) == 3:
            out.append((cur["appended"], cur["recycled"], cur["wal"]))
            cur = {}
    return out


def main():
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs"]
    m = mounts()
    run_dir = start_run("commit")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release, "seconds": SECONDS, "runs": []}
    rows = []
    for fs in fss:
        d = m[fs]
        for rnd in range(REPEAT):
            docs = [run(d, "--record", "8KiB", "--writers", "1", "--mode",
                        "appended,sparse,allocated,zero-filled,recycled,wal,appended,recycled,wal,appended,recycled,wal"),
                    run(d, "--record", "8KiB", "--writers", "16", "--mode", "wal"),
                    run(d, "--record", "1MiB", "--writers", "1", "--mode", "appended,wal", "--file-size", "512MiB")]
            one, many, big = (by_mode(x) for x in docs)
            raw["runs"].append({"fs": fs, "round": rnd, "one": one, "many": many, "big": big})
            w = next(r for r in docs[0]["results"] if r["state"] == "wal")
            alt = alternations(docs[0])
            row = {
                "fs": fs,
                "wal_cps": statistics.median(a[2] for a in alt),
                "wal_vs_overwrite": statistics.median(a[2] / a[1] for a in alt),
                "wal_vs_append": statistics.median(a[2] / a[0] for a in alt),
                "overwrite_vs_append": statistics.median(a[1] / a[0] for a in alt),
                "switches": w["wal"]["switches"],
                "switch_vs_p99": w["wal"]["switch_mean_us"] / w["latency"]["p99_us"],
                "w16_vs_w1": many["wal"]["commits_per_sec"] / statistics.median(a[2] for a in alt),
                "commits_per_sync_16": many["wal"]["commits"] / max(1, many["wal"]["wal"]["syncs"]),
                "mib_vs_append_1m": big["wal"]["mib_per_sec"] / big["appended"]["mib_per_sec"],
                "rss_kib": max(x.get("peak_rss_kib") or 0 for x in docs),
            }
            rows.append(row)
            print(f"{fs} round {rnd + 1}: wal {row['wal_cps']:.0f}/s, ÷overwrite {row['wal_vs_overwrite']:.2f}x, "
                  f"÷append {row['wal_vs_append']:.2f}x (overwrite ÷ append {row['overwrite_vs_append']:.2f}x), "
                  f"{row['switches']} switches, switch mean ÷ p99 {row['switch_vs_p99']:.2f}, "
                  f"16 writers ÷ 1 {row['w16_vs_w1']:.2f}x ({row['commits_per_sync_16']:.1f} commits/sync), "
                  f"1 MiB wal ÷ append {row['mib_vs_append_1m']:.2f}x, peak RSS {row['rss_kib'] / 1024:.1f} MiB",
                  flush=True)
    print()
    print("| fs | wal commits/s | wal ÷ overwrite (≥0.9) | wal ÷ append (≥2 ext4/xfs, ≥0.9 btrfs) | switches (≥5) "
          "| switch mean ÷ p99 (≤3) | 16 writers ÷ 1 (≥6) | 1 MiB: wal ÷ append (≥0.9) | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fs in fss:
        rs = [r for r in rows if r["fs"] == fs]
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"| {fs} | {med('wal_cps'):.0f} | {med('wal_vs_overwrite'):.2f}x | {med('wal_vs_append'):.2f}x "
              f"| {min(r['switches'] for r in rs)} | {med('switch_vs_p99'):.2f} | {med('w16_vs_w1'):.2f}x "
              f"| {med('mib_vs_append_1m'):.2f}x | {max(r['rss_kib'] for r in rs) / 1024:.1f} MiB |")
    print(f"(medians of {REPEAT} rounds; {SECONDS} s per mode)")
    raw["summary"] = rows
    save_raw(run_dir, "raw", raw)


if __name__ == "__main__":
    main()
