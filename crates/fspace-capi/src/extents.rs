//! The extent map: `fspace_extent_map_*`.

use crate::abi;
use crate::ffi::{arg, ffi, json_string, out, path_arg, Failure};
use fspace::{ExtentMap, ExtentState, MapMethod, MapOptions};
use std::ffi::{c_char, c_int, CString};

/// The state of a range (`FSPACE_EXTENT_*`).
pub type fspace_extent_state = u32;
/// No blocks; reads as zeros.
pub const FSPACE_EXTENT_HOLE: fspace_extent_state = 0;
/// Allocated, flagged "reads as zero"; the first write converts it.
pub const FSPACE_EXTENT_UNWRITTEN: fspace_extent_state = 1;
/// Allocated blocks holding bytes (zeros included).
pub const FSPACE_EXTENT_WRITTEN: fspace_extent_state = 2;
/// Blocks shared with another file (reflink, snapshot).
pub const FSPACE_EXTENT_SHARED: fspace_extent_state = 3;
/// Dirty data not yet given blocks (delayed allocation).
pub const FSPACE_EXTENT_DELALLOC: fspace_extent_state = 4;
/// Data stored inside the inode or metadata.
pub const FSPACE_EXTENT_INLINE: fspace_extent_state = 5;
/// Data, written or unwritten (`SEEK_DATA` cannot tell).
pub const FSPACE_EXTENT_DATA: fspace_extent_state = 6;
/// Encoded or otherwise unusual data.
pub const FSPACE_EXTENT_OTHER: fspace_extent_state = 7;

/// Flag of `fspace_extent_map_new`: flush dirty data first so delayed
/// allocations show as the extents they become.
pub const FSPACE_MAP_SYNC: u32 = 1;
/// Flag of `fspace_extent_map_new`: use `SEEK_DATA`/`SEEK_HOLE` even where
/// FIEMAP works.
pub const FSPACE_MAP_FORCE_SEEK: u32 = 2;

/// One range of a file in one state.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_extent {
    /// Start, in bytes.
    pub offset: u64,
    /// Length, in bytes.
    pub length: u64,
    /// `FSPACE_EXTENT_*`.
    pub state: fspace_extent_state,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 4],
}

/// Byte totals of a map. Fields that the method could not measure are
/// `UINT64_MAX` (`SEEK_DATA` cannot tell written from unwritten).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fspace_extent_summary {
    /// File length.
    pub size: u64,
    /// Bytes backed by blocks (or dirty data) within the length
    /// (`UINT64_MAX` where `st_blocks` does not measure allocation).
    pub allocated: u64,
    /// Written bytes.
    pub written: u64,
    /// Unwritten bytes.
    pub unwritten: u64,
    /// Bytes in holes (`UINT64_MAX` where the filesystem cannot show them:
    /// FUSE, network filesystems).
    pub holes: u64,
    /// Shared bytes.
    pub shared: u64,
    /// Delayed-allocation bytes.
    pub delalloc: u64,
    /// Number of extents (holes excluded).
    pub extents: u64,
    /// Bytes allocated past EOF (reserved with `KEEP_SIZE`).
    pub beyond_eof: u64,
    /// True when the map came from FIEMAP, false from `SEEK_DATA`/`SEEK_HOLE`.
    pub fiemap: bool,
    /// Zero: bytes that would otherwise be padding, spelled out so that
    /// every byte of the struct is a field (docs/capi.md, "Structs that
    /// grow"). Never reused: a new field goes after the last one.
    pub reserved: [u8; 7],
}

/// A file's extents (an opaque handle).
pub struct fspace_extent_map {
    map: ExtentMap,
    json: Option<CString>,
}

fn state_to_c(s: ExtentState) -> fspace_extent_state {
    match s {
        ExtentState::Hole => FSPACE_EXTENT_HOLE,
        ExtentState::Unwritten => FSPACE_EXTENT_UNWRITTEN,
        ExtentState::Written => FSPACE_EXTENT_WRITTEN,
        ExtentState::Shared => FSPACE_EXTENT_SHARED,
        ExtentState::Delalloc => FSPACE_EXTENT_DELALLOC,
        ExtentState::Inline => FSPACE_EXTENT_INLINE,
        ExtentState::Data => FSPACE_EXTENT_DATA,
        ExtentState::Other => FSPACE_EXTENT_OTHER,
    }
}

/// Maps the regular file at `path` into holes, unwritten, written and shared
/// ranges, covering `0..size` in order. `flags` is 0 or `FSPACE_MAP_*`
/// combined. On success `*out` is a new handle for
/// `fspace_extent_map_free`.
///
/// Errors: `-EINVAL` (NULL argument, unknown flag, not a regular file);
/// `-EISDIR`; `-ENOENT` and the other errors of `open`, `FS_IOC_FIEMAP` and
/// `lseek`.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_extent_map_new(
    path: *const c_char,
    flags: u32,
    out: *mut *mut fspace_extent_map,
) -> c_int {
    const F: &str = "fspace_extent_map_new";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (path, o) = unsafe { (path_arg(F, "path", path)?, crate::ffi::out(F, "out", out)?) };
        if flags & !(FSPACE_MAP_SYNC | FSPACE_MAP_FORCE_SEEK) != 0 {
            return Err(Failure::invalid(F, format!("unknown flags {flags:#x}")));
        }
        let opts = MapOptions::default()
            .sync(flags & FSPACE_MAP_SYNC != 0)
            .force_seek(flags & FSPACE_MAP_FORCE_SEEK != 0);
        let map = fspace::map_file(&path, opts)?;
        o.set(Box::into_raw(Box::new(fspace_extent_map {
            map,
            json: None,
        })));
        Ok(0)
    })
}

/// Frees a map; NULL does nothing.
///
/// # Safety
/// `map` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fspace_extent_map_free(map: *mut fspace_extent_map) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::ffi::free_handle(map) }
}

/// Writes the number of ranges (holes included) to `*count`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `map` is NULL or a live handle; `count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_extent_map_count(
    map: *const fspace_extent_map,
    count: *mut usize,
) -> c_int {
    const F: &str = "fspace_extent_map_count";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (m, c) = unsafe { (arg(F, "map", map)?, out(F, "count", count)?) };
        c.set(m.map.extents.len());
        Ok(0)
    })
}

/// Writes range number `index` (from 0) to `*extent`.
///
/// Errors: `-EINVAL` (NULL argument); `-ERANGE` (`index` not below the
/// count).
///
/// `-EINVAL` also for `extent_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `map` is NULL or a live handle; `extent` is NULL or writable for `extent_size` bytes (`sizeof *extent`).
#[no_mangle]
pub unsafe extern "C" fn fspace_extent_map_get(
    map: *const fspace_extent_map,
    index: usize,
    extent: *mut fspace_extent,
    extent_size: usize,
) -> c_int {
    const F: &str = "fspace_extent_map_get";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (m, e) = unsafe {
            (
                arg(F, "map", map)?,
                abi::sized_out(F, "extent", extent, extent_size)?,
            )
        };
        let x = m.map.extents.get(index).ok_or_else(|| {
            Failure::new(
                34, // ERANGE
                format!(
                    "{F}: index {index} is past the {} ranges: Numerical result out of range (os error 34)",
                    m.map.extents.len()
                ),
            )
        })?;
        e.set(fspace_extent {
            reserved: [0; 4],
            offset: x.offset,
            length: x.length,
            state: state_to_c(x.state),
        });
        Ok(0)
    })
}

/// Writes the byte totals to `*summary`.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// `-EINVAL` also for `summary_size` that is no version of its struct (less
/// than its first version, or over 4096): nothing is done or written.
///
/// # Safety
/// `map` is NULL or a live handle; `summary` is NULL or writable for `summary_size` bytes (`sizeof *summary`).
#[no_mangle]
pub unsafe extern "C" fn fspace_extent_map_summary(
    map: *const fspace_extent_map,
    summary: *mut fspace_extent_summary,
    summary_size: usize,
) -> c_int {
    const F: &str = "fspace_extent_map_summary";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (m, o) = unsafe {
            (
                arg(F, "map", map)?,
                abi::sized_out(F, "summary", summary, summary_size)?,
            )
        };
        let s = &m.map.summary;
        let unknown = |v: Option<u64>| v.unwrap_or(u64::MAX);
        o.set(fspace_extent_summary {
            reserved: [0; 7],
            size: s.size,
            allocated: unknown(s.allocated),
            written: unknown(s.written),
            unwritten: unknown(s.unwritten),
            holes: unknown(s.holes),
            shared: unknown(s.shared),
            delalloc: unknown(s.delalloc),
            extents: s.extents,
            beyond_eof: unknown(s.beyond_eof),
            fiemap: m.map.method == MapMethod::Fiemap,
        });
        Ok(0)
    })
}

/// Writes to `*json` the map as JSON (as `fspace map --json` prints it);
/// owned by the map.
///
/// Errors: `-EINVAL` (NULL argument).
///
/// # Safety
/// `map` is NULL or a live handle not used by another thread now; `json`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fspace_extent_map_json(
    map: *mut fspace_extent_map,
    json: *mut *const c_char,
) -> c_int {
    const F: &str = "fspace_extent_map_json";
    ffi(F, || {
        // SAFETY: forwarded caller promises.
        let (m, o) = unsafe { (crate::ffi::arg_mut(F, "map", map)?, out(F, "json", json)?) };
        if m.json.is_none() {
            m.json = Some(json_string(F, &m.map)?);
        }
        o.set(m.json.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()));
        Ok(0)
    })
}

// The output structs of this room and their sizes as released: C programs
// pass their sizeof (docs/capi.md, "Structs that grow").
abi::released! {
    fspace_extent = 24,
    fspace_extent_summary = 80,
}
