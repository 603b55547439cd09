//! The arguments of `fspace crashtest record|check|lint|show` (the
//! subcommand's long help is on its variant in `cli.rs`).

use super::values::{between_arg, count_arg, model_arg, seconds_arg};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Arguments of `fspace crashtest`.
#[derive(Args)]
pub(crate) struct CrashtestArgs {
    #[command(subcommand)]
    pub command: CrashtestCommand,
}

#[derive(Subcommand)]
pub(crate) enum CrashtestCommand {
    /// Run PROGRAM and record its file operations under DIR into TRACE.
    #[command(
        override_usage = "fspace crashtest record [-q] --root DIR --trace TRACE -- PROGRAM [ARG]..."
    )]
    Record(CrashtestRecordArgs),
    /// Run CHECKER on every crash state TRACE allows; exit 1 if one fails.
    Check(CrashtestCheckArgs),
    /// Check TRACE against static durability rules; exit 1 on a finding.
    Lint(CrashtestLintArgs),
    /// List the operations of TRACE.
    Show(CrashtestShowArgs),
}

/// Arguments of `fspace crashtest record`.
#[derive(Args)]
pub(crate) struct CrashtestRecordArgs {
    /// The directory whose operations are recorded (the program's data).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// The trace directory to write (new, or empty; not inside DIR).
    #[arg(long, value_name = "TRACE")]
    pub trace: PathBuf,
    /// Print no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub program: Vec<std::ffi::OsString>,
}

/// Arguments of `fspace crashtest check`.
#[derive(Args)]
pub(crate) struct CrashtestCheckArgs {
    /// The trace directory.
    pub trace: PathBuf,
    /// A persistence model (posix, ext4, xfs, btrfs); repeat for several. Default: all four.
    #[arg(long, value_name = "MODEL", value_parser = model_arg)]
    pub model: Vec<fspace::crashtest::Model>,
    /// At most this many states per crash point and model (default 64).
    #[arg(long, value_name = "N", value_parser = count_arg)]
    pub states_per_point: Option<usize>,
    /// Crash points sampled between two durability points or acknowledgements (default 1).
    #[arg(long, value_name = "N", value_parser = between_arg)]
    pub between: Option<usize>,
    /// Checkers run at once (default: the number of CPUs).
    #[arg(long, short, value_name = "N", value_parser = count_arg)]
    pub jobs: Option<usize>,
    /// Seconds after which a running checker has failed (default 60).
    #[arg(long, value_name = "SECONDS", value_parser = seconds_arg)]
    pub timeout: Option<f64>,
    /// The checker's exit status for "consistent, but acknowledged data is missing": reported as
    /// a durability loss, not as corruption.
    #[arg(long, value_name = "STATUS", default_value_t = 3)]
    pub loss_status: i32,
    /// Leave the failing states' directories (the first 20) for a debugger.
    #[arg(long)]
    pub keep: bool,
    /// Make the states' directory inside DIR (created if missing) instead of in $TMPDIR; nothing
    /// else in DIR is touched.
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// The checker and its arguments.
    #[arg(last = true, required = true, value_name = "CHECKER")]
    pub checker: Vec<std::ffi::OsString>,
}

/// Arguments of `fspace crashtest lint`.
#[derive(Args)]
pub(crate) struct CrashtestLintArgs {
    /// The trace directory.
    pub trace: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace crashtest show`.
#[derive(Args)]
pub(crate) struct CrashtestShowArgs {
    /// The trace directory.
    pub trace: PathBuf,
    /// Also list opens of existing files and closes.
    #[arg(long)]
    pub all: bool,
    /// Print the manifest and the operations as JSON.
    #[arg(long)]
    pub json: bool,
}
