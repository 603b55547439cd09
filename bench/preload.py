#!/usr/bin/env python3
"""libfspace-preload.so against glibc's posix_fallocate, in the same run.

util-linux `fallocate -x -l 256M FILE` calls posix_fallocate. Where
fallocate(2) is unsupported (ext4 without extents, sshfs), glibc writes one
byte per 4 KiB block (65,536 pwrite64); with LD_PRELOAD=libfspace-preload.so
the same program gets 1 MiB zero writes (256 pwritev). Each round times both
on an empty existing file, alternating which goes first, twice: the command
alone, and the command followed by `sync FILE` (until the zeros are on
disk). Reports medians, the ratio glibc / preload, and write-type syscalls
counted with strace -c.

Needs the matrix (`ci/matrix.sh up`, as root) and a release build of the
preload (`make -C crates/fspace-capi`). FSPACE_PRELOAD overrides the library
path; REPEAT sets the rounds (default 7).
Usage: bench/preload.py
Writes the run folder bench/runs/DATE-preload[-TAG]/ (raw.json, output.txt,
README.md with the command and commit) and prints a Markdown table.
"""
import json, os, platform, shutil, statistics, subprocess, sys, tempfile, time
from benchlib import mounts, save_raw, scratch_dirs, start_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRELOAD = os.environ.get("FSPACE_PRELOAD", os.path.join(ROOT, "target", "release", "libfspace_preload.so"))
REPEAT = int(os.environ.get("REPEAT", "7"))
SIZE = "256M"
WRITE_TYPE = "trace=write,pwrite64,writev,pwritev,pwritev2,fallocate,ftruncate"


def fresh(d, name):
    for n in os.listdir(d):
        os.unlink(os.path.join(d, n))
    p = os.path.join(d, name)
    open(p, "w").close()
    subprocess.run(["sync", "-f", d], check=False)
    return p


def env_for(preload):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    if preload:
        e["LD_PRELOAD"] = PRELOAD
    return e


def timed(cmd, preload):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env_for(preload), stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def syscalls(p, preload, d):
    out = os.path.join(d, "..", f".strace-{os.getpid()}")
    cmd = ["strace", "-f", "-c", "-o", out, "-e", WRITE_TYPE]
    if preload:
        cmd += ["-E", f"LD_PRELOAD={PRELOAD}"]
    subprocess.run(cmd + ["fallocate", "-x", "-l", SIZE, p], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for line in open(out):
            if line.rstrip().endswith("total"):
                return int(line.split()[3])
    finally:
        os.unlink(out)
    raise RuntimeError("no strace total")


def med(xs):
    return statistics.median(xs)


def main():
    if not os.path.exists(PRELOAD):
        sys.exit(f"bench: {PRELOAD} missing; run make -C crates/fspace-capi")
    m = mounts()
    run_dir = start_run("preload")
    rows = []
    for fs, d in scratch_dirs(m, ("ext4-noextents", "sshfs")):
        t = {(k, s): [] for k in ("glibc", "preload") for s in (False, True)}
        for i in range(REPEAT):
            order = ("glibc", "preload") if i % 2 == 0 else ("preload", "glibc")
            for with_sync in (False, True):
                for who in order:
                    p = fresh(d, who)
                    cmd = ["fallocate", "-x", "-l", SIZE, p]
                    if with_sync:
                        cmd = ["sh", "-c", 'fallocate -x -l "$1" "$2" && sync "$2"', "sh", SIZE, p]
                    t[(who, with_sync)].append(timed(cmd, who == "preload"))
        sc = {}
        for who in ("glibc", "preload"):
            p = fresh(d, who)
            sc[who] = syscalls(p, who == "preload", d)
        for with_sync in (False, True):
            g, o = t[("glibc", with_sync)], t[("preload", with_sync)]
            rows.append(dict(bench="fallocate -x -l 256M" + (" && sync" if with_sync else ""), fs=fs,
                             glibc_s=med(g), preload_s=med(o), speedup=med(g) / med(o),
                             glibc_runs=g, preload_runs=o,
                             glibc_syscalls=sc["glibc"], preload_syscalls=sc["preload"]))
    stamp = time.strftime("%Y-%m-%dT%H%M%S")
    meta = dict(date=stamp, kernel=platform.release(), repeat=REPEAT, preload=PRELOAD,
                cpus=os.cpu_count(), rows=rows)
    out = save_raw(run_dir, "raw", meta)
    print(f"| fs | command | glibc (median s) | preload (median s) | glibc / preload | write-type syscalls glibc / preload |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['fs']} | `{r['bench']}` | {r['glibc_s']:.3f} | {r['preload_s']:.3f} | "
              f"{r['speedup']:.1f}x | {r['glibc_syscalls']:,} / {r['preload_syscalls']:,} |")
    print(f"\n{REPEAT} alternating rounds; raw runs in {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
