//! Names for fspace's temporary files, and removal of ones left behind.
//!
//! Temporary and scratch files are named `…{marker}{host}-{pid}-{seq}`. A
//! process killed mid-growth or mid-probe leaves its file behind; the next
//! fspace call that creates or probes in that directory removes files whose
//! host is this one and whose process no longer exists. Files of other
//! hosts (a shared network directory) are never touched: their process may
//! be alive elsewhere.

use crate::sys;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

fn host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let name = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        // Keep names portable: the host is a tag, not an address.
        let clean: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if clean.is_empty() {
            "host".into()
        } else {
            clean
        }
    })
}

/// Returns a name unique to this process: `{prefix}{marker}{host}-{pid}-{seq}`.
pub(crate) fn unique_name(prefix: &str, marker: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}{marker}{}-{}-{}",
        host(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// Returns the temporary name for a file to be called `name`:
/// `.{name}{marker}{host}-{pid}-{seq}`, with `name` shortened (on a character
/// boundary) so that the whole fits in NAME_MAX (255 bytes).
pub(crate) fn temp_name(name: &std::ffi::OsStr, marker: &str) -> String {
    let name = name.to_string_lossy();
    let tail = unique_name("", marker);
    let room = 255usize.saturating_sub(1 + tail.len());
    let mut cut = name.len().min(room);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(".{}{tail}", &name[..cut])
}

/// Returns true if `name` carries `marker` and was made on this host by a
/// process that no longer exists.
fn is_stale(name: &str, marker: &str) -> bool {
    let Some(idx) = name.find(marker) else {
        return false;
    };
    let tail = &name[idx + marker.len()..];
    let mut parts = tail.rsplitn(3, '-');
    let (Some(seq), Some(pid), Some(h)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if h != host() || seq.parse::<u64>().is_err() {
        return false;
    }
    let Ok(pid) = pid.parse::<i32>() else {
        return false;
    };
    if pid as u32 == std::process::id() {
        return false;
    }
    match rustix::process::Pid::from_raw(pid) {
        Some(p) => rustix::process::test_kill_process(p) == Err(rustix::io::Errno::SRCH),
        None => false,
    }
}

/// Removes leftovers carrying `marker` in `dir` (best effort; directories
/// with their contents); returns how many were removed.
pub(crate) fn remove_stale(dir: &Path, marker: &str) -> usize {
    let Ok(entries) = sys::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries {
        let Some(name) = e.name.to_str() else {
            continue;
        };
        if !is_stale(name, marker) {
            continue;
        }
        let path = dir.join(name);
        // Scratch directories (a benchmark's log) go with their contents.
        let gone = if e.file_type == rustix::fs::FileType::Directory {
            std::fs::remove_dir_all(&path).is_ok()
        } else {
            sys::unlink(&path).is_ok()
        };
        if gone {
            removed += 1;
        }
    }
    removed
}

/// A directory's identity: device, inode and birth time (an inode number
/// is reused once its directory is removed; with the birth time a new
/// directory never passes for an old one).
type DirKey = (u64, u64, i64, u32);

/// Directories this process has swept, with the marker and when:
/// [`remove_stale_once`] reads each again only after [`SWEEP_AGAIN`].
/// Bounded: when full it starts again (a directory is then swept a second
/// time, which is only slower).
static SWEPT: std::sync::Mutex<Vec<(DirKey, &'static str, std::time::Instant)>> =
    std::sync::Mutex::new(Vec::new());
const SWEPT_MAX: usize = 1024;
/// A long-lived process sweeps a directory again after this long: another
/// process may have died there meanwhile.
const SWEEP_AGAIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The identity of `dir`; `None` where the filesystem keeps no birth time
/// (the directory is then swept every time).
fn dir_key(dir: &Path) -> Option<DirKey> {
    use rustix::fs::{AtFlags, StatxFlags, CWD};
    let st = rustix::fs::statx(
        CWD,
        dir,
        AtFlags::empty(),
        StatxFlags::INO | StatxFlags::BTIME,
    )
    .ok()?;
    if st.stx_mask & StatxFlags::BTIME.bits() == 0 {
        return None;
    }
    let dev = (u64::from(st.stx_dev_major) << 32) | u64::from(st.stx_dev_minor);
    Some((dev, st.stx_ino, st.stx_btime.tv_sec, st.stx_btime.tv_nsec))
}

/// [`remove_stale`], once per directory and marker every [`SWEEP_AGAIN`]
/// in this process. A process that creates many files in one directory (a
/// copy of many files into it) would otherwise read the whole directory
/// for each, which with 100,000 entries costs more than creating the file
/// (measured by hand, in no run folder). A directory is
/// marked swept only once its sweep has finished, so a concurrent caller
/// never goes ahead of a sweep in progress (it sweeps too, harmlessly).
pub(crate) fn remove_stale_once(dir: &Path, marker: &'static str) -> usize {
    let Some(id) = dir_key(dir) else {
        return remove_stale(dir, marker);
    };
    let now = std::time::Instant::now();
    {
        let swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = |e: &&(DirKey, &str, std::time::Instant)| {
            e.0 == id && e.1 == marker && now.duration_since(e.2) < SWEEP_AGAIN
        };
        if swept.iter().any(|e| fresh(&e)) {
            return 0;
        }
    }
    let removed = remove_stale(dir, marker);
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    swept.retain(|e| !(e.0 == id && e.1 == marker));
    if swept.len() >= SWEPT_MAX {
        swept.clear();
    }
    swept.push((id, marker, now));
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_names() {
        let mine = unique_name(".x", ".m-");
        assert!(!is_stale(&mine, ".m-"), "our own file is not stale");
        // pid 2^22+ is above Linux's default pid_max: no such process.
        let dead = format!(".x.m-{}-{}-0", host(), 5_000_000);
        assert!(is_stale(&dead, ".m-"));
        let other_host = format!(".x.m-{}-{}-0", "elsewhere_host_zz", 5_000_000);
        assert!(!is_stale(&other_host, ".m-"));
        assert!(!is_stale("unrelated", ".m-"));
        assert!(!is_stale(&format!(".x.m-{}-notapid-0", host()), ".m-"));
        let long = "é".repeat(200); // 400 bytes
        let t = temp_name(std::ffi::OsStr::new(&long), ".m-");
        assert!(
            t.len() <= 255 && t.starts_with(".é") && t.contains(".m-"),
            "{t}"
        );
    }

    #[test]
    fn a_directory_is_swept_once_per_process() {
        let d = tempfile::tempdir().unwrap();
        let dead = |n: u32| {
            d.path()
                .join(format!(".f.once-{}-{}-{n}", host(), 5_000_000))
        };
        std::fs::write(dead(0), b"").unwrap();
        assert_eq!(remove_stale_once(d.path(), ".once-"), 1);
        assert!(!dead(0).exists());
        // A leftover that appears later waits for the next sweep, 10 s
        // on or in the next process (where the directory has a birth time
        // to know it by; without one, every call sweeps).
        std::fs::write(dead(1), b"").unwrap();
        let known = dir_key(d.path()).is_some();
        assert_eq!(remove_stale_once(d.path(), ".once-"), usize::from(!known));
        assert_eq!(dead(1).exists(), known);
        // A new directory in the same place is swept again.
        let place = d.path().to_path_buf();
        std::fs::remove_dir_all(&place).unwrap();
        std::fs::create_dir(&place).unwrap();
        std::fs::write(
            place.join(format!(".f.once-{}-{}-2", host(), 5_000_000)),
            b"",
        )
        .unwrap();
        assert_eq!(remove_stale_once(&place, ".once-"), 1);
    }
}
