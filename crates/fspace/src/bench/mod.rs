//! The commit benchmark behind `fspace bench commit` (and, later, `fspace
//! probe`): records committed with `fdatasync` into space in each state,
//! and through the [`Wal`], measured in one run so the ratios are fair on a
//! noisy machine.
//!
//! Every mode works in a scratch file or directory inside the directory
//! given, removed afterwards (also after an error or a cancel).

mod file_mode;
mod suite;

pub use suite::{
    check_suite, needs_file, run_suite, suite_runs, with_ratios, SuiteReport, SuiteRow,
};

use crate::error::{Error, Result};
use crate::grow::{grow, GrowOptions, Intent, Strategy};
use crate::policy::StrategyChoice;
use crate::strategy::SyncMethod;
use crate::sys::{self, Errno};
use crate::wal::{Lsn, Wal, WalOptions};
use rustix::fs::OFlags;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A state the space a commit overwrites can be in: what `fspace bench
/// commit --mode` measures and what the probe reports, one vocabulary.
/// The benchmark's older mode names are accepted as input (`append`,
/// `allocate`, `write-zeroes`, `zero-fill-now`, `overwrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpaceState {
    /// No space prepared: each commit appends (`O_APPEND`) and allocates.
    Appended,
    /// A hole (`ftruncate`): each commit allocates.
    Sparse,
    /// Unwritten extents (`fallocate`): each commit converts one.
    Allocated,
    /// Written zeroed blocks made without moving data
    /// (`FALLOC_FL_WRITE_ZEROES`).
    WriteZeroed,
    /// Written blocks made by writing zeros (fspace `zero-fill`).
    ZeroFilled,
    /// Blocks written by earlier records (a recycled log segment).
    Recycled,
    /// fspace's segment log: prepared and recycled segments, group commit.
    Wal,
}

impl SpaceState {
    /// Every state, baseline first.
    pub const ALL: [SpaceState; 7] = [
        SpaceState::Appended,
        SpaceState::Sparse,
        SpaceState::Allocated,
        SpaceState::WriteZeroed,
        SpaceState::ZeroFilled,
        SpaceState::Recycled,
        SpaceState::Wal,
    ];

    /// Returns the name used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            SpaceState::Appended => "appended",
            SpaceState::Sparse => "sparse",
            SpaceState::Allocated => "allocated",
            SpaceState::WriteZeroed => "write-zeroed",
            SpaceState::ZeroFilled => "zero-filled",
            SpaceState::Recycled => "recycled",
            SpaceState::Wal => "wal",
        }
    }

    /// Returns a label for tables: the name and what it means.
    pub fn label(self) -> &'static str {
        match self {
            SpaceState::Appended => "appended (no preparation)",
            SpaceState::Sparse => "sparse (holes)",
            SpaceState::Allocated => "allocated (unwritten)",
            SpaceState::WriteZeroed => "write-zeroed",
            SpaceState::ZeroFilled => "zero-filled",
            SpaceState::Recycled => "recycled (written before)",
            SpaceState::Wal => "fspace wal",
        }
    }

    /// Returns the state a growth strategy leaves new space in.
    pub fn of_strategy(s: Strategy) -> Option<SpaceState> {
        match s {
            Strategy::Sparse => Some(SpaceState::Sparse),
            Strategy::Allocate => Some(SpaceState::Allocated),
            Strategy::WriteZeroes => Some(SpaceState::WriteZeroed),
            Strategy::ZeroFill => Some(SpaceState::ZeroFilled),
            Strategy::Reserve => None,
        }
    }
}

impl std::fmt::Display for SpaceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SpaceState {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let old = match s {
            "append" => Some(SpaceState::Appended),
            "allocate" => Some(SpaceState::Allocated),
            "write-zeroes" => Some(SpaceState::WriteZeroed),
            "zero-fill-now" => Some(SpaceState::ZeroFilled),
            "overwrite" => Some(SpaceState::Recycled),
            _ => None,
        };
        old.or_else(|| SpaceState::ALL.into_iter().find(|m| m.name() == s))
            .ok_or_else(|| {
                let names: Vec<&str> = SpaceState::ALL.iter().map(|m| m.name()).collect();
                format!("unknown mode {s:?} (one of: {})", names.join(", "))
            })
    }
}

/// How to run the commit benchmark.
#[derive(Debug, Clone)]
pub struct CommitBenchOptions {
    /// Bytes per record.
    pub record_size: usize,
    /// Threads committing at once.
    pub writers: usize,
    /// Time per mode.
    pub duration: Duration,
    /// Size of the file the overwrite modes cycle through (append mode
    /// truncates its file when it reaches it).
    pub file_size: u64,
    /// Segment size of the log in `wal` mode.
    pub segment_size: u64,
    /// `O_DIRECT` for the log in `wal` mode (`None`: the log's own choice).
    pub direct_io: Option<bool>,
    /// How the log prepares new segments in `wal` mode
    /// ([`WalOptions::prepare`]).
    pub prepare: StrategyChoice,
    /// Sync methods to measure ([`SyncMethod`]). [`run_commit`] uses the
    /// first; [`run_suite`] runs each mode once per method, in this order.
    /// Empty: `fdatasync` for the file modes, the log's own choice
    /// ([`WalOptions::sync_method`] `None`) for `wal`.
    pub sync_methods: Vec<SyncMethod>,
    /// Stop a file mode when its prepared space is used up (one pass
    /// through `file_size`) instead of wrapping around: later passes would
    /// overwrite written blocks and measure another state. The probe sets
    /// it; `bench commit` wraps and says so.
    pub stop_at_end: bool,
}

impl Default for CommitBenchOptions {
    fn default() -> Self {
        CommitBenchOptions {
            record_size: 8192,
            writers: 1,
            duration: Duration::from_secs(5),
            file_size: 256 << 20,
            segment_size: crate::wal::DEFAULT_SEGMENT_SIZE,
            direct_io: None,
            prepare: StrategyChoice::built_in(),
            sync_methods: vec![],
            stop_at_end: false,
        }
    }
}

/// Latency figures, in microseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

/// The log's side of a `wal` run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WalFigures {
    /// `fdatasync` calls (fewer than commits when groups form).
    pub syncs: u64,
    /// Segment switches during the run.
    pub switches: u64,
    /// Switches that waited for the preparer.
    pub switch_waits: u64,
    /// Commits whose record opened a new segment.
    pub switch_commits: u64,
    /// Their mean latency in microseconds.
    pub switch_mean_us: f64,
    /// Segments created by the preparer during the run.
    pub prepared_created: u64,
    /// Segments recycled during the run.
    pub prepared_recycled: u64,
    /// How the preparer grew new segments.
    pub prepare_strategy: Option<String>,
    /// Why the policy prepares the log's segments that way here.
    #[serde(default)]
    pub prepare_reason: Option<String>,
    /// Whether records went out with `O_DIRECT`, and why.
    pub direct_io: String,
    /// How commits were made durable, and why that way.
    pub sync_method: String,
    /// The space the log's files took when the run ended: their length,
    /// what they reference and, on btrfs, the disk extents they pin.
    #[serde(default)]
    pub space: Option<crate::extents::SpaceUse>,
}

/// The result of one mode.
#[derive(Debug, Clone, Serialize)]
pub struct CommitResult {
    /// The mode.
    pub state: SpaceState,
    /// The sync method measured; `None` for the log's own choice (its
    /// [`WalFigures::sync_method`] says which it made).
    pub sync_method: Option<SyncMethod>,
    /// Commits completed.
    pub commits: u64,
    /// Measured time in seconds.
    pub seconds: f64,
    /// Commits per second.
    pub commits_per_sec: f64,
    /// Payload throughput in MiB/s.
    pub mib_per_sec: f64,
    /// Commit latency (`None` when no commit completed).
    pub latency: Option<Latency>,
    /// Time spent preparing the file or log before the run, in seconds.
    pub setup_seconds: f64,
    /// Log figures (`wal` mode).
    pub wal: Option<WalFigures>,
    /// Anything that qualifies the figures.
    pub notes: Vec<String>,
    /// Why the mode could not run here (e.g. no `fallocate` on this
    /// filesystem), if so; the figures are then zero.
    pub unsupported: Option<String>,
}

/// Runs one mode in `dir`. `cancel` stops the run early (the partial
/// figures are returned; scratch files are removed either way).
pub fn run_commit(
    dir: &Path,
    mode: SpaceState,
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
) -> Result<CommitResult> {
    if opts.record_size == 0 || opts.writers == 0 || opts.record_size as u64 > opts.file_size {
        return Err(Error::refused_errno(
            "bench commit",
            dir,
            Errno::INVAL,
            format!(
                "record size ({}) and writers ({}) must be positive, and the record no larger than the file ({})",
                opts.record_size, opts.writers, opts.file_size
            ),
        ));
    }
    let st = sys::stat(dir).map_err(|e| Error::io("stat", dir, None, e))?;
    if !st.is_dir() {
        return Err(Error::refused_errno(
            "bench commit",
            dir,
            Errno::NOTDIR,
            format!("is a {}, not a directory", st.type_name()),
        ));
    }
    let scratch = dir.join(crate::stale::unique_name(
        &format!(".{}", mode.name()),
        BENCH_MARKER,
    ));
    crate::stale::remove_stale(dir, BENCH_MARKER);
    let r = match mode {
        SpaceState::Wal => run_wal(&scratch, opts, cancel),
        _ => file_mode::run_file(&scratch, mode, opts, cancel),
    };
    remove_scratch(&scratch);
    r
}

/// Marker in the names of the benchmark's scratch files:
/// `.MODE.fspace-bench-HOST-PID-SEQ`; leftovers of dead
/// processes are removed by the next run in the same directory.
pub const BENCH_MARKER: &str = ".fspace-bench-";

fn remove_scratch(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

pub(super) fn record(size: usize) -> Vec<u8> {
    // Non-zero, incompressible-looking content.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8 | 1
        })
        .collect()
}

pub(super) fn file_io_err(op: &'static str, p: &Path, e: Errno) -> Error {
    Error::io(op, p, None, e)
}

/// Prepares the file for an overwrite mode; returns notes.
pub(super) fn prepare_file(
    p: &Path,
    mode: SpaceState,
    size: u64,
    cancel: Option<&AtomicBool>,
) -> Result<Vec<String>> {
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let mut notes = vec![];
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
    let fd = sys::open(p, flags, 0o644).map_err(|e| file_io_err("create", p, e))?;
    let strategy = match mode {
        SpaceState::Recycled => {
            // Written with data and synced, like pg_test_fsync's file.
            let chunk = record(1 << 20);
            let mut off = 0;
            while off < size {
                if cancelled() {
                    return Err(Error::refused_errno(
                        "bench commit",
                        p,
                        Errno::INTR,
                        "interrupted",
                    ));
                }
                let n = (size - off).min(chunk.len() as u64) as usize;
                write_at(&fd, p, &chunk[..n], off)?;
                off += n as u64;
            }
            sys::fdatasync(&fd).map_err(|e| file_io_err("fdatasync", p, e))?;
            return Ok(notes);
        }
        SpaceState::Allocated => Strategy::Allocate,
        SpaceState::Sparse => Strategy::Sparse,
        SpaceState::ZeroFilled => Strategy::ZeroFill,
        SpaceState::WriteZeroed => Strategy::WriteZeroes,
        SpaceState::Appended | SpaceState::Wal => return Ok(notes),
    };
    drop(fd);
    let r = grow(
        p,
        size,
        &GrowOptions {
            choice: StrategyChoice::exactly(strategy),
            intent: Intent::Log,
            sync: true,
            cancel,
            ..Default::default()
        },
    )?;
    notes.extend(r.notes);
    Ok(notes)
}

struct Samples {
    lat: Vec<u64>,
}

pub(super) fn run_threads(
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
    op: &(dyn Fn(&[u8]) -> Result<Option<u64>> + Sync),
) -> Result<(Vec<(u64, u64)>, f64)> {
    let payload = record(opts.record_size);
    let start = Instant::now();
    let deadline = start + opts.duration;
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let per: Vec<Vec<(u64, u64)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..opts.writers)
            .map(|_| {
                let (payload, failed, stop) = (&payload, &failed, &stop);
                s.spawn(move || {
                    let mut v = Vec::with_capacity(1 << 14);
                    loop {
                        if stop.load(Ordering::Relaxed)
                            || cancel.is_some_and(|c| c.load(Ordering::Relaxed))
                        {
                            break;
                        }
                        let t0 = Instant::now();
                        if t0 >= deadline {
                            break;
                        }
                        match op(payload) {
                            Ok(Some(tag)) => v.push((t0.elapsed().as_nanos() as u64, tag)),
                            Ok(None) => {
                                // The prepared space is used up.
                                stop.store(true, Ordering::Relaxed);
                                break;
                            }
                            Err(e) => {
                                stop.store(true, Ordering::Relaxed);
                                let mut f = failed.lock().unwrap_or_else(|e| e.into_inner());
                                f.get_or_insert(e);
                                break;
                            }
                        }
                    }
                    v
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok((per.into_iter().flatten().collect(), secs))
}

fn latency(samples: &mut Samples) -> Latency {
    let v = &mut samples.lat;
    if v.is_empty() {
        return Latency::default();
    }

    v.sort_unstable();
    let pick = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
    Latency {
        p50_us: pick(0.50),
        p99_us: pick(0.99),
        max_us: *v.last().unwrap_or(&0) as f64 / 1000.0,
        mean_us: v.iter().sum::<u64>() as f64 / v.len() as f64 / 1000.0,
    }
}

pub(super) fn result(
    mode: SpaceState,
    opts: &CommitBenchOptions,
    lat_tags: &[(u64, u64)],
    secs: f64,
    setup: f64,
    notes: Vec<String>,
) -> CommitResult {
    let mut s = Samples {
        lat: lat_tags.iter().map(|x| x.0).collect(),
    };
    let n = s.lat.len() as u64;
    CommitResult {
        state: mode,
        sync_method: match mode {
            SpaceState::Wal => opts.sync_methods.first().copied(),
            _ => Some(
                opts.sync_methods
                    .first()
                    .copied()
                    .unwrap_or(SyncMethod::Fdatasync),
            ),
        },
        commits: n,
        seconds: secs,
        commits_per_sec: n as f64 / secs,
        mib_per_sec: n as f64 * opts.record_size as f64 / secs / (1 << 20) as f64,
        latency: if n == 0 { None } else { Some(latency(&mut s)) },
        setup_seconds: setup,
        wal: None,
        notes,
        unsupported: None,
    }
}

fn run_wal(
    dir: &Path,
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
) -> Result<CommitResult> {
    let t0 = Instant::now();
    let wo = WalOptions {
        segment_size: opts.segment_size,
        direct_io: opts.direct_io,
        prepare: opts.prepare.clone(),
        sync_method: opts.sync_methods.first().copied(),
        ..Default::default()
    };
    let wal = Wal::open(dir, wo)?;
    wal.wait_prepared()?;
    let setup = t0.elapsed().as_secs_f64();
    let before = wal.stats();
    let first_seq = wal.segments().last().map_or(0, |s| s.seq);
    let switch_lsns: Mutex<HashSet<u64>> = Mutex::new(HashSet::new());
    let done = AtomicBool::new(false);
    let mut run = Ok((vec![], 0.0));
    std::thread::scope(|s| {
        // A checkpointer, as a database has: releases what is durable so
        // that segments are recycled (PostgreSQL recycles at checkpoints).
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                let segs = wal.segments();
                {
                    let mut set = switch_lsns.lock().unwrap_or_else(|e| e.into_inner());
                    for sg in segs.iter().filter(|sg| sg.seq > first_seq) {
                        set.insert(sg.first_lsn.0);
                    }
                }
                let _ = wal.release_before(wal.durable_lsn());
            }
        });
        let op = |buf: &[u8]| -> Result<Option<u64>> { wal.commit(buf).map(|Lsn(l)| Some(l)) };
        run = run_threads(opts, cancel, &op);
        done.store(true, Ordering::Relaxed);
    });
    let (lat, secs) = run?;
    let after = wal.stats();
    for sg in wal.segments().iter().filter(|sg| sg.seq > first_seq) {
        switch_lsns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(sg.first_lsn.0);
    }
    let set = switch_lsns.into_inner().unwrap_or_else(|e| e.into_inner());
    let crossing: Vec<u64> = lat
        .iter()
        .filter(|(_, l)| set.contains(l))
        .map(|x| x.0)
        .collect();
    let mut notes = vec![];
    few_samples(&mut notes, lat.len());
    let mut r = result(SpaceState::Wal, opts, &lat, secs, setup, notes);
    r.wal = Some(WalFigures {
        syncs: after.syncs - before.syncs,
        switches: after.switches - before.switches,
        switch_waits: after.switch_waits - before.switch_waits,
        switch_commits: crossing.len() as u64,
        switch_mean_us: if crossing.is_empty() {
            0.0
        } else {
            crossing.iter().sum::<u64>() as f64 / crossing.len() as f64 / 1000.0
        },
        prepared_created: after.prepared_created - before.prepared_created,
        prepared_recycled: after.prepared_recycled - before.prepared_recycled,
        prepare_strategy: after.last_prepare.clone(),
        prepare_reason: after.last_prepare_reason.clone(),
        direct_io: after.direct_io.clone(),
        sync_method: after.sync_method.clone(),
        space: None,
    });
    wal.close()?;
    // Measured closed: the preparer has stopped, every segment is synced.
    let space = log_files(dir).and_then(|files| crate::extents::space_use(&files));
    match space {
        Ok(u) => {
            if let Some(w) = r.wal.as_mut() {
                w.space = Some(u);
            }
        }
        Err(e) => r
            .notes
            .push(format!("the log's space was not measured: {e}")),
    }
    Ok(r)
}

/// The segment files of a log directory (live, free and prepared; not
/// its `LOCK`).
fn log_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let entries = sys::read_dir(dir).map_err(|e| Error::io("read_dir", dir, None, e))?;
    let mut out: Vec<std::path::PathBuf> = entries
        .into_iter()
        .filter(|e| e.file_type == rustix::fs::FileType::RegularFile)
        .filter(|e| e.name.to_str().is_some_and(|n| n.ends_with(".seg")))
        .map(|e| dir.join(e.name))
        .collect();
    out.sort();
    Ok(out)
}

/// Fewer commits than this make the percentiles rough: say so.
const FEW_SAMPLES: usize = 100;

pub(super) fn few_samples(notes: &mut Vec<String>, n: usize) {
    if n < FEW_SAMPLES {
        notes.push(format!(
            "only {n} commits: the percentiles are rough (a longer run gives more)"
        ));
    }
}

/// Returns this process's peak resident set size in KiB (`VmHWM`).
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Writes all of `bytes` at `offset` of `fd`.
pub(super) fn write_at(
    fd: &rustix::fd::OwnedFd,
    path: &Path,
    bytes: &[u8],
    offset: u64,
) -> Result<()> {
    sys::pwrite_all(fd, bytes, offset)
        .map_err(|e| Error::pwrite(path, offset + bytes.len() as u64, e))
}
