//! The real database engines fspace advises on, started for a test or a
//! benchmark: PostgreSQL 15 ([`Postgres`]), MariaDB 10.11 ([`MariaDb`]) and
//! RocksDB's `db_bench` ([`RocksDb`]).
//!
//! Each handle owns a private directory on the path it is given (a matrix
//! mount, say), so that the engine's files live on the filesystem under
//! test, and a private socket directory under the system's temporary
//! directory (a Unix socket cannot live on sshfs, and its path must stay
//! under 108 bytes). A server is stopped when its handle is dropped, also
//! while a failing test unwinds; [`Postgres::stop`] and [`MariaDb::stop`]
//! stop it earlier and report a failure to stop. Only a test process killed
//! outright (SIGKILL) can leave a server behind; its directory then names it.
//!
//! Settings are given as `(name, value)` pairs, the form fspace's advice
//! takes: PostgreSQL's go into `postgresql.conf`, MariaDB's into a
//! `[mysqld]` group of a generated `my.cnf`, RocksDB's into an OPTIONS file
//! ([`options_file`]). Each engine starts small (16 MB buffers, 8 MB InnoDB
//! log, 32 MB of WAL) so that tests stay quick on small loop images.
//!
//! Whether an engine is installed is [`missing`]; the build decides the same
//! for the `fspace_engine` cfg that `per_fs_engine!` tests are ignored by
//! (see [`crate::build`]).

use std::io::Read as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub use crate::build::PG_BIN;

mod mariadb;
mod postgres;
mod rocksdb;

pub use mariadb::MariaDb;
pub use postgres::Postgres;
pub use rocksdb::{db_bench, effective_options, option, options_file, rocksdb_version, RocksDb};

/// Why `engine` ("postgresql", "mariadb" or "rocksdb") cannot be started
/// here, or `None`. Under `FSPACE_REQUIRE_MATRIX=1` the tests that need it
/// run anyway and fail with this reason.
pub fn missing(engine: &str) -> Option<String> {
    crate::build::engine_missing(engine)
}

/// `Err` naming what is missing for `engine`, so that a start fails with
/// the reason rather than with a command that was not found.
fn require(engine: &str) -> Result<(), String> {
    match missing(engine) {
        None => Ok(()),
        Some(why) => Err(format!("cannot start {engine}: {why}")),
    }
}

/// A command's stdout and stderr, for error messages.
fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `cmd` to its end; `Err` (with its output) unless it exits 0.
fn run(cmd: &mut Command) -> Result<String, String> {
    let what = format!("{cmd:?}");
    let o = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!("{what} failed ({}):\n{}", o.status, text(&o)))
    }
}

/// The last `n` lines of a log file, for a start that failed.
fn tail(path: &Path, n: usize) -> String {
    let mut s = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut s);
    }
    let lines: Vec<&str> = s.lines().collect();
    format!(
        "last lines of {}:\n{}",
        path.display(),
        lines[lines.len().saturating_sub(n)..].join("\n")
    )
}

/// A private directory named `prefix*` in `on`.
fn private_dir(on: &Path, prefix: &str) -> Result<TempDir, String> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(on)
        .map_err(|e| format!("private directory in {}: {e}", on.display()))
}

/// A TCP port nobody listens on now. PostgreSQL listens on no TCP socket
/// here (`listen_addresses=''`), but the port names its Unix socket and
/// seeds its System V shared-memory key, so parallel servers get their own.
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("free port: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("free port: {e}"))
}

/// The first line of a `--version` output.
fn version_of(cmd: &mut Command) -> Result<String, String> {
    run(cmd).map(|s| s.lines().next().unwrap_or("").trim().to_string())
}

/// Waits for `child` to exit within `limit`; kills it if it does not.
/// `true` if it exited by itself.
fn wait_or_kill(child: &mut Child, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}
