//! Untorn (atomic) writes: whether a page write here survives a power cut
//! whole or not at all, by which path, and a call that makes one.
//!
//! Linux (6.11 and later) writes a buffer untorn when the write asks for it
//! with `pwritev2(RWF_ATOMIC)`, goes through `O_DIRECT`, and fits the
//! limits `statx(STATX_WRITE_ATOMIC)` reports for the file: a power of two
//! between `unit_min` and `unit_max`, at an offset aligned to its own size.
//! A write that does not ask is never untorn, whatever the device offers.
//!
//! Where the guarantee comes from decides what it costs:
//!
//! - **hardware**: the device writes the unit atomically (its
//!   `queue/atomic_write_*` in sysfs are nonzero), and the filesystem
//!   passes the write down as one command; on XFS only up to
//!   `unit_max_opt`, in one extent with an aligned physical start; ext4
//!   has no other path.
//! - **software** (XFS 6.16 and later, with reflink): the data goes to
//!   newly allocated blocks and the file's mapping is switched to them in
//!   one transaction; every write costs an allocation and a log commit.
//!
//! What is reported keeps three cases apart ([`Limits`]): the filesystem
//! does not report (the `statx` mask bit absent: btrfs, tmpfs, FUSE, or a
//! kernel before 6.11), it reports zero (ext4 on a device without atomic
//! writes), and it reports limits. See docs/untorn.md.

mod answer;
mod buf;
mod check;
mod facts;
mod layout;
mod ready;

pub use answer::{answer, Answer, Cost, IoPath};
pub(crate) use buf::AlignedBuf;
pub(crate) use check::takes_unit;
pub use check::{check, write_untorn, Limit, Refusal};
pub(crate) use facts::facts_of_fs_with;
#[cfg(test)]
pub(crate) use facts::tests_support;
pub use facts::{
    facts, facts_of_fs, DeviceAtomic, Geometry, Limits, Source, State, Trial, UntornFacts,
    WritePath, TRIAL_SIZES,
};
pub use layout::{check_layout, BadUnit, LayoutCheck, UnitFault, FIRST_BAD};
pub(crate) use layout::{layout_of, merge as merge_extents};
pub use ready::Ready;
