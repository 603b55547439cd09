//! [`Postgres`]: a PostgreSQL 15 server for a test (see the module above).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::{free_port, private_dir, require, run, tail, text, version_of, PG_BIN};

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

    /// The postmaster's process id (the first line of `postmaster.pid`),
    /// while it runs.
    pub fn pid(&self) -> Option<i32> {
        let s = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        s.lines().next()?.trim().parse().ok()
    }

    /// SIGQUIT (immediate shutdown), then SIGKILL, to the postmaster named
    /// in `postmaster.pid`.
    fn kill_postmaster(&self) {
        use rustix::process::{kill_process, test_kill_process, Pid, Signal};
        let Some(pid) = self.pid().and_then(Pid::from_raw) else {
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
