"""What the benchmark scripts share: where the release binary is, and the
filesystem matrix they measure (FSPACE_TEST_MOUNTS, or the env file
`ci/matrix.sh up` writes)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")

# The matrix's fast mounts, each with the filesystem it is (ci/matrix.sh):
# ext4 and xfs made as the others, on loop devices over image files in a
# tmpfs, where a durable write costs microseconds, not the host disk's flush.
FAST = {"ext4-fast": "ext4", "xfs-fast": "xfs"}


def mounts():
    """{name: mount point} of the matrix: ext4, xfs, btrfs, ext4-noextents,
    tmpfs, sshfs, and the fast mounts ext4-fast and xfs-fast (FAST; a script
    measures them when named, e.g. `bench/commit.py ext4 ext4-fast`)."""
    env = os.environ.get("FSPACE_TEST_MOUNTS")
    if not env:
        path = os.environ.get("FSPACE_MATRIX_DIR", "/tmp/fspace-matrix") + "/env"
        try:
            lines = open(path).read().splitlines()
            env = next(l for l in lines if l.startswith("FSPACE_TEST_MOUNTS=")).split("=", 1)[1]
        except (OSError, StopIteration):
            sys.exit("bench: no FSPACE_TEST_MOUNTS and no matrix env file; run ci/matrix.sh up")
    return dict(kv.split("=", 1) for kv in env.split(",") if kv)


def base(fs):
    """The filesystem a mount of the matrix is: ext4 for ext4-fast, xfs for
    xfs-fast, the name itself for the others (what a script keys a
    filesystem's choices on)."""
    return FAST.get(fs, fs)


def scratch_dirs(m, names):
    """Yields (fs, scratch directory) for each of `names` mounted in `m`
    (the others are reported skipped); each directory is removed when the
    caller moves on, also after an error."""
    import contextlib, shutil, tempfile
    for fs in names:
        if fs not in m:
            print(f"bench: {fs} not mounted, skipped", file=sys.stderr)
            continue
        d = tempfile.mkdtemp(prefix="bench-", dir=m[fs])
        with contextlib.ExitStack() as stack:
            stack.callback(shutil.rmtree, d, ignore_errors=True)
            yield fs, d


# The knobs the scripts read from the environment; a run's README records
# those set, so its command can be typed again.
KNOBS = ("REPEAT", "R", "SECONDS", "TAG", "LEVEL", "SIZE_MIB", "SIZES", "CACHE", "SOURCES",
         "WRITERS", "METHODS", "SYNC", "HOW", "BASE", "CAND", "OLD", "NEW", "COMMITS",
         "PREFAULT_GIB", "FSPACE_PRELOAD", "FSPACE_MATRIX_DIR", "FSPACE_TEST_MOUNTS", "RUN_DIR",
         "ENGINES", "GRID", "SCALE", "WRITE_BUFFER", "FS", "CONDS", "FILE_SIZE")

RUNS = os.path.join(ROOT, "bench", "runs")


def _git(*args):
    import subprocess
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _machine():
    import platform
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                   if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"Linux {platform.release()}, {os.cpu_count()} CPUs ({cpu or 'unknown CPU'})"


class _Tee:
    def __init__(self, *files):
        self.files = files

    def write(self, s):
        for f in self.files:
            f.write(s)
        return len(s)

    def flush(self):
        for f in self.files:
            f.flush()


def start_run(topic):
    """Opens this invocation's run folder, bench/runs/DATE-TOPIC[-TAG]/
    ($TAG names a run; $RUN_DIR names the folder itself, so a loop of
    invocations can share one), and returns its path. The folder gets a
    README.md (on first use: a stub with the summary still to write) to which
    each invocation adds its command line, the commit it ran on and the
    machine; everything the script prints is also appended to output.txt."""
    import shlex, sys, time
    tag = os.environ.get("TAG", "")
    d = os.environ.get("RUN_DIR") or os.path.join(
        RUNS, time.strftime("%Y-%m-%d") + "-" + topic + (f"-{tag}" if tag else ""))
    os.makedirs(d, exist_ok=True)
    readme = os.path.join(d, "README.md")
    if not os.path.exists(readme):
        with open(readme, "w") as f:
            f.write(f"# {os.path.basename(d)}\n\n"
                    "Summary: TO WRITE -- 2-5 lines on what this run shows, figures copied "
                    "from output.txt.\n\nFiles: output.txt (what the script printed), "
                    "*.json (raw data, where the script saves any).\n")
    head = _git("rev-parse", "HEAD") or "unknown (not a git checkout)"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/runs")
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in KNOBS if k in os.environ)
    cmd = " ".join(shlex.quote(a) for a in ["python3", os.path.relpath(sys.argv[0], ROOT),
                                             *sys.argv[1:]])
    with open(readme, "a") as f:
        f.write(f"\n## Invocation {time.strftime('%Y-%m-%d %H:%M')}\n\n"
                f"- command (from the repository root): `{(env + ' ' if env else '') + cmd}`\n"
                f"- commit: {head}{' with uncommitted changes' if dirty else ''}\n"
                f"- machine: {_machine()}\n")
    out = open(os.path.join(d, "output.txt"), "a")
    sys.stdout = _Tee(sys.stdout, out)
    print(f"# run folder: {os.path.relpath(d, ROOT)}")
    return d


def save_raw(run, name, raw):
    """Writes `raw` as JSON to NAME.json in the run folder `run` (NAME-2.json
    and so on when an earlier invocation of the same run took the name) and
    prints where."""
    import json
    path = os.path.join(run, name + ".json")
    n = 2
    while os.path.exists(path):
        path = os.path.join(run, f"{name}-{n}.json")
        n += 1
    with open(path, "w") as f:
        json.dump(raw, f, indent=1)
    print(f"# raw: {os.path.relpath(path, ROOT)}")
    return path
