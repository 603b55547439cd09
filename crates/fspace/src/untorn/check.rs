//! The untorn write call, and the limit a refused one fails.

use super::facts::{Limits, State};
use crate::error::{Error, Result};
use crate::sys::{self, Errno};
use crate::units::format_human;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use serde::Serialize;
use std::path::Path;

/// The limit or rule an untorn write fails: [`Refusal::limit`], and
/// [`Answer::limit`](super::Answer::limit). Serialized (and named by
/// [`Limit::name`]) in kebab case: `not-supported`, `buffered`,
/// `not-power-of-two`, `below-minimum`, `above-maximum`, `misaligned`,
/// `buffer-address`, `refused-by-kernel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Limit {
    /// The file's limits allow no untorn write.
    NotSupported,
    /// Not through `O_DIRECT`: the kernel makes no buffered write untorn.
    Buffered,
    /// The size is not a power of two.
    NotPowerOfTwo,
    /// The size is below the smallest unit.
    BelowMinimum,
    /// The size is above the largest unit.
    AboveMaximum,
    /// The offset is not a multiple of the size.
    Misaligned,
    /// The buffer's address is not aligned as `O_DIRECT` needs.
    BufferAddress,
    /// The limits allowed it, and a trial write on a scratch file failed.
    RefusedByKernel,
}

impl Limit {
    /// The name in JSON and in the CLI's answers.
    pub fn name(self) -> &'static str {
        match self {
            Limit::NotSupported => "not-supported",
            Limit::Buffered => "buffered",
            Limit::NotPowerOfTwo => "not-power-of-two",
            Limit::BelowMinimum => "below-minimum",
            Limit::AboveMaximum => "above-maximum",
            Limit::Misaligned => "misaligned",
            Limit::BufferAddress => "buffer-address",
            Limit::RefusedByKernel => "refused-by-kernel",
        }
    }
}

/// Why an untorn write is refused before it is issued. Each names the one
/// limit that fails; [`Refusal::errno`] is what the kernel would say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "limit", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Refusal {
    /// The file's limits allow no untorn write (`EOPNOTSUPP`).
    NotSupported {
        /// [`Limits::state`]: not reported, zero or unknown.
        state: State,
    },
    /// The file is not open with `O_DIRECT`: the kernel makes no buffered
    /// write untorn (`EOPNOTSUPP`).
    Buffered,
    /// The size is not a power of two (`EINVAL`).
    NotPowerOfTwo {
        /// Bytes asked for.
        size: u64,
    },
    /// The size is below `unit_min` (`EINVAL`).
    BelowMinimum {
        /// Bytes asked for.
        size: u64,
        /// `stx_atomic_write_unit_min`.
        unit_min: u32,
    },
    /// The size is above `unit_max` (`EINVAL`).
    AboveMaximum {
        /// Bytes asked for.
        size: u64,
        /// `stx_atomic_write_unit_max`.
        unit_max: u32,
    },
    /// The offset is not a multiple of the size (`EINVAL`).
    Misaligned {
        /// The file offset.
        offset: u64,
        /// Bytes asked for.
        size: u64,
    },
    /// The buffer's address is not aligned as `O_DIRECT` needs (`EINVAL`).
    BufferAddress {
        /// `stx_dio_mem_align`.
        align: u32,
    },
}

impl Refusal {
    /// The errno the refusal carries (raw, as in
    /// [`std::io::Error::from_raw_os_error`]): `EOPNOTSUPP` or `EINVAL`.
    pub fn errno(&self) -> i32 {
        match self {
            Refusal::NotSupported { .. } | Refusal::Buffered => Errno::OPNOTSUPP,
            _ => Errno::INVAL,
        }
        .raw_os_error()
    }

    /// The limit that fails.
    pub fn limit(&self) -> Limit {
        match self {
            Refusal::NotSupported { .. } => Limit::NotSupported,
            Refusal::Buffered => Limit::Buffered,
            Refusal::NotPowerOfTwo { .. } => Limit::NotPowerOfTwo,
            Refusal::BelowMinimum { .. } => Limit::BelowMinimum,
            Refusal::AboveMaximum { .. } => Limit::AboveMaximum,
            Refusal::Misaligned { .. } => Limit::Misaligned,
            Refusal::BufferAddress { .. } => Limit::BufferAddress,
        }
    }

    /// The limit's name in JSON ([`Limit::name`]).
    pub fn name(&self) -> &'static str {
        self.limit().name()
    }

    /// The refusal in words.
    pub fn words(&self) -> String {
        let h = |n: u64| format_human(n);
        match self {
            Refusal::NotSupported { state } => format!(
                "untorn writes are not supported here (statx: {})",
                match state {
                    State::NotReported => "the filesystem does not report STATX_WRITE_ATOMIC",
                    State::Zero => "the filesystem reports no untorn unit for this file",
                    _ => "the limits could not be read",
                }
            ),
            Refusal::Buffered => {
                "the file is not open with O_DIRECT, and the kernel makes no buffered write untorn"
                    .into()
            }
            Refusal::NotPowerOfTwo { size } => {
                format!("{size} bytes is not a power of two, which an untorn write must be")
            }
            Refusal::BelowMinimum { size, unit_min } => format!(
                "{} is below the smallest untorn unit here, {}",
                h(*size),
                h(u64::from(*unit_min))
            ),
            Refusal::AboveMaximum { size, unit_max } => format!(
                "{} is above the largest untorn unit here, {}",
                h(*size),
                h(u64::from(*unit_max))
            ),
            Refusal::Misaligned { offset, size } => format!(
                "offset {offset} is not a multiple of the write's size ({})",
                h(*size)
            ),
            Refusal::BufferAddress { align } => {
                format!("the buffer's address is not a multiple of {align}, as O_DIRECT needs")
            }
        }
    }
}

/// Checks an untorn write of `size` bytes at `offset` against `limits`
/// and the I/O path (`direct`: through `O_DIRECT`); the first limit that
/// fails, in this order: support, `O_DIRECT`, power of two, the units,
/// alignment. (The kernel checks the units before `O_DIRECT`, so for a
/// buffered write of a bad size it says `EINVAL` where this says
/// `EOPNOTSUPP`: both refuse.)
pub fn check(
    limits: &Limits,
    size: u64,
    offset: u64,
    direct: bool,
) -> std::result::Result<(), Refusal> {
    let Limits::Supported {
        unit_min, unit_max, ..
    } = *limits
    else {
        return Err(Refusal::NotSupported {
            state: limits.state(),
        });
    };
    if !direct {
        return Err(Refusal::Buffered);
    }
    if !size.is_power_of_two() {
        return Err(Refusal::NotPowerOfTwo { size });
    }
    if size < u64::from(unit_min) {
        return Err(Refusal::BelowMinimum { size, unit_min });
    }
    if size > u64::from(unit_max) {
        return Err(Refusal::AboveMaximum { size, unit_max });
    }
    if !offset.is_multiple_of(size) {
        return Err(Refusal::Misaligned { offset, size });
    }
    Ok(())
}

/// Writes `buf` at `offset` of `fd` (open with `O_DIRECT`) as one untorn
/// write: `pwritev2(RWF_ATOMIC)`, with `RWF_DSYNC` when `dsync`. After a
/// power cut the range holds all of `buf` or all of what it held before,
/// never a mix — once the write is durable (`dsync`, or a later
/// `fdatasync`); before that, the old bytes.
///
/// Refused before anything is issued, with the limit named
/// ([`Refusal::words`]) and its errno, when the file's limits do not take
/// the write: `EOPNOTSUPP` where untorn writes are not supported or the
/// file is not open with `O_DIRECT`; `EINVAL` for a size that is not a
/// power of two or lies outside the units, an offset not aligned to the
/// size, or a buffer address `O_DIRECT` cannot use. Never falls back to a
/// plain write (docs/design.md rule 9). Costs one `statx` and one `fcntl` before the write; an
/// engine writing many pages checks once ([`check`]) and calls
/// `pwritev2` itself.
pub fn write_untorn<Fd: AsFd>(
    fd: Fd,
    path: &Path,
    buf: &[u8],
    offset: u64,
    dsync: bool,
) -> Result<()> {
    let fd = fd.as_fd();
    let op = "pwritev2(RWF_ATOMIC)";
    let range = Some(offset..offset.saturating_add(buf.len() as u64));
    let st = sys::statx_atomic(fd).map_err(|e| Error::io("statx", path, None, e))?;
    let flags = sys::status_flags(fd).map_err(|e| Error::io("fcntl(F_GETFL)", path, None, e))?;
    let limits = Limits::from_statx(Ok(st));
    let refuse = |r: Refusal| Error::refused(op, path, r.errno(), r.words());
    check(
        &limits,
        buf.len() as u64,
        offset,
        flags.contains(OFlags::DIRECT),
    )
    .map_err(refuse)?;
    if let Some(align) = st.dio_mem_align.filter(|a| *a > 1) {
        if !(buf.as_ptr() as usize).is_multiple_of(align as usize) {
            return Err(refuse(Refusal::BufferAddress { align }));
        }
    }
    match sys::pwrite_atomic(fd, buf, offset, dsync) {
        Ok(n) if n == buf.len() => Ok(()),
        // The kernel writes an untorn write whole or fails it; a short
        // count would break its promise, and is reported, not retried.
        Ok(n) => Err(Error::refused_errno(
            op,
            path,
            Errno::IO,
            format!(
                "the kernel wrote {n} of {} bytes of an untorn write",
                buf.len()
            ),
        )),
        Err(e) => Err(Error::io(op, path, range, e)),
    }
}

/// Refuses, before anything is done, space or a layout check for untorn
/// writes of `unit` on a file that takes none of that size: an `O_DIRECT`
/// write of `unit` at offset 0 must pass [`check`] against
/// the file's own limits. Where untorn writes are absent altogether
/// (ext4 on a device without atomic writes, btrfs, tmpfs) a prepared
/// layout would read as ready while every write could tear, so the answer
/// is no, said first, with the reason: `EOPNOTSUPP` where the file takes
/// no untorn writes, `EINVAL` for a unit outside its limits
/// ([`Refusal::errno`]).
pub(crate) fn takes_unit(
    op: &'static str,
    path: &Path,
    fd: BorrowedFd<'_>,
    unit: u64,
) -> Result<()> {
    let limits = Limits::from_statx_of(fd);
    check(&limits, unit, 0, true).map_err(|r| {
        let unit = crate::units::format_human(unit);
        let message = match &r {
            Refusal::NotSupported { .. } => format!(
                "this file takes no untorn writes (of {unit} or any size): {}; \
                 only O_DIRECT writes with RWF_ATOMIC can be untorn, where statx reports a unit",
                r.words()
            ),
            _ => format!("no untorn writes of {unit} on this file: {}", r.words()),
        };
        Error::refused(op, path, r.errno(), message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_is_named_in_the_kernels_order() {
        let sup = Limits::Supported {
            unit_min: 4096,
            unit_max: 65536,
            unit_max_opt: 0,
            segments_max: 1,
        };
        assert_eq!(check(&sup, 16384, 32768, true), Ok(()));
        assert_eq!(
            check(&sup, 16384, 4096, true).unwrap_err().name(),
            "misaligned"
        );
        assert_eq!(
            check(&sup, 12288, 0, true).unwrap_err().name(),
            "not-power-of-two"
        );
        assert_eq!(
            check(&sup, 2048, 0, true).unwrap_err().name(),
            "below-minimum"
        );
        assert_eq!(
            check(&sup, 1 << 17, 0, true).unwrap_err().name(),
            "above-maximum"
        );
        assert_eq!(check(&sup, 16384, 0, false), Err(Refusal::Buffered));
        let r = check(&Limits::Zero, 16384, 0, true).unwrap_err();
        assert_eq!(
            (r.name(), r.errno()),
            ("not-supported", Errno::OPNOTSUPP.raw_os_error())
        );
        assert!(r.words().contains("no untorn unit"), "{}", r.words());
        let r = check(&Limits::NotReported, 16384, 0, true).unwrap_err();
        assert!(r.words().contains("does not report"), "{}", r.words());
        assert_eq!(
            check(&sup, 16384, 4096, true).unwrap_err().errno(),
            Errno::INVAL.raw_os_error()
        );
    }
}
