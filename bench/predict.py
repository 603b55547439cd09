#!/usr/bin/env python3
"""Does the probe's prediction hold? Per filesystem (default ext4 xfs btrfs),
REPEAT rounds of: `fspace probe --save` (standard level) in a scratch
directory, which states the commits/s the recommended log setup should
reach ("prediction"), then right after `fspace bench commit --mode wal
--seconds SECONDS` in the same directory with the same state directory (so
the log follows the saved recommendation, sync method included). Prints
each round's predicted and measured commits/s and their ratio (measured ÷
predicted), then per filesystem the median ratio and the min-max of the
rounds; the issue's target is within ±15% (0.85-1.15). Run folder:
bench/runs/DATE-predict[-TAG]/ (raw.json, output.txt, README.md with the
command and commit).

Needs the matrix (`ci/matrix.sh up`) and a release build.
Usage: [REPEAT=3] [SECONDS=30] [TAG=name] bench/predict.py [fs ...]
"""
import json, os, statistics, subprocess, sys, tempfile, time
from benchlib import FSPACE, mounts, save_raw, scratch_dirs, start_run

REPEAT = int(os.environ.get("REPEAT", "3"))
SECONDS = os.environ.get("SECONDS", "30")


def run(args, state):
    env = dict(os.environ, FSPACE_STATE_DIR=state)
    out = subprocess.run([FSPACE, *args], check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def main():
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs"]
    run_dir = start_run("predict")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release,
           "seconds": SECONDS, "repeat": REPEAT, "rounds": []}
    print(f"# bench/predict.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT} SECONDS={SECONDS}")
    print("# fs      round  setup                               predicted   measured  ratio  busy")
    summary = {}
    for fs, d in scratch_dirs(mounts(), fss):
        for rnd in range(REPEAT):
            with tempfile.TemporaryDirectory() as state:
                subprocess.run(["sync", "-f", d])
                p = run(["probe", "--json", "--quiet", "--save", d], state)
                pred = p["commit"]["prediction"]
                subprocess.run(["sync", "-f", d])
                b = run(["bench", "commit", "--json", "--mode", "wal", "--seconds", SECONDS, d], state)
            got = next(r for r in b["results"] if r["state"] == "wal")
            ratio = got["commits_per_sec"] / pred["commits_per_sec"]
            summary.setdefault(fs, []).append(ratio)
            raw["rounds"].append({"fs": fs, "round": rnd, "prediction": pred,
                                  "measured": got["commits_per_sec"], "wal": got.get("wal"),
                                  "ratio": ratio, "machine": p["machine"],
                                  "recommendation": p["recommendations"][0]})
            print(f"  {fs:<7} {rnd + 1:>5}  {pred['setup']:<34} {pred['commits_per_sec']:>9.0f} "
                  f"{got['commits_per_sec']:>10.0f}  {ratio:5.2f}  {'yes' if p['machine']['busy'] else 'no'}",
                  flush=True)
    print("# measured ÷ predicted: median (min-max of rounds)")
    for fs, rs in summary.items():
        within = all(0.85 <= r <= 1.15 for r in rs)
        print(f"  {fs:<7} {statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})"
              f"  {'all rounds within ±15%' if within else 'NOT all rounds within ±15%'}")
    save_raw(run_dir, "raw", raw)


if __name__ == "__main__":
    main()
