//! The help a user reads: every command's `--help`, found by walking the
//! "Commands:" lists from the top, fits 80 columns and says the same thing
//! as the code about the choices that matter.

use std::path::Path;
use std::process::Command;

fn help(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(path)
        .arg("--help")
        .env("COLUMNS", "200")
        .output()
        .expect("run fspace --help");
    assert!(out.status.success(), "fspace {path:?} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The text with every run of whitespace made one space (help wraps).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The subcommands a help text lists under "Commands:" (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A wrapped description continues deeper in.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path, the top one (empty) first.
fn all_commands() -> Vec<(Vec<String>, String)> {
    let mut todo = vec![Vec::new()];
    let mut done = Vec::new();
    while let Some(path) = todo.pop() {
        let text = help(&path);
        for c in subcommands(&text) {
            let mut p = path.clone();
            p.push(c);
            todo.push(p);
        }
        done.push((path, text));
    }
    done
}

#[test]
fn every_help_line_fits_80_columns() {
    let all = all_commands();
    // The walk must have found the commands, or the check below checks nothing.
    for want in ["probe", "grow", "copy", "map", "wal", "bench"] {
        assert!(
            all.iter().any(|(p, _)| p.len() == 1 && p[0] == want),
            "no `fspace {want} --help` found"
        );
    }
    for (path, text) in &all {
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "`fspace {} --help` has a line of {} columns:\n{line}",
                path.join(" "),
                line.chars().count()
            );
        }
    }
}

#[test]
fn probe_help_gives_each_level_its_rounds() {
    let text = flat(&help(&["probe".to_string()]));
    for words in ["four rounds", "three shorter rounds", "five rounds"] {
        assert!(
            text.contains(words),
            "probe --help lacks {words:?}:\n{text}"
        );
    }
    assert!(!text.contains("third round"), "{text}");
}

#[test]
fn size_units_are_explained_as_parsed() {
    let text = flat(&help(&[]));
    assert!(text.contains("1MB = 1,000,000"), "{text}");
    assert!(text.contains("16M = 16MiB"), "{text}");
    // What the help says is what the parser does.
    let size = |s: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_fspace"))
            .args(["grow", "--json", "--create", "--strategy", "sparse"])
            .arg(std::env::temp_dir().join(format!("fspace-help-{}-{s}", std::process::id())))
            .arg(s)
            .output()
            .expect("run fspace grow");
        assert!(out.status.success(), "grow {s}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("grow --json");
        v["new_len"].as_u64().expect("new_len")
    };
    let cleanup = |s: &str| {
        let _ = std::fs::remove_file(
            std::env::temp_dir().join(format!("fspace-help-{}-{s}", std::process::id())),
        );
    };
    for (s, want) in [("1MB", 1_000_000), ("16M", 16 << 20), ("16MiB", 16 << 20)] {
        assert_eq!(size(s), want, "{s}");
        cleanup(s);
    }
}

#[test]
fn copy_help_does_not_limit_src_to_regular_files() {
    let text = help(&["copy".to_string()]);
    let args = text.split("Options:").next().expect("an Arguments section");
    assert!(args.contains("pipe"), "SRC's help omits pipes:\n{args}");
}

/// The long options a help text lists under "Options:" (`--json`, ...).
fn long_options(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim() != "Options:")
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        // The option's column ends where two spaces start its description.
        .map(|l| l.split("  ").next().unwrap_or(l))
        .flat_map(|col| {
            col.split([' ', ','])
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|w| w.starts_with("--"))
        .collect()
}

fn fspace(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(args)
        .output()
        .expect("run fspace");
    assert!(
        out.status.success(),
        "fspace {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("output is UTF-8")
}

/// `fspace generate man DIR`: one page per command path, named as `man`
/// finds it, naming each subcommand and every option that command's
/// `--help` lists. A subcommand or option added to the CLI that failed to
/// reach the pages fails here.
#[test]
fn man_pages_name_every_subcommand_and_option() {
    let dir = tempfile::tempdir().expect("tempdir");
    let listed = fspace(&["generate", "man", &dir.path().to_string_lossy()]);
    let all = all_commands();
    assert!(
        all.len() >= 14,
        "the help walk found only {} commands",
        all.len()
    );
    for (path, text) in &all {
        let name = std::iter::once("fspace".to_string())
            .chain(path.iter().cloned())
            .collect::<Vec<_>>()
            .join("-");
        let file = dir.path().join(format!("{name}.1"));
        assert!(
            listed.lines().any(|l| Path::new(l) == file),
            "`generate man` did not list {}",
            file.display()
        );
        let page = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("no page {}: {e}", file.display()))
            // roff writes a hyphen as `\-`.
            .replace("\\-", "-");
        assert!(
            page.contains(&format!(".TH {name} 1")),
            "{name}.1 has no title"
        );
        for sub in subcommands(text) {
            assert!(
                page.contains(&sub),
                "{name}.1 does not name subcommand {sub}"
            );
            assert!(
                page.contains(&format!("{name}-{sub}")),
                "{name}.1 does not refer to {name}-{sub}(1)"
            );
        }
        let options = long_options(text);
        assert!(
            options.contains(&"--help".to_string()),
            "no options parsed for {name}"
        );
        for opt in options {
            assert!(page.contains(&opt), "{name}.1 does not name {opt}");
        }
    }
    // Without DIR the top page goes to stdout.
    let top = fspace(&["generate", "man"]);
    assert!(top.contains(".TH fspace 1"), "stdout page is not fspace.1");
}

/// Each shell's completion script names every subcommand and option; in
/// bash (the one shell every Debian has), the script completes a
/// subcommand and an option when run.
#[test]
fn completions_name_every_subcommand_and_option() {
    let all = all_commands();
    for shell in ["bash", "zsh", "fish"] {
        let script = fspace(&["generate", "complete", shell]);
        for (path, text) in &all {
            for sub in subcommands(text) {
                assert!(
                    script.contains(&sub),
                    "{shell} completion lacks subcommand {sub}"
                );
            }
            for opt in long_options(text) {
                // fish spells `--json` as `-l json`.
                let spelled = match shell {
                    "fish" => format!("-l {}", &opt[2..]),
                    _ => opt.clone(),
                };
                assert!(
                    script.contains(&spelled),
                    "{shell} completion lacks {opt} of `fspace {}`",
                    path.join(" ")
                );
            }
        }
    }
    let complete = |line: &str| -> Vec<String> {
        // The script, then the state bash's completion machinery sets up
        // before calling the function for `line` with the cursor at its end.
        let words: Vec<&str> = line.split(' ').collect();
        let prog = format!(
            "source <('{bin}' generate complete bash)\n\
             COMP_LINE='{line}'; COMP_POINT={point}; COMP_WORDS=({words}); COMP_CWORD={cword}\n\
             _fspace fspace '{cur}' '{prev}'\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
            bin = env!("CARGO_BIN_EXE_fspace"),
            point = line.len(),
            words = words.join(" "),
            cword = words.len() - 1,
            cur = words[words.len() - 1],
            prev = words[words.len() - 2],
        );
        let out = Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &prog])
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "bash: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(complete("fspace pro"), ["probe"]);
    assert_eq!(complete("fspace probe --qu"), ["--quick", "--quiet"]);
    // An option with fixed values offers them, not file names.
    assert_eq!(
        complete("fspace copy --sparse "),
        ["auto", "always", "never"]
    );
    assert_eq!(complete("fspace grow --for l"), ["log"]);
    let walk = complete("fspace wal ");
    for sub in ["stat", "verify", "dump"] {
        assert!(
            walk.contains(&sub.to_string()),
            "`fspace wal <TAB>` gave {walk:?}"
        );
    }
}

/// The sections a man page is read by: SYNOPSIS with each option's value
/// name, EXIT STATUS with the codes the command returns (the help's
/// "Exit status:" says the same), ENVIRONMENT with the state directory's
/// variables where the command reads it, EXAMPLES from the help, no
/// "EXTRA" heading, and every document cited where the Debian package
/// installs it (docs/*.md under /usr/share/doc/fspace/docs/).
#[test]
fn man_pages_have_exit_status_environment_and_value_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    fspace(&["generate", "man", &dir.path().to_string_lossy()]);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let mut checked = 0;
    for (path, text) in all_commands() {
        let name = std::iter::once("fspace".to_string())
            .chain(path.iter().cloned())
            .collect::<Vec<_>>()
            .join("-");
        let page = std::fs::read_to_string(dir.path().join(format!("{name}.1")))
            .expect("page")
            .replace("\\-", "-");
        let sections: Vec<&str> = page
            .lines()
            .filter_map(|l| l.strip_prefix(".SH "))
            .map(|s| s.trim_matches('"'))
            .collect();
        for want in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "EXIT STATUS",
            "ENVIRONMENT",
            "SEE ALSO",
        ] {
            assert!(
                sections.contains(&want),
                "{name}.1: no {want} in {sections:?}"
            );
        }
        assert!(!sections.contains(&"EXTRA"), "{name}.1: {sections:?}");
        if text.contains("Examples:") {
            assert!(sections.contains(&"EXAMPLES"), "{name}.1: {sections:?}");
        }
        // Every option that takes a value is named with it in the SYNOPSIS,
        // as the help names it (`--strategy <STRATEGY>`).
        let synopsis = page
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|s| s.split("\n.SH").next())
            .expect("synopsis")
            .replace("\\fB", "")
            .replace("\\fI", "")
            .replace("\\fR", "");
        for l in text.lines().map(str::trim_start) {
            if let Some((opt, rest)) = l.split_once(' ') {
                if opt.starts_with("--") && rest.starts_with('<') {
                    let value = rest.split('>').next().unwrap_or(rest);
                    let want = format!("{opt} {value}>");
                    assert!(
                        synopsis.contains(&want),
                        "{name}.1: no {want:?} in {synopsis}"
                    );
                    checked += 1;
                }
            }
        }
        let exit = page
            .split(".SH \"EXIT STATUS\"\n")
            .nth(1)
            .and_then(|s| s.split("\n.SH").next())
            .expect("EXIT STATUS");
        let codes: Vec<u32> = exit
            .lines()
            .filter_map(|l| l.strip_prefix("\\fB"))
            .filter_map(|l| l.strip_suffix("\\fR"))
            .filter_map(|c| c.parse().ok())
            .collect();
        let mut want = vec![0, 1, 2];
        match name.as_str() {
            "fspace" => want.extend([3, 4, 130]),
            "fspace-probe" => want.extend([3, 4, 130]),
            "fspace-wal" | "fspace-wal-verify" => want.push(3),
            "fspace-grow"
            | "fspace-copy"
            | "fspace-dig"
            | "fspace-bench"
            | "fspace-bench-commit" => want.push(130),
            _ => {}
        }
        assert_eq!(codes, want, "{name}.1's EXIT STATUS:\n{exit}");
        if name == "fspace-probe" {
            assert!(exit.contains("could not tell"), "{exit}");
        }
        // What the help's own "Exit status:" paragraph lists is in the page.
        // (Its clauses start with the code: `0 success, 1 the operation ...`.)
        for p in text.split("Exit status: ").skip(1) {
            let p = flat(p.split("\n\n").next().unwrap_or(p));
            let mut seen = 0;
            for clause in p.split([',', ';']).map(str::trim) {
                let Some((w, _)) = clause.split_once(' ') else {
                    continue;
                };
                if let Ok(code) = w.parse::<u32>() {
                    assert!(
                        codes.contains(&code),
                        "{name}: help's exit {code} not in {codes:?}"
                    );
                    seen += 1;
                }
            }
            assert!(seen >= 3, "{name}: no codes read from {p:?}");
        }
        let env = page
            .split(".SH ENVIRONMENT\n")
            .nth(1)
            .and_then(|s| s.split("\n.SH").next())
            .expect("ENVIRONMENT");
        let state = [
            "fspace",
            "fspace-probe",
            "fspace-info",
            "fspace-grow",
            "fspace-bench",
            "fspace-bench-commit",
        ]
        .contains(&name.as_str());
        for var in ["FSPACE_STATE_DIR", "XDG_STATE_HOME", "HOME"] {
            assert_eq!(
                env.contains(&format!("\\fB{var}\\fR")),
                state,
                "{name}.1's ENVIRONMENT and {var}:\n{env}"
            );
        }
        // Citations: the installed path of a file that exists, never a bare
        // docs/ path the package does not have.
        let mut rest = page.as_str();
        while let Some(i) = rest.find("docs/") {
            let cited: String = rest[i + 5..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
                .collect();
            if cited.ends_with(".md") {
                assert!(
                    rest[..i].ends_with("/usr/share/doc/fspace/"),
                    "{name}.1 cites docs/{cited} where the package does not put it"
                );
                assert!(
                    docs.join(cited.as_str()).is_file(),
                    "{name}.1 cites docs/{cited}"
                );
            }
            rest = &rest[i + 5..];
        }
    }
    assert!(checked >= 20, "only {checked} options with values found");
}

/// `copy --help` says what `--sparse auto` does: it keeps holes and, for a
/// source that looks sparse, a pipe or a device, makes zero blocks holes
/// too (docs/cli.md's table); it does not copy the data "as it is".
#[test]
fn copy_help_tells_what_sparse_auto_does() {
    let text = flat(&help(&["copy".to_string()]));
    let auto = text
        .split("--sparse auto keep")
        .nth(1)
        .and_then(|t| t.split("--sparse always").next())
        .expect("--sparse auto in copy --help");
    assert!(auto.contains("zero blocks made holes"), "{auto}");
    assert!(auto.contains("looks sparse"), "{auto}");
    assert!(!text.contains("as it is"), "{text}");
}
