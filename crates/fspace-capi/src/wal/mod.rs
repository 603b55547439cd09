//! The segmented durable log: `fspace_wal_*`.
//!
//! This file holds the log's types: the options and their conversion, the
//! handles and the output structs. They stay in this module, not in the
//! files of its functions, because the ABI baseline names each C struct
//! by its Rust path (`fspace_capi::wal::fspace_wal_options`): a move would
//! read there as a changed type. The functions are in `log` (the writable
//! log), `reader` (reading records) and `view` (the read-only look); the
//! crate root re-exports them, so that this file, which they import, does
//! not import them back.

// cbindgen writes the functions in the order it reads these modules: the
// header's order.
pub(crate) mod log;
pub(crate) mod reader;
pub(crate) mod view;

use crate::abi;
use crate::ffi::{ffi, CResult, Failure};
use crate::info::{choice_from_c, fspace_strategy};
use fspace::wal::{Record, WalReader, WalView};
use fspace::{StrategyChoice, Wal, WalOptions};
use std::ffi::{c_int, CString};

/// Options of `fspace_wal_open`. Always set the defaults with
/// `fspace_wal_options_init(&options, sizeof options)` before changing
/// fields: a zeroed struct is not the defaults, and its `size` is refused.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_wal_options {
    /// The size of this struct as the program was built (set by
    /// `fspace_wal_options_init`): the library reads only the fields it
    /// covers.
    pub size: u32,
    /// Segments kept ready ahead of the writer (default 2).
    pub prepare_ahead: u32,
    /// Size of new segments: a multiple of 4 KiB, at least 64 KiB (default
    /// 16 MiB). Existing segments keep theirs.
    pub segment_size: u64,
    /// Released segments kept for reuse (default 4).
    pub recycle_pool: u32,
    /// How new segments are grown: `FSPACE_STRATEGY_*`; default
    /// `FSPACE_STRATEGY_AUTO` (the `auto` policy for intent `log`).
    pub prepare_strategy: fspace_strategy,
    /// Write records with `O_DIRECT`: -1 decides by filesystem (default),
    /// 0 never, 1 where the filesystem accepts it.
    pub direct_io: i32,
    /// Let `auto` preparation follow a result saved by `fspace probe
    /// --save` (default true).
    pub use_saved: bool,
    /// How a commit is made durable: `FSPACE_SYNC_*`; default
    /// `FSPACE_SYNC_AUTO` (the policy's choice for the filesystem).
    pub sync_method: fspace_sync_method,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 2],
}

/// How a commit is made durable (`fspace_wal_options.sync_method`).
pub type fspace_sync_method = u8;
/// The method a saved probe measured fastest on the filesystem (with
/// `use_saved`), else the policy's choice: O_DIRECT + RWF_DSYNC on ext4
/// and xfs, fdatasync elsewhere.
pub const FSPACE_SYNC_AUTO: fspace_sync_method = 0;
/// Buffered writes, one `fdatasync` per commit group.
pub const FSPACE_SYNC_FDATASYNC: fspace_sync_method = 1;
/// `pwritev2(RWF_DSYNC)`: each write durable when it returns.
pub const FSPACE_SYNC_DSYNC: fspace_sync_method = 2;
/// `O_DIRECT` + `RWF_DSYNC` (FUA where the device has it).
pub const FSPACE_SYNC_DIRECT_DSYNC: fspace_sync_method = 3;
/// Buffered writes, one `fsync` per commit group (as fdatasync, and the
/// inode's times too; for comparison, a log never needs it).
pub const FSPACE_SYNC_FSYNC: fspace_sync_method = 4;

/// Sets `*options`, a struct of `size` bytes (`sizeof options`), to the
/// defaults, and its `size` field to `size`.
///
/// Errors: `-EINVAL` (NULL argument, or a size smaller than the first
/// version of the struct).
///
/// # Safety
/// `options` is NULL or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn fspace_wal_options_init(
    options: *mut fspace_wal_options,
    size: usize,
) -> c_int {
    const F: &str = "fspace_wal_options_init";
    // SAFETY: forwarded caller promise.
    ffi(F, || unsafe { abi::init(F, options, size) }.map(|()| 0))
}

// SAFETY: `WalOptionsRaw` has the struct's layout (asserted below), with
// integers only.
unsafe impl abi::Options for fspace_wal_options {
    type Raw = WalOptionsRaw;
    const FIRST: usize = 32;
    const INIT: &'static str = "fspace_wal_options_init";
    // From the layout, not typed in: the bytes from `reserved` to the
    // next field (or the struct's end).
    const RESERVED: &'static [(usize, usize)] = &[(
        std::mem::offset_of!(fspace_wal_options, reserved),
        size_of::<fspace_wal_options>() - std::mem::offset_of!(fspace_wal_options, reserved),
    )];
    fn defaults() -> Self {
        let d = WalOptions::default();
        fspace_wal_options {
            reserved: [0; 2],
            size: 0,
            prepare_ahead: u32::try_from(d.prepare_ahead).unwrap_or(u32::MAX),
            segment_size: d.segment_size,
            recycle_pool: u32::try_from(d.recycle_pool).unwrap_or(u32::MAX),
            prepare_strategy: crate::info::FSPACE_STRATEGY_AUTO,
            direct_io: -1,
            use_saved: true,
            sync_method: FSPACE_SYNC_AUTO,
        }
    }
}

/// `fspace_wal_options` with its `bool` read as a byte (see
/// `GrowOptionsRaw` in resize.rs).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct WalOptionsRaw {
    size: u32,
    prepare_ahead: u32,
    segment_size: u64,
    recycle_pool: u32,
    prepare_strategy: fspace_strategy,
    direct_io: i32,
    use_saved: u8,
    sync_method: u8,
    reserved: [u8; 2],
}

// Same layout as the public struct, field by field; the released size.
const _: () = assert!(
    size_of::<WalOptionsRaw>() == size_of::<fspace_wal_options>()
        && align_of::<WalOptionsRaw>() == align_of::<fspace_wal_options>()
        && std::mem::offset_of!(WalOptionsRaw, size)
            == std::mem::offset_of!(fspace_wal_options, size)
        && std::mem::offset_of!(WalOptionsRaw, segment_size)
            == std::mem::offset_of!(fspace_wal_options, segment_size)
        && std::mem::offset_of!(WalOptionsRaw, prepare_ahead)
            == std::mem::offset_of!(fspace_wal_options, prepare_ahead)
        && std::mem::offset_of!(WalOptionsRaw, recycle_pool)
            == std::mem::offset_of!(fspace_wal_options, recycle_pool)
        && std::mem::offset_of!(WalOptionsRaw, prepare_strategy)
            == std::mem::offset_of!(fspace_wal_options, prepare_strategy)
        && std::mem::offset_of!(WalOptionsRaw, direct_io)
            == std::mem::offset_of!(fspace_wal_options, direct_io)
        && std::mem::offset_of!(WalOptionsRaw, use_saved)
            == std::mem::offset_of!(fspace_wal_options, use_saved)
        && std::mem::offset_of!(WalOptionsRaw, sync_method)
            == std::mem::offset_of!(fspace_wal_options, sync_method)
        && std::mem::offset_of!(WalOptionsRaw, reserved)
            == std::mem::offset_of!(fspace_wal_options, reserved)
        && size_of::<fspace_wal_options>() == <fspace_wal_options as abi::Options>::FIRST
);

fn wal_options(func: &str, o: Option<WalOptionsRaw>) -> CResult<WalOptions> {
    let mut w = WalOptions::default().prepare(StrategyChoice::auto_from_state_dir());
    if let Some(o) = o {
        w.sync_method = match o.sync_method {
            FSPACE_SYNC_AUTO => None,
            FSPACE_SYNC_FDATASYNC => Some(fspace::SyncMethod::Fdatasync),
            FSPACE_SYNC_DSYNC => Some(fspace::SyncMethod::Dsync),
            FSPACE_SYNC_DIRECT_DSYNC => Some(fspace::SyncMethod::DirectDsync),
            FSPACE_SYNC_FSYNC => Some(fspace::SyncMethod::Fsync),
            v => {
                return Err(Failure::invalid(
                    func,
                    format!("sync_method {v} is not one of FSPACE_SYNC_*"),
                ))
            }
        };
        w.segment_size = o.segment_size;
        w.prepare_ahead = o.prepare_ahead as usize;
        w.recycle_pool = o.recycle_pool as usize;
        // A named strategy falls back to its equivalents, as the log's
        // preparer always did.
        w.prepare = choice_from_c(func, o.prepare_strategy, true, o.use_saved != 0)?;
        w.direct_io = match o.direct_io {
            -1 => None,
            0 => Some(false),
            1 => Some(true),
            v => {
                return Err(Failure::invalid(
                    func,
                    format!("direct_io {v} is not -1, 0 or 1"),
                ))
            }
        };
    }
    Ok(w)
}

/// A segmented durable log (an opaque handle). Append, commit, sync and
/// the accessors may be called from many threads at once; close and free
/// only once no other call is running.
pub struct fspace_wal {
    wal: Wal,
}

/// What opening a log found, from `fspace_wal_recovery`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_wal_recovery_info {
    /// The log was created by this open.
    pub created: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 7],
    /// Live segments found.
    pub segments: u64,
    /// Valid records found.
    pub records: u64,
    /// LSN of the oldest record kept.
    pub first_lsn: u64,
    /// LSN the next record gets.
    pub next_lsn: u64,
    /// Bytes after the last valid record that were discarded (a torn
    /// write), 0 if none.
    pub discarded_bytes: u64,
}

/// What `fspace_wal_release_before` did.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_wal_release_info {
    /// Segments moved to the recycle pool.
    pub recycled: u64,
    /// Segments deleted.
    pub deleted: u64,
}

/// Reads a log's durable records in LSN order, verifying each (an opaque
/// handle; one thread at a time).
pub struct fspace_wal_reader {
    reader: WalReader,
    current: Option<Record>,
}

/// A read-only look at a log (an opaque handle): made by
/// `fspace_wal_view_open`, read with `fspace_wal_view_reader_new`, freed by
/// `fspace_wal_view_free`.
pub struct fspace_wal_view {
    view: WalView,
    json: CString,
    damage: Option<CString>,
}

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_wal_recovery_info = 48,
    fspace_wal_release_info = 16,
}
