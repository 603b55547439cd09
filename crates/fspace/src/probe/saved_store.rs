//! Saved probe results: one file per filesystem, found again by a key that a
//! different disk or a different mount does not share.

use super::{Level, ProbeResult, Recommendation, SCHEMA};
use crate::error::{Error, Result};
use crate::fs_info::FsInfo;
use crate::grow::{Intent, Plan, Strategy};
use crate::sys::{self, Errno};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
                h ^= b as u64;
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

/// Returns the directory saved measurements live in (see
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

/// A measurement saved by [`save`], as [`saved`] finds it.
#[derive(Debug, Clone)]
pub struct SavedProbe {
    /// The file it was read from.
    pub path: PathBuf,
    /// When it was measured (`YYYY-MM-DD HH:MM:SS UTC`).
    pub measured_utc: String,
    /// How thorough that run was.
    pub level: Level,
    /// The filesystem it belongs to.
    pub key: FsKey,
    /// Its recommendations.
    pub recommendations: Vec<Recommendation>,
}

/// The parts of a saved [`ProbeResult`] that are read back.
#[derive(Deserialize)]
struct View {
    schema: String,
    level: Level,
    started_utc: String,
    key: FsKey,
    recommendations: Vec<Recommendation>,
}

impl SavedProbe {
    /// Returns the recommendation for `intent`, if one was measured.
    pub fn recommendation(&self, intent: Intent) -> Option<&Recommendation> {
        self.recommendations
            .iter()
            .find(|r| r.intent == intent && r.measured)
    }

    /// Returns the `auto` plan this measurement gives for `intent` on
    /// `info`'s filesystem: the recommended strategy, then the built-in
    /// fallback for it (`zero-fill` after `allocate` or `write-zeroes`, the
    /// same guarantee by other means; `sparse` instead on copy-on-write
    /// filesystems, where zero-fill is never used for logs), with a reason
    /// that names the measurement. A `sparse` plan for intent log or bulk
    /// checks the free space first ([`crate::grow()`]).
    pub fn plan(&self, intent: Intent, info: &FsInfo) -> Option<Plan> {
        let r = self.recommendation(intent)?;
        let mut ladder = vec![r.strategy];
        if matches!(r.strategy, Strategy::Allocate | Strategy::WriteZeroes) {
            if info.copy_on_write && intent == Intent::Log {
                ladder.push(Strategy::Sparse);
            } else {
                ladder.push(Strategy::ZeroFill);
            }
        }
        Some(Plan {
            ladder,
            reason: format!(
                "measured by `fspace probe --save` on {} ({}): {}: {}",
                self.measured_utc,
                self.path.display(),
                r.summary,
                r.reason
            ),
            saved: Some(self.path.clone()),
        })
    }
}

/// Returns the measurement saved for `info`'s filesystem, if any. A file
/// that exists but cannot be read or parsed, or has another schema, is an
/// error (the caller decides whether to fall back to the built-in policy).
pub fn saved(info: &FsInfo) -> Result<Option<SavedProbe>> {
    let Some(dir) = state_dir() else {
        return Ok(None);
    };
    let key = FsKey::of(info);
    let path = dir.join("probes").join(key.file_name());
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::from_io("read", &path, None, e)),
    };
    let v: View = serde_json::from_str(&text).map_err(|e| {
        Error::refused(
            "read saved probe",
            &path,
            Errno::INVAL,
            format!("not a saved probe result: {e}"),
        )
    })?;
    if v.schema != SCHEMA {
        return Err(Error::refused(
            "read saved probe",
            &path,
            Errno::INVAL,
            format!(
                "schema {:?}, this fspace reads {SCHEMA:?}; run `fspace probe --save` again",
                v.schema
            ),
        ));
    }
    if !v.key.matches(&key) {
        // Another filesystem whose key hashes alike: not ours.
        return Ok(None);
    }
    Ok(Some(SavedProbe {
        path,
        measured_utc: v.started_utc,
        level: v.level,
        key: v.key,
        recommendations: v.recommendations,
    }))
}

/// Saves `result` for its filesystem (replacing an earlier one), durably:
/// written under a temporary name, fsynced, renamed, directory fsynced;
/// directories it creates on the way have their entries fsynced too. After
/// a power cut the file holds the earlier result or this one, whole (a cut
/// before the directory fsync may bring the earlier one back). Returns the
/// file's path.
pub fn save(result: &ProbeResult) -> Result<PathBuf> {
    let dir = state_dir()
        .ok_or_else(|| {
            Error::refused(
                "save probe",
                Path::new("$HOME"),
                Errno::NOENT,
                format!("no directory to save in: set {STATE_DIR_ENV}, XDG_STATE_HOME or HOME"),
            )
        })?
        .join("probes");
    create_dir_all_durable(&dir)?;
    let path = dir.join(result.key.file_name());
    let text = serde_json::to_string_pretty(result)
        .map_err(|e| Error::refused("save probe", &path, Errno::INVAL, e.to_string()))?
        + "\n";
    crate::stale::remove_stale(&dir, TEMP);
    let tmp = dir.join(crate::stale::temp_name(
        path.file_name().unwrap_or_default(),
        TEMP,
    ));
    let write = || -> Result<()> {
        use std::io::Write;
        let mut f =
            std::fs::File::create_new(&tmp).map_err(|e| Error::from_io("create", &tmp, None, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| Error::from_io("write", &tmp, None, e))?;
        f.sync_all()
            .map_err(|e| Error::from_io("fsync", &tmp, None, e))?;
        sys::rename(&tmp, &path).map_err(|e| Error::io("rename", &path, None, e))?;
        sys::fsync_dir(&dir).map_err(|(op, e)| Error::io(op, &dir, None, e))
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(path)
}

const TEMP: &str = ".fspace-tmp-";

/// `mkdir -p` that makes each directory it creates durable: its parent is
/// fsynced after the `mkdir` (a directory's own entry is durable only once
/// its parent is synced, and a result saved into a directory whose entry a
/// power cut removes is lost with it).
fn create_dir_all_durable(dir: &Path) -> Result<()> {
    let mut missing = vec![];
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.as_os_str().is_empty() || d.is_dir() {
            break;
        }
        missing.push(d);
        cur = d.parent();
    }
    for d in missing.into_iter().rev() {
        match std::fs::create_dir(d) {
            Ok(()) => {}
            // Made by someone else meanwhile: theirs to sync.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => continue,
            Err(e) => return Err(Error::from_io("mkdir", d, None, e)),
        }
        let parent = match d.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        sys::fsync_dir(parent).map_err(|(op, e)| Error::io(op, parent, None, e))?;
    }
    Ok(())
}
