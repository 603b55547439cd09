//! The one place `EINTR` is handled: [`restart`] issues a call again until
//! it returns something else, and counts every call per thread
//! ([`counters`]), so that higher layers can report what an operation cost.

use rustix::io::Errno;
use std::cell::Cell;

/// Syscalls issued by the current thread through this module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Every syscall, including restarts after `EINTR`.
    pub total: u64,
    /// Calls that change file contents, size or allocation: `pwritev`,
    /// `fallocate`, `ftruncate`.
    pub writes: u64,
    /// Calls that returned `EINTR` and were issued again.
    pub restarts: u64,
}

impl Counters {
    /// Returns the calls issued since `earlier` was taken.
    pub fn since(self, earlier: Counters) -> Counters {
        Counters {
            total: self.total - earlier.total,
            writes: self.writes - earlier.writes,
            restarts: self.restarts - earlier.restarts,
        }
    }
}

thread_local! {
    pub(super) static TOTAL: Cell<u64> = const { Cell::new(0) };
    static WRITES: Cell<u64> = const { Cell::new(0) };
    static RESTARTS: Cell<u64> = const { Cell::new(0) };
}

/// Returns the current thread's running syscall counters.
pub fn counters() -> Counters {
    Counters {
        total: TOTAL.with(Cell::get),
        writes: WRITES.with(Cell::get),
        restarts: RESTARTS.with(Cell::get),
    }
}

/// The kind of a call, for counting.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
}

/// Issues `call` until it returns something other than `EINTR`, counting
/// every attempt. This is the single place where `EINTR` is handled.
pub(crate) fn restart<T>(
    kind: Kind,
    mut call: impl FnMut() -> Result<T, Errno>,
) -> Result<T, Errno> {
    loop {
        TOTAL.with(|c| c.set(c.get() + 1));
        if kind == Kind::Write {
            WRITES.with(|c| c.set(c.get() + 1));
        }
        match call() {
            Err(Errno::INTR) => RESTARTS.with(|c| c.set(c.get() + 1)),
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_retries_eintr_and_counts_each_attempt() {
        let before = counters();
        let mut left = 3;
        let r = restart(Kind::Write, || {
            if left > 0 {
                left -= 1;
                Err(Errno::INTR)
            } else {
                Ok(7)
            }
        });
        assert_eq!(r, Ok(7));
        let d = counters().since(before);
        assert_eq!(d.total, 4);
        assert_eq!(d.writes, 4);
        assert_eq!(d.restarts, 3);
    }

    #[test]
    fn restart_passes_other_errors_through() {
        let r: Result<(), Errno> = restart(Kind::Read, || Err(Errno::NOSPC));
        assert_eq!(r, Err(Errno::NOSPC));
    }
}
