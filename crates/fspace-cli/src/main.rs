//! `fspace`: the command-line face of the fspace library. Glue only: every
//! decision lives in the library; each subcommand's file parses nothing and
//! decides nothing, it calls the library and prints.

use clap::Parser;
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
mod cli;
mod copy;
mod crashtest;
mod curves;
mod dig;
mod durability;
mod errors;
mod fmt;
mod generate;
mod grow;
mod info;
mod map;
mod output;
mod probe;
mod usage;
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
        Err(e) => usage::exit_usage(e),
    }
}
