"""The filesystem matrix as the Python tests see it.

ci/matrix.sh mounts ext4, xfs, btrfs, ext4 without extents (an ext3 image),
tmpfs and sshfs and exports FSPACE_TEST_MOUNTS=name=path,... (ci/python.sh
passes it on). It also lists the fast mounts ext4-fast and xfs-fast (ext4
and xfs on loop devices over a tmpfs), which only the Rust log's tests use:
they are not in MATRIX. A test that takes the `fs` fixture runs once per filesystem;
a filesystem that is not mounted makes its cases skipped with the reason,
or failed when FSPACE_REQUIRE_MATRIX=1 (CI).
"""

import os
import shutil
import uuid

import pytest

MATRIX = ["ext4", "xfs", "btrfs", "ext4-noextents", "tmpfs", "sshfs"]


def mounts():
    """FSPACE_TEST_MOUNTS as {name: path}."""
    out = {}
    for item in os.environ.get("FSPACE_TEST_MOUNTS", "").split(","):
        if "=" in item:
            name, path = item.split("=", 1)
            out[name.strip()] = path.strip()
    return out


def require_matrix():
    return os.environ.get("FSPACE_REQUIRE_MATRIX") == "1"


def unavailable(reason):
    """Skips the test with `reason`, or fails it under FSPACE_REQUIRE_MATRIX=1."""
    if require_matrix():
        pytest.fail(f"{reason} (FSPACE_REQUIRE_MATRIX=1)", pytrace=False)
    pytest.skip(reason)


class Fs:
    """One filesystem of the matrix: its name and a scratch directory in it."""

    def __init__(self, name, mount, scratch):
        self.name = name
        self.mount = mount
        self.dir = scratch

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def __repr__(self):
        return f"Fs({self.name!r}, {self.dir!r})"


def scratch_in(name, mount):
    if not os.path.isdir(mount):
        unavailable(f"{name}: {mount} (from FSPACE_TEST_MOUNTS) is not a directory")
    d = os.path.join(mount, f"fspace-py-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.mkdir(d)
    return Fs(name, mount, d)


def matrix_fs(name):
    m = mounts()
    if name not in m:
        unavailable(f"{name}: not mounted (FSPACE_TEST_MOUNTS has no {name}; "
                    "sudo ci/matrix.sh up mounts it)")
    return scratch_in(name, m[name])


@pytest.fixture(params=MATRIX)
def fs(request):
    """A scratch directory on each filesystem of the matrix in turn."""
    f = matrix_fs(request.param)
    yield f
    shutil.rmtree(f.dir, ignore_errors=True)


def pytest_report_header(config):
    m = mounts()
    missing = [n for n in MATRIX if n not in m]
    line = "fspace matrix: " + (", ".join(f"{k}={v}" for k, v in m.items()) or "none")
    if missing:
        line += f" (missing: {', '.join(missing)})"
    return line
