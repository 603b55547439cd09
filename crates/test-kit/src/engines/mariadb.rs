//! [`MariaDb`]: a MariaDB server for a test (see the module above).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::{private_dir, require, run, tail, version_of, wait_or_kill};

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

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
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
