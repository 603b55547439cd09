//! Usage errors: the options that clap or the library's validation
//! refused, said with the usage of the subcommand they are about (as JSON
//! too with `--json`), and exit status 2.

use crate::cli::Cli;
use crate::{fmt, output};
use clap::CommandFactory;

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
pub(crate) fn exit_usage(e: clap::Error) -> ! {
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
