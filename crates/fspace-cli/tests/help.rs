//! The help a user reads: every command's `--help`, found by walking the
//! "Commands:" lists from the top, fits 80 columns and says the same thing
//! as the code about the choices that matter.

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
