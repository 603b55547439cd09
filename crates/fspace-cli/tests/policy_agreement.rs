//! One question, one answer: on every filesystem of the matrix, `fspace
//! info`, `fspace grow --for INTENT`, the log's preparer, the C API's
//! `fspace_grow` and `fspace_fs_info_auto_strategy`, and the probe's
//! built-in recommendation name the strategy `fspace::probe::plan` names,
//! for each intent: first with no saved measurement, then with one saved for
//! the filesystem (which they all must follow). For intent log they also
//! agree on whether the file is made NOCOW (`Plan::nocow`: btrfs, where
//! the log's segments are NOCOW and zero-filled): `info`, the growth
//! reports of the CLI and the C API, and the log itself, down to the
//! attribute of the segment it prepared.

use fspace_test_kit as common;

use fspace::probe::{FsKey, Recommendation, SavedPolicy, SAVED_SCHEMA};
use fspace::wal::{Wal, WalOptions};
use fspace::{fs_info, Intent, Strategy};
use fspace::{plan, SavedResults, StrategyChoice};
use serde_json::Value;
use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const INTENTS: [Intent; 3] = [Intent::Bulk, Intent::Log, Intent::Sparse];

/// The state directory of this test binary: the C API reads
/// `FSPACE_STATE_DIR` from the environment, so it is set once, before any
/// test works. Each filesystem's saved file has its own name in it.
fn state_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().expect("state dir").keep();
        std::env::set_var("FSPACE_STATE_DIR", &d);
        d
    })
}

fn cli_json(args: &[&str], target: &Path) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(args)
        .arg(target)
        .env("FSPACE_STATE_DIR", state_dir())
        .output()
        .expect("run fspace");
    assert!(o.status.success(), "{args:?}: {}", common::output_text(&o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// The strategy `fspace info --json` names first for `intent`, and
/// whether the file is made NOCOW first.
fn from_info(dir: &Path, intent: Intent) -> (String, bool) {
    let v = cli_json(&["info", "--json"], dir);
    let p = v["policy"]
        .as_array()
        .expect("policy")
        .iter()
        .find(|p| p["intent"] == intent.name())
        .expect("intent in policy");
    (
        p["ladder"][0].as_str().expect("ladder").to_string(),
        p["nocow"].as_bool().expect("nocow"),
    )
}

/// The strategy `fspace grow --create --for INTENT` used.
fn from_grow_cli(dir: &Path, intent: Intent, n: &str) -> (String, Value) {
    let f = dir.join(format!("cli-{}-{n}", intent.name()));
    let o = Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(["grow", "--json", "--create", "--for", intent.name()])
        .arg(&f)
        .arg("1MiB")
        .env("FSPACE_STATE_DIR", state_dir())
        .output()
        .expect("run fspace");
    assert!(o.status.success(), "{}", common::output_text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    (v["strategy"].as_str().expect("strategy").to_string(), v)
}

fn cstr(p: &Path) -> CString {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).expect("no NUL")
}

fn c_intent(i: Intent) -> fspace_capi::fspace_intent {
    match i {
        Intent::Bulk => fspace_capi::FSPACE_INTENT_BULK,
        Intent::Log => fspace_capi::FSPACE_INTENT_LOG,
        Intent::Sparse => fspace_capi::FSPACE_INTENT_SPARSE,
    }
}

fn c_name(s: fspace_capi::fspace_strategy) -> String {
    // SAFETY: the function returns a static string.
    unsafe { CStr::from_ptr(fspace_capi::fspace_strategy_name(s)) }
        .to_string_lossy()
        .into_owned()
}

/// The strategy `fspace_fs_info_auto_strategy` names.
fn from_c_info(dir: &Path, intent: Intent) -> String {
    let path = cstr(dir);
    let mut info = std::ptr::null_mut();
    let mut s = fspace_capi::FSPACE_STRATEGY_AUTO;
    // SAFETY: valid C string and out pointers; the handle is freed below.
    unsafe {
        assert_eq!(fspace_capi::fspace_fs_info_new(path.as_ptr(), &mut info), 0);
        let rc = fspace_capi::fspace_fs_info_auto_strategy(info, c_intent(intent), &mut s);
        fspace_capi::fspace_fs_info_free(info);
        assert_eq!(rc, 0);
    }
    c_name(s)
}

/// The strategy `fspace_grow` (defaults, `create`) used, and whether the
/// file is NOCOW (its report's JSON).
fn from_c_grow(dir: &Path, intent: Intent, n: &str) -> (String, bool) {
    let path = cstr(&dir.join(format!("c-{}-{n}", intent.name())));
    let mut o = std::mem::MaybeUninit::<fspace_capi::fspace_grow_options>::uninit();
    let mut report = std::ptr::null_mut();
    let mut json: *const c_char = std::ptr::null();
    // SAFETY: valid pointers; the report is freed after its JSON is copied.
    let v: Value = unsafe {
        assert_eq!(
            fspace_capi::fspace_grow_options_init(
                o.as_mut_ptr(),
                size_of::<fspace_capi::fspace_grow_options>()
            ),
            0
        );
        let mut o = o.assume_init();
        o.intent = c_intent(intent);
        o.create = true;
        let rc = fspace_capi::fspace_grow(path.as_ptr(), 1 << 20, &o, &mut report);
        assert_eq!(rc, 0, "fspace_grow on {}", dir.display());
        assert_eq!(fspace_capi::fspace_grow_report_json(report, &mut json), 0);
        let v = serde_json::from_slice(CStr::from_ptr(json).to_bytes()).expect("JSON");
        fspace_capi::fspace_grow_report_free(report);
        v
    };
    (
        v["strategy"].as_str().expect("strategy").to_string(),
        v["nocow"].as_bool().expect("nocow"),
    )
}

/// Whether the file at `p` has the NOCOW attribute (`lsattr`'s `C`).
fn has_nocow(p: &Path) -> bool {
    let f = std::fs::File::open(p).expect("open");
    rustix::fs::ioctl_getflags(&f).is_ok_and(|f| f.contains(rustix::fs::IFlags::NOCOW))
}

/// The strategy the log's preparer grew its next segment with, following
/// the same saved measurements, whether the log says its segments are
/// NOCOW, and whether that segment really is.
fn from_wal(dir: &Path, n: &str) -> (String, bool, bool) {
    let o = WalOptions::default()
        .segment_size(1 << 20)
        .prepare_ahead(1)
        .prepare(StrategyChoice::auto(SavedResults::in_dir(state_dir())));
    let wal_dir = dir.join(format!("wal-{n}"));
    let wal = Wal::open(&wal_dir, o).expect("open log");
    wal.wait_prepared().expect("prepared");
    let stats = wal.stats();
    let what = stats.last_prepare.expect("a segment was created");
    let segments: Vec<PathBuf> = std::fs::read_dir(&wal_dir)
        .expect("list the log")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .collect();
    assert!(segments.len() >= 2, "{segments:?}");
    let all = segments.iter().all(|p| has_nocow(p));
    let none = !segments.iter().any(|p| has_nocow(p));
    assert!(all || none, "some segments NOCOW, some not: {segments:?}");
    (what.strategy.name().to_string(), stats.io.nocow, all)
}

/// A saved strategy that differs from `built_in` and works everywhere.
fn other_than(built_in: Strategy) -> Strategy {
    if built_in == Strategy::Sparse {
        Strategy::ZeroFill
    } else {
        Strategy::Sparse
    }
}

fn agree(fs: &common::Fs) {
    let fs_name = fs.name.as_str();
    let store = SavedResults::in_dir(state_dir());
    let dir = fs.tempdir();
    let info = fs_info(dir.path()).expect("fs_info");
    let key = FsKey::of(&info);
    let _ = std::fs::remove_file(store.file_for(&key));
    let auto = StrategyChoice::auto(store.clone());

    // No saved measurement: the built-in rules, everywhere.
    let probe = fspace::internals::recommend(&info, &[], &[], &[], None);
    let mut saved = vec![];
    for intent in INTENTS {
        let want = plan(&info, intent, &auto);
        assert!(want.saved.is_none());
        assert_eq!(want, plan(&info, intent, &StrategyChoice::built_in()));
        let w = want.first().name();
        let ctx = format!("{fs_name}, intent {}", intent.name());
        // NOCOW log space exactly where the log makes its segments so.
        assert_eq!(
            want.nocow,
            intent == Intent::Log && info.kind == fspace::FsKind::Btrfs,
            "{ctx}"
        );
        let n = want.nocow;
        assert_eq!(from_info(dir.path(), intent), (w.into(), n), "info: {ctx}");
        let (s, v) = from_grow_cli(dir.path(), intent, "a");
        assert_eq!((s.as_str(), v["nocow"] == n), (w, true), "grow: {ctx}: {v}");
        let f = dir.path().join(format!("cli-{}-a", intent.name()));
        assert_eq!(has_nocow(&f), n, "grow: {ctx}: the file's attribute");
        assert_eq!(from_c_info(dir.path(), intent), w, "C auto_strategy: {ctx}");
        assert_eq!(
            from_c_grow(dir.path(), intent, "a"),
            (w.into(), n),
            "fspace_grow: {ctx}"
        );
        let r = probe
            .iter()
            .find(|r| r.intent == intent)
            .expect("recommended");
        assert!(!r.measured);
        assert_eq!(r.strategy.name(), w, "probe: {ctx}");
        if intent == Intent::Log {
            assert_eq!(
                from_wal(dir.path(), "a"),
                (w.into(), n, n),
                "log preparer: {ctx}"
            );
        }
        // Built as the saved file spells it: the types are
        // #[non_exhaustive], and the file format is what a fleet writes.
        saved.push(
            serde_json::from_value::<Recommendation>(serde_json::json!({
                "intent": intent,
                "strategy": other_than(want.first()),
                "recycle": null,
                "summary": "saved by the agreement test",
                "reason": "test",
                "figure": 1.0,
                "measured": true,
                "too_noisy": false,
            }))
            .expect("a recommendation"),
        );
    }

    // A saved measurement: everyone follows it.
    let file = store
        .save(
            &serde_json::from_value::<SavedPolicy>(serde_json::json!({
                "schema": SAVED_SCHEMA,
                "measured_utc": "2026-11-24 00:00:00 UTC",
                "measured_by": "policy_agreement test",
                "key": key,
                "recommendations": saved,
            }))
            .expect("a saved policy"),
        )
        .expect("save");
    for rec in &saved {
        let intent = rec.intent;
        let want = plan(&info, intent, &auto);
        assert_eq!(want.first(), rec.strategy);
        assert_eq!(want.saved.as_deref(), Some(file.as_path()));
        let w = rec.strategy.name();
        let n = want.nocow;
        let ctx = format!("{fs_name}, intent {}, saved", intent.name());
        assert_eq!(from_info(dir.path(), intent), (w.into(), n), "info: {ctx}");
        let (s, v) = from_grow_cli(dir.path(), intent, "b");
        assert_eq!(s, w, "grow: {ctx}: {v}");
        assert_eq!(v["nocow"], n, "grow: {ctx}: {v}");
        assert_eq!(v["saved_probe"], file.to_str().expect("utf-8"), "{ctx}");
        assert_eq!(from_c_info(dir.path(), intent), w, "C auto_strategy: {ctx}");
        assert_eq!(
            from_c_grow(dir.path(), intent, "b"),
            (w.into(), n),
            "fspace_grow: {ctx}"
        );
        if intent == Intent::Log {
            // On btrfs the saved strategy is sparse: copy-on-write
            // segments, as the saved measurement says.
            assert_eq!(
                from_wal(dir.path(), "b"),
                (w.into(), n, n),
                "log preparer: {ctx}"
            );
        }
    }
    std::fs::remove_file(&file).expect("remove the saved file");
}

common::per_fs! {
    /// Every front and the log name the policy's strategy on this filesystem.
    fn all_fronts_agree(fs) {
        agree(fs);
    }
}
