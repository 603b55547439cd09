//! `fspace.Wal`: the segment log, and the iterator of its records.

use crate::args;
use crate::errors::os_error;
use crate::reports::{Record, ReleaseReport};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Mutex, RwLock};

/// The open log, or nothing once closed. Calls hold the read side (many
/// commit at once and share a sync); `close` takes the write side, so it
/// waits for the calls in flight. Both are taken with the GIL released, so
/// a commit waiting for its sync never holds up other Python threads.
type Slot = RwLock<Option<fspace::Wal>>;

fn closed() -> PyErr {
    PyValueError::new_err("I/O operation on a closed log")
}

/// Runs `f` on the open log without the GIL.
fn with_wal<T: Send>(
    py: Python<'_>,
    slot: &Slot,
    f: impl FnOnce(&fspace::Wal) -> fspace::Result<T> + Send,
) -> PyResult<T> {
    py.detach(|| {
        // A poisoned lock means a panic in another call; the log itself
        // is still consistent (its own state has its own locks).
        let g = slot.read().unwrap_or_else(|e| e.into_inner());
        match g.as_ref() {
            Some(w) => Ok(f(w)),
            None => Err(()),
        }
    })
    .map_err(|()| closed())?
    .map_err(os_error)
}

/// Wal(dir, *, segment_size=16 MiB, sync_method="auto", prepare="auto",
///     use_saved=True, direct_io=None)
///
/// Opens the durable segment log in the directory `dir` (creating it and
/// its parents, or recovering what is there: every acknowledged record of
/// a process that was killed is back). One process at a time per log.
///
/// `segment_size`: bytes per new segment (a multiple of 4 KiB, at least 64
/// KiB; an int or a size such as "16M"). `sync_method`: how a commit is
/// made durable, "auto" (the policy's choice: "direct-dsync" on ext4 and
/// xfs, "fdatasync" elsewhere), "fdatasync", "fsync", "dsync" or
/// "direct-dsync". `prepare`: how new segments are grown, "auto" (the
/// policy for intent log) or a strategy's name. `use_saved`: let "auto"
/// follow a measurement saved by `fspace probe --save`. `direct_io`: write
/// with O_DIRECT (None: as the sync method says).
///
/// Use it as a context manager, or call close(): closing syncs what was
/// appended; a log dropped without close loses what was only appended.
///
/// Raises ValueError for bad options; OSError with the errno and path
/// (BlockingIOError when another process has it open; EUCLEAN when a
/// segment other than the last is damaged; ENOSPC when there is no space
/// for the segment the open starts: the message then says whether the
/// records are intact, and WalView(dir) reads them without writing).
#[pyclass(frozen, module = "fspace")]
pub(crate) struct Wal {
    slot: Slot,
    dir: std::ffi::OsString,
}

#[pymethods]
impl Wal {
    #[new]
    #[pyo3(signature = (dir, *, segment_size = None, sync_method = "auto", prepare = "auto",
                        use_saved = true, direct_io = None))]
    fn new(
        py: Python<'_>,
        dir: &Bound<'_, PyAny>,
        segment_size: Option<&Bound<'_, PyAny>>,
        sync_method: &str,
        prepare: &str,
        use_saved: bool,
        direct_io: Option<bool>,
    ) -> PyResult<Self> {
        let dir = args::path(dir)?;
        let mut opts = fspace::WalOptions::default()
            .sync_method(args::sync_method(sync_method)?)
            .direct_io(direct_io);
        if let Some(s) = segment_size {
            opts = opts.segment_size(args::bytes_arg(s, "segment_size", true)?);
        }
        opts = opts.prepare(match args::strategy(prepare)? {
            Some(s) => fspace::StrategyChoice::with_fallbacks(s),
            None if use_saved => fspace::StrategyChoice::auto_from_state_dir(),
            None => fspace::StrategyChoice::built_in(),
        });
        opts.validate()
            .map_err(|e| PyValueError::new_err(e.message))?;
        let wal = py
            .detach(|| fspace::Wal::open(&dir, opts))
            .map_err(os_error)?;
        Ok(Wal {
            slot: RwLock::new(Some(wal)),
            dir: dir.into_os_string(),
        })
    }

    /// The log's directory.
    #[getter]
    fn dir(&self) -> std::ffi::OsString {
        self.dir.clone()
    }

    /// True once closed.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| {
            self.slot
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .is_none()
        })
    }

    /// commit(data) -> int
    ///
    /// Appends one record (bytes-like) and returns its LSN once it, and
    /// every record before it, is durable. Concurrent commits from several
    /// threads share one sync. Raises OSError (EMSGSIZE for a record larger
    /// than `max_record`; after a failed sync every call raises, with the
    /// first errno: reopen the log).
    fn commit(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u64> {
        let b = args::data(data)?;
        let bytes = b.as_bytes();
        with_wal(py, &self.slot, |w| w.commit(bytes)).map(|l| l.0)
    }

    /// commit_many(records) -> list[int]
    ///
    /// Appends every record of the iterable in order and makes them durable
    /// with one sync; returns their LSNs. When an append fails, the error
    /// is raised and the records appended before it are not made durable by
    /// this call (a later sync or commit covers them).
    fn commit_many(&self, py: Python<'_>, records: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let owned: Vec<Bound<'_, PyBytes>> = records
            .try_iter()?
            .map(|r| args::data(&r?))
            .collect::<PyResult<_>>()?;
        let slices: Vec<&[u8]> = owned.iter().map(|b| b.as_bytes()).collect();
        with_wal(py, &self.slot, |w| {
            let mut lsns = Vec::with_capacity(slices.len());
            for s in &slices {
                lsns.push(w.append(s)?.0);
            }
            if let Some(&last) = lsns.last() {
                w.sync_to(fspace::Lsn(last))?;
            }
            Ok(lsns)
        })
    }

    /// append(data) -> int
    ///
    /// Appends one record and returns its LSN without waiting: it is not
    /// durable until sync(), sync_to() or a commit covers it.
    fn append(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u64> {
        let b = args::data(data)?;
        let bytes = b.as_bytes();
        with_wal(py, &self.slot, |w| w.append(bytes)).map(|l| l.0)
    }

    /// sync() -> int
    ///
    /// Makes everything appended durable; returns the last LSN covered (0
    /// for an empty log).
    fn sync(&self, py: Python<'_>) -> PyResult<u64> {
        with_wal(py, &self.slot, |w| w.sync()).map(|l| l.0)
    }

    /// sync_to(lsn)
    ///
    /// Makes every record up to `lsn` durable.
    fn sync_to(&self, py: Python<'_>, lsn: u64) -> PyResult<()> {
        with_wal(py, &self.slot, |w| w.sync_to(fspace::Lsn(lsn)))
    }

    /// The LSN up to which records are durable.
    #[getter]
    fn durable_lsn(&self, py: Python<'_>) -> PyResult<u64> {
        with_wal(py, &self.slot, |w| Ok(w.durable_lsn().0))
    }

    /// The LSN the next appended record will get.
    #[getter]
    fn next_lsn(&self, py: Python<'_>) -> PyResult<u64> {
        with_wal(py, &self.slot, |w| Ok(w.next_lsn().0))
    }

    /// The largest payload a record can have.
    #[getter]
    fn max_record(&self, py: Python<'_>) -> PyResult<usize> {
        with_wal(py, &self.slot, |w| Ok(w.max_record()))
    }

    /// read(from_lsn=0) -> Iterator[Record]
    ///
    /// Iterates the durable records from `from_lsn` on (0: the oldest
    /// kept), each verified (CRC, LSN sequence) as it is read; records
    /// appended later are not included. Damage raises OSError (EUCLEAN)
    /// naming the segment and offset. Raises OSError (ERANGE) when
    /// `from_lsn` was released.
    #[pyo3(signature = (from_lsn = 0))]
    fn read(&self, py: Python<'_>, from_lsn: u64) -> PyResult<WalRecords> {
        let reader = with_wal(py, &self.slot, |w| w.read_from(fspace::Lsn(from_lsn)))?;
        Ok(WalRecords {
            reader: Mutex::new(reader),
        })
    }

    /// release_before(lsn) -> ReleaseReport
    ///
    /// Releases every whole segment whose records all come before `lsn`
    /// (never the one being written): recycled for later segments, or
    /// deleted beyond the recycle pool. Do not read what you release.
    fn release_before(&self, py: Python<'_>, lsn: u64) -> PyResult<ReleaseReport> {
        with_wal(py, &self.slot, |w| w.release_before(fspace::Lsn(lsn))).map(|r| ReleaseReport {
            recycled: r.recycled,
            deleted: r.deleted,
        })
    }

    /// recovery() -> dict
    ///
    /// What opening found and did (segments and records verified, the
    /// torn tail discarded, files removed), as a dict.
    fn recovery<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let doc = with_wal(py, &self.slot, |w| Ok(json(w.recovery())))?;
        py.import("json")?.call_method1("loads", (doc,))
    }

    /// stats() -> dict
    ///
    /// Counters of what the log has done since it was opened (records,
    /// writes, syncs, switches, prepared segments) and how its records go
    /// out (the sync method and why), as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let doc = with_wal(py, &self.slot, |w| Ok(json(&w.stats())))?;
        py.import("json")?.call_method1("loads", (doc,))
    }

    /// close()
    ///
    /// Makes everything appended durable and closes the log; raises the
    /// sync's error, if any (the log is closed either way). Closing a
    /// closed log does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let wal = py.detach(|| self.slot.write().unwrap_or_else(|e| e.into_inner()).take());
        match wal {
            Some(w) => py.detach(|| w.close()).map_err(os_error),
            None => Ok(()),
        }
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let dir = self.dir.clone().into_pyobject(py)?;
        Ok(format!(
            "Wal({}{})",
            dir.repr()?,
            if self.closed(py) { ", closed" } else { "" }
        ))
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot serialize: {e}") }).to_string()
    })
}

/// The records of a log from an LSN on: an iterator of `Record`s
/// (`Wal.read`). Each step reads without the GIL.
#[pyclass(frozen, module = "fspace")]
pub(crate) struct WalRecords {
    reader: Mutex<fspace::wal::WalReader>,
}

#[pymethods]
impl WalRecords {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Record>> {
        let next = py.detach(|| {
            let mut r = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            r.next()
        });
        match next {
            None => Ok(None),
            Some(Err(e)) => Err(os_error(e)),
            Some(Ok(rec)) => Ok(Some(Record {
                lsn: rec.lsn.0,
                data: PyBytes::new(py, &rec.data).unbind(),
                segment: rec.segment,
                offset: rec.offset,
            })),
        }
    }
}

/// WalView(dir)
///
/// A read-only look at the log in the directory `dir`: it never writes (no
/// file is created, removed or renamed, the LOCK is not taken), so it opens
/// a log on a full filesystem, on a read-only mount, or beside a live
/// writer in another process. Opening verifies every live segment as
/// Wal(dir) does (each record's CRC, the LSN sequence, the segment chain)
/// and stops the last segment at its first invalid record; read() then
/// iterates the records, verified again as they are read.
///
/// Raises OSError with the errno and path: FileNotFoundError (ENOENT) when
/// `dir` does not exist or holds no log, NotADirectoryError for a file,
/// EUCLEAN when a segment other than the last is damaged (see
/// open_to_damage).
#[pyclass(frozen, module = "fspace")]
pub(crate) struct WalView {
    view: fspace::wal::WalView,
    dir: std::ffi::OsString,
}

impl WalView {
    fn open(
        py: Python<'_>,
        dir: &Bound<'_, PyAny>,
        f: fn(&std::path::Path) -> fspace::Result<fspace::wal::WalView>,
    ) -> PyResult<Self> {
        let dir = args::path(dir)?;
        let view = py.detach(|| f(&dir)).map_err(os_error)?;
        Ok(WalView {
            view,
            dir: dir.into_os_string(),
        })
    }
}

#[pymethods]
impl WalView {
    #[new]
    fn new(py: Python<'_>, dir: &Bound<'_, PyAny>) -> PyResult<Self> {
        WalView::open(py, dir, |d| fspace::wal::WalView::open(d))
    }

    /// open_to_damage(dir) -> WalView
    ///
    /// As WalView(dir), except that damage before the log's end does not
    /// refuse the open: reading stops at the first invalid record of a
    /// segment that is not the last, the view holds the records before it,
    /// and damage() says where and what (as `fspace wal dump` shows what
    /// can still be read of a damaged log).
    #[staticmethod]
    fn open_to_damage(py: Python<'_>, dir: &Bound<'_, PyAny>) -> PyResult<Self> {
        WalView::open(py, dir, |d| fspace::wal::WalView::open_to_damage(d))
    }

    /// The log's directory.
    #[getter]
    fn dir(&self) -> std::ffi::OsString {
        self.dir.clone()
    }

    /// The log's id (16 random bytes chosen when the log was created).
    #[getter]
    fn log_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.view.log_id())
    }

    /// The LSN of the oldest record kept.
    #[getter]
    fn first_lsn(&self) -> u64 {
        self.view.first_lsn().0
    }

    /// The LSN after the last readable record (the one a writer would
    /// give next).
    #[getter]
    fn next_lsn(&self) -> u64 {
        self.view.next_lsn().0
    }

    /// segments() -> list[dict]
    ///
    /// The live segments, oldest first: seq, first_lsn, path, size, format.
    fn segments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (json(&self.view.segments()),))
    }

    /// The paths of the segments prepared for later use (no records yet).
    #[getter]
    fn prepared(&self) -> Vec<std::ffi::OsString> {
        let p = self.view.prepared();
        p.iter().map(|p| p.clone().into_os_string()).collect()
    }

    /// The paths of the released segments kept for recycling.
    #[getter]
    fn pool(&self) -> Vec<std::ffi::OsString> {
        let p = self.view.pool();
        p.iter().map(|p| p.clone().into_os_string()).collect()
    }

    /// recovery() -> dict
    ///
    /// What the look found, as Wal.recovery() says it (read_only is True):
    /// segments and records verified, where the last segment's records end
    /// and why, and what a writable open would clean up.
    fn recovery<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (json(self.view.recovery()),))
    }

    /// damage() -> dict | None
    ///
    /// Where reading stopped before the log's end, and why (only a view
    /// made by open_to_damage can have damage): segment, seq, offset,
    /// record_end, expected_lsn, found_lsn, reason, message.
    fn damage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.view.damage() {
            None => Ok(None),
            Some(d) => py
                .import("json")?
                .call_method1("loads", (json(d),))
                .map(Some),
        }
    }

    /// read(from_lsn=0) -> Iterator[Record]
    ///
    /// Iterates the records from `from_lsn` on (0: the oldest kept) to the
    /// end found when the view was opened, each verified again (CRC, LSN
    /// sequence) as it is read. Damage raises OSError (EUCLEAN) naming the
    /// segment and offset; OSError (ERANGE) when `from_lsn` was released.
    #[pyo3(signature = (from_lsn = 0))]
    fn read(&self, py: Python<'_>, from_lsn: u64) -> PyResult<WalRecords> {
        let reader = py
            .detach(|| self.view.read_from(fspace::Lsn(from_lsn)))
            .map_err(os_error)?;
        Ok(WalRecords {
            reader: Mutex::new(reader),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let dir = self.dir.clone().into_pyobject(py)?;
        Ok(format!(
            "WalView({}, LSN {} to {})",
            dir.repr()?,
            self.view.first_lsn().0,
            self.view.next_lsn().0
        ))
    }
}

/// Adds `Wal`, `WalView` and their record iterator to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Wal>()?;
    m.add_class::<WalView>()?;
    m.add_class::<WalRecords>()?;
    Ok(())
}
