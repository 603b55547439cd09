//! Errors that keep their errno and name the operation, the path and the
//! range (docs/design.md rule 7), e.g.
//! `fallocate(wal/000000000003.seg, 0..16MiB): No space left on device (os error 28)`.

pub use crate::errno::ErrorKind;
use crate::reason::Reason;
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
    #[error("{op}({}{}{}): {source}", .path.display(), RangeSuffix(.range), FlagsSuffix(.flags))]
    Io {
        /// The syscall or operation, e.g. `fallocate` or `pwritev`.
        op: &'static str,
        /// The file it was issued on.
        path: PathBuf,
        /// The byte range concerned, if any.
        range: Option<Range<u64>>,
        /// The call's mode flags, if any (`KEEP_SIZE`).
        flags: Option<&'static str>,
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
    /// An operation failed after other strategies had been tried and
    /// abandoned; `tried` lists them with their errors (docs/design.md rule 3).
    #[error("{source}{}", TriedSuffix(.tried))]
    AfterFallbacks {
        /// The error that ended the operation.
        source: Box<Error>,
        /// The strategies abandoned before it, in order.
        tried: Vec<crate::strategy::Fallback>,
    },
    /// Stored data failed verification (a segment log's checksum, header or
    /// sequence) where it must be intact. errno: `EUCLEAN`, as filesystems
    /// report corruption.
    #[error("{op}({}, offset {offset}): corrupt: {message}", .path.display())]
    Corrupt {
        /// What was being read, e.g. `recover` or `read`.
        op: &'static str,
        /// The file holding the damaged bytes.
        path: PathBuf,
        /// Byte offset of the damage in that file.
        offset: u64,
        /// What is wrong, in words.
        message: String,
    },
    /// An earlier durability call failed, so the object that issued it
    /// refuses all further work (docs/design.md rule 6): the kernel may have
    /// dropped the dirty pages, and a retried sync could report success
    /// for data that is gone.
    #[error("poisoned: an earlier {op}({}) failed: {}; reopen to recover what is on disk", .path.display(), io::Error::from_raw_os_error(*.errno))]
    Poisoned {
        /// The call that failed first, e.g. `fdatasync`.
        op: &'static str,
        /// The file it was issued on.
        path: PathBuf,
        /// Its errno.
        errno: i32,
    },
    /// A step of an operation failed (`source`, which keeps its own
    /// operation, path and errno), and the operation adds what is known
    /// about the data it concerned: a log whose writable open failed for
    /// want of space says whether its records were read and verified, and
    /// how to read them without writing. The errno is the step's.
    #[error("{op}({}): {source}; {note}", .path.display())]
    Context {
        /// The operation that failed, e.g. `open log`.
        op: &'static str,
        /// What it was about (for a log, its directory).
        path: PathBuf,
        /// The step's error.
        source: Box<Error>,
        /// What is known, in words.
        note: String,
    },
}

/// A [`Reason`] keeps the error's kind, errno and message: what a report
/// says when this error stopped something it goes on without.
impl From<&Error> for Reason {
    fn from(e: &Error) -> Reason {
        Reason {
            kind: e.kind(),
            errno: e.raw_os_error(),
            text: e.to_string(),
        }
    }
}

impl From<Error> for Reason {
    fn from(e: Error) -> Reason {
        Reason::from(&e)
    }
}

impl Error {
    /// The reason this error gives where the errno table said "not
    /// possible here" and the caller moved on ([`Reason::unsupported`]):
    /// EINVAL from a kernel that does not know a mode flag is then
    /// `unsupported`, not `invalid-input`.
    pub(crate) fn unsupported_reason(&self) -> Reason {
        Reason::unsupported(self.raw_os_error(), self.to_string())
    }
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

struct FlagsSuffix<'a>(&'a Option<&'static str>);

impl fmt::Display for FlagsSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(flags) => write!(f, ", {flags}"),
            None => Ok(()),
        }
    }
}

struct TriedSuffix<'a>(&'a [crate::strategy::Fallback]);

impl fmt::Display for TriedSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for t in self.0 {
            write!(f, " [tried {} first: {}]", t.strategy, t.error)?;
        }
        Ok(())
    }
}

impl Error {
    /// Builds the error of a `pwritev` loop that stopped at `at` with
    /// `errno` before reaching `end` (see `sys::pwrite_all`).
    pub(crate) fn pwrite(path: &Path, end: u64, (errno, at): (rustix::io::Errno, u64)) -> Self {
        Error::io("pwritev", path, Some(at..end), errno)
    }

    /// Builds an [`Error::Io`] from an errno.
    pub(crate) fn io(
        op: &'static str,
        path: &Path,
        range: Option<Range<u64>>,
        errno: rustix::io::Errno,
    ) -> Self {
        Error::io_flags(op, None, path, range, errno)
    }

    /// Builds an [`Error::Io`] for a call with mode flags, displayed as
    /// `fallocate(f, 0..8MiB, KEEP_SIZE): ...`.
    pub(crate) fn io_flags(
        op: &'static str,
        flags: Option<&'static str>,
        path: &Path,
        range: Option<Range<u64>>,
        errno: rustix::io::Errno,
    ) -> Self {
        Error::Io {
            op,
            path: path.to_path_buf(),
            range,
            flags,
            source: io::Error::from_raw_os_error(errno.raw_os_error()),
        }
    }

    /// Builds an [`Error::Io`] from a `std::io::Error`, keeping its errno.
    pub fn from_io(
        op: &'static str,
        path: impl AsRef<Path>,
        range: Option<Range<u64>>,
        err: io::Error,
    ) -> Self {
        Error::Io {
            op,
            path: path.as_ref().to_path_buf(),
            range,
            flags: None,
            source: err,
        }
    }

    /// Builds an [`Error::Refused`]: `op` on `path` cannot be carried out
    /// and nothing was changed. `errno` is the raw errno that best describes
    /// the refusal (as in [`std::io::Error::from_raw_os_error`]).
    pub fn refused(
        op: &'static str,
        path: impl AsRef<Path>,
        errno: i32,
        message: impl Into<String>,
    ) -> Self {
        Error::Refused {
            op,
            path: path.as_ref().to_path_buf(),
            message: message.into(),
            errno,
        }
    }

    /// Builds an [`Error::Refused`] from the library's errno type.
    pub(crate) fn refused_errno(
        op: &'static str,
        path: &Path,
        errno: rustix::io::Errno,
        message: impl Into<String>,
    ) -> Self {
        Error::refused(op, path, errno.raw_os_error(), message)
    }

    /// Builds the refusal of `op` on something that is not a regular file:
    /// `grow(/dev/null): is a character device, not a regular file`. The
    /// errno is `errno` when given (the one `open` failed with), else
    /// EISDIR for a directory and EINVAL for anything else.
    pub(crate) fn not_regular(
        op: &'static str,
        path: &Path,
        st: &crate::sys::Stat,
        errno: Option<rustix::io::Errno>,
    ) -> Self {
        use rustix::io::Errno;
        let errno = errno.unwrap_or(if st.is_dir() {
            Errno::ISDIR
        } else {
            Errno::INVAL
        });
        Error::refused_errno(
            op,
            path,
            errno,
            format!("is a {}, not a regular file", st.type_name()),
        )
    }

    /// Returns the errno behind this error.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::Io { source, .. } => source.raw_os_error(),
            Error::Refused { errno, .. } => Some(*errno),
            Error::AfterFallbacks { source, .. } => source.raw_os_error(),
            Error::Corrupt { .. } => Some(rustix::io::Errno::UCLEAN.raw_os_error()),
            Error::Poisoned { errno, .. } => Some(*errno),
            Error::Context { source, .. } => source.raw_os_error(),
        }
    }

    /// Returns the class of the failure ([`ErrorKind`]): what the user can
    /// do about it, whatever the operation.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Poisoned { .. } => ErrorKind::Poisoned,
            Error::Corrupt { .. } => ErrorKind::Corrupt,
            Error::AfterFallbacks { source, .. } | Error::Context { source, .. } => source.kind(),
            _ => self
                .raw_os_error()
                .map_or(ErrorKind::Io, ErrorKind::from_raw_os_error),
        }
    }

    /// Returns the path the failed operation was about.
    pub fn path(&self) -> &Path {
        match self {
            Error::Io { path, .. }
            | Error::Refused { path, .. }
            | Error::Corrupt { path, .. }
            | Error::Poisoned { path, .. }
            | Error::Context { path, .. } => path,
            Error::AfterFallbacks { source, .. } => source.path(),
        }
    }

    /// Returns the strategies abandoned before this error, if any.
    pub fn fallbacks(&self) -> &[crate::strategy::Fallback] {
        match self {
            Error::AfterFallbacks { tried, .. } => tried,
            Error::Context { source, .. } => source.fallbacks(),
            _ => &[],
        }
    }

    /// Returns the name of the failed operation (`fallocate`, `open`, `grow`).
    pub fn op(&self) -> &'static str {
        match self {
            Error::Io { op, .. }
            | Error::Refused { op, .. }
            | Error::Corrupt { op, .. }
            | Error::Poisoned { op, .. }
            | Error::Context { op, .. } => op,
            Error::AfterFallbacks { source, .. } => source.op(),
        }
    }
}

/// Converts for `?` into `io::Result`: the message (operation, path,
/// range) and the [`io::ErrorKind`] are kept; `std` cannot also keep the raw
/// errno in an error that carries a message, so use [`errno_of`] on the
/// result (or keep the [`Error`]) when the errno matters.
impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let errno = e
            .raw_os_error()
            .unwrap_or(rustix::io::Errno::IO.raw_os_error());
        io::Error::new(io::Error::from_raw_os_error(errno).kind(), e)
    }
}

/// Returns the errno of an `io::Error`, looking inside one converted from
/// an fspace [`Error`].
pub fn errno_of(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<Error>())
            .and_then(Error::raw_os_error)
    })
}

/// Shorthand for results of fspace operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_keeps_the_errors_errno_kind_and_message() {
        let e = Error::refused("grow", "/x/f", 95, "no fallocate here");
        let r = Reason::from(&e);
        assert_eq!(r.errno, Some(95));
        assert_eq!(r.kind, ErrorKind::Unsupported);
        assert_eq!(r.text, e.to_string());
        assert_eq!(r.short(), "Operation not supported");
    }

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
        assert_eq!(errno_of(&io), Some(28));
        assert!(io.to_string().contains("wal/000000000003.seg"));
        assert_eq!(errno_of(&io::Error::from_raw_os_error(5)), Some(5));
    }

    #[test]
    fn flags_and_fallbacks_are_shown() {
        let e = Error::io_flags(
            "fallocate",
            Some("KEEP_SIZE"),
            Path::new("f"),
            Some(4096..8192),
            rustix::io::Errno::OPNOTSUPP,
        );
        assert_eq!(
            e.to_string(),
            "fallocate(f, 4KiB..8KiB, KEEP_SIZE): Operation not supported (os error 95)"
        );
        let tried = vec![crate::strategy::Fallback::new(
            crate::strategy::Strategy::Allocate,
            (&e).into(),
        )];
        let e = Error::AfterFallbacks {
            source: Box::new(Error::io(
                "pwritev",
                Path::new("f"),
                Some(0..1 << 20),
                rustix::io::Errno::NOSPC,
            )),
            tried,
        };
        assert_eq!(e.raw_os_error(), Some(28));
        assert_eq!(e.fallbacks().len(), 1);
        assert!(e.to_string().starts_with("pwritev(f, 0..1MiB): No space left on device (os error 28) [tried allocate first: fallocate(f"));
    }
}
