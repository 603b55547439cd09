"""File space done right on Linux.

fspace grows files the right way for their filesystem and intent, allocates
space without glibc's one-byte-per-block emulation, copies files without
losing holes, maps and digs holes, measures a disk, keeps a durable
segment log, and says whether page writes are untorn (and makes them). Every call returns a report of what it did; every failure is
an OSError that keeps the errno and names the operation and the path.

The functions release the GIL while they do I/O. See docs/python.md.
"""

from ._fspace import (
    BadUnit,
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
    Note,
    Plan,
    ProbeResult,
    RangeReport,
    Reason,
    Recommendation,
    Record,
    ReleaseReport,
    UntornAnswer,
    UntornDevice,
    UntornFacts,
    UntornLayout,
    UntornReady,
    UntornTrial,
    Wal,
    WalRecords,
    WalView,
    __version__,
    allocate,
    check_untorn_layout,
    copy,
    dig,
    grow,
    info,
    probe,
    untorn_answer,
    untorn_facts,
    untorn_facts_of_fs,
    write_untorn,
)
from ._fspace import map as map  # explicit re-export, outside __all__ (below)

__all__ = [
    "BadUnit",
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
    "Note",
    "Plan",
    "ProbeResult",
    "RangeReport",
    "Reason",
    "Recommendation",
    "Record",
    "ReleaseReport",
    "UntornAnswer",
    "UntornDevice",
    "UntornFacts",
    "UntornLayout",
    "UntornReady",
    "UntornTrial",
    "Wal",
    "WalRecords",
    "WalView",
    "__version__",
    "allocate",
    "check_untorn_layout",
    "copy",
    "dig",
    "grow",
    "info",
    "probe",
    "untorn_answer",
    "untorn_facts",
    "untorn_facts_of_fs",
    "write_untorn",
]
# `map` is left out of __all__ so that `from fspace import *` does not hide
# the builtin map(); use fspace.map.
