//! Holes, kept and made: [`SparseWriter`] turns zero blocks into holes with
//! few large writes, [`copy()`] copies a file without losing its holes (and
//! without reading it where blocks can be shared or the kernel can move
//! them), and [`dig()`] punches holes over zero blocks of a file in place.
//!
//! Seed 004: rsync's `--sparse` wrote 1 KiB per syscall and copied a 1 GiB
//! file far slower than without it (docs/design.md, source S4). Here data goes out in writes of at
//! least [`SPARSE_BUFFER`] bytes and zeros are found by a vectorised scan
//! ([`is_zero`]).

mod copy;
mod dig;
mod scan;
mod writer;

#[cfg(feature = "internals")]
pub use copy::COPY_WRITE_SIZE;
pub use copy::{copy, CopyFallback, CopyMethod, CopyOptions, CopyReport, ReflinkMode, SparseMode};
pub use dig::{dig, DigOptions, DigReport};
pub use writer::{SparseStats, SparseWriter, SparseWriterOptions};
