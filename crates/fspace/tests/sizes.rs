//! Rooms keep their walls: in `src/` of every crate of the workspace no
//! source file is over 700 lines and no function over 100 (from its `fn`
//! line to its closing brace). A file or function that grows past them
//! fails here, named with its length: split it along its seams (a module of
//! its own, tests in a sibling file, a helper per step).

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 700;
const MAX_FN_LINES: usize = 100;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under the `src/` folders of the workspace's crates.
fn sources() -> Vec<PathBuf> {
    let mut roots = vec![];
    for dir in ["crates", "bench"] {
        let Ok(rd) = std::fs::read_dir(workspace().join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            roots.push(e.path().join("src"));
            roots.push(e.path().join("preload/src"));
        }
    }
    let mut out = vec![];
    for r in roots.iter().filter(|r| r.is_dir()) {
        walk(r, &mut out);
    }
    out.sort();
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The functions of `src` longer than `max` lines: (name, first line,
/// length). A function starts at a line whose code begins with `fn` (after
/// `pub`, `pub(crate)`, `const`, `async`, `unsafe`, `extern "C"`) and ends
/// at the first later line that is its indentation and `}`; a declaration
/// ending in `;` (a trait's) has no body. A function of a macro's template
/// (its signature names `$` metavariables) is not counted: its body is
/// written, and measured, where the macro is called.
fn long_functions(src: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut long = vec![];
    for (i, l) in lines.iter().enumerate() {
        let code = l.trim_start();
        let indent = l.len() - code.len();
        let Some(name) = fn_name(code) else { continue };
        // A macro's template (`fn case($fs: &Fs) $body`): its body is the
        // caller's, measured where it is written.
        if code.contains('$') {
            continue;
        }
        // A signature over several lines: a `;` before any `{` means no body.
        let body_start = lines[i..]
            .iter()
            .position(|l| l.contains('{') || l.trim_end().ends_with(';'));
        if body_start.is_none_or(|k| !lines[i + k].contains('{')) {
            continue;
        }
        // One-line bodies end on their own line.
        if code.ends_with('}')
            && !code.ends_with("{}")
            && code.matches('{').count() == code.matches('}').count()
        {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        let end = lines[i + 1..]
            .iter()
            .position(|l| l.trim_end() == close)
            .map_or(lines.len(), |k| i + 1 + k);
        let len = end - i + 1;
        if len > max {
            long.push((name, i + 1, len));
        }
    }
    long
}

fn fn_name(code: &str) -> Option<String> {
    let mut rest = code;
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
        "extern \"C\" ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    for prefix in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

fn rel(p: &Path) -> String {
    let root = workspace().canonicalize().unwrap_or_else(|_| workspace());
    let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    p.strip_prefix(&root).unwrap_or(&p).display().to_string()
}

#[test]
fn no_source_file_over_700_lines() {
    let files = sources();
    assert!(
        files.len() > 100,
        "the workspace's sources look missing: {}",
        files.len()
    );
    let bad: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f)
                .expect("read source")
                .lines()
                .count();
            (n > MAX_FILE_LINES).then(|| format!("  {}: {n} lines", rel(f)))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "source files over {MAX_FILE_LINES} lines:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_function_over_100_lines() {
    let mut bad = vec![];
    for f in sources() {
        let src = std::fs::read_to_string(&f).expect("read source");
        for (name, line, len) in long_functions(&src, MAX_FN_LINES) {
            bad.push(format!("  {}:{line} {name}: {len} lines", rel(&f)));
        }
    }
    assert!(
        bad.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_function_measure_sees_bodies_and_skips_declarations() {
    let body: String = (0..120)
        .map(|i| format!("        let x{i} = {i};\n"))
        .collect();
    let src = format!(
        "trait T {{\n    fn declared(&self) -> u32;\n}}\nimpl S {{\n    pub(crate) fn long(\n        a: u32,\n    ) -> u32 {{\n{body}        a\n    }}\n    fn short() {{}}\n    fn one() -> u32 {{ 1 }}\n}}\n"
    );
    let long = long_functions(&src, MAX_FN_LINES);
    assert_eq!(long, [("long".to_string(), 5, 125)]);
}
