#!/usr/bin/env python3
"""fspace copy against GNU cp and rsync, in one run, on the same files.

Per filesystem (default: ext4 xfs btrfs ext4-noextents tmpfs), source and
copy on that filesystem, three 1 GiB sources:
  random     no zeros, no holes
  holes      1 MiB data / 1 MiB hole, alternating (512 MiB data)
  vm         a VM image: 768 MiB of data with written zero runs of 4-64 KiB
             (about a third of it), then a 256 MiB hole
Tools, alternating inside each round in a rotating order (REPEAT rounds,
median wall time):
  cp         cp --sparse=always --reflink=never          (the baseline)
  fspace     fspace copy --sparse always --reflink never (like for like)
  auto       fspace copy --reflink never                 (default --sparse auto)
  rsync      rsync --sparse                              (docs/design.md, source S4)
  clone      fspace copy  (--reflink auto; btrfs and xfs) vs `auto`: clone ÷ no clone
The source stays in the page cache (it is read once first); each copy is
removed, the filesystem synced and PREFAULT_GIB of memory touched (untimed;
see prefault()) before the next command, so one run's writeback and this VM's
memory hand-back do not land in the next. Two times per
run: the command's wall time, and the time until the copy is on disk (the
command, then fsync of the copy). The first is page-cache speed and swings
with dirty-page throttling of the loop device (0.1-2.4 s for the same 1 GiB
copy); the second includes the write to the device and is the steadier one.
Then one pass under `strace -f -c` per tool counts write-type syscalls
(write, pwrite64, pwritev, writev, fallocate, ftruncate, copy_file_range,
ioctl), and each copy's allocated bytes (st_blocks, after sync) and bytes
(cmp) are checked. Also runs the zero-scan example.
Writes bench/results/DATE-copy.{json,txt}. Needs root, the matrix at 3072 MB
(`FSPACE_MATRIX_SIZE_MB=3072 ci/matrix.sh up`: a 1 GiB source and its copy
must fit), a release build, and rsync (installed with apt-get if missing).
Usage: [REPEAT=7] [SETTLE=0] [PREFAULT_GIB=2] bench/copy.py [fs ...]
"""
import json, os, random, shutil, statistics, subprocess, sys, time
from benchlib import mounts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")
REPEAT = int(os.environ.get("REPEAT", "7"))
# Seconds to wait after each sync (0: the prefault below is what steadies
# the runs; see prefault()).
SETTLE = float(os.environ.get("SETTLE", "0"))
PREFAULT_GIB = int(os.environ.get("PREFAULT_GIB", "2"))
MIB = 1 << 20
GIB = 1 << 30
WRITE_CALLS = ("write", "pwrite64", "pwritev", "pwritev2", "writev", "fallocate", "ftruncate",
               "copy_file_range", "ioctl", "sendfile")


def make_source(d, name):
    """Writes source `name` (one at a time: a 1 GiB source and its copy must fit)."""
    rnd = random.Random(42)
    p = os.path.join(d, name + ".src")
    with open(p, "wb") as f:
        if name == "random":
            for _ in range(GIB // MIB):
                f.write(rnd.randbytes(MIB).replace(b"\0", b"\1"))
        elif name == "holes":
            for i in range(0, GIB // MIB, 2):
                f.seek(i * MIB)
                f.write(rnd.randbytes(MIB).replace(b"\0", b"\1"))
            f.truncate(GIB)
        else:
            data = 768 * MIB
            pos = 0
            while pos < data:
                n = min(rnd.randrange(8, 129) * 1024, data - pos)
                f.write(rnd.randbytes(n).replace(b"\0", b"\1"))
                pos += n
                z = min(rnd.randrange(1, 17) * 4096, data - pos)
                f.write(bytes(z))
                pos += z
            f.truncate(GIB)
        f.flush()
        os.fsync(f.fileno())
    return p


def tools(fs):
    t = {
        "cp": lambda s, o: ["cp", "--sparse=always", "--reflink=never", s, o],
        "fspace": lambda s, o: [FSPACE, "copy", "--sparse", "always", "--reflink", "never", s, o],
        "auto": lambda s, o: [FSPACE, "copy", "--reflink", "never", s, o],
        "rsync": lambda s, o: ["rsync", "--sparse", s, o],
    }
    if fs in ("btrfs", "xfs"):
        t["clone"] = lambda s, o: [FSPACE, "copy", s, o]
    return t


def clean(d, out):
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run(["sync", "-f", d])
    time.sleep(SETTLE)
    prefault()


def prefault():
    """Writes PREFAULT_GIB of anonymous memory and frees it, right before a
    timed command. This VM hands freed memory back to its host (virtio
    balloon free-page reporting); the first touch of such memory faults in
    the host, and a 1 GiB copy then took 0.05 to 2.4 s at random depending on
    how much of its page cache landed on returned memory. Touching memory
    first makes every command start from the same state: dd of 512 MiB on
    xfs went from 0.11-0.74 s to 0.05-0.10 s with it, for every block size."""
    b = b"\1" * (PREFAULT_GIB << 30)
    del b


def timed(cmd, out):
    """(command's wall time, wall time until the copy is on disk: + fsync)."""
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    cmd_s = time.perf_counter() - t
    fd = os.open(out, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    return cmd_s, time.perf_counter() - t


def strace_writes(cmd, d):
    log = os.path.join(d, "strace.txt")
    subprocess.run(["strace", "-f", "-c", "-o", log, *cmd], check=True, stdout=subprocess.DEVNULL)
    calls = {}
    for line in open(log):
        parts = line.split()
        # "% time  seconds  usecs/call  calls  [errors]  syscall"
        if len(parts) >= 5 and parts[-1] in WRITE_CALLS and parts[3].isdigit():
            calls[parts[-1]] = int(parts[3])
    os.unlink(log)
    return calls


def allocated(p):
    fd = os.open(p, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    return os.stat(p).st_blocks * 512


def extents(p):
    out = subprocess.run([FSPACE, "map", "--json", "--summary", p], capture_output=True, text=True).stdout
    try:
        return json.loads(out)["summary"]["extents"]
    except (ValueError, KeyError):
        return None


def zero_scan():
    out = subprocess.run(["cargo", "run", "--release", "-q", "-p", "fspace", "--example", "zero_scan"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()


def main():
    if shutil.which("rsync") is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "rsync"], check=True)
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs", "ext4-noextents", "tmpfs"]
    m = mounts()
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release, "repeat": REPEAT,
           "cp": subprocess.run(["cp", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
           "rsync": subprocess.run(["rsync", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
           "zero_scan": zero_scan(), "filesystems": {}}
    lines = [f"# bench/copy.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT}",
             f"# {raw['cp']}; {raw['rsync']}", *("# " + z for z in raw["zero_scan"])]
    print("\n".join(lines), flush=True)
    for fs in fss:
        d = os.path.join(m[fs], "bench-copy")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        try:
            out = os.path.join(d, "copy")
            res = {}
            for name in ("random", "holes", "vm"):
                src = make_source(d, name)
                with open(src, "rb") as f:  # into the page cache
                    while f.read(16 * MIB):
                        pass
                t = tools(fs)
                times = {k: [] for k in t}
                durable = {k: [] for k in t}
                order = list(t)
                for rnd_i in range(REPEAT):
                    # Rotate the order each round: no tool always goes first.
                    for k in order[rnd_i % len(order):] + order[:rnd_i % len(order)]:
                        mk = t[k]
                        clean(d, out)
                        c, dur = timed(mk(src, out), out)
                        times[k].append(c)
                        durable[k].append(dur)
                info = {}
                for k, mk in t.items():
                    clean(d, out)
                    subprocess.run(mk(src, out), check=True, stdout=subprocess.DEVNULL)
                    same = subprocess.run(["cmp", "-s", src, out]).returncode == 0
                    info[k] = {"allocated": allocated(out), "identical": same}
                    clean(d, out)
                    info[k]["write_calls"] = strace_writes(mk(src, out), d)
                clean(d, out)
                src_extents, src_alloc = extents(src), allocated(src)
                os.unlink(src)
                res[name] = {"times": times, "durable": durable, "info": info,
                             "src_extents": src_extents, "src_allocated": src_alloc}
                for label, series in (("command", times), ("+fsync", durable)):
                    med = {k: statistics.median(v) for k, v in series.items()}
                    res[name]["median_" + ("s" if label == "command" else "durable_s")] = med
                    ratio = lambda a, b: med[a] / med[b]
                    spread = sorted(f / c for f, c in zip(series["fspace"], series["cp"]))
                    row = (f"{fs:<15} {name:<7} {label:<8} cp {med['cp']:.3f}s  fspace {med['fspace']:.3f}s "
                           f"(÷cp {ratio('fspace', 'cp'):.2f}x, rounds {spread[0]:.2f}-{spread[-1]:.2f})  "
                           f"auto {med['auto']:.3f}s (÷cp {ratio('auto', 'cp'):.2f}x)  rsync {med['rsync']:.3f}s "
                           f"(÷fspace {ratio('rsync', 'fspace'):.1f}x, ÷auto {ratio('rsync', 'auto'):.1f}x)")
                    if "clone" in med:
                        row += f"  clone÷auto {ratio('clone', 'auto') * 100:.2f}%"
                    print(row, flush=True)
                    lines.append(row)
                for k, v in info.items():
                    w = sum(v["write_calls"].values())
                    detail = (f"    {k:<7} write-type syscalls {w:>8} {v['write_calls']}  "
                              f"allocated {v['allocated'] / MIB:8.1f} MiB  identical {v['identical']}")
                    print(detail, flush=True)
                    lines.append(detail)
            raw["filesystems"][fs] = res
        finally:
            shutil.rmtree(d, ignore_errors=True)
    date = time.strftime("%Y-%m-%d")
    base = os.path.join(ROOT, "bench", "results", f"{date}-copy")
    with open(base + ".json", "w") as f:
        json.dump(raw, f, indent=1)
    with open(base + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {base}.json and .txt")


if __name__ == "__main__":
    main()
