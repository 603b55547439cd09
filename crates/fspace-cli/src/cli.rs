//! The command line: every subcommand's arguments, with their help and
//! parsers. What each one does is in its own file.

use clap::{Args, Parser, Subcommand};
use fspace::{Intent, Strategy};
use std::path::PathBuf;

mod crashtest;
mod values;

pub(crate) use crashtest::{
    CrashtestArgs, CrashtestCheckArgs, CrashtestCommand, CrashtestLintArgs, CrashtestRecordArgs,
    CrashtestShowArgs,
};
use values::{
    engine_arg, mode_arg, record_arg, seconds_arg, size_arg, strategy_arg, sync_method_arg,
    unit_arg, whole_arg,
};
pub(crate) use values::{threshold_arg, writers_arg, StrategyArg};

#[derive(Parser)]
#[command(
    name = "fspace",
    version,
    args_override_self = true,
    max_term_width = 80,
    about = "Grow, map and measure file space the right way for each Linux filesystem",
    after_help = "Exit status: 0 success, 1 the operation failed, 2 usage error, 130 \
        interrupted (Ctrl-C, SIGTERM, SIGHUP: the work is undone or, for dig, stopped).\n\n\
        Sizes: plain bytes (4096); K M G T P E, alone or as KiB ... EiB, are binary \
        (16M = 16MiB = 16 x 2^20 bytes); KB MB GB TB PB EB are decimal (1MB = 1,000,000 \
        bytes), as in GNU truncate and dd. A fraction must be a whole number of bytes \
        (1.5K = 1536). Output prints binary units (KiB, MiB, GiB).\n\n\
        Manual: man fspace-COMMAND (fspace-copy, fspace-wal-dump, ...), and docs/cli.md: in \
        the source tree, or /usr/share/doc/fspace/docs/cli.md from the Debian package."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Measure this filesystem and recommend how to grow files for each intent.
    #[command(
        after_help = "Measures, in a scratch directory inside DIR that is always removed (also on Ctrl-C \
        and errors): the filesystem's capabilities; 8 KiB commits (pwrite + fdatasync) into space that is \
        appended, sparse, allocated (unwritten), write-zeroed, zero-filled and recycled, and through \
        fspace's log; and the growth of a fresh 256 MiB file by each strategy. Then recommends a strategy \
        for each intent (log, bulk, sparse) with the measured reason, and says whether fspace's log \
        beat plain appending (an O_APPEND write + fdatasync per commit) in the same runs.\n\n\
        A standard run (four rounds) takes at most about 30 s, --quick (three shorter rounds) about \
        10 s; --full (five rounds) also sweeps record sizes from 512 B to 1 MiB. It needs about 400 \
        MiB free (at least 176 MiB, 192 MiB for --full: the growth measurement is scaled down to \
        fit).\n\n\
        --save keeps the result for this filesystem (keyed by mount type, source, mount point and fsid)\n\
        in $FSPACE_STATE_DIR, $XDG_STATE_HOME/fspace or ~/.local/state/fspace; `fspace grow --strategy auto`,\n\
        `fspace info` and the library's auto policy then follow it there and say so.\n\n\
        Examples:\n  fspace probe\n  fspace probe --quick /var/lib/db\n  \
        fspace probe --save --report probe.html /srv/kafka\n  fspace probe --json . > probe.json"
    )]
    Probe(ProbeArgs),
    /// Show the filesystem under PATH: kind, capabilities, the auto policy.
    Info(InfoArgs),
    /// Grow FILE to SIZE bytes with the right strategy for its filesystem.
    #[command(after_help = "Strategies:\n  \
        sparse        ftruncate: the new range is a hole\n  \
        reserve       fallocate KEEP_SIZE: blocks past EOF, length unchanged\n  \
        allocate      fallocate: unwritten blocks (else zero-fill)\n  \
        write-zeroes  fallocate WRITE_ZEROES: written blocks, no data moved\n                \
        (else zero-fill)\n  \
        zero-fill     large pwritev of zeros from the current end of file\n\n\
        auto picks by filesystem and --for: bulk (written once soon), log (small overwrites + fdatasync),\n\
        sparse (may stay empty). Existing bytes are never changed and files never shrink.\n\n\
        After a power cut: with --sync, a grow that returned is on disk (with --create: the file, \
        fully grown, under its name). Without --sync, an existing file may be back at any length \
        between its old one and the new one; a --create'd file may be missing, or present with \
        any length from 0 up (zero-fill: 0 bytes on ext4 and xfs in our power-cut tests, the \
        name reached the disk before the data).\n\n\
        Examples:\n  fspace grow --create --for log --sync wal/000001.seg 16MiB\n  \
        fspace grow --json image.raw 20G")]
    Grow(GrowArgs),
    /// Measure what space preparation is worth on a filesystem.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Copy SRC to DST keeping its holes: clone, kernel copy or sparse write.
    #[command(
        args_override_self = true,
        after_help = "The ladder: FICLONE (shares blocks; same filesystem with reflinks) -> \
        copy_file_range per data extent -> read + sparse write. A rung falls to the next only \
        before anything was copied; the report says which ran and why others did not.\n\n\
        \x20 --sparse auto      keep the source's holes; a source that looks sparse\n                     \
        (fewer blocks than its length, cp's test), a pipe or\n                     \
        a device also has its zero blocks made holes\n\
        \x20 --sparse always    turn every zero block in the data into a hole\n\
        \x20 --sparse never     write holes as zeros: the copy is fully allocated\n\
        \x20 --reflink auto     share blocks when possible and --sparse is auto\n\
        \x20 --reflink always   share blocks or fail\n\
        \x20 --reflink never    every block of the copy is its own\n\
        \x20 --keep-allocation  fallocated, never-written space stays reserved\n                     \
        (default: it becomes holes, as with cp)\n\n\
        DST may be a pipe, FIFO or character device (written in order, holes as zeros) or, with \
        --force, a block device: only the data is written, zero ranges are zeroed with BLKZEROOUT \
        (write-zeroes or unmap where the device has them) or skipped with --target-is-zero. SRC \
        may be a pipe, FIFO or block device (read to its end; zero blocks become holes).\n\n\
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
    Copy(CopyArgs),
    /// Punch holes over FILE's zero blocks in place; its bytes do not change.
    #[command(
        after_help = "Only ranges that hold data are read; zero runs of at least one \
        filesystem block, aligned to blocks, are punched (fallocate PUNCH_HOLE|KEEP_SIZE). \
        Do not dig a file another process is writing.\n\n\
        Examples:\n  fspace dig vm.img\n  fspace dig --json --sync backup.tar"
    )]
    Dig(DigArgs),
    /// Show FILE's extents: holes, unwritten, written, shared, delayed.
    Map(MapArgs),
    /// Look into a log made by the library's Wal (read-only).
    #[command(
        after_help = "Read-only: nothing in DIR is created, changed or removed and the log's \
        LOCK is not taken, so a live log can be looked at while its writer runs (records it \
        wrote but has not synced yet may show), on a read-only mount too. Every live segment is \
        read and each record's CRC checked before anything is printed. stat refuses a damaged \
        log; verify and dump read it up to the first damage: dump prints every record before \
        it, then fails naming it.\n\n\
        Exit status: 0 the log is intact (a torn tail after a crash is normal: the log ends \
        before it), 1 damage before the log's end (the message names the segment file, the \
        offset where the invalid record starts, the LSN expected there and the reason; a CRC \
        cannot say which byte of a record is bad) or another failure, 2 usage error, 3 \
        `verify --strict` on a log that ends in a record failing its checksum (see \
        `fspace wal verify --help`).\n\n\
        Examples:\n  fspace wal stat db/wal\n  fspace wal verify --json db/wal\n  \
        fspace wal dump --from 1000 --limit 10 db/wal\n  fspace wal dump --json db/wal | jq .len"
    )]
    Wal(WalArgs),
    /// Record a storage program's file operations, then check every crash state they allow.
    #[command(
        after_help = "record runs PROGRAM with a recording preload (LD_PRELOAD) and writes to TRACE \
        the initial state of DIR and every file operation under it, with what the program wrote to \
        stdout, pipes and sockets (its acknowledgements). No root, FUSE or device mapper is needed.\n\n\
        check builds the states a power cut may leave (after each durability call and \
        acknowledgement, under the posix, ext4, xfs and btrfs models) and runs CHECKER in each: \
        its working directory is the state ($FSPACE_CRASH_STATE), $FSPACE_CRASH_ACKS names a file \
        holding what the program had written to stdout by then, and exit status 0 accepts the state, \
        3 (--loss-status) says it is consistent but lacks acknowledged data (a durability loss), \
        anything else that it is inconsistent (corruption).\n\n\
        lint checks one trace against static rules (a new name without a directory fsync, a rename \
        of unsynced data, an acknowledgement before its fsync, ...), no states needed.\n\n\
        Exit status of check and lint: 0 nothing found, 1 found, 2 could not run. record exits \
        with the program's status (2 when it could not record).\n\n\
        Examples:\n  fspace crashtest record --root db --trace kv.trace -- python3 kv.py put k v\n  \
        fspace crashtest lint kv.trace\n  fspace crashtest check kv.trace -- python3 \"$PWD/check_kv.py\"\n  \
        fspace crashtest check --model ext4 --keep --json kv.trace -- ./check.sh"
    )]
    Crashtest(CrashtestArgs),
    /// Write the man pages or a shell's completion script (for packagers).
    #[command(
        after_help = "Both are made from the same definition the command line is parsed \
        with, so they name every subcommand and option of this build.\n\n\
        Examples:\n  fspace generate man /usr/share/man/man1\n  \
        fspace generate man | man -l -\n  \
        fspace generate complete bash > /usr/share/bash-completion/completions/fspace\n  \
        fspace generate complete zsh > /usr/share/zsh/vendor-completions/_fspace\n  \
        fspace generate complete fish > /usr/share/fish/vendor_completions.d/fspace.fish"
    )]
    Generate {
        #[command(subcommand)]
        what: GenerateCommand,
    },
}

#[derive(Subcommand)]
pub(crate) enum GenerateCommand {
    /// Man pages: fspace.1 and one page per subcommand (fspace-probe.1, ...).
    #[command(
        after_help = "With DIR, every page is written into DIR (created if missing) and \
        each file's path printed; without it, fspace.1 is printed to stdout."
    )]
    Man {
        /// Directory to write the pages into.
        dir: Option<PathBuf>,
    },
    /// A completion script for SHELL, printed to stdout.
    Complete {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

/// Arguments of `fspace wal`.
#[derive(Args)]
pub(crate) struct WalArgs {
    #[command(subcommand)]
    pub command: WalCommand,
}

#[derive(Subcommand)]
pub(crate) enum WalCommand {
    /// Segments, LSN range, allocation, where the log ends, pool, leftovers.
    Stat(WalDirArgs),
    /// Read every record and check its CRC; exit 1 at damage before the end.
    #[command(
        after_help = "Exit status: 0 every record verified and the log ends where nothing \
        was written (zeros, unwritten space, the end of a segment), or, without --strict, \
        in bytes that are not a valid record (said in a warning); 1 damage before the log's \
        end (a later segment is live, so records after it are lost; the message and the \
        JSON error's \"damage\" object name the segment file, the offset where the invalid \
        record starts, its extent when its length is plausible, the LSN expected there and \
        the reason), or another failure; 2 usage error; 3 with --strict, the log ends in \
        bytes that claim to be the next record but are not valid (a record with the \
        expected LSN that fails its checksum or has a bad length, a valid record with a \
        wrong LSN) or in a segment file cut short.\n\n\
        A log that ends in a record with the expected LSN failing its checksum is either a \
        torn last write (a commit that never returned: harmless) or an acknowledged record \
        damaged later (data lost); verify cannot tell which, and a writable open ends the \
        log before it either way. Bytes with another LSN there (a recycled segment's \
        earlier contents) are a clean end. A CRC says that a record is wrong, not which of its bytes.\n\n\
        Examples:\n  fspace wal verify db/wal\n  fspace wal verify --strict --json db/wal"
    )]
    Verify(WalVerifyArgs),
    /// Print the records (LSN, segment, offset, length, payload in hex).
    Dump(WalDumpArgs),
}

/// A log directory, and `--json`.
#[derive(Args)]
pub(crate) struct WalDirArgs {
    /// The log's directory.
    pub dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace wal verify`.
#[derive(Args)]
pub(crate) struct WalVerifyArgs {
    /// The log's directory.
    pub dir: PathBuf,
    /// Exit 3 when the log ends in bytes that are not a valid record (a
    /// torn last write or damage: it cannot tell), not only on damage
    /// before the end.
    #[arg(long)]
    pub strict: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace wal dump`.
#[derive(Args)]
pub(crate) struct WalDumpArgs {
    /// The log's directory.
    pub dir: PathBuf,
    /// First LSN to print (default: the oldest kept).
    #[arg(long, value_name = "LSN", value_parser = whole_arg)]
    pub from: Option<u64>,
    /// Print at most this many records.
    #[arg(long, value_name = "COUNT", value_parser = whole_arg)]
    pub limit: Option<u64>,
    /// One JSON object per line: lsn, segment, offset, len, data (the whole payload in hex).
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub(crate) enum BenchCommand {
    /// Commit records durably into space in each state, and through the log.
    #[command(
        after_help = "Modes: the space states the probe reports (all by default, in this order):\n  \
        appended      O_APPEND write + sync: every commit allocates (the baseline)\n  \
        sparse        overwrite of an ftruncated file (holes)\n  \
        allocated     overwrite of a fallocated file (unwritten extents)\n  \
        write-zeroed  overwrite of a file grown with FALLOC_FL_WRITE_ZEROES\n                \
        (where the device supports it)\n  \
        zero-filled   overwrite of a file zero-filled right before the run\n  \
        recycled      overwrite of a file written and synced beforehand\n                \
        (the ceiling, as pg_test_fsync measures it)\n  \
        wal           fspace's segment log: prepared or recycled segments,\n                \
        group commit\n\n\
        (The older names append, allocate, write-zeroes, zero-fill-now and overwrite \
        are accepted.)\n\n\
        Sync methods: the file modes commit with fdatasync unless --sync-method names \
        others; the log uses its own choice (direct-dsync on ext4 and xfs, fdatasync \
        elsewhere, or what a saved probe chose). Each row's \"durable by\" column \
        names the method its commits used (+O_DIRECT where on); the log's choice is \
        explained under the table. The ratio columns divide rates as they ran, each \
        row with the method in its line.\n\n\
        Scratch files are made inside DIR and removed afterwards.\n\n\
        Examples:\n  fspace bench commit /var/lib/db\n  \
        fspace bench commit --mode wal,appended --writers 16 --seconds 10 .\n  \
        fspace bench commit --mode wal,appended,recycled --writers 1,2,4,8,16,64 .\n  \
        fspace bench commit --mode recycled,wal --sync-method all /var/lib/db\n  \
        fspace bench commit --record 1MiB --mode wal,appended --json /mnt/data"
    )]
    Commit(CommitArgs),
}

/// A parser that also names the values it takes, for the shell
/// completions and man pages (`fspace generate`): `inner` still parses, with
/// its own messages and aliases; `names` are what is offered.
#[derive(Clone)]
pub(crate) struct Named<P> {
    inner: P,
    names: Vec<&'static str>,
}

impl<P> Named<P> {
    fn new(inner: P, names: impl IntoIterator<Item = &'static str>) -> Self {
        Named {
            inner,
            names: names.into_iter().collect(),
        }
    }
}

impl<P: clap::builder::TypedValueParser> clap::builder::TypedValueParser for Named<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.inner.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.names
                .iter()
                .map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

/// A value parser of fixed names: a plain function, with the names offered.
type NamedFn<T> = Named<fn(&str) -> Result<T, String>>;

fn strategies() -> NamedFn<StrategyArg> {
    let names = std::iter::once("auto").chain(Strategy::ALL.map(Strategy::name));
    Named::new(strategy_arg, names)
}

fn intents() -> NamedFn<Intent> {
    Named::new(intent_arg, ["bulk", "log", "sparse"])
}

fn engines() -> NamedFn<fspace::probe::Engine> {
    Named::new(
        engine_arg,
        fspace::probe::Engine::ALL.map(fspace::probe::Engine::name),
    )
}

fn sparse_modes() -> NamedFn<fspace::SparseMode> {
    Named::new(named_arg, ["auto", "always", "never"])
}

fn reflink_modes() -> NamedFn<fspace::ReflinkMode> {
    Named::new(named_arg, ["auto", "always", "never"])
}

fn intent_arg(s: &str) -> Result<Intent, String> {
    named_arg(s)
}

/// A name the library parses; clap prints the error's text.
fn named_arg<T: std::str::FromStr<Err = fspace::ParseError>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: fspace::ParseError| e.to_string())
}

/// Arguments of `fspace probe`.
#[derive(Args)]
pub(crate) struct ProbeArgs {
    /// A directory on the filesystem to measure (default: the current directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// A shorter run (at most about 10 s): three short rounds, smaller files.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// A longer run: five rounds, larger files and a record-size sweep.
    #[arg(long)]
    pub full: bool,
    /// Keep the result so that auto policies follow it on this filesystem
    /// (a recommendation too noisy to decide is left out).
    #[arg(long)]
    pub save: bool,
    /// With --save: keep also the recommendations too noisy to decide
    /// (they repeat the built-in choice).
    #[arg(long, requires = "save")]
    pub force: bool,
    /// Also write a self-contained HTML page with charts to this file.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print JSON (schema fspace-probe/4, docs/probe-json.md).
    #[arg(long)]
    pub json: bool,
    /// Also advise an engine's settings, measured its way: postgresql,
    /// mariadb, rocksdb (repeat, or a comma list). Adds up to 6 s per
    /// engine with --quick, 15 s, or 40 s with --full.
    #[arg(long = "for", value_name = "ENGINE", value_delimiter = ',', value_parser = engines(), hide_possible_values = true)]
    pub engines: Vec<fspace::probe::Engine>,
    /// With --for: write each engine's fragment into this directory
    /// (postgresql.conf.fspace, my.cnf.fspace, rocksdb.options.fspace).
    #[arg(long, value_name = "DIR", requires = "engines")]
    pub write_config: Option<PathBuf>,
    /// Threads that will commit at once: the log's expected rate and its
    /// comparison with appending are measured at N writers (the
    /// concurrency curve, 1 to 64 writers, includes N).
    #[arg(long, value_name = "N", default_value = "1", value_parser = writers_arg, conflicts_with = "compare_saved")]
    pub writers: u32,
    /// Also write the figures for node_exporter's textfile collector
    /// (metrics fspace_probe_*, docs/monitoring.md), replacing FILE
    /// atomically.
    #[arg(long, value_name = "FILE.prom")]
    pub prometheus: Option<PathBuf>,
    /// Measure only the setup saved by --save (fspace's log, 5 runs) and
    /// compare the median with the saved one. Exit status: 0 within the
    /// threshold, 1 regressed (or the run failed), 3 nothing saved here.
    #[arg(
        long,
        conflicts_with_all = ["quick", "full", "save", "report", "engines"]
    )]
    pub compare_saved: bool,
    /// With --compare-saved: how far (percent) the fresh median may fall
    /// below the saved one before it counts as regressed.
    #[arg(
        long,
        value_name = "PCT",
        default_value = "20",
        requires = "compare_saved",
        value_parser = threshold_arg
    )]
    pub threshold: f64,
}

/// Arguments of `fspace info`.
#[derive(Args)]
pub(crate) struct InfoArgs {
    /// A file or directory.
    pub path: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace grow`.
#[derive(Args)]
pub(crate) struct GrowArgs {
    /// The file to grow.
    pub file: PathBuf,
    /// The new length: 4096, 64K, 16MiB, 1.5G, 10MB (K/KiB binary, KB decimal).
    #[arg(value_parser = size_arg, allow_hyphen_values = true)]
    pub size: u64,
    /// How to grow; auto chooses by filesystem and intent.
    #[arg(long, default_value = "auto", value_parser = strategies(), hide_possible_values = true)]
    pub strategy: StrategyArg,
    /// What the space is for (drives auto).
    #[arg(long = "for", default_value = "bulk", value_parser = intents(), hide_possible_values = true)]
    pub intent: Intent,
    /// Create FILE if missing (it appears only once fully grown).
    #[arg(long)]
    pub create: bool,
    /// Make the growth durable (fdatasync; with --create also fsync the file
    /// before its rename and the directory after). See "After a power cut".
    #[arg(long)]
    pub sync: bool,
    /// With an explicit --strategy, fail instead of falling back.
    #[arg(long)]
    pub no_fallback: bool,
    /// Zero-fill even when statfs reports too little free space (writes
    /// until ENOSPC, then rolls back).
    #[arg(long)]
    pub no_space_check: bool,
    /// Make the space ready for untorn page writes of UNIT bytes (16K):
    /// written extents, an extent-size hint of UNIT on XFS, then a check
    /// that every unit lies in one extent with an aligned physical start.
    #[arg(long, value_name = "UNIT", value_parser = unit_arg)]
    pub untorn: Option<u32>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace copy`.
#[derive(Args)]
pub(crate) struct CopyArgs {
    /// The file to copy: a regular file, or a pipe, FIFO or block device
    /// (read to its end).
    pub src: PathBuf,
    /// The copy's name, or an existing directory to copy into.
    pub dst: PathBuf,
    /// What to do with zeros: auto, always, never.
    #[arg(long, default_value = "auto", value_parser = sparse_modes(), hide_possible_values = true)]
    pub sparse: fspace::SparseMode,
    /// Whether the copy may share the source's blocks: auto, always, never.
    #[arg(long, default_value = "auto", value_parser = reflink_modes(), hide_possible_values = true)]
    pub reflink: fspace::ReflinkMode,
    /// Replace DST if it exists (never SRC itself).
    #[arg(long, short)]
    pub force: bool,
    /// SRC's unwritten (fallocated, never written) extents become unwritten
    /// extents of the copy instead of holes. Only with --sparse auto.
    #[arg(long)]
    pub keep_allocation: bool,
    /// DST is a block device that reads zeros everywhere (freshly discarded,
    /// a new thin volume): skip zero ranges instead of zeroing them.
    #[arg(long)]
    pub target_is_zero: bool,
    /// Copy mode, owner (when permitted) and timestamps.
    #[arg(long, short)]
    pub preserve: bool,
    /// Make the copy durable (fsync the file before the rename, the directory
    /// after). See "After a power cut".
    #[arg(long)]
    pub sync: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace dig`.
#[derive(Args)]
pub(crate) struct DigArgs {
    /// The file to dig.
    pub file: PathBuf,
    /// fsync the file at the end.
    #[arg(long)]
    pub sync: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace map`.
#[derive(Args)]
pub(crate) struct MapArgs {
    /// The file to map.
    pub file: PathBuf,
    /// Flush the file's dirty page-cache data first (fsync), so that data
    /// not yet written back shows as the extents it will get.
    #[arg(long)]
    pub sync: bool,
    /// Print only the summary, not every extent (JSON keeps both).
    #[arg(long)]
    pub summary: bool,
    /// Also check each UNIT-aligned unit (16K) for untorn writes' hardware
    /// path: one written extent, a physical start aligned to UNIT.
    #[arg(long, value_name = "UNIT", value_parser = unit_arg)]
    pub untorn: Option<u32>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fspace bench commit`.
#[derive(Args)]
pub(crate) struct CommitArgs {
    /// Directory on the filesystem to measure.
    pub dir: PathBuf,
    /// Bytes per record (at least 1).
    #[arg(long, default_value = "8KiB", value_parser = record_arg)]
    pub record: u64,
    /// Threads committing at once, or a comma list of counts (1,2,4,8,16,64):
    /// every mode runs at each, and a table per mode shows how its rate
    /// follows the writers and where it stops scaling.
    #[arg(long, default_value = "1", value_delimiter = ',', value_parser = writers_arg)]
    pub writers: Vec<u32>,
    /// Seconds per mode.
    #[arg(long, default_value_t = 5.0, value_parser = seconds_arg)]
    pub seconds: f64,
    /// Modes to run, comma-separated or repeated, or all (the default).
    #[arg(long, value_delimiter = ',', value_parser = mode_arg)]
    pub mode: Vec<Option<fspace::bench::SpaceState>>,
    /// File size for the overwrite modes (and the append file's cap).
    #[arg(long, default_value = "256MiB", value_parser = size_arg)]
    pub file_size: u64,
    /// Segment size of the log in wal mode (a multiple of 4 KiB, at least 64 KiB).
    #[arg(long, default_value = "16MiB", value_parser = size_arg)]
    pub segment_size: u64,
    /// How the log prepares new segments in wal mode: auto (the policy for
    /// intent log) or a strategy.
    #[arg(long, default_value = "auto", value_parser = strategies(), hide_possible_values = true)]
    pub prepare: StrategyArg,
    /// O_DIRECT writes: auto (the log's choice in wal mode, on ext4 and xfs
    /// with direct-dsync; file modes only with direct-dsync), on (every
    /// mode, whatever the sync method, as InnoDB's redo log), off.
    #[arg(long, default_value = "auto", value_parser = ["auto", "on", "off"])]
    pub direct_io: String,
    /// Page padding of the log in wal mode: auto (the policy: on for
    /// copy-on-write filesystems), on (every flush ends on a page boundary,
    /// no page written twice), off (the partial last page is rewritten by
    /// the next commit).
    #[arg(long, default_value = "auto", value_parser = ["auto", "on", "off"])]
    pub pad_flushes: String,
    /// NOCOW segments in wal mode, and NOCOW files in the zero-filled and
    /// recycled modes: auto (the policy: on for btrfs), on (chattr +C
    /// while empty, then zero-filled: overwritten in place), off.
    #[arg(long, default_value = "auto", value_parser = ["auto", "on", "off"])]
    pub nocow: String,
    /// How commits are made durable, comma-separated or repeated; each mode
    /// runs once per method: fdatasync, fsync, dsync (pwritev2 RWF_DSYNC),
    /// direct-dsync (O_DIRECT + RWF_DSYNC), or all. Default: fdatasync for
    /// the file modes, the log's own choice for wal.
    #[arg(long, value_delimiter = ',', value_parser = sync_method_arg)]
    pub sync_method: Vec<Vec<fspace::SyncMethod>>,
    /// Keep each run's scratch file, and the log's directory in wal
    /// mode, renamed to fspace-bench-MODE in DIR, and print where (for
    /// fspace wal verify, fspace map); file modes keep up to --file-size each.
    #[arg(long)]
    pub keep: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod named_tests {
    use super::*;
    use clap::builder::TypedValueParser;

    /// Every value offered to the shells parses; a name the parser refuses
    /// would be completed, then rejected.
    fn all_parse<P: TypedValueParser>(p: P, what: &str) {
        let cmd = clap::Command::new("t");
        let names: Vec<String> = p
            .possible_values()
            .expect("named values")
            .map(|v| v.get_name().to_string())
            .collect();
        assert!(names.len() >= 3, "{what}: {names:?}");
        for n in names {
            assert!(
                p.parse_ref(&cmd, None, std::ffi::OsStr::new(&n)).is_ok(),
                "{what}: offered {n:?} does not parse"
            );
        }
    }

    #[test]
    fn offered_values_parse() {
        all_parse(strategies(), "strategy");
        all_parse(intents(), "intent");
        all_parse(engines(), "engine");
        all_parse(sparse_modes(), "sparse");
        all_parse(reflink_modes(), "reflink");
    }
}
