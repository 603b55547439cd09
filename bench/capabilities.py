#!/usr/bin/env python3
"""Print the capability and policy table of every mounted filesystem of the
matrix as Markdown (docs/filesystems.md is made with it).

Usage: bench/capabilities.py   (after `sudo ci/matrix.sh up` and `cargo build --release`)
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
env = os.environ.get("FSPACE_TEST_MOUNTS")
if not env:
    try:
        env = open(os.environ.get("FSPACE_MATRIX_DIR", "/tmp/fspace-matrix") + "/env").read().strip().split("=", 1)[1]
    except OSError:
        sys.exit("capabilities: run ci/matrix.sh up first")
mounts = dict(kv.split("=", 1) for kv in env.split(",") if kv)
names = list(mounts)
d = {n: json.loads(subprocess.run([FSPACE, "info", "--json", mounts[n]], check=True,
                                  capture_output=True, text=True).stdout) for n in names}
caps = ["fallocate", "keep_size", "punch_hole", "zero_range", "write_zeroes", "seek_hole", "fiemap", "ficlone"]
errnames = {95: "EOPNOTSUPP", 22: "EINVAL", 25: "ENOTTY", 18: "EXDEV", 38: "ENOSYS"}
print("| | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
print("| type (magic) | " + " | ".join(f'{d[n]["fs_type"] or d[n]["kind"]} ({d[n]["magic"]})' for n in names) + " |")
print("| copy-on-write | " + " | ".join("yes" if d[n]["copy_on_write"] else "no" for n in names) + " |")
print("| network | " + " | ".join("yes" if d[n]["network"] else "no" for n in names) + " |")
for c in caps:
    row = []
    for n in names:
        x = d[n]["capabilities"][c]
        if x["supported"]:
            row.append("yes")
        elif x.get("errno"):
            row.append("no: " + errnames.get(x["errno"], str(x["errno"])))
        else:
            row.append("no: " + x.get("detail", ""))
    print(f"| {c} | " + " | ".join(row) + " |")
for intent in ["bulk", "log", "sparse"]:
    print(f"| auto `--for {intent}` | " + " | ".join(
        " → ".join(p["ladder"]) for n in names for p in d[n]["policy"] if p["intent"] == intent) + " |")
