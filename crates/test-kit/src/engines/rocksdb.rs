//! [`RocksDb`] and `db_bench`: RocksDB runs for a test (see the module
//! above).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

use super::{private_dir, require, text, version_of};

/// A private RocksDB directory in `on` for `db_bench` runs; removed when
/// dropped. `db_bench` ends by itself, so there is no server to stop.
pub struct RocksDb {
    dir: TempDir,
}

impl RocksDb {
    pub fn new(on: &Path) -> Result<RocksDb, String> {
        Ok(RocksDb {
            dir: private_dir(on, "fspace-rocksdb-")?,
        })
    }

    /// The database directory `db_bench` is pointed at (made by it).
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("db")
    }

    /// The private directory (the database and any OPTIONS file written
    /// for it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// [`db_bench`] on this database.
    pub fn db_bench(&self, options_file: Option<&Path>, flags: &[&str]) -> Result<Output, String> {
        db_bench(&self.db(), options_file, flags)
    }

    /// [`effective_options`] of this database.
    pub fn effective_options(&self) -> Result<String, String> {
        effective_options(&self.db())
    }

    /// Writes [`options_file`]`(db, cf)` into the private directory; its path.
    pub fn write_options(
        &self,
        db: &[(&str, &str)],
        cf: &[(&str, &str)],
    ) -> Result<PathBuf, String> {
        let p = self.dir.path().join("options.ini");
        std::fs::write(&p, options_file(db, cf))
            .map_err(|e| format!("write {}: {e}", p.display()))?;
        Ok(p)
    }
}

/// Runs `db_bench --db=DB [--options_file=F] FLAGS`; `Err` with its output
/// unless it exits 0. With an options file, db_bench 7.8 takes the DB and
/// column-family options from it and ignores the flags that set the same
/// options (`--use_direct_io_for_flush_and_compaction=true` beside
/// `--options_file` left it false), so put every option in the file.
pub fn db_bench(db: &Path, options_file: Option<&Path>, flags: &[&str]) -> Result<Output, String> {
    require("rocksdb")?;
    let mut c = Command::new("db_bench");
    c.arg(format!("--db={}", db.display()));
    if let Some(f) = options_file {
        c.arg(format!("--options_file={}", f.display()));
    }
    c.args(flags).stdin(Stdio::null());
    let what = format!("{c:?}");
    let o = c.output().map_err(|e| format!("{what}: {e}"))?;
    if o.status.success() {
        Ok(o)
    } else {
        Err(format!("{what} failed ({}):\n{}", o.status, text(&o)))
    }
}

/// `db_bench --version`, e.g. `db_bench version 7.8.3`.
pub fn rocksdb_version() -> Result<String, String> {
    require("rocksdb")?;
    version_of(Command::new("db_bench").arg("--version"))
}

/// An OPTIONS file db_bench 7.8 accepts: `db` under `[DBOptions]` (after
/// `create_if_missing=true`), `cf` under `[CFOptions "default"]`. An
/// option RocksDB does not know fails the run (`Could not find option`),
/// which is how a misspelt setting shows.
pub fn options_file(db: &[(&str, &str)], cf: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n\n\
         [DBOptions]\n  create_if_missing=true\n",
    );
    for (k, v) in db {
        s.push_str(&format!("  {k}={v}\n"));
    }
    s.push_str("\n[CFOptions \"default\"]\n");
    for (k, v) in cf {
        s.push_str(&format!("  {k}={v}\n"));
    }
    s.push_str("\n[TableOptions/BlockBasedTable \"default\"]\n");
    s
}

/// The newest `OPTIONS-NNNNNN` file RocksDB wrote in `db`: the options it
/// really runs with, after its own sanitizing (which can silently change a
/// value the caller set).
pub fn effective_options(db: &Path) -> Result<String, String> {
    let newest = std::fs::read_dir(db)
        .map_err(|e| format!("read {}: {e}", db.display()))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((n, e.path()))
        })
        .max()
        .ok_or_else(|| format!("no OPTIONS-* file in {}", db.display()))?;
    std::fs::read_to_string(&newest.1).map_err(|e| format!("read {}: {e}", newest.1.display()))
}

/// The value of `name` in `section` (as written between the brackets, e.g.
/// `DBOptions` or `CFOptions "default"`) of an OPTIONS file's text.
pub fn option(effective: &str, section: &str, name: &str) -> Option<String> {
    let mut inside = false;
    for line in effective.lines().map(str::trim) {
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = s == section;
        } else if inside {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim() == name {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_reads_its_section_only() {
        let f = "[Version]\n  rocksdb_version=7.8.3\n[DBOptions]\n  wal_bytes_per_sync=0\n  \
                 recycle_log_file_num=4\n[CFOptions \"default\"]\n  write_buffer_size=65536\n";
        assert_eq!(
            option(f, "DBOptions", "recycle_log_file_num").as_deref(),
            Some("4")
        );
        assert_eq!(
            option(f, "CFOptions \"default\"", "write_buffer_size").as_deref(),
            Some("65536")
        );
        assert_eq!(option(f, "DBOptions", "write_buffer_size"), None);
        assert_eq!(option(f, "Nope", "recycle_log_file_num"), None);
    }

    #[test]
    fn options_file_round_trips() {
        let f = options_file(
            &[("allow_fallocate", "false")],
            &[("write_buffer_size", "65536")],
        );
        assert_eq!(
            option(&f, "DBOptions", "allow_fallocate").as_deref(),
            Some("false")
        );
        assert_eq!(
            option(&f, "DBOptions", "create_if_missing").as_deref(),
            Some("true")
        );
        assert_eq!(
            option(&f, "CFOptions \"default\"", "write_buffer_size").as_deref(),
            Some("65536")
        );
    }
}
