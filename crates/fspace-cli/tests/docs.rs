//! README.md and docs/*.md keep their code honest. Every fenced block names
//! what it is, and each kind is checked:
//!
//! - ```` ```rust ````: compiled as a doctest (`crates/fspace-tests/src/lib.rs`
//!   includes every Markdown file; checked here) and run by
//!   `crates/fspace-tests/tests/readme_examples.rs`; `ignore` is not accepted;
//! - ```` ```sh ```` (every line a command) and ```` ```console ```` (`$ `
//!   lines are commands, the rest is their output as recorded, not compared):
//!   each `fspace` command runs, in document order, in a scratch directory per
//!   file holding the files the examples name, and must exit 0. A command that
//!   cannot run in a test (root, the whole suite, installs, a device) is in
//!   [`NOT_RUN`] with its reason; there an `fspace` command is still parsed
//!   (run with `--help` appended, so its options and values are checked);
//! - ```` ```c ````: compiled with `cc -fsyntax-only` against `fspace.h` (a
//!   fragment goes into a function body);
//! - ```` ```json ````: parses;
//! - ```` ```python ````: parses here (`python3`'s `ast`), and runs, in
//!   document order, against the installed wheel in
//!   `crates/fspace-py/tests/test_docs.py` (ci/python.sh);
//! - ```` ```text ````: output, not checked; it holds no `$ ` prompt (a
//!   transcript is a `console` block, so that its commands run).
//!
//! Relative links resolve to files, and their `#anchors` to headings.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// Why the docs' `--untorn` examples are not run here: they are refused
/// (EOPNOTSUPP) where the filesystem takes no untorn writes, as the
/// scratch directory's may not.
const UNTORN_ONLY: &str = "needs a filesystem that takes untorn writes (XFS with reflink, or a device with atomic writes) and is refused elsewhere; tests/untorn_cli.rs runs grow and map --untorn on the matrix's XFS and checks the refusal elsewhere";

/// Commands of the docs that the test does not run, each with why. An
/// `fspace` command here is parsed (`--help` appended) instead. An entry no
/// document uses any more fails the test.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "fspace grow --create --untorn 16K pages.db 64M",
        UNTORN_ONLY,
    ),
    (
        "fspace grow --create --sync --untorn 16K pages.db 4M",
        UNTORN_ONLY,
    ),
    ("fspace map --summary --untorn 16K vm.img", UNTORN_ONLY),
    ("fspace map --summary --untorn 16K plain.db", UNTORN_ONLY),
    (
        "fspace grow --create --untorn 16K pages.db 1M",
        "shows the refusal where there are no untorn writes, so it exits 1 there and succeeds on XFS; tests/untorn_cli.rs checks both",
    ),
    (
        "fspace crashtest record --root db --trace t -- ./kv put k v",
        "records ./kv, the reader's own program; tests/crashtest.rs records and checks programs on the matrix",
    ),
    (
        "fspace crashtest check t -- /path/to/check_kv",
        "runs the reader's checker on the trace above; tests/crashtest.rs checks programs on the matrix",
    ),
    (
        "cargo install --path crates/fspace-cli",
        "installs into ~/.cargo/bin; this test runs the binary cargo built",
    ),
    (
        "sudo ci/test.sh",
        "the whole suite, which runs this test (root: packages, mounts, sshd)",
    ),
    (
        "fspace probe",
        "a standard run takes 30 s; the --quick runs of README.md and cli.md take the same path",
    ),
    (
        "fspace probe --for postgresql",
        "a probe and the engine's rounds take 45 s; tests/probe_engines.rs runs --for on the matrix",
    ),
    (
        "fspace probe --quick --for postgresql,mariadb,rocksdb --write-config /etc/fspace .",
        "writes into /etc; tests/probe_engines.rs runs --for --write-config on the matrix",
    ),
    (
        "cargo add fspace --path /path/to/fspace/crates/fspace",
        "changes another project's manifest",
    ),
    (
        "make -C crates/fspace-capi",
        "a release build of the C API; ci/test.sh runs it",
    ),
    (
        "make -C crates/fspace-capi install PREFIX=$HOME/.local",
        "installs; ci/test.sh installs into a scratch prefix the same way",
    ),
    (
        "sudo make -C crates/fspace-capi install",
        "installs into /usr/local as root",
    ),
    (
        "cc app.c $(pkg-config --cflags fspace) $(pkg-config --libs fspace)",
        "needs an installed libfspace; crates/fspace-capi/tests/c_api.rs builds C this way",
    ),
    (
        "LD_PRELOAD=/usr/local/lib/libfspace-preload.so fallocate -x -l 256M /mnt/sshfs/disk.img",
        "needs the installed preload and sshfs; crates/fspace-capi/tests/preload.rs runs it",
    ),
    (
        "FSPACE_PRELOAD_VERBOSE=1 LD_PRELOAD=/usr/local/lib/libfspace-preload.so fallocate -x -l 256M /mnt/sshfs/new.img",
        "needs the installed preload and sshfs; crates/fspace-capi/tests/preload.rs runs it",
    ),
    (
        "ls -ls /mnt/sshfs/disk.img",
        "looks at the file the line before made",
    ),
    (
        "cargo run --release -p fspace --example wal_demo -- db/wal",
        "builds an example; the test writes the same kind of log into db/wal itself",
    ),
    (
        "fspace copy --force --sync vm.img /dev/loop5",
        "writes onto a block device (root, a spare loop device)",
    ),
    (
        "sudo ci/matrix.sh up",
        "root: loop mounts and an sshd; ci/test.sh runs it",
    ),
    (
        "export $(cat /tmp/fspace-matrix/env)",
        "uses the matrix the line before made",
    ),
    ("cargo test --workspace", "the tests themselves"),
    (
        "ci/deb.sh tools",
        "installs cargo-deb and cargo-about into ~/.cargo/bin; ci/test.sh runs it",
    ),
    (
        "ci/deb.sh build",
        "a release build and the Debian package; ci/test.sh runs it",
    ),
    (
        "sudo dpkg -i target/debian/fspace_0.1.0-1_amd64.deb",
        "installs into /usr as root; ci/deb.sh check does, and purges it",
    ),
    (
        "sudo dpkg --purge fspace",
        "removes an installed package as root; ci/deb.sh check does",
    ),
    (
        "fspace probe --compare-saved -q --prometheus fspace-compare.prom /tmp/fspace-matrix/mnt/ext4/data",
        "compares with a save of the matrix's ext4; tests/probe_prometheus.rs runs --compare-saved on every filesystem of the matrix",
    ),
    (
        "fspace probe --compare-saved -q db",
        "a timing verdict (exit 1 if the disk got slower since the line before, 4 on a busy machine); tests/probe_prometheus.rs and tests/compare_saved.rs run --compare-saved on the matrix",
    ),
    (
        "sudo FSPACE_STATE_DIR=/var/lib/fspace fspace probe --save /srv/data",
        "root, and a standard run of a directory this machine may not have",
    ),
    (
        "sudo systemctl enable --now fspace-probe@srv-data.timer fspace-compare@srv-data.timer",
        "enables the package's units as root; ci/deb.sh check enables one and verifies them",
    ),
    (
        "sudo ci/matrix.sh down",
        "root: unmounts the matrix; ci/test.sh runs it",
    ),
    (
        "pip install maturin",
        "installs from PyPI; ci/python.sh installs it into a scratch venv",
    ),
    (
        "maturin build --release -m crates/fspace-py/Cargo.toml -o dist",
        "builds the Python wheel; ci/python.sh builds it the same way",
    ),
    (
        "pip install dist/fspace-*.whl",
        "installs the wheel; ci/python.sh installs it into a scratch venv",
    ),
    (
        "ci/python.sh",
        "the Python package's suite (a venv, a release build, the matrix); ci/test.sh runs it",
    ),
];

/// Languages a fence may name.
const LANGUAGES: &[&str] = &[
    "rust",
    "rust,no_run",
    "sh",
    "console",
    "c",
    "json",
    "text",
    "python",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// README.md and docs/*.md, as paths relative to the root.
fn markdown_files() -> Vec<String> {
    let root = root();
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .map(|e| {
            e.expect("docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    let mut files = vec!["README.md".to_string()];
    files.extend(docs);
    files
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// A fenced block: its file, the line of its opening fence, its language and
/// its lines.
struct Block {
    file: String,
    line: usize,
    lang: String,
    lines: Vec<String>,
    /// The fence's indentation (a block inside a list item).
    indent: usize,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

fn blocks(file: &str) -> Vec<Block> {
    let text = read(file);
    let mut out = vec![];
    let mut cur: Option<Block> = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        match cur.take() {
            None => {
                if let Some(info) = t.strip_prefix("```") {
                    cur = Some(Block {
                        file: file.to_string(),
                        line: i + 1,
                        lang: info.trim().to_string(),
                        lines: vec![],
                        indent: l.len() - t.len(),
                    });
                }
            }
            Some(b) if t == "```" => out.push(b),
            Some(mut b) => {
                let cut = b.indent.min(l.len() - t.len());
                b.lines.push(l[cut..].to_string());
                cur = Some(b);
            }
        }
    }
    if let Some(b) = cur {
        panic!("{}: the block is never closed", b.at());
    }
    out
}

fn all_blocks() -> Vec<Block> {
    markdown_files().iter().flat_map(|f| blocks(f)).collect()
}

#[test]
fn every_block_says_what_it_is() {
    let mut bad = vec![];
    let mut count = 0;
    for b in all_blocks() {
        count += 1;
        if !LANGUAGES.contains(&b.lang.as_str()) {
            bad.push(format!(
                "{}: ```{} is not one of {LANGUAGES:?} (output is ```text)",
                b.at(),
                b.lang
            ));
        }
        if b.lang == "text" {
            if let Some(l) = b.lines.iter().find(|l| l.starts_with("$ ")) {
                bad.push(format!(
                    "{}: a prompt in a text block ({l:?}): make the transcript ```console so that it runs",
                    b.at()
                ));
            }
        }
        if (b.lang == "sh" || b.lang == "console") && commands(&b).is_empty() {
            bad.push(format!("{}: a {} block without a command", b.at(), b.lang));
        }
    }
    assert!(
        count > 20,
        "only {count} blocks found: is the parser broken?"
    );
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// Every Markdown file is included into the library's doctests, so each
/// ```rust block compiles.
#[test]
fn every_markdown_file_is_a_doctest() {
    let lib = read("crates/fspace-tests/src/lib.rs");
    let missing: Vec<String> = markdown_files()
        .into_iter()
        .filter(|f| !lib.contains(&format!("\"../../../{f}\")")))
        .collect();
    assert!(
        missing.is_empty(),
        "crates/fspace-tests/src/lib.rs does not include these as doctests: {missing:?}"
    );
}

/// The commands of a sh or console block, continuation lines joined and
/// comments removed.
fn commands(b: &Block) -> Vec<String> {
    let mut out = vec![];
    let mut pending: Option<String> = None;
    for l in &b.lines {
        let line = match (&pending, b.lang.as_str()) {
            (Some(_), _) => l.trim().to_string(),
            (None, "console") => match l.strip_prefix("$ ") {
                Some(c) => c.trim().to_string(),
                None => continue,
            },
            (None, _) => l.trim().to_string(),
        };
        let mut cmd = pending.take().unwrap_or_default();
        if let Some(head) = line.strip_suffix('\\') {
            cmd.push_str(head);
            pending = Some(cmd);
            continue;
        }
        cmd.push_str(&line);
        let cmd = strip_comment(&cmd).trim().to_string();
        if !cmd.is_empty() {
            out.push(cmd);
        }
    }
    if let Some(c) = pending {
        panic!("{}: {c:?} ends with a backslash", b.at());
    }
    out
}

/// The command without its `# comment` (a `#` starting a word, outside
/// quotes).
fn strip_comment(cmd: &str) -> &str {
    let mut quote = None;
    let mut prev_space = true;
    for (i, c) in cmd.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev_space => return &cmd[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    cmd
}

/// Whether some part of a pipeline or list starts with `fspace`.
fn runs_fspace(cmd: &str) -> bool {
    let mut at_start = true;
    for w in cmd.split_whitespace() {
        if at_start && w == "fspace" {
            return true;
        }
        at_start = matches!(w, "|" | "&&" | "||" | ";");
    }
    false
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The files and directories the examples name, in `dir`.
fn fixtures(dir: &Path) {
    for d in ["db", "wal", "backup", "state"] {
        std::fs::create_dir(dir.join(d)).expect("create a fixture directory");
    }
    // A VM-image-like file: data, written zeros, a hole, data.
    let img = dir.join("vm.img");
    let mut f = std::fs::File::create(&img).expect("create vm.img");
    let data: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    f.write_all(&data).expect("write vm.img");
    f.write_all(&vec![0u8; 2 << 20]).expect("write vm.img");
    f.set_len(8 << 20).expect("extend vm.img");
    std::os::unix::fs::FileExt::write_all_at(&f, &data, 6 << 20).expect("write vm.img");
    drop(f);
    // docs/copy.md's dig example: 4 KiB data and zeros alternating, and
    // 64 KiB (smaller than there).
    for (name, run) in [("scattered", 4usize << 10), ("aligned", 64 << 10)] {
        let bytes: Vec<u8> = data
            .chunks(run)
            .enumerate()
            .flat_map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_vec()
                } else {
                    vec![0; c.len()]
                }
            })
            .collect();
        std::fs::write(dir.join(name), bytes).expect("write a dig example");
    }
    // A log made by the library, for `fspace wal ...`.
    let wal = fspace::wal::Wal::open(dir.join("db/wal"), fspace::WalOptions::default())
        .expect("open db/wal");
    for i in 0..60u32 {
        let rec: Vec<u8> = (0..20 + i * 37).map(|j| (j ^ i) as u8).collect();
        wal.commit(&rec).expect("commit to db/wal");
    }
    wal.close().expect("close db/wal");
}

fn fspace_bin() -> &'static str {
    env!("CARGO_BIN_EXE_fspace")
}

/// Runs a file's commands in order in a scratch directory of its own;
/// returns what failed, and records which NOT_RUN entries were met.
fn run_commands(file: &str, used: &Mutex<BTreeSet<&'static str>>) -> Vec<String> {
    let dir = tempfile::tempdir().expect("scratch directory");
    fixtures(dir.path());
    let bin_dir = Path::new(fspace_bin())
        .parent()
        .expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failed = vec![];
    for b in blocks(file) {
        if b.lang != "sh" && b.lang != "console" {
            continue;
        }
        for cmd in commands(&b) {
            if let Some((known, why)) = NOT_RUN.iter().find(|(c, _)| *c == cmd) {
                used.lock().unwrap().insert(known);
                if let Some(args) = cmd.strip_prefix("fspace ") {
                    // Parsed only: clap checks every option before --help.
                    if args.contains(['|', '>', '<', ';', '&', '$', '`']) {
                        failed.push(format!(
                            "{}: {cmd:?}: a command parsed only must be simple",
                            b.at()
                        ));
                        continue;
                    }
                    // --help before a `--` (after it, words are the
                    // program's, as in `crashtest record -- PROG`).
                    let mut words: Vec<&str> = args.split_whitespace().collect();
                    let at = words.iter().position(|w| *w == "--").unwrap_or(words.len());
                    words.insert(at, "--help");
                    let o = Command::new(fspace_bin())
                        .args(&words)
                        .stdin(Stdio::null())
                        .output()
                        .expect("run fspace");
                    if !o.status.success() {
                        failed.push(format!(
                            "{}: {cmd:?} (not run: {why}) does not parse:\n{}",
                            b.at(),
                            text(&o)
                        ));
                    }
                }
                continue;
            }
            if !runs_fspace(&cmd) {
                failed.push(format!(
                    "{}: {cmd:?} is not an fspace command: list it in NOT_RUN with a reason",
                    b.at()
                ));
                continue;
            }
            eprintln!("{}: {cmd}", b.at());
            let o = Command::new("bash")
                .args(["-o", "pipefail", "-c", &cmd])
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("FSPACE_STATE_DIR", dir.path().join("state"))
                .stdin(Stdio::null())
                .output()
                .expect("run bash");
            if !o.status.success() {
                failed.push(format!("{}: {cmd:?} failed:\n{}", b.at(), text(&o)));
            }
        }
    }
    failed
}

#[test]
fn every_command_runs() {
    let used = Mutex::new(BTreeSet::new());
    let files = markdown_files();
    let failed: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = files
            .iter()
            .map(|f| s.spawn(|| run_commands(f, &used)))
            .collect();
        runs.into_iter()
            .flat_map(|r| r.join().expect("a file's commands"))
            .collect()
    });
    assert!(failed.is_empty(), "\n{}", failed.join("\n\n"));
    let used = used.into_inner().unwrap();
    let stale: Vec<&str> = NOT_RUN
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !used.contains(c))
        .collect();
    assert!(
        stale.is_empty(),
        "NOT_RUN lists commands no document has: {stale:?}"
    );
}

#[test]
fn every_c_block_compiles() {
    let include = root().join("crates/fspace-capi/include");
    let mut n = 0;
    for b in all_blocks().into_iter().filter(|b| b.lang == "c") {
        n += 1;
        let (includes, body): (Vec<&String>, Vec<&String>) =
            b.lines.iter().partition(|l| l.starts_with("#include"));
        let src = if b.lines.iter().any(|l| l.contains("int main(")) {
            b.lines.join("\n")
        } else {
            // A fragment: the statements of a function body.
            let inc: Vec<&str> = includes.iter().map(|s| s.as_str()).collect();
            let body: Vec<&str> = body.iter().map(|s| s.as_str()).collect();
            format!(
                "{}\nint docs_example(void) {{\n{}\nreturn 0;\n}}\n",
                inc.join("\n"),
                body.join("\n")
            )
        };
        let mut c = Command::new("cc")
            .args([
                "-std=c11",
                "-Wall",
                "-Werror",
                "-fsyntax-only",
                "-x",
                "c",
                "-",
            ])
            .arg("-I")
            .arg(&include)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cc (a C compiler; ci/matrix.sh deps installs gcc): {e}"));
        c.stdin
            .take()
            .expect("cc's stdin")
            .write_all(src.as_bytes())
            .expect("write to cc");
        let o = c.wait_with_output().expect("cc");
        assert!(
            o.status.success(),
            "{}: does not compile:\n{src}\n{}",
            b.at(),
            text(&o)
        );
    }
    assert!(n >= 2, "only {n} C blocks found");
}

/// Python blocks run in the Python package's tests (they need the built
/// wheel); here each must at least be valid Python.
#[test]
fn every_python_block_parses() {
    let mut n = 0;
    for b in all_blocks().into_iter().filter(|b| b.lang == "python") {
        n += 1;
        let mut child = Command::new("python3")
            .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run python3 (the Python package's docs need it)");
        child
            .stdin
            .take()
            .expect("python3's stdin")
            .write_all(b.lines.join("\n").as_bytes())
            .expect("write to python3");
        let o = child.wait_with_output().expect("wait for python3");
        assert!(o.status.success(), "{}: not Python:\n{}", b.at(), text(&o));
    }
    assert!(n >= 5, "only {n} python blocks found");
}

#[test]
fn every_json_block_parses() {
    for b in all_blocks().into_iter().filter(|b| b.lang == "json") {
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&b.lines.join("\n")) {
            panic!("{}: not JSON: {e}", b.at());
        }
    }
}

/// The targets of `[text](target)` and `![alt](target)` outside code.
fn links(file: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut in_code = false;
    for (i, l) in read(file).lines().enumerate() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = l;
        while let Some(p) = rest.find("](") {
            rest = &rest[p + 2..];
            if let Some(end) = rest.find(')') {
                out.push((i + 1, rest[..end].to_string()));
                rest = &rest[end..];
            }
        }
    }
    out
}

/// The anchors GitHub makes of a file's headings: lower case, punctuation
/// dropped, spaces as hyphens.
fn anchors(file: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut out = BTreeSet::new();
    for l in read(file).lines() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !l.starts_with('#') {
            continue;
        }
        let title = l.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        out.insert(slug);
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let root = root();
    let mut bad = vec![];
    let mut n = 0;
    for f in markdown_files() {
        let base = root
            .join(&f)
            .parent()
            .expect("a file's directory")
            .to_path_buf();
        for (line, target) in links(&f) {
            let path = target.split('#').next().unwrap_or_default();
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            n += 1;
            // `#anchor` alone points into the file itself.
            let file = if path.is_empty() {
                root.join(&f)
            } else {
                base.join(path)
            };
            if !file.exists() {
                bad.push(format!("{f}:{line}: {target} does not exist"));
                continue;
            }
            if let Some(anchor) = target.split_once('#').map(|(_, a)| a) {
                let rel = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .to_string_lossy()
                    .into_owned();
                if rel.ends_with(".md") && !anchors(&rel).contains(anchor) {
                    bad.push(format!("{f}:{line}: {target}: no heading makes #{anchor}"));
                }
            }
        }
    }
    assert!(
        n > 20,
        "only {n} relative links found: is the parser broken?"
    );
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}
