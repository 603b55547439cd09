//! The extent map of a file: which byte ranges are holes, unwritten,
//! written, shared or still delayed-allocated.
//!
//! FIEMAP is the source of truth. Where it is missing (tmpfs, most FUSE
//! filesystems) the map falls back to `SEEK_DATA`/`SEEK_HOLE`, which can tell
//! holes from data but cannot tell written from unwritten blocks; the map says
//! so in [`ExtentMap::method`] and leaves `written`/`unwritten` unknown.

use crate::error::{Error, Result};
use crate::runs::DataRuns;
use crate::sys::{self, RawExtent};
use rustix::fd::AsFd;
use rustix::fs::OFlags;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The state of a byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtentState {
    /// No blocks; reads as zeros.
    Hole,
    /// Allocated blocks flagged "reads as zero"; the first write converts them.
    Unwritten,
    /// Allocated blocks holding real bytes (zeros included).
    Written,
    /// Blocks shared with another file (reflink / CoW snapshot).
    Shared,
    /// Dirty data whose blocks are not allocated yet (delayed allocation).
    Delalloc,
    /// Data stored inside the inode or metadata (btrfs, ext4 `inline_data`):
    /// small files; counted as written.
    Inline,
    /// Data, written or unwritten: `SEEK_DATA` cannot tell which.
    Data,
    /// Inline, encoded or otherwise unusual data.
    Other,
}

impl ExtentState {
    fn from_flags(flags: u32) -> ExtentState {
        if flags & sys::FIEMAP_EXTENT_DELALLOC != 0 {
            ExtentState::Delalloc
        } else if flags & sys::FIEMAP_EXTENT_SHARED != 0 {
            ExtentState::Shared
        } else if flags & sys::FIEMAP_EXTENT_UNWRITTEN != 0 {
            ExtentState::Unwritten
        } else if flags & sys::FIEMAP_EXTENT_DATA_INLINE != 0 {
            ExtentState::Inline
        } else if flags & sys::FIEMAP_EXTENT_UNKNOWN != 0 {
            ExtentState::Other
        } else {
            ExtentState::Written
        }
    }
}

/// One range of a file in one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Extent {
    /// Byte offset in the file.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// What the range holds.
    pub state: ExtentState,
}

impl Extent {
    /// Returns the end offset (exclusive).
    pub fn end(&self) -> u64 {
        self.offset + self.length
    }
}

/// How the map was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapMethod {
    /// `FS_IOC_FIEMAP`: every state is known.
    Fiemap,
    /// `SEEK_DATA`/`SEEK_HOLE`: holes vs data only.
    Seek,
}

/// Byte totals of an [`ExtentMap`], all within `0..size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[non_exhaustive]
pub struct Summary {
    /// File length.
    pub size: u64,
    /// Bytes backed by blocks or dirty data within the file's length;
    /// `None` where the filesystem does not say (FUSE and network
    /// filesystems without FIEMAP: their `st_blocks` is made up).
    pub allocated: Option<u64>,
    /// Written bytes, including shared and inline ones; `None` when unknown
    /// (seek method).
    pub written: Option<u64>,
    /// Unwritten bytes; `None` when unknown (seek method).
    pub unwritten: Option<u64>,
    /// Bytes in holes; `None` when the filesystem cannot show them
    /// (`SEEK_HOLE` found none where it may report every byte as data:
    /// FUSE such as sshfs, network filesystems).
    pub holes: Option<u64>,
    /// Shared (reflinked) bytes; `None` when unknown.
    pub shared: Option<u64>,
    /// Delayed-allocation bytes; `None` when unknown.
    pub delalloc: Option<u64>,
    /// Number of non-hole extents.
    pub extents: u64,
    /// Bytes allocated past the block holding EOF (`KEEP_SIZE`
    /// reservations, speculative preallocation); `None` when unknown.
    pub beyond_eof: Option<u64>,
    /// Bytes of unwritten extents that `SEEK_DATA` reports as data: the
    /// page cache holds pages over them, most often data written but not
    /// yet written back (the extent turns written when it is), else pages
    /// read while unwritten. Nonzero means the map shows the file as it
    /// stands on disk, not as it will: [`MapOptions::sync`] flushes the
    /// file first. `None` with `sync` or without FIEMAP.
    pub unwritten_cached: Option<u64>,
}

/// A file's extent map.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ExtentMap {
    /// How it was obtained.
    pub method: MapMethod,
    /// What the method cannot tell, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<crate::note::Note>,
    /// Ranges covering `0..size` in order, holes included.
    pub extents: Vec<Extent>,
    /// Totals.
    pub summary: Summary,
}

impl ExtentMap {
    /// Returns the bytes in state `state` within `range`.
    pub fn bytes_in(&self, state: ExtentState, range: std::ops::Range<u64>) -> u64 {
        self.extents
            .iter()
            .filter(|e| e.state == state)
            .map(|e| {
                e.end()
                    .min(range.end)
                    .saturating_sub(e.offset.max(range.start))
            })
            .sum()
    }
}

/// Options for [`map_file`].
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct MapOptions {
    /// Flush dirty data first (`FIEMAP_FLAG_SYNC`) so that delayed
    /// allocations show as the extents they become.
    pub sync: bool,
    /// Use `SEEK_DATA`/`SEEK_HOLE` even where FIEMAP works (for testing the
    /// fallback).
    pub force_seek: bool,
}

const SEEK_NOTE: &str = "FIEMAP is not available here: ranges come from SEEK_DATA/SEEK_HOLE, which cannot tell \
                         written from unwritten blocks, and may show allocated but never-written ranges as holes \
                         (tmpfs) or holes as data (filesystems without SEEK_HOLE support); `allocated` comes from \
                         st_blocks";

/// Maps the file at `path`.
pub fn map_file(path: impl AsRef<Path>, opts: MapOptions) -> Result<ExtentMap> {
    let path = path.as_ref();
    let fd = sys::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY, 0)
        .map_err(|e| Error::io("open", path, None, e))?;
    let st = sys::fstat(&fd).map_err(|e| Error::io("fstat", path, None, e))?;
    if !st.is_regular() {
        return Err(Error::not_regular("map", path, &st, None));
    }
    map_fd(&fd, path, st.size, opts)
}

/// Maps an open file of length `size`; `path` is used in errors only.
pub fn map_fd<Fd: AsFd>(fd: Fd, path: &Path, size: u64, opts: MapOptions) -> Result<ExtentMap> {
    let fd = fd.as_fd();
    if !opts.force_seek {
        match sys::fiemap(fd, 0, u64::MAX, opts.sync) {
            Ok(raw) => {
                let blksize = sys::fstat(fd)
                    .map_err(|e| Error::io("fstat", path, None, e))?
                    .blksize;
                let mut m = from_fiemap(&raw, size, blksize);
                if !opts.sync {
                    m.summary.unwritten_cached = Some(unwritten_cached(fd, path, &m)?);
                }
                return Ok(m);
            }
            Err(e) if crate::errno::unsupported(crate::errno::Call::Fiemap, e) => {}
            Err(e) => return Err(Error::io("ioctl(FIEMAP)", path, None, e)),
        }
    }
    from_seek(fd, path, size)
}

/// The bytes of `m`'s unwritten extents that `SEEK_DATA` reports as data.
/// ext4, xfs and btrfs answer `SEEK_DATA` over an unwritten extent from the
/// page cache, while FIEMAP reports the extent as it is on disk: a file
/// just written into fallocated space maps as unwritten until writeback.
fn unwritten_cached(fd: rustix::fd::BorrowedFd<'_>, path: &Path, m: &ExtentMap) -> Result<u64> {
    let mut cached = 0;
    for e in m
        .extents
        .iter()
        .filter(|e| e.state == ExtentState::Unwritten)
    {
        let mut runs = DataRuns::new(fd, path, e.offset..e.end());
        while let Some(run) = runs.next_run()? {
            cached += run.end - run.start;
        }
    }
    Ok(cached)
}

fn from_fiemap(raw: &[RawExtent], size: u64, blksize: u64) -> ExtentMap {
    let mut extents = Vec::new();
    let mut pos = 0u64;
    let mut beyond = 0u64;
    // The rest of the block holding EOF belongs to the file, not "past EOF".
    let bs = blksize.clamp(512, 1 << 20);
    let eof_block_end = size.div_ceil(bs).saturating_mul(bs);
    for r in raw {
        let start = r.logical;
        let end = r.logical.saturating_add(r.length);
        if end > eof_block_end {
            beyond += end - start.max(eof_block_end);
        }
        let (s, e) = (start.max(pos), end.min(size));
        if s >= e {
            continue;
        }
        if s > pos {
            extents.push(Extent {
                offset: pos,
                length: s - pos,
                state: ExtentState::Hole,
            });
        }
        extents.push(Extent {
            offset: s,
            length: e - s,
            state: ExtentState::from_flags(r.flags),
        });
        pos = e;
    }
    if pos < size {
        extents.push(Extent {
            offset: pos,
            length: size - pos,
            state: ExtentState::Hole,
        });
    }
    let mut m = ExtentMap {
        method: MapMethod::Fiemap,
        note: None,
        extents,
        summary: Summary::default(),
    };
    let sum = |st: ExtentState| {
        m.extents
            .iter()
            .filter(|e| e.state == st)
            .map(|e| e.length)
            .sum::<u64>()
    };
    let holes = sum(ExtentState::Hole);
    let shared = sum(ExtentState::Shared);
    m.summary = Summary {
        size,
        allocated: Some(size - holes),
        written: Some(sum(ExtentState::Written) + shared + sum(ExtentState::Inline)),
        unwritten: Some(sum(ExtentState::Unwritten)),
        holes: Some(holes),
        shared: Some(shared),
        delalloc: Some(sum(ExtentState::Delalloc)),
        extents: m
            .extents
            .iter()
            .filter(|e| e.state != ExtentState::Hole)
            .count() as u64,
        beyond_eof: Some(beyond),
        unwritten_cached: None,
    };
    m
}

fn from_seek(fd: rustix::fd::BorrowedFd<'_>, path: &Path, size: u64) -> Result<ExtentMap> {
    let blocks = sys::fstat(fd)
        .map_err(|e| Error::io("fstat", path, None, e))?
        .blocks;
    let kind = crate::fs_info::FsKind::from_magic(
        sys::fstatfs(fd)
            .map_err(|e| Error::io("fstatfs", path, None, e))?
            .magic,
    );
    // FUSE and network filesystems report st_blocks as they please (sshfs
    // derives it from the size), so their allocation is unknown.
    let remote = !kind.st_blocks_measures_allocation();
    let blind = crate::runs::seek_hole_may_be_blind(fd);
    let mut extents = Vec::new();
    let mut pos = 0u64;
    let mut runs = DataRuns::new(fd, path, 0..size);
    while let Some(run) = runs.next_run()? {
        if run.start > pos {
            extents.push(Extent {
                offset: pos,
                length: run.start - pos,
                state: ExtentState::Hole,
            });
        }
        extents.push(Extent {
            offset: run.start,
            length: run.end - run.start,
            state: ExtentState::Data,
        });
        pos = run.end;
    }
    if pos < size {
        extents.push(Extent {
            offset: pos,
            length: size - pos,
            state: ExtentState::Hole,
        });
    }
    let holes: u64 = extents
        .iter()
        .filter(|e| e.state == ExtentState::Hole)
        .map(|e| e.length)
        .sum();
    let n = extents
        .iter()
        .filter(|e| e.state != ExtentState::Hole)
        .count() as u64;
    Ok(ExtentMap {
        method: MapMethod::Seek,
        note: Some(crate::note::Note::new(
            crate::note::NoteKind::MapWithoutFiemap,
            SEEK_NOTE,
        )),
        extents,
        summary: Summary {
            size,
            // SEEK_DATA is about contents, not blocks: st_blocks is the
            // allocation (it may include blocks past EOF, hence the clamp).
            allocated: (!remote).then(|| blocks.saturating_mul(512).min(size)),
            written: None,
            unwritten: None,
            // No hole found where SEEK_HOLE may be blind proves nothing.
            holes: (holes > 0 || !blind || size == 0).then_some(holes),
            shared: None,
            delalloc: None,
            extents: n,
            beyond_eof: None,
            unwritten_cached: None,
        },
    })
}

/// The space a set of files takes: their length, what the filesystem
/// counts against them, and, on btrfs, the disk extents they pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[non_exhaustive]
pub struct SpaceUse {
    /// Files counted.
    pub files: u64,
    /// Sum of their lengths.
    pub logical_bytes: u64,
    /// Sum of `st_blocks` × 512: the bytes the files reference.
    pub allocated_bytes: u64,
    /// btrfs only: the whole disk extents the files reference, each
    /// counted once. Copy-on-write leaves an overwritten range's old extent
    /// allocated, whole, while any part of it is still referenced, so this
    /// can exceed `allocated_bytes`. Extents shared with a snapshot or a
    /// reflinked copy count too, though removing these files would not free
    /// them; compressed extents count their compressed size (`st_blocks`
    /// counts the uncompressed one). `None` elsewhere, or when the extent
    /// tree could not be read (it needs `CAP_SYS_ADMIN`).
    pub pinned_bytes: Option<u64>,
    /// On btrfs, why `pinned_bytes` could not be read (a process without
    /// `CAP_SYS_ADMIN` may not search the extent tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_unknown: Option<String>,
}

impl SpaceUse {
    /// On btrfs, the disk extents pinned per byte referenced (`None`
    /// elsewhere, or when nothing is referenced).
    pub fn pinned_ratio(&self) -> Option<f64> {
        let p = self.pinned_bytes?;
        (self.allocated_bytes > 0).then(|| p as f64 / self.allocated_bytes as f64)
    }

    /// The figures in a sentence, for the log's files.
    pub fn words(&self) -> String {
        use crate::units::format_human;
        let head = format!(
            "{} in {} files, {} referenced",
            format_human(self.logical_bytes),
            self.files,
            format_human(self.allocated_bytes)
        );
        match (self.pinned_bytes, self.pinned_ratio()) {
            (Some(p), Some(r)) if r > 1.05 => format!(
                "{head}, {} of disk extents pinned ({r:.2}x what is referenced): copy-on-write keeps an overwritten page's old extent, whole, while any of it is still referenced, until the segment is removed or recycled",
                format_human(p)
            ),
            (Some(p), _) => format!("{head}, {} of disk extents pinned", format_human(p)),
            (None, _) => match &self.pinned_unknown {
                Some(why) => format!("{head}; the disk extents they pin were not read: {why}"),
                None => head,
            },
        }
    }
}

/// Measures the space `paths` take (see [`SpaceUse`]). The files'
/// data should be synced first: on btrfs, dirty pages have no extent yet.
pub fn space_use(paths: &[std::path::PathBuf]) -> Result<SpaceUse> {
    let mut u = SpaceUse::default();
    // Disk extents by filesystem (its UUID: a subvolume has its own st_dev
    // and f_fsid, and extents are shared across subvolumes) and address.
    let mut disk: std::collections::HashMap<(Vec<u8>, u64), u64> = std::collections::HashMap::new();
    let mut pinned_ok = true;
    for path in paths {
        let fd = sys::open(path, OFlags::RDONLY | OFlags::NOCTTY, 0)
            .map_err(|e| Error::io("open", path, None, e))?;
        let st = sys::fstat(&fd).map_err(|e| Error::io("fstat", path, None, e))?;
        u.files += 1;
        u.logical_bytes += st.size;
        u.allocated_bytes += st.blocks * 512;
        if !pinned_ok {
            // One refusal (no CAP_SYS_ADMIN, another filesystem) settles
            // it: the total would be partial.
            continue;
        }
        let fs = sys::fstatfs(&fd).map_err(|e| Error::io("fstatfs", path, None, e))?;
        if fs.magic != sys::BTRFS_SUPER_MAGIC {
            pinned_ok = false;
            continue;
        }
        let uuid = sys::fs_uuid(&fd).unwrap_or_else(|_| st.dev.to_le_bytes().to_vec());
        match sys::btrfs_extents(&fd, st.ino) {
            Ok(items) => {
                for e in items.iter().filter(|e| e.disk_bytenr != 0) {
                    disk.insert((uuid.clone(), e.disk_bytenr), e.disk_num_bytes);
                }
            }
            Err(e) => {
                pinned_ok = false;
                u.pinned_unknown = Some(if e == rustix::io::Errno::PERM {
                    "searching btrfs's extent tree needs CAP_SYS_ADMIN (run as root to see them)"
                        .into()
                } else {
                    format!(
                        "BTRFS_IOC_TREE_SEARCH failed on {}: {}",
                        path.display(),
                        std::io::Error::from_raw_os_error(e.raw_os_error())
                    )
                });
            }
        }
    }
    if pinned_ok && u.files > 0 {
        u.pinned_bytes = Some(disk.values().sum());
    }
    Ok(u)
}

setters!(MapOptions {
    sync: bool,
    force_seek: bool
});

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(logical: u64, length: u64, flags: u32) -> RawExtent {
        RawExtent {
            logical,
            physical: 0,
            length,
            flags,
        }
    }

    #[test]
    fn fiemap_fills_holes_and_clips_at_eof() {
        let m = from_fiemap(
            &[
                raw(4096, 4096, 0),
                raw(
                    16384,
                    8192,
                    sys::FIEMAP_EXTENT_UNWRITTEN | sys::FIEMAP_EXTENT_LAST,
                ),
            ],
            20480,
            4096,
        );
        let states: Vec<_> = m
            .extents
            .iter()
            .map(|e| (e.offset, e.length, e.state))
            .collect();
        assert_eq!(
            states,
            vec![
                (0, 4096, ExtentState::Hole),
                (4096, 4096, ExtentState::Written),
                (8192, 8192, ExtentState::Hole),
                (16384, 4096, ExtentState::Unwritten),
            ]
        );
        assert_eq!(m.summary.allocated, Some(8192));
        assert_eq!(m.summary.written, Some(4096));
        assert_eq!(m.summary.unwritten, Some(4096));
        assert_eq!(m.summary.holes, Some(12288));
        assert_eq!(m.summary.beyond_eof, Some(4096));
        assert_eq!(m.summary.extents, 2);
        assert_eq!(m.bytes_in(ExtentState::Hole, 0..10000), 4096 + 1808);
        // A file's last block is its own, not a reservation past EOF.
        let m = from_fiemap(&[raw(0, 4096, sys::FIEMAP_EXTENT_LAST)], 6, 4096);
        assert_eq!(m.summary.beyond_eof, Some(0));
    }
}
