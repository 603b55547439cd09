//! The recording preload, compiled from `record.c` by build.rs and carried
//! inside the binary so that `fspace crashtest record` needs no install.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub(crate) const PRELOAD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libfspace-record.so"));

/// Writes the preload as `dir/libfspace-record.so` (mode 0755) and returns
/// its path.
pub(crate) fn write_preload(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join("libfspace-record.so");
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o755)
        .open(&path)?;
    f.write_all(PRELOAD)?;
    // The mode given to open is masked by the umask and ignored for a file
    // that already existed.
    f.set_permissions(fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn write_preload_writes_the_shared_object_executable() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = super::write_preload(dir.path()).expect("writing the preload");
        assert_eq!(path, dir.path().join("libfspace-record.so"));
        let bytes = std::fs::read(&path).expect("reading it back");
        assert!(bytes.starts_with(b"\x7fELF"), "not an ELF file");
        assert_eq!(bytes, super::PRELOAD);
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        // A second write over the first one (a reused trace directory).
        super::write_preload(dir.path()).expect("writing it again");
    }
}
