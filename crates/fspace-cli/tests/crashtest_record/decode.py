#!/usr/bin/env python3
"""Decodes the raw record file of libfspace-record.so (format version 1).

Usage: decode.py OPS_FILE   -- prints one line per record.
As a module: records(path) returns a list of dicts.
"""
import struct
import sys

MAGIC = b"FSPCTRW1"
HEADER = struct.Struct("<IHHIIQqiiQQQQQQQIIII")
assert HEADER.size == 112

KINDS = {
    1: "OPEN", 2: "CLOSE", 3: "WRITE", 4: "TRUNCATE", 5: "FALLOCATE",
    6: "POSIX_FALLOCATE", 7: "RENAME", 8: "LINK", 9: "UNLINK", 10: "MKDIR",
    11: "RMDIR", 12: "FSYNC", 13: "FDATASYNC", 14: "SYNC_FILE_RANGE",
    15: "SYNCFS", 16: "SYNC", 17: "ACK", 18: "LIMIT", 19: "START",
    20: "INHERITED", 21: "DUP",
}
FIELDS = ("len", "kind", "version", "pid", "tid", "t_ns", "ret", "err", "fd",
          "ino", "ino2", "a", "b", "c", "d", "dev", "path1_len", "path2_len",
          "data_len", "reserved")


def records(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != MAGIC:
        raise ValueError(f"{path}: bad magic {raw[:8]!r}")
    out, pos = [], 8
    while pos < len(raw):
        if len(raw) - pos < HEADER.size:
            raise ValueError(f"{path}: torn header at {pos}")
        r = dict(zip(FIELDS, HEADER.unpack_from(raw, pos)))
        n = r["len"]
        if n != HEADER.size + r["path1_len"] + r["path2_len"] + r["data_len"]:
            raise ValueError(f"{path}: record at {pos}: len {n} disagrees with its parts")
        if pos + n > len(raw):
            raise ValueError(f"{path}: torn record at {pos}")
        if r["version"] != 1 or r["reserved"] != 0:
            raise ValueError(f"{path}: record at {pos}: version {r['version']}")
        q = pos + HEADER.size
        r["path1"] = raw[q:q + r["path1_len"]].decode("utf-8", "surrogateescape")
        q += r["path1_len"]
        r["path2"] = raw[q:q + r["path2_len"]].decode("utf-8", "surrogateescape")
        q += r["path2_len"]
        r["data"] = raw[q:q + r["data_len"]]
        r["name"] = KINDS.get(r["kind"], f"KIND{r['kind']}")
        r["offset"] = pos
        out.append(r)
        pos += n
    return out


def line(r):
    s = (f"{r['name']:<15} pid={r['pid']} fd={r['fd']} ret={r['ret']} err={r['err']} "
         f"ino={r['ino']} ino2={r['ino2']} a={r['a']:#x} b={r['b']} c={r['c']:#x} "
         f"d={r['d']:#x}")
    if r["path1"]:
        s += f" p1={r['path1']!r}"
    if r["path2"]:
        s += f" p2={r['path2']!r}"
    if r["data_len"]:
        s += f" data[{r['data_len']}]={r['data'][:16]!r}"
    return s


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: decode.py OPS_FILE")
    for r in records(sys.argv[1]):
        print(line(r))


if __name__ == "__main__":
    main()
