//! The errno classification table: what an errno means to fspace, in one
//! place (docs/design.md rule 1).
//!
//! Two questions are asked of an errno:
//!
//! - **"is this call not possible here?"** ([`unsupported`]): the answer
//!   differs by call, because each call says "not here" with its own errnos
//!   (`copy_file_range` across filesystems says `EXDEV`, an ioctl a
//!   filesystem lacks says `ENOTTY`). Such an answer moves to the next way
//!   of doing the job; anything else is a failure to report.
//! - **"what kind of failure is it?"** ([`ErrorKind::of`]): the class a
//!   user acts on (free space, fix permissions, retry later), which the CLI
//!   maps to hints and exit codes and the C API to its return values.

use rustix::io::Errno;
use serde::Serialize;

/// A call whose "not possible here" answers fspace acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// `fallocate` of a growth strategy: EOPNOTSUPP (the filesystem or the
    /// mode), ENOSYS (no such syscall), EINVAL (a mode flag the kernel does
    /// not know, as WRITE_ZEROES before 6.17) → the next strategy.
    Fallocate,
    /// `fallocate` that glibc's `posix_fallocate` would emulate (range
    /// allocation): EOPNOTSUPP and ENOSYS only, as glibc; EINVAL stays an
    /// argument error there.
    FallocateEmulable,
    /// `fallocate(PUNCH_HOLE)`: EOPNOTSUPP, ENOSYS (FUSE, NFS before 4.2)
    /// → write zeros instead.
    Punch,
    /// `FICLONE` and `copy_file_range`: EXDEV (another filesystem),
    /// EOPNOTSUPP, ENOTTY (no such ioctl), EINVAL (unaligned or same-file
    /// ranges), ENOSYS → the next copy method.
    Offload,
    /// `ioctl(FIEMAP)`: EOPNOTSUPP, ENOTTY, EINVAL, ENOSYS → `SEEK_DATA`.
    Fiemap,
    /// `lseek(SEEK_HOLE)`: EINVAL (whence unknown), EOPNOTSUPP → holes
    /// cannot be found this way.
    SeekHole,
    /// `renameat2(RENAME_NOREPLACE)`: EINVAL (flag refused: FUSE, NFS),
    /// ENOSYS, EOPNOTSUPP → a checked plain rename.
    RenameNoReplace,
    /// The capability probe: any of the above (EOPNOTSUPP, ENOSYS, EINVAL,
    /// ENOTTY, EXDEV) and EBADF (an ioctl refused on the descriptor type);
    /// any other failure (ENOSPC, EIO) fails the probe instead of being
    /// recorded as "unsupported".
    CapabilityProbe,
}

/// Returns true if and only if `e` from `call` means "not possible here":
/// do the job another way (see [`Call`] for each call's errnos).
pub(crate) fn unsupported(call: Call, e: Errno) -> bool {
    use Errno as E;
    match call {
        Call::Fallocate => matches!(e, E::OPNOTSUPP | E::NOSYS | E::INVAL),
        Call::FallocateEmulable | Call::Punch => matches!(e, E::OPNOTSUPP | E::NOSYS),
        Call::Offload => matches!(e, E::XDEV | E::OPNOTSUPP | E::NOTTY | E::INVAL | E::NOSYS),
        Call::Fiemap => matches!(e, E::OPNOTSUPP | E::NOTTY | E::INVAL | E::NOSYS),
        Call::SeekHole => matches!(e, E::INVAL | E::OPNOTSUPP),
        Call::RenameNoReplace => matches!(e, E::INVAL | E::NOSYS | E::OPNOTSUPP),
        Call::CapabilityProbe => matches!(
            e,
            E::OPNOTSUPP | E::NOSYS | E::INVAL | E::NOTTY | E::XDEV | E::BADF
        ),
    }
}

/// [`unsupported`] for a raw errno, `false` for none.
pub(crate) fn unsupported_raw(call: Call, errno: Option<i32>) -> bool {
    errno.is_some_and(|e| unsupported(call, Errno::from_raw_os_error(e)))
}

/// The class of a failure, for the user who must act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The filesystem or a quota is full (ENOSPC, EDQUOT, EFBIG).
    NoSpace,
    /// The filesystem is mounted read-only (EROFS).
    ReadOnly,
    /// Permission denied (EACCES, EPERM).
    Permission,
    /// A path does not exist (ENOENT, ENOTDIR).
    NotFound,
    /// A name is taken (EEXIST, ENOTEMPTY).
    Exists,
    /// The object is the wrong kind of file (EISDIR, ENXIO, ENODEV, ENOTBLK,
    /// ESPIPE).
    NotRegular,
    /// The filesystem or kernel cannot do it (EOPNOTSUPP, ENOSYS, ENOTTY,
    /// EXDEV).
    Unsupported,
    /// Stopped on request (ECANCELED, EINTR).
    Interrupted,
    /// Another process holds it (EBUSY, EAGAIN/EWOULDBLOCK, ETXTBSY).
    Busy,
    /// A bad argument (EINVAL, EBADF, ERANGE, ENAMETOOLONG, ELOOP).
    InvalidInput,
    /// An earlier durability call failed; the object refuses more work.
    Poisoned,
    /// Stored data failed verification (EUCLEAN, EBADMSG).
    Corrupt,
    /// The device failed (EIO, and anything else).
    Io,
    /// Never an [`Error`](crate::Error)'s: a [`Reason`](crate::reason::Reason)
    /// for a fact that was not measured (only the cache was consulted).
    NotMeasured,
}

impl ErrorKind {
    /// Returns the kind of the raw errno `errno` (as returned by
    /// [`crate::Error::raw_os_error`] or [`std::io::Error::raw_os_error`]).
    pub fn from_raw_os_error(errno: i32) -> ErrorKind {
        ErrorKind::of(Errno::from_raw_os_error(errno))
    }

    /// Returns the kind of errno `e`.
    pub(crate) fn of(e: Errno) -> ErrorKind {
        use Errno as E;
        match e {
            E::NOSPC | E::DQUOT | E::FBIG => ErrorKind::NoSpace,
            E::ROFS => ErrorKind::ReadOnly,
            E::ACCESS | E::PERM => ErrorKind::Permission,
            E::NOENT | E::NOTDIR => ErrorKind::NotFound,
            E::EXIST | E::NOTEMPTY => ErrorKind::Exists,
            E::ISDIR | E::NXIO | E::NODEV | E::NOTBLK | E::SPIPE => ErrorKind::NotRegular,
            E::OPNOTSUPP | E::NOSYS | E::NOTTY | E::XDEV => ErrorKind::Unsupported,
            E::CANCELED | E::INTR => ErrorKind::Interrupted,
            E::BUSY | E::AGAIN | E::TXTBSY => ErrorKind::Busy,
            E::INVAL | E::BADF | E::RANGE | E::NAMETOOLONG | E::LOOP => ErrorKind::InvalidInput,
            E::UCLEAN | E::BADMSG => ErrorKind::Corrupt,
            _ => ErrorKind::Io,
        }
    }

    /// Returns the kind's name as printed and in JSON (`no-space`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NoSpace => "no-space",
            ErrorKind::ReadOnly => "read-only",
            ErrorKind::Permission => "permission",
            ErrorKind::NotFound => "not-found",
            ErrorKind::Exists => "exists",
            ErrorKind::NotRegular => "not-regular",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Busy => "busy",
            ErrorKind::InvalidInput => "invalid-input",
            ErrorKind::Poisoned => "poisoned",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Io => "io",
            ErrorKind::NotMeasured => "not-measured",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_has_its_own_answer() {
        assert!(unsupported(Call::Offload, Errno::XDEV));
        assert!(!unsupported(Call::Fallocate, Errno::XDEV));
        assert!(unsupported(Call::Fallocate, Errno::INVAL));
        assert!(!unsupported(Call::FallocateEmulable, Errno::INVAL));
        assert!(unsupported(Call::CapabilityProbe, Errno::BADF));
        for call in [Call::Fallocate, Call::Punch, Call::Offload, Call::Fiemap] {
            assert!(!unsupported(call, Errno::NOSPC), "{call:?}");
            assert!(!unsupported(call, Errno::IO), "{call:?}");
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(ErrorKind::of(Errno::DQUOT), ErrorKind::NoSpace);
        assert_eq!(ErrorKind::of(Errno::ROFS), ErrorKind::ReadOnly);
        assert_eq!(ErrorKind::of(Errno::IO), ErrorKind::Io);
        assert_eq!(ErrorKind::of(Errno::UCLEAN), ErrorKind::Corrupt);
    }
}
