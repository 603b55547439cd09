//! The library's reports as frozen Python objects: one attribute per field
//! (paths as `str`, strategies and states by their names, durations in
//! seconds), a `__repr__` listing them, and for the top-level reports
//! `to_dict()`, the same JSON document the CLI's `--json` prints.

use pyo3::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// Defines a frozen report class: its fields readable from Python, a
/// `__repr__` naming each (`GrowReport(path='f', strategy='allocate', ...)`)
/// and, with `json`, a hidden JSON document behind `to_dict()`; fields in
/// `hidden { ... }` are kept for the module's own use, not shown.
macro_rules! report {
    ($(#[$m:meta])* $name:ident $(+ $json:ident)? { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }
     $(hidden { $($(#[$hm:meta])* $hidden:ident : $hty:ty),* $(,)? })?) => {
        $(#[$m])*
        #[pyclass(frozen, module = "fspace")]
        #[derive(Clone, Debug)]
        pub(crate) struct $name {
            $($(#[$fm])* #[pyo3(get)] pub(crate) $field: $ty,)*
            $(pub(crate) $json: String,)?
            $($($(#[$hm])* pub(crate) $hidden: $hty,)*)?
        }

        #[pymethods]
        impl $name {
            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                let mut parts: Vec<String> = Vec::new();
                $(parts.push(format!(
                    "{}={}",
                    stringify!($field),
                    slf.getattr(stringify!($field))?.repr()?
                ));)*
                Ok(format!("{}({})", stringify!($name), parts.join(", ")))
            }

            $(
            /// Returns the report as the JSON document of the CLI's
            /// `--json` (a dict of plain values; the field names of
            /// docs/cli.md and docs/probe-json.md).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                py.import("json")?.call_method1("loads", (&self.$json,))
            }

            /// Returns the report as that JSON document, as text.
            fn to_json(&self) -> String {
                self.$json.clone()
            }
            )?
        }
    };
}

/// Serializes a library report for `to_dict()`; a failure (it has none:
/// every report is plain data) leaves `{"error": ...}` rather than a panic.
fn json_of<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot serialize the report: {e}") }).to_string()
    })
}

fn os(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

fn notes(n: &[fspace::Note]) -> Vec<String> {
    n.iter().map(|n| n.to_string()).collect()
}

report! {
    /// A strategy tried and abandoned for the next one.
    Fallback {
        /// The strategy tried (`"allocate"`, ...).
        strategy: String,
        /// Why it was abandoned: the failed call and its error.
        error: String,
        /// Its errno.
        errno: i32,
    }
}

fn fallbacks(f: &[fspace::Fallback]) -> Vec<Fallback> {
    f.iter()
        .map(|f| Fallback {
            strategy: f.strategy.name().into(),
            error: f.error.clone(),
            errno: f.errno,
        })
        .collect()
}

report! {
    /// Whether one operation works on a filesystem, measured on a scratch
    /// file there.
    Capability {
        /// True if and only if it succeeded and behaved as specified.
        supported: bool,
        /// The errno it failed with, if it failed.
        errno: Option<i32>,
        /// The failure or caveat in words.
        detail: Option<String>,
    }
}

report! {
    /// The policy's answer for one intent: the ladder of strategies tried
    /// in order, and why.
    Plan {
        /// `"bulk"`, `"log"` or `"sparse"`.
        intent: String,
        /// Strategy names, first choice first.
        ladder: Vec<String>,
        /// Why this ladder.
        reason: String,
        /// The saved probe measurement followed, if any.
        saved_probe: Option<OsString>,
    }
}

report! {
    /// What fspace knows about the filesystem holding a path
    /// (`fspace.info`).
    FsInfo + json {
        /// The path asked about.
        path: OsString,
        /// The family from the statfs magic (`"ext4"`, `"xfs"`, `"fuse"`).
        kind: String,
        /// The name to show: the mount's type when known (`"ext3"`,
        /// `"fuse.sshfs"`), else the kind.
        filesystem: String,
        /// The statfs magic.
        magic: u64,
        /// The mount's type from mountinfo, when found.
        fs_type: Option<String>,
        /// The FUSE subtype (`"sshfs"`), when visible.
        fuse_subtype: Option<String>,
        /// The mount point, when found.
        mount_point: Option<OsString>,
        /// The mounted device or source, when found.
        source: Option<String>,
        /// `st_dev` of the path.
        device: u64,
        /// The mount's and the superblock's options, when found.
        mount_options: Option<String>,
        /// `f_bsize`: preferred I/O size (unreliable on network filesystems).
        block_size: u64,
        /// Total bytes.
        total_bytes: u64,
        /// Bytes available to unprivileged users.
        free_bytes: u64,
        /// Bytes available to root.
        free_bytes_root: u64,
        /// Whether the mount is read-only.
        read_only: bool,
        /// Whether overwrites allocate new blocks (btrfs, zfs, bcachefs).
        copy_on_write: bool,
        /// Whether the data goes over a network protocol.
        network: bool,
        /// Whether `st_blocks` measures allocation here (false on FUSE and
        /// network filesystems, where allocation figures are `None`).
        st_blocks_measures_allocation: bool,
        /// The allocation unit in bytes, when known.
        allocation_unit: Option<u64>,
        /// The capabilities measured here, by name (`"fallocate"`,
        /// `"keep-size"`, `"punch-hole"`, `"zero-range"`, `"write-zeroes"`,
        /// `"seek-hole"`, `"fiemap"`, `"ficlone"`); empty when they could
        /// not be measured (`capabilities_error` says why).
        capabilities: BTreeMap<String, Capability>,
        /// Why the capabilities could not be measured, if so.
        capabilities_error: Option<String>,
        /// The policy's answer per intent (bulk, log, sparse).
        policy: Vec<Plan>,
    }
}

/// The policy's answer for `intent` here, as `fspace info` gives it (saved
/// measurements from the state directory).
fn plan_of(info: &fspace::FsInfo, intent: fspace::Intent) -> fspace::Plan {
    fspace::plan(info, intent, &fspace::StrategyChoice::auto_from_state_dir())
}

fn plan_reason(p: &fspace::Plan) -> String {
    if p.notes.is_empty() {
        p.reason.clone()
    } else {
        let n: Vec<String> = notes(&p.notes);
        format!("{} ({})", p.reason, n.join("; "))
    }
}

const INTENTS: [fspace::Intent; 3] = [
    fspace::Intent::Bulk,
    fspace::Intent::Log,
    fspace::Intent::Sparse,
];

impl FsInfo {
    pub(crate) fn from(i: &fspace::FsInfo) -> Self {
        let plans: Vec<(fspace::Intent, fspace::Plan)> = INTENTS
            .iter()
            .map(|&intent| (intent, plan_of(i, intent)))
            .collect();
        let policy: Vec<Plan> = plans
            .iter()
            .map(|(intent, p)| Plan {
                intent: intent.name().into(),
                ladder: p.ladder.iter().map(|s| s.name().to_string()).collect(),
                reason: plan_reason(p),
                saved_probe: p.saved.as_deref().map(os),
            })
            .collect();
        let (capabilities, capabilities_error) = match &i.capabilities {
            Ok(c) => (
                c.named()
                    .into_iter()
                    .map(|(name, c)| {
                        (
                            name.to_string(),
                            Capability {
                                supported: c.supported,
                                errno: c.errno,
                                detail: c.detail.clone(),
                            },
                        )
                    })
                    .collect(),
                None,
            ),
            Err(why) => (BTreeMap::new(), Some(why.clone())),
        };
        // The document of `fspace info --json`: the facts, then the policy.
        let mut doc = serde_json::to_value(i).unwrap_or_default();
        if let Some(m) = doc.as_object_mut() {
            let entries: Vec<serde_json::Value> = plans
                .iter()
                .map(|(intent, p)| {
                    serde_json::json!({
                        "intent": intent,
                        "ladder": p.ladder,
                        "reason": plan_reason(p),
                        "saved_probe": p.saved.as_ref().map(|s| s.to_string_lossy().into_owned()),
                    })
                })
                .collect();
            m.insert("policy".into(), serde_json::Value::Array(entries));
        }
        FsInfo {
            path: os(&i.path),
            kind: i.kind.name(),
            filesystem: i.display_name(),
            magic: i.magic,
            fs_type: i.fs_type.clone(),
            fuse_subtype: i.fuse_subtype.clone(),
            mount_point: i.mount_point.as_deref().map(os),
            source: i.source.clone(),
            device: i.device,
            mount_options: i.mount_options.clone(),
            block_size: i.block_size,
            total_bytes: i.total_bytes,
            free_bytes: i.free_bytes,
            free_bytes_root: i.free_bytes_root,
            read_only: i.read_only,
            copy_on_write: i.copy_on_write,
            network: i.network,
            st_blocks_measures_allocation: i.st_blocks_measures_allocation,
            allocation_unit: i.allocation_unit.as_ref().map(|u| u.bytes),
            capabilities,
            capabilities_error,
            policy,
            json: doc.to_string(),
        }
    }
}

report! {
    /// What a growth did (`fspace.grow`).
    GrowReport + json {
        /// The file grown.
        path: OsString,
        /// The filesystem's name.
        filesystem: String,
        /// The intent given.
        intent: String,
        /// The strategy asked for; `None` means `"auto"`.
        requested: Option<String>,
        /// The strategy that did the work.
        strategy: String,
        /// Why that ladder was chosen.
        reason: String,
        /// The saved probe measurement `auto` followed, if any.
        saved_probe: Option<OsString>,
        /// Strategies tried before it, with their errors.
        fallbacks: Vec<Fallback>,
        /// Other things worth knowing, in words.
        notes: Vec<String>,
        /// Length before.
        old_len: u64,
        /// Length after (unchanged by `reserve`).
        new_len: u64,
        /// The length asked for.
        target_len: u64,
        /// Bytes written (zero-fill only).
        bytes_written: u64,
        /// Syscalls the growth issued.
        syscalls: u64,
        /// Of those, the write-type ones.
        write_syscalls: u64,
        /// Whether the result was made durable.
        synced: bool,
        /// Whether the file was created.
        created: bool,
        /// Wall time in seconds.
        elapsed: f64,
        /// With `untorn_unit`: the extent-size hint and the layout of
        /// every unit afterwards; `None` otherwise.
        untorn: Option<UntornReady>,
        /// Whether the file is no-copy-on-write for this growth (log
        /// space on btrfs: made NOCOW while empty, then zero-filled).
        nocow: bool,
    }
}

impl GrowReport {
    pub(crate) fn from(r: &fspace::GrowReport) -> Self {
        GrowReport {
            path: os(&r.path),
            filesystem: r.filesystem.clone(),
            intent: r.intent.name().into(),
            requested: r.requested.map(|s| s.name().into()),
            strategy: r.strategy.name().into(),
            reason: r.reason.clone(),
            saved_probe: r.saved_probe.as_deref().map(os),
            fallbacks: fallbacks(&r.fallbacks),
            notes: notes(&r.notes),
            old_len: r.old_len,
            new_len: r.new_len,
            target_len: r.target_len,
            bytes_written: r.bytes_written,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            synced: r.synced,
            created: r.created,
            elapsed: secs(r.elapsed),
            untorn: r.untorn.as_ref().map(UntornReady::from),
            nocow: r.nocow,
            json: json_of(r),
        }
    }
}

report! {
    /// What `fspace.allocate` did.
    RangeReport + json {
        /// The file, as named (a descriptor by its `/proc/self/fd` link).
        path: OsString,
        /// The range's first byte.
        offset: u64,
        /// The range's length.
        length: u64,
        /// `"allocate"` (one fallocate) or `"zero-fill"` (zero writes of
        /// the holes and of the part beyond EOF).
        strategy: String,
        /// `allocate`, with its error, when the fill was used instead.
        fallbacks: Vec<Fallback>,
        /// Length before.
        old_len: u64,
        /// Length after: `max(old_len, offset + length)`.
        new_len: u64,
        /// Bytes of holes inside the old length that were filled.
        holes_filled: u64,
        /// Zero bytes written.
        bytes_written: u64,
        /// False when `SEEK_HOLE` could not show the holes (sshfs): the
        /// blocks that read as zeros were written instead.
        holes_known: bool,
        /// Syscalls issued.
        syscalls: u64,
        /// Of which change the file.
        write_syscalls: u64,
        /// Wall time in seconds.
        elapsed: f64,
    }
}

impl RangeReport {
    pub(crate) fn from(r: &fspace::RangeReport) -> Self {
        RangeReport {
            path: os(&r.path),
            offset: r.range.start,
            length: r.range.end - r.range.start,
            strategy: r.strategy.name().into(),
            fallbacks: fallbacks(&r.fallbacks),
            old_len: r.old_len,
            new_len: r.new_len,
            holes_filled: r.holes_filled,
            bytes_written: r.bytes_written,
            holes_known: r.holes_known,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            elapsed: secs(r.elapsed),
            json: json_of(r),
        }
    }
}

report! {
    /// A copy method tried or ruled out before the one that did the work.
    CopyFallback {
        /// The method (`"clone"`, `"copy_file_range"`, ...).
        method: String,
        /// Why it was not used.
        reason: String,
        /// The errno of the failed call, if one failed.
        errno: Option<i32>,
    }
}

report! {
    /// What a copy did (`fspace.copy`).
    CopyReport + json {
        /// The source.
        src: OsString,
        /// The file written (inside `dst` when `dst` is a directory).
        dst: OsString,
        /// Bytes in the copy.
        len: u64,
        /// How the data moved: `"clone"`, `"copy_file_range"`,
        /// `"read_write"`, `"stream"`, `"device"` or `"none"`.
        method: String,
        /// Methods tried or ruled out before it, and why.
        fallbacks: Vec<CopyFallback>,
        /// The sparse mode used.
        sparse: String,
        /// The reflink mode used.
        reflink: String,
        /// Bytes shared with the source (FICLONE).
        bytes_cloned: u64,
        /// Bytes moved by `copy_file_range`.
        bytes_offloaded: u64,
        /// Bytes written.
        bytes_copied: u64,
        /// Data extents of the source visited; `None` after a clone.
        data_extents: Option<u64>,
        /// Hole ranges in the copy; `None` after a clone.
        holes: Option<u64>,
        /// Bytes in those holes; `None` after a clone.
        hole_bytes: Option<u64>,
        /// Of those, zeros found inside the source's data.
        zero_bytes_holed: u64,
        /// Bytes of unwritten extents kept unwritten (`keep_allocation`).
        bytes_kept_allocated: u64,
        /// Bytes the source has allocated; `None` where `st_blocks` does
        /// not measure allocation (FUSE, network filesystems).
        src_allocated: Option<u64>,
        /// Bytes the copy has allocated; `None` as above.
        dst_allocated: Option<u64>,
        /// Syscalls issued.
        syscalls: u64,
        /// Of those, the write-type ones.
        write_syscalls: u64,
        /// Whether an existing destination was replaced.
        replaced: bool,
        /// Whether mode, owner and times were copied.
        preserved: bool,
        /// Whether the copy was made durable.
        synced: bool,
        /// Other things worth knowing, in words.
        notes: Vec<String>,
        /// Wall time in seconds.
        elapsed: f64,
    }
}

impl CopyReport {
    pub(crate) fn from(r: &fspace::CopyReport) -> Self {
        CopyReport {
            src: os(&r.src),
            dst: os(&r.dst),
            len: r.len,
            method: r.method.name().into(),
            fallbacks: r
                .fallbacks
                .iter()
                .map(|f| CopyFallback {
                    method: f.method.name().into(),
                    reason: f.reason.clone(),
                    errno: f.errno,
                })
                .collect(),
            sparse: r.sparse.name().into(),
            reflink: r.reflink.name().into(),
            bytes_cloned: r.bytes_cloned,
            bytes_offloaded: r.bytes_offloaded,
            bytes_copied: r.bytes_copied,
            data_extents: r.data_extents,
            holes: r.holes,
            hole_bytes: r.hole_bytes,
            zero_bytes_holed: r.zero_bytes_holed,
            bytes_kept_allocated: r.bytes_kept_allocated,
            src_allocated: r.src_allocated,
            dst_allocated: r.dst_allocated,
            syscalls: r.syscalls,
            write_syscalls: r.write_syscalls,
            replaced: r.replaced,
            preserved: r.preserved,
            synced: r.synced,
            notes: notes(&r.notes),
            elapsed: secs(r.elapsed),
            json: json_of(r),
        }
    }
}

report! {
    /// What `fspace.dig` did.
    DigReport + json {
        /// The file.
        path: OsString,
        /// Its length (unchanged).
        len: u64,
        /// The block size zero runs were looked for in.
        block_size: u64,
        /// The allocation unit punches were aligned to, when known.
        allocation_unit: Option<u64>,
        /// Data bytes read and scanned.
        bytes_scanned: u64,
        /// Zero runs punched.
        holes_punched: u64,
        /// Bytes in the ranges punched.
        bytes_punched: u64,
        /// Zero bytes left because they do not fill an allocation unit.
        zero_bytes_kept: u64,
        /// Bytes allocated before; `None` where unknown (FUSE, network).
        allocated_before: Option<u64>,
        /// Bytes allocated after; `None` where unknown.
        allocated_after: Option<u64>,
        /// Bytes freed, measured; `None` where unknown.
        bytes_freed: Option<u64>,
        /// Syscalls issued.
        syscalls: u64,
        /// Whether the result was made durable.
        synced: bool,
        /// Wall time in seconds.
        elapsed: f64,
    }
}

impl DigReport {
    pub(crate) fn from(r: &fspace::DigReport) -> Self {
        DigReport {
            path: os(&r.path),
            len: r.len,
            block_size: r.block_size,
            allocation_unit: r.allocation_unit.as_ref().map(|u| u.bytes),
            bytes_scanned: r.bytes_scanned,
            holes_punched: r.holes_punched,
            bytes_punched: r.bytes_punched,
            zero_bytes_kept: r.zero_bytes_kept,
            allocated_before: r.allocated_before,
            allocated_after: r.allocated_after,
            bytes_freed: r.bytes_freed,
            syscalls: r.syscalls,
            synced: r.synced,
            elapsed: secs(r.elapsed),
            json: json_of(r),
        }
    }
}

report! {
    /// One range of a file in one state.
    Extent {
        /// Byte offset in the file.
        offset: u64,
        /// Length in bytes.
        length: u64,
        /// `"hole"`, `"unwritten"`, `"written"`, `"shared"`, `"delalloc"`,
        /// `"inline"`, `"data"` (written or unwritten: SEEK_DATA cannot
        /// tell) or `"other"`.
        state: String,
    }
}

report! {
    /// Byte totals of an extent map; `None` where the filesystem cannot
    /// tell.
    MapSummary {
        /// File length.
        size: u64,
        /// Bytes backed by blocks or dirty data.
        allocated: Option<u64>,
        /// Written bytes (shared and inline included).
        written: Option<u64>,
        /// Unwritten bytes.
        unwritten: Option<u64>,
        /// Bytes in holes.
        holes: Option<u64>,
        /// Shared (reflinked) bytes.
        shared: Option<u64>,
        /// Delayed-allocation bytes.
        delalloc: Option<u64>,
        /// Non-hole extents.
        extents: u64,
        /// Bytes allocated past the block holding EOF.
        beyond_eof: Option<u64>,
    }
}

report! {
    /// A file's extent map (`fspace.map`).
    ExtentMap + json {
        /// The file.
        path: OsString,
        /// `"fiemap"` (every state known) or `"seek"` (holes and data only).
        method: String,
        /// What the method cannot tell, if anything.
        note: Option<String>,
        /// Ranges covering the file in order, holes included.
        extents: Vec<Extent>,
        /// Totals.
        summary: MapSummary,
    }
}

fn state_name(s: fspace::ExtentState) -> &'static str {
    use fspace::ExtentState as S;
    match s {
        S::Hole => "hole",
        S::Unwritten => "unwritten",
        S::Written => "written",
        S::Shared => "shared",
        S::Delalloc => "delalloc",
        S::Data => "data",
        S::Inline => "inline",
        S::Other => "other",
    }
}

impl ExtentMap {
    pub(crate) fn from(path: &Path, m: &fspace::ExtentMap) -> Self {
        let s = &m.summary;
        #[derive(Serialize)]
        struct Doc<'a> {
            path: String,
            #[serde(flatten)]
            map: &'a fspace::ExtentMap,
        }
        ExtentMap {
            path: os(path),
            method: match m.method {
                fspace::MapMethod::Fiemap => "fiemap".into(),
                fspace::MapMethod::Seek => "seek".into(),
            },
            note: m.note.map(str::to_string),
            extents: m
                .extents
                .iter()
                .map(|e| Extent {
                    offset: e.offset,
                    length: e.length,
                    state: state_name(e.state).into(),
                })
                .collect(),
            summary: MapSummary {
                size: s.size,
                allocated: s.allocated,
                written: s.written,
                unwritten: s.unwritten,
                holes: s.holes,
                shared: s.shared,
                delalloc: s.delalloc,
                extents: s.extents,
                beyond_eof: s.beyond_eof,
            },
            json: json_of(&Doc {
                path: path.to_string_lossy().into_owned(),
                map: m,
            }),
        }
    }
}

report! {
    /// The probe's advice for one intent.
    Recommendation {
        /// `"log"`, `"bulk"` or `"sparse"`.
        intent: String,
        /// The strategy to grow files with.
        strategy: String,
        /// The advice in a few words.
        summary: String,
        /// The measured reason, with the figures.
        reason: String,
        /// Whether a measurement decided (false: the built-in choice).
        measured: bool,
        /// True when the measurement could not separate the candidates.
        too_noisy: bool,
        /// For intent log: how commits are made durable, when measured.
        sync_method: Option<String>,
        /// For intent log: whether reusing written segments pays.
        recycle: Option<bool>,
    }
}

report! {
    /// What a probe measured and concluded (`fspace.probe`); the whole
    /// document (schema `fspace-probe/…`, docs/probe-json.md) is
    /// `to_dict()`.
    ProbeResult + json {
        /// The directory probed.
        directory: OsString,
        /// `"quick"`, `"standard"` or `"full"`.
        level: String,
        /// The filesystem's name.
        filesystem: String,
        /// Wall time in seconds.
        elapsed: f64,
        /// One recommendation per intent.
        recommendations: Vec<Recommendation>,
        /// What qualifies the run, in words.
        notes: Vec<String>,
    }
}

impl ProbeResult {
    pub(crate) fn from(r: &fspace::probe::ProbeResult) -> Self {
        ProbeResult {
            directory: os(&r.directory),
            level: r.level.name().into(),
            filesystem: r.filesystem.display_name(),
            elapsed: secs(r.elapsed),
            recommendations: r
                .recommendations
                .iter()
                .map(|c| Recommendation {
                    intent: c.intent.name().into(),
                    strategy: c.strategy.name().into(),
                    summary: c.summary.clone(),
                    reason: c.reason.clone(),
                    measured: c.measured,
                    too_noisy: c.too_noisy,
                    sync_method: c.sync_method.map(|m| m.name().into()),
                    recycle: c.recycle,
                })
                .collect(),
            notes: notes(&r.notes),
            json: json_of(r),
        }
    }
}

/// A record read back from the log. (Not made by `report!`: its payload is
/// a Python `bytes`, which is not `Clone` without the GIL.)
#[pyclass(frozen, module = "fspace")]
pub(crate) struct Record {
    /// Its LSN.
    #[pyo3(get)]
    pub(crate) lsn: u64,
    /// Its payload.
    #[pyo3(get)]
    pub(crate) data: Py<pyo3::types::PyBytes>,
    /// The sequence number of the segment holding it.
    #[pyo3(get)]
    pub(crate) segment: u64,
    /// Where its header starts in that segment's file.
    #[pyo3(get)]
    pub(crate) offset: u64,
}

#[pymethods]
impl Record {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Record(lsn={}, data={}, segment={}, offset={})",
            self.lsn,
            self.data.bind(py).repr()?,
            self.segment,
            self.offset
        ))
    }
}

report! {
    /// What `Wal.release_before` did.
    ReleaseReport {
        /// Segments moved to the recycle pool.
        recycled: usize,
        /// Segments deleted because the pool was full.
        deleted: usize,
    }
}

report! {
    /// One `RWF_ATOMIC` write tried on a scratch file.
    UntornTrial {
        /// Bytes written.
        size: u32,
        /// Through `O_DIRECT` (else through the page cache).
        direct: bool,
        /// Whether the kernel took it.
        ok: bool,
        /// The errno it was refused with.
        errno: Option<i32>,
        /// The refusal in words.
        error: Option<String>,
    }
}

report! {
    /// The untorn-write limits of one block device under the filesystem
    /// (`queue/atomic_write_*` in sysfs; `None` before Linux 6.11).
    UntornDevice {
        /// The kernel's name (`"loop0"`, `"nvme0n1p2"`).
        name: String,
        /// `atomic_write_unit_min_bytes`.
        unit_min_bytes: Option<u64>,
        /// `atomic_write_unit_max_bytes`: 0 when the device has none.
        unit_max_bytes: Option<u64>,
        /// `atomic_write_max_bytes`.
        max_bytes: Option<u64>,
        /// `atomic_write_boundary_bytes`.
        boundary_bytes: Option<u64>,
    }
}

/// The name a value has in the library's JSON (its kebab-case serde name).
fn json_name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

report! {
    /// What fspace knows about untorn (atomic) writes on a file, or on a
    /// filesystem measured on a scratch file (`fspace.untorn_facts`,
    /// `fspace.untorn_facts_of_fs`).
    UntornFacts + json {
        /// The file asked about, or the directory whose filesystem was
        /// measured.
        path: OsString,
        /// True for a filesystem's facts (a scratch file was measured),
        /// false for an existing file's (nothing was written).
        scratch: bool,
        /// The filesystem's name (`"xfs"`, `"ext4"`, `"fuse.sshfs"`).
        filesystem: String,
        /// What `statx(STATX_WRITE_ATOMIC)` reports: `"supported"`,
        /// `"zero"` (reported, no unit: ext4 on a device without atomic
        /// writes), `"not-reported"` (btrfs, tmpfs, FUSE; kernels before
        /// 6.11) or `"unknown"` (statx failed: `error` says why).
        state: String,
        /// Why the state is unknown.
        error: Option<String>,
        /// `stx_atomic_write_unit_min`; `None` unless supported.
        unit_min: Option<u32>,
        /// `stx_atomic_write_unit_max`; `None` unless supported.
        unit_max: Option<u32>,
        /// `stx_atomic_write_unit_max_opt` (0: not reported); `None` unless
        /// supported.
        unit_max_opt: Option<u32>,
        /// `stx_atomic_write_segments_max`; `None` unless supported.
        segments_max: Option<u32>,
        /// Where the support comes from: `"none"`, `"device"`,
        /// `"filesystem"` (XFS's software path), `"device-and-filesystem"`
        /// or `"unknown"`.
        source: String,
        /// The largest size the hardware path writes (0: none).
        hardware_max: u32,
        /// The devices under the filesystem (empty when `devices_error`).
        devices: Vec<UntornDevice>,
        /// Why the devices are not known, if so.
        devices_error: Option<String>,
        /// `stx_blksize`.
        block_size: u32,
        /// The allocation unit (the bigalloc cluster on ext4), when known.
        allocation_unit: Option<u64>,
        /// Whether reflink works here (XFS's software path needs it), when
        /// measured.
        reflink: Option<bool>,
        /// The file's extent-size hint in bytes (0: none), where the
        /// filesystem has hints (XFS).
        extent_size_hint: Option<u32>,
        /// The alignment `O_DIRECT` needs (`STATX_DIOALIGN`; 0: no
        /// `O_DIRECT`), when reported.
        direct_io_align: Option<u32>,
        /// `RWF_ATOMIC` writes tried on the scratch file (empty for an
        /// existing file).
        tried: Vec<UntornTrial>,
    }
    hidden {
        /// The library's facts, which `untorn_answer` answers from.
        facts: fspace::untorn::UntornFacts,
    }
}

impl UntornFacts {
    pub(crate) fn from(f: fspace::untorn::UntornFacts) -> Self {
        use fspace::untorn::Limits;
        let (unit_min, unit_max, unit_max_opt, segments_max) = match f.limits {
            Limits::Supported {
                unit_min,
                unit_max,
                unit_max_opt,
                segments_max,
            } => (
                Some(unit_min),
                Some(unit_max),
                Some(unit_max_opt),
                Some(segments_max),
            ),
            _ => (None, None, None, None),
        };
        let error = match &f.limits {
            Limits::Unknown { reason, .. } => Some(reason.clone()),
            _ => None,
        };
        let (devices, devices_error) = match &f.devices {
            Ok(d) => (
                d.iter()
                    .map(|d| UntornDevice {
                        name: d.name.clone(),
                        unit_min_bytes: d.unit_min_bytes,
                        unit_max_bytes: d.unit_max_bytes,
                        max_bytes: d.max_bytes,
                        boundary_bytes: d.boundary_bytes,
                    })
                    .collect(),
                None,
            ),
            Err(why) => (Vec::new(), Some(why.clone())),
        };
        let g = &f.geometry;
        UntornFacts {
            path: os(&f.path),
            scratch: f.scratch,
            filesystem: f.filesystem.clone(),
            state: f.limits.state().into(),
            error,
            unit_min,
            unit_max,
            unit_max_opt,
            segments_max,
            source: json_name(&f.source),
            hardware_max: f.hardware_max,
            devices,
            devices_error,
            block_size: g.block_size,
            allocation_unit: g.allocation_unit,
            reflink: g.reflink,
            extent_size_hint: g.extent_size_hint,
            direct_io_align: g.direct_io_align,
            tried: f
                .tried
                .iter()
                .map(|t| UntornTrial {
                    size: t.size,
                    direct: t.direct,
                    ok: t.ok,
                    errno: t.errno,
                    error: t.error.clone(),
                })
                .collect(),
            json: json_of(&f),
            facts: f,
        }
    }
}

report! {
    /// Whether a page write of one size through one I/O path is untorn
    /// here, and why (`fspace.untorn_answer`).
    UntornAnswer + json {
        /// The page size asked about.
        page_size: u64,
        /// `"direct"` or `"buffered"`.
        io: String,
        /// True when such a write that asks for it (`RWF_ATOMIC`) is
        /// untorn.
        untorn: bool,
        /// The path that makes it untorn (`"hardware"`, `"software"`,
        /// `"unknown"`); `None` when it is not.
        path: Option<String>,
        /// When it is not: the limit or rule that fails (`"buffered"`,
        /// `"not-supported"`, `"not-power-of-two"`, `"below-minimum"`,
        /// `"above-maximum"`, `"misaligned"`, `"refused-by-kernel"`).
        limit: Option<String>,
        /// Whether a trial write of this size and path on a scratch file
        /// was taken by the kernel; `None` when none was made (an existing
        /// file's facts).
        confirmed: Option<bool>,
        /// The answer in words: the rule and the figures behind it.
        reason: String,
    }
}

impl UntornAnswer {
    pub(crate) fn from(a: &fspace::untorn::Answer) -> Self {
        UntornAnswer {
            page_size: a.page_size,
            io: a.io.name().into(),
            untorn: a.untorn,
            path: a.path.map(|p| p.name().into()),
            limit: a.limit.map(str::to_string),
            confirmed: a.confirmed,
            reason: a.reason.clone(),
            json: json_of(a),
        }
    }
}

report! {
    /// One unit that fails the layout check.
    BadUnit {
        /// The unit's file offset.
        offset: u64,
        /// What is wrong: `"hole"`, `"unwritten"`, `"split"`,
        /// `"misaligned"`, `"shared"` or `"other"`.
        fault: String,
        /// The unit's physical start, where it has one.
        physical: Option<u64>,
    }
}

report! {
    /// Whether a range of a file is laid out for the hardware path of
    /// untorn writes, unit by unit (`fspace.check_untorn_layout`).
    UntornLayout + json {
        /// The unit checked (bytes).
        unit: u64,
        /// Start of the range checked: the range asked for, rounded
        /// inwards to whole units.
        start: u64,
        /// End of the range checked (exclusive).
        end: u64,
        /// Units checked.
        units: u64,
        /// Units in one written extent with an aligned physical start.
        ok: u64,
        /// Failing units per fault (`"unwritten"`: 3, ...).
        faults: BTreeMap<String, u64>,
        /// The first failing units (at most 16).
        first_bad: Vec<BadUnit>,
        /// Every unit checked passes, and there was at least one.
        passes: bool,
        /// The result in words.
        words: String,
    }
}

impl UntornLayout {
    pub(crate) fn from(c: &fspace::untorn::LayoutCheck) -> Self {
        UntornLayout {
            unit: c.unit,
            start: c.start,
            end: c.end,
            units: c.units,
            ok: c.ok,
            faults: c
                .faults
                .iter()
                .map(|(f, n)| (f.name().to_string(), *n))
                .collect(),
            first_bad: c
                .first_bad
                .iter()
                .map(|b| BadUnit {
                    offset: b.offset,
                    fault: b.fault.name().into(),
                    physical: b.physical,
                })
                .collect(),
            passes: c.passes(),
            words: c.words(),
            json: json_of(c),
        }
    }
}

report! {
    /// What a growth with `untorn_unit` did beyond the growth itself
    /// (`GrowReport.untorn`).
    UntornReady {
        /// The unit asked for (bytes).
        unit: u32,
        /// The grown file's untorn-write state (`"supported"`, `"zero"`,
        /// `"not-reported"`, `"unknown"`): whether the space can take
        /// untorn writes at all.
        state: String,
        /// Ranges cut out of the new allocation to put its units at
        /// aligned device addresses (XFS; 0 elsewhere).
        collapses: u32,
        /// The file's extent-size hint afterwards (bytes; 0: none), where
        /// the filesystem has hints (XFS).
        extent_size_hint: Option<u32>,
        /// Why the hint is not the unit when it should be.
        hint_note: Option<String>,
        /// The layout of the whole file, unit by unit; `None` when it
        /// could not be read (`layout_error`).
        layout: Option<UntornLayout>,
        /// Why the layout could not be read (no FIEMAP: tmpfs, FUSE).
        layout_error: Option<String>,
    }
}

impl UntornReady {
    pub(crate) fn from(r: &fspace::untorn::Ready) -> Self {
        let (layout, layout_error) = match &r.layout {
            Ok(c) => (Some(UntornLayout::from(c)), None),
            Err(why) => (None, Some(why.clone())),
        };
        UntornReady {
            unit: r.unit,
            state: r.limits.state().into(),
            collapses: r.collapses,
            extent_size_hint: r.extent_size_hint,
            hint_note: r.hint_note.clone(),
            layout,
            layout_error,
        }
    }
}

/// Adds the report classes to the module (for `isinstance` and stubs).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Fallback>()?;
    m.add_class::<Capability>()?;
    m.add_class::<Plan>()?;
    m.add_class::<FsInfo>()?;
    m.add_class::<GrowReport>()?;
    m.add_class::<RangeReport>()?;
    m.add_class::<CopyFallback>()?;
    m.add_class::<CopyReport>()?;
    m.add_class::<DigReport>()?;
    m.add_class::<Extent>()?;
    m.add_class::<MapSummary>()?;
    m.add_class::<ExtentMap>()?;
    m.add_class::<Recommendation>()?;
    m.add_class::<ProbeResult>()?;
    m.add_class::<Record>()?;
    m.add_class::<ReleaseReport>()?;
    m.add_class::<UntornTrial>()?;
    m.add_class::<UntornDevice>()?;
    m.add_class::<UntornFacts>()?;
    m.add_class::<UntornAnswer>()?;
    m.add_class::<BadUnit>()?;
    m.add_class::<UntornLayout>()?;
    m.add_class::<UntornReady>()?;
    Ok(())
}
