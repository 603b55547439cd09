//! `fspace probe --prometheus FILE`: the probe's figures (or a
//! `--compare-saved` comparison's) in the Prometheus text exposition
//! format, for node_exporter's textfile collector, written atomically.
//!
//! Every family is a gauge with `# HELP` and `# TYPE`, named
//! `fspace_probe_*` in base units (seconds, bytes), without sample
//! timestamps (the collector refuses them); every sample carries the
//! filesystem's labels (`path`, `device`, `fstype`, `mountpoint`: the last
//! three as node_exporter's `node_filesystem_*` metrics spell them, so
//! that the two join). The names and labels are documented in
//! docs/monitoring.md.

mod concurrency;

use fspace::probe::{CompareVerdict, Comparison, ProbeResult, StateResult};
use fspace::FsInfo;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One metric family: a gauge with its help and samples.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

/// The metrics of one file, families in the order first added.
#[derive(Default)]
pub(crate) struct Metrics {
    /// Labels every sample carries, first.
    common: Vec<(&'static str, String)>,
    families: Vec<Family>,
}

impl Metrics {
    /// Metrics whose samples all carry `common` first.
    fn with_labels(common: Vec<(&'static str, String)>) -> Metrics {
        Metrics {
            common,
            families: vec![],
        }
    }

    /// Adds a sample of gauge `name` (created on first use with `help`):
    /// one family per name, however often it is added to.
    fn gauge(
        &mut self,
        name: &'static str,
        help: &'static str,
        labels: &[(&'static str, &str)],
        value: f64,
    ) {
        let labels: Vec<(&'static str, String)> = self
            .common
            .iter()
            .cloned()
            .chain(labels.iter().map(|(k, v)| (*k, v.to_string())))
            .collect();
        match self.families.iter_mut().find(|f| f.name == name) {
            Some(f) => f.samples.push((labels, value)),
            None => self.families.push(Family {
                name,
                help,
                samples: vec![(labels, value)],
            }),
        }
    }

    /// The exposition text: per family `# HELP`, `# TYPE ... gauge`, then
    /// its samples, no timestamps; a final newline.
    pub(crate) fn render(&self) -> String {
        let mut o = String::new();
        for f in &self.families {
            out!(o, "# HELP {} {}", f.name, escape_help(f.help));
            out!(o, "# TYPE {} gauge", f.name);
            for (labels, v) in &f.samples {
                let l: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                if l.is_empty() {
                    out!(o, "{} {}", f.name, value(*v));
                } else {
                    out!(o, "{}{{{}}} {}", f.name, l.join(","), value(*v));
                }
            }
        }
        o
    }
}

/// A label value escaped as the exposition format asks: backslash, double
/// quote and line feed as `\\`, `\"` and `\n`.
fn escape_label(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// A help text escaped as the exposition format asks: backslash and line
/// feed.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: a Go-parsable float (`NaN`, `+Inf`, `-Inf` spelled as
/// the format wants).
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The labels of the filesystem measured: the directory given, and the
/// mount source, type and point as node_exporter's filesystem metrics
/// name them.
fn fs_labels(dir: &Path, f: &FsInfo) -> Vec<(&'static str, String)> {
    vec![
        ("path", dir.to_string_lossy().into_owned()),
        ("device", f.source.clone().unwrap_or_default()),
        ("fstype", f.display_name()),
        (
            "mountpoint",
            f.mount_point
                .as_deref()
                .map(|m| m.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
    ]
}

/// A commit measurement's samples: median, range, latencies, runs.
fn commit_samples(m: &mut Metrics, state: &str, sync: &str, s: &StateResult) {
    let l = [("state", state), ("sync", sync)];
    m.gauge(
        "fspace_probe_commit_supported",
        "1 if commits into this space state with this sync method could be measured here, else 0.",
        &l,
        flag(s.unsupported.is_none()),
    );
    if !s.measured() {
        return;
    }
    let (lo, hi) = s.range();
    m.gauge(
        "fspace_probe_commits_per_second",
        "Commits per second (8 KiB pwrite + sync, one writer): the median of the probe's runs.",
        &l,
        s.commits_per_sec,
    );
    m.gauge(
        "fspace_probe_commits_per_second_min",
        "Commits per second of the slowest run.",
        &l,
        lo,
    );
    m.gauge(
        "fspace_probe_commits_per_second_max",
        "Commits per second of the fastest run.",
        &l,
        hi,
    );
    m.gauge(
        "fspace_probe_commit_runs",
        "Runs the commit figures are the median of.",
        &l,
        s.runs.len() as f64,
    );
    m.gauge(
        "fspace_probe_commit_latency_p50_seconds",
        "Median commit latency: the median over the runs of each run's median.",
        &l,
        s.p50_us / 1e6,
    );
    m.gauge(
        "fspace_probe_commit_latency_p99_seconds",
        "99th percentile commit latency: the median over the runs of each run's.",
        &l,
        s.p99_us / 1e6,
    );
}

/// The metrics of a probe.
pub(crate) fn probe_metrics(r: &ProbeResult) -> Metrics {
    let f = &r.filesystem;
    let mut m = Metrics::with_labels(fs_labels(&r.directory, f));
    m.gauge(
        "fspace_probe_info",
        "Always 1: the probe's level, fspace version and JSON schema as labels.",
        &[
            ("level", r.level.name()),
            ("version", r.fspace_version),
            ("schema", r.schema),
        ],
        1.0,
    );
    m.gauge(
        "fspace_probe_run_timestamp_seconds",
        "When the probe started, seconds since the Unix epoch.",
        &[],
        r.started_unix as f64,
    );
    m.gauge(
        "fspace_probe_duration_seconds",
        "How long the probe took.",
        &[],
        r.elapsed.as_secs_f64(),
    );
    m.gauge(
        "fspace_probe_budget_seconds",
        "The probe level's time budget.",
        &[],
        r.budget_seconds,
    );
    m.gauge(
        "fspace_probe_rounds",
        "Alternating rounds of commit measurements.",
        &[],
        r.commit.rounds as f64,
    );
    m.gauge(
        "fspace_probe_machine_busy",
        "1 if other processes, the hypervisor or other writers were busy while measuring (noisier figures).",
        &[],
        flag(r.machine.busy),
    );
    for s in &r.commit.states {
        let sync = match s.wal.as_ref() {
            Some(w) => w.io.sync_method.name(),
            None => fspace::SyncMethod::Fdatasync.name(),
        };
        commit_samples(&mut m, s.state.name(), sync, s);
    }
    for x in &r.commit.sync_methods {
        // fdatasync's figures are the recycled state's, already above.
        if x.method != fspace::SyncMethod::Fdatasync {
            commit_samples(&mut m, x.figures.state.name(), x.method.name(), &x.figures);
        }
    }
    if let Some(p) = &r.commit.prediction {
        let (strategy, sync) = match &p.log {
            Some(l) => (l.strategy.name(), l.sync_method.name()),
            None => ("", ""),
        };
        m.gauge(
            "fspace_probe_expected_commits_per_second",
            "What fspace's log set up as recommended should reach here (8 KiB records, at fspace_probe_expected_writers writers): the median of its runs.",
            &[("strategy", strategy), ("sync", sync)],
            p.commits_per_sec,
        );
    }
    concurrency::samples(&mut m, &r.concurrency);
    for g in &r.growth.results {
        let l = [("strategy", g.strategy.name())];
        m.gauge(
            "fspace_probe_growth_supported",
            "1 if growing a file by this strategy works here, else 0.",
            &l,
            flag(g.unsupported.is_none()),
        );
        if g.unsupported.is_some() {
            continue;
        }
        m.gauge(
            "fspace_probe_growth_bytes_per_second",
            "Growth of a fresh file by this strategy, fdatasync included: bytes per second of the median round.",
            &l,
            g.bytes_per_sec,
        );
        m.gauge(
            "fspace_probe_growth_seconds",
            "Time of the median round's growth, fdatasync included.",
            &l,
            g.seconds,
        );
        m.gauge(
            "fspace_probe_growth_bytes",
            "Bytes grown in the median round.",
            &l,
            g.bytes as f64,
        );
    }
    for rec in &r.recommendations {
        let intent = rec.intent.name();
        m.gauge(
            "fspace_probe_recommendation",
            "Always 1: the strategy the probe recommends for the intent.",
            &[("intent", intent), ("strategy", rec.strategy.name())],
            1.0,
        );
        m.gauge(
            "fspace_probe_decided",
            "1 if a measurement decided the intent's strategy, 0 if nothing could be measured or it was too noisy to decide (the built-in choice stands).",
            &[("intent", intent)],
            flag(rec.measured && !rec.too_noisy),
        );
        if let Some(sync) = rec.sync_method {
            m.gauge(
                "fspace_probe_recommendation_sync",
                "Always 1: the sync method the probe recommends for the log.",
                &[("intent", intent), ("sync", sync.name())],
                1.0,
            );
            m.gauge(
                "fspace_probe_sync_decided",
                "1 if a measurement decided the log's sync method, 0 if it was too noisy to decide.",
                &[("intent", intent)],
                flag(!rec.sync_too_noisy),
            );
        }
        if let Some(recycle) = rec.recycle {
            m.gauge(
                "fspace_probe_recommendation_recycle",
                "1 if the probe recommends recycling the log's written segments, else 0.",
                &[("intent", intent)],
                flag(recycle),
            );
        }
        if let Some(v) = &rec.log_vs_append {
            m.gauge(
                "fspace_probe_log_vs_append",
                "Always 1: how fspace's log, set up as recommended, compared with plain appending (an O_APPEND write + fdatasync per commit) in the probe's runs: faster, level (not told apart beyond the noise), slower, or not-measured.",
                &[("outcome", v.outcome.name())],
                1.0,
            );
            if let (Some(r), Some(lo), Some(hi)) = (v.ratio, v.ratio_low, v.ratio_high) {
                m.gauge(
                    "fspace_probe_log_vs_append_ratio",
                    "fspace's log's median commit rate divided by plain appending's (8 KiB records, one writer).",
                    &[],
                    r,
                );
                m.gauge(
                    "fspace_probe_log_vs_append_ratio_min",
                    "The slowest run of fspace's log divided by the fastest run of plain appending.",
                    &[],
                    lo,
                );
                m.gauge(
                    "fspace_probe_log_vs_append_ratio_max",
                    "The fastest run of fspace's log divided by the slowest run of plain appending.",
                    &[],
                    hi,
                );
            }
        }
    }
    untorn_samples(&mut m, &r.untorn);
    durability_samples(&mut m, r.commit.durability.as_ref());
    filesystem_samples(&mut m, f);
    m
}

/// Whether the commits reached stable storage: the verdict, and per sync
/// method the durable syncs, the device flushes and their ratio.
fn durability_samples(m: &mut Metrics, d: Option<&fspace::probe::Durability>) {
    let Some(d) = d else {
        return;
    };
    m.gauge(
        "fspace_probe_commits_not_durable",
        "1 if durable commits sent no cache flush to a device whose write cache is volatile: \
         they are not reaching stable storage and the commit figures are not durable.",
        &[],
        flag(d.not_durable()),
    );
    m.gauge(
        "fspace_probe_durability_info",
        "Always 1: the verdict of the device flush counts and the write cache the devices declare, as labels.",
        &[
            ("verdict", d.verdict.name()),
            ("write_cache", d.write_cache.name()),
        ],
        1.0,
    );
    for x in &d.methods {
        let f = &x.flushes;
        let l = [("sync_method", x.method.as_str())];
        m.gauge(
            "fspace_probe_durable_syncs",
            "Durable syncs the probe's commits made, per sync method (wal: fspace's log).",
            &l,
            f.syncs as f64,
        );
        m.gauge(
            "fspace_probe_device_flushes",
            "Cache flushes the devices under the filesystem completed during those commits.",
            &l,
            f.flushes as f64,
        );
        if let Some(p) = f.per_commit {
            m.gauge(
                "fspace_probe_device_flushes_per_commit",
                "Device cache flushes per commit (below 1 where one sync serves a group of commits).",
                &l,
                p,
            );
        }
        if let Some(p) = f.per_sync {
            m.gauge(
                "fspace_probe_device_flushes_per_sync",
                "Device cache flushes per durable sync (0 on a volatile cache: not durable).",
                &l,
                p,
            );
        }
    }
}

/// Untorn page writes: the answer per page size and I/O path, and where
/// their cost was measured, the ratio to plain writes with its range and
/// both sides' rates.
fn untorn_samples(m: &mut Metrics, u: &fspace::probe::UntornSection) {
    for a in &u.answers {
        let page = a.page_size.to_string();
        m.gauge(
            "fspace_probe_untorn_supported",
            "1 if a page write of this size through this I/O path is untorn here when it asks (RWF_ATOMIC), else 0.",
            &[("page", &page), ("io", a.io.name())],
            flag(a.untorn),
        );
    }
    for c in u.cost.iter().filter(|c| c.measured) {
        let (Some(ratio), Some(lo), Some(hi)) = (c.ratio, c.ratio_min, c.ratio_max) else {
            continue;
        };
        let page = c.page_size.to_string();
        // `path` is the directory probed (every sample's label): the way
        // the writes are made untorn is `write_path`.
        let path = c.path.map_or("unknown", |p| p.name());
        let l = [("page", page.as_str()), ("write_path", path)];
        m.gauge(
            "fspace_probe_untorn_ratio",
            "Untorn page writes per second divided by plain ones (durable O_DIRECT writes into written space, with and without RWF_ATOMIC, one writer): the median of the per-round ratios.",
            &l,
            ratio,
        );
        m.gauge(
            "fspace_probe_untorn_ratio_min",
            "The smallest per-round ratio of untorn to plain page writes per second.",
            &l,
            lo,
        );
        m.gauge(
            "fspace_probe_untorn_ratio_max",
            "The largest per-round ratio of untorn to plain page writes per second.",
            &l,
            hi,
        );
        m.gauge(
            "fspace_probe_untorn_rounds",
            "Alternating rounds the untorn-write ratio is the median of.",
            &l,
            c.ratios.len() as f64,
        );
        for (write, w) in [("plain", &c.plain), ("untorn", &c.untorn)] {
            m.gauge(
                "fspace_probe_untorn_writes_per_second",
                "Durable O_DIRECT page writes per second into written space, plain or untorn (RWF_ATOMIC): the median of the runs.",
                &[("page", page.as_str()), ("write_path", path), ("write", write)],
                w.writes_per_sec,
            );
        }
    }
}

/// The filesystem's and its block devices' facts.
fn filesystem_samples(m: &mut Metrics, f: &FsInfo) {
    m.gauge(
        "fspace_probe_filesystem_block_size_bytes",
        "The filesystem's preferred I/O size (f_bsize).",
        &[],
        f.block_size as f64,
    );
    if let Some(u) = &f.allocation_unit {
        m.gauge(
            "fspace_probe_filesystem_allocation_unit_bytes",
            "The filesystem's allocation unit (cluster on ext4 bigalloc, else block).",
            &[],
            u.bytes as f64,
        );
    }
    m.gauge(
        "fspace_probe_filesystem_size_bytes",
        "The filesystem's size.",
        &[],
        f.total_bytes as f64,
    );
    m.gauge(
        "fspace_probe_filesystem_free_bytes",
        "Bytes free for unprivileged users (f_bavail) when the probe measured.",
        &[],
        f.free_bytes as f64,
    );
    m.gauge(
        "fspace_probe_filesystem_copy_on_write",
        "1 if overwrites allocate new blocks (btrfs, zfs, bcachefs), else 0.",
        &[],
        flag(f.copy_on_write),
    );
    m.gauge(
        "fspace_probe_filesystem_network",
        "1 if the data goes over a network protocol (NFS, sshfs), else 0.",
        &[],
        flag(f.network),
    );
    if let Some(c) = f.caps() {
        for (name, cap) in c.named() {
            m.gauge(
                "fspace_probe_capability",
                "1 if the operation works on this filesystem (measured on scratch files), else 0.",
                &[("capability", name)],
                flag(cap.supported),
            );
        }
    }
    let Ok(devices) = &f.block_devices else {
        return;
    };
    for d in devices {
        let l = [("disk", d.name.as_str())];
        let facts: [(&'static str, &'static str, Option<f64>); 6] = [
            (
                "fspace_probe_device_rotational",
                "1 if the block device says it is rotational (a driver's default: virtio disks say 1), else 0.",
                d.rotational.map(flag),
            ),
            (
                "fspace_probe_device_logical_block_size_bytes",
                "The block device's logical block size.",
                d.logical_block_size.map(|x| x as f64),
            ),
            (
                "fspace_probe_device_physical_block_size_bytes",
                "The block device's physical block size.",
                d.physical_block_size.map(|x| x as f64),
            ),
            (
                "fspace_probe_device_write_cache",
                "1 if the block device has a volatile write cache (write back: flushes are sent), 0 if write through.",
                d.write_cache.as_deref().map(|w| flag(w == "write back")),
            ),
            (
                "fspace_probe_device_fua",
                "1 if writes can bypass the device's cache (Force Unit Access), else 0.",
                d.fua.map(flag),
            ),
            (
                "fspace_probe_device_discard_max_bytes",
                "The block device's largest discard; 0 is no discard.",
                d.discard_max_bytes.map(|x| x as f64),
            ),
        ];
        for (name, help, v) in facts {
            if let Some(v) = v {
                m.gauge(name, help, &l, v);
            }
        }
    }
}

/// The metrics of a `--compare-saved` comparison.
pub(crate) fn compare_metrics(c: &Comparison) -> Metrics {
    let mut m = Metrics::with_labels(vec![
        ("path", c.directory.to_string_lossy().into_owned()),
        ("device", c.key.source.clone()),
        ("fstype", c.key.fs_type.clone()),
        ("mountpoint", c.key.mount_point.clone()),
    ]);
    let s = &c.saved.setup;
    let setup = [
        ("strategy", s.strategy.name()),
        ("sync", s.sync_method.name()),
    ];
    m.gauge(
        "fspace_probe_compare_regressed",
        "1 if two batches of fresh runs were each slower than the saved runs beyond the threshold and the noise, else 0.",
        &setup,
        flag(c.regressed),
    );
    m.gauge(
        "fspace_probe_compare_could_not_tell",
        "1 if the fresh runs looked slower but the comparison could not tell (a busy machine, too few runs), else 0.",
        &[("reason", c.could_not_tell.map_or("none", |w| w.name()))],
        flag(c.could_not_tell.is_some()),
    );
    for v in [
        CompareVerdict::NoChange,
        CompareVerdict::Regressed,
        CompareVerdict::CouldNotTell,
    ] {
        m.gauge(
            "fspace_probe_compare_verdict",
            "1 for the comparison's verdict (no-change, regressed, could-not-tell), 0 for the others.",
            &[("verdict", v.name())],
            flag(c.verdict == v),
        );
    }
    m.gauge(
        "fspace_probe_compare_saved_runs",
        "Saved runs compared with (the save's baseline, or the probe's runs in a file without one).",
        &[],
        c.saved_runs.len() as f64,
    );
    m.gauge(
        "fspace_probe_compare_batches",
        "Batches of fresh runs measured: 2 when the first was slower and a second confirmed or refuted it.",
        &[],
        c.batches.len() as f64,
    );
    if let Some(p) = c.machine.cpu_pressure {
        m.gauge(
            "fspace_probe_compare_cpu_pressure_ratio",
            "Share of the comparison's time some task waited for a CPU (/proc/pressure/cpu).",
            &[],
            p,
        );
    }
    m.gauge(
        "fspace_probe_compare_ratio",
        "The fresh median commit rate divided by the saved median.",
        &setup,
        c.ratio,
    );
    m.gauge(
        "fspace_probe_compare_threshold_ratio",
        "How far below the saved median the fresh one may fall (0.2: 20%).",
        &setup,
        c.threshold,
    );
    m.gauge(
        "fspace_probe_compare_saved_commits_per_second",
        "The saved median commit rate compared with (the save's baseline, or the probe's runs in a file without one).",
        &setup,
        c.saved_commits_per_sec,
    );
    let (lo, hi) = c.fresh.range();
    m.gauge(
        "fspace_probe_compare_fresh_commits_per_second",
        "The fresh median commit rate of fspace's log set up as saved.",
        &setup,
        c.fresh.commits_per_sec,
    );
    m.gauge(
        "fspace_probe_compare_fresh_commits_per_second_min",
        "Commits per second of the slowest fresh run.",
        &setup,
        lo,
    );
    m.gauge(
        "fspace_probe_compare_fresh_commits_per_second_max",
        "Commits per second of the fastest fresh run.",
        &setup,
        hi,
    );
    m.gauge(
        "fspace_probe_compare_fresh_runs",
        "Fresh runs the median is taken over.",
        &setup,
        c.fresh.runs.len() as f64,
    );
    m.gauge(
        "fspace_probe_compare_p_value",
        "One-sided rank test p-value that the saved runs are larger than the fresh ones.",
        &setup,
        c.p_value,
    );
    m.gauge(
        "fspace_probe_compare_machine_busy",
        "1 if others were busy while the fresh runs were measured (noisier figures), else 0.",
        &[],
        flag(c.machine.busy),
    );
    m.gauge(
        "fspace_probe_compare_timestamp_seconds",
        "When the comparison's fresh runs started, seconds since the Unix epoch.",
        &[],
        c.started_unix as f64,
    );
    m.gauge(
        "fspace_probe_compare_duration_seconds",
        "How long the comparison's fresh runs took.",
        &[],
        c.elapsed.as_secs_f64(),
    );
    m
}

/// Refuses a metrics path whose directory is missing or not writable, or
/// that names a directory, before anything is measured.
pub(crate) fn check_path(p: &Path) -> fspace::Result<()> {
    use rustix::io::Errno;
    let refuse = |errno: Errno, msg: String| {
        fspace::Error::refused("prometheus", p, errno.raw_os_error(), msg)
    };
    if p.is_dir() {
        return Err(refuse(
            Errno::ISDIR,
            "is a directory; give a file name such as fspace.prom".into(),
        ));
    }
    if p.file_name().is_none() {
        return Err(refuse(
            Errno::INVAL,
            "has no file name; give one such as fspace.prom".into(),
        ));
    }
    let dir = parent(p);
    if !dir.is_dir() {
        return Err(refuse(Errno::NOENT, "its directory does not exist".into()));
    }
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    if let Err(e) = accessat(
        CWD,
        &dir,
        Access::WRITE_OK | Access::EXEC_OK,
        AtFlags::EACCESS,
    ) {
        return Err(refuse(
            e,
            format!(
                "cannot create files in {}: {} (the file is replaced by renaming a new one over it)",
                dir.display(),
                std::io::Error::from(e)
            ),
        ));
    }
    Ok(())
}

fn parent(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file removed when dropped, unless renamed into place.
struct Temp {
    path: PathBuf,
    armed: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The prefix of the temporary names `write` uses for `name`:
/// `.NAME.tmp-`, which the textfile collector skips (it reads `*.prom`).
fn temp_prefix(name: &str) -> String {
    format!(".{name}.tmp-")
}

/// Removes temporary files a killed writer of `name` left in `dir`: those
/// whose process (the number after the prefix) no longer exists.
fn remove_stale(dir: &Path, name: &str) {
    let prefix = temp_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name();
        let Some(pid) = n.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Replaces `path` with `text` atomically, as the textfile collector
/// needs (it may read at any moment): written to a temporary name in the
/// same directory (`.NAME.tmp-PID`, skipped by the collector), fsynced,
/// renamed over `path`, the directory fsynced. A reader sees the old file
/// or the new one, whole; after a power cut the same holds. On any error
/// the temporary file is removed and `path` is left as it was.
pub(crate) fn write(path: &Path, text: &str) -> fspace::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            fspace::Error::refused(
                "prometheus",
                path,
                rustix::io::Errno::INVAL.raw_os_error(),
                "has no file name",
            )
        })?;
    let dir = parent(path);
    remove_stale(&dir, &name);
    let tmp = Temp {
        path: dir.join(format!("{}{}", temp_prefix(&name), std::process::id())),
        armed: false,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp.path)
        .map_err(|e| fspace::Error::from_io("create", &tmp.path, None, e))?;
    let mut tmp = tmp;
    tmp.armed = true;
    file.write_all(text.as_bytes())
        .map_err(|e| fspace::Error::from_io("write", &tmp.path, None, e))?;
    // The data must be on disk before the name points at it, or a power
    // cut could leave an empty FILE where the old one was.
    file.sync_all()
        .map_err(|e| fspace::Error::from_io("fsync", &tmp.path, None, e))?;
    drop(file);
    std::fs::rename(&tmp.path, path)
        .map_err(|e| fspace::Error::from_io("rename", path, None, e))?;
    tmp.armed = false;
    // The rename itself is durable once the directory is synced.
    std::fs::File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| fspace::Error::from_io("fsync", &dir, None, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family once, with HELP and TYPE before its samples.
    fn check_families(text: &str) -> Vec<String> {
        let mut seen: Vec<String> = vec![];
        let mut current = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let name = rest.split(' ').next().unwrap().to_string();
                assert!(!seen.contains(&name), "{name} twice:\n{text}");
                seen.push(name.clone());
                current = name;
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                assert_eq!(rest, format!("{current} gauge"), "{text}");
            } else {
                let name = line.split(['{', ' ']).next().unwrap();
                assert_eq!(name, current, "sample outside its family:\n{text}");
                // A value and no timestamp.
                let after = line
                    .rsplit_once("} ")
                    .map_or_else(|| line.split_once(' ').unwrap().1, |(_, v)| v);
                assert!(!after.contains(' '), "timestamp or junk: {line}");
                assert!(
                    after.parse::<f64>().is_ok() || ["NaN", "+Inf", "-Inf"].contains(&after),
                    "{line}"
                );
            }
        }
        seen
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("line\nnext"), r"line\nnext");
        assert_eq!(escape_label("/mnt/ök dir"), "/mnt/ök dir");
        assert_eq!(escape_help("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
        let mut m = Metrics::with_labels(vec![("path", "/srv/\"odd\"\\\ndir".into())]);
        m.gauge("fspace_probe_x", "help", &[("state", "zero-filled")], 1.5);
        assert_eq!(
            m.render(),
            "# HELP fspace_probe_x help\n# TYPE fspace_probe_x gauge\n\
             fspace_probe_x{path=\"/srv/\\\"odd\\\"\\\\\\ndir\",state=\"zero-filled\"} 1.5\n"
        );
    }

    #[test]
    fn each_family_has_help_and_type_once() {
        let mut m = Metrics::default();
        m.gauge("fspace_probe_a", "A.", &[("k", "1")], 1.0);
        m.gauge("fspace_probe_b", "B.", &[], 2.0);
        // Added to again after another family: still one family, its
        // samples together.
        m.gauge("fspace_probe_a", "A.", &[("k", "2")], 3.0);
        let text = m.render();
        assert_eq!(check_families(&text), ["fspace_probe_a", "fspace_probe_b"]);
        assert_eq!(
            text,
            "# HELP fspace_probe_a A.\n# TYPE fspace_probe_a gauge\n\
             fspace_probe_a{k=\"1\"} 1\nfspace_probe_a{k=\"2\"} 3\n\
             # HELP fspace_probe_b B.\n# TYPE fspace_probe_b gauge\nfspace_probe_b 2\n"
        );
    }

    #[test]
    fn special_values_are_spelled_as_the_format_wants() {
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "+Inf");
        assert_eq!(value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(value(1e21), "1000000000000000000000");
        assert_eq!(value(0.25), "0.25");
    }

    #[test]
    fn write_replaces_the_file_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fspace.prom");
        std::fs::write(&p, "old\n").unwrap();
        write(&p, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["fspace.prom"]);
    }

    #[test]
    fn a_failed_rename_keeps_the_old_file_and_removes_the_temporary() {
        let d = tempfile::tempdir().unwrap();
        // A non-empty directory in FILE's place: the rename fails.
        let p = d.path().join("fspace.prom");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("keep"), "old").unwrap();
        let e = write(&p, "new\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("rename") && msg.contains("fspace.prom"),
            "{msg}"
        );
        assert!(e.raw_os_error().is_some(), "{msg}");
        assert_eq!(std::fs::read_to_string(p.join("keep")).unwrap(), "old");
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["fspace.prom"]);
    }

    #[test]
    fn stale_temporaries_of_dead_writers_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fspace.prom");
        // PIDs above pid_max's largest value never exist.
        let dead = d.path().join(".fspace.prom.tmp-4294967294");
        let other = d.path().join(".other.prom.tmp-4294967294");
        std::fs::write(&dead, "x").unwrap();
        std::fs::write(&other, "x").unwrap();
        write(&p, "new\n").unwrap();
        assert!(!dead.exists());
        assert!(other.exists(), "another file's temporary was removed");
    }
}
