//! The settings fspace advises for PostgreSQL 15, MariaDB 10.11 and
//! RocksDB 7.8 are accepted by the real engines, on every filesystem of the
//! matrix where the engine runs: each fragment below is started with and
//! every value read back (`SHOW`, `SELECT @@…`, the `OPTIONS-*` file the DB
//! writes), then the engine does a few hundred synced commits with it. So
//! advice never names a setting, or a value, the installed version rejects
//! or silently replaces.
//!
//! The fragments come from the library's list of every setting and value
//! the advice can name (`Engine::advisable`), whose completeness the
//! library's unit tests check against the advice itself;
//! `probe_engines.rs` checks the fragments a real probe writes. The engines are started through `fspace_test_kit::engines`;
//! a test is ignored (counted by libtest) where its filesystem is not mounted
//! or its engine was not installed when it was built, and fails instead
//! under `FSPACE_REQUIRE_MATRIX=1`.
//!
//! Where an engine does not run:
//! - PostgreSQL on sshfs: the matrix mounts sshfs as root without
//!   `allow_other`, and FUSE then refuses every other user, so the
//!   `postgres` user PostgreSQL must run as cannot even list the mount
//!   (`runuser -u postgres -- ls /tmp/fspace-matrix/mnt/sshfs`: "Permission
//!   denied"; `mkdir` there: "Permission denied"), and PostgreSQL refuses to
//!   run as root. It is left out of the sshfs list for that reason, not
//!   skipped at run time.

use fspace::probe::Engine;
use fspace_test_kit::engines::{self, MariaDb, Postgres, RocksDb};
use fspace_test_kit::{per_fs_engine, Fs};

/// A fragment of settings, in the order they are written.
type Fragment = Vec<(&'static str, &'static str)>;

/// The fragments to start `engine` with: together they give every setting
/// every value the advice can name ([`Engine::advisable`], the library's
/// own list, so a value added there is tested here): the first holds the
/// engine's defaults, the next each setting's next value.
fn fragments(engine: Engine) -> Vec<Fragment> {
    let settings = engine.advisable();
    let most = settings.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    (0..most)
        .map(|k| {
            settings
                .iter()
                .map(|(name, values)| (*name, values[k.min(values.len() - 1)]))
                .collect()
        })
        .collect()
}

/// A 64 KiB memtable, so that 300 values of 1000 bytes flush several SSTs
/// and switch WALs (recycling is exercised).
const ROCKSDB_CF: &[(&str, &str)] = &[("write_buffer_size", "65536")];

/// The db_bench run: a few hundred synced writes.
const DB_BENCH_FLAGS: &[&str] = &[
    "--benchmarks=fillrandom",
    "--sync=1",
    "--num=300",
    "--value_size=1000",
    "--threads=1",
];

/// Each test prints the engine's version once, so that a log names what was
/// tested.
fn print_version(what: Result<String, String>) {
    eprintln!(
        "engine: {}",
        what.unwrap_or_else(|e| panic!("version: {e}"))
    );
}

per_fs_engine! {
    /// PostgreSQL starts with each fragment, `SHOW` returns each value, and
    /// pgbench initialises a scale-1 database and commits for a second.
    fn postgres_accepts_the_advice(fs) needs postgresql
        on [ext4, xfs, btrfs, ext4_noextents, tmpfs]
    {
        print_version(Postgres::version());
        for fragment in &fragments(Engine::Postgresql) {
            let pg = Postgres::start(&fs.root, fragment)
                .unwrap_or_else(|e| panic!("{} with {fragment:?}: {e}", fs.name));
            for (name, value) in fragment {
                assert_eq!(pg.show(name), *value, "SHOW {name} on {} with {fragment:?}", fs.name);
            }
            pg.pgbench(&["-i", "-s", "1", "-q"])
                .unwrap_or_else(|e| panic!("pgbench -i on {}: {e}", fs.name));
            let out = pg
                .pgbench(&["-c", "1", "-T", "1", "-M", "prepared"])
                .unwrap_or_else(|e| panic!("pgbench on {}: {e}", fs.name));
            let done = transactions(&out, "number of transactions actually processed: ");
            assert!(done > 0, "pgbench committed nothing on {}:\n{out}", fs.name);
            eprintln!("{}: {fragment:?}: {done} pgbench transactions in 1 s", fs.name);
            pg.stop().unwrap_or_else(|e| panic!("stop on {}: {e}", fs.name));
        }
    }
}

/// The count after `label` in a benchmark's output (0 if absent).
fn transactions(out: &str, label: &str) -> u64 {
    out.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// What `SELECT @@name` returns on `fs` for a `my.cnf` `value`.
///
/// Booleans read back as `1`/`0`. `innodb_log_file_buffering` is the
/// exception: InnoDB decides at start whether it can open `ib_logfile0`
/// with O_DIRECT by reading `/sys/dev/block/MAJOR:MINOR/queue/physical_block_size`
/// for the log's `st_dev`. btrfs, tmpfs and sshfs (FUSE) report an anonymous
/// device (major 0) that has no such entry, so InnoDB logs "Buffered log
/// writes (block size=512 bytes)" and keeps the log buffered whatever the
/// setting says; `@@innodb_log_file_buffering` then reads 1 even with OFF
/// (bench/runs/2026-11-27-engines-strace/findings.md, 2.3, and this test on sshfs). On the loop
/// devices (ext4, xfs, ext3) it reads what was set.
fn mariadb_reads_back(fs: &Fs, name: &str, value: &str) -> String {
    if name == "innodb_log_file_buffering" && fs.is(&["btrfs", "tmpfs", "sshfs"]) {
        return "1".into();
    }
    match value {
        "ON" => "1".into(),
        "OFF" => "0".into(),
        v => v.into(),
    }
}

/// Single-row INSERTs, each its own (autocommitted) transaction: a
/// durable commit each with `innodb_flush_log_at_trx_commit=1`.
const MARIADB_COMMITS: usize = 300;

per_fs_engine! {
    /// MariaDB starts with each fragment (bootstrap included), `SELECT @@…`
    /// returns each value as InnoDB really runs with it, and a few hundred
    /// single-row transactions commit.
    fn mariadb_accepts_the_advice(fs) needs mariadb
        on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs]
    {
        print_version(MariaDb::version());
        for fragment in &fragments(Engine::Mariadb) {
            let db = MariaDb::start(&fs.root, fragment)
                .unwrap_or_else(|e| panic!("{} with {fragment:?}: {e}", fs.name));
            for (name, value) in fragment {
                assert_eq!(
                    db.select(name),
                    mariadb_reads_back(fs, name, value),
                    "SELECT @@{name} on {} with {fragment:?} (error log: {})",
                    fs.name,
                    db.log().display()
                );
            }
            let mut sql = String::from(
                "CREATE DATABASE t; CREATE TABLE t.c (id INT AUTO_INCREMENT PRIMARY KEY, \
                 v VARCHAR(100)) ENGINE=InnoDB;",
            );
            for i in 0..MARIADB_COMMITS {
                sql.push_str(&format!("INSERT INTO t.c (v) VALUES ('commit {i}');"));
            }
            db.sql(&sql).unwrap_or_else(|e| panic!("inserts on {}: {e}", fs.name));
            assert_eq!(
                db.sql("SELECT COUNT(*) FROM t.c").expect("count"),
                MARIADB_COMMITS.to_string(),
                "rows on {}",
                fs.name
            );
            db.stop().unwrap_or_else(|e| panic!("stop on {}: {e}", fs.name));
        }
    }
}

/// Runs db_bench with an OPTIONS file of `db_options` (and [`ROCKSDB_CF`]),
/// and returns the effective options the DB wrote.
fn rocksdb_run(fs: &Fs, db_options: &[(&str, &str)]) -> String {
    let rocks = RocksDb::new(&fs.root).unwrap_or_else(|e| panic!("{}: {e}", fs.name));
    let file = rocks
        .write_options(db_options, ROCKSDB_CF)
        .expect("write the OPTIONS file");
    let out = rocks
        .db_bench(Some(&file), DB_BENCH_FLAGS)
        .unwrap_or_else(|e| panic!("db_bench on {} with {db_options:?}: {e}", fs.name));
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("fillrandom") && l.contains(" 300 operations")),
        "db_bench did not report 300 fillrandom operations on {}:\n{out}",
        fs.name
    );
    rocks
        .effective_options()
        .unwrap_or_else(|e| panic!("{}: {e}", fs.name))
}

per_fs_engine! {
    /// db_bench runs 300 synced writes with each fragment, and the OPTIONS
    /// file the DB writes shows each value as set.
    fn rocksdb_accepts_the_advice(fs) needs rocksdb
        on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs]
    {
        print_version(engines::rocksdb_version());
        for fragment in &fragments(Engine::Rocksdb) {
            let effective = rocksdb_run(fs, fragment);
            for (name, value) in fragment {
                assert_eq!(
                    engines::option(&effective, "DBOptions", name).as_deref(),
                    Some(*value),
                    "effective {name} on {} with {fragment:?}",
                    fs.name
                );
            }
        }
    }
}

per_fs_engine! {
    /// RocksDB 7.8 silently sets `recycle_log_file_num` to 0 under its
    /// default `wal_recovery_mode` (kPointInTimeRecovery; `SanitizeOptions`
    /// in db_impl_open.cc): the run succeeds, nothing is logged, and only
    /// the effective OPTIONS file tells. Advice to recycle WAL files must
    /// therefore also name a recovery mode (the fragments above do).
    fn rocksdb_recycling_needs_the_recovery_mode(fs) needs rocksdb
        on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs]
    {
        let effective = rocksdb_run(fs, &[("recycle_log_file_num", "4")]);
        assert_eq!(
            engines::option(&effective, "DBOptions", "recycle_log_file_num").as_deref(),
            Some("0"),
            "on {}",
            fs.name
        );
        assert_eq!(
            engines::option(&effective, "DBOptions", "wal_recovery_mode").as_deref(),
            Some("kPointInTimeRecovery"),
            "on {}",
            fs.name
        );
    }
}

/// Whether a process with this id still exists 5 s from now (a zombie
/// counts as gone). The wait: `pg_ctl stop -w` returns once the postmaster
/// has removed its pid file, a moment before it exits.
fn alive(pid: i32) -> bool {
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running() {
        if std::time::Instant::now() > until {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// Starts a server in `start`, notes its pid and panics; returns the pid
/// once the panic has unwound (the handle dropped).
fn pid_after_panic(start: impl FnOnce() -> Option<i32> + std::panic::UnwindSafe) -> i32 {
    let pid = std::sync::atomic::AtomicI32::new(0);
    let r = std::panic::catch_unwind(|| {
        pid.store(
            start().expect("a running server has a pid"),
            std::sync::atomic::Ordering::SeqCst,
        );
        panic!("a test failing while its server runs");
    });
    assert!(r.is_err());
    pid.into_inner()
}

// The harness itself: the acceptance tests above prove something only if a
// setting the engine rejects makes them fail, and they must leave no server
// behind when they fail. Once, on tmpfs (the quickest).

per_fs_engine! {
    /// A misspelt setting or a bad value makes `Postgres::start` fail with
    /// the server's own reason; a test that panics stops its server.
    fn postgres_refusals_fail_and_panics_stop_it(fs) needs postgresql on [tmpfs] {
        for (bad, says) in [
            (
                ("wal_recycel", "off"),
                "unrecognized configuration parameter \"wal_recycel\"",
            ),
            (
                ("wal_sync_method", "bogus"),
                "invalid value for parameter \"wal_sync_method\"",
            ),
        ] {
            let e = Postgres::start(&fs.root, &[bad])
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(e.contains(says), "{bad:?}: expected {says:?} in:\n{e}");
        }
        let pid = pid_after_panic(|| Postgres::start(&fs.root, &[]).expect("start").pid());
        assert!(!alive(pid), "postmaster {pid} survived its handle");
    }
}

per_fs_engine! {
    /// The same for MariaDB: a misspelt variable or a bad value fails the
    /// start (already the bootstrap) with the server's reason.
    fn mariadb_refusals_fail_and_panics_stop_it(fs) needs mariadb on [tmpfs] {
        for (bad, says) in [
            (
                ("innodb_log_file_bufering", "OFF"),
                "unknown variable 'innodb_log_file_bufering=OFF'",
            ),
            (
                ("innodb_flush_method", "bogus"),
                "Error while setting value 'bogus' to 'innodb-flush-method'",
            ),
        ] {
            let e = MariaDb::start(&fs.root, &[bad])
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(e.contains(says), "{bad:?}: expected {says:?} in:\n{e}");
        }
        let pid = pid_after_panic(|| {
            let db = MariaDb::start(&fs.root, &[]).expect("start");
            db.pid().and_then(|p| i32::try_from(p).ok())
        });
        assert!(!alive(pid), "mariadbd {pid} survived its handle");
    }
}

per_fs_engine! {
    /// An option RocksDB does not know fails the db_bench run.
    fn rocksdb_refuses_an_unknown_option(fs) needs rocksdb on [tmpfs] {
        let rocks = RocksDb::new(&fs.root).expect("private directory");
        let file = rocks.write_options(&[("recycle_log_files", "4")], &[]).expect("write");
        let e = rocks
            .db_bench(Some(&file), DB_BENCH_FLAGS)
            .expect_err("unknown option accepted");
        assert!(e.contains("Could not find option"), "{e}");
    }
}

#[test]
fn transactions_reads_pgbench_output() {
    let out = "transaction type: <builtin: TPC-B (sort of)>\n\
               number of transactions actually processed: 1234\n";
    assert_eq!(
        transactions(out, "number of transactions actually processed: "),
        1234
    );
    assert_eq!(transactions("nothing", "number of: "), 0);
}
