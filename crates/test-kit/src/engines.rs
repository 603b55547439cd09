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
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub use crate::build::PG_BIN;

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

// ------------------------------------------------------------------------
// PostgreSQL

/// The `postgres` user's uid and gid, from `/etc/passwd`.
fn postgres_ids() -> Result<(u32, u32), String> {
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == "postgres")
                .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
        })
        .flatten()
        .ok_or_else(|| "no postgres user in /etc/passwd".to_string())
}

/// A `postgres`-user command: PostgreSQL refuses to run as root.
fn as_postgres(program: &str) -> Command {
    let mut c = Command::new("runuser");
    // The test's own directory may be closed to that user.
    c.args(["-u", "postgres", "--"])
        .arg(program)
        .current_dir("/");
    c
}

/// A PostgreSQL 15 server on a private data directory, started with
/// `pg_ctl -w` as the `postgres` user; stopped (`pg_ctl stop -m fast`, then
/// SIGQUIT and SIGKILL to the postmaster if that fails) when dropped.
pub struct Postgres {
    port: u16,
    data: PathBuf,
    log: PathBuf,
    running: bool,
    // Dropped after `drop` has stopped the server.
    sock: TempDir,
    dir: TempDir,
}

impl Postgres {
    /// Makes a cluster in a private directory in `on` (`initdb` without
    /// its own fsyncs, which only slow the set-up), appends the private
    /// port and socket, `listen_addresses=''`, `shared_buffers=16MB`,
    /// `max_wal_size=32MB`, then `settings` (last, so they win) to
    /// `postgresql.conf`, and starts it. A server that refuses to start
    /// gives an `Err` with the tail of its log. `on` must be writable by
    /// the `postgres` user (the matrix mounts are mode 1777).
    pub fn start(on: &Path, settings: &[(&str, &str)]) -> Result<Postgres, String> {
        require("postgresql")?;
        let (uid, gid) = postgres_ids()?;
        let dir = private_dir(on, "fspace-pg-")?;
        let sock = tempfile::Builder::new()
            .prefix("fspace-pg-sock-")
            .tempdir()
            .map_err(|e| format!("socket directory: {e}"))?;
        for d in [dir.path(), sock.path()] {
            std::os::unix::fs::chown(d, Some(uid), Some(gid))
                .map_err(|e| format!("chown postgres {}: {e}", d.display()))?;
        }
        let data = dir.path().join("data");
        let log = dir.path().join("server.log");
        run(as_postgres(&format!("{PG_BIN}/initdb"))
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "--no-instructions",
                "-D",
            ])
            .arg(&data))?;
        let port = free_port()?;
        let quote = |v: &str| format!("'{}'", v.replace('\'', "''"));
        let mut conf = format!(
            "\n# fspace test kit\nport = {port}\nlisten_addresses = ''\n\
             unix_socket_directories = {}\nshared_buffers = '16MB'\nmax_wal_size = '32MB'\n\
             min_wal_size = '32MB'\nmax_connections = 20\n",
            quote(&sock.path().to_string_lossy())
        );
        for (name, value) in settings {
            conf.push_str(&format!("{name} = {}\n", quote(value)));
        }
        let conf_path = data.join("postgresql.conf");
        let mut all = std::fs::read_to_string(&conf_path)
            .map_err(|e| format!("read {}: {e}", conf_path.display()))?;
        all.push_str(&conf);
        std::fs::write(&conf_path, all)
            .map_err(|e| format!("write {}: {e}", conf_path.display()))?;
        let mut pg = Postgres {
            port,
            data,
            log,
            running: true,
            sock,
            dir,
        };
        let started = run(as_postgres(&format!("{PG_BIN}/pg_ctl"))
            .args(["-w", "-t", "60", "-D"])
            .arg(&pg.data)
            .arg("-l")
            .arg(&pg.log)
            .arg("start"));
        if let Err(e) = started {
            // pg_ctl may have left a postmaster behind when it timed out.
            let _ = pg.stop_now();
            return Err(format!(
                "PostgreSQL refused to start: {e}\n{}",
                tail(&pg.log, 20)
            ));
        }
        Ok(pg)
    }

    /// `postgres --version`, e.g. `postgres (PostgreSQL) 15.18 (Debian ...)`.
    pub fn version() -> Result<String, String> {
        require("postgresql")?;
        version_of(Command::new(format!("{PG_BIN}/postgres")).arg("--version"))
    }

    /// Runs `sql` with psql (`-XAt`: no psqlrc, unaligned, tuples only);
    /// its output, trimmed.
    pub fn psql(&self, sql: &str) -> Result<String, String> {
        run(self
            .client("psql")
            .args(["-XAt", "-v", "ON_ERROR_STOP=1", "-c", sql, "postgres"]))
        .map(|s| s.trim().to_string())
    }

    /// What `SHOW name` returns. Panics (with psql's message) if it fails.
    pub fn show(&self, name: &str) -> String {
        self.psql(&format!("SHOW {name}"))
            .unwrap_or_else(|e| panic!("SHOW {name}: {e}"))
    }

    /// Runs `pgbench ARGS postgres` against this server; its output.
    pub fn pgbench(&self, args: &[&str]) -> Result<String, String> {
        let mut c = self.client("pgbench");
        c.args(args).arg("postgres");
        let what = format!("{c:?}");
        let o = c
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{what}: {e}"))?;
        if o.status.success() {
            Ok(text(&o))
        } else {
            Err(format!(
                "{what} failed ({}):\n{}\n{}",
                o.status,
                text(&o),
                tail(&self.log, 10)
            ))
        }
    }

    /// A client program of this version, connected to this server as
    /// `postgres` through the private socket.
    fn client(&self, program: &str) -> Command {
        let mut c = as_postgres(&format!("{PG_BIN}/{program}"));
        c.arg("-h")
            .arg(self.sock.path())
            .args(["-p", &self.port.to_string(), "-U", "postgres"])
            .env("PGCONNECT_TIMEOUT", "10");
        c
    }

    /// The data directory (on the filesystem `start` was given).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// The server log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The private directory the cluster and its log are in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops the server now; `Err` if `pg_ctl stop` failed (the server was
    /// then killed).
    pub fn stop(mut self) -> Result<(), String> {
        self.stop_now()
    }

    fn stop_now(&mut self) -> Result<(), String> {
        if !std::mem::take(&mut self.running) {
            return Ok(());
        }
        let stopped = run(as_postgres(&format!("{PG_BIN}/pg_ctl"))
            .args(["-w", "-t", "30", "-m", "fast", "-D"])
            .arg(&self.data)
            .arg("stop"));
        match stopped {
            // "pg_ctl: PID file ... does not exist": it never started.
            Err(e) if e.contains("does not exist") => Ok(()),
            Err(e) => {
                self.kill_postmaster();
                Err(e)
            }
            Ok(_) => Ok(()),
        }
    }

    /// SIGQUIT (immediate shutdown), then SIGKILL, to the postmaster named
    /// in `postmaster.pid`.
    fn kill_postmaster(&self) {
        use rustix::process::{kill_process, test_kill_process, Pid, Signal};
        let Ok(s) = std::fs::read_to_string(self.data.join("postmaster.pid")) else {
            return;
        };
        let Some(pid) = s
            .lines()
            .next()
            .and_then(|l| l.trim().parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            return;
        };
        let _ = kill_process(pid, Signal::QUIT);
        let until = Instant::now() + Duration::from_secs(10);
        while test_kill_process(pid).is_ok() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = kill_process(pid, Signal::KILL);
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Err(e) = self.stop_now() {
            eprintln!("PostgreSQL in {}: {e}", self.data.display());
        }
    }
}

// ------------------------------------------------------------------------
// MariaDB

/// A MariaDB server (InnoDB) on a private data directory, run as root
/// from a generated `my.cnf` (`--defaults-file`, nothing else is read);
/// stopped with `mariadb-admin shutdown`, then killed if that fails, when
/// dropped.
pub struct MariaDb {
    child: Option<Child>,
    cnf: PathBuf,
    sock: PathBuf,
    log: PathBuf,
    // Dropped after `drop` has stopped the server.
    _sock_dir: TempDir,
    dir: TempDir,
}

impl MariaDb {
    /// Writes `my.cnf` with a `[mysqld]` group (private data directory in
    /// `on`, socket, no networking, `innodb_buffer_pool_size=16M`,
    /// `innodb_log_file_size=8M`, then `settings`, which win), runs
    /// `mariadb-install-db` with it, starts `mariadbd` and waits until it
    /// answers. A server that refuses gives an `Err` with its error log's
    /// tail. The settings also apply to the bootstrap, so a value the
    /// server rejects fails there already.
    pub fn start(on: &Path, settings: &[(&str, &str)]) -> Result<MariaDb, String> {
        require("mariadb")?;
        let dir = private_dir(on, "fspace-mariadb-")?;
        let sock_dir = tempfile::Builder::new()
            .prefix("fspace-mariadb-sock-")
            .tempdir()
            .map_err(|e| format!("socket directory: {e}"))?;
        let data = dir.path().join("data");
        let sock = sock_dir.path().join("mariadb.sock");
        let log = dir.path().join("error.log");
        let cnf = dir.path().join("my.cnf");
        // A private tmpdir: at start (bootstrap included) mariadbd deletes
        // every `#sql*` file in its tmpdir as its own leftovers, so servers
        // sharing /tmp deleted each other's temporary tables ("Could not
        // remove temporary table: '/tmp/#sql-temptable-…'", then "Unknown
        // table 'mysql.tmp_user_sys'" and a failed mariadb-install-db).
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).map_err(|e| format!("mkdir {}: {e}", tmp.display()))?;
        let mut text = format!(
            "[mysqld]\ndatadir={}\nsocket={}\nlog-error={}\ntmpdir={}\nskip-networking\n\
             user=root\ninnodb_buffer_pool_size=16M\ninnodb_log_file_size=8M\n",
            data.display(),
            sock.display(),
            log.display(),
            tmp.display()
        );
        for (name, value) in settings {
            text.push_str(&format!("{name}={value}\n"));
        }
        std::fs::write(&cnf, text).map_err(|e| format!("write {}: {e}", cnf.display()))?;
        let defaults = format!("--defaults-file={}", cnf.display());
        run(Command::new("mariadb-install-db").args([
            defaults.as_str(),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ]))
        .map_err(|e| format!("{e}\n{}", tail(&log, 20)))?;
        let child = Command::new("mariadbd")
            .arg(&defaults)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("mariadbd: {e}"))?;
        let mut db = MariaDb {
            child: Some(child),
            cnf,
            sock,
            log,
            _sock_dir: sock_dir,
            dir,
        };
        db.wait_ready(Duration::from_secs(60))?;
        Ok(db)
    }

    /// Polls until a query answers; `Err` with the error log's tail if the
    /// server exits or does not answer within `limit`.
    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let until = Instant::now() + limit;
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return Err(format!(
                    "mariadbd exited ({status}) instead of starting\n{}",
                    tail(&self.log, 20)
                ));
            }
            if self.sock.exists() && self.sql("SELECT 1").is_ok() {
                return Ok(());
            }
            if Instant::now() > until {
                let _ = self.stop_now();
                return Err(format!(
                    "mariadbd did not answer within {limit:?}\n{}",
                    tail(&self.log, 20)
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `mariadbd --version`, e.g. `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 ...`.
    pub fn version() -> Result<String, String> {
        require("mariadb")?;
        version_of(Command::new("mariadbd").arg("--version"))
    }

    /// Runs `sql` (one or more statements) with the `mariadb` client as
    /// root; the output without column names, trimmed.
    pub fn sql(&self, sql: &str) -> Result<String, String> {
        run(Command::new("mariadb").arg("-S").arg(&self.sock).args([
            "-uroot",
            "--connect-timeout=10",
            "-N",
            "-B",
            "-e",
            sql,
        ]))
        .map(|s| s.trim().to_string())
    }

    /// What `SELECT @@var` returns (`1`/`0` for booleans, as the server
    /// prints them). Panics (with the client's message) if it fails.
    pub fn select(&self, var: &str) -> String {
        self.sql(&format!("SELECT @@{var}"))
            .unwrap_or_else(|e| panic!("SELECT @@{var}: {e}"))
    }

    /// The socket clients connect to.
    pub fn socket(&self) -> &Path {
        &self.sock
    }

    /// The generated `my.cnf`.
    pub fn cnf(&self) -> &Path {
        &self.cnf
    }

    /// The server's error log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The private directory the data directory and logs are in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops the server now; `Err` if it had to be killed.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop_now()
    }

    fn stop_now(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let asked = run(Command::new("mariadb-admin")
            .arg("-S")
            .arg(&self.sock)
            .args(["-uroot", "--connect-timeout=10", "shutdown"]));
        if wait_or_kill(&mut child, Duration::from_secs(60)) {
            Ok(())
        } else {
            Err(format!(
                "mariadbd did not stop after mariadb-admin shutdown ({}), killed\n{}",
                asked.err().unwrap_or_else(|| "accepted".into()),
                tail(&self.log, 10)
            ))
        }
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        if let Err(e) = self.stop_now() {
            eprintln!("MariaDB in {}: {e}", self.dir.path().display());
        }
    }
}

// ------------------------------------------------------------------------
// RocksDB

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
