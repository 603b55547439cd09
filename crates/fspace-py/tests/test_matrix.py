"""fspace on every filesystem of the matrix: holes kept by copies, no
one-byte writes where fallocate is missing, growth, maps, digs, and the log.
"""

import errno
import hashlib
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import fspace
from conftest import matrix_fs, unavailable

MiB = 1 << 20
GiB = 1 << 30


def allocated(path):
    return os.stat(path).st_blocks * 512


def write_at(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def sparse_file(path, size, data_at, data):
    """A file of `size` bytes, all hole except `data` at `data_at`."""
    with open(path, "wb") as f:
        f.truncate(size)
    write_at(path, data_at, data)


def content_digest(path, chunk=MiB):
    """A digest of the file's bytes that reads only its data ranges
    (SEEK_DATA/SEEK_HOLE) and skips zero chunks: two files of one length
    whose digests match hold the same bytes, and a 1 GiB file that is
    mostly hole is compared without reading 1 GiB of zeros."""
    h = hashlib.sha256()
    size = os.stat(path).st_size
    h.update(size.to_bytes(8, "little"))
    zero = bytes(chunk)
    with open(path, "rb") as f:
        fd = f.fileno()
        pos = 0
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:  # ENXIO: only a hole up to EOF
                break
            end = os.lseek(fd, start, os.SEEK_HOLE)
            off = start - start % chunk
            while off < end:
                f.seek(off)
                buf = f.read(min(chunk, size - off))
                if buf != zero[: len(buf)]:
                    h.update(off.to_bytes(8, "little"))
                    h.update(buf)
                off += chunk
            pos = end
    return h.hexdigest()


def no_allocation_figures(fs, info):
    """Skips (with the reason) where st_blocks does not measure allocation,
    as the library says (FsInfo.st_blocks_measures_allocation)."""
    if not info.st_blocks_measures_allocation:
        pytest.skip(f"{fs.name}: st_blocks does not measure allocation here "
                    "(fspace.info(...).st_blocks_measures_allocation is False: "
                    "FUSE makes it up), so holes cannot be counted")


def test_copy_of_a_1gib_file_with_1mib_of_data_allocates_1mib(fs):
    """The hole case: fspace.copy keeps the holes (<= 1.1 MiB allocated),
    byte for byte the same file."""
    info = fspace.info(fs.dir)
    no_allocation_figures(fs, info)
    src, dst = fs.path("src.img"), fs.path("dst.img")
    data = os.urandom(MiB)
    sparse_file(src, GiB, GiB // 2, data)
    r = fspace.copy(src, dst)
    assert r.len == GiB
    assert allocated(dst) <= 1.1 * MiB, (allocated(dst), r)
    assert r.dst_allocated is not None and r.dst_allocated <= 1.1 * MiB
    assert os.stat(dst).st_size == GiB
    assert content_digest(dst) == content_digest(src)
    with open(dst, "rb") as f:
        f.seek(GiB // 2)
        assert f.read(MiB) == data


def test_shutil_copy2_fills_the_holes_fspace_copy_does_not(fs):
    """The baseline, measured in the same run on the same file:
    shutil.copy2 allocates the whole length (it writes the holes as
    zeros), fspace.copy only the data. 1 GiB where the filesystem has room
    for a full copy, else 256 MiB (the matrix's 512 MB images)."""
    info = fspace.info(fs.dir)
    no_allocation_figures(fs, info)
    size = GiB if info.free_bytes > GiB + 128 * MiB else 256 * MiB
    src = fs.path("src.img")
    sparse_file(src, size, size // 2, os.urandom(MiB))
    ours = fspace.copy(src, fs.path("fspace.img"))
    shutil.copy2(src, fs.path("shutil.img"))
    theirs = allocated(fs.path("shutil.img"))
    assert allocated(fs.path("fspace.img")) <= 1.1 * MiB, ours
    assert theirs >= 0.9 * size, f"shutil.copy2 allocated {theirs} of {size}"
    assert content_digest(fs.path("shutil.img")) == content_digest(fs.path("fspace.img"))


ONE_BYTE_PWRITE = re.compile(r'pwrite64\(\d+, "[^"]*", 1, \d+\)\s*= 1')
WRITE_CALL = re.compile(r"\b(pwrite64|pwritev2?|write)\(")


def traced(script, tmp_path):
    """Runs `script` in this Python (the venv's) under strace; returns
    (one-byte pwrite64 calls, write-type calls) of the whole process."""
    if shutil.which("strace") is None:
        unavailable("strace is not installed (ci/matrix.sh deps installs it)")
    out = tmp_path / f"strace-{os.urandom(4).hex()}.txt"
    subprocess.run(
        ["strace", "-f", "-qq", "-o", str(out), "-e",
         "trace=pwrite64,pwritev,pwritev2,write", sys.executable, "-c", script],
        check=True, timeout=120)
    lines = out.read_text().splitlines()
    return (sum(1 for line in lines if ONE_BYTE_PWRITE.search(line)),
            sum(1 for line in lines if WRITE_CALL.search(line)))


@pytest.mark.parametrize("name", ["ext4-noextents", "sshfs"])
def test_allocate_issues_no_one_byte_writes_where_fallocate_is_missing(name, tmp_path):
    """os.posix_fallocate (glibc) writes one byte per 4 KiB block where
    fallocate(2) is unsupported; fspace.allocate fills with large writes."""
    fs = matrix_fs(name)
    try:
        length = 16 * MiB
        glibc = fs.path("glibc.img")
        ours = fs.path("fspace.img")
        g1, _ = traced(textwrap.dedent(f"""
            import os
            fd = os.open({glibc!r}, os.O_WRONLY | os.O_CREAT, 0o644)
            os.posix_fallocate(fd, 0, {length})
        """), tmp_path)
        f1, fw = traced(textwrap.dedent(f"""
            import fspace
            with open({ours!r}, "wb") as f:
                r = fspace.allocate(f, 0, {length})
            assert r.strategy == "zero-fill", r
            assert r.new_len == {length}, r
        """), tmp_path)
        # One per 4 KiB block: 4,096 for 16 MiB; at least 90% of them.
        assert g1 >= length // 4096 * 9 // 10, f"glibc made {g1} one-byte writes"
        assert f1 == 0, f"fspace.allocate made {f1} one-byte writes"
        # 16 writes of 1 MiB, and the few the interpreter makes itself.
        assert fw <= 64, f"fspace.allocate's process made {fw} write calls"
        assert os.stat(ours).st_size == length
        with open(ours, "rb") as f:
            assert f.read() == bytes(length)
    finally:
        shutil.rmtree(fs.dir, ignore_errors=True)


def test_allocate_path_keeps_bytes_and_extends(fs):
    p = fs.path("f")
    with open(p, "wb") as f:
        f.write(b"keep me")
    r = fspace.allocate(p, 4096, 4 * MiB)
    assert r.new_len == 4096 + 4 * MiB
    assert os.stat(p).st_size == 4096 + 4 * MiB
    with open(p, "rb") as f:
        assert f.read(7) == b"keep me"
    expected = "zero-fill" if fs.name in ("ext4-noextents", "sshfs") else "allocate"
    assert r.strategy == expected, r


def test_grow_for_log_leaves_no_unwritten_bytes(fs):
    p = fs.path("seg")
    r = fspace.grow(p, "8M", intent="log", create=True, sync=True)
    assert r.created and r.new_len == 8 * MiB and r.synced
    assert os.stat(p).st_size == 8 * MiB
    m = fspace.map(p, sync=True)
    assert m.summary.size == 8 * MiB
    if m.method == "fiemap":
        assert m.summary.unwritten == 0, m
    assert r.to_dict()["strategy"] == r.strategy
    # On btrfs log space is what fspace's log makes: a NOCOW file,
    # zero-filled (written blocks, no holes); elsewhere no NOCOW.
    assert r.nocow == (fs.name == "btrfs") == r.to_dict()["nocow"], r
    if fs.name == "btrfs":
        assert r.strategy == "zero-fill" and m.summary.holes == 0, (r, m)


def test_grow_reports_fallbacks_where_fallocate_is_missing(fs):
    p = fs.path("bulk")
    open(p, "wb").close()
    r = fspace.grow(p, 4 * MiB, intent="bulk", strategy="allocate")
    assert r.new_len == 4 * MiB
    if fs.name in ("ext4-noextents", "sshfs"):
        assert r.strategy != "allocate"
        assert [f.strategy for f in r.fallbacks][:1] == ["allocate"]
        assert r.fallbacks[0].errno == 95  # EOPNOTSUPP
    else:
        assert r.strategy == "allocate" and r.fallbacks == []


def test_map_and_dig(fs):
    p = fs.path("zeros")
    with open(p, "wb") as f:
        f.write(b"x" * 4096 + bytes(4 * MiB) + b"y" * 4096)
    os.sync()
    m = fspace.map(p, sync=True)
    assert m.summary.size == 4 * MiB + 8192
    assert sum(e.length for e in m.extents) == m.summary.size
    info = fspace.info(fs.dir)
    if not info.capabilities.get("punch-hole", None) or not info.capabilities["punch-hole"].supported:
        with pytest.raises(OSError):
            fspace.dig(p)
        return
    d = fspace.dig(p)
    assert d.len == 4 * MiB + 8192
    assert d.bytes_punched >= 3 * MiB, d
    with open(p, "rb") as f:
        assert f.read() == b"x" * 4096 + bytes(4 * MiB) + b"y" * 4096
    if info.st_blocks_measures_allocation:
        assert allocated(p) < 2 * MiB
        holes = fspace.map(p).summary.holes
        assert holes is not None and holes >= 3 * MiB


def test_wal_commit_read_release(fs):
    d = fs.path("wal")
    with fspace.Wal(d, segment_size="256K") as w:
        assert w.recovery()["created"] is True
        first = w.commit(b"one")
        lsns = w.commit_many([b"two", bytearray(b"three"), memoryview(b"four")])
        assert lsns == [first + 1, first + 2, first + 3]
        big = [os.urandom(50_000) for _ in range(20)]  # several segments
        for b in big:
            w.commit(b)
        assert w.durable_lsn == first + 23
        got = [(r.lsn, r.data) for r in w.read()]
        assert got[:4] == [(first, b"one"), (first + 1, b"two"),
                           (first + 2, b"three"), (first + 3, b"four")]
        assert [g[1] for g in got[4:]] == big
        rel = w.release_before(first + 20)
        assert rel.recycled + rel.deleted >= 1
        after = [r.lsn for r in w.read(first + 20)]
        assert after[0] == first + 20 and after[-1] == first + 23
        with pytest.raises(OSError):
            list(w.read(first))  # released
    assert w.closed
    with fspace.Wal(d) as w:
        assert w.recovery()["records"] >= 4
        assert [r.data for r in w.read(first + 22)] == big[-2:]


CHILD = textwrap.dedent("""
    import hashlib, os, sys, fspace
    d, seed = sys.argv[1], sys.argv[2]

    def payload(i):
        n = int.from_bytes(hashlib.sha256(f"{seed}:{i}:n".encode()).digest()[:2], "little") % 20000 + 1
        block = hashlib.sha256(f"{seed}:{i}".encode()).digest()
        return (block * (n // 32 + 1))[:n]

    w = fspace.Wal(d, segment_size="128K")
    i = 0
    while True:
        if i % 5 == 4:
            lsns = w.commit_many([payload(i), payload(i + 1)])
            for k, lsn in enumerate(lsns):
                print(lsn, i + k, flush=True)
            i += 2
        else:
            print(w.commit(payload(i)), i, flush=True)
            i += 1
""")


def payload(seed, i):
    n = int.from_bytes(hashlib.sha256(f"{seed}:{i}:n".encode()).digest()[:2], "little") % 20000 + 1
    block = hashlib.sha256(f"{seed}:{i}".encode()).digest()
    return (block * (n // 32 + 1))[:n]


def test_wal_survives_kill_9(fs):
    """A child Python process commits and prints each acknowledged LSN;
    killed with SIGKILL mid-stream, three times; every acknowledged record
    comes back byte for byte."""
    d = fs.path("wal")
    acked = {}  # lsn -> expected payload
    for round_ in range(3):
        seed = f"{round_}-{os.urandom(4).hex()}"
        child = subprocess.Popen([sys.executable, "-c", CHILD, d, seed],
                                 stdout=subprocess.PIPE, text=True)
        want = 5 + int.from_bytes(os.urandom(1), "little") % 40
        seen = 0
        try:
            for line in child.stdout:
                lsn, i = map(int, line.split())
                acked[lsn] = payload(seed, int(i))
                seen += 1
                if seen >= want:
                    break
        finally:
            child.kill()  # SIGKILL
            child.wait(timeout=30)
        assert child.returncode == -9
        assert seen >= want, f"the child acknowledged only {seen} records"
        with fspace.Wal(d) as w:
            found = {r.lsn: r.data for r in w.read()}
        missing = [lsn for lsn in acked if lsn not in found]
        assert not missing, f"acknowledged records lost: {missing[:10]}"
        changed = [lsn for lsn, data in acked.items() if found[lsn] != data]
        assert not changed, f"acknowledged records changed: {changed[:10]}"


def longest_pause(ticks, start, end):
    """The longest time in start..end in which the ticking thread did not
    run."""
    inside = [start] + [x for x in ticks if start < x < end] + [end]
    return max(b - a for a, b in zip(inside, inside[1:]))


def test_grow_and_wal_release_the_gil(fs):
    """Another Python thread keeps running while a growth and a series of
    commits are under way: with the GIL held through a call, the thread
    would stop for the whole call."""
    import threading
    import time
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0)

    t = threading.Thread(target=spin)
    interval = sys.getswitchinterval()
    # Hand the GIL over every 0.5 ms rather than 5, so that the pauses
    # left by the handovers themselves stay far below the calls' times.
    sys.setswitchinterval(0.0005)
    t.start()
    try:
        time.sleep(0.02)
        g0 = time.monotonic()
        fspace.grow(fs.path("g"), 128 * MiB, strategy="zero-fill", create=True, sync=True)
        g1 = time.monotonic()
        with fspace.Wal(fs.path("wal"), segment_size="64M") as w:
            records = [os.urandom(MiB) for _ in range(32)]
            c0 = time.monotonic()
            w.commit_many(records)
            c1 = time.monotonic()
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(interval)
    print(f"{fs.name}: grow {g1 - g0:.4f} s, longest pause {longest_pause(ticks, g0, g1):.4f} s; "
          f"commit_many {c1 - c0:.4f} s, longest pause {longest_pause(ticks, c0, c1):.4f} s")
    assert longest_pause(ticks, g0, g1) < 0.5 * (g1 - g0), (g1 - g0)
    assert longest_pause(ticks, c0, c1) < 0.5 * (c1 - c0), (c1 - c0)


def test_wal_commits_from_many_threads_share_syncs(fs):
    """Eight Python threads commit into one Wal at once: every record comes
    back once, and commits share syncs (group commit works through the
    binding, which holds no lock of its own across a commit)."""
    import threading
    per_thread, threads = 40, 8
    with fspace.Wal(fs.path("wal"), segment_size="1M") as w:
        got = [[] for _ in range(threads)]

        def run(t):
            for i in range(per_thread):
                got[t].append(w.commit(f"{t}:{i}".encode() * 100))

        ts = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        records = {r.lsn: r.data for r in w.read()}
        stats = w.stats()
    lsns = [lsn for g in got for lsn in g]
    assert len(set(lsns)) == threads * per_thread
    for t in range(threads):
        assert got[t] == sorted(got[t])  # one thread's commits in order
        for i, lsn in enumerate(got[t]):
            assert records[lsn] == f"{t}:{i}".encode() * 100
    assert stats["records"] == threads * per_thread
    # Group commit: a flush (an fdatasync, or with dsync and direct-dsync a
    # write that is its own sync) serves several threads' commits. Measured
    # here: about 42 flushes for 320 commits on every filesystem but tmpfs,
    # where a sync costs next to nothing and commits seldom overlap.
    flushes = stats["syncs"] or stats["writes"]
    if fs.name != "tmpfs":
        assert flushes < threads * per_thread // 2, stats


def free_bytes(path):
    os.sync()
    st = os.statvfs(path)
    return st.f_bfree * st.f_frsize


@pytest.mark.parametrize("name", ["ext4", "xfs", "ext4-noextents", "tmpfs"])
def test_wal_view_reads_every_record_when_the_log_cannot_open_for_writing(name):
    """A filesystem filled until the log has no segment left: commits stop
    with ENOSPC, a writable open fails with ENOSPC and says the records are
    intact and how to read them, and WalView reads every committed record."""
    fs = matrix_fs(name)
    try:
        d = fs.path("wal")
        ballast = fs.path("ballast")
        acked = []
        with fspace.Wal(d, segment_size="1M") as w:
            acked.append((w.commit(b"first"), b"first"))
            # Take all the space but 256 KiB (less than a segment).
            target = free_bytes(fs.dir) - 256 * 1024
            while True:
                try:
                    fspace.grow(ballast, target, "bulk", create=True,
                                check_free_space=False)
                    break
                except OSError:
                    target -= MiB
            with pytest.raises(OSError) as e:
                while len(acked) < 1000:
                    data = hashlib.sha256(str(len(acked)).encode()).digest() * 1000
                    acked.append((w.commit(data), data))
            assert e.value.errno == errno.ENOSPC, e.value
        with pytest.raises(OSError) as e:
            fspace.Wal(d, segment_size="1M")
        err = e.value
        n = len(acked)
        assert err.errno == errno.ENOSPC, err
        assert err.filename == d, err
        msg = str(err)
        assert f"open log({d})" in msg, msg
        assert f"its {n} records (LSN 1 to {n}) are intact" in msg, msg
        assert "WalView" in msg and f"`fspace wal verify {d}`" in msg, msg

        view = fspace.WalView(d)
        rec = view.recovery()
        assert rec["read_only"] is True and rec["records"] == n, rec
        assert (view.first_lsn, view.next_lsn) == (1, n + 1)
        assert view.dir == d and len(view.log_id) == 16
        assert view.segments()[0]["seq"] >= 1
        assert view.damage() is None
        got = [(r.lsn, r.data) for r in view.read()]
        assert got == acked
        assert [r.lsn for r in view.read(n)] == [n]
        os.remove(ballast)
        # Space back: the log opens for writing and continues the sequence.
        with fspace.Wal(d, segment_size="1M") as w:
            assert w.commit(b"after") == n + 1
    finally:
        shutil.rmtree(fs.dir, ignore_errors=True)
