//! Saved measurements: the recommendations `fspace probe --save` measured
//! for one filesystem, one file per filesystem, found again by a key that a
//! different disk or a different mount does not share. Its own small schema
//! ([`SCHEMA`]): the key and the recommendations, nothing of the probe's
//! figures, so that reading it needs nothing of the probe.
//!
//! Where they are read from is the caller's choice ([`SavedResults`]):
//! nothing here reads a file the caller did not name.

use super::plan::Plan;
use super::rules;
use crate::durable;
use crate::error::{Error, Result};
use crate::fs_info::FsInfo;
use crate::strategy::{Intent, Strategy, SyncMethod};
use crate::sys::Errno;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The schema of a saved measurement file: a name and a major version,
/// bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "fspace-policy/1";

/// Environment variable naming the directory saved measurements live in
/// (default `$XDG_STATE_HOME/fspace`, else `~/.local/state/fspace`).
pub const STATE_DIR_ENV: &str = "FSPACE_STATE_DIR";

/// What identifies a filesystem for saved measurements: its mount type, the
/// mounted source, the mount point, `f_fsid`, the filesystem UUID
/// (`FS_IOC_GETFSUUID`, where there is one) and the mount options.
///
/// A reformatted or replaced disk has a new UUID (ext4, xfs, ext3) or fsid
/// (btrfs, from its UUID), even at the same device path; the same disk
/// mounted elsewhere differs in mount point; a remount with other options
/// (`data=journal`, `nobarrier`, NFS `sync`) differs in options. The device
/// number is left out: btrfs gives each mount a new anonymous one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FsKey {
    /// Mount type (`ext4`, `fuse.sshfs`) or the magic's family name.
    pub fs_type: String,
    /// The mounted device or source.
    pub source: String,
    /// The mount point.
    pub mount_point: String,
    /// `f_fsid` in hex.
    pub fsid: String,
    /// The filesystem UUID in hex (empty where it has none).
    pub uuid: String,
    /// Mount and super block options from mountinfo.
    pub options: String,
}

impl FsKey {
    /// Returns the key of `info`'s filesystem.
    pub fn of(info: &FsInfo) -> FsKey {
        FsKey {
            fs_type: info.display_name(),
            source: info.source.clone().unwrap_or_default(),
            mount_point: info
                .mount_point
                .as_deref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            fsid: format!("0x{:x}", info.fsid),
            uuid: info.uuid.clone().unwrap_or_default(),
            options: info.mount_options.clone().unwrap_or_default(),
        }
    }

    /// Returns the file name the measurement is saved under:
    /// `TYPE-HASH.json`, HASH a 64-bit FNV-1a of the key's fields but the
    /// UUID (which may be unreadable from one path and readable from
    /// another: see [`FsKey::matches`]).
    pub fn file_name(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in [
            &self.fs_type,
            &self.source,
            &self.mount_point,
            &self.fsid,
            &self.options,
        ] {
            for b in part.bytes().chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        let ty: String = self
            .fs_type
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{ty}-{h:016x}.json")
    }
}

impl FsKey {
    /// Returns true if and only if `self` and `other` name the same
    /// filesystem: every field equal, the UUID compared only when both
    /// sides could read one (it needs a readable directory).
    pub fn matches(&self, other: &FsKey) -> bool {
        self.fs_type == other.fs_type
            && self.source == other.source
            && self.mount_point == other.mount_point
            && self.fsid == other.fsid
            && self.options == other.options
            && (self.uuid.is_empty() || other.uuid.is_empty() || self.uuid == other.uuid)
    }
}

/// The schema of measurements saved by earlier versions: the whole probe
/// result (`fspace-probe/1`), read back for its key and recommendations so
/// that an upgrade does not forget what was measured.
const LEGACY_SCHEMA: &str = "fspace-probe/1";

/// A measurement saved as a whole `fspace-probe/1` probe result.
fn legacy(text: &str) -> serde_json::Result<SavedPolicy> {
    #[derive(Deserialize)]
    struct Legacy {
        level: String,
        started_utc: String,
        key: FsKey,
        recommendations: Vec<Recommendation>,
    }
    let l: Legacy = serde_json::from_str(text)?;
    Ok(SavedPolicy {
        schema: SCHEMA.to_string(),
        measured_utc: l.started_utc,
        measured_by: format!(
            "fspace probe --save ({}), saved as {LEGACY_SCHEMA}",
            l.level
        ),
        key: l.key,
        recommendations: l
            .recommendations
            .into_iter()
            .filter(|r| r.measured)
            .collect(),
        expected: None,
    })
}

/// Returns the default directory saved measurements live in (see
/// [`STATE_DIR_ENV`]), or `None` when no home is known.
pub fn state_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env(STATE_DIR_ENV) {
        return Some(d);
    }
    if let Some(d) = env("XDG_STATE_HOME") {
        return Some(d.join("fspace"));
    }
    env("HOME").map(|h| h.join(".local/state/fspace"))
}

/// What to do for one intent on a filesystem, and why: what the probe
/// recommends, and what is saved of it for the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Recommendation {
    /// The intent.
    pub intent: Intent,
    /// The strategy to grow files with.
    pub strategy: Strategy,
    /// For intent log: whether reusing written segments pays (non-CoW).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recycle: Option<bool>,
    /// The advice in a few words (`zero-fill segments, recycle them`).
    pub summary: String,
    /// The measured reason, in words with the figures.
    pub reason: String,
    /// The deciding figure of the chosen strategy (commits/s for log,
    /// bytes/s of growth for bulk and sparse).
    pub figure: f64,
    /// The figure it is compared with (appending for log, zero-fill for
    /// bulk), when measured.
    #[serde(default)]
    pub baseline: Option<f64>,
    /// What `baseline` is.
    #[serde(default)]
    pub baseline_label: Option<String>,
    /// Whether a measurement decided (false: nothing could be measured and
    /// the built-in policy's choice is repeated).
    pub measured: bool,
    /// True when the measurement could not separate the built-in strategy
    /// from a faster-looking one (the runs overlapped): the built-in
    /// choice stands, and `fspace probe --save` keeps the recommendation
    /// only with `--force`.
    #[serde(default)]
    pub too_noisy: bool,
    /// For intent log: how commits are made durable, when the probe
    /// measured the sync methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_method: Option<crate::strategy::SyncMethod>,
    /// Why that sync method, with the figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_reason: Option<String>,
    /// True when the sync methods could not be told apart (as
    /// `too_noisy`, for `sync_method`): the built-in method stands, and
    /// `fspace probe --save` keeps it only with `--force`.
    #[serde(default)]
    pub sync_too_noisy: bool,
    /// For intent log: how fspace's log, set up as recommended, compared
    /// with plain appending in the probe's runs (absent in files saved
    /// before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_vs_append: Option<LogVsAppend>,
}

/// How fspace's log, set up as recommended, compared with plain appending
/// (an `O_APPEND` write + `fdatasync` per commit) in the probe's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum VsAppend {
    /// The log beat appending across the runs, by the probe's rule (median
    /// more than the tie margin faster, the rank test separating the runs).
    Faster,
    /// Not told apart: the medians within the tie margin, or apart with
    /// the runs overlapping. The log buys recovery, segment recycling and
    /// group commit here, not speed.
    Level,
    /// Appending beat the log across the runs, by the same rule.
    Slower,
    /// The log or appending could not be measured.
    NotMeasured,
}

impl VsAppend {
    /// Returns the name used in JSON and metrics: `faster`, `level`,
    /// `slower`, `not-measured`.
    pub fn name(self) -> &'static str {
        match self {
            VsAppend::Faster => "faster",
            VsAppend::Level => "level",
            VsAppend::Slower => "slower",
            VsAppend::NotMeasured => "not-measured",
        }
    }
}

impl std::fmt::Display for VsAppend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VsAppend::NotMeasured => "not measured",
            v => v.name(),
        })
    }
}

/// fspace's log against plain appending, from the probe's runs of each:
/// the outcome, the figures it rests on, and what to do instead where the
/// log is slower.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogVsAppend {
    /// What the runs say.
    pub outcome: VsAppend,
    /// The median of `log_runs`, commits/s (`None`: not measured).
    pub log_commits_per_sec: Option<f64>,
    /// Each run of fspace's log set up as recommended, commits/s: the runs
    /// its expected rate (`commit.prediction`) comes from.
    pub log_runs: Vec<f64>,
    /// The median of `append_runs`, commits/s (`None`: not measured).
    pub append_commits_per_sec: Option<f64>,
    /// Each run of the appended state, commits/s.
    pub append_runs: Vec<f64>,
    /// `log_commits_per_sec` ÷ `append_commits_per_sec`.
    pub ratio: Option<f64>,
    /// The slowest log run ÷ the fastest appending run: the lowest ratio
    /// the runs allow.
    pub ratio_low: Option<f64>,
    /// The fastest log run ÷ the slowest appending run.
    pub ratio_high: Option<f64>,
    /// The one-sided rank test's p-value that the side with the higher
    /// median has the larger runs (`None`: not measured).
    pub p_value: Option<f64>,
    /// Whether the log's runs alternated with appending's in the same
    /// rounds (false: they come from the later check of the log's setup).
    pub alternating: bool,
    /// Threads committing at once in both sides' runs (1 in files saved
    /// before it existed; `fspace probe --writers N` measures at N).
    #[serde(default = "one_writer")]
    pub writers: usize,
    /// Where the log is slower: the space state to commit into instead,
    /// as the probe names it (`appended`, or a state that beat appending
    /// across the runs, such as `recycled`).
    pub instead: Option<String>,
    /// The finding in words, with the figures (what the text report
    /// prints; it may be reworded in any release).
    pub text: String,
}

/// How fspace's log was set up and run for a measurement of its commits
/// (the probe's `Prediction`), and its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogSetup {
    /// The preparation of new segments.
    pub strategy: Strategy,
    /// The sync method the log was asked for (it falls back where the
    /// filesystem refuses it, as [`WalIo`](crate::wal::WalIo) says).
    pub sync_method: SyncMethod,
    /// Bytes per record.
    pub record_size: usize,
    /// The log's segment size, bytes.
    pub segment_size: u64,
    /// The longest time a run was given, seconds.
    pub seconds_per_run: f64,
    /// Threads committing at once (1 in files saved before it existed):
    /// `fspace probe --writers N` measures the expected rate at N, and
    /// `--compare-saved` measures again at the same count.
    #[serde(default = "one_writer")]
    pub writers: usize,
    /// Each run's commits/s, in the order measured.
    pub runs: Vec<f64>,
}

/// What files saved before writer counts were recorded measured at.
fn one_writer() -> usize {
    1
}

impl LogSetup {
    /// The setup in words: `zero-fill segments, direct-dsync`.
    pub fn words(&self) -> String {
        format!("{} segments, {}", self.strategy, self.sync_method)
    }
}

/// What fspace's log reached here with the recommended setup when the
/// probe ran (its `commit.prediction`): what `fspace probe
/// --compare-saved` measures again and compares with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Expected {
    /// The median of `setup.runs`, commits/s.
    pub commits_per_sec: f64,
    /// How the log was set up and run, and each run's commits/s.
    #[serde(flatten)]
    pub setup: LogSetup,
    /// The runs `fspace probe --compare-saved` compares with: the same
    /// setup measured right after the probe exactly as the comparison
    /// measures it (run length, one run after another). `None` in files
    /// saved before it existed, or by a library caller that did not
    /// measure it; a comparison then falls back on `setup.runs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
}

/// The comparison's baseline: runs of fspace's log set up as saved, each
/// given `seconds_per_run`, measured back to back as
/// `fspace probe --compare-saved` measures its fresh runs, so that the two
/// sides of its rank test measure one quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Baseline {
    /// The median of `runs`, commits/s.
    pub commits_per_sec: f64,
    /// The time each run was given, seconds.
    pub seconds_per_run: f64,
    /// Each run's commits/s, in the order measured.
    pub runs: Vec<f64>,
    /// Whether the machine was busy while the runs were measured (a
    /// baseline taken on a busy machine is slow, and hides a slowdown).
    pub machine_busy: bool,
}

/// What is saved for one filesystem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedPolicy {
    /// [`SCHEMA`].
    pub schema: String,
    /// When it was measured (`YYYY-MM-DD HH:MM:SS UTC`).
    pub measured_utc: String,
    /// What measured it, e.g. `fspace probe --save (standard)`.
    pub measured_by: String,
    /// The filesystem it belongs to.
    pub key: FsKey,
    /// The measured recommendations (intents nothing could be measured for
    /// are left out).
    pub recommendations: Vec<Recommendation>,
    /// What the log reached with the recommended setup (absent in files
    /// saved by earlier versions, and when the log could not be measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
}

/// A [`SavedPolicy`] as read back, with the file it came from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SavedProbe {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its contents.
    pub policy: SavedPolicy,
}

impl SavedProbe {
    /// Returns the recommendation for `intent`, if one was measured.
    pub fn recommendation(&self, intent: Intent) -> Option<&Recommendation> {
        self.policy
            .recommendations
            .iter()
            .find(|r| r.intent == intent && r.measured)
    }

    /// Returns the plan this measurement gives for `intent` on `info`'s
    /// filesystem (`rules::measured_ladder`), with a reason that names the
    /// measurement; `None` when nothing was measured for `intent`.
    pub fn plan(&self, intent: Intent, info: &FsInfo) -> Option<Plan> {
        let r = self.recommendation(intent)?;
        let mut plan = Plan::new(
            rules::measured_ladder(info, intent, r.strategy),
            format!(
                "measured by `fspace probe --save` on {} ({}): {}: {}",
                self.policy.measured_utc,
                self.path.display(),
                r.summary,
                r.reason
            ),
        );
        plan.saved = Some(self.path.clone());
        Some(plan)
    }
}

/// Where saved measurements are read from and written to: a directory whose
/// `probes/` holds one file per filesystem. An explicit input: the library
/// reads saved measurements only from a `SavedResults` its caller names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedResults {
    dir: PathBuf,
}

/// Parses the text of a saved probe file: either schema this build reads
/// ([`SCHEMA`], and the legacy `fspace-probe/1`). The error says why, for
/// people; [`SavedResults::load`] makes it an EINVAL error naming the file.
pub fn parse_saved(text: &str) -> std::result::Result<SavedPolicy, String> {
    #[derive(Deserialize)]
    struct Schema {
        schema: String,
    }
    let schema: Schema =
        serde_json::from_str(text).map_err(|e| format!("not a saved probe result: {e}"))?;
    let parsed = match schema.schema.as_str() {
        SCHEMA => serde_json::from_str(text),
        LEGACY_SCHEMA => legacy(text),
        other => {
            let why = format!("schema {other:?}, this fspace reads {SCHEMA:?}");
            return Err(format!("{why}; run `fspace probe --save` again"));
        }
    };
    parsed.map_err(|e| format!("not a saved probe result: {e}"))
}

impl SavedResults {
    /// Environment variable naming the directory saved measurements live
    /// in ([`SavedResults::state_dir`]): `FSPACE_STATE_DIR`.
    pub const STATE_DIR_ENV: &'static str = STATE_DIR_ENV;

    /// The measurements kept under `dir` (in `dir/probes/`).
    pub fn in_dir(dir: impl Into<PathBuf>) -> SavedResults {
        SavedResults { dir: dir.into() }
    }

    /// The measurements in the state directory (`state_dir`:
    /// `$FSPACE_STATE_DIR`, else `$XDG_STATE_HOME/fspace`, else
    /// `~/.local/state/fspace`), the default of the CLI and the C API;
    /// `None` when no home is known.
    pub fn state_dir() -> Option<SavedResults> {
        state_dir().map(SavedResults::in_dir)
    }

    /// The directory (the files are in its `probes/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the file the measurement for the filesystem keyed `key` is
    /// kept in.
    pub fn file_for(&self, key: &FsKey) -> PathBuf {
        self.dir.join("probes").join(key.file_name())
    }

    /// Returns the measurement saved for `info`'s filesystem, if any. A file
    /// that exists but cannot be read or parsed, or has another schema, is
    /// an error (the caller decides whether to fall back to the built-in
    /// policy).
    pub fn load(&self, info: &FsInfo) -> Result<Option<SavedProbe>> {
        let key = FsKey::of(info);
        let path = self.file_for(&key);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::from_io("read", &path, None, e)),
        };
        let policy = parse_saved(&text)
            .map_err(|why| Error::refused_errno("read saved probe", &path, Errno::INVAL, why))?;
        if !policy.key.matches(&key) {
            // Another filesystem whose key hashes alike: not ours.
            return Ok(None);
        }
        Ok(Some(SavedProbe { path, policy }))
    }

    /// Saves `policy` for its filesystem (replacing an earlier one),
    /// durably: written under a temporary name, fsynced, renamed, directory
    /// fsynced; directories it creates on the way have their entries
    /// fsynced too. After a power cut the file holds the earlier result or
    /// this one, whole (a cut before the directory fsync may bring the
    /// earlier one back). Returns the file's path.
    pub fn save(&self, policy: &SavedPolicy) -> Result<PathBuf> {
        let path = self.file_for(&policy.key);
        durable::create_dir_all(&self.dir.join("probes"))?;
        let text = serde_json::to_string_pretty(policy)
            .map_err(|e| Error::refused_errno("save probe", &path, Errno::INVAL, e.to_string()))?
            + "\n";
        durable::replace_file(&path, text.as_bytes(), 0o666)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The log's expected rate survives a save and a load; a file saved
    /// before it existed reads with none.
    #[test]
    fn expected_round_trips_and_may_be_absent() {
        let key = FsKey {
            fs_type: "ext4".into(),
            source: "/dev/loop0".into(),
            mount_point: "/mnt".into(),
            fsid: "0x1".into(),
            uuid: String::new(),
            options: "rw".into(),
        };
        let mut p = SavedPolicy {
            schema: SCHEMA.into(),
            measured_utc: "2026-11-28 05:00:00 UTC".into(),
            measured_by: "fspace probe --save (quick)".into(),
            key,
            recommendations: vec![],
            expected: Some(Expected {
                commits_per_sec: 943.0,
                setup: LogSetup {
                    strategy: Strategy::ZeroFill,
                    sync_method: SyncMethod::DirectDsync,
                    record_size: 8192,
                    segment_size: 16 << 20,
                    seconds_per_run: 0.25,
                    writers: 1,
                    // A figure serde_json's default parser read one ULP
                    // off (the saved_policy fuzz target,
                    // bench/runs/2026-12-02-fuzz-1h/): read back exactly
                    // with its float_roundtrip feature.
                    runs: vec!["14026.630456073783".parse().unwrap(), 531.0, 943.0],
                },
                baseline: None,
            }),
        };
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(parse_saved(&text), Ok(p.clone()));
        // Flattened: the setup's fields sit beside the median.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["expected"]["strategy"], "zero-fill");
        assert_eq!(v["expected"]["sync_method"], "direct-dsync");
        assert_eq!(v["expected"]["commits_per_sec"], 943.0);
        let back: SavedPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p);
        p.expected = None;
        let text = serde_json::to_string(&p).unwrap();
        assert!(!text.contains("expected"), "{text}");
        let back: SavedPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back.expected, None);
    }

    /// A measurement saved by an earlier fspace (a whole `fspace-probe/1`
    /// result, as recorded in bench/runs/) still reads back: its key and
    /// its measured recommendations.
    #[test]
    fn reads_measurements_saved_by_earlier_versions() {
        let runs: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../bench/runs/2026-11-22-probe/quick.json"
        ))
        .expect("recorded results");
        let doc = &runs["runs"][0]["doc"];
        assert_eq!(doc["schema"], LEGACY_SCHEMA);
        let p = legacy(&doc.to_string()).expect("legacy document");
        assert_eq!(p.schema, SCHEMA);
        assert_eq!(p.key.fs_type, doc["key"]["fs_type"].as_str().unwrap());
        assert!(!p.recommendations.is_empty());
        assert!(p.recommendations.iter().all(|r| r.measured));
        assert!(p.measured_by.contains(LEGACY_SCHEMA), "{}", p.measured_by);
    }
}
