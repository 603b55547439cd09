"""Every ```python block of docs/python.md and of the package's README runs,
in document order, in a scratch directory holding the files they name."""

import re
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


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_python_block_runs(doc, tmp_path, monkeypatch):
    blocks = FENCE.findall(doc.read_text())
    assert blocks, f"{doc} has no python block"
    fixtures(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc__"}
    for n, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{doc.name} block {n}", "exec"), namespace)
        except Exception as e:  # name the block that failed
            raise AssertionError(f"{doc.name}, python block {n} failed: {e!r}\n{code}") from e
