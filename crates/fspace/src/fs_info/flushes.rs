//! Whether durable writes reach the device: the cache flushes the block
//! devices under a filesystem complete, counted by the kernel in
//! `/sys/block/DEV/stat` (field 16, "flush I/Os"), read around a run of
//! commits and set against the durable syncs the run made.
//!
//! A sync (`fdatasync`, `fsync`, an `O_DSYNC` write) is durable only when
//! the device's volatile write cache is flushed, or the write bypasses it
//! (FUA). A filesystem mounted `nobarrier` / `barrier=0`, or a layer that
//! answers syncs itself, sends no flush: commits look durable and fast and
//! are lost at a power cut. Measured on the matrix's ext4 (a loop device
//! declaring `write back`): 200 `O_DSYNC` overwrites made 200 flushes;
//! remounted `barrier=0`, the same 200 made 0.
//!
//! What cannot be seen: the kernel does not count FUA writes apart from
//! other writes, so on a device with `queue/fua` = 1 a durable write with
//! `O_DIRECT` and `O_DSYNC` may be made durable by FUA with no flush
//! counted
//! ([`FlushVerdict::FuaUncounted`]). A device-mapper or md device passes
//! flushes on: they are counted at the devices under it (which count
//! them whether or not the stacked device does too). A partition's flushes are counted on its whole disk
//! (shared with the disk's other partitions). Flushes that other programs
//! cause on the same device during the run are counted too: the figures
//! are an upper bound of the run's own.

use super::device::BlockDevice;
use crate::error::ErrorKind;
use crate::reason::Reason;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Field 16 of `/sys/block/DEV/stat` (1-based): flush requests completed
/// (Documentation/block/stat.rst of the kernel; absent before Linux 5.5).
const FLUSH_FIELD: usize = 16;

/// What a device's queue declares about its write cache
/// (`queue/write_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum WriteCache {
    /// `write back`: a volatile cache; a durable write needs a flush (or
    /// FUA).
    WriteBack,
    /// `write through`: the device says a completed write is on stable
    /// storage (drives with power-loss protection; or a value set by hand
    /// in sysfs): the kernel sends no flushes.
    WriteThrough,
    /// Not readable here.
    Unknown,
}

impl WriteCache {
    /// Parses `queue/write_cache` as sysfs gives it.
    pub fn parse(s: Option<&str>) -> WriteCache {
        match s.map(str::trim) {
            Some("write back") => WriteCache::WriteBack,
            Some("write through") => WriteCache::WriteThrough,
            _ => WriteCache::Unknown,
        }
    }

    /// Returns the name used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            WriteCache::WriteBack => "write-back",
            WriteCache::WriteThrough => "write-through",
            WriteCache::Unknown => "unknown",
        }
    }
}

/// What the flush counts say about a run's durable syncs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FlushVerdict {
    /// At least one device flush per durable sync.
    Flushed,
    /// The device declares write-through: no flush is needed, and
    /// durability rests on that declaration.
    WriteThrough,
    /// No block device underneath (tmpfs, a network or FUSE filesystem):
    /// nothing to count here.
    NoDevice,
    /// The counters could not be read, or the run made no durable sync.
    NotMeasured,
    /// No flush counted, but the device takes FUA writes, which the
    /// kernel does not count: an `O_DIRECT` + `O_DSYNC` write may have
    /// been made durable by FUA. Cannot tell.
    FuaUncounted,
    /// Flushes counted, but fewer than the durable syncs: concurrent
    /// syncs may share one flush; with one writer, some syncs did not
    /// reach stable storage.
    FewerFlushes,
    /// A volatile write cache and no flush at all: the commits are not
    /// reaching stable storage.
    NotDurable,
}

impl FlushVerdict {
    /// Returns the name used in JSON and metrics.
    pub fn name(self) -> &'static str {
        match self {
            FlushVerdict::Flushed => "flushed",
            FlushVerdict::WriteThrough => "write-through",
            FlushVerdict::NoDevice => "no-device",
            FlushVerdict::NotMeasured => "not-measured",
            FlushVerdict::FuaUncounted => "fua-uncounted",
            FlushVerdict::FewerFlushes => "fewer-flushes",
            FlushVerdict::NotDurable => "not-durable",
        }
    }

    /// Whether the figures it qualifies must not be taken as durable
    /// commits.
    pub fn not_durable(self) -> bool {
        self == FlushVerdict::NotDurable
    }
}

impl std::fmt::Display for FlushVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One device's flushes over a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DeviceFlushCount {
    /// The kernel's name (`loop0`, `sda`, `dm-0`).
    pub name: String,
    /// Where the count was read: the device itself, or a partition's
    /// whole disk.
    pub counted_on: String,
    /// `queue/write_cache`.
    pub write_cache: WriteCache,
    /// `queue/fua`.
    pub fua: Option<bool>,
    /// Flushes it completed during the run.
    pub flushes: u64,
}

/// The flushes a run of commits made, and what they say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Flushes {
    /// Commits the run made.
    pub commits: u64,
    /// Durable syncs the run made: one per commit in the file modes
    /// (`fdatasync`, `fsync` or an `O_DSYNC` write), the log's
    /// `fdatasync` calls (or its `O_DSYNC` writes) in `wal` mode.
    pub syncs: u64,
    /// Flushes counted at the devices directly under the filesystem
    /// ([`Flushes::devices`]; a device-mapper or md device's at the
    /// devices under it).
    pub flushes: u64,
    /// `flushes / syncs`; `None` without syncs.
    pub per_sync: Option<f64>,
    /// `flushes / commits`; `None` without commits (below 1 where one
    /// sync serves a group of commits).
    pub per_commit: Option<f64>,
    /// The write cache those devices declare (write-back if any does).
    pub write_cache: WriteCache,
    /// Whether any of them takes FUA writes.
    pub fua: Option<bool>,
    /// Whether the syncs were `O_DIRECT` writes (which a FUA device may
    /// make durable without a flush).
    pub direct: bool,
    /// Whether the filesystem's mount options say `nobarrier` (or
    /// `barrier=0`): it sends no flushes.
    pub nobarrier: bool,
    /// The devices counted.
    pub devices: Vec<DeviceFlushCount>,
    /// The devices further down (a loop device's backing file's disk),
    /// for the record: their counts include everything else on them.
    pub lower: Vec<DeviceFlushCount>,
    /// Why nothing was counted (no block device, unreadable counters).
    pub unmeasured: Option<Reason>,
    /// What the counts say.
    pub verdict: FlushVerdict,
    /// The verdict in words, with the likely cause where commits are not
    /// durable.
    pub reason: String,
}

/// One device whose `stat` is read.
#[derive(Debug, Clone)]
struct Counted {
    name: String,
    counted_on: String,
    stat: PathBuf,
    write_cache: WriteCache,
    fua: Option<bool>,
    /// The device has a request queue (`mq/` in sysfs), where the block
    /// layer counts every flush it completes.
    request_based: bool,
}

/// The flush counters under one filesystem, read before and after a run
/// ([`FlushCounter::start`], [`FlushSnapshot::finish`]).
#[derive(Debug, Clone)]
pub struct FlushCounter {
    top: Vec<Counted>,
    lower: Vec<Counted>,
    none: Option<Reason>,
    nobarrier: bool,
}

/// The counts at the start of a run.
#[derive(Debug, Clone)]
pub struct FlushSnapshot {
    counter: FlushCounter,
    top: Vec<Option<u64>>,
    lower: Vec<Option<u64>>,
}

impl FlushCounter {
    /// The counters of the block devices under the filesystem holding
    /// `path`.
    pub fn of(path: &Path) -> FlushCounter {
        let mut c = match super::device::block_devices(path) {
            Ok(devs) => FlushCounter::of_devices(&devs, Path::new("/sys/class/block")),
            Err(why) => FlushCounter {
                top: vec![],
                lower: vec![],
                none: Some(why),
                nobarrier: false,
            },
        };
        c.nobarrier = crate::sys::stat(path)
            .ok()
            .and_then(|st| super::mountinfo::find_mount(path, st.dev))
            .is_some_and(|m| says_nobarrier(&m.options));
        c
    }

    /// The counters of `devs` (as [`block_devices`](super::block_devices)
    /// describes them), their `stat` files found under `class` (sysfs's
    /// `/sys/class/block`, or a test's tree).
    pub(crate) fn of_devices(devs: &[BlockDevice], class: &Path) -> FlushCounter {
        let mut top = vec![];
        let mut lower = vec![];
        for d in devs {
            counted(d, class, &mut top, &mut lower);
        }
        let none = top.is_empty().then(|| {
            Reason::new(
                ErrorKind::NotRegular,
                "no block device with a flush counter",
            )
        });
        FlushCounter {
            top,
            lower,
            none,
            nobarrier: false,
        }
    }

    /// Reads the counts now.
    pub fn start(&self) -> FlushSnapshot {
        FlushSnapshot {
            counter: self.clone(),
            top: self.top.iter().map(|c| read_flushes(&c.stat)).collect(),
            lower: self.lower.iter().map(|c| read_flushes(&c.stat)).collect(),
        }
    }
}

/// Adds the devices whose counts stand for `d`: `d` itself, unless it is
/// a device-mapper or md device (its slaves then, which count the flushes
/// it passes on); everything under those goes to `lower`.
fn counted(d: &BlockDevice, class: &Path, top: &mut Vec<Counted>, lower: &mut Vec<Counted>) {
    let stacked = d.backing_file.is_none() && !d.lower.is_empty();
    if stacked {
        for l in &d.lower {
            counted(l, class, top, lower);
        }
        return;
    }
    top.push(one(d, class));
    for l in &d.lower {
        below(l, class, lower);
    }
}

fn below(d: &BlockDevice, class: &Path, out: &mut Vec<Counted>) {
    out.push(one(d, class));
    for l in &d.lower {
        below(l, class, out);
    }
}

fn one(d: &BlockDevice, class: &Path) -> Counted {
    // The block layer counts a flush on the whole disk, never on a
    // partition.
    let on = d.disk.clone().unwrap_or_else(|| d.name.clone());
    Counted {
        name: d.name.clone(),
        stat: class.join(&on).join("stat"),
        request_based: class.join(&on).join("mq").exists(),
        counted_on: on,
        write_cache: WriteCache::parse(d.write_cache.as_deref()),
        fua: d.fua,
    }
}

/// Whether mount options (as `/proc/self/mountinfo` gives them: the
/// mount's and the superblock's, comma-separated) turn flushes off.
fn says_nobarrier(options: &str) -> bool {
    options
        .split([',', ' ', '|'])
        .any(|o| o == "nobarrier" || o == "barrier=0")
}

/// Field [`FLUSH_FIELD`] of a `stat` file; `None` when unreadable or
/// absent (kernels before 5.5).
fn read_flushes(stat: &Path) -> Option<u64> {
    let s = std::fs::read_to_string(stat).ok()?;
    s.split_whitespace().nth(FLUSH_FIELD - 1)?.parse().ok()
}

impl FlushSnapshot {
    /// The flushes since the snapshot, against the `commits` made
    /// meanwhile and the `syncs` that made them durable; `direct` when
    /// those were `O_DIRECT` writes (which a FUA device may make durable
    /// without a flush).
    pub fn finish(&self, commits: u64, syncs: u64, direct: bool) -> Flushes {
        let c = &self.counter;
        let diff = |list: &[Counted], before: &[Option<u64>]| -> Option<Vec<DeviceFlushCount>> {
            list.iter()
                .zip(before)
                .map(|(c, b)| {
                    let now = read_flushes(&c.stat)?;
                    Some(DeviceFlushCount {
                        name: c.name.clone(),
                        counted_on: c.counted_on.clone(),
                        write_cache: c.write_cache,
                        fua: c.fua,
                        flushes: now.saturating_sub((*b)?),
                    })
                })
                .collect()
        };
        let top = diff(&c.top, &self.top);
        let lower = diff(&c.lower, &self.lower).unwrap_or_default();
        let unmeasured = match (&c.none, &top) {
            (Some(why), _) => Some(why.clone()),
            (None, None) => Some(Reason::new(
                ErrorKind::NotMeasured,
                format!(
                    "the flush counter (field {FLUSH_FIELD} of /sys/block/DEV/stat) \
                     could not be read"
                ),
            )),
            _ => None,
        };
        let devices = top.unwrap_or_default();
        // A bio-based device (no request queue of its own: a native NVMe
        // multipath head, zram) may pass flushes on without counting
        // them; counted on hidden devices beneath, which the walk does not
        // see. No flush there proves nothing.
        let unmeasured = unmeasured.or_else(|| {
            let uncounted: Vec<&str> = c
                .top
                .iter()
                .filter(|d| !d.request_based)
                .map(|d| d.counted_on.as_str())
                .collect();
            (devices.iter().all(|d| d.flushes == 0) && !uncounted.is_empty()).then(|| {
                Reason::new(
                    ErrorKind::NotMeasured,
                    format!(
                        "{} is bio-based (no request queue, as a native NVMe multipath \
                         head): it may pass flushes on without counting them, so none \
                         counted proves nothing",
                        uncounted.join(", ")
                    ),
                )
            })
        });
        Flushes {
            commits,
            syncs,
            flushes: devices.iter().map(|d| d.flushes).sum(),
            per_sync: None,
            per_commit: None,
            write_cache: cache_of(&devices),
            fua: fua_of(&devices),
            direct,
            nobarrier: c.nobarrier,
            devices,
            lower,
            unmeasured,
            verdict: FlushVerdict::NotMeasured,
            reason: String::new(),
        }
        .judged()
    }
}

impl Flushes {
    /// Two runs' flushes on the same devices as one (the counts added),
    /// judged again.
    pub fn add(&self, other: &Flushes) -> Flushes {
        let sum = |a: &[DeviceFlushCount], b: &[DeviceFlushCount]| -> Vec<DeviceFlushCount> {
            let mut out = a.to_vec();
            for d in b {
                match out.iter_mut().find(|x| x.name == d.name) {
                    Some(x) => x.flushes += d.flushes,
                    None => out.push(d.clone()),
                }
            }
            out
        };
        Flushes {
            commits: self.commits + other.commits,
            syncs: self.syncs + other.syncs,
            flushes: self.flushes + other.flushes,
            per_sync: None,
            per_commit: None,
            write_cache: self.write_cache,
            fua: self.fua,
            direct: self.direct && other.direct,
            nobarrier: self.nobarrier || other.nobarrier,
            devices: sum(&self.devices, &other.devices),
            lower: sum(&self.lower, &other.lower),
            unmeasured: self.unmeasured.clone().or_else(|| other.unmeasured.clone()),
            verdict: FlushVerdict::NotMeasured,
            reason: String::new(),
        }
        .judged()
    }

    /// Sets `per_sync`, `verdict` and `reason` from the counts.
    fn judged(mut self) -> Flushes {
        self.per_sync = (self.syncs > 0).then(|| self.flushes as f64 / self.syncs as f64);
        self.per_commit = (self.commits > 0).then(|| self.flushes as f64 / self.commits as f64);
        let (verdict, reason) = self.judge();
        self.verdict = verdict;
        self.reason = reason;
        self
    }

    fn judge(&self) -> (FlushVerdict, String) {
        if let Some(why) = &self.unmeasured {
            // No device at all (tmpfs, FUSE, NFS), as opposed to counters
            // that could not be read or cannot be trusted.
            if self.devices.is_empty() && why.kind == ErrorKind::NotRegular && why.errno.is_none() {
                return (
                    FlushVerdict::NoDevice,
                    format!(
                        "{why}: no device flushes to count, so whether a \
                         sync reaches stable storage cannot be seen here"
                    ),
                );
            }
            return (FlushVerdict::NotMeasured, why.text.clone());
        }
        let names = self
            .devices
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if self.syncs == 0 {
            return (
                FlushVerdict::NotMeasured,
                "no durable sync was made in the run".into(),
            );
        }
        let (n, s) = (self.flushes, self.syncs);
        match self.write_cache {
            WriteCache::WriteThrough => {
                return (
                    FlushVerdict::WriteThrough,
                    format!(
                        "{names} declares a write-through cache: no flush is \
                         needed ({n} for {s} syncs), and durability rests on \
                         that declaration (true of drives with power-loss \
                         protection; not if it was set by hand in sysfs)"
                    ),
                );
            }
            WriteCache::Unknown if n == 0 => {
                return (
                    FlushVerdict::NotMeasured,
                    format!(
                        "{names}: no flush for {s} syncs, and the write \
                         cache is not declared (queue/write_cache)"
                    ),
                );
            }
            _ => {}
        }
        if n >= s {
            return (
                FlushVerdict::Flushed,
                format!(
                    "at least one device flush per durable sync: {n} flushes \
                     for {s} syncs on {names}"
                ),
            );
        }
        if n == 0 && self.direct && self.fua == Some(true) {
            return (
                FlushVerdict::FuaUncounted,
                format!(
                    "no flush counted for {s} O_DIRECT syncs, but {names} \
                     takes FUA writes, which the kernel does not count: \
                     cannot tell whether they reached stable storage"
                ),
            );
        }
        if n == 0 {
            let cause = if self.nobarrier {
                "the filesystem is mounted nobarrier (barrier=0), which \
                 sends no flushes"
            } else {
                "likely a mount with nobarrier or barrier=0, or a layer \
                 that answers syncs itself"
            };
            return (
                FlushVerdict::NotDurable,
                format!(
                    "commits are not reaching stable storage: {s} durable \
                     syncs made no flush of {names}, whose write cache is \
                     volatile (write back); {cause}"
                ),
            );
        }
        (
            FlushVerdict::FewerFlushes,
            format!(
                "{n} device flushes for {s} durable syncs ({names}): \
                 concurrent syncs may share a flush; with one writer, \
                 some syncs did not reach stable storage"
            ),
        )
    }
}

/// Flushes of several runs as one ([`Flushes::add`]); `None` when none
/// has any.
pub fn sum_flushes<'a>(all: impl IntoIterator<Item = &'a Flushes>) -> Option<Flushes> {
    all.into_iter().fold(None, |acc: Option<Flushes>, f| {
        Some(match acc {
            Some(a) => a.add(f),
            None => f.clone(),
        })
    })
}

fn cache_of(devs: &[DeviceFlushCount]) -> WriteCache {
    if devs.iter().any(|d| d.write_cache == WriteCache::WriteBack) {
        WriteCache::WriteBack
    } else if !devs.is_empty()
        && devs
            .iter()
            .all(|d| d.write_cache == WriteCache::WriteThrough)
    {
        WriteCache::WriteThrough
    } else {
        WriteCache::Unknown
    }
}

fn fua_of(devs: &[DeviceFlushCount]) -> Option<bool> {
    if devs.iter().any(|d| d.fua == Some(true)) {
        Some(true)
    } else if !devs.is_empty() && devs.iter().all(|d| d.fua == Some(false)) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
#[path = "flushes_tests.rs"]
mod tests;
