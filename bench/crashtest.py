#!/usr/bin/env python3
"""What `fspace crashtest` costs: recording (against no recording and against
strace, the anchor: ALICE recorded with strace) and checking.

Recording: three programs, each run plain, under `fspace crashtest record`,
and under `strace -f` capturing what a recorder needs (file and descriptor
calls with the bytes written: `-e trace=%file,%desc,fsync,fdatasync -xx -s
65536`), the variants alternating, ROUNDS rounds; wall time of the whole
command (start-up included, as a user sees it):

- `small-writes`: Python, 20,000 os.write calls of 100 bytes (libc calls);
- `raw-writes`: C, 20,000 write(2) calls of 100 bytes made with the
  `syscall` instruction (caught by Syscall User Dispatch);
- `sqlite-full`: Python's sqlite3, 200 transactions in WAL mode with
  synchronous=FULL (tests/crashtest_programs/sqlite_kv.py).

Checking: the sqlite-full trace of 10 transactions checked with
tests/crashtest_programs/sqlite_check.py under the four models: states,
distinct states, seconds, milliseconds per state (from the JSON report).

Usage: bench/crashtest.py [OUT_DIR]   (fspace from target/release, else
target/debug; writes raw.json and summary.md into OUT_DIR when given)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = int(os.environ.get("ROUNDS", "5"))
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROGRAMS = os.path.join(REPO, "crates/fspace-cli/tests/crashtest_programs")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"

SMALL = r'''
import os, sys
fd = os.open(sys.argv[1] + "/f", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
buf = b"x" * 100
for _ in range(20000):
    os.write(fd, buf)
os.close(fd)
'''

RAW_C = r'''
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <sys/syscall.h>
static long raw3(long n, long a, long b, long c) {
    long r;
    __asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
int main(int argc, char **argv) {
    char path[4096], buf[100];
    snprintf(path, sizeof path, "%s/f", argv[1]);
    memset(buf, 'x', sizeof buf);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 20000; i++)
        raw3(SYS_write, fd, (long)buf, sizeof buf);
    return 0;
}
'''


def fspace_bin():
    for p in ("target/release/fspace", "target/debug/fspace"):
        full = os.path.join(REPO, p)
        if os.path.exists(full):
            return full
    sys.exit("build fspace first: cargo build --release -p fspace-cli")


def timed(argv, cwd, env=None):
    t = time.perf_counter()
    r = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{argv}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
    return dt


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else None
    fspace = fspace_bin()
    strace = shutil.which("strace")
    raw = {"rounds": ROUNDS, "fspace": fspace, "record": {}, "check": {}}
    with tempfile.TemporaryDirectory() as tmp:
        rawprog = os.path.join(tmp, "rawwrites")
        with open(rawprog + ".c", "w") as f:
            f.write(RAW_C)
        subprocess.run(["cc", "-O2", "-o", rawprog, rawprog + ".c"], check=True)
        with open(os.path.join(tmp, "small.py"), "w") as f:
            f.write(SMALL)
        workloads = {
            "small-writes": lambda root: [PY, os.path.join(tmp, "small.py"), root],
            "raw-writes": lambda root: [rawprog, root],
            "sqlite-full": lambda root: [PY, os.path.join(PROGRAMS, "sqlite_kv.py"), "FULL", "200"],
        }
        variants = ["plain", "record"] + (["strace"] if strace else [])
        for name, argv_of in workloads.items():
            times = {v: [] for v in variants}
            for rnd in range(ROUNDS):
                order = variants[rnd % len(variants):] + variants[:rnd % len(variants)]
                for v in order:
                    run = tempfile.mkdtemp(dir=tmp)
                    root = os.path.join(run, "db")
                    os.mkdir(root)
                    if name == "sqlite-full":
                        subprocess.run([PY, os.path.join(PROGRAMS, "sqlite_kv.py"), "create"], cwd=run, check=True)
                    argv = argv_of(root)
                    if v == "plain":
                        dt = timed(argv, run)
                    elif v == "record":
                        dt = timed([fspace, "crashtest", "record", "-q", "--root", root, "--trace",
                                    os.path.join(run, "t"), "--"] + argv, run)
                    else:
                        dt = timed([strace, "-f", "-qq", "-e", "trace=%file,%desc,fsync,fdatasync", "-xx",
                                    "-s", "65536", "-o", os.path.join(run, "strace.out")] + argv, run)
                    times[v].append(dt)
                    shutil.rmtree(run)
            raw["record"][name] = times
        # Checking: a 10-transaction sqlite-full trace.
        run = tempfile.mkdtemp(dir=tmp)
        os.mkdir(os.path.join(run, "db"))
        subprocess.run([PY, os.path.join(PROGRAMS, "sqlite_kv.py"), "create"], cwd=run, check=True)
        subprocess.run([fspace, "crashtest", "record", "-q", "--root", "db", "--trace", "t", "--", PY,
                        os.path.join(PROGRAMS, "sqlite_kv.py"), "FULL", "10"], cwd=run, check=True,
                       stdout=subprocess.DEVNULL)
        r = subprocess.run([fspace, "crashtest", "check", "-q", "--json", "t", "--", PY,
                            os.path.join(PROGRAMS, "sqlite_check.py")], cwd=run, capture_output=True)
        rep = json.loads(r.stdout)
        raw["check"] = {k: rep[k] for k in ("ops", "points", "states", "distinct", "failed_states",
                                            "seconds", "ms_per_state")}
        raw["check"]["exit"] = r.returncode
    lines = ["| workload | plain (s) | recorded (s) | strace (s) | recorded ÷ plain, per round | strace ÷ plain, per round |",
             "|---|---|---|---|---|---|"]
    for name, t in raw["record"].items():
        med = {v: statistics.median(x) for v, x in t.items()}
        rng = {v: f"{min(x):.3f}-{max(x):.3f}" for v, x in t.items()}
        def ratio(v):
            if v not in t:
                return "-"
            per = [a / b for a, b in zip(t[v], t["plain"])]  # the same round
            return f"{statistics.median(per):.1f}x ({min(per):.1f}-{max(per):.1f})"
        lines.append(f"| {name} | {med['plain']:.3f} ({rng['plain']}) | {med['record']:.3f} ({rng['record']}) | "
                     f"{med.get('strace', float('nan')):.3f} ({rng.get('strace', '-')}) | {ratio('record')} | {ratio('strace')} |")
    c = raw["check"]
    lines.append("")
    lines.append(f"check of sqlite-full (10 transactions, 4 models): {c['states']} states, {c['distinct']} distinct, "
                 f"{c['failed_states']} failed, {c['seconds']:.1f} s, {c['ms_per_state']:.0f} ms per state, exit {c['exit']}")
    text = "\n".join(lines)
    print(text)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "raw.json"), "w") as f:
            json.dump(raw, f, indent=1)
        with open(os.path.join(out_dir, "table.md"), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
