"""What the benchmark scripts share: where the release binary is, and the
filesystem matrix they measure (FSPACE_TEST_MOUNTS, or the env file
`ci/matrix.sh up` writes)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSPACE = os.path.join(ROOT, "target", "release", "fspace")


def mounts():
    """{name: mount point} of the matrix."""
    env = os.environ.get("FSPACE_TEST_MOUNTS")
    if not env:
        path = os.environ.get("FSPACE_MATRIX_DIR", "/tmp/fspace-matrix") + "/env"
        try:
            lines = open(path).read().splitlines()
            env = next(l for l in lines if l.startswith("FSPACE_TEST_MOUNTS=")).split("=", 1)[1]
        except (OSError, StopIteration):
            sys.exit("bench: no FSPACE_TEST_MOUNTS and no matrix env file; run ci/matrix.sh up")
    return dict(kv.split("=", 1) for kv in env.split(",") if kv)


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


def save_raw(kind, raw):
    """Writes `raw` to bench/results/DATE-KIND[-TAG].json ($TAG names a
    run) and prints where."""
    import json, time
    tag = os.environ.get("TAG", "")
    name = time.strftime("%Y-%m-%d") + "-" + kind + (f"-{tag}" if tag else "") + ".json"
    with open(os.path.join(ROOT, "bench", "results", name), "w") as f:
        json.dump(raw, f, indent=1)
    print(f"# raw: bench/results/{name}")
