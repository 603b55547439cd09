//! `fspace generate`: the man pages and the shell completions, made from the
//! clap definition in cli.rs that parses the command line, so that they
//! cannot drift from it (tests/generate.rs checks that they name every
//! subcommand and option the help does).

use crate::cli::{Cli, GenerateCommand};
use crate::output::emit;
use clap::CommandFactory;
use roff::{bold, italic, roman, Inline, Roff};
use std::path::{Path, PathBuf};

pub(crate) fn run(what: GenerateCommand) -> fspace::Result<()> {
    match what {
        GenerateCommand::Man { dir: None } => {
            let mut page = Vec::new();
            render(&built(), &mut page).map_err(|e| io_err("render", Path::new("fspace.1"), e))?;
            emit(&String::from_utf8_lossy(&page))
        }
        GenerateCommand::Man { dir: Some(dir) } => {
            if dir.exists() && !dir.is_dir() {
                // create_dir_all would say "File exists", which hides why.
                let e = std::io::Error::from_raw_os_error(rustix::io::Errno::NOTDIR.raw_os_error());
                return Err(io_err("generate man into", &dir, e));
            }
            std::fs::create_dir_all(&dir).map_err(|e| io_err("mkdir", &dir, e))?;
            let mut written = String::new();
            for path in write_pages(&built(), &dir)? {
                out!(written, "{}", path.display());
            }
            emit(&written)
        }
        GenerateCommand::Complete { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "fspace", &mut script);
            emit(&String::from_utf8_lossy(&script))
        }
    }
}

/// The command tree with clap's derived names filled in (a subcommand's
/// display name, `fspace-wal-stat`, is what its page is called), without
/// the `help` subcommand (it has no page of its own).
fn built() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Where the Debian package installs the documentation the pages cite
/// (`docs/*.md` of the source tree under it, beside README.md).
const DOC_DIR: &str = "/usr/share/doc/fspace";

/// Renders `cmd`'s page: NAME, SYNOPSIS with value names, DESCRIPTION (the
/// help's about and its after-help paragraphs), clap_mangen's OPTIONS and
/// SUBCOMMANDS, then EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE
/// ALSO. The after-help's "Examples:" paragraph is EXAMPLES, its "Exit
/// status:" and "Manual:" paragraphs are what EXIT STATUS and SEE ALSO
/// say; `docs/NAME.md` is cited where the package installs it.
fn render(cmd: &clap::Command, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let version = cmd.get_version().unwrap_or(env!("CARGO_PKG_VERSION"));
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("fspace {version}"))
        .manual("fspace manual");
    let name = page_name(cmd);
    let after = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    let paragraphs: Vec<&str> = after
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .collect();
    let examples = paragraphs.iter().find_map(|p| p.strip_prefix("Examples:"));

    let mut page = page_head(cmd, &name, version, &paragraphs).render();
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        page += &section(|w| man.render_options_section(w))?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        page += &section(|w| man.render_subcommands_section(w))?;
    }
    // The help's citations (`docs/probe-json.md`), not the sections below.
    let mut page = installed_docs(&page);

    let mut tail = Roff::new();
    statuses_and_environment(&mut tail, &name);
    if let Some(lines) = examples {
        examples_section(&mut tail, lines);
    }
    see_also(&mut tail, cmd, &name);
    page += &tail.to_roff();
    w.write_all(page.as_bytes())
}

/// The page's top: its title line, NAME, SYNOPSIS and DESCRIPTION (the
/// help's about, its long about, and the after-help's paragraphs but those
/// that EXAMPLES, EXIT STATUS and SEE ALSO say).
fn page_head(cmd: &clap::Command, name: &str, version: &str, paragraphs: &[&str]) -> Roff {
    let mut head = Roff::new();
    head.control(
        "TH",
        [name, "1", "", &format!("fspace {version}"), "fspace manual"],
    );
    head.control("SH", ["NAME"]);
    let about = cmd.get_about().map(ToString::to_string).unwrap_or_default();
    head.text([roman(format!("{name} - {about}"))]);
    head.control("SH", ["SYNOPSIS"]);
    head.text(synopsis(cmd));
    head.control("SH", ["DESCRIPTION"]);
    head.text([roman(about.clone())]);
    if let Some(long) = cmd.get_long_about() {
        paragraph(&mut head, &long.to_string());
    }
    for p in paragraphs {
        if !["Examples:", "Exit status:", "Manual:"]
            .iter()
            .any(|k| p.starts_with(k))
        {
            paragraph(&mut head, p);
        }
    }
    head
}

/// EXIT STATUS and ENVIRONMENT, and FILES where the command uses the
/// state directory.
fn statuses_and_environment(tail: &mut Roff, name: &str) {
    tail.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in exit_statuses(name) {
        tail.control("TP", []);
        tail.text([bold(code.to_string())]);
        tail.text([roman(meaning)]);
    }
    tail.control("SH", ["ENVIRONMENT"]);
    let state = uses_state_dir(name);
    for (var, meaning) in environment(state) {
        tail.control("TP", []);
        tail.text([bold(var)]);
        tail.text([roman(meaning)]);
    }
    if state {
        tail.control("SH", ["FILES"]);
        tail.control("TP", []);
        tail.text([
            italic("STATE_DIR"),
            roman("/probes/"),
            italic("FS"),
            roman(".json"),
        ]);
        tail.text([roman(
            "The measurement fspace probe --save keeps for a filesystem (FS is its \
             type and a hash of its source, mount point, fsid and mount options); \
             STATE_DIR is as ENVIRONMENT says.",
        )]);
    }
}

/// EXAMPLES: the after-help's "Examples:" paragraph, a line each.
fn examples_section(tail: &mut Roff, lines: &str) {
    tail.control("SH", ["EXAMPLES"]);
    tail.control("nf", []);
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        tail.text([roman(line.trim_start())]);
    }
    tail.control("fi", []);
}

/// SEE ALSO: the parent command's page and the subcommands', then the
/// documentation the package installs.
fn see_also(tail: &mut Roff, cmd: &clap::Command, name: &str) {
    let mut see: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(page_name)
        .collect();
    if let Some((parent, _)) = name.rsplit_once('-') {
        see.insert(0, parent.to_string());
    }
    tail.control("SH", ["SEE ALSO"]);
    let mut refs = Vec::new();
    for (i, p) in see.iter().enumerate() {
        if i > 0 {
            refs.push(roman(", "));
        }
        refs.push(bold(p.as_str()));
        refs.push(roman("(1)"));
    }
    if !refs.is_empty() {
        refs.push(roman("."));
        tail.text(refs);
        tail.control("PP", []);
    }
    let docs: Vec<String> = cited_docs(name)
        .iter()
        .map(|d| format!("{DOC_DIR}/docs/{d}"))
        .collect();
    tail.text([roman(format!(
        "{}: the documentation, installed by the Debian package ({DOC_DIR}/README.md \
         and {DOC_DIR}/docs/; in the source tree, README.md and docs/).",
        docs.join(", ")
    ))]);
}

/// One section rendered by clap_mangen, without the preamble each of its
/// renderings starts with (the page has it once, at the top).
fn section(
    render: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<String> {
    let mut buf = Vec::new();
    render(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Ok(match text.find("\n.SH") {
        Some(i) => text[i + 1..].to_string(),
        None => text,
    })
}

/// One after-help paragraph as filled text; its indented lines, a table
/// of values (`  sparse        ftruncate: ...`, a deeper line continuing
/// the one before), as a tagged list.
fn paragraph(roff: &mut Roff, p: &str) {
    roff.control("PP", []);
    let mut in_table = false;
    for line in p.lines() {
        let indent = line.len() - line.trim_start().len();
        let item = (1..=4)
            .contains(&indent)
            .then(|| line.trim_start().split_once("  "))
            .flatten();
        match item {
            Some((term, text)) => {
                if !in_table {
                    roff.control("RS", []);
                    in_table = true;
                }
                roff.control("TP", []);
                roff.text([bold(term)]);
                roff.text([roman(text.trim())]);
            }
            // A deeper line continues the item, a shallower one ends the table.
            None if in_table && indent > 4 => {
                roff.text([roman(line.trim())]);
            }
            None => {
                if in_table {
                    roff.control("RE", []);
                    in_table = false;
                }
                roff.text([roman(line)]);
            }
        }
    }
    if in_table {
        roff.control("RE", []);
    }
}

/// `fspace grow [--strategy <STRATEGY>] ... <FILE> <SIZE>`: every option with
/// the name of its value, then the arguments (`[DIR]` when optional) or
/// the subcommand.
fn synopsis(cmd: &clap::Command) -> Vec<Inline> {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut line = vec![bold(name)];
    for a in cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
    {
        line.push(roman(if a.is_required_set() { " " } else { " [" }));
        match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => {
                line.push(bold(format!("-{s}")));
                line.push(roman("|"));
                line.push(bold(format!("--{l}")));
            }
            (Some(s), None) => line.push(bold(format!("-{s}"))),
            (None, Some(l)) => line.push(bold(format!("--{l}"))),
            (None, None) => {}
        }
        if a.get_action().takes_values() {
            line.push(roman(" "));
            line.push(italic(format!("<{}>", value_name(a))));
        }
        if !a.is_required_set() {
            line.push(roman("]"));
        }
        if matches!(a.get_action(), clap::ArgAction::Append) {
            line.push(roman("..."));
        }
    }
    for a in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let (open, close) = if a.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        line.push(italic(value_name(a)));
        line.push(roman(close));
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        line.push(roman(" <"));
        line.push(italic("COMMAND"));
        line.push(roman(">"));
    }
    line
}

fn value_name(a: &clap::Arg) -> String {
    match a.get_value_names() {
        Some(names) if !names.is_empty() => names
            .iter()
            .map(clap::builder::Str::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => a.get_id().as_str().to_uppercase(),
    }
}

/// What each exit status of the command on page `name` means (the top
/// page: every command's). The codes are errors.rs's; `probe
/// --compare-saved`'s 4 is the comparison that could not tell.
fn exit_statuses(name: &str) -> Vec<(u8, String)> {
    use crate::errors::{
        EXIT_COULD_NOT_TELL, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NOTHING_SAVED, EXIT_REGRESSED,
        EXIT_UNCLEAN_END,
    };
    let top = name == "fspace";
    let probe = top || name == "fspace-probe";
    let wal = top || name.starts_with("fspace-wal");
    let strict = top || name == "fspace-wal" || name == "fspace-wal-verify";
    let mut codes: Vec<(u8, String)> = Vec::new();
    let mut add = |code: u8, text: &str| match codes.iter_mut().find(|c| c.0 == code) {
        Some(c) => {
            c.1.push(' ');
            c.1.push_str(text);
        }
        None => codes.push((code, text.to_string())),
    };
    add(0, "Success.");
    add(
        EXIT_FAILED,
        "The operation failed: the message names the operation, the path and, where \
         there is one, the byte range, with the system's error.",
    );
    if wal {
        add(
            EXIT_FAILED,
            "wal: also damage before the log's end (the message names the segment \
             file, the offset where the invalid record starts, the LSN expected there \
             and the reason).",
        );
    }
    if probe {
        add(
            EXIT_REGRESSED,
            "probe --compare-saved: regressed; two batches of fresh runs were each \
             more than the threshold below the saved baseline and separated from its \
             runs by the rank test, on a quiet machine (the figures are printed first).",
        );
    }
    add(
        2,
        "Usage error: an unknown option, a bad value, options that conflict. The \
         command's usage is printed and nothing is changed.",
    );
    if probe {
        add(
            EXIT_NOTHING_SAVED,
            "probe --compare-saved: nothing to compare with; no measurement saved for \
             this filesystem in the state directory, or one saved by an earlier fspace \
             or where the log could not be measured (run fspace probe --save there \
             again).",
        );
        add(
            EXIT_COULD_NOT_TELL,
            "probe --compare-saved: the comparison could not tell (the machine was \
             busy, the baseline was measured on a busy machine or is missing, too \
             few runs).",
        );
    }
    if strict {
        add(
            EXIT_UNCLEAN_END,
            "wal verify --strict: the log ends in bytes that claim to be the next \
             record but are not valid (a record with the expected LSN failing its \
             checksum or with a bad length, a valid record with a wrong LSN), or in a \
             segment file cut short: a torn last write or damage, which it cannot \
             tell apart.",
        );
    }
    if top || catches_signals(name) {
        add(
            EXIT_INTERRUPTED,
            "Interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP (probe, grow, copy, dig, \
             bench commit): the work is undone, or for dig stopped, the holes punched \
             so far kept.",
        );
    }
    codes.sort_by_key(|c| c.0);
    codes
}

/// The commands that stop cleanly on SIGINT, SIGTERM and SIGHUP (exit
/// 130); the others end as the signal's default action ends them.
fn catches_signals(name: &str) -> bool {
    [
        "fspace-probe",
        "fspace-grow",
        "fspace-copy",
        "fspace-dig",
        "fspace-bench",
        "fspace-bench-commit",
    ]
    .contains(&name)
}

/// The commands that read the state directory of saved measurements.
fn uses_state_dir(name: &str) -> bool {
    [
        "fspace",
        "fspace-probe",
        "fspace-info",
        "fspace-grow",
        "fspace-bench",
        "fspace-bench-commit",
    ]
    .contains(&name)
}

/// The environment variables fspace reads: the state directory's (for the
/// commands that use it), and the terminal's that clap reads for help and
/// errors.
fn environment(state: bool) -> Vec<(&'static str, &'static str)> {
    let mut vars = Vec::new();
    if state {
        vars.extend([
            (
                "FSPACE_STATE_DIR",
                "The state directory: where fspace probe --save keeps its measurements \
                 and where --compare-saved, fspace info, fspace grow --strategy auto and \
                 the log's auto setup (bench commit) find them. A service that compares \
                 must see the same one as the --save that measured.",
            ),
            (
                "XDG_STATE_HOME",
                "Without FSPACE_STATE_DIR, the state directory is $XDG_STATE_HOME/fspace.",
            ),
            (
                "HOME",
                "Without either, the state directory is ~/.local/state/fspace.",
            ),
        ]);
    }
    vars.extend([
        (
            "COLUMNS",
            "The width --help wraps to when none of standard output, error and \
             input is a terminal (at most 80).",
        ),
        (
            "NO_COLOR",
            "When set, help and usage errors are printed without colours.",
        ),
    ]);
    vars
}

/// The docs/*.md files a page cites in SEE ALSO.
fn cited_docs(name: &str) -> Vec<&'static str> {
    let mut docs = vec!["cli.md"];
    let more: &[&str] = match name {
        "fspace" => &["install.md"],
        "fspace-probe" => &["probe.md", "probe-json.md", "monitoring.md", "engines.md"],
        "fspace-info" => &["filesystems.md"],
        "fspace-grow" => &["filesystems.md", "untorn.md"],
        "fspace-map" => &["untorn.md"],
        "fspace-copy" | "fspace-dig" => &["copy.md"],
        "fspace-bench" | "fspace-bench-commit" => &["measurements.md"],
        n if n.starts_with("fspace-wal") => &["wal.md", "wal-format.md"],
        n if n.starts_with("fspace-generate") => &["install.md"],
        _ => &[],
    };
    docs.extend(more);
    docs
}

/// The page with each `docs/NAME.md` the help cites named where the Debian
/// package installs it.
fn installed_docs(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut rest = page;
    while let Some(i) = rest.find("docs/") {
        let before = rest[..i].chars().next_back();
        out.push_str(&rest[..i]);
        if matches!(before, Some(' ' | '(' | '\n')) {
            out.push_str(DOC_DIR);
            out.push('/');
        }
        out.push_str("docs/");
        rest = &rest[i + 5..];
    }
    out.push_str(rest);
    out
}

fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

/// Writes the page of `cmd` and of every subcommand below it into `dir`;
/// returns their paths.
fn write_pages(cmd: &clap::Command, dir: &Path) -> fspace::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let path = dir.join(format!("{}.1", page_name(cmd)));
    let mut page = Vec::new();
    render(cmd, &mut page).map_err(|e| io_err("render", &path, e))?;
    std::fs::write(&path, page).map_err(|e| io_err("write", &path, e))?;
    paths.push(path);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        paths.extend(write_pages(sub, dir)?);
    }
    Ok(paths)
}

fn io_err(op: &'static str, path: &Path, e: std::io::Error) -> fspace::Error {
    fspace::Error::from_io(op, path, None, e)
}
