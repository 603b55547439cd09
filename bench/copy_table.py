#!/usr/bin/env python3
"""Prints the README's copy table from bench/copy.py's JSON results: every
row, met or not. Usage: bench/copy_table.py RESULT.json [RESULT.json ...]"""
import json, statistics, sys


def ratio(times, a, b):
    rr = [x / y for x, y in zip(times[a], times[b])]
    med = statistics.median(rr)
    lo, hi = min(rr), max(rr)
    mark = "**" if med > 1.0 else ""
    return f"{mark}{med:.2f}x{mark} ({lo:.2f}-{hi:.2f})"


def writes(info, k):
    return sum(v for c, v in info[k]["write_calls"].items() if c not in ("lseek", "ioctl"))


def main():
    print("| fs | source | cache | `--sparse always` ÷ cp | default ÷ cp | rsync ÷ fspace | "
          "write calls cp / fspace (always) | allocated MiB cp / fspace (default) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        raw = json.load(open(path))
        for fs, sources in raw["filesystems"].items():
            for name, res in sources.items():
                info = res["info"]
                for cache, times in res["times"].items():
                    rs = statistics.median(r / f for r, f in zip(times["rsync"], times["fspace-always"]))
                    print(f"| {fs} | {name} | {cache} | {ratio(times, 'fspace-always', 'cp-always')} | "
                          f"{ratio(times, 'fspace-default', 'cp-default')} | {rs:.1f}x | "
                          f"{writes(info, 'cp-always'):,} / {writes(info, 'fspace-always'):,} | "
                          f"{info['cp-default']['allocated'] / 2**20:.1f} / "
                          f"{info['fspace-default']['allocated'] / 2**20:.1f} |")


if __name__ == "__main__":
    main()
