"""Every ```python block of docs/python.md and of the package's README runs,
in document order, in a scratch directory holding the files they name."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DOCS = [HERE.parents[2] / "docs" / "python.md", HERE.parent / "README.md"]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def fixtures(d):
    """The files and directories the examples name."""
    for sub in ("db", "wal", "backup"):
        (d / sub).mkdir()
    data = bytes((i * 2654435761 >> 13) & 0xFF for i in range(1 << 20))
    with open(d / "vm.img", "wb") as f:  # data, a hole, data
        f.write(data)
        f.truncate(8 << 20)
        f.seek(6 << 20)
        f.write(data)


PUT = """import os
fd = os.open("kv/data.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"new")
os.close(fd)  # the bug: no os.fsync(fd) before the rename
os.rename("kv/data.tmp", "kv/data")
d = os.open("kv", os.O_RDONLY | os.O_DIRECTORY)
os.fsync(d)
os.close(d)
print("ok", flush=True)
"""

CHECK = """import os, sys
d = open("data").read() if os.path.exists("data") else ""
if d not in ("old", "new"):
    sys.exit(f"data holds {d!r}")
acks = open(os.environ["FSPACE_CRASH_ACKS"]).read()
if "ok" in acks and d != "new":
    sys.exit(f"acknowledged, but data holds {d!r}")
"""


def crash_trace(d):
    """kv.trace and check_kv.py for the crash test's example: put.py (the
    tutorial of docs/crashtest.md) recorded by the `fspace` command."""
    fspace_cmd = shutil.which("fspace")
    if fspace_cmd is None:
        pytest.fail("the crash test's example records with the fspace command: put it on PATH "
                    "(ci/python.sh puts the workspace's release build there)", pytrace=False)
    (d / "kv").mkdir()
    (d / "kv" / "data").write_text("old")
    (d / "put.py").write_text(PUT)
    (d / "check_kv.py").write_text(CHECK)
    r = subprocess.run([fspace_cmd, "crashtest", "record", "--root", "kv", "--trace", "kv.trace",
                        "--", sys.executable, "put.py"], cwd=d, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stdout + r.stderr
    assert (d / "kv" / "data").read_text() == "new"
    (d / "kv" / "data").write_text("old")
    assert os.path.isdir(d / "kv.trace")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_python_block_runs(doc, tmp_path, monkeypatch):
    blocks = FENCE.findall(doc.read_text())
    assert blocks, f"{doc} has no python block"
    fixtures(tmp_path)
    if doc.name == "python.md":  # its crash test example
        crash_trace(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc__"}
    for n, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{doc.name} block {n}", "exec"), namespace)
        except Exception as e:  # name the block that failed
            raise AssertionError(f"{doc.name}, python block {n} failed: {e!r}\n{code}") from e
