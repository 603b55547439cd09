//! What the log hands back (`fspace.Wal`): its records, and what a
//! release did.

use super::common::report;
use pyo3::prelude::*;

/// A record read back from the log. (Not made by `report!`: its payload is
/// a Python `bytes`, which is not `Clone` without the GIL.)
#[pyclass(frozen, module = "fspace")]
pub(crate) struct Record {
    /// Its LSN.
    #[pyo3(get)]
    pub(crate) lsn: u64,
    /// Its payload.
    #[pyo3(get)]
    pub(crate) data: Py<pyo3::types::PyBytes>,
    /// The sequence number of the segment holding it.
    #[pyo3(get)]
    pub(crate) segment: u64,
    /// Where its header starts in that segment's file.
    #[pyo3(get)]
    pub(crate) offset: u64,
}

#[pymethods]
impl Record {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Record(lsn={}, data={}, segment={}, offset={})",
            self.lsn,
            self.data.bind(py).repr()?,
            self.segment,
            self.offset
        ))
    }
}

report! {
    /// What `Wal.release_before` did.
    ReleaseReport {
        /// Segments moved to the recycle pool.
        recycled: usize,
        /// Segments deleted because the pool was full.
        deleted: usize,
    }
}
