//! The capability probe's scratch files: created beside the files a
//! measurement is about, removed when dropped.

use crate::error::{Error, Result};
use crate::sys;
use rustix::fd::OwnedFd;
use rustix::fs::OFlags;
use std::path::{Path, PathBuf};

/// A scratch file removed when dropped.
pub(crate) struct Scratch {
    pub(crate) fd: OwnedFd,
    pub(crate) path: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = sys::unlink(&self.path);
    }
}

/// Prefix of scratch files made by the capability probe.
pub const SCRATCH_PREFIX: &str = ".fspace-scratch-";

/// Creates a scratch file in `dir`, named with [`SCRATCH_PREFIX`].
pub(crate) fn scratch(dir: &Path) -> Result<Scratch> {
    let path = dir.join(crate::stale::unique_name("", SCRATCH_PREFIX));
    let fd = sys::open(&path, OFlags::RDWR | OFlags::CREATE | OFlags::EXCL, 0o600)
        .map_err(|e| Error::io("open", &path, None, e))?;
    Ok(Scratch { fd, path })
}
