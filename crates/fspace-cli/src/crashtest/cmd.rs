//! `fspace crashtest record|check|lint|show`: glue over
//! [`fspace::crashtest`]; the preload that records is [`super::preload`].

use crate::cli::{
    CrashtestArgs, CrashtestCheckArgs, CrashtestCommand, CrashtestLintArgs, CrashtestRecordArgs,
    CrashtestShowArgs,
};
use crate::errors::set_exit_status;
use crate::output::{emit, print_json, Progress};

/// Appends one line, wrapped to 80 columns under its own indentation.
macro_rules! line {
    ($o:expr, $($t:tt)*) => {
        wrapped(&mut $o, &format!($($t)*))
    };
}

fn wrapped(o: &mut String, text: &str) {
    let indent = text.len() - text.trim_start().len();
    // A checker's output (`| ...`) keeps its bar on every wrapped line.
    let head = if text[indent..].starts_with("| ") {
        indent + 2
    } else {
        indent
    };
    let rest = &text[head..];
    let mut block = String::new();
    crate::fmt::labelled(&mut block, &" ".repeat(head), rest);
    for l in block.lines() {
        if head > indent {
            o.push_str(&text[..head]);
            o.push_str(l.get(head..).unwrap_or(""));
        } else {
            o.push_str(l);
        }
        o.push('\n');
    }
}

use fspace::crashtest::{self, CheckOptions, CheckReport, FailureKind, OpKind, Trace};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `check` and `lint` exit 2 when they could not run, 1 when they found
/// something, 0 when they did not.
const EXIT_COULD_NOT_RUN: u8 = 2;
const EXIT_FOUND: u8 = 1;

/// `fspace crashtest ...`.
pub(crate) fn run(a: CrashtestArgs) -> fspace::Result<()> {
    // Any error from here on means "could not run".
    set_exit_status(EXIT_COULD_NOT_RUN);
    match a.command {
        CrashtestCommand::Record(a) => record(a),
        CrashtestCommand::Check(a) => check(a),
        CrashtestCommand::Lint(a) => lint(a),
        CrashtestCommand::Show(a) => show(a),
    }
}

/// What keeps LD_PRELOAD from recording a program: none, or why.
fn unrecordable(program: &Path) -> Option<String> {
    let bytes = std::fs::read(program).ok()?;
    if bytes.starts_with(b"#!") || !bytes.starts_with(b"\x7fELF") {
        return None; // a script: its interpreter is what runs
    }
    // On x86_64 the preload catches system calls made past the C library
    // (Syscall User Dispatch), unless told not to.
    let dispatch = cfg!(target_arch = "x86_64")
        && std::env::var_os("FSPACE_CRASHTEST_NO_DISPATCH")
            .is_none_or(|v| v.is_empty() || v == "0");
    if !dispatch && bytes.windows(14).any(|w| w == b"\xff Go buildinf:") {
        return Some("it is a Go program: Go makes its system calls itself, past the C library, so LD_PRELOAD sees none of them".into());
    }
    // 64-bit little-endian ELF: look for PT_INTERP among the program headers.
    if bytes.len() < 64 || bytes[4] != 2 || bytes[5] != 1 {
        return None;
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let mut off = [0u8; 8];
    off.copy_from_slice(&bytes[32..40]);
    let phoff = u64::from_le_bytes(off) as usize;
    let (phentsize, phnum) = (u16_at(54), u16_at(56));
    let has_interp = (0..phnum).any(|i| {
        let o = phoff + i * phentsize;
        o + 4 <= bytes.len()
            && u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) == 3
    });
    (!has_interp).then(|| {
        "it is statically linked: no dynamic loader runs, so LD_PRELOAD loads nothing into it"
            .into()
    })
}

fn find_in_path(program: &OsString) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(p))
            .find(|c| std::fs::metadata(c).is_ok_and(|m| m.is_file()))
    })
}

const RECORD: &str = "crashtest record";

/// The program to record, as given and as found: refuses none, one not in
/// PATH, and one LD_PRELOAD cannot record.
fn program_to_record(a: &CrashtestRecordArgs) -> fspace::Result<(&OsString, PathBuf)> {
    let Some(program) = a.program.first() else {
        return Err(fspace::Error::refused(
            RECORD,
            &a.root,
            22,
            "no program given after --",
        ));
    };
    let Some(path) = find_in_path(program) else {
        return Err(fspace::Error::refused(
            RECORD,
            Path::new(program),
            2,
            "no such program (not found in PATH)",
        ));
    };
    if let Some(why) = unrecordable(&path) {
        return Err(fspace::Error::refused(
            RECORD,
            &path,
            95,
            format!("cannot record {}: {why}; nothing was recorded (docs/crashtest.md \"What it cannot record\")", path.display()),
        ));
    }
    Ok((program, path))
}

/// Whether the devices under the root cache writes volatilely: none when
/// no device says.
fn volatile_cache(info: &fspace::FsInfo) -> Option<bool> {
    info.block_devices.as_ref().ok().and_then(|devs| {
        let caches: Vec<&str> = devs
            .iter()
            .filter_map(|d| d.write_cache.as_deref())
            .collect();
        if caches.is_empty() {
            None
        } else {
            Some(caches.iter().any(|c| c.contains("back")))
        }
    })
}

/// Runs the program with the recording preload loaded into it, and removes
/// the preload again whatever happened.
fn run_recorded(
    a: &CrashtestRecordArgs,
    program: &OsString,
    rec: &crashtest::Recording,
) -> fspace::Result<std::process::ExitStatus> {
    let preload_dir = rec.dir.join(".preload");
    std::fs::create_dir_all(&preload_dir)
        .map_err(|e| fspace::Error::from_io(RECORD, &preload_dir, None, e))?;
    let so = super::preload::write_preload(&preload_dir)
        .map_err(|e| fspace::Error::from_io(RECORD, &preload_dir, None, e))?;
    let mut ld = OsString::from(&so);
    if let Some(old) = std::env::var_os("LD_PRELOAD") {
        ld.push(" ");
        ld.push(old);
    }
    let status = std::process::Command::new(program)
        .args(&a.program[1..])
        .env("LD_PRELOAD", ld)
        .env("FSPACE_CRASHTEST_ROOT", &rec.manifest.root)
        .env("FSPACE_CRASHTEST_OPS", &rec.ops)
        .status()
        .map_err(|e| {
            fspace::Error::from_io(
                "crashtest record: start the program",
                Path::new(program),
                None,
                e,
            )
        });
    let _ = std::fs::remove_dir_all(&preload_dir);
    status
}

/// The summary `record` prints on stderr.
fn record_summary(trace: &Trace, trace_dir: &Path, status: std::process::ExitStatus) {
    use std::os::unix::process::ExitStatusExt;
    let mut o = String::new();
    line!(
        o,
        "fspace crashtest record: {} operations under {} by {} process{}, in {}",
        trace.ops.len(),
        trace.manifest.root.display(),
        trace.processes.len(),
        if trace.processes.len() == 1 { "" } else { "es" },
        trace_dir.display()
    );
    line!(
        o,
        "  the program {}",
        match (status.code(), status.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (_, Some(s)) => format!("was killed by signal {s}"),
            _ => "ended".into(),
        }
    );
    limits_text(&mut o, trace);
    eprint!("{o}");
}

fn record(a: CrashtestRecordArgs) -> fspace::Result<()> {
    let (program, path) = program_to_record(&a)?;
    let info = fspace::fs_info(&a.root)?.with_block_devices();
    let volatile = volatile_cache(&info);
    let rec = crashtest::begin(
        &a.root,
        &a.trace,
        a.program
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
        info.display_name(),
        volatile,
    )?;
    let mut rec = rec;
    rec.manifest.fallocate = info.caps().map(|c| c.fallocate.supported);
    let status = run_recorded(&a, program, &rec)?;
    use std::os::unix::process::ExitStatusExt;
    let trace_dir = rec.dir.clone();
    rec.finish(status.code(), status.signal())?;
    let trace = Trace::load(&trace_dir)?;
    if trace.processes.is_empty() {
        return Err(fspace::Error::refused(
            RECORD,
            &path,
            95,
            "the recording preload never started in the program (a setuid program, or one that clears LD_PRELOAD?): nothing was recorded",
        ));
    }
    if !a.quiet {
        record_summary(&trace, &trace_dir, status);
    }
    // The program's own status, as `time` and `strace` pass it on.
    set_exit_status(match (status.code(), status.signal()) {
        (Some(c), _) => c.clamp(0, 255) as u8,
        (_, Some(s)) => (128 + s).clamp(0, 255) as u8,
        _ => 1,
    });
    Ok(())
}

fn limits_text(o: &mut String, trace: &Trace) {
    let limits = trace.limits();
    if limits.is_empty() {
        return;
    }
    line!(
        *o,
        "  LIMITS: {} {} the recorder could not follow (what {} wrote is in no state):",
        limits.len(),
        plural(limits.len(), "operation", "operations"),
        plural(limits.len(), "it", "they")
    );
    let described = crashtest::describe_ops(trace);
    for op in limits.iter().take(5) {
        line!(*o, "    {}", described[op.number - 1]);
    }
    if limits.len() > 5 {
        line!(
            *o,
            "    ... and {} more (fspace crashtest show)",
            limits.len() - 5
        );
    }
}

/// The options `check` runs with: the defaults, changed by the command line.
fn check_options(a: &CrashtestCheckArgs) -> CheckOptions {
    let mut opts = CheckOptions::default();
    if !a.model.is_empty() {
        opts.models.clone_from(&a.model);
    }
    if let Some(n) = a.states_per_point {
        opts.per_point = n;
    }
    if let Some(n) = a.between {
        opts.between = n;
    }
    if let Some(n) = a.jobs {
        opts.jobs = n.max(1);
    }
    if let Some(t) = a.timeout {
        opts.timeout = std::time::Duration::from_secs_f64(t);
    }
    opts.keep = a.keep;
    opts.cancel = Some(crate::output::cancel_on_signals());
    opts.loss_status = Some(a.loss_status);
    opts.work_dir.clone_from(&a.work_dir);
    opts
}

/// `check`'s report in words.
fn check_text(
    a: &CrashtestCheckArgs,
    trace: &Trace,
    report: &CheckReport,
    opts: &CheckOptions,
) -> fspace::Result<()> {
    let mut o = String::new();
    line!(
        o,
        "fspace crashtest check: {} ({}; {} operations)",
        a.trace.display(),
        trace.manifest.program.join(" "),
        trace.ops.len()
    );
    line!(
        o,
        "  models {}: {} crash points, {} states built, {} distinct, checked in {:.1} s ({:.0} ms per state, {} at a time)",
        report.models.iter().map(|m| m.name()).collect::<Vec<_>>().join(", "),
        report.points,
        report.states,
        report.distinct,
        report.seconds,
        report.ms_per_state,
        opts.jobs
    );
    limits_text(&mut o, trace);
    if report.passed() {
        line!(
            o,
            "NOT FOUND: the checker accepted every one of the {} distinct crash states.",
            report.distinct
        );
    } else {
        line!(
            o,
            "FOUND: {} of {} states fail the checker ({} distinct): {} inconsistent (corruption), {} consistent but missing acknowledged data (exit status {}: a durability loss).",
            report.failed_states,
            report.states,
            report.failed_distinct,
            report.inconsistent_states,
            report.lost_states,
            a.loss_status
        );
        // The smallest story of each kind found.
        let mut shown: Vec<FailureKind> = Vec::new();
        for f in &report.failures {
            if shown.contains(&f.kind) {
                continue;
            }
            shown.push(f.kind);
            line!(o, "The smallest story ({}):", f.kind.name());
            for l in f.story(trace) {
                line!(o, "  {l}");
            }
            if let Some(d) = &f.state_dir {
                line!(o, "  the state: {}", d.display());
            }
        }
        if report.failed_distinct > shown.len() {
            line!(
                o,
                "({} more distinct {}: --json lists {}{})",
                report.failed_distinct - shown.len(),
                plural(report.failed_distinct - shown.len(), "failure", "failures"),
                match report.failures.len() - shown.len() {
                    0 => "none of them".to_string(),
                    1 => "1 of them".to_string(),
                    n => format!("{n} of them"),
                },
                if a.keep {
                    ""
                } else {
                    "; --keep leaves their states"
                }
            );
        }
    }
    emit(&o)
}

fn check(a: CrashtestCheckArgs) -> fspace::Result<()> {
    let trace = Trace::load(&a.trace)?;
    let opts = check_options(&a);
    let progress = std::sync::Mutex::new(Progress::steps("states", a.quiet || a.json));
    let report = crashtest::check(&trace, &a.checker, &opts, &|done, total| {
        if let Ok(p) = progress.lock() {
            p.step(done + 1, total, "");
        }
    })?;
    if let Ok(p) = progress.lock() {
        p.clear();
    }
    set_exit_status(if report.passed() { 0 } else { EXIT_FOUND });
    if a.json {
        return print_json(&report.document(&a.trace, &trace));
    }
    check_text(&a, &trace, &report, &opts)
}

fn lint(a: CrashtestLintArgs) -> fspace::Result<()> {
    let trace = Trace::load(&a.trace)?;
    let findings = crashtest::lint(&trace);
    set_exit_status(if findings.is_empty() { 0 } else { EXIT_FOUND });
    if a.json {
        return print_json(&crashtest::lint_document(&a.trace, &trace, &findings));
    }
    let mut o = String::new();
    line!(
        o,
        "fspace crashtest lint: {} ({} operations)",
        a.trace.display(),
        trace.ops.len()
    );
    limits_text(&mut o, &trace);
    if findings.is_empty() {
        line!(
            o,
            "no rule broken (lint sees one run; `fspace crashtest check` tries the crash states)"
        );
    }
    for f in &findings {
        line!(
            o,
            "{} (ops {}):",
            f.rule.name(),
            f.ops
                .iter()
                .map(|n| format!("#{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        crate::fmt::labelled(&mut o, "  ", &f.text);
        crate::fmt::labelled(&mut o, "  source: ", f.rule.source());
    }
    emit(&o)
}

fn show(a: CrashtestShowArgs) -> fspace::Result<()> {
    let trace = Trace::load(&a.trace)?;
    set_exit_status(0);
    if a.json {
        #[derive(Serialize)]
        struct Json<'a> {
            manifest: &'a crashtest::Manifest,
            ops: &'a [crashtest::Op],
        }
        return print_json(&Json {
            manifest: &trace.manifest,
            ops: &trace.ops,
        });
    }
    let described = crashtest::describe_ops(&trace);
    let mut o = String::new();
    line!(
        o,
        "{}: {} under {} ({}), {} {} at the start, {} {}",
        a.trace.display(),
        trace.manifest.program.join(" "),
        trace.manifest.root.display(),
        trace.manifest.filesystem,
        trace.manifest.initial.len(),
        plural(trace.manifest.initial.len(), "entry", "entries"),
        trace.ops.len(),
        plural(trace.ops.len(), "operation", "operations")
    );
    for op in &trace.ops {
        if !a.all
            && matches!(
                op.kind,
                OpKind::Close { .. } | OpKind::Open { created: false, .. }
            )
        {
            continue;
        }
        line!(o, "  {}", described[op.number - 1]);
    }
    emit(&o)
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}
