//! `fspace generate`: the man pages and the shell completions, made from the
//! clap definition in cli.rs that parses the command line, so that they
//! cannot drift from it (tests/generate.rs checks that they name every
//! subcommand and option the help does).

use crate::cli::{Cli, GenerateCommand};
use crate::output::emit;
use clap::CommandFactory;
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

/// Renders `cmd`'s page: clap_mangen's sections, then SEE ALSO naming the
/// parent's page and each subcommand's.
fn render(cmd: &clap::Command, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let version = cmd.get_version().unwrap_or(env!("CARGO_PKG_VERSION"));
    clap_mangen::Man::new(cmd.clone())
        .source(format!("fspace {version}"))
        .manual("fspace manual")
        .render(w)?;
    let name = page_name(cmd);
    let mut see: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(page_name)
        .collect();
    if let Some((parent, _)) = name.rsplit_once('-') {
        see.insert(0, parent.to_string());
    }
    if !see.is_empty() {
        let refs: Vec<String> = see
            .iter()
            .map(|p| format!("\\fB{}\\fR(1)", p.replace('-', "\\-")))
            .collect();
        writeln!(w, ".SH \"SEE ALSO\"\n{}", refs.join(", "))?;
    }
    Ok(())
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
