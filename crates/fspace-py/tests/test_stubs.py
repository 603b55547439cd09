"""The type stubs (fspace/_fspace.pyi) match the native module, and the
documented examples type-check against them."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "python.md"


def mypy(*args, cwd=None):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (ci/python.sh installs it)")
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_stubs_match_the_module():
    # PEP 800's @disjoint_base is left out: type checkers older than 2025
    # do not know it, and the classes are @final anyway.
    r = mypy("mypy.stubtest", "fspace", "--ignore-disjoint-bases")
    assert r.returncode == 0, r.stdout + r.stderr


def test_documented_examples_type_check(tmp_path):
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    assert len(blocks) >= 5
    files = []
    for i, b in enumerate(blocks):
        f = tmp_path / f"example{i}.py"
        f.write_text(b)
        files.append(f.name)
    r = mypy("mypy", "--strict", "--no-incremental", *files, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
