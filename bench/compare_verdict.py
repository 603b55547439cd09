#!/usr/bin/env python3
"""`fspace probe --compare-saved`: false alarms on an unchanged disk, and
detections on a disk that really got slower, in one session.

For each filesystem (FS, default `ext4,xfs` of the matrix): one quick
`fspace probe --save` on the quiet machine (its baseline: 8 runs of 1 s),
then REPEAT rounds (default 20); each round runs one comparison per
condition (CONDS, default `quiet,busy,half`), in an order rotated by one
each round so that no condition always runs first:

- `quiet`: nothing else runs;
- `busy`: two CPU-bound processes run (`sh -c 'while :; do :; done'`), as
  many as this machine has CPUs when it has two;
- `half`, `tNN`: the filesystem's block device throttled, for the
  comparison's process only (a block cgroup: `blkio.throttle.write_iops_device`
  on cgroup v1, `io.max` on v2), to 50% (`half`) or NN% (`t75`, `t120`) of
  the baseline's commit rate as write IOPS. Each commit writes at least
  once, and preparing segments writes too, so the log commits at most that
  share as often, and less: the ratio each comparison measured says how
  much slower the disk really became.

Prints each comparison (verdict, exit status, ratio of each batch, whether
the machine was judged busy, the CPU pressure), then per filesystem and
condition how many comparisons said each verdict, and the ratios' median and
range. Raw JSON of every comparison is saved in the run folder.

Needs root (cgroups), the release build (`cargo build --release -p
fspace-cli`) and the matrix (`ci/matrix.sh up`). About 30 s per round and
filesystem with the default conditions.

    sudo python3 bench/compare_verdict.py
    sudo FS=ext4 REPEAT=10 CONDS=quiet,t100,t150 python3 bench/compare_verdict.py
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402



def throttle_share(cond):
    """The share of the baseline's commit rate a condition throttles to,
    or None for `quiet` and `busy`."""
    if cond == "half":
        return 0.5
    if cond.startswith("t") and cond[1:].isdigit():
        return int(cond[1:]) / 100
    return None


class Cgroup:
    """A block cgroup limiting one device's write IOPS; removed on exit."""

    def __init__(self, dev, iops):
        major, minor = os.major(dev), os.minor(dev)
        name = f"fspace-bench-{os.getpid()}-{iops}"
        if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
                f.write("+io")
            self.dir = os.path.join("/sys/fs/cgroup", name)
            os.mkdir(self.dir)
            with open(os.path.join(self.dir, "io.max"), "w") as f:
                f.write(f"{major}:{minor} wiops={iops}")
        else:
            self.dir = os.path.join("/sys/fs/cgroup/blkio", name)
            os.mkdir(self.dir)
            with open(os.path.join(self.dir, "blkio.throttle.write_iops_device"), "w") as f:
                f.write(f"{major}:{minor} {iops}")

    def wrap(self, argv):
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"',
                os.path.join(self.dir, "cgroup.procs"), *argv]

    def close(self):
        os.rmdir(self.dir)


def compare(d, state, wrap=lambda a: a):
    argv = wrap([benchlib.FSPACE, "probe", "--compare-saved", "--json", "-q", d])
    p = subprocess.run(argv, capture_output=True, text=True,
                       env=dict(os.environ, FSPACE_STATE_DIR=state))
    try:
        c = json.loads(p.stdout)
    except ValueError:
        sys.exit(f"bench: not JSON (exit {p.returncode}): {p.stdout}{p.stderr}")
    if "error" in c:
        sys.exit(f"bench: comparison failed: {c['error']}")
    return p.returncode, c


def main():
    if os.geteuid() != 0:
        sys.exit("bench: needs root (block cgroups)")
    m = benchlib.mounts()
    names = os.environ.get("FS", "ext4,xfs").split(",")
    repeat = int(os.environ.get("REPEAT", "20"))
    conds = os.environ.get("CONDS", "quiet,busy,half").split(",")
    for c in conds:
        if c not in ("quiet", "busy") and throttle_share(c) is None:
            sys.exit(f"bench: unknown condition {c!r}")
    run = benchlib.start_run("compare-verdict")
    raw = {}
    for fs, d in benchlib.scratch_dirs(m, names):
        state = tempfile.mkdtemp(prefix="bench-state-")
        p = subprocess.run([benchlib.FSPACE, "probe", "--quick", "--save", "--json", "-q", d],
                           capture_output=True, text=True,
                           env=dict(os.environ, FSPACE_STATE_DIR=state))
        if p.returncode != 0:
            sys.exit(f"bench: {fs}: save failed: {p.stdout}{p.stderr}")
        probe = json.loads(p.stdout)
        base = probe["commit"]["baseline"]
        rate = base["commits_per_sec"]
        print(f"{fs}: baseline {rate:.0f} commits/s (runs {min(base['runs']):.0f}-"
              f"{max(base['runs']):.0f}), machine busy: {base['machine_busy']}")
        dev = os.stat(m[fs]).st_dev
        cgroups = {c: Cgroup(dev, max(10, int(rate * throttle_share(c)))) for c in conds
                   if throttle_share(c) is not None}
        results = {c: [] for c in conds}
        try:
            for i in range(repeat):
                k = i % len(conds)
                for c in conds[k:] + conds[:k]:
                    hogs = []
                    wrap = (lambda a: a)
                    if c == "busy":
                        hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                                for _ in range(2)]
                    elif c in cgroups:
                        wrap = cgroups[c].wrap
                    try:
                        code, cmp = compare(d, state, wrap)
                    finally:
                        for h in hogs:
                            h.kill()
                            h.wait()
                    results[c].append({"exit": code, "comparison": cmp})
                    batches = " ".join(f"{b['ratio']:.2f}{'*' if b['slower'] else ''}"
                                       for b in cmp["batches"])
                    pr = cmp["machine"].get("cpu_pressure")
                    print(f"{fs} round {i + 1} {c:>5}: {cmp['verdict']:<14} exit {code}  "
                          f"batches {batches:<12} busy {str(cmp['machine']['busy']):<5} "
                          f"cpu pressure {'-' if pr is None else f'{pr:.2f}'}", flush=True)
        finally:
            for g in cgroups.values():
                g.close()
        raw[fs] = {"baseline": base, "results": results}
        print(f"\n{fs}: {repeat} rounds, baseline {rate:.0f} commits/s")
        print(f"{'condition':>10} {'no-change':>10} {'regressed':>10} {'could-not-tell':>15}"
              f"  ratio median (min-max)")
        for c in conds:
            v = [r["comparison"]["verdict"] for r in results[c]]
            ratios = [r["comparison"]["batches"][0]["ratio"] for r in results[c]]
            print(f"{c:>10} {v.count('no-change'):>10} {v.count('regressed'):>10} "
                  f"{v.count('could-not-tell'):>15}  {statistics.median(ratios):.2f} "
                  f"({min(ratios):.2f}-{max(ratios):.2f})")
        print()
    benchlib.save_raw(run, "comparisons", raw)


if __name__ == "__main__":
    main()
