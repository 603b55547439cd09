#!/usr/bin/env python3
"""Segment switches under load: does the commit that opens a new segment stay
cheap while another program fills the same filesystem?

Per filesystem (default ext4 xfs btrfs), REPEAT rounds of `fspace bench commit
--mode wal` (8 KiB records, 1 writer, 1 MiB segments so that a run switches
often) with each sync method, while a background loop runs `dd if=/dev/zero
bs=1M count=128 conv=fdatasync` into a file on the same mount. Prints, per run,
the mean latency of the commits that opened a new segment, the p99 of all
commits and their ratio (the target: mean ÷ p99 <= 1.5), then the median and
the min-max over the rounds. Run folder:
bench/runs/DATE-switch-load[-TAG]/ (raw.json, output.txt, README.md with the
command and commit).

Needs the matrix (`ci/matrix.sh up`) and a release build.
Usage: [REPEAT=3] [SECONDS=6] [METHODS=fdatasync,direct-dsync] [TAG=name] bench/switch_load.py [fs ...]
"""
import json, os, statistics, subprocess, sys, time
from benchlib import mounts, save_raw, start_run, FSPACE, ROOT

REPEAT = int(os.environ.get("REPEAT", "3"))
SECONDS = os.environ.get("SECONDS", "6")
METHODS = os.environ.get("METHODS", "fdatasync,direct-dsync")


def main():
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs"]
    m = mounts()
    run_dir = start_run("switch-load")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release, "runs": []}
    print(f"# bench/switch_load.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT} SECONDS={SECONDS}")
    print("# segment-opening commits: mean latency ÷ p99 of all commits, with dd conv=fdatasync looping beside")
    for fs in fss:
        d = m[fs]
        load_file = os.path.join(d, "switch-load.dd")
        load = subprocess.Popen(["sh", "-c", f"while :; do dd if=/dev/zero of={load_file} bs=1M count=128 "
                                 "conv=fdatasync status=none || exit 1; done"])
        ratios = {}
        try:
            time.sleep(1)
            for rnd in range(REPEAT):
                out = subprocess.run([FSPACE, "bench", "commit", "--json", "--mode", "wal", "--segment-size", "1MiB",
                                      "--seconds", SECONDS, "--sync-method", METHODS, d],
                                     check=True, capture_output=True, text=True).stdout
                doc = json.loads(out)
                raw["runs"].append({"fs": fs, "round": rnd, "doc": doc})
                for r in doc["results"]:
                    w, lat = r["wal"], r["latency"]
                    ratio = w["switch_mean_us"] / lat["p99_us"] if w["switch_commits"] else float("nan")
                    ratios.setdefault(r["sync_method"], []).append(ratio)
                    print(f"{fs:6} round {rnd + 1} {r['sync_method']:13} {r['commits_per_sec']:7.0f}/s  "
                          f"{w['switch_commits']:3} switch commits, mean {w['switch_mean_us'] / 1000:7.2f} ms  "
                          f"p99 {lat['p99_us'] / 1000:7.2f} ms  ratio {ratio:.2f}", flush=True)
        finally:
            load.kill()
            load.wait()
            subprocess.run(["pkill", "-f", f"of={load_file}"])
            try:
                os.unlink(load_file)
            except OSError:
                pass
        for meth, rs in ratios.items():
            rs = [x for x in rs if x == x]
            if rs:
                print(f"{fs:6} {meth:13} mean ÷ p99 {statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})"
                      f"  target <= 1.5: {'met' if max(rs) <= 1.5 else 'not met'}", flush=True)
    save_raw(run_dir, "raw", raw)


if __name__ == "__main__":
    main()
