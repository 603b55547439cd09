//! Filesystem facts and capabilities: `fspace_fs_info_*`.

use crate::abi;
use crate::ffi::{arg, c_string, ffi, json_string, out, path_arg, CResult, Failure};
use fspace::{FsInfo, Intent, Strategy, StrategyChoice};
use std::ffi::{c_char, c_int, CString};

/// A capability, for `fspace_fs_info_capability`.
pub type fspace_capability = u32;
/// `fallocate` mode 0.
pub const FSPACE_CAP_FALLOCATE: fspace_capability = 0;
/// `fallocate(FALLOC_FL_KEEP_SIZE)`.
pub const FSPACE_CAP_KEEP_SIZE: fspace_capability = 1;
/// `fallocate(FALLOC_FL_PUNCH_HOLE)`.
pub const FSPACE_CAP_PUNCH_HOLE: fspace_capability = 2;
/// `fallocate(FALLOC_FL_ZERO_RANGE)`.
pub const FSPACE_CAP_ZERO_RANGE: fspace_capability = 3;
/// `fallocate(FALLOC_FL_WRITE_ZEROES)`.
pub const FSPACE_CAP_WRITE_ZEROES: fspace_capability = 4;
/// `lseek(SEEK_HOLE)` that reports holes.
pub const FSPACE_CAP_SEEK_HOLE: fspace_capability = 5;
/// `FS_IOC_FIEMAP`.
pub const FSPACE_CAP_FIEMAP: fspace_capability = 6;
/// `FICLONE` (reflink).
pub const FSPACE_CAP_FICLONE: fspace_capability = 7;

/// A growth strategy (`FSPACE_STRATEGY_*`).
pub type fspace_strategy = u32;
/// Let the `auto` policy choose by filesystem and intent.
pub const FSPACE_STRATEGY_AUTO: fspace_strategy = 0;
/// `ftruncate`: the new range is a hole.
pub const FSPACE_STRATEGY_SPARSE: fspace_strategy = 1;
/// `fallocate(KEEP_SIZE)`: blocks reserved past EOF; the length stays.
pub const FSPACE_STRATEGY_RESERVE: fspace_strategy = 2;
/// `fallocate` mode 0: unwritten blocks, length extended.
pub const FSPACE_STRATEGY_ALLOCATE: fspace_strategy = 3;
/// `fallocate(FALLOC_FL_WRITE_ZEROES)`: written zeroed blocks.
pub const FSPACE_STRATEGY_WRITE_ZEROES: fspace_strategy = 4;
/// Large zero writes from EOF: written blocks.
pub const FSPACE_STRATEGY_ZERO_FILL: fspace_strategy = 5;

/// What the space is for (`FSPACE_INTENT_*`).
pub type fspace_intent = u32;
/// Written once, soon (restores, copies).
pub const FSPACE_INTENT_BULK: fspace_intent = 0;
/// Overwritten by small records with `fdatasync`: needs written blocks.
pub const FSPACE_INTENT_LOG: fspace_intent = 1;
/// May stay empty: only the length changes.
pub const FSPACE_INTENT_SPARSE: fspace_intent = 2;

pub(crate) fn strategy_from_c(func: &str, s: fspace_strategy) -> CResult<Option<Strategy>> {
    Ok(Some(match s {
        FSPACE_STRATEGY_AUTO => return Ok(None),
        FSPACE_STRATEGY_SPARSE => Strategy::Sparse,
        FSPACE_STRATEGY_RESERVE => Strategy::Reserve,
        FSPACE_STRATEGY_ALLOCATE => Strategy::Allocate,
        FSPACE_STRATEGY_WRITE_ZEROES => Strategy::WriteZeroes,
        FSPACE_STRATEGY_ZERO_FILL => Strategy::ZeroFill,
        other => return Err(Failure::invalid(func, format!("unknown strategy {other}"))),
    }))
}

/// The choice the C options' three fields make: a named strategy (with its
/// fallbacks when `fallback`), or the policy, following the state
/// directory's saved measurements when `use_saved`.
pub(crate) fn choice_from_c(
    func: &str,
    s: fspace_strategy,
    fallback: bool,
    use_saved: bool,
) -> CResult<StrategyChoice> {
    Ok(match strategy_from_c(func, s)? {
        Some(s) if fallback => StrategyChoice::with_fallbacks(s),
        Some(s) => StrategyChoice::exactly(s),
        None if use_saved => StrategyChoice::auto_from_state_dir(),
        None => StrategyChoice::built_in(),
    })
}

pub(crate) fn strategy_to_c(s: Strategy) -> fspace_strategy {
    match s {
        Strategy::Sparse => FSPACE_STRATEGY_SPARSE,
        Strategy::Reserve => FSPACE_STRATEGY_RESERVE,
        Strategy::Allocate => FSPACE_STRATEGY_ALLOCATE,
        Strategy::WriteZeroes => FSPACE_STRATEGY_WRITE_ZEROES,
        Strategy::ZeroFill => FSPACE_STRATEGY_ZERO_FILL,
    }
}

pub(crate) fn intent_from_c(func: &str, i: fspace_intent) -> CResult<Intent> {
    match i {
        FSPACE_INTENT_BULK => Ok(Intent::Bulk),
        FSPACE_INTENT_LOG => Ok(Intent::Log),
        FSPACE_INTENT_SPARSE => Ok(Intent::Sparse),
        other => Err(Failure::invalid(func, format!("unknown intent {other}"))),
    }
}

/// Returns the name of a strategy (`"zero-fill"`, ...; `"auto"` for
/// `FSPACE_STRATEGY_AUTO`), or NULL for an unknown value. Static storage.
#[no_mangle]
pub extern "C" fn fspace_strategy_name(strategy: fspace_strategy) -> *const c_char {
    match strategy {
        FSPACE_STRATEGY_AUTO => c"auto".as_ptr(),
        FSPACE_STRATEGY_SPARSE => c"sparse".as_ptr(),
        FSPACE_STRATEGY_RESERVE => c"reserve".as_ptr(),
        FSPACE_STRATEGY_ALLOCATE => c"allocate".as_ptr(),
        FSPACE_STRATEGY_WRITE_ZEROES => c"write-zeroes".as_ptr(),
        FSPACE_STRATEGY_ZERO_FILL => c"zero-fill".as_ptr(),
        _ => std::ptr::null(),
    }
}

/// What the filesystem under a path is (an opaque handle).
pub struct fspace_fs_info {
    info: FsInfo,
    name: CString,
    mount_point: CString,
    source: CString,
    json: Option<CString>,
}

/// The facts of an `fspace_fs_info`. The strings belong to the handle and
/// stay valid until `fspace_fs_info_free`.
#[repr(C)]
pub struct fspace_fs_facts {
    /// Filesystem name: `"ext4"`, `"xfs"`, `"fuse.sshfs"`, ...
    pub fs_type: *const c_char,
    /// Mount point, or `""` when unknown.
    pub mount_point: *const c_char,
    /// Mount source (device, `host:path`), or `""` when unknown.
    pub source: *const c_char,
    /// `statfs` `f_type`.
    pub magic: u64,
    /// Preferred I/O size (`f_bsize`).
    pub block_size: u64,
    /// Size of the filesystem in bytes.
    pub total_bytes: u64,
    /// Bytes available to unprivileged users.
    pub free_bytes: u64,
    /// Bytes free including the part reserved for root.
    pub free_bytes_root: u64,
    /// Mounted read-only.
    pub read_only: bool,
    /// Copy-on-write (btrfs, zfs, bcachefs).
    pub copy_on_write: bool,
    /// Network or FUSE filesystem.
    pub network: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 5],
}

/// Describes the filesystem under `path` (a file or a directory) and
/// measures its capabilities, cached per filesystem for the process. On
/// success `*out` is a new handle for `fspace_fs_info_free`.
///
/// Errors: `-EINVAL` (NULL argument), `-ENOENT`, `-EACCES` and the other
/// errors of `statfs`.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_fs_info_new(
    path: *const c_char,
    out: *mut *mut fspace_fs_info,
) -> c_int {
    const F: &str = "fspace_fs_info_new";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (path, out) = unsafe { (path_arg(F, "path", path)?, crate::ffi::out(F, "out", out)?) };
        let info = fspace::fs_info(&path)?;
        let handle = Box::new(fspace_fs_info {
            name: c_string(info.display_name()),
            mount_point: c_string(
                info.mount_point
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
            source: c_string(info.source.clone().unwrap_or_default()),
            info,
            json: None,
        });
        out.set(Box::into_raw(handle));
        Ok(0)
    })
}

/// Frees a handle from `fspace_fs_info_new`; NULL does nothing.
///
/// # Safety
/// `info` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_fs_info_free(info: *mut fspace_fs_info) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::ffi::free_handle(info) }
}

/// Writes the facts of `info` to `*out`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// `-EINVAL` also for `out_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `info` is NULL or a live handle; `out` is NULL or writable for `out_size` bytes (`sizeof *out`).
#[no_mangle]
pub unsafe extern "C" fn fspace_fs_info_get(
    info: *const fspace_fs_info,
    out: *mut fspace_fs_facts,
    out_size: usize,
) -> c_int {
    const F: &str = "fspace_fs_info_get";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, out) = unsafe {
            (
                arg(F, "info", info)?,
                abi::sized_out(F, "out", out, out_size)?,
            )
        };
        let i = &h.info;
        out.set(fspace_fs_facts {
            reserved: [0; 5],
            fs_type: h.name.as_ptr(),
            mount_point: h.mount_point.as_ptr(),
            source: h.source.as_ptr(),
            magic: i.magic,
            block_size: i.block_size,
            total_bytes: i.total_bytes,
            free_bytes: i.free_bytes,
            free_bytes_root: i.free_bytes_root,
            read_only: i.read_only,
            copy_on_write: i.copy_on_write,
            network: i.network,
        });
        Ok(0)
    })
}

/// Writes to `*supported` whether the filesystem supports `capability`
/// (`FSPACE_CAP_*`), as measured on a scratch file in the directory.
///
/// Errors: `-EINVAL` (NULL argument, unknown capability); `-ENODATA` when
/// the capabilities could not be measured (a read-only or full filesystem,
/// no write permission); `fspace_last_error` says why.
///
/// # Safety
/// `info` is NULL or a live handle; `supported` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_fs_info_capability(
    info: *const fspace_fs_info,
    capability: fspace_capability,
    supported: *mut bool,
) -> c_int {
    const F: &str = "fspace_fs_info_capability";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, supported) = unsafe { (arg(F, "info", info)?, out(F, "supported", supported)?) };
        let named_index = usize::try_from(capability).unwrap_or(usize::MAX);
        let caps = h.info.capabilities.as_ref().map_err(|why| {
            Failure::new(
                61, // ENODATA
                format!(
                    "{F}({}): capabilities unknown: {why}",
                    h.info.path.display()
                ),
            )
        });
        let names = match caps {
            Ok(c) => c.named(),
            Err(f) if named_index < 8 => return Err(f),
            Err(_) => {
                return Err(Failure::invalid(
                    F,
                    format!("unknown capability {capability}"),
                ))
            }
        };
        let (_, cap) = names
            .get(named_index)
            .ok_or_else(|| Failure::invalid(F, format!("unknown capability {capability}")))?;
        supported.set(cap.supported);
        Ok(0)
    })
}

/// Writes to `*strategy` the strategy the `auto` policy tries first for
/// `intent` (`FSPACE_INTENT_*`) on this filesystem, following a result
/// saved by `fspace probe --save` where one matches.
///
/// Errors: `-EINVAL` (NULL argument, unknown intent).
///
/// # Safety
/// `info` is NULL or a live handle; `strategy` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_fs_info_auto_strategy(
    info: *const fspace_fs_info,
    intent: fspace_intent,
    strategy: *mut fspace_strategy,
) -> c_int {
    const F: &str = "fspace_fs_info_auto_strategy";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, strategy) = unsafe { (arg(F, "info", info)?, out(F, "strategy", strategy)?) };
        let intent = intent_from_c(F, intent)?;
        let plan = fspace::plan(&h.info, intent, &StrategyChoice::auto_from_state_dir());
        strategy.set(strategy_to_c(plan.first()));
        Ok(0)
    })
}

/// Writes to `*json` the whole description as JSON (the document `fspace
/// info --json` prints), owned by the handle until
/// `fspace_fs_info_free`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `info` is NULL or a live handle not used by another thread now; `json`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_fs_info_json(
    info: *mut fspace_fs_info,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_fs_info_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (h, json) = unsafe { (crate::ffi::arg_mut(F, "info", info)?, out(F, "json", json)?) };
        if h.json.is_none() {
            h.json = Some(json_string(F, &h.info)?);
        }
        json.set(h.json.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()));
        Ok(0)
    })
}

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_fs_facts = 72,
}
