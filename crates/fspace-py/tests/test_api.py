"""The package's Python conventions: paths of every kind, descriptors and
file objects, errors as OSError subclasses with errno and filename, bad
arguments as ValueError, frozen reports. No matrix needed (tmp_path)."""

import errno
import os
import pathlib

import pytest

import fspace

MiB = 1 << 20


def test_missing_path_is_file_not_found_with_errno_and_filename(tmp_path):
    missing = str(tmp_path / "no" / "such")
    calls = [
        lambda: fspace.info(missing),
        lambda: fspace.grow(missing, 4096),
        lambda: fspace.allocate(missing, 0, 4096),
        lambda: fspace.copy(missing, str(tmp_path / "dst")),
        lambda: fspace.dig(missing),
        lambda: fspace.map(missing),
        lambda: fspace.untorn_facts(missing),
        lambda: fspace.untorn_facts_of_fs(missing),
        lambda: fspace.untorn_answer(missing, 16384),
        lambda: fspace.check_untorn_layout(missing, 16384),
    ]
    for call in calls:
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert e.value.errno == errno.ENOENT
        assert e.value.filename == missing
        # The message names the operation and the path.
        assert missing in e.value.strerror
        assert "(" in e.value.strerror.split(missing)[0]


def test_bad_names_and_numbers_are_value_errors(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"")
    with pytest.raises(ValueError, match="unknown intent"):
        fspace.grow(p, 4096, intent="overwrite")
    with pytest.raises(ValueError, match="unknown strategy"):
        fspace.grow(p, 4096, strategy="fast")
    with pytest.raises(ValueError, match="named strategy"):
        fspace.grow(p, 4096, fallback=False)
    with pytest.raises(ValueError):
        fspace.grow(p, -1)
    with pytest.raises(ValueError):
        fspace.grow(p, "sixteen")
    with pytest.raises(ValueError):
        fspace.allocate(p, -1, 4096)
    with pytest.raises(ValueError):
        fspace.allocate(-3, 0, 4096)
    with pytest.raises(ValueError, match="unknown sparse mode"):
        fspace.copy(p, tmp_path / "g", sparse="sometimes")
    with pytest.raises(ValueError, match="reflink always"):
        fspace.copy(p, tmp_path / "g", sparse="always", reflink="always")
    with pytest.raises(ValueError):
        fspace.probe(tmp_path, quick=True, full=True)
    with pytest.raises(ValueError, match="segment size"):
        fspace.Wal(tmp_path / "wal", segment_size=1000)
    with pytest.raises(ValueError, match="unknown sync method"):
        fspace.Wal(tmp_path / "wal", sync_method="sometimes")
    with pytest.raises(TypeError):
        fspace.grow(p, 4096.5)
    with pytest.raises(TypeError):
        fspace.info(42)


def test_untorn_arguments(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(bytes(8192))
    with pytest.raises(ValueError, match="unknown I/O path"):
        fspace.untorn_answer(tmp_path, 16384, io="sideways")
    with pytest.raises(ValueError):
        fspace.untorn_answer(tmp_path, -1)
    with pytest.raises(ValueError):
        fspace.grow(p, 16384, untorn_unit=-1)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        fspace.grow(p, 16384, untorn_unit=1 << 40)
    with pytest.raises(OSError) as e:  # the library's refusal, as in C
        fspace.grow(p, 16384, untorn_unit=3000)
    assert e.value.errno == errno.EINVAL and "power of two" in e.value.strerror
    assert p.stat().st_size == 8192
    with pytest.raises(TypeError, match="not a path"):
        fspace.write_untorn(str(p), b"x" * 4096, 0)
    with open(p, "r+b") as f:
        with pytest.raises(TypeError):
            fspace.write_untorn(f, "text", 0)
        with pytest.raises(TypeError):
            fspace.write_untorn(f, 4096, 0)
        with pytest.raises(ValueError):
            fspace.write_untorn(f, b"x" * 4096, -1)
        with pytest.raises(ValueError):
            fspace.check_untorn_layout(f, 4096, offset=-1)
        # Refused before anything is issued, never written plainly:
        # EOPNOTSUPP for a buffered descriptor (or a filesystem without
        # untorn writes), whatever else is wrong.
        with pytest.raises(OSError) as e:
            fspace.write_untorn(f, b"x" * 4096, 0)
        assert e.value.errno == errno.EOPNOTSUPP and e.value.filename == str(p)
    assert p.read_bytes() == bytes(8192)
    with pytest.raises(ValueError):
        fspace.write_untorn(-3, b"x" * 4096, 0)
    with pytest.raises(OSError) as e:
        fspace.write_untorn(10_000, b"x" * 4096, 0)  # not an open descriptor
    assert e.value.errno == errno.EBADF


def test_untorn_reports(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(bytes(8192))
    f = fspace.untorn_facts(p)
    assert isinstance(f, fspace.UntornFacts)
    assert not f.scratch and f.tried == [] and f.path == str(p)
    assert f.state in ("supported", "zero", "not-reported", "unknown")
    with pytest.raises(AttributeError):
        f.state = "supported"
    assert repr(f).startswith("UntornFacts(") and "state=" in repr(f)
    assert f.to_dict()["limits"]["state"] == f.state
    assert '"scratch":false' in f.to_json()
    # Answered from the facts: no trial behind it.
    a = fspace.untorn_answer(f, 8192, "buffered")
    assert not a.untorn and a.limit == "buffered" and a.confirmed is None
    assert a.to_dict()["io"] == "buffered"
    assert p.read_bytes() == bytes(8192)  # nothing written


def test_library_refusals_keep_their_errno(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 8192)
    with pytest.raises(OSError) as e:
        fspace.grow(p, 4096)  # would shrink
    assert e.value.errno == errno.EINVAL and e.value.filename == str(p)
    with pytest.raises(IsADirectoryError):
        fspace.grow(tmp_path, 4096)
    q = tmp_path / "g"
    q.write_bytes(b"")
    with pytest.raises(FileExistsError) as e:
        fspace.copy(p, q)
    assert e.value.errno == errno.EEXIST
    with open(p, "rb") as ro:
        with pytest.raises(OSError) as e:
            fspace.allocate(ro, 0, 4096)  # not open for writing
        assert e.value.errno == errno.EBADF
    with pytest.raises(OSError) as e:
        fspace.allocate(p, 0, 0)
    assert e.value.errno == errno.EINVAL


def test_paths_of_every_kind(tmp_path):
    p = tmp_path / "f"
    r = fspace.grow(p, 1 * MiB, create=True)  # pathlib.Path
    assert r.new_len == MiB and r.created
    assert fspace.map(os.fsencode(str(p))).summary.size == MiB  # bytes
    assert fspace.info(str(tmp_path)).path == str(tmp_path)  # str

    class Custom:
        def __fspath__(self):
            return str(p)

    assert fspace.map(Custom()).summary.size == MiB  # os.PathLike
    # A name that is not UTF-8 comes back as Python's os functions give it.
    odd = os.path.join(os.fsencode(str(tmp_path)), b"\xff.bin")
    fspace.grow(odd, 4096, create=True)
    assert os.path.getsize(odd) == 4096
    assert fspace.map(odd).path == os.fsdecode(odd)


def test_allocate_takes_file_objects_descriptors_and_paths(tmp_path):
    p = tmp_path / "f"
    with open(p, "wb") as f:
        r = fspace.allocate(f, 0, MiB)  # an object with fileno()
        assert r.new_len == MiB and r.path == str(p)
        r = fspace.allocate(f.fileno(), MiB, MiB)  # an int
        assert r.new_len == 2 * MiB
    r = fspace.allocate(pathlib.Path(p), 0, 3 * MiB)  # a path
    assert r.new_len == 3 * MiB
    assert os.path.getsize(p) == 3 * MiB
    with pytest.raises(OSError) as e:
        fspace.allocate(10_000, 0, 4096)  # not an open descriptor
    assert e.value.errno == errno.EBADF


def test_reports_are_frozen_and_print_their_fields(tmp_path):
    r = fspace.grow(tmp_path / "f", 4096, create=True)
    with pytest.raises(AttributeError):
        r.strategy = "zero-fill"
    text = repr(r)
    assert text.startswith("GrowReport(") and "strategy=" in text and "new_len=4096" in text
    d = r.to_dict()
    assert d["new_len"] == 4096 and d["strategy"] == r.strategy
    assert isinstance(r, fspace.GrowReport)
    i = fspace.info(tmp_path)
    assert i.to_dict()["policy"][0]["intent"] == "bulk"
    assert [p.intent for p in i.policy] == ["bulk", "log", "sparse"]


def test_wal_conventions(tmp_path):
    d = tmp_path / "wal"
    w = fspace.Wal(d, segment_size="64K")
    with pytest.raises(BlockingIOError) as e:
        fspace.Wal(d)  # one process (one opener) per log
    assert e.value.errno == errno.EWOULDBLOCK
    with pytest.raises(TypeError):
        w.commit("text")
    with pytest.raises(TypeError):
        w.commit(5)
    with pytest.raises(OSError) as e:
        w.commit(bytes(w.max_record + 1))
    assert e.value.errno == errno.EMSGSIZE
    lsn = w.append(b"a")
    assert w.sync() == lsn and w.durable_lsn == lsn
    assert w.stats()["records"] == 1
    assert repr(w).startswith("Wal(")
    w.close()
    w.close()  # a second close does nothing
    assert w.closed
    with pytest.raises(ValueError, match="closed"):
        w.commit(b"b")
    with pytest.raises(NotADirectoryError):
        fspace.Wal(tmp_path / "wal" / "LOCK")


def test_wal_view_reads_beside_a_writer_and_refuses_what_is_no_log(tmp_path):
    d = tmp_path / "wal"
    with fspace.Wal(d, segment_size="64K") as w:
        lsns = [w.commit(bytes([i]) * (i * 1000)) for i in range(40)]
        # The view takes no lock: it opens while the log is open.
        v = fspace.WalView(d)
        assert v.dir == str(d)
        assert [(r.lsn, r.data) for r in v.read()] == [
            (lsn, bytes([i]) * (i * 1000)) for i, lsn in enumerate(lsns)]
        assert v.recovery()["read_only"] is True
        assert len(v.segments()) >= 2 and v.segments()[0]["first_lsn"] == 1
        assert all(isinstance(p, str) for p in v.prepared + v.pool)
        assert repr(v).startswith("WalView(")
        assert list(v.read(lsns[-1] + 1)) == []
        assert fspace.WalView.open_to_damage(d).damage() is None
    # Bad input: the errno, and the path in the message and as filename.
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as e:
        fspace.WalView(missing)
    assert e.value.errno == errno.ENOENT and e.value.filename == str(missing)
    assert str(missing) in str(e.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="holds no log") as e:
        fspace.WalView(empty)
    assert e.value.filename == str(empty)
    with pytest.raises(NotADirectoryError) as e:
        fspace.WalView(d / "LOCK")
    assert e.value.errno == errno.ENOTDIR and e.value.filename == str(d / "LOCK")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "000000000001.seg").write_bytes(os.urandom(64 << 10))
    with pytest.raises(FileNotFoundError, match="holds no log") as e:
        fspace.WalView.open_to_damage(junk)
    assert e.value.filename == str(junk)
    assert os.listdir(junk) == ["000000000001.seg"]  # nothing written


def test_probe_quick_on_tmp(tmp_path):
    """A quick probe returns a recommendation per intent and the whole
    document; run where tmp_path is (a few seconds)."""
    r = fspace.probe(tmp_path)
    assert r.level == "quick"
    assert sorted(c.intent for c in r.recommendations) == ["bulk", "log", "sparse"]
    doc = r.to_dict()
    assert doc["schema"].startswith("fspace-probe")
    assert doc["recommendations"][0]["strategy"] == r.recommendations[0].strategy
    assert os.listdir(tmp_path) == []  # scratch directory removed


def test_ctrl_c_stops_a_growth_and_rolls_it_back(tmp_path):
    """SIGINT during a long zero-fill raises KeyboardInterrupt promptly and
    leaves no file (the growth of a created file is rolled back)."""
    import signal
    import subprocess
    import sys
    import time
    target = tmp_path / "big"
    # Large enough to outlast the signal on a fast disk: a 4 GiB zero-fill
    # into the page cache of a fast host ended within 0.3 s in one CI run.
    # Interrupted, only what was written before the signal is ever written.
    size = min(16 << 30, fspace.info(tmp_path).free_bytes // 4)
    script = (
        "import signal, sys, fspace\n"
        # A process started in the background by a non-interactive shell
        # (as CI runs the suite) inherits SIGINT ignored, and Python then
        # leaves it ignored: Ctrl-C's handler is put back as a terminal's
        # Python would have it.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('go', flush=True)\n"
        f"fspace.grow({str(target)!r}, {size}, strategy='zero-fill', create=True, sync=True)\n"
        "print('finished', flush=True)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "go\n"
    # The signal goes as soon as the growth has begun (its temporary file
    # holds data), not after a guessed delay.
    deadline = time.monotonic() + 30
    while not any(os.path.getsize(tmp_path / n) > 0 for n in os.listdir(tmp_path)):
        assert time.monotonic() < deadline and child.poll() is None, "the growth never began"
        time.sleep(0.005)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    stopped = time.monotonic() - sent
    assert "finished" not in out, f"the growth of {size} bytes ended before SIGINT"
    assert child.returncode != 0 and "KeyboardInterrupt" in err, err
    assert stopped < 5, f"took {stopped:.1f} s to stop"
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)


def test_the_module_never_calls_posix_fallocate():
    """docs/design.md rule 1: the native module imports no posix_fallocate
    (the Rust tests check the CLI and the C library the same way)."""
    import shutil
    import subprocess
    from fspace import _fspace
    if shutil.which("nm") is None:
        pytest.skip("nm is not installed (binutils; ci/matrix.sh deps installs it)")
    out = subprocess.run(["nm", "-D", "--undefined-only", _fspace.__file__],
                         capture_output=True, text=True, check=True).stdout
    assert "Py_IncRef" in out  # the listing is the module's imports
    assert "posix_fallocate" not in out


def test_star_import_keeps_the_builtin_map():
    namespace = {}
    exec("from fspace import *", namespace)
    assert "map" not in namespace and "grow" in namespace and "Wal" in namespace
    assert all(hasattr(fspace, name) for name in fspace.__all__)
    assert callable(fspace.map)
