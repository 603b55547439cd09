//! The mount holding a path, from `/proc/self/mountinfo`.

use std::path::{Path, PathBuf};

pub(super) struct Mount {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
    pub read_only: bool,
    pub options: String,
}

/// Finds the mountinfo entry for device `dev`, preferring the mount point
/// that is the longest prefix of `path` (bind mounts share a device). When no
/// entry carries `dev` (btrfs reports an anonymous device per subvolume that
/// mountinfo does not show), falls back to the longest mount-point prefix.
pub(super) fn find_mount(path: &Path, dev: u64) -> Option<Mount> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev));
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    // (device matches, prefix length) orders candidates.
    let mut best: Option<((bool, usize), Mount)> = None;
    for line in text.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = pre.split(' ').collect();
        if f.len() < 6 {
            continue;
        }
        let mp = PathBuf::from(unescape_mountinfo(f[4]));
        let dev_match = f[2] == want;
        let prefix = if abs.starts_with(&mp) {
            mp.as_os_str().len() + 1
        } else {
            0
        };
        if !dev_match && prefix == 0 {
            continue;
        }
        let score = (dev_match, prefix);
        if best.as_ref().is_some_and(|(s, _)| *s >= score) {
            continue;
        }
        let ro = f[5].split(',').any(|o| o == "ro");
        let mut p = post.split(' ');
        let fs_type = p.next().unwrap_or("").to_string();
        let source = unescape_mountinfo(p.next().unwrap_or(""));
        let super_opts = p.next().unwrap_or("");
        best = Some((
            score,
            Mount {
                mount_point: mp,
                fs_type,
                source,
                read_only: ro,
                options: format!("{} | {super_opts}", f[5]),
            },
        ));
    }
    best.map(|(_, m)| m)
}

pub(super) fn unescape_mountinfo(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
