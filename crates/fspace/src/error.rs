//! Errors that keep their errno and name the operation, the path and the
//! range (DESIGN.md rule 7), e.g.
//! `fallocate(wal/000000000003.seg, 0..16MiB): No space left on device (os error 28)`.

use crate::units::format_range;
use std::fmt;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The error type of every fspace operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A system call failed.
    #[error("{op}({}{}): {source}", .path.display(), RangeSuffix(.range))]
    Io {
        /// The syscall or operation, e.g. `fallocate` or `pwritev`.
        op: &'static str,
        /// The file it was issued on.
        path: PathBuf,
        /// The byte range concerned, if any.
        range: Option<Range<u64>>,
        /// The OS error, with its errno.
        #[source]
        source: io::Error,
    },
    /// The request cannot be carried out on this file; nothing was changed.
    #[error("{op}({}): {message}", .path.display())]
    Refused {
        /// The operation refused, e.g. `grow`.
        op: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// Why, in words.
        message: String,
        /// The errno that best describes the refusal (`EINVAL`, `EISDIR`, ...).
        errno: i32,
    },
}

struct RangeSuffix<'a>(&'a Option<Range<u64>>);

impl fmt::Display for RangeSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(r) => write!(f, ", {}", format_range(r)),
            None => Ok(()),
        }
    }
}

impl Error {
    /// Builds an [`Error::Io`] from a raw errno.
    pub fn io(
        op: &'static str,
        path: &Path,
        range: Option<Range<u64>>,
        errno: rustix::io::Errno,
    ) -> Self {
        Error::Io {
            op,
            path: path.to_path_buf(),
            range,
            source: io::Error::from_raw_os_error(errno.raw_os_error()),
        }
    }

    /// Builds an [`Error::Refused`].
    pub fn refused(
        op: &'static str,
        path: &Path,
        errno: rustix::io::Errno,
        message: impl Into<String>,
    ) -> Self {
        Error::Refused {
            op,
            path: path.to_path_buf(),
            message: message.into(),
            errno: errno.raw_os_error(),
        }
    }

    /// Returns the errno behind this error.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::Io { source, .. } => source.raw_os_error(),
            Error::Refused { errno, .. } => Some(*errno),
        }
    }

    /// Returns the path the failed operation was about.
    pub fn path(&self) -> &Path {
        match self {
            Error::Io { path, .. } | Error::Refused { path, .. } => path,
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let errno = e.raw_os_error().unwrap_or(libc_eio());
        io::Error::new(io::Error::from_raw_os_error(errno).kind(), e)
    }
}

fn libc_eio() -> i32 {
    rustix::io::Errno::IO.raw_os_error()
}

/// Shorthand for results of fspace operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_op_path_range_and_errno() {
        let e = Error::io(
            "fallocate",
            Path::new("wal/000000000003.seg"),
            Some(0..16 << 20),
            rustix::io::Errno::NOSPC,
        );
        assert_eq!(
            e.to_string(),
            "fallocate(wal/000000000003.seg, 0..16MiB): No space left on device (os error 28)"
        );
        assert_eq!(e.raw_os_error(), Some(28));
        let io: io::Error = e.into();
        assert_eq!(io.kind(), io::ErrorKind::StorageFull);
    }
}
