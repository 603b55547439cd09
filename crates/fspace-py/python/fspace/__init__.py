"""File space done right on Linux.

fspace grows files the right way for their filesystem and intent, allocates
space without glibc's one-byte-per-block emulation, copies files without
losing holes, maps and digs holes, measures a disk, and keeps a durable
segment log. Every call returns a report of what it did; every failure is
an OSError that keeps the errno and names the operation and the path.

The functions release the GIL while they do I/O. See docs/python.md.
"""

from ._fspace import (
    Capability,
    CopyFallback,
    CopyReport,
    DigReport,
    Extent,
    ExtentMap,
    Fallback,
    FsInfo,
    GrowReport,
    MapSummary,
    Plan,
    ProbeResult,
    RangeReport,
    Recommendation,
    Record,
    ReleaseReport,
    Wal,
    WalRecords,
    __version__,
    allocate,
    copy,
    dig,
    grow,
    info,
    probe,
)
from ._fspace import map as map  # explicit re-export, outside __all__ (below)

__all__ = [
    "Capability",
    "CopyFallback",
    "CopyReport",
    "DigReport",
    "Extent",
    "ExtentMap",
    "Fallback",
    "FsInfo",
    "GrowReport",
    "MapSummary",
    "Plan",
    "ProbeResult",
    "RangeReport",
    "Recommendation",
    "Record",
    "ReleaseReport",
    "Wal",
    "WalRecords",
    "__version__",
    "allocate",
    "copy",
    "dig",
    "grow",
    "info",
    "probe",
]
# `map` is left out of __all__ so that `from fspace import *` does not hide
# the builtin map(); use fspace.map.
