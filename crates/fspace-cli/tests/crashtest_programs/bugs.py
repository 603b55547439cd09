"""Small storage programs, each re-creating a known durability bug, and
its fixed version: `bugs.py PATTERN [fixed]`, run in a directory holding
`db/` (the recorded root). Each prints "ok" on stdout, its acknowledgement,
once its work is supposed to be durable."""
import ctypes
import os
import sys

pattern = sys.argv[1]
fixed = len(sys.argv) > 2 and sys.argv[2] == "fixed"


def fsync_dir(path):
    d = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(d)
    os.close(d)


def ack():
    os.write(1, b"ok\n")


if pattern == "replace":
    # leveldb#195, and every "write a temporary file, rename it over the
    # old one" without an fsync of the temporary file first.
    fd = os.open("db/data.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"new")
    if fixed:
        os.fsync(fd)
    os.close(fd)
    os.rename("db/data.tmp", "db/data")
    fsync_dir("db")
    ack()
elif pattern == "new-file":
    # litestream#1344 and the 2026 wave: a new file synced, its name not.
    fd = os.open("db/log", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"record\n")
    os.fsync(fd)
    os.close(fd)
    if fixed:
        fsync_dir("db")
    ack()
elif pattern == "ack-first":
    # An acknowledgement sent before the fsync that covers it.
    fd = os.open("db/log", os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"record\n")
    if not fixed:
        ack()
    os.fsync(fd)
    if fixed:
        ack()
    os.close(fd)
elif pattern == "torn-page":
    # etcd#16596: a page written in place with no checksum to catch a tear.
    new = b"b" * 8192
    if fixed:
        fd = os.open("db/page.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, new)
        os.fsync(fd)
        os.close(fd)
        os.rename("db/page.tmp", "db/page")
        fsync_dir("db")
    else:
        fd = os.open("db/page", os.O_WRONLY)
        os.pwrite(fd, new, 0)
        os.fsync(fd)
        os.close(fd)
    ack()
elif pattern == "sync-file-range":
    # An appended record flushed with sync_file_range only: the file's new
    # length is metadata, which it does not write.
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("db/log", os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"record\n")
    if fixed:
        os.fdatasync(fd)
    else:
        # SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER
        if libc.sync_file_range(fd, ctypes.c_int64(0), ctypes.c_int64(0), 7) != 0:
            raise OSError(ctypes.get_errno(), "sync_file_range")
    os.close(fd)
    ack()
else:
    sys.exit(f"unknown pattern {pattern}")
