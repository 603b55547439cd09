"""Untorn (atomic) writes on every filesystem of the matrix: the facts'
state per filesystem, the one answer per page size and I/O path, the write
call (taken on XFS through O_DIRECT, refused with the limit named
elsewhere), growth ready for a unit, and the layout check (both refused
first, with the reason, where the filesystem takes no untorn writes).

What the matrix gives on Linux 6.18 (docs/untorn.md): XFS with reflink
reports untorn writes supported (its software path: the loop devices have
no atomic writes); ext4 and ext4 without extents report a unit of 0;
btrfs, tmpfs and sshfs do not report. No buffered write is untorn.
"""

import errno
import mmap
import os

import pytest

import fspace
from conftest import matrix_fs

KiB = 1 << 10
MiB = 1 << 20

EXPECTED = {
    "xfs": "supported",
    "ext4": "zero",
    "ext4-noextents": "zero",
    "btrfs": "not-reported",
    "tmpfs": "not-reported",
    "sshfs": "not-reported",
}


def open_direct(path):
    """A descriptor opened with O_DIRECT for reading and writing, or
    without it where the filesystem refuses O_DIRECT (the untorn write is
    refused there anyway, for the filesystem's limits first)."""
    try:
        return os.open(path, os.O_RDWR | os.O_DIRECT)
    except OSError:
        return os.open(path, os.O_RDWR)


def test_facts_state_matches_the_matrix(fs):
    f = fspace.untorn_facts_of_fs(fs.dir)
    assert f.state == EXPECTED[fs.name], f
    assert f.scratch and f.path == fs.dir
    assert f.error is None
    if f.state == "supported":
        assert f.unit_min is not None and f.unit_max is not None
        assert f.unit_min <= 4 * KiB and f.unit_max >= 16 * KiB, f
        assert f.segments_max is not None and f.segments_max >= 1
        # The loop devices have no atomic writes: XFS's software path
        # carries every size, and needs reflink.
        assert f.source == "filesystem" and f.hardware_max == 0, f
        assert f.reflink is True
        assert f.extent_size_hint is not None
    else:
        assert (f.unit_min, f.unit_max, f.unit_max_opt, f.segments_max) == (None,) * 4
        assert f.source == "none"
    for d in f.devices:
        assert d.unit_max_bytes in (0, None), d
    # 8 and 16 KiB buffered, 4, 8, 16 and 64 KiB through O_DIRECT.
    assert sorted((t.size, t.direct) for t in f.tried) == [
        (4096, True), (8192, False), (8192, True), (16384, False), (16384, True), (65536, True)]
    for t in f.tried:
        if not t.direct:
            assert not t.ok and t.errno == errno.EOPNOTSUPP, t
        else:
            assert t.ok == (fs.name == "xfs"), t
    doc = f.to_dict()
    assert doc["limits"]["state"] == f.state
    assert doc["scratch"] is True and len(doc["tried"]) == 6
    # The scratch file is gone.
    assert os.listdir(fs.dir) == []


def test_one_answer_per_page_size_and_io_path(fs):
    facts = fspace.untorn_facts_of_fs(fs.dir)
    for page in (8 * KiB, 16 * KiB):
        for io in ("direct", "buffered"):
            a = fspace.untorn_answer(facts, page, io)
            yes = fs.name == "xfs" and io == "direct"
            assert a.untorn == yes, (fs.name, page, io, a)
            assert a.page_size == page and a.io == io
            assert a.reason
            assert a.confirmed is yes  # the filesystem's facts carry a trial of each
            if yes:
                assert a.path == "software" and a.limit is None, a
            else:
                assert a.path is None and a.limit is not None, a
            if io == "buffered":
                assert a.limit == "buffered"
                assert "only with O_DIRECT" in a.reason
            elif not yes:
                assert a.limit == "not-supported", a
            assert a.to_dict()["untorn"] == yes
    # A directory is measured first; the answer is the same.
    a = fspace.untorn_answer(fs.dir, "16K")
    assert a.untorn == (fs.name == "xfs") and a.io == "direct"
    assert os.listdir(fs.dir) == []


def test_untorn_writes_on_xfs():
    fs = matrix_fs("xfs")
    path = fs.path("pages")
    r = fspace.grow(path, MiB, create=True, sync=True, untorn_unit=16 * KiB)
    assert r.untorn is not None
    assert r.untorn.unit == 16 * KiB and r.untorn.extent_size_hint == 16 * KiB, r.untorn
    assert r.untorn.state == "supported" and r.untorn.hint_note is None
    assert r.untorn.layout is not None and r.untorn.layout_error is None
    layout = r.untorn.layout
    # Every unit written, in one extent, at an aligned device address.
    assert layout.units == MiB // (16 * KiB) and layout.passes, layout
    assert layout.faults == {} and layout.first_bad == []
    assert r.to_dict()["untorn"]["unit"] == 16 * KiB

    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    try:
        fspace.write_untorn(fd, b"\x01" * 4096, 8192, dsync=True)
        fspace.write_untorn(fd, bytearray(b"\x02" * 16384), 65536, dsync=True)
        with mmap.mmap(-1, 16384) as m:  # any bytes-like buffer
            m.write(b"\x03" * 16384)
            fspace.write_untorn(fd, memoryview(m), 16 * 16384)
        os.fdatasync(fd)
        with open(path, "rb") as f:
            data = f.read()
        assert data[8192:12288] == b"\x01" * 4096
        assert data[65536:81920] == b"\x02" * 16384
        assert data[16 * 16384:17 * 16384] == b"\x03" * 16384
        assert data[:8192] == bytes(8192) and data[17 * 16384:] == bytes(MiB - 17 * 16384)

        unit_max = fspace.untorn_facts(path).unit_max
        assert unit_max is not None
        cases = [
            (16384, 4096, "is not a multiple of the write's size"),
            (2 * unit_max, 0, "is above the largest untorn unit here"),
            (12288, 0, "is not a power of two"),
        ]
        for size, at, words in cases:
            with pytest.raises(OSError) as e:
                fspace.write_untorn(fd, b"\x09" * size, at)
            assert e.value.errno == errno.EINVAL, e.value
            assert words in e.value.strerror
            assert "pwritev2(RWF_ATOMIC)" in e.value.strerror
            assert e.value.filename == path
    finally:
        os.close(fd)
    # A buffered descriptor is refused, never written plainly.
    with open(path, "r+b", buffering=0) as f:
        with pytest.raises(OSError) as e:
            fspace.write_untorn(f, b"\x07" * 4096, 0, dsync=True)
        assert e.value.errno == errno.EOPNOTSUPP
        assert "O_DIRECT" in e.value.strerror
    with open(path, "rb") as f:
        assert f.read() == data, "a refused write changed the file"


@pytest.mark.parametrize("name", ["ext4", "btrfs", "ext4-noextents", "tmpfs", "sshfs"])
def test_untorn_writes_refused_where_not_supported(name):
    fs = matrix_fs(name)
    path = fs.path("pages")
    with open(path, "wb") as f:
        f.write(bytes(64 * KiB))
    fd = open_direct(path)
    try:
        for at in (0, 4096):  # the limits decide before the offset
            with pytest.raises(OSError) as e:
                fspace.write_untorn(fd, b"\x03" * 16384, at, dsync=True)
            assert e.value.errno == errno.EOPNOTSUPP, e.value
            assert "not supported here" in e.value.strerror
            assert e.value.filename == path
    finally:
        os.close(fd)
    with open(path, "rb") as f:
        assert f.read() == bytes(64 * KiB)


def test_growth_for_a_unit_and_the_layout_check(fs):
    path = fs.path("ready")
    if EXPECTED[fs.name] != "supported":
        # No untorn writes here: growth for a unit and the layout check
        # say so first, with the reason, and change nothing (never "every
        # unit aligned" on space whose writes can tear).
        with pytest.raises(OSError) as e:
            fspace.grow(path, MiB, create=True, untorn_unit="16K")
        assert e.value.errno == errno.EOPNOTSUPP, e.value
        assert "takes no untorn writes" in e.value.strerror
        assert "statx" in e.value.strerror and e.value.filename == path
        assert not os.path.exists(path)
        fspace.grow(path, MiB, create=True, intent="log")
        with pytest.raises(OSError) as e:
            fspace.check_untorn_layout(path, 16 * KiB)
        assert e.value.errno == errno.EOPNOTSUPP, e.value
        assert "takes no untorn writes" in e.value.strerror
        return
    r = fspace.grow(path, MiB, create=True, untorn_unit="16K")
    ready = r.untorn
    assert ready is not None and ready.unit == 16 * KiB
    assert ready.state == EXPECTED[fs.name]
    assert ready.layout is not None, ready
    # Written extents (intent log's plan): no unit is unwritten.
    assert "unwritten" not in ready.layout.faults, ready.layout
    c = fspace.check_untorn_layout(path, 16 * KiB)
    assert c.units == MiB // (16 * KiB) and c.start == 0 and c.end == MiB
    assert c.ok + sum(c.faults.values()) == c.units
    assert c.passes == (c.ok == c.units)
    assert c.passes, c
    assert c.to_dict()["units"] == c.units and c.words
    with open(path, "rb") as f:  # a file object, a part of the file
        c = fspace.check_untorn_layout(f, "16K", 1024, MiB - 2048)
    assert (c.start, c.end, c.units) == (16 * KiB, MiB - 16 * KiB, 62)
    # fallocate leaves unwritten extents: counted, named, not passing.
    plain = fs.path("fallocated")
    fspace.grow(plain, MiB, strategy="allocate", fallback=False, create=True)
    c = fspace.check_untorn_layout(plain, 16 * KiB)
    assert not c.passes and c.faults.get("unwritten", 0) > 0, c
    assert c.first_bad and c.first_bad[0].offset == 0
    assert c.first_bad[0].fault == "unwritten"


def test_a_bad_unit_changes_nothing(fs):
    path = fs.path("never")
    for unit in (3000, 256, 0):
        with pytest.raises(OSError) as e:
            fspace.grow(path, MiB, create=True, untorn_unit=unit)
        assert e.value.errno == errno.EINVAL and "power of two" in e.value.strerror
    assert not os.path.exists(path)
