//! The library's layering holds: every `crate::` path in `src/` names a
//! module of a lower layer, or one listed before it in its own layer, in the
//! table at the top of `docs/design.md` ("Layers"). A use that goes up or
//! sideways fails here, naming the file, the line and the two modules.
//!
//! And no file imports, directly or through others, a file that imports it
//! back: the import graph between files (`crate::`, `super::`, `self::` and
//! module-relative paths, re-exports and globs followed to the file that
//! defines what they name; see `layering/imports.rs`) has no circle. A
//! circle fails here, naming its files and the imports that tie them.
//!
//! The same circle check runs over the other crates (the CLI, the C API,
//! its preload, the Python crate), and in every crate no file imports the
//! crate root above it (`lib.rs`, `main.rs`: a root that is facade and
//! helpers at once); in the library no file imports a folder's `mod.rs`
//! above it either (`pub(in path)` visibilities and unit-test modules are
//! not imports).

#[path = "layering/imports.rs"]
mod imports;

use imports::{circles, Crate, Tree};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Module → its rank (layer, position in the layer), from the table.
fn table() -> BTreeMap<String, (usize, usize)> {
    let doc = root().join("../../docs/design.md");
    let text = std::fs::read_to_string(&doc).expect("read docs/design.md");
    let begin = text
        .find("<!-- layers: begin")
        .expect("layers: begin marker");
    let end = text
        .find("<!-- layers: end -->")
        .expect("layers: end marker");
    let mut ranks = BTreeMap::new();
    let rows = text[begin..end].lines().filter(|l| {
        l.starts_with('|') && !l.starts_with("|---") && !l.contains("modules in order")
    });
    for (layer, row) in rows.enumerate() {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let modules = cells.get(2).expect("a modules cell");
        for (pos, m) in modules.split(',').map(str::trim).enumerate() {
            assert!(
                ranks.insert(m.to_string(), (layer, pos)).is_none(),
                "module {m} is listed twice in docs/design.md"
            );
        }
    }
    assert!(ranks.len() >= 10, "the layer table looks empty: {ranks:?}");
    ranks
}

/// The source with comments removed (line comments, doc comments and
/// block comments; string contents are kept, which is harmless here).
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c as char);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1] as char);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
        } else if c == b'"' {
            in_str = true;
            out.push('"');
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            while i + 1 < b.len() && !b[i..].starts_with(b"*/") {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// Every module a source names through `crate::`, with its line: both
/// `crate::m::...` and each first segment of `crate::{a::X, b, ...}`.
fn crate_uses(src: &str) -> Vec<(usize, String)> {
    let code = strip_comments(src);
    let mut found = vec![];
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut from = 0;
    while let Some(k) = code[from..].find("crate::") {
        let at = from + k;
        from = at + "crate::".len();
        // `fspace_crate::x` or `$crate::` are not ours.
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            let mut ident = String::new();
            for c in group.chars() {
                if depth == 0 && item_start {
                    if c.is_alphanumeric() || c == '_' {
                        ident.push(c);
                        continue;
                    }
                    if !ident.is_empty() {
                        found.push((line_of(at), std::mem::take(&mut ident)));
                        item_start = false;
                    }
                }
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    _ => {}
                }
            }
            if !ident.is_empty() {
                found.push((line_of(at), ident));
            }
        } else {
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push((line_of(at), ident));
        }
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_crate_path_goes_down_the_layers() {
    let ranks = table();
    let src = root().join("src");
    let mut files = vec![];
    sources(&src, &mut files);
    files.sort();
    let mut bad = vec![];
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let module = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs").to_string())
            .expect("a module");
        if module == "lib" {
            continue;
        }
        let Some(&mine) = ranks.get(&module) else {
            bad.push(format!(
                "{}: module {module} is not in the layer table of docs/design.md",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read source");
        for (line, used) in crate_uses(&text) {
            if used == module {
                continue;
            }
            match ranks.get(&used) {
                Some(&theirs) if theirs < mine => {}
                Some(_) => bad.push(format!(
                    "{}:{line}: {module} uses {used}, which is not below it",
                    rel.display()
                )),
                None => bad.push(format!(
                    "{}:{line}: crate::{used} is not a module of the layer table \
                     (name the module, not a re-export of the crate root)",
                    rel.display()
                )),
            }
        }
    }
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_sees_uses() {
    let src = "use crate::{error::{Error, Result}, sys};\n// crate::probe\nfn f() { crate::units::x(); }\nuse crate::policy::{\n    a,\n};";
    let got: Vec<String> = crate_uses(src).into_iter().map(|(_, m)| m).collect();
    assert_eq!(got, ["error", "sys", "units", "policy"]);
}

/// The sources under `src/` as a tree for the import reader.
fn source_tree() -> Tree {
    tree_of(&root().join("src"))
}

/// The sources under `src` as a tree for the import reader.
fn tree_of(src: &Path) -> Tree {
    let mut files = vec![];
    sources(src, &mut files);
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(src).expect("under src");
            let text = std::fs::read_to_string(f).expect("read source");
            (rel.to_string_lossy().replace('\\', "/"), text)
        })
        .collect()
}

/// The circles of `tree`, each as one line per file and one per import
/// inside it.
fn circle_report(tree: &Tree, allowed: &[&str]) -> Vec<String> {
    let krate = Crate::read(tree);
    circles(&krate.edges())
        .into_iter()
        .filter(|(files, _)| !files.iter().all(|f| allowed.contains(&f.as_str())))
        .map(|(files, edges)| {
            // One line per pair of files: the first import's line and the
            // paths that tie them.
            let mut pairs: BTreeMap<(&str, &str), (usize, Vec<&str>)> = BTreeMap::new();
            for e in &edges {
                let p = pairs.entry((&e.from, &e.to)).or_insert((e.line, vec![]));
                p.0 = p.0.min(e.line);
                if !p.1.contains(&e.path.as_str()) {
                    p.1.push(&e.path);
                }
            }
            let ties: Vec<String> = pairs
                .iter()
                .map(|((from, to), (line, paths))| {
                    format!("  {from}:{line} -> {to}: {}", paths.join(", "))
                })
                .collect();
            format!(
                "circle of {} files: {}\n{}",
                files.len(),
                files.join(", "),
                ties.join("\n")
            )
        })
        .collect()
}

#[test]
fn no_import_circle_between_files() {
    let tree = source_tree();
    assert!(tree.len() > 50, "the source tree looks empty");
    let bad = circle_report(&tree, &[]);
    assert!(bad.is_empty(), "import circles:\n{}", bad.join("\n"));
}

fn tree(files: &[(&str, &str)]) -> Tree {
    files
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect()
}

#[test]
fn the_circle_check_finds_a_planted_circle_through_super() {
    // Two siblings that take from each other by `super::`.
    let planted = tree(&[
        ("lib.rs", "pub mod m;\n"),
        ("m/mod.rs", "mod a;\nmod b;\npub use a::Alpha;\n"),
        (
            "m/a.rs",
            "use super::b::Beta;\npub struct Alpha(pub Beta);\n",
        ),
        (
            "m/b.rs",
            "pub struct Beta;\npub fn make() -> super::Alpha { super::Alpha(Beta) }\n",
        ),
    ]);
    let report = circle_report(&planted, &[]);
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(
        report[0].starts_with("circle of 2 files: m/a.rs, m/b.rs"),
        "{}",
        report[0]
    );
    // `super::Alpha` is a re-export: the edge goes to the file defining it.
    assert!(
        report[0].contains("m/b.rs:2 -> m/a.rs: super::Alpha"),
        "{}",
        report[0]
    );
    // Allowed files pass; the same tree without the back edge has none.
    assert!(circle_report(&planted, &["m/a.rs", "m/b.rs"]).is_empty());
    let mut fixed = planted.clone();
    fixed.insert("m/b.rs".into(), "pub struct Beta;\n".into());
    assert!(circle_report(&fixed, &[]).is_empty());
}

#[test]
fn the_circle_check_sees_globs_facades_and_inline_modules() {
    let planted = tree(&[
        ("lib.rs", "mod m;\nmod n;\n"),
        // A facade that also holds a type its sibling takes by a glob.
        (
            "m/mod.rs",
            "mod a;\npub struct Shared;\npub fn f() { a::g() }\n",
        ),
        (
            "m/a.rs",
            "use super::*;\npub fn g() -> Shared { Shared }\n",
        ),
        // Test modules inside a file resolve `super` to the file itself;
        // `crate::` paths in strings (attributes) are read too.
        (
            "n/mod.rs",
            "mod p;\nmod q;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    fn t() { let _ = '{'; }\n}\n",
        ),
        (
            "n/p.rs",
            "#[serde(with = \"crate::n::q::x\")]\npub struct P;\n",
        ),
        // Braces inside character and raw string literals do not close
        // the inline module: the `use` after it is `q`'s, so its
        // `super::` is `n`.
        (
            "n/q.rs",
            "pub fn x() {}\nmod inner {\n    fn f<'a>(_: &'a str) { let _ = ('}', '\\'', r#\"}\"#, \"}\"); }\n}\nuse super::p::P;\n",
        ),
    ]);
    let report = circle_report(&planted, &[]);
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(
        report[0].contains("m/a.rs:1 -> m/mod.rs: super::*"),
        "{}",
        report[0]
    );
    assert!(
        report[0].contains("m/mod.rs:3 -> m/a.rs: a::g"),
        "{}",
        report[0]
    );
    assert!(
        report[1].starts_with("circle of 2 files: n/p.rs, n/q.rs"),
        "{}",
        report[1]
    );
    assert!(
        report[1].contains("n/q.rs:5 -> n/p.rs: super::p::P"),
        "{}",
        report[1]
    );
}

/// Whether `to` is a module file that contains `from`: the crate root, or
/// (with `folders`) the `mod.rs` (or `name.rs`) of a folder `from` lies in.
fn is_above(to: &str, from: &str, folders: bool) -> bool {
    // A unit-test module is its parent's child by Rust's rules (`use
    // super::*` is how it sees what it tests).
    let base = from.rsplit('/').next().unwrap_or(from);
    if to == from || base == "tests.rs" || base.ends_with("_tests.rs") {
        return false;
    }
    if to == "lib.rs" || to == "main.rs" {
        return true;
    }
    if !folders {
        return false;
    }
    let folder = match to.strip_suffix("/mod.rs") {
        Some(dir) => format!("{dir}/"),
        None => format!("{}/", to.trim_end_matches(".rs")),
    };
    from.starts_with(&folder)
}

/// The imports of `tree` that go from a file up to the crate root (a room
/// importing the facade it sits under: the root is then facade and helpers
/// at once), and with `folders` up to any module file containing it.
fn arrows_back_up(tree: &Tree, folders: bool) -> Vec<String> {
    Crate::read(tree)
        .edges()
        .into_iter()
        .filter(|e| is_above(&e.to, &e.from, folders))
        .map(|e| format!("  {}:{} -> {}: {}", e.from, e.line, e.to, e.path))
        .collect()
}

/// Every crate of the workspace: no import circle, and no file importing
/// the crate root it sits under (the CLI, the C API, its preload and the
/// Python crate). In the library, whose folders' `mod.rs` files only
/// declare and re-export (docs/design.md), no file imports any module file
/// above it either; the C API's folders keep their C types in `mod.rs`
/// (the ABI baseline names them by that path), which their files use.
#[test]
fn every_crate_has_no_circle_and_no_arrow_back_up() {
    let crates = root().join("..");
    let mut bad = vec![];
    for name in [
        "fspace",
        "fspace-cli",
        "fspace-capi",
        "fspace-capi/preload",
        "fspace-py",
    ] {
        let tree = tree_of(&crates.join(name).join("src"));
        assert!(!tree.is_empty(), "no sources in crates/{name}/src");
        for c in circle_report(&tree, &[]) {
            bad.push(format!("crates/{name}: {c}"));
        }
        let up = arrows_back_up(&tree, name == "fspace");
        if !up.is_empty() {
            bad.push(format!(
                "crates/{name}: imports back up:\n{}",
                up.join("\n")
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_back_up_check_sees_a_room_importing_its_facade() {
    let t = tree(&[
        ("lib.rs", "mod a;\npub(crate) fn helper() {}\n"),
        ("a/mod.rs", "mod b;\npub(crate) fn f() {}\n"),
        ("a/b.rs", "use super::f;\nuse crate::helper;\n"),
    ]);
    let up = arrows_back_up(&t, true);
    assert_eq!(up.len(), 2, "{up:?}");
    assert!(
        up[0].contains("a/b.rs") && up[0].contains("-> a/mod.rs"),
        "{up:?}"
    );
    assert!(up[1].contains("-> lib.rs"), "{up:?}");
    let up = arrows_back_up(&t, false);
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].contains("-> lib.rs"), "{up:?}");
}
