#!/usr/bin/env python3
"""What libfspace-record.so (fspace crashtest record) costs a writing program.

A python3 loop of 20,000 os.write calls of 100 bytes to a file under the
crashtest root, timed inside the program (interpreter start-up excluded):
plain, with the preload recording, and under
`strace -f -e trace=file,desc -o /dev/null` for comparison (skipped when
strace is not installed). Three rounds, the variants alternating; prints the
median and min-max of each and the ratios of the medians.

Usage: bench/crashtest_record_overhead.py PATH/TO/libfspace-record.so
(`find target -name libfspace-record.so` after `cargo build -p fspace-cli`).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROUNDS = 3
LOOP = r'''
import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
buf = b"x" * 100
t = time.perf_counter()
for _ in range(20000):
    os.write(fd, buf)
print(time.perf_counter() - t)
os.close(fd)
'''


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: crashtest_record_overhead.py PATH/TO/libfspace-record.so")
    so = os.path.abspath(sys.argv[1])
    strace = shutil.which("strace")
    times = {"plain": [], "preload": []}
    if strace:
        times["strace"] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(os.path.join(tmp, "root"))
        os.mkdir(root)
        ops = os.path.join(tmp, "ops.bin")
        target = os.path.join(root, "f")
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("FSPACE_CRASHTEST") and k != "LD_PRELOAD"}
        for rnd in range(ROUNDS):
            order = list(times)
            # Alternate which variant goes first: the page cache and the
            # file's blocks favour whichever runs second.
            order = order[rnd % len(order):] + order[:rnd % len(order)]
            for variant in order:
                env = dict(base)
                argv = [sys.executable, "-c", LOOP, target]
                if variant == "preload":
                    with open(ops, "wb") as f:
                        f.write(b"FSPCTRW1")
                    env.update(LD_PRELOAD=so, FSPACE_CRASHTEST_ROOT=root,
                               FSPACE_CRASHTEST_OPS=ops)
                elif variant == "strace":
                    argv = [strace, "-f", "-e", "trace=file,desc", "-o", "/dev/null"] + argv
                out = subprocess.run(argv, env=env, check=True, capture_output=True,
                                     text=True).stdout
                times[variant].append(float(out.split()[-1]))
                if variant == "preload":
                    size = os.path.getsize(ops)
                    assert size > 20000 * 212, f"only {size} bytes recorded"
    print(f"20,000 os.write of 100 bytes, {ROUNDS} rounds (loop time, seconds)")
    plain = statistics.median(times["plain"])
    for variant, ts in times.items():
        med = statistics.median(ts)
        print(f"  {variant:8} median {med:.4f}  min-max {min(ts):.4f}-{max(ts):.4f}"
              f"  x{med / plain:.1f} of plain  ({med / 20000 * 1e6:.2f} us/write)")
    if not strace:
        print("  strace: not installed, skipped")


if __name__ == "__main__":
    main()
