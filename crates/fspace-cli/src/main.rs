//! `fspace`: the command-line face of the fspace library. Glue only: every
//! decision lives in the library; this file parses arguments and prints.

use clap::{Parser, Subcommand};
use fspace::units::{format_human, parse_size};
use fspace::{ExtentState, FsInfo, GrowOptions, Intent, MapOptions, Strategy};
use serde::Serialize;
use std::path::{Path, PathBuf};
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

/// Exit code when the operation failed (usage errors exit 2, from clap).
const EXIT_FAILED: u8 = 1;

mod bench;
mod copy;
mod probe;
mod report;

#[derive(Parser)]
#[command(
    name = "fspace",
    version,
    about = "Grow, map and measure file space the right way for each Linux filesystem",
    after_help = "Exit status: 0 success, 1 the operation failed, 2 usage error, 130 interrupted\n\
                  (Ctrl-C, SIGTERM, SIGHUP: the work is undone or, for dig, stopped).\n\
                  Sizes accept plain bytes or K/M/G/T/P/E with or without iB (binary units)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure this filesystem: commit rate per space state, the log, growth per strategy; recommend a policy.
    #[command(
        after_help = "Measures, in a scratch directory inside DIR that is always removed (also on Ctrl-C\n\
        and errors): the filesystem's capabilities; 8 KiB commits (pwrite + fdatasync) into space that is\n\
        appended, sparse, allocated (unwritten), write-zeroed, zero-filled and recycled, and through\n\
        fspace's log; and the growth of a fresh 256 MiB file by each strategy. Then recommends a strategy\n\
        for each intent (log, bulk, sparse) with the measured reason.\n\n\
        A standard run takes at most about 30 s, --quick about 10 s; --full adds a record-size sweep\n\
        (512 B to 1 MiB) and a third round. It needs about 400 MiB free (at least 176 MiB, 192 MiB for\n\
        --full: the growth measurement is scaled down to fit).\n\n\
        --save keeps the result for this filesystem (keyed by mount type, source, mount point and fsid)\n\
        in $FSPACE_STATE_DIR, $XDG_STATE_HOME/fspace or ~/.local/state/fspace; `fspace grow --strategy auto`,\n\
        `fspace info` and the library's auto policy then follow it there and say so.\n\n\
        Examples:\n  fspace probe\n  fspace probe --quick /var/lib/db\n  \
        fspace probe --save --report probe.html /srv/kafka\n  fspace probe --json . > probe.json"
    )]
    Probe {
        /// A directory on the filesystem to measure (default: the current directory).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// A shorter run (at most about 10 s): one round, smaller files.
        #[arg(long, conflicts_with = "full")]
        quick: bool,
        /// A longer run: three rounds, larger files and a record-size sweep.
        #[arg(long)]
        full: bool,
        /// Keep the result so that auto policies follow it on this filesystem.
        #[arg(long)]
        save: bool,
        /// Also write a self-contained HTML page with charts to this file.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// No progress on stderr.
        #[arg(long, short)]
        quiet: bool,
        /// Print JSON (schema fspace-probe/1, docs/probe-json.md).
        #[arg(long)]
        json: bool,
    },
    /// Show the filesystem under PATH: kind, sizes, measured capabilities and the auto policy.
    Info {
        /// A file or directory.
        path: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Grow FILE to SIZE bytes with the right strategy for its filesystem.
    #[command(after_help = "Strategies:\n  \
        sparse        ftruncate: the new range is a hole\n  \
        reserve       fallocate KEEP_SIZE: blocks reserved past EOF, length unchanged\n  \
        allocate      fallocate: unwritten blocks (falls back to zero-fill)\n  \
        write-zeroes  fallocate WRITE_ZEROES: written blocks without moving data (falls back to zero-fill)\n  \
        zero-fill     large pwritev of zeros from the current end of file\n\
        auto picks by filesystem and --for: bulk (written once soon), log (small overwrites + fdatasync),\n\
        sparse (may stay empty). Existing bytes are never changed and files never shrink.\n\n\
        After a power cut: with --sync, a grow that returned is on disk (with --create: the file, \
        fully grown, under its name). Without --sync, an existing file may be back at any length \
        between its old one and the new one; a --create'd file may be missing, or present with \
        any length from 0 up (zero-fill: 0 bytes on ext4 and xfs in our power-cut tests, the \
        name reached the disk before the data).\n\n\
        Examples:\n  fspace grow --create --for log --sync wal/000001.seg 16MiB\n  \
        fspace grow --json image.raw 20G")]
    Grow {
        /// The file to grow.
        file: PathBuf,
        /// The new length: bytes (4096), binary units (64K, 16MiB, 1.5G, 2T) or decimal ones (10MB, 4kB).
        #[arg(value_parser = size_arg, allow_hyphen_values = true)]
        size: u64,
        /// How to grow; auto chooses by filesystem and intent.
        #[arg(long, default_value = "auto", value_parser = strategy_arg)]
        strategy: StrategyArg,
        /// What the space is for (drives auto).
        #[arg(long = "for", default_value = "bulk", value_parser = intent_arg)]
        intent: Intent,
        /// Create FILE if missing (it appears only once fully grown).
        #[arg(long)]
        create: bool,
        /// Make the result durable (fdatasync; with --create, fsync before the rename and of the directory after). Without it a power cut may undo the growth (see below).
        #[arg(long)]
        sync: bool,
        /// With an explicit --strategy, fail instead of falling back.
        #[arg(long)]
        no_fallback: bool,
        /// Zero-fill even when statfs reports too little free space (writes until ENOSPC, then rolls back).
        #[arg(long)]
        no_space_check: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure what space preparation is worth on a filesystem.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Copy SRC to DST keeping holes: clone, kernel copy or sparse read/write, whichever is possible.
    #[command(
        after_help = "The ladder: FICLONE (shares blocks; same filesystem with reflinks) -> \
        copy_file_range per data extent -> read + sparse write. A rung falls to the next only \
        before anything was copied; the report says which ran and why others did not.\n\n\
        --sparse auto    keep the source's holes, copy its data as it is (default)\n\
        --sparse always  also turn zero blocks inside the data into holes (reads everything)\n\
        --sparse never   write holes as zeros: the copy ends fully allocated\n\
        --reflink auto   share blocks when possible and --sparse is auto (default)\n\
        --reflink always share blocks or fail\n\
        --reflink never  every block of the copy is its own\n\n\
        The copy is written under a temporary name beside DST and renamed into place when \
        complete: DST never holds a partial copy, and an error or Ctrl-C removes the temporary \
        file. A DST that is a directory receives the copy under SRC's name. The copy holds \
        SRC's bytes up to its length when the copy began.\n\n\
        After a power cut: with --sync, a copy that returned is on disk, whole, under DST. \
        Without --sync, a new DST may be missing, or present with any length from 0 up (its data \
        not yet written); a DST replaced with --force holds the old file or the whole copy, never \
        part of one (the copy is fsynced before it replaces a file even without --sync).\n\n\
        Examples:\n  fspace copy vm.img /backup/vm.img\n  \
        fspace copy --sparse always --force --preserve db.ibd /mnt/db/\n  \
        fspace copy --reflink never --json big.raw big.copy"
    )]
    Copy {
        /// The file to copy (a regular file).
        src: PathBuf,
        /// The copy's name, or an existing directory to copy into.
        dst: PathBuf,
        /// What to do with zeros: auto, always, never.
        #[arg(long, default_value = "auto", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<fspace::sparse::SparseMode>()))]
        sparse: fspace::sparse::SparseMode,
        /// Whether the copy may share the source's blocks: auto, always, never.
        #[arg(long, default_value = "auto", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<fspace::sparse::ReflinkMode>()))]
        reflink: fspace::sparse::ReflinkMode,
        /// Replace DST if it exists (never SRC itself).
        #[arg(long, short)]
        force: bool,
        /// Copy mode, owner (when permitted) and timestamps.
        #[arg(long, short)]
        preserve: bool,
        /// Make the copy durable (fsync the file before the rename, the directory after). Without it a power cut may lose the copy (see below).
        #[arg(long)]
        sync: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Punch holes over zero blocks of FILE in place; the bytes read back do not change.
    #[command(
        after_help = "Only ranges that hold data are read; zero runs of at least one \
        filesystem block, aligned to blocks, are punched (fallocate PUNCH_HOLE|KEEP_SIZE). \
        Do not dig a file another process is writing.\n\n\
        Examples:\n  fspace dig vm.img\n  fspace dig --json --sync backup.tar"
    )]
    Dig {
        /// The file to dig.
        file: PathBuf,
        /// fsync the file at the end.
        #[arg(long)]
        sync: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show FILE's extents: holes, unwritten, written, shared and delayed-allocation ranges.
    Map {
        /// The file to map.
        file: PathBuf,
        /// Flush dirty data first so delayed allocations show as real extents.
        #[arg(long)]
        sync: bool,
        /// Print only the summary, not every extent (JSON keeps both).
        #[arg(long)]
        summary: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Commit records with fdatasync into space in each state, and through fspace's log, in one run.
    #[command(after_help = "Modes (all by default, in this order):\n  \
        append         O_APPEND write + fdatasync: every commit allocates (the baseline)\n  \
        sparse         overwrite of an ftruncated file (holes)\n  \
        allocate       overwrite of a fallocated file (unwritten extents)\n  \
        write-zeroes   overwrite of a file grown with FALLOC_FL_WRITE_ZEROES (where the device supports it)\n  \
        zero-fill-now  overwrite of a file zero-filled right before the run\n  \
        overwrite      overwrite of a file written and synced beforehand (the ceiling, as pg_test_fsync)\n  \
        wal            fspace's segment log: prepared/recycled segments, group commit\n\n\
        Scratch files are made inside DIR and removed afterwards.\n\n\
        Examples:\n  fspace bench commit /var/lib/db\n  \
        fspace bench commit --mode wal,append --writers 16 --seconds 10 .\n  \
        fspace bench commit --record 1MiB --mode wal,append --json /mnt/data")]
    Commit {
        /// Directory on the filesystem to measure.
        dir: PathBuf,
        /// Bytes per record (at least 1).
        #[arg(long, default_value = "8KiB", value_parser = record_arg)]
        record: u64,
        /// Threads committing at once.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        writers: u32,
        /// Seconds per mode.
        #[arg(long, default_value_t = 5.0, value_parser = seconds_arg)]
        seconds: f64,
        /// Modes to run, comma-separated or repeated, or all (the default).
        #[arg(long, value_delimiter = ',', value_parser = mode_arg)]
        mode: Vec<Option<fspace::bench::CommitMode>>,
        /// File size for the overwrite modes (and the append file's cap).
        #[arg(long, default_value = "256MiB", value_parser = size_arg)]
        file_size: u64,
        /// Segment size of the log in wal mode (a multiple of 4 KiB, at least 64 KiB).
        #[arg(long, default_value = "16MiB", value_parser = size_arg)]
        segment_size: u64,
        /// How the log prepares new segments in wal mode: auto (its policy for intent log) or a strategy.
        #[arg(long, default_value = "auto", value_parser = strategy_arg)]
        prepare: StrategyArg,
        /// O_DIRECT writes for the log in wal mode: auto (the log's default: off), on, off.
        #[arg(long, default_value = "auto", value_parser = ["auto", "on", "off"])]
        direct_io: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn record_arg(s: &str) -> Result<u64, String> {
    match size_arg(s)? {
        0 => Err("a record must be at least 1 byte".into()),
        n if n > u32::MAX as u64 => {
            Err(format!("{s:?} is larger than a record can be (4 GiB - 1)"))
        }
        n => Ok(n),
    }
}

fn seconds_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds between 0 and 86400"
        )),
    }
}

/// A mode, or `all` (None).
fn mode_arg(s: &str) -> Result<Option<fspace::bench::CommitMode>, String> {
    if s == "all" {
        Ok(None)
    } else {
        s.parse().map(Some)
    }
}

fn size_arg(s: &str) -> Result<u64, String> {
    let n = parse_size(s).map_err(|e| e.to_string())?;
    if n > fspace::units::MAX_FILE_SIZE {
        return Err(format!(
            "size {s:?} is larger than the largest file Linux allows ({} bytes, 8 EiB - 1)",
            fspace::units::MAX_FILE_SIZE
        ));
    }
    Ok(n)
}

/// `auto` or one strategy (a newtype: clap treats a bare `Option` as "may be absent").
#[derive(Clone, Copy)]
struct StrategyArg(Option<Strategy>);

fn strategy_arg(s: &str) -> Result<StrategyArg, String> {
    if s == "auto" {
        Ok(StrategyArg(None))
    } else {
        s.parse().map(|s| StrategyArg(Some(s)))
    }
}

fn intent_arg(s: &str) -> Result<Intent, String> {
    s.parse()
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let usage = !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            if usage && std::env::args().any(|a| a == "--json") {
                let msg = e.to_string();
                let first = msg
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_string();
                let v = serde_json::json!({ "error": first, "usage": true });
                let _ = emit(&format!("{v}\n"));
            }
            e.exit();
        }
    };
    let is_grow = matches!(cli.command, Command::Grow { .. });
    let is_copy = matches!(cli.command, Command::Copy { .. } | Command::Dig { .. });
    let is_dig = matches!(cli.command, Command::Dig { .. });
    let is_probe = matches!(cli.command, Command::Probe { .. });
    let (json, result) = match cli.command {
        Command::Info { path, json } => (json, info(&path, json)),
        Command::Probe {
            dir,
            quick,
            full,
            save,
            report,
            quiet,
            json,
        } => {
            let level = if quick {
                fspace::probe::Level::Quick
            } else if full {
                fspace::probe::Level::Full
            } else {
                fspace::probe::Level::Standard
            };
            let a = probe::Args {
                dir: &dir,
                level,
                json,
                report: report.as_deref(),
                save,
                quiet,
            };
            (json, probe::probe(&a))
        }
        Command::Grow {
            file,
            size,
            strategy,
            intent,
            create,
            sync,
            no_fallback,
            no_space_check,
            json,
        } => {
            let opts = GrowOptions {
                choice: match strategy.0 {
                    Some(s) if no_fallback => fspace::StrategyChoice::exactly(s),
                    Some(s) => fspace::StrategyChoice::with_fallbacks(s),
                    None => fspace::StrategyChoice::auto_from_state_dir(),
                },
                intent,
                sync,
                create,
                check_free_space: !no_space_check,
                ..GrowOptions::default()
            };
            if no_fallback && strategy.0.is_none() {
                use clap::CommandFactory;
                Cli::command()
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        "--no-fallback needs an explicit --strategy (auto always uses its fallback ladder)",
                    )
                    .exit();
            }
            (json, grow(&file, size, opts, json))
        }
        Command::Map {
            file,
            sync,
            summary,
            json,
        } => (json, map(&file, sync, summary, json)),
        Command::Copy {
            src,
            dst,
            sparse,
            reflink,
            force,
            preserve,
            sync,
            json,
        } => {
            if reflink == fspace::sparse::ReflinkMode::Always
                && sparse != fspace::sparse::SparseMode::Auto
            {
                use clap::CommandFactory;
                Cli::command()
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!(
                            "--reflink always shares the source's blocks as they are, so --sparse {sparse} cannot apply; use one or the other"
                        ),
                    )
                    .exit();
            }
            let opts = fspace::CopyOptions {
                sparse,
                reflink,
                force,
                preserve,
                sync,
                ..Default::default()
            };
            (json, copy::copy(&src, &dst, opts, json))
        }
        Command::Dig { file, sync, json } => (json, copy::dig(&file, sync, json)),
        Command::Bench {
            what:
                BenchCommand::Commit {
                    dir,
                    record,
                    writers,
                    seconds,
                    mode,
                    file_size,
                    segment_size,
                    direct_io,
                    prepare,
                    json,
                },
        } => {
            let mut o = fspace::bench::CommitBenchOptions::default();
            o.record_size = record as usize;
            o.writers = writers as usize;
            o.duration = std::time::Duration::from_secs_f64(seconds);
            o.file_size = file_size;
            o.segment_size = segment_size;
            o.prepare = match prepare.0 {
                Some(s) => fspace::StrategyChoice::with_fallbacks(s),
                None => fspace::StrategyChoice::auto_from_state_dir(),
            };
            o.direct_io = match direct_io.as_str() {
                "on" => Some(true),
                "off" => Some(false),
                _ => None,
            };
            let modes = if mode.is_empty() || mode.iter().any(|m| m.is_none()) {
                fspace::bench::CommitMode::ALL.to_vec()
            } else {
                mode.into_iter().flatten().collect()
            };
            if let Err(msg) = bench::check_options(&modes, &o) {
                use clap::CommandFactory;
                Cli::command()
                    .error(clap::error::ErrorKind::ValueValidation, msg)
                    .exit();
            }
            (json, bench::commit(&dir, &modes, &o, json))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.raw_os_error() == Some(32) && e.op() == "write" {
                // stdout was closed (`| head`): nothing left to tell anyone.
                return ExitCode::from(EXIT_FAILED);
            }
            let interrupted = (e.op() == "bench commit" && e.raw_os_error() == Some(4))
                || e.raw_os_error() == Some(125); // ECANCELED: a signal stopped grow, copy or dig
            let hint = if is_grow {
                grow_hint(&e)
            } else if is_copy {
                copy_hint(&e, is_dig)
            } else if is_probe {
                probe_hint(&e)
            } else {
                None
            };
            eprintln!("fspace: error: {e}");
            if let Some(h) = hint {
                eprintln!("fspace: hint: {h}");
            }
            if json && !bench::REPORTED.load(std::sync::atomic::Ordering::Relaxed) {
                let v = serde_json::json!({
                    "error": e.to_string(),
                    "errno": e.raw_os_error(),
                    "op": e.op(),
                    "path": e.path().to_string_lossy(),
                    "fallbacks": e.fallbacks(),
                    "hint": hint,
                });
                let _ = emit(&format!("{v}\n"));
            }
            if interrupted {
                return ExitCode::from(130); // 128 + SIGINT, as shells report it
            }
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Returns advice for `fspace grow` errors whose errno alone is cryptic.
fn grow_hint(e: &fspace::Error) -> Option<&'static str> {
    match (e.raw_os_error()?, e.op()) {
        (1, _) => Some("the file may be immutable or append-only (see lsattr; chattr -i or -a removes the flag)"),
        (2, "open") => Some("the file does not exist; pass --create to create it"),
        (2, "create") => Some("the directory to create the file in does not exist"),
        (13, _) => Some("you lack write permission on the file or its directory"),
        (28, _) => Some(
            "not enough free space; nothing was changed (an existing file keeps its length, a new one is not created)",
        ),
        (30, _) => Some("the filesystem is mounted read-only"),
        _ => None,
    }
}

/// Returns advice for `fspace probe` errors.
fn probe_hint(e: &fspace::Error) -> Option<&'static str> {
    match e.raw_os_error()? {
        2 | 20 if e.op() == "probe" => Some("give an existing directory on the filesystem to measure"),
        13 => Some("run as a user who may create files in the directory, or pick another directory on the same filesystem"),
        28 if e.to_string().contains("could not be removed") => Some(
            "the filesystem filled up and the scratch directory could not be removed; remove it by hand once it is writable again",
        ),
        28 => Some("free some space or probe another directory; nothing was left behind"),
        30 => Some("probe a writable mount of the same device, or remount it read-write"),
        _ => None,
    }
}

/// Returns advice for `fspace copy` and `fspace dig` errors.
fn copy_hint(e: &fspace::Error, dig: bool) -> Option<&'static str> {
    match (e.raw_os_error()?, dig) {
        (2, false) if e.op() == "create" => Some("the directory to copy into does not exist"),
        (13, false) => {
            Some("you lack permission to read the source or write the destination's directory")
        }
        (13, true) => Some("you lack write permission on the file"),
        (28, false) => {
            Some("not enough free space; the partial copy was removed and nothing else changed")
        }
        (28, true) => Some(
            "punching a hole needed metadata space; the file reads back the same, holes punched so far stay",
        ),
        (30, _) => Some("the filesystem is mounted read-only"),
        (95, true) => Some("this filesystem has no hole punching (sshfs, NFS before 4.2)"),
        _ => None,
    }
}

/// Writes `text` to stdout in one piece; a closed pipe or a full disk is
/// an error (exit 1), not a panic.
pub(crate) fn emit(text: &str) -> fspace::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| fspace::Error::from_io("write", Path::new("<stdout>"), None, e))
}

/// A path in JSON, bytes that are not UTF-8 replaced (output must not fail
/// after the work was done).
fn ser_path<S: serde::Serializer>(p: &&Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

pub(crate) fn print_json<T: Serialize>(v: &T) -> fspace::Result<()> {
    match serde_json::to_string_pretty(v) {
        Ok(s) => emit(&(s + "\n")),
        Err(e) => Err(fspace::Error::Refused {
            op: "json",
            path: PathBuf::from("-"),
            message: e.to_string(),
            errno: 22,
        }),
    }
}

pub(crate) fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The policy's answer for `intent` on `info`'s filesystem, as `info`,
/// `grow` and the log get it (saved measurements from the state directory).
fn policy_plan(info: &FsInfo, intent: Intent) -> fspace::policy::Plan {
    fspace::policy::plan(info, intent, &fspace::StrategyChoice::auto_from_state_dir())
}

/// The plan's reason with its notes.
fn plan_reason(p: &fspace::policy::Plan) -> String {
    if p.notes.is_empty() {
        p.reason.clone()
    } else {
        format!("{} ({})", p.reason, p.notes.join("; "))
    }
}

fn ladder(info: &FsInfo, intent: Intent) -> (String, String) {
    let p = policy_plan(info, intent);
    let names: Vec<&str> = p.ladder.iter().map(|s| s.name()).collect();
    (names.join(" -> "), plan_reason(&p))
}

fn info(path: &Path, json: bool) -> fspace::Result<()> {
    let info = fspace::fs_info(path)?;
    let mut o = String::new();
    let intents = [Intent::Bulk, Intent::Log, Intent::Sparse];
    if json {
        #[derive(Serialize)]
        struct PolicyEntry {
            intent: Intent,
            ladder: Vec<Strategy>,
            reason: String,
            /// The saved probe measurement followed, if any.
            saved_probe: Option<String>,
        }
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            info: &'a FsInfo,
            policy: Vec<PolicyEntry>,
        }
        let policy = intents
            .iter()
            .map(|&i| {
                let p = policy_plan(&info, i);
                PolicyEntry {
                    intent: i,
                    reason: plan_reason(&p),
                    ladder: p.ladder,
                    saved_probe: p.saved.map(|s| s.to_string_lossy().into_owned()),
                }
            })
            .collect();
        return print_json(&Out {
            info: &info,
            policy,
        });
    }
    out!(o, "path:          {}", info.path.display());
    out!(
        o,
        "filesystem:    {} (magic 0x{:x})",
        info.display_name(),
        info.magic
    );
    if let (Some(mp), Some(src)) = (&info.mount_point, &info.source) {
        out!(o, "mount:         {} from {}", mp.display(), src);
    }
    out!(o, "block size:    {}", info.block_size);
    out!(
        o,
        "space:         {} total, {} free{}",
        format_human(info.total_bytes),
        format_human(info.free_bytes),
        if info.free_bytes_root != info.free_bytes {
            format!(" ({} for root)", format_human(info.free_bytes_root))
        } else {
            String::new()
        }
    );
    out!(o, "copy-on-write: {}", yes_no(info.copy_on_write));
    out!(o, "network:       {}", yes_no(info.network));
    out!(o, "read-only:     {}", yes_no(info.read_only));
    match &info.capabilities {
        Ok(c) => {
            out!(o, "capabilities (measured on a scratch file here):");
            for (name, cap) in c.named() {
                match &cap.detail {
                    Some(d) => out!(o, "  {name:<13} {:<3}  {d}", yes_no(cap.supported)),
                    None => out!(o, "  {name:<13} {}", yes_no(cap.supported)),
                }
            }
        }
        Err(e) => out!(o, "capabilities:  unknown ({e})"),
    }
    let saved = policy_plan(&info, Intent::Log).saved;
    match saved {
        Some(p) => out!(
            o,
            "auto policy (following the probe saved in {}; -> = fallback):",
            p.display()
        ),
        None => out!(
            o,
            "auto policy (built in; `fspace probe --save DIR` measures this filesystem; -> = fallback):"
        ),
    }
    for i in intents {
        let (l, reason) = ladder(&info, i);
        out!(o, "  {:<7} {l}", i.name());
        out!(o, "          {reason}");
    }
    emit(&o)
}

fn grow(file: &Path, size: u64, opts: GrowOptions<'_>, json: bool) -> fspace::Result<()> {
    let bar = std::cell::OnceCell::new();
    let show = |p: fspace::Progress| {
        let b = bar.get_or_init(|| {
            let b = indicatif::ProgressBar::with_draw_target(Some(p.total), indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "zero-fill {bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            ) {
                b.set_style(style);
            }
            b
        });
        b.set_position(p.done);
    };
    // Ctrl-C, SIGTERM or SIGHUP stop a zero-fill and put the file back.
    // Further signals do not cut the rollback short (SIGKILL still works);
    // if the handlers cannot be installed the default behaviour (exit) stays.
    let cancel = copy::cancel_on_signals();
    let opts = GrowOptions {
        progress: Some(&show),
        cancel: Some(&cancel),
        ..opts
    };
    let result = fspace::grow(file, size, &opts);
    if let Some(b) = bar.get() {
        b.finish_and_clear();
    }
    let r = result?;
    let mut o = String::new();
    if json {
        return print_json(&r);
    }
    let how = match r.requested {
        None => format!("auto, intent {}", r.intent.name()),
        Some(s) => format!("requested {s}"),
    };
    out!(
        o,
        "path:          {}{}",
        r.path.display(),
        if r.created { " (created)" } else { "" }
    );
    out!(o, "filesystem:    {}", r.filesystem);
    out!(o, "strategy:      {} ({how})", r.strategy);
    out!(o, "reason:        {}", r.reason);
    if r.fallbacks.is_empty() {
        out!(o, "fallbacks:     none");
    } else {
        out!(o, "fallbacks:");
        for f in &r.fallbacks {
            out!(o, "  - {}: {}", f.strategy, f.error);
        }
    }
    for n in &r.notes {
        out!(o, "note:          {n}");
    }
    out!(
        o,
        "old_len:       {} ({})",
        r.old_len,
        format_human(r.old_len)
    );
    out!(
        o,
        "new_len:       {} ({})",
        r.new_len,
        format_human(r.new_len)
    );
    if r.new_len != r.target_len {
        out!(
            o,
            "reserved to:   {} ({}) past EOF",
            r.target_len,
            format_human(r.target_len)
        );
    }
    out!(
        o,
        "bytes_written: {} ({})",
        r.bytes_written,
        format_human(r.bytes_written)
    );
    out!(
        o,
        "syscalls:      {} ({} write-type)",
        r.syscalls,
        r.write_syscalls
    );
    out!(o, "synced:        {}", yes_no(r.synced));
    out!(o, "elapsed_ms:    {:.3}", r.elapsed.as_secs_f64() * 1e3);
    emit(&o)
}

fn map(file: &Path, sync: bool, summary_only: bool, json: bool) -> fspace::Result<()> {
    let m = fspace::map_file(
        file,
        MapOptions {
            sync,
            ..Default::default()
        },
    )?;
    let mut o = String::new();
    if json {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(serialize_with = "ser_path")]
            path: &'a Path,
            #[serde(flatten)]
            map: &'a fspace::ExtentMap,
        }
        if summary_only {
            #[derive(Serialize)]
            struct Summary<'a> {
                #[serde(serialize_with = "ser_path")]
                path: &'a Path,
                method: fspace::MapMethod,
                #[serde(skip_serializing_if = "Option::is_none")]
                note: Option<&'a str>,
                summary: &'a fspace::Summary,
            }
            return print_json(&Summary {
                path: file,
                method: m.method,
                note: m.note,
                summary: &m.summary,
            });
        }
        return print_json(&Out {
            path: file,
            map: &m,
        });
    }
    if !summary_only {
        out!(o, "{:>20} {:>31}  STATE", "OFFSET", "LENGTH");
    }
    for e in m.extents.iter().filter(|_| !summary_only) {
        out!(
            o,
            "{:>20} {:>20} {:>10}  {}",
            e.offset,
            e.length,
            format_human(e.length),
            state_name(e.state)
        );
    }
    let s = &m.summary;
    let opt = |v: Option<u64>| v.map(format_human).unwrap_or_else(|| "unknown".into());
    if !summary_only {
        out!(o);
    }
    out!(o, "size:       {} ({})", s.size, format_human(s.size));
    out!(o, "allocated:  {}", opt(s.allocated));
    out!(o, "written:    {}", opt(s.written));
    out!(o, "unwritten:  {}", opt(s.unwritten));
    out!(o, "holes:      {}", format_human(s.holes));
    if let Some(d) = s.delalloc.filter(|&d| d > 0) {
        out!(
            o,
            "delalloc:   {} (not yet allocated; --sync flushes first)",
            format_human(d)
        );
    }
    if let Some(sh) = s.shared.filter(|&d| d > 0) {
        out!(o, "shared:     {}", format_human(sh));
    }
    if let Some(b) = s.beyond_eof.filter(|&d| d > 0) {
        out!(
            o,
            "past EOF:   {} allocated beyond the end of file",
            format_human(b)
        );
    }
    out!(o, "extents:    {}", s.extents);
    out!(
        o,
        "method:     {}",
        if m.method == fspace::MapMethod::Fiemap {
            "fiemap"
        } else {
            "seek"
        }
    );
    if let Some(n) = m.note {
        out!(o, "note:       {n}");
    }
    emit(&o)
}

fn state_name(s: ExtentState) -> &'static str {
    match s {
        ExtentState::Hole => "hole",
        ExtentState::Unwritten => "unwritten",
        ExtentState::Written => "written",
        ExtentState::Shared => "shared",
        ExtentState::Delalloc => "delalloc",
        ExtentState::Data => "data",
        ExtentState::Inline => "inline",
        ExtentState::Other => "other",
    }
}
