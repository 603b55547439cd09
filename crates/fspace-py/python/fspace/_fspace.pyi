"""Type stubs of fspace's native module (re-exported by ``fspace``)."""

import os
from types import TracebackType
from typing import (
    IO,
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    Type,
    Union,
    final,
)

__version__: str
__all__ = [
    "__version__",
    "info",
    "grow",
    "allocate",
    "copy",
    "dig",
    "map",
    "probe",
    "Note",
    "Reason",
    "Fallback",
    "Capability",
    "Plan",
    "FsInfo",
    "GrowReport",
    "RangeReport",
    "CopyFallback",
    "CopyReport",
    "DigReport",
    "Extent",
    "MapSummary",
    "ExtentMap",
    "Recommendation",
    "ProbeResult",
    "Record",
    "ReleaseReport",
    "Wal",
    "WalRecords",
    "WalView",
    "untorn_facts",
    "untorn_facts_of_fs",
    "untorn_answer",
    "write_untorn",
    "check_untorn_layout",
    "UntornTrial",
    "UntornDevice",
    "UntornFacts",
    "UntornAnswer",
    "BadUnit",
    "UntornLayout",
    "UntornReady",
    "crashtest_check",
    "crashtest_lint",
    "TornWrite",
    "CrashFailure",
    "CrashCheckReport",
    "LintFinding",
    "LintReport",
]

_StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
"""A path: str, bytes or os.PathLike, as Python's os functions take it."""

_Size = Union[int, str]
"""Bytes: a non-negative int, or a size string such as "16M" or "1MiB"."""

_FileArg = Union[int, IO[Any], _StrPath]
"""An open descriptor (int, or an object with fileno()) or a path."""

_Buffer = Union[bytes, bytearray, memoryview]

@final
class Note:
    """Something a report says that qualifies its figures or outcome: `kind`
    to match on (`"few-commits"`), `text` for people (`str(note)`)."""

    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...

@final
class Reason:
    """Why something could not be done or measured: `kind`
    (`"unsupported"`, `"no-space"`, ...), `errno` where a system call
    failed, `text` for people (`str(reason)`)."""

    @property
    def kind(self) -> str: ...
    @property
    def errno(self) -> Optional[int]: ...
    @property
    def text(self) -> str: ...

@final
class Fallback:
    """A strategy tried and abandoned for the next one."""

    @property
    def strategy(self) -> str: ...
    @property
    def error(self) -> Reason: ...
    @property
    def errno(self) -> int: ...

@final
class Capability:
    """Whether one operation works on a filesystem (measured)."""

    @property
    def supported(self) -> bool: ...
    @property
    def errno(self) -> Optional[int]: ...
    @property
    def detail(self) -> Optional[str]: ...

@final
class Plan:
    """The policy's ladder of strategies for one intent, and why."""

    @property
    def intent(self) -> str: ...
    @property
    def ladder(self) -> List[str]: ...
    @property
    def reason(self) -> str: ...
    @property
    def saved_probe(self) -> Optional[str]: ...

@final
class FsInfo:
    """What fspace knows about the filesystem holding a path."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def filesystem(self) -> str: ...
    @property
    def magic(self) -> int: ...
    @property
    def fs_type(self) -> Optional[str]: ...
    @property
    def fuse_subtype(self) -> Optional[str]: ...
    @property
    def mount_point(self) -> Optional[str]: ...
    @property
    def source(self) -> Optional[str]: ...
    @property
    def device(self) -> int: ...
    @property
    def mount_options(self) -> Optional[str]: ...
    @property
    def block_size(self) -> int: ...
    @property
    def total_bytes(self) -> int: ...
    @property
    def free_bytes(self) -> int: ...
    @property
    def free_bytes_root(self) -> int: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def copy_on_write(self) -> bool: ...
    @property
    def network(self) -> bool: ...
    @property
    def st_blocks_measures_allocation(self) -> bool: ...
    @property
    def allocation_unit(self) -> Optional[int]: ...
    @property
    def capabilities(self) -> Dict[str, Capability]: ...
    @property
    def capabilities_error(self) -> Optional[Reason]: ...
    @property
    def policy(self) -> List[Plan]: ...
    def to_dict(self) -> Dict[str, Any]:
        """The document of `fspace info --json`."""
    def to_json(self) -> str:
        """The same document as text."""

@final
class GrowReport:
    """What a growth did."""

    @property
    def path(self) -> str: ...
    @property
    def filesystem(self) -> str: ...
    @property
    def intent(self) -> str: ...
    @property
    def requested(self) -> Optional[str]: ...
    @property
    def strategy(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def saved_probe(self) -> Optional[str]: ...
    @property
    def fallbacks(self) -> List[Fallback]: ...
    @property
    def notes(self) -> List[Note]: ...
    @property
    def old_len(self) -> int: ...
    @property
    def new_len(self) -> int: ...
    @property
    def target_len(self) -> int: ...
    @property
    def bytes_written(self) -> int: ...
    @property
    def syscalls(self) -> int: ...
    @property
    def write_syscalls(self) -> int: ...
    @property
    def synced(self) -> bool: ...
    @property
    def created(self) -> bool: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def untorn(self) -> Optional["UntornReady"]: ...
    @property
    def nocow(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]:
        """The document of `fspace grow --json`."""
    def to_json(self) -> str: ...

@final
class RangeReport:
    """What allocate() did."""

    @property
    def path(self) -> str: ...
    @property
    def offset(self) -> int: ...
    @property
    def length(self) -> int: ...
    @property
    def strategy(self) -> str: ...
    @property
    def fallbacks(self) -> List[Fallback]: ...
    @property
    def old_len(self) -> int: ...
    @property
    def new_len(self) -> int: ...
    @property
    def holes_filled(self) -> int: ...
    @property
    def bytes_written(self) -> int: ...
    @property
    def holes_known(self) -> bool: ...
    @property
    def syscalls(self) -> int: ...
    @property
    def write_syscalls(self) -> int: ...
    @property
    def elapsed(self) -> float: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...

@final
class CopyFallback:
    """A copy method tried or ruled out, and why."""

    @property
    def method(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def errno(self) -> Optional[int]: ...

@final
class CopyReport:
    """What a copy did."""

    @property
    def src(self) -> str: ...
    @property
    def dst(self) -> str: ...
    @property
    def len(self) -> int: ...
    @property
    def method(self) -> str: ...
    @property
    def fallbacks(self) -> List[CopyFallback]: ...
    @property
    def sparse(self) -> str: ...
    @property
    def reflink(self) -> str: ...
    @property
    def bytes_cloned(self) -> int: ...
    @property
    def bytes_offloaded(self) -> int: ...
    @property
    def bytes_copied(self) -> int: ...
    @property
    def data_extents(self) -> Optional[int]: ...
    @property
    def holes(self) -> Optional[int]: ...
    @property
    def hole_bytes(self) -> Optional[int]: ...
    @property
    def zero_bytes_holed(self) -> int: ...
    @property
    def bytes_kept_allocated(self) -> int: ...
    @property
    def src_allocated(self) -> Optional[int]: ...
    @property
    def dst_allocated(self) -> Optional[int]: ...
    @property
    def syscalls(self) -> int: ...
    @property
    def write_syscalls(self) -> int: ...
    @property
    def replaced(self) -> bool: ...
    @property
    def preserved(self) -> bool: ...
    @property
    def synced(self) -> bool: ...
    @property
    def notes(self) -> List[Note]: ...
    @property
    def elapsed(self) -> float: ...
    def to_dict(self) -> Dict[str, Any]:
        """The document of `fspace copy --json`."""
    def to_json(self) -> str: ...

@final
class DigReport:
    """What dig() did."""

    @property
    def path(self) -> str: ...
    @property
    def len(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    @property
    def allocation_unit(self) -> Optional[int]: ...
    @property
    def bytes_scanned(self) -> int: ...
    @property
    def holes_punched(self) -> int: ...
    @property
    def bytes_punched(self) -> int: ...
    @property
    def zero_bytes_kept(self) -> int: ...
    @property
    def allocated_before(self) -> Optional[int]: ...
    @property
    def allocated_after(self) -> Optional[int]: ...
    @property
    def bytes_freed(self) -> Optional[int]: ...
    @property
    def syscalls(self) -> int: ...
    @property
    def synced(self) -> bool: ...
    @property
    def elapsed(self) -> float: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...

@final
class Extent:
    """One range of a file in one state."""

    @property
    def offset(self) -> int: ...
    @property
    def length(self) -> int: ...
    @property
    def state(self) -> str: ...

@final
class MapSummary:
    """Byte totals of an extent map (None: cannot be told here)."""

    @property
    def size(self) -> int: ...
    @property
    def allocated(self) -> Optional[int]: ...
    @property
    def written(self) -> Optional[int]: ...
    @property
    def unwritten(self) -> Optional[int]: ...
    @property
    def holes(self) -> Optional[int]: ...
    @property
    def shared(self) -> Optional[int]: ...
    @property
    def delalloc(self) -> Optional[int]: ...
    @property
    def extents(self) -> int: ...
    @property
    def beyond_eof(self) -> Optional[int]: ...

@final
class ExtentMap:
    """A file's extent map."""

    @property
    def path(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def note(self) -> Optional[Note]: ...
    @property
    def extents(self) -> List[Extent]: ...
    @property
    def summary(self) -> MapSummary: ...
    def to_dict(self) -> Dict[str, Any]:
        """The document of `fspace map --json`."""
    def to_json(self) -> str: ...

@final
class Recommendation:
    """The probe's advice for one intent."""

    @property
    def intent(self) -> str: ...
    @property
    def strategy(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def measured(self) -> bool: ...
    @property
    def too_noisy(self) -> bool: ...
    @property
    def sync_method(self) -> Optional[str]: ...
    @property
    def recycle(self) -> Optional[bool]: ...

@final
class ProbeResult:
    """What a probe measured and concluded."""

    @property
    def directory(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def filesystem(self) -> str: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def recommendations(self) -> List[Recommendation]: ...
    @property
    def notes(self) -> List[Note]: ...
    def to_dict(self) -> Dict[str, Any]:
        """The whole document of `fspace probe --json` (docs/probe-json.md)."""
    def to_json(self) -> str: ...

@final
class Record:
    """A record read back from the log."""

    @property
    def lsn(self) -> int: ...
    @property
    def data(self) -> bytes: ...
    @property
    def segment(self) -> int: ...
    @property
    def offset(self) -> int: ...

@final
class ReleaseReport:
    """What Wal.release_before() did."""

    @property
    def recycled(self) -> int: ...
    @property
    def deleted(self) -> int: ...

@final
class WalRecords(Iterator[Record]):
    """The records of a log from an LSN on (Wal.read, WalView.read)."""

    def __iter__(self) -> "WalRecords": ...
    def __next__(self) -> Record: ...

@final
class Wal:
    """A durable segment log in a directory."""

    def __new__(
        cls,
        dir: _StrPath,
        *,
        segment_size: Optional[_Size] = None,
        sync_method: str = "auto",
        prepare: str = "auto",
        use_saved: bool = True,
        direct_io: Optional[bool] = None,
    ) -> "Wal": ...
    @property
    def dir(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def durable_lsn(self) -> int: ...
    @property
    def next_lsn(self) -> int: ...
    @property
    def max_record(self) -> int: ...
    def commit(self, data: _Buffer) -> int:
        """Appends a record; returns its LSN once it is durable."""
    def commit_many(self, records: Iterable[_Buffer]) -> List[int]:
        """Appends records in order, one sync for all; returns their LSNs."""
    def append(self, data: _Buffer) -> int:
        """Appends a record without waiting; durable after a sync."""
    def sync(self) -> int:
        """Makes everything appended durable; returns the last LSN covered."""
    def sync_to(self, lsn: int) -> None:
        """Makes every record up to lsn durable."""
    def read(self, from_lsn: int = 0) -> WalRecords:
        """Iterates the durable records from from_lsn on (0: the oldest)."""
    def release_before(self, lsn: int) -> ReleaseReport:
        """Releases whole segments whose records all come before lsn."""
    def recovery(self) -> Dict[str, Any]:
        """What opening found and did."""
    def stats(self) -> Dict[str, Any]:
        """Counters of what the log has done, and how records go out."""
    def close(self) -> None:
        """Syncs what was appended and closes the log."""
    def __enter__(self) -> "Wal": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

@final
class WalView:
    """A read-only look at a log: never writes, verifies every record."""

    def __new__(cls, dir: _StrPath) -> "WalView": ...
    @staticmethod
    def open_to_damage(dir: _StrPath) -> "WalView":
        """As WalView(dir), but reads up to damage before the end."""
    @property
    def dir(self) -> str: ...
    @property
    def log_id(self) -> bytes: ...
    @property
    def first_lsn(self) -> int: ...
    @property
    def next_lsn(self) -> int: ...
    @property
    def prepared(self) -> List[str]: ...
    @property
    def pool(self) -> List[str]: ...
    def segments(self) -> List[Dict[str, Any]]:
        """The live segments, oldest first."""
    def recovery(self) -> Dict[str, Any]:
        """What the look found (read_only is True)."""
    def damage(self) -> Optional[Dict[str, Any]]:
        """Where reading stopped before the end, if it did."""
    def read(self, from_lsn: int = 0) -> WalRecords:
        """Iterates the records from from_lsn on (0: the oldest)."""

@final
class UntornTrial:
    """One RWF_ATOMIC write tried on a scratch file."""

    @property
    def size(self) -> int: ...
    @property
    def direct(self) -> bool: ...
    @property
    def ok(self) -> bool: ...
    @property
    def errno(self) -> Optional[int]: ...
    @property
    def error(self) -> Optional[Reason]: ...

@final
class UntornDevice:
    """The untorn-write limits of one block device (sysfs atomic_write_*)."""

    @property
    def name(self) -> str: ...
    @property
    def unit_min_bytes(self) -> Optional[int]: ...
    @property
    def unit_max_bytes(self) -> Optional[int]: ...
    @property
    def max_bytes(self) -> Optional[int]: ...
    @property
    def boundary_bytes(self) -> Optional[int]: ...

@final
class UntornFacts:
    """What fspace knows about untorn writes on a file or a filesystem."""

    @property
    def path(self) -> str: ...
    @property
    def scratch(self) -> bool: ...
    @property
    def filesystem(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def error(self) -> Optional[Reason]: ...
    @property
    def unit_min(self) -> Optional[int]: ...
    @property
    def unit_max(self) -> Optional[int]: ...
    @property
    def unit_max_opt(self) -> Optional[int]: ...
    @property
    def segments_max(self) -> Optional[int]: ...
    @property
    def source(self) -> str: ...
    @property
    def hardware_max(self) -> int: ...
    @property
    def devices(self) -> List[UntornDevice]: ...
    @property
    def devices_error(self) -> Optional[Reason]: ...
    @property
    def block_size(self) -> int: ...
    @property
    def allocation_unit(self) -> Optional[int]: ...
    @property
    def reflink(self) -> Optional[bool]: ...
    @property
    def extent_size_hint(self) -> Optional[int]: ...
    @property
    def direct_io_align(self) -> Optional[int]: ...
    @property
    def tried(self) -> List[UntornTrial]: ...
    def to_dict(self) -> Dict[str, Any]:
        """All the facts as JSON: limits with their state, source, devices, geometry, trials."""
    def to_json(self) -> str: ...

@final
class UntornAnswer:
    """Whether a page write of one size through one I/O path is untorn, and why."""

    @property
    def page_size(self) -> int: ...
    @property
    def io(self) -> str: ...
    @property
    def untorn(self) -> bool: ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def limit(self) -> Optional[str]: ...
    @property
    def confirmed(self) -> Optional[bool]: ...
    @property
    def reason(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...

@final
class BadUnit:
    """One unit that fails the layout check."""

    @property
    def offset(self) -> int: ...
    @property
    def fault(self) -> str: ...
    @property
    def physical(self) -> Optional[int]: ...

@final
class UntornLayout:
    """Whether a range is laid out for the hardware path of untorn writes."""

    @property
    def unit(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def units(self) -> int: ...
    @property
    def ok(self) -> int: ...
    @property
    def faults(self) -> Dict[str, int]: ...
    @property
    def first_bad(self) -> List[BadUnit]: ...
    @property
    def passes(self) -> bool: ...
    @property
    def words(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...

@final
class UntornReady:
    """What a growth with untorn_unit did beyond the growth itself."""

    @property
    def unit(self) -> int: ...
    @property
    def state(self) -> str: ...
    @property
    def collapses(self) -> int: ...
    @property
    def extent_size_hint(self) -> Optional[int]: ...
    @property
    def hint_note(self) -> Optional[Note]: ...
    @property
    def layout(self) -> Optional[UntornLayout]: ...
    @property
    def layout_error(self) -> Optional[Reason]: ...

def info(path: _StrPath) -> FsInfo:
    """Describes the filesystem holding path, with the policy per intent."""

def grow(
    path: _StrPath,
    size: _Size,
    intent: str = "bulk",
    strategy: str = "auto",
    *,
    fallback: bool = True,
    create: bool = False,
    sync: bool = False,
    check_free_space: bool = True,
    untorn_unit: Optional[_Size] = None,
) -> GrowReport:
    """Grows the file to size bytes the right way for its filesystem."""

def allocate(file: _FileArg, offset: int, length: int) -> RangeReport:
    """posix_fallocate without glibc's one-byte-per-block emulation."""

def copy(
    src: _StrPath,
    dst: _StrPath,
    sparse: str = "auto",
    reflink: str = "auto",
    *,
    force: bool = False,
    preserve: bool = False,
    sync: bool = False,
    keep_allocation: bool = False,
) -> CopyReport:
    """Copies src to dst without losing holes."""

def dig(path: _StrPath, *, sync: bool = False) -> DigReport:
    """Punches holes over zero blocks of the file, in place."""

def map(path: _StrPath, *, sync: bool = False) -> ExtentMap:
    """Maps the file's extents."""

def probe(dir: _StrPath, quick: bool = True, *, full: bool = False) -> ProbeResult:
    """Measures the filesystem holding dir and recommends a policy."""

def untorn_facts(path: _StrPath) -> UntornFacts:
    """The untorn-write facts of an existing file (nothing is written)."""

def untorn_facts_of_fs(dir: _StrPath) -> UntornFacts:
    """The untorn-write facts of a filesystem, measured on a scratch file."""

def untorn_answer(
    dir: Union[_StrPath, UntornFacts], page_size: _Size, io: str = "direct"
) -> UntornAnswer:
    """Whether a write of page_size bytes through io ("direct", "buffered") is untorn."""

def write_untorn(
    file: Union[int, IO[Any]], buf: _Buffer, offset: int, dsync: bool = False
) -> None:
    """One untorn write (pwritev2 RWF_ATOMIC) to a descriptor opened with O_DIRECT."""

def check_untorn_layout(
    file: _FileArg,
    unit: _Size,
    offset: Optional[int] = None,
    length: Optional[int] = None,
) -> UntornLayout:
    """Whether each unit of the range lies in one written, aligned extent."""

@final
class TornWrite:
    """A write that persisted only in part."""

    @property
    def op(self) -> int: ...
    @property
    def persisted(self) -> Tuple[int, int]: ...
    @property
    def range(self) -> Tuple[int, int]: ...
    @property
    def size_without_data(self) -> bool: ...

@final
class CrashFailure:
    """A crash state the checker rejected, with its story."""

    @property
    def kind(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def models(self) -> List[str]: ...
    @property
    def after(self) -> int: ...
    @property
    def point(self) -> str: ...
    @property
    def persisted(self) -> List[int]: ...
    @property
    def lost(self) -> List[int]: ...
    @property
    def torn(self) -> Optional[TornWrite]: ...
    @property
    def exit_status(self) -> Optional[int]: ...
    @property
    def signal(self) -> Optional[int]: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def output(self) -> str: ...
    @property
    def same_states(self) -> int: ...
    @property
    def state_dir(self) -> Optional[str]: ...
    @property
    def story(self) -> List[str]: ...

@final
class CrashCheckReport:
    """What crashtest_check found."""

    @property
    def trace(self) -> str: ...
    @property
    def program(self) -> List[str]: ...
    @property
    def passed(self) -> bool: ...
    @property
    def models(self) -> List[str]: ...
    @property
    def ops(self) -> int: ...
    @property
    def points(self) -> int: ...
    @property
    def states(self) -> int: ...
    @property
    def distinct(self) -> int: ...
    @property
    def failed_states(self) -> int: ...
    @property
    def inconsistent_states(self) -> int: ...
    @property
    def lost_states(self) -> int: ...
    @property
    def failed_distinct(self) -> int: ...
    @property
    def failures(self) -> List[CrashFailure]: ...
    @property
    def seconds(self) -> float: ...
    @property
    def ms_per_state(self) -> float: ...
    @property
    def limits(self) -> List[int]: ...
    @property
    def work_dir(self) -> Optional[str]: ...
    def to_dict(self) -> Dict[str, Any]:
        """The document of `fspace crashtest check --json` (fspace-crashtest-check/1)."""
    def to_json(self) -> str: ...

@final
class LintFinding:
    """A rule the trace breaks."""

    @property
    def rule(self) -> str: ...
    @property
    def ops(self) -> List[int]: ...
    @property
    def text(self) -> str: ...
    @property
    def source(self) -> str: ...

@final
class LintReport:
    """What crashtest_lint found."""

    @property
    def trace(self) -> str: ...
    @property
    def findings(self) -> List[LintFinding]: ...
    @property
    def limits(self) -> List[int]: ...
    def to_dict(self) -> Dict[str, Any]:
        """The document of `fspace crashtest lint --json` (fspace-crashtest-lint/1)."""
    def to_json(self) -> str: ...

def crashtest_check(
    trace: _StrPath,
    checker: Union[List[str], List[bytes], List[_StrPath], Tuple[_StrPath, ...]],
    *,
    models: Optional[List[str]] = None,
    states_per_point: int = 64,
    between: int = 1,
    jobs: Optional[int] = None,
    timeout: float = 60.0,
    keep: bool = False,
    work_dir: Optional[_StrPath] = None,
    max_failures: int = 20,
    loss_status: Optional[int] = 3,
) -> CrashCheckReport:
    """Runs checker in every distinct crash state of a recorded trace."""

def crashtest_lint(trace: _StrPath) -> LintReport:
    """The static rules the recorded trace breaks."""
