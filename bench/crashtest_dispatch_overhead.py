#!/usr/bin/env python3
"""What catching raw system calls (Syscall User Dispatch) costs under
libfspace-record.so.

Two loops of 20,000 writes of 100 bytes to a file under the crashtest root,
timed inside the program:
 - python3 os.write (through libc: must not trap), preload with dispatch on
   and with FSPACE_CRASHTEST_NO_DISPATCH=1;
 - a C program writing with an inline syscall instruction (what rustix and
   Go do), without the preload and with it (every write traps to SIGSYS).
Three rounds, the variants alternating; median and min-max of each.

Usage: bench/crashtest_dispatch_overhead.py PATH/TO/libfspace-record.so
"""
import os
import statistics
import subprocess
import sys
import tempfile

ROUNDS = 3
N = 20000
PY_LOOP = r'''
import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
buf = b"x" * 100
t = time.perf_counter()
for _ in range(20000):
    os.write(fd, buf)
print(time.perf_counter() - t)
os.close(fd)
'''
C_LOOP = r'''
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    (void)argc;
    int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    static char buf[100];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 20000; i++) {
        long r;
        __asm__ volatile("syscall" : "=a"(r) : "a"(SYS_write), "D"(fd), "S"(buf), "d"(100)
                         : "rcx", "r11", "memory");
        if (r != 100)
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return close(fd);
}
'''


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: crashtest_dispatch_overhead.py PATH/TO/libfspace-record.so")
    so = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(os.path.join(tmp, "root"))
        os.mkdir(root)
        ops = os.path.join(tmp, "ops.bin")
        target = os.path.join(root, "f")
        exe = os.path.join(tmp, "rawloop")
        with open(exe + ".c", "w") as f:
            f.write(C_LOOP)
        subprocess.run(["gcc", "-O2", "-o", exe, exe + ".c"], check=True)
        py = [sys.executable, "-c", PY_LOOP, target]
        variants = {
            "python, dispatch on": (py, True, {}),
            "python, dispatch off": (py, True, {"FSPACE_CRASHTEST_NO_DISPATCH": "1"}),
            "raw C, no preload": ([exe, target], False, {}),
            "raw C, dispatch on": ([exe, target], True, {}),
        }
        times = {v: [] for v in variants}
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("FSPACE_CRASHTEST") and k != "LD_PRELOAD"}
        for rnd in range(ROUNDS):
            order = list(variants)
            order = order[rnd % len(order):] + order[:rnd % len(order)]
            for v in order:
                argv, preload, extra = variants[v]
                env = dict(base)
                if preload:
                    with open(ops, "wb") as f:
                        f.write(b"FSPCTRW1")
                    env.update(LD_PRELOAD=so, FSPACE_CRASHTEST_ROOT=root,
                               FSPACE_CRASHTEST_OPS=ops, **extra)
                out = subprocess.run(argv, env=env, check=True, capture_output=True,
                                     text=True).stdout
                times[v].append(float(out.split()[-1]))
                if preload and not extra:
                    size = os.path.getsize(ops)
                    assert size > N * 212, f"{v}: only {size} bytes recorded"
    print(f"{N:,} writes of 100 bytes, {ROUNDS} rounds (loop time, seconds)")
    for v, ts in times.items():
        med = statistics.median(ts)
        print(f"  {v:22} median {med:.4f}  min-max {min(ts):.4f}-{max(ts):.4f}"
              f"  ({med / N * 1e6:.2f} us/write)")


if __name__ == "__main__":
    main()
