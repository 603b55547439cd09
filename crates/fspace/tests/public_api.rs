//! The library's public surface is a promise (docs/api.md): this test lists
//! every public item, as rustdoc sees it, and fails when the list differs
//! from `docs/public-api.txt`. A change to the surface is made on purpose:
//! regenerate the file with `FSPACE_BLESS=1 cargo test -p fspace --test
//! public_api`, and say in CHANGELOG.md what broke for callers; the
//! baseline test below holds that: a break since the last release's
//! surface (`docs/public-api-baseline.txt`) must be named in the changelog.
//!
//! The list comes from rustdoc's JSON output read by the `public-api`
//! crate (the library behind `cargo public-api`). rustdoc's JSON output is
//! unstable, so the stable toolchain is asked for it with
//! `RUSTC_BOOTSTRAP=1`; nothing else is built that way.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The rustdoc JSON format `public-api` 0.51 was checked to read correctly
/// (Rust 1.95 writes it; the crate itself was built for format 56).
const READ_FORMAT: u64 = 57;

/// The public items of the library, one per line, sorted.
fn public_items() -> String {
    let root = workspace();
    // A target directory of its own: the outer `cargo test` may hold the
    // lock on the usual one.
    let target = root.join("target/public-api");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTDOCFLAGS")
        .args(["rustdoc", "-q", "-p", "fspace", "--lib", "--"])
        .args(["-Z", "unstable-options", "--output-format", "json"])
        .output()
        .expect("run cargo rustdoc");
    assert!(
        out.status.success(),
        "cargo rustdoc --output-format json failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = target.join("doc/fspace.json");
    // The reader was checked against this rustdoc JSON format (Rust 1.95's);
    // another toolchain's may parse wrongly or not at all: say so instead.
    let text = std::fs::read_to_string(&json).expect("read rustdoc JSON");
    let version: serde_json::Value = serde_json::from_str(&text).expect("rustdoc JSON");
    assert_eq!(
        version["format_version"].as_u64(),
        Some(READ_FORMAT),
        "rustdoc wrote JSON format {} but the public-api reader in use was checked against \
         format {READ_FORMAT}: run this test with Rust 1.95, or move the public-api \
         dev-dependency to a release that reads the new format and re-check docs/public-api.txt",
        version["format_version"]
    );
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .omit_auto_derived_impls(true)
        .build()
        .expect("read rustdoc JSON");
    let mut lines: Vec<String> = api.items().map(std::string::ToString::to_string).collect();
    lines.sort();
    lines.dedup();
    lines.join("\n") + "\n"
}

#[test]
fn public_surface_is_the_committed_one() {
    let file = workspace().join("docs/public-api.txt");
    let now = public_items();
    if std::env::var("FSPACE_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&file, &now).expect("write docs/public-api.txt");
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    if committed != now {
        let old: std::collections::BTreeSet<&str> = committed.lines().collect();
        let new: std::collections::BTreeSet<&str> = now.lines().collect();
        let removed: Vec<&&str> = old.difference(&new).collect();
        let added: Vec<&&str> = new.difference(&old).collect();
        panic!(
            "the public API changed without docs/public-api.txt:\n\
             removed ({}):\n  {}\nadded ({}):\n  {}\n\
             If this is meant, run FSPACE_BLESS=1 cargo test -p fspace --test public_api \
             and note the break in CHANGELOG.md.",
            removed.len(),
            removed
                .iter()
                .map(std::string::ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n  "),
            added.len(),
            added
                .iter()
                .map(std::string::ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
}

#[test]
fn no_dependency_type_is_part_of_the_surface() {
    let now = public_items();
    for dep in ["rustix::", "crc_fast::", "serde_json::"] {
        let hits: Vec<&str> = now.lines().filter(|l| l.contains(dep)).collect();
        assert!(
            hits.is_empty(),
            "{dep} in the public API:\n{}",
            hits.join("\n")
        );
    }
}

/// Whether a public item of the inventory is a "could not" answer or a
/// note held as text: a field named `error`, `unsupported`,
/// `not_measured`, `unmeasured`, `note` or `*_error` / `*_note` whose type
/// holds a `String`, or any field or function with a `Result<_, String>`
/// (docs/api.md, "And 'could not' answers"). `Error`'s own variants are
/// the error itself (their text is its message), and `fspace::internals`
/// is the tests' and fuzzers' door, not a promise.
fn text_where_a_type_belongs(line: &str) -> bool {
    const STRING: &str = "alloc::string::String";
    if line.starts_with("pub fspace::Error::") || line.contains("fspace::internals::") {
        return false;
    }
    if line.contains("core::result::Result<") && line.contains(&format!(", {STRING}>")) {
        return true;
    }
    let Some(field) = line.strip_prefix("pub fspace::") else {
        return false;
    };
    let Some((path, ty)) = field.split_once(": ") else {
        return false;
    };
    let name = path.rsplit("::").next().unwrap_or(path);
    let named = matches!(
        name,
        "error" | "unsupported" | "not_measured" | "unmeasured" | "note"
    ) || name.ends_with("_error")
        || name.ends_with("_note");
    named && ty.contains(STRING) || static_text_as_a_kind(name, ty)
}

/// A public field of static text that is not one of the few that are
/// words by nature (an operation's name, a schema, a version, a
/// description): a set of names a caller would compare against, where an
/// enum belongs (`untorn::Answer::limit` was `Option<&'static str>`).
fn static_text_as_a_kind(name: &str, ty: &str) -> bool {
    const WORDS: &[&str] = &[
        "op",             // Error::*::op: the system call's name
        "flags",          // Error::Io::flags: the flags as written in the call
        "what",           // ParseError::what: the value's description
        "option",         // InvalidOption::option: the option's name
        "expected",       // ParseError::expected: the accepted spellings
        "schema",         // a JSON document's schema name
        "fspace_version", // the library's version
        "versions",       // EngineAdvice::versions: the versions it was checked on
        "offsets",        // UntornCost::offsets: how its offsets were drawn
    ];
    ty.contains("&'static str") && !WORDS.contains(&name)
}

#[test]
fn reasons_and_notes_are_typed() {
    let now = public_items();
    let hits: Vec<&str> = now
        .lines()
        .filter(|l| text_where_a_type_belongs(l))
        .collect();
    assert!(
        hits.is_empty(),
        "text where a Reason or a Note belongs (docs/api.md, \"And 'could not' answers\"):\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_text_rule_sees_what_it_should() {
    // The shapes the inventory prints, before and after the change.
    for bad in [
        "pub fspace::Fallback::error: alloc::string::String",
        "pub fspace::FsInfo::allocation_unit_note: core::option::Option<alloc::string::String>",
        "pub fspace::FsInfo::capabilities: core::result::Result<alloc::sync::Arc<fspace::Capabilities>, alloc::string::String>",
        "pub fspace::bench::CommitResult::unsupported: core::option::Option<alloc::string::String>",
        "pub fn fspace::untorn::x() -> core::result::Result<u8, alloc::string::String>",
        "pub fspace::untorn::Answer::limit: core::option::Option<&'static str>",
        "pub fspace::untorn::Refusal::NotSupported::state: &'static str",
        "pub fspace::bench::SuiteReport::direct_io: &'static str",
    ] {
        assert!(text_where_a_type_belongs(bad), "{bad}");
    }
    for good in [
        "pub fspace::Fallback::error: fspace::Reason",
        "pub fspace::FsInfo::allocation_unit_note: core::option::Option<fspace::Note>",
        "pub fspace::Error::Context::note: alloc::string::String",
        "pub fspace::Plan::reason: alloc::string::String",
        "pub fspace::untorn::Answer::limit: core::option::Option<fspace::untorn::Limit>",
        "pub fspace::ParseError::what: &'static str",
        "pub fn fspace::internals::parse_saved(text: &str) -> core::result::Result<fspace::probe::SavedPolicy, alloc::string::String>",
    ] {
        assert!(!text_where_a_type_belongs(good), "{good}");
    }
}

/// The item a line of the inventory is about, by its last two path
/// segments (`CommitResult::unsupported`, `bench::check_suite`): how
/// CHANGELOG.md names what changed.
fn item_key(line: &str) -> Option<String> {
    let start = line.find("fspace::")? + "fspace::".len();
    let rest = &line[start..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    let path = rest[..end].trim_end_matches(':');
    let segments: Vec<&str> = path.split("::").collect();
    let n = segments.len();
    Some(segments[n.saturating_sub(2)..].join("::"))
}

/// The text of CHANGELOG.md's "Unreleased" section.
fn unreleased() -> String {
    let text = std::fs::read_to_string(workspace().join("CHANGELOG.md")).expect("CHANGELOG.md");
    let start = text.find("## Unreleased").expect("an Unreleased section");
    let rest = &text[start + 3..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    rest[..end].to_string()
}

/// An addition is free; a break is written down. `docs/public-api-baseline.txt`
/// is the surface as of the last release (recorded again when one is cut:
/// `FSPACE_BLESS_BASELINE=1`); every item in it that is gone or changed
/// (a line of it missing now) must be named in CHANGELOG.md's "Unreleased"
/// section, by its last two path segments (`Fallback::errno`), so that no
/// break reaches callers unannounced. What is only added needs nothing.
#[test]
fn every_break_since_the_baseline_is_in_the_changelog() {
    let file = workspace().join("docs/public-api-baseline.txt");
    let now = public_items();
    if std::env::var("FSPACE_BLESS_BASELINE").is_ok_and(|v| v == "1") {
        std::fs::write(&file, &now).expect("write docs/public-api-baseline.txt");
        return;
    }
    let baseline = std::fs::read_to_string(&file).expect("docs/public-api-baseline.txt");
    let current: std::collections::BTreeSet<&str> = now.lines().collect();
    let log = unreleased();
    let mut unannounced: Vec<String> = baseline
        .lines()
        .filter(|l| !current.contains(l))
        .filter_map(item_key)
        .filter(|k| !log.contains(k.as_str()))
        .collect();
    unannounced.sort();
    unannounced.dedup();
    assert!(
        unannounced.is_empty(),
        "these items of the baseline's public API are gone or changed, and CHANGELOG.md's \
         Unreleased section does not name them (as `Type::item`): say what callers must do\n  {}",
        unannounced.join("\n  ")
    );
}

#[test]
fn item_keys_name_types_members_and_functions() {
    assert_eq!(
        item_key("pub fspace::Fallback::errno: i32").as_deref(),
        Some("Fallback::errno")
    );
    assert_eq!(
        item_key("pub fn fspace::bench::check_suite(modes: &[fspace::bench::SpaceState]) -> u8")
            .as_deref(),
        Some("bench::check_suite")
    );
    assert_eq!(
        item_key("pub struct fspace::Reason").as_deref(),
        Some("Reason")
    );
    assert_eq!(
        item_key("pub fspace::probe::GrowthResult::errno: core::option::Option<i32>").as_deref(),
        Some("GrowthResult::errno")
    );
}
