//! The file modes of the commit benchmark: records written into one
//! prepared file (or appended to it) and made durable with a
//! [`SyncMethod`], as a database's own log would without fspace's.

use super::engine::{
    few_samples, file_io_err, prepare_file, record, reserve_past_end, result, run_threads, write_at,
};
use super::types::{CommitBenchOptions, CommitResult, SpaceState};
use crate::error::{Error, Result};
use crate::fs_info::FlushCounter;
use crate::note::{Note, NoteKind};
use crate::strategy::SyncMethod;
use crate::sys::{self, Errno};
use rustix::fs::OFlags;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// How one file mode writes and syncs a record.
struct Committer<'a> {
    fd: rustix::fd::OwnedFd,
    path: &'a Path,
    method: SyncMethod,
    /// The record in a page-aligned buffer, for `O_DIRECT`.
    aligned: Option<crate::zeros::PageBuf>,
}

impl Committer<'_> {
    /// Writes `buf` at `offset` and makes it durable by the method.
    fn commit(&self, buf: &[u8], offset: u64) -> Result<()> {
        let bytes = self.aligned.as_deref().unwrap_or(buf);
        if self.method.per_write() {
            sys::pwrite_all_with(|b, o| sys::pwritev_dsync(&self.fd, b, o), bytes, offset).map_err(
                |(errno, at)| {
                    let end = offset + bytes.len() as u64;
                    Error::io("pwritev2(RWF_DSYNC)", self.path, Some(at..end), errno)
                },
            )
        } else {
            write_at(&self.fd, self.path, bytes, offset)?;
            if self.method == SyncMethod::Fsync {
                sys::fsync(&self.fd).map_err(|e| file_io_err("fsync", self.path, e))
            } else {
                sys::fdatasync(&self.fd).map_err(|e| file_io_err("fdatasync", self.path, e))
            }
        }
    }
}

/// Opens the prepared file for `mode` and `method`; `Err(Ok(reason))` when
/// the method cannot run here (`O_DIRECT` refused, or records that are not
/// a multiple of the file's `O_DIRECT` alignment).
fn open_committer<'a>(
    p: &'a Path,
    mode: SpaceState,
    method: SyncMethod,
    opts: &CommitBenchOptions,
) -> std::result::Result<Committer<'a>, std::result::Result<crate::reason::Reason, Error>> {
    let record_size = opts.record_size;
    let direct = method.direct() || opts.direct_io == Some(true);
    let mut flags = if mode.appends() {
        OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::CLOEXEC
    } else {
        OFlags::WRONLY | OFlags::CLOEXEC
    };
    if direct {
        flags |= OFlags::DIRECT;
    }
    let fd = match sys::open(p, flags, 0o644) {
        Ok(fd) => fd,
        Err(e) if direct && e == Errno::INVAL => {
            return Err(Ok(crate::reason::Reason::unsupported(
                Some(e.raw_os_error()),
                format!(
                    "{method} with O_DIRECT: the filesystem refused O_DIRECT ({})",
                    std::io::Error::from_raw_os_error(e.raw_os_error())
                ),
            )))
        }
        Err(e) => return Err(Err(file_io_err("open", p, e))),
    };
    if direct {
        // Records go at multiples of their size, so the size must be a
        // multiple of what O_DIRECT needs here: the file's reported
        // alignment (512 B on the matrix's loop devices, where InnoDB
        // writes 512-byte log blocks), else a whole page.
        let (align, from) = match sys::dio_offset_align(&fd) {
            Ok(Some(0)) => {
                return Err(Ok(crate::reason::Reason::new(
                    crate::errno::ErrorKind::Unsupported,
                    format!("{method} with O_DIRECT: statx reports that this file does not support O_DIRECT"),
                )))
            }
            Ok(Some(a)) => (a as usize, "the file's O_DIRECT alignment (statx)"),
            Ok(None) => (
                crate::wal::WRITE_PAGE,
                "a page (the alignment is not reported here)",
            ),
            Err(e) => return Err(Err(file_io_err("statx", p, e))),
        };
        if !record_size.is_multiple_of(align) {
            return Err(Ok(crate::reason::Reason::new(
                crate::errno::ErrorKind::InvalidInput,
                format!("{method} with O_DIRECT needs records in multiples of {align} bytes, {from}: records of {record_size} bytes are not"),
            )));
        }
    }
    let aligned = direct.then(|| {
        let mut b = crate::zeros::PageBuf::new(record_size);
        b.copy_from_slice(&record(record_size));
        b
    });
    Ok(Committer {
        fd,
        path: p,
        method,
        aligned,
    })
}

/// A result that says why the mode could not run here; the figures are
/// zero.
fn unsupported(
    mode: SpaceState,
    opts: &CommitBenchOptions,
    why: crate::reason::Reason,
) -> CommitResult {
    let mut r = result(mode, opts, &[], 0.0, 0.0, vec![]);
    r.seconds = 0.0;
    r.commits_per_sec = 0.0;
    r.mib_per_sec = 0.0;
    r.unsupported = Some(why);
    r
}

pub(super) fn run_file(
    p: &Path,
    mode: SpaceState,
    opts: &CommitBenchOptions,
    cancel: Option<&AtomicBool>,
) -> Result<CommitResult> {
    let t0 = Instant::now();
    let method = opts
        .sync_methods
        .first()
        .copied()
        .unwrap_or(SyncMethod::Fdatasync);
    let mut notes = match prepare_file(p, mode, opts.file_size, cancel, opts.nocow) {
        Ok(n) => n,
        Err(e)
            if crate::errno::unsupported_raw(crate::errno::Call::Fallocate, e.raw_os_error()) =>
        {
            // The space state this mode needs cannot be made here (no
            // fallocate on ext3 or sshfs): say so instead of failing the run.
            return Ok(unsupported(mode, opts, e.unsupported_reason()));
        }
        Err(e) => return Err(e),
    };
    let setup = t0.elapsed().as_secs_f64();
    let c = match open_committer(p, mode, method, opts) {
        Ok(c) => c,
        Err(Ok(why)) => return Ok(unsupported(mode, opts, why)),
        Err(Err(e)) => return Err(e),
    };
    let rec = opts.record_size as u64;
    let slots = (opts.file_size / rec).max(1);
    let next = AtomicU64::new(0);
    let truncations = AtomicU64::new(0);
    let op = |buf: &[u8]| -> Result<Option<u64>> {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if opts.stop_at_end && i >= slots {
            return Ok(None);
        }
        if mode.appends() {
            if i > 0 && i.is_multiple_of(slots) {
                // Keep the file within --file-size: start again from empty
                // (with its reservation again, where it had one).
                sys::ftruncate(&c.fd, 0).map_err(|e| file_io_err("ftruncate", p, e))?;
                if mode == SpaceState::Preallocated {
                    reserve_past_end(&c.fd, p, opts.file_size)?;
                }
                truncations.fetch_add(1, Ordering::Relaxed);
            }
            // O_APPEND: Linux appends whatever the offset says.
            c.commit(buf, 0)?;
        } else {
            c.commit(buf, (i % slots) * rec)?;
        }
        Ok(Some(0))
    };
    // Read around the commits only: preparing the file flushes too.
    let counter = FlushCounter::of(p);
    let before = counter.start();
    let (lat, secs) = run_threads(opts, cancel, &op)?;
    let direct = method.per_write() && (method.direct() || opts.direct_io == Some(true));
    let flushes = before.finish(lat.len() as u64, lat.len() as u64, direct);
    few_samples(&mut notes, lat.len());
    pass_notes(&mut notes, mode, opts, lat.len() as u64, slots);
    let t = truncations.load(Ordering::Relaxed);
    if t > 0 {
        notes.push(Note::new(
            NoteKind::Truncated,
            format!(
                "the append file was truncated to empty {t} time(s) to stay within --file-size"
            ),
        ));
    }
    let mut r = result(mode, opts, &lat, secs, setup, notes);
    r.flushes = Some(flushes);
    Ok(r)
}

/// Says whether the run stopped at the end of the file or wrapped around
/// it (`n` commits into `slots` record slots).
fn pass_notes(
    notes: &mut Vec<Note>,
    mode: SpaceState,
    opts: &CommitBenchOptions,
    n: u64,
    slots: u64,
) {
    let wraps = n / slots;
    if opts.stop_at_end && n >= slots {
        notes.push(Note::new(
            NoteKind::OnePass,
            format!(
                "stopped after one pass through the {} file ({n} commits): the space it was prepared with was used up",
                crate::units::format_human(opts.file_size),
            ),
        ));
    } else if !mode.appends() && wraps > 0 {
        notes.push(Note::new(
            NoteKind::WrappedAround,
            format!(
                "the run wrapped around the {} file {wraps} time(s): later passes overwrote written blocks",
                crate::units::format_human(opts.file_size)
            ),
        ));
    }
}
