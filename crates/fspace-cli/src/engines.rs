//! `fspace probe --for ENGINE`: each engine's measured cases, the
//! commits/s its log should sustain with the advice, and the advice as
//! the engine's own configuration (written to files with
//! `--write-config`).

use crate::fmt::{format_count as commas, format_human};
use fspace::probe::{AdviceKind, Engine, EngineAdvice, ProbeResult};
use std::path::{Path, PathBuf};

/// The engines' part of the probe's text.
pub(crate) fn text(r: &ProbeResult) -> String {
    let mut o = String::new();
    for a in &r.engines {
        o.push('\n');
        o.push_str(&one(a));
    }
    o
}

fn one(a: &EngineAdvice) -> String {
    let mut o = String::new();
    out!(
        o,
        "For {} ({}): {} records into {} files, {} alternating rounds",
        a.versions,
        a.engine,
        format_human(a.record_size as u64),
        format_human(a.file_size),
        a.rounds
    );
    let w = a.cases.iter().map(|c| c.settings.len()).max().unwrap_or(10);
    out!(
        o,
        "  {:<w$}  {:>10}  {:>13}",
        "measured as",
        "commits/s",
        "rounds"
    );
    for c in &a.cases {
        let f = &c.figures;
        if let Some(why) = &f.unsupported {
            out!(o, "  {:<w$}  not here: {why}", c.settings);
            continue;
        }
        let (lo, hi) = f.range();
        out!(
            o,
            "  {:<w$}  {:>10}  {:>13}",
            c.settings,
            commas(f.commits_per_sec),
            format!("{}-{}", commas(lo), commas(hi))
        );
    }
    match &a.expected {
        Some(e) => out!(
            o,
            "  Expected with the advice: {} commits/s ({}-{}), from {}.",
            commas(e.commits_per_sec),
            commas(e.low),
            commas(e.high),
            e.setup
        ),
        None => out!(
            o,
            "  No expected rate: the case for the advice could not be measured."
        ),
    }
    let changed: Vec<&str> = a
        .settings
        .iter()
        .filter(|s| s.kind == AdviceKind::Change)
        .map(|s| s.name.as_str())
        .collect();
    if changed.is_empty() {
        out!(
            o,
            "  Your defaults are right here: no value measured faster beyond the noise."
        );
    } else {
        out!(o, "  Changed from the defaults: {}.", changed.join(", "));
    }
    let trade: Vec<String> = a
        .settings
        .iter()
        .filter(|s| s.kind == AdviceKind::TradeOff)
        .map(|s| {
            let gain = s
                .gain
                .as_ref()
                .map(|g| format!(" ({:.2}x)", g.ratio))
                .unwrap_or_default();
            format!("{} = {}{gain}", s.name, s.value)
        })
        .collect();
    if !trade.is_empty() {
        out!(
            o,
            "  Trade-offs measured faster, not applied (see their cost below): {}.",
            trade.join(", ")
        );
    }
    for n in &a.notes {
        out!(o, "  note: {n}");
    }
    out!(o, "  {}:", a.engine.config_file());
    for line in a.fragment().lines() {
        out!(o, "    {line}");
    }
    if let Some(flags) = a.db_bench_flags() {
        out!(o, "  {flags}");
    }
    o
}

/// The file `--write-config` writes for `engine`.
fn file_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Postgresql => "postgresql.conf.fspace",
        Engine::Mariadb => "my.cnf.fspace",
        Engine::Rocksdb => "rocksdb.options.fspace",
        _ => "engine.fspace",
    }
}

/// Refuses a `--write-config` directory that is missing or not a
/// directory, before the measurements run.
pub(crate) fn check_dir(dir: &Path) -> fspace::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(fspace::Error::refused(
            "probe --write-config",
            dir,
            rustix::io::Errno::NOTDIR.raw_os_error(),
            "is not a directory",
        )),
        Err(e) => Err(fspace::Error::refused(
            "probe --write-config",
            dir,
            e.raw_os_error()
                .unwrap_or(rustix::io::Errno::NOENT.raw_os_error()),
            format!("cannot be used: {e}"),
        )),
    }
}

/// Writes each engine's fragment into `dir`; returns the files written.
pub(crate) fn write(dir: &Path, r: &ProbeResult) -> fspace::Result<Vec<PathBuf>> {
    let mut written = vec![];
    for a in &r.engines {
        let p = dir.join(file_name(a.engine));
        std::fs::write(&p, a.fragment())
            .map_err(|e| fspace::Error::from_io("write", &p, None, e))?;
        written.push(p);
    }
    Ok(written)
}
