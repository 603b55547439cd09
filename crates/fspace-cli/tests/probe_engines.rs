//! `fspace probe --for ENGINE` on the filesystem matrix: every engine's
//! advice names the settings it must (in the engine's syntax), keeps the
//! safety settings on with their reason, changes a default only with a
//! measured gain, says what applies on memory and network filesystems,
//! and `--write-config` writes the fragments the JSON holds, which
//! PostgreSQL (including the file as written) and RocksDB (`db_bench
//! --options_file`) read back value for value. `engines.rs` starts every
//! engine with every value the advice can name.
//!
//! One probe at a time: two would measure each other.

mod probe_common;
use fspace_test_kit as common;

use probe_common::*;
use serde_json::Value;

/// The settings each engine's advice must name.
const MUST_NAME: [(&str, &[&str]); 3] = [
    (
        "postgresql",
        &[
            "wal_sync_method",
            "wal_init_zero",
            "wal_recycle",
            "full_page_writes",
        ],
    ),
    (
        "mariadb",
        &[
            "innodb_flush_method",
            "innodb_log_file_buffering",
            "innodb_doublewrite",
        ],
    ),
    (
        "rocksdb",
        &[
            "recycle_log_file_num",
            "allow_fallocate",
            "use_direct_io_for_flush_and_compaction",
            "wal_bytes_per_sync",
        ],
    ),
];

fn advice<'a>(v: &'a Value, engine: &str) -> &'a Value {
    v["engines"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["engine"] == engine))
        .unwrap_or_else(|| panic!("no {engine} advice in {}", v["engines"]))
}

fn note_kinds(a: &Value) -> Vec<&str> {
    a["notes"]
        .as_array()
        .map(|n| n.iter().filter_map(|n| n["kind"].as_str()).collect())
        .unwrap_or_default()
}

common::per_fs! {
    /// A quick probe for all three engines: the advice, its reasons and
    /// the written fragments.
    fn probe_for_every_engine_advises_in_its_own_syntax(fs) on [ext4, btrfs, tmpfs, sshfs, xfs] {
        let _m = measuring();
        let _g = fs.lock();
        let dir = fs.tempdir();
        let out = tempfile::tempdir().expect("tempdir");
        let o = probe(
            &["--quick", "--json", "-q", "--for", "postgresql,mariadb", "--for", "rocksdb",
              "--write-config", out.path().to_str().expect("utf-8")],
            dir.path(),
            None,
        );
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["engines"].as_array().map(Vec::len), Some(3), "{}", fs.name);
        for (engine, names) in MUST_NAME {
            let a = advice(&v, engine);
            let settings = a["settings"].as_array().expect("settings");
            for name in names {
                assert!(
                    settings.iter().any(|s| s["name"] == *name),
                    "{}: {engine} advice does not name {name}: {a}",
                    fs.name
                );
            }
            for s in settings {
                let kind = s["kind"].as_str().expect("kind");
                assert!(!s["reason"].as_str().unwrap_or("").is_empty(), "{}: {s}", fs.name);
                if kind == "change" {
                    // A change needs a measured gain beyond the noise.
                    let g = &s["gain"];
                    assert!(g["ratio"].as_f64().unwrap_or(0.0) > 1.0, "{}: {engine}: {s}", fs.name);
                    assert_ne!(s["value"], s["default"], "{}: {s}", fs.name);
                } else if kind == "keep-default" || kind == "keep-for-safety" {
                    assert_eq!(s["value"], s["default"], "{}: {s}", fs.name);
                }
                if ["full_page_writes", "innodb_doublewrite"].contains(&s["name"].as_str().unwrap_or("")) {
                    assert_eq!(kind, "keep-for-safety", "{}: {s}", fs.name);
                    let reason = s["reason"].as_str().unwrap_or("");
                    assert!(reason.contains("RWF_ATOMIC"), "{}: {s}", fs.name);
                    assert!(reason.contains("does not ask the kernel for untorn"), "{}: {s}", fs.name);
                    // What the filesystem offers for the engine's data
                    // pages: the probe's own answer, word for word.
                    let a = data_page_answer(&v, a);
                    let short = answer_short(a);
                    assert!(reason.contains(&format!(": {short}: ")), "{}: {short:?} not in {reason}", fs.name);
                    assert!(reason.contains(a["reason"].as_str().unwrap()), "{}: {a} not in {reason}", fs.name);
                    if fs.is(&["xfs"]) && engine == "mariadb" && a["io"] == "direct" {
                        assert_eq!(short, "yes (software path)", "{}", fs.name);
                        assert!(reason.contains("cost measured: "), "{}: {reason}", fs.name);
                        assert!(reason.contains("MariaDB 10.11's do not"), "{}: {reason}", fs.name);
                    }
                }
            }
            // The fragment applies every setting but the trade-offs.
            let config = a["config"].as_str().expect("config");
            for s in settings {
                let (name, value) = (s["name"].as_str().unwrap(), s["value"].as_str().unwrap());
                let line = match engine {
                    "rocksdb" => format!("  {name}={value}\n"),
                    _ => format!("\n{name} = {value}\n"),
                };
                if s["kind"] != "trade-off" {
                    assert!(config.contains(&line), "{}: {engine}: {line:?} not in\n{config}", fs.name);
                }
            }
            let kinds = note_kinds(a);
            if fs.is(&["tmpfs"]) {
                assert!(kinds.contains(&"memory-filesystem"), "{}: {engine}: {kinds:?}", fs.name);
            }
            if fs.is(&["sshfs"]) {
                assert!(kinds.contains(&"network-filesystem"), "{}: {engine}: {kinds:?}", fs.name);
            }
            assert!(a["cases"].as_array().is_some_and(|c| c.len() >= 2), "{}: {a}", fs.name);
        }
        // --write-config: the same fragments, one file per engine.
        for (engine, file) in [
            ("postgresql", "postgresql.conf.fspace"),
            ("mariadb", "my.cnf.fspace"),
            ("rocksdb", "rocksdb.options.fspace"),
        ] {
            let written = std::fs::read_to_string(out.path().join(file))
                .unwrap_or_else(|e| panic!("{}: {file}: {e}", fs.name));
            assert_eq!(written, advice(&v, engine)["config"].as_str().unwrap(), "{}", fs.name);
        }
        // The db_bench command printed names the file written.
        let db_bench = advice(&v, "rocksdb")["db_bench"].as_str().unwrap();
        assert!(db_bench.contains("--options_file=rocksdb.options.fspace "), "{}: {db_bench}", fs.name);
        assert!(scratch_left(dir.path()).is_empty(), "{}: scratch left", fs.name);
        // The written files are what the engines read.
        if !fs.is(&["sshfs"]) {
            postgres_reads_the_fragment(fs, &out.path().join("postgresql.conf.fspace"), advice(&v, "postgresql"));
        }
        rocksdb_reads_the_fragment(fs, &out.path().join("rocksdb.options.fspace"), advice(&v, "rocksdb"));
    }
}

/// The probe's untorn answer for the engine's data pages: PostgreSQL's
/// 8 KiB through the page cache; InnoDB's 16 KiB with O_DIRECT, or through
/// the page cache where the advice changes innodb_flush_method to O_DSYNC.
fn data_page_answer<'a>(v: &'a Value, a: &Value) -> &'a Value {
    let (page, io) = match a["engine"].as_str().unwrap() {
        "postgresql" => (8192, "buffered"),
        _ => {
            let dsync = a["settings"].as_array().unwrap().iter().any(|s| {
                s["name"] == "innodb_flush_method"
                    && s["kind"] == "change"
                    && s["value"] == "O_DSYNC"
            });
            (16384, if dsync { "buffered" } else { "direct" })
        }
    };
    v["untorn"]["answers"]
        .as_array()
        .and_then(|x| x.iter().find(|x| x["page_size"] == page && x["io"] == io))
        .unwrap_or_else(|| panic!("no untorn answer for {page} {io}: {}", v["untorn"]))
}

/// An answer's short form, as `Answer::short` writes it.
fn answer_short(a: &Value) -> String {
    match (
        a["untorn"].as_bool(),
        a["path"].as_str(),
        a["limit"].as_str(),
    ) {
        (Some(true), Some(p), _) => format!("yes ({p} path)"),
        (Some(true), None, _) => "yes".into(),
        // The page cache path: said as what it means.
        (_, _, Some("buffered")) => "no (O_DIRECT only)".into(),
        (_, _, Some(l)) => format!("no ({l})"),
        _ => "no".into(),
    }
}

/// The `(name, value)` pairs an advice applies (all but the trade-offs).
fn applied(a: &Value) -> Vec<(String, String)> {
    a["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .filter(|s| s["kind"] != "trade-off")
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Whether `engine` can run here; a skip otherwise (a failure under
/// FSPACE_REQUIRE_MATRIX=1).
fn engine_here(engine: &str, fs: &common::Fs) -> bool {
    match common::engines::missing(engine) {
        None => true,
        Some(why) => {
            assert!(!common::require_matrix(), "{engine} on {}: {why}", fs.name);
            common::skipped("probe_for_every_engine/fragment", &fs.name, &why);
            false
        }
    }
}

/// PostgreSQL starts with the written `postgresql.conf` fragment included
/// as it is (comments and all), and `SHOW` returns every applied value.
fn postgres_reads_the_fragment(fs: &common::Fs, file: &std::path::Path, a: &Value) {
    if !engine_here("postgresql", fs) {
        return;
    }
    // The postgres user must read it: beside the data directory, 0644.
    let copy = tempfile::Builder::new()
        .prefix("fspace-fragment-")
        .suffix(".conf")
        .tempfile_in(&fs.root)
        .expect("fragment copy");
    std::fs::copy(file, copy.path()).expect("copy the fragment");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(copy.path(), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let include = copy.path().to_str().expect("utf-8");
    let pg = common::engines::Postgres::start(&fs.root, &[("include", include)])
        .unwrap_or_else(|e| panic!("{}: PostgreSQL with the fragment: {e}", fs.name));
    for (name, value) in applied(a) {
        assert_eq!(
            pg.show(&name),
            value,
            "{}: SHOW {name} with the written fragment",
            fs.name
        );
    }
    pg.stop()
        .unwrap_or_else(|e| panic!("{}: stop: {e}", fs.name));
}

/// db_bench runs with the written OPTIONS file as it is, and the options
/// the database took effect with show every applied value.
fn rocksdb_reads_the_fragment(fs: &common::Fs, file: &std::path::Path, a: &Value) {
    if !engine_here("rocksdb", fs) {
        return;
    }
    let rocks =
        common::engines::RocksDb::new(&fs.root).unwrap_or_else(|e| panic!("{}: {e}", fs.name));
    rocks
        .db_bench(
            Some(file),
            &["--benchmarks=fillrandom", "--sync=1", "--num=200"],
        )
        .unwrap_or_else(|e| panic!("{}: db_bench with the written OPTIONS file: {e}", fs.name));
    let effective = rocks
        .effective_options()
        .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
    for (name, value) in applied(a) {
        assert_eq!(
            common::engines::option(&effective, "DBOptions", &name).as_deref(),
            Some(value.as_str()),
            "{}: effective {name} with the written OPTIONS file",
            fs.name
        );
    }
}

/// Bad `--for` values and a missing `--write-config` directory fail before
/// anything is measured, naming what is wrong.
#[test]
fn bad_engine_arguments_fail_before_measuring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = probe(&["--quick", "--for", "mysql"], dir.path(), None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        common::unwrapped(&text(&o)).contains("unknownengine\"mysql\""),
        "{}",
        text(&o)
    );
    let missing = dir.path().join("missing");
    let o = probe(
        &[
            "--quick",
            "--for",
            "rocksdb",
            "--write-config",
            missing.to_str().unwrap(),
        ],
        dir.path(),
        None,
    );
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        common::unwrapped(&t).contains("probe--write-config") && t.contains("missing"),
        "{t}"
    );
    assert!(scratch_left(dir.path()).is_empty());
    assert_eq!(common::listing(dir.path()), Vec::<String>::new(), "{t}");
}
