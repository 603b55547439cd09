//! `fspace`: the command-line face of the fspace library. Glue only: every
//! decision lives in the library; each subcommand's file parses nothing and
//! decides nothing, it calls the library and prints.

use clap::{CommandFactory, Parser};
use cli::{BenchCommand, Cli, Command};
use errors::Cmd;
use std::process::ExitCode;

/// Appends one line to a `String` (output is printed in one piece, so that a
/// report costs one `write` syscall, not one per line).
macro_rules! out {
    ($o:expr) => {
        $o.push('\n')
    };
    ($o:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($t)*);
    }};
}

mod bench;
mod chart;
mod cli;
mod copy;
mod curves;
mod dig;
mod durability;
mod engines;
mod errors;
mod fmt;
mod generate;
mod grow;
mod info;
mod map;
mod output;
mod probe;
mod prometheus;
mod report;
mod report_concurrency;
mod wal;

fn main() -> ExitCode {
    let cli = parse();
    let (cmd, json) = match &cli.command {
        Command::Info(a) => (Cmd::Info, a.json),
        Command::Probe(a) if a.compare_saved => (Cmd::ProbeCompare, a.json),
        Command::Probe(a) => (Cmd::Probe, a.json),
        Command::Grow(a) => (Cmd::Grow { create: a.create }, a.json),
        Command::Copy(a) => (Cmd::Copy, a.json),
        Command::Dig(a) => (Cmd::Dig, a.json),
        Command::Map(a) => (Cmd::Map, a.json),
        Command::Wal(a) => (
            Cmd::Wal,
            match &a.command {
                cli::WalCommand::Stat(x) => x.json,
                cli::WalCommand::Verify(x) => x.json,
                cli::WalCommand::Dump(x) => x.json,
            },
        ),
        Command::Bench {
            what: BenchCommand::Commit(a),
        } => (Cmd::Bench, a.json),
        Command::Generate { .. } => (Cmd::Generate, false),
    };
    let result = match cli.command {
        Command::Info(a) => info::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Grow(a) => grow::run(a),
        Command::Copy(a) => copy::run(a),
        Command::Dig(a) => dig::run(a),
        Command::Map(a) => map::run(a),
        Command::Wal(a) => wal::run(a),
        Command::Bench {
            what: BenchCommand::Commit(a),
        } => bench::run(a),
        Command::Generate { what } => generate::run(what),
    };
    match result {
        Ok(()) => errors::success_status(),
        Err(e) => errors::report(&e, cmd, json),
    }
}

/// Parses the command line; a usage error exits 2 (with `--json`, after a
/// JSON document naming it).
fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit_usage(e),
    }
}

/// Exits with a usage error (status 2) saying `message`: options that the
/// library's validation refused before anything ran. The usage shown is
/// the subcommand's (`fspace grow [OPTIONS] <FILE> <SIZE>`), not the top
/// level's.
pub(crate) fn usage_error(kind: clap::error::ErrorKind, message: String) -> ! {
    let mut cmd = Cli::command();
    // Sets each subcommand's full name (`fspace wal dump`) for its usage.
    cmd.build();
    let e = invoked(&cmd).error(kind, message);
    exit_usage(e)
}

/// The subcommand this command line names (`fspace wal dump`), found by
/// walking its words from the top: the levels that have subcommands take
/// no option with a value, so their first word that is not an option is
/// the next level's name.
fn invoked(top: &clap::Command) -> clap::Command {
    let mut cmd = top;
    for arg in std::env::args_os().skip(1) {
        let Some(word) = arg.to_str() else { break };
        if word == "--" {
            break;
        }
        if word.starts_with('-') {
            continue;
        }
        match cmd.find_subcommand(word) {
            Some(sub) => cmd = sub,
            None => break,
        }
    }
    cmd.clone()
}

/// Prints a usage error with the usage of the subcommand it is about
/// (clap leaves it out of errors about a value, as `--from x`), as JSON
/// too with `--json`, and exits 2; help and version are printed as clap
/// prints them.
fn exit_usage(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    if std::env::args().any(|a| a == "--json") {
        // The message is the text before the blank line that precedes the
        // usage, on one line: `the following required arguments were not
        // provided: <FILE>`.
        let first: Vec<&str> = text
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect();
        let msg = first.join(" ");
        let v = serde_json::json!({
            "error": msg.trim_start_matches("error: "),
            "usage": true,
        });
        let _ = output::emit(&format!("{v}\n"));
    }
    let text = if text.contains("\nUsage: ") {
        text
    } else {
        let mut cmd = Cli::command();
        cmd.build();
        let usage = invoked(&cmd).render_usage().to_string();
        match text.split_once("\nFor more information") {
            Some((message, rest)) => {
                format!(
                    "{}\n\n{usage}\n\nFor more information{rest}",
                    message.trim_end()
                )
            }
            None => format!("{}\n\n{usage}\n", text.trim_end()),
        }
    };
    eprint!("{}", fit(&text));
    std::process::exit(e.exit_code())
}

/// `text` with every line wider than 80 columns (a long message, a value
/// the user typed) wrapped under its start.
fn fit(text: &str) -> String {
    if text.lines().all(|l| l.chars().count() <= fmt::COLUMNS) {
        return text.to_string();
    }
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start();
        let head = match line.strip_prefix("error: ") {
            Some(_) => "error: ",
            None => &line[..line.len() - body.len()],
        };
        fmt::labelled(&mut out, head, &line[head.len()..]);
    }
    out
}
