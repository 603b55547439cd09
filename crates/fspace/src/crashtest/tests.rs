//! Hand-made traces of known bug patterns and their fixes, checked under
//! each model with a shell checker.

use super::raw::{encode, RawRecord, MAGIC};
use super::trace::{EntryKind, InitialEntry, Manifest, TRACE_FORMAT};
use super::*;
use std::path::{Path, PathBuf};

const ROOT: &str = "/r";
const ROOT_INO: u64 = 1;

struct Builder {
    fallocate: Option<bool>,
    recs: Vec<RawRecord>,
    initial: Vec<(String, u64, Vec<u8>)>,
}

fn rec(kind: u16, fd: i32, ino: u64) -> RawRecord {
    RawRecord {
        kind,
        pid: 1,
        t_ns: 0,
        ret: 0,
        err: 0,
        fd,
        ino,
        ino2: 0,
        a: 0,
        b: 0,
        c: 0,
        d: 0,
        dev: 7,
        path1: vec![],
        path2: vec![],
        data: vec![],
        at: 0,
    }
}

fn abs(p: &str) -> Vec<u8> {
    if p.is_empty() {
        ROOT.as_bytes().to_vec()
    } else {
        format!("{ROOT}/{p}").into_bytes()
    }
}

impl Builder {
    fn new() -> Builder {
        Builder {
            fallocate: Some(true),
            recs: vec![],
            initial: vec![],
        }
    }
    fn initial(mut self, name: &str, ino: u64, data: &[u8]) -> Builder {
        self.initial.push((name.into(), ino, data.to_vec()));
        self
    }
    fn create(&mut self, name: &str, fd: i32, ino: u64) {
        let mut r = rec(1, fd, ino);
        r.ret = fd.into();
        r.a = 0o102; // O_RDWR|O_CREAT
        r.c = 1;
        r.path1 = abs(name);
        self.recs.push(r);
    }
    fn open_dir(&mut self, fd: i32) {
        let mut r = rec(1, fd, ROOT_INO);
        r.ret = fd.into();
        r.a = 0o200000;
        r.path1 = abs("");
        self.recs.push(r);
    }
    fn write(&mut self, fd: i32, ino: u64, offset: u64, data: &[u8]) {
        let mut r = rec(3, fd, ino);
        r.ret = data.len() as i64;
        r.a = offset;
        r.b = data.len() as u64;
        r.d = 0o2;
        r.data = data.to_vec();
        self.recs.push(r);
    }
    fn fsync(&mut self, fd: i32, ino: u64) {
        self.recs.push(rec(12, fd, ino));
    }
    fn close(&mut self, fd: i32, ino: u64) {
        self.recs.push(rec(2, fd, ino));
    }
    fn rename(&mut self, from: &str, to: &str, ino: u64, replaced: u64) {
        let mut r = rec(7, -1, ino);
        r.ino2 = replaced;
        r.path1 = abs(from);
        r.path2 = abs(to);
        self.recs.push(r);
    }
    fn unlink(&mut self, name: &str, ino: u64) {
        let mut r = rec(9, -1, ino);
        r.path1 = abs(name);
        self.recs.push(r);
    }
    fn ack(&mut self, text: &str) {
        let mut r = rec(17, 1, 0);
        r.ret = text.len() as i64;
        r.a = 1;
        r.b = text.len() as u64;
        r.data = text.as_bytes().to_vec();
        r.dev = 0;
        self.recs.push(r);
    }
    fn save(&self, dir: &Path) -> Trace {
        std::fs::create_dir_all(dir.join("initial")).unwrap();
        let mut initial = vec![InitialEntry {
            path: PathBuf::new(),
            kind: EntryKind::Dir,
            ino: ROOT_INO,
            size: 0,
            target: None,
        }];
        for (name, ino, data) in &self.initial {
            std::fs::write(dir.join("initial").join(name), data).unwrap();
            initial.push(InitialEntry {
                path: name.into(),
                kind: EntryKind::File,
                ino: *ino,
                size: data.len() as u64,
                target: None,
            });
        }
        let m = Manifest {
            format: TRACE_FORMAT.into(),
            root: ROOT.into(),
            program: vec!["test".into()],
            started_unix: 0,
            exit_code: Some(0),
            signal: None,
            filesystem: "ext4".into(),
            dev: 7,
            volatile_cache: Some(true),
            fallocate: self.fallocate,
            initial,
        };
        std::fs::write(dir.join("trace.json"), serde_json::to_string(&m).unwrap()).unwrap();
        let mut bytes = MAGIC.to_vec();
        for r in &self.recs {
            bytes.extend(encode(r));
        }
        std::fs::write(dir.join("ops.bin"), bytes).unwrap();
        Trace::load(dir).unwrap()
    }
}

fn sh(script: &str) -> Vec<std::ffi::OsString> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn failing_models(trace: &Trace, checker: &[std::ffi::OsString]) -> Vec<Model> {
    let mut out = vec![];
    for m in Model::ALL {
        let opts = CheckOptions {
            models: vec![m],
            jobs: 2,
            ..CheckOptions::default()
        };
        let r = check(trace, checker, &opts, &|_, _| {}).unwrap();
        assert!(r.distinct > 0 && r.states >= r.distinct, "{r:?}");
        if !r.passed() {
            out.push(m);
        }
    }
    out
}

/// The checker of the replace programs: the file holds the old or the new
/// contents, and the new ones once "ok" was printed.
const REPLACE_CHECK: &str = r#"d=$(cat data 2>/dev/null); case "$d" in old|new) ;; *) echo "data holds '$d'"; exit 1;; esac; if grep -q ok "$FSPACE_CRASH_ACKS" && [ "$d" != new ]; then echo "acknowledged, but data holds '$d'"; exit 1; fi"#;

fn replace(fixed: bool) -> Builder {
    let mut b = Builder::new().initial("data", 100, b"old");
    b.create("data.tmp", 3, 101);
    b.write(3, 101, 0, b"new");
    if fixed {
        b.fsync(3, 101);
    }
    b.close(3, 101);
    b.rename("data.tmp", "data", 101, 100);
    b.open_dir(4);
    b.fsync(4, ROOT_INO);
    b.ack("ok\n");
    b
}

#[test]
fn rename_of_an_unsynced_temporary_over_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = replace(false).save(dir.path());
    // ext4's auto_da_alloc carries the data with the rename; nothing else does.
    assert_eq!(
        failing_models(&trace, &sh(REPLACE_CHECK)),
        [Model::Posix, Model::Xfs, Model::Btrfs]
    );
    let opts = CheckOptions {
        models: vec![Model::Xfs],
        ..CheckOptions::default()
    };
    let r = check(&trace, &sh(REPLACE_CHECK), &opts, &|_, _| {}).unwrap();
    let story = r.failures[0].story(&trace).join("\n");
    assert!(
        story.contains("NOT persisted: #2 write(data.tmp, 0..3)"),
        "{story}"
    );
    assert!(story.contains("data holds ''"), "{story}");
    let rules: Vec<Rule> = lint(&trace).iter().map(|f| f.rule).collect();
    assert_eq!(rules, [Rule::RenameUnsyncedData], "{:?}", lint(&trace));

    let dir = tempfile::tempdir().unwrap();
    let trace = replace(true).save(dir.path());
    assert_eq!(failing_models(&trace, &sh(REPLACE_CHECK)), []);
    assert!(lint(&trace).is_empty(), "{:?}", lint(&trace));
}

fn new_file(dir_sync: bool) -> Builder {
    let mut b = Builder::new();
    b.create("log", 3, 200);
    b.write(3, 200, 0, b"record\n");
    b.fsync(3, 200);
    if dir_sync {
        b.open_dir(4);
        b.fsync(4, ROOT_INO);
    }
    b.ack("committed\n");
    b
}

const NEW_FILE_CHECK: &str = r#"if grep -q committed "$FSPACE_CRASH_ACKS" && ! grep -q record log 2>/dev/null; then echo "acknowledged record missing"; exit 1; fi"#;

#[test]
fn a_new_file_without_a_directory_fsync() {
    let dir = tempfile::tempdir().unwrap();
    let trace = new_file(false).save(dir.path());
    // ext4 and XFS commit the name with the file's fsync, btrfs logs it.
    assert_eq!(failing_models(&trace, &sh(NEW_FILE_CHECK)), [Model::Posix]);
    let rules: Vec<Rule> = lint(&trace).iter().map(|f| f.rule).collect();
    assert_eq!(rules, [Rule::UnsyncedName]);
    let dir = tempfile::tempdir().unwrap();
    let trace = new_file(true).save(dir.path());
    assert_eq!(failing_models(&trace, &sh(NEW_FILE_CHECK)), []);
    assert!(lint(&trace).is_empty(), "{:?}", lint(&trace));
}

#[test]
fn an_acknowledgement_before_the_fsync() {
    let mut b = Builder::new();
    b.create("log", 3, 200);
    b.open_dir(4);
    b.fsync(4, ROOT_INO);
    b.write(3, 200, 0, b"record\n");
    b.ack("committed\n");
    b.fsync(3, 200);
    let dir = tempfile::tempdir().unwrap();
    let trace = b.save(dir.path());
    assert_eq!(failing_models(&trace, &sh(NEW_FILE_CHECK)), Model::ALL);
    let rules: Vec<Rule> = lint(&trace).iter().map(|f| f.rule).collect();
    assert_eq!(rules, [Rule::AckBeforeSync]);
}

#[test]
fn a_torn_page_in_a_file_without_checksums() {
    // Two pages overwritten in place, synced, acknowledged; the checker
    // wants all of one version or all of the other.
    let page = |c: u8| vec![c; 8192];
    let mut b = Builder::new().initial("db", 300, &page(b'a'));
    b.write(3, 300, 0, &page(b'b'));
    b.fsync(3, 300);
    b.ack("ok\n");
    let dir = tempfile::tempdir().unwrap();
    let trace = b.save(dir.path());
    let check_sh = r#"n=$(tr -d 'a' < db | wc -c); [ "$n" = 0 ] || [ "$n" = 8192 ] || { echo "mixed: $n bytes of b"; exit 1; }"#;
    let opts = CheckOptions {
        models: vec![Model::Ext4],
        ..CheckOptions::default()
    };
    let r = check(&trace, &sh(check_sh), &opts, &|_, _| {}).unwrap();
    assert!(!r.passed());
    let t = r
        .failures
        .iter()
        .find_map(|f| f.torn.clone())
        .expect("a torn write");
    assert_eq!(t.range, 0..8192);
    assert!(
        t.persisted == (0..4096) || t.persisted == (4096..8192),
        "{t:?}"
    );
}

#[test]
fn an_inode_number_given_again_is_another_file() {
    // ext4 hands a freed inode number to the next new file: the new file
    // must not start with the old one's bytes.
    let mut b = Builder::new().initial("old", 100, b"0123456789");
    b.unlink("old", 100);
    b.create("new", 3, 100);
    b.write(3, 100, 0, b"ab");
    b.fsync(3, 100);
    b.open_dir(4);
    b.fsync(4, ROOT_INO);
    b.ack("ok\n");
    let dir = tempfile::tempdir().unwrap();
    let trace = b.save(dir.path());
    let check = r#"if [ -e new ]; then [ "$(cat new)" = ab ] || [ "$(cat new)" = "" ] || { echo "new holds '$(cat new)'"; exit 1; }; fi; if [ -e old ]; then [ "$(cat old)" = 0123456789 ] || { echo "old holds '$(cat old)'"; exit 1; }; fi"#;
    assert_eq!(failing_models(&trace, &sh(check)), []);
}

fn rules(trace: &Trace) -> Vec<Rule> {
    lint(trace).iter().map(|f| f.rule).collect()
}

#[test]
fn lint_fsync_retry_direct_writes_and_emulated_posix_fallocate() {
    // fsyncgate: EIO, then the same file synced again.
    let mut b = Builder::new();
    b.create("log", 3, 200);
    b.write(3, 200, 0, b"x");
    let mut failed = rec(12, 3, 200);
    failed.ret = -1;
    failed.err = 5;
    b.recs.push(failed);
    b.fsync(3, 200);
    let dir = tempfile::tempdir().unwrap();
    assert!(rules(&b.save(dir.path())).contains(&Rule::FsyncRetry));

    // An O_DIRECT write, acknowledged without a sync; then with one.
    for synced in [false, true] {
        let mut b = Builder::new().initial("db", 300, &[0; 4096]);
        let mut w = rec(3, 3, 300);
        w.ret = 4096;
        w.b = 4096;
        w.d = 0o40002; // O_DIRECT | O_RDWR
        w.data = vec![7; 4096];
        b.recs.push(w);
        if synced {
            b.fsync(3, 300);
        }
        b.ack("ok\n");
        let dir = tempfile::tempdir().unwrap();
        let found = rules(&b.save(dir.path())).contains(&Rule::DirectWithoutSync);
        assert_eq!(found, !synced);
    }

    // posix_fallocate where fallocate(2) does not work, and where it does.
    for works in [false, true] {
        let mut b = Builder::new();
        b.fallocate = Some(works);
        b.create("f", 3, 400);
        let mut p = rec(6, 3, 400);
        p.c = 1 << 20;
        p.d = 0xEF53;
        b.recs.push(p);
        let dir = tempfile::tempdir().unwrap();
        let found = rules(&b.save(dir.path())).contains(&Rule::EmulatedPosixFallocate);
        assert_eq!(found, !works);
    }
}

/// Every kind's `name()` is its JSON name, which the Python and C faces
/// hand out in place of the enum.
#[test]
fn names_are_the_json_names() {
    fn json<T: serde::Serialize>(v: T) -> String {
        serde_json::to_value(v)
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }
    for m in Model::ALL {
        assert_eq!(json(m), m.name());
        assert_eq!(m.name().parse::<Model>().unwrap(), m);
    }
    for k in [
        PointKind::BeforeSync,
        PointKind::DuringSyncWrite,
        PointKind::AfterAck,
        PointKind::Between,
        PointKind::End,
    ] {
        assert_eq!(json(k), k.name());
    }
    for k in [
        FailureKind::Inconsistent,
        FailureKind::Crashed,
        FailureKind::TimedOut,
        FailureKind::Lost,
    ] {
        assert_eq!(json(k), k.name());
    }
    for r in [
        Rule::UnsyncedName,
        Rule::RenameUnsyncedData,
        Rule::AckBeforeSync,
        Rule::FsyncRetry,
        Rule::DirectWithoutSync,
        Rule::EmulatedPosixFallocate,
        Rule::SyncFileRangeOnly,
    ] {
        assert_eq!(json(r), r.name());
    }
}
