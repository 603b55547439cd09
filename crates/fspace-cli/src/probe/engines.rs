//! `fspace probe --for ENGINE`: each engine's measured cases, the
//! commits/s its log should sustain with the advice, and the advice as
//! the engine's own configuration (written to files with
//! `--write-config`).

use crate::fmt::{format_count as commas, format_human, hanging, within, wrap, COLUMNS};
use fspace::probe::{AdviceKind, Engine, EngineAdvice, ProbeResult};
use std::path::{Path, PathBuf};

/// The engines' part of the probe's text.
pub(super) fn text(r: &ProbeResult) -> String {
    let mut o = String::new();
    for a in &r.engines {
        o.push('\n');
        o.push_str(&one(a, &r.directory));
    }
    o
}

/// The columns before a case's settings in the table of cases: the
/// figures first, so that the settings, as long as they are, wrap in the
/// room left of 80 columns.
const FIGURES: usize = 2 + 9 + 2 + 15 + 2;

/// One engine's advice: the cases measured, what the advice brings, and
/// the advice as the engine's configuration.
fn one(a: &EngineAdvice, dir: &Path) -> String {
    let mut o = String::new();
    cases(&mut o, a, dir);
    advice(&mut o, a, dir);
    out!(o, "  {}:", a.engine.config_file());
    for line in fragment(a, dir, 4).lines() {
        out!(o, "    {line}");
    }
    if let Some(flags) = a.db_bench_flags() {
        para(&mut o, &flags);
    }
    o
}

/// The heading and the table of cases: each case's figures, then its
/// settings (or why it could not be measured here).
fn cases(o: &mut String, a: &EngineAdvice, dir: &Path) {
    hanging(
        o,
        "",
        2,
        &format!(
            "For {} ({}): {} records into {} files, {} alternating rounds",
            a.versions,
            a.engine,
            format_human(a.record_size as u64),
            format_human(a.file_size),
            a.rounds
        ),
    );
    out!(o, "  {:>9}  {:>15}  measured as", "commits/s", "rounds");
    let blank = " ".repeat(FIGURES);
    for c in &a.cases {
        let f = &c.figures;
        if let Some(why) = &f.unsupported {
            hanging(
                o,
                &format!("  {:>9}  {:>15}  ", "-", "-"),
                FIGURES,
                &c.settings,
            );
            hanging(
                o,
                &blank,
                FIGURES,
                &format!("not here: {}", within(&why.text, dir)),
            );
            continue;
        }
        let (lo, hi) = f.range();
        hanging(
            o,
            &format!(
                "  {:>9}  {:>15}  ",
                commas(f.commits_per_sec),
                format!("{}-{}", commas(lo), commas(hi))
            ),
            FIGURES,
            &c.settings,
        );
    }
}

/// What the advice brings: the rate expected with it, the settings it
/// changes from the defaults, the trade-offs it leaves out, and the notes.
fn advice(o: &mut String, a: &EngineAdvice, dir: &Path) {
    match &a.expected {
        Some(e) => para(
            o,
            &format!(
                "Expected with the advice: {} commits/s ({}-{}), from {}.",
                commas(e.commits_per_sec),
                commas(e.low),
                commas(e.high),
                e.setup
            ),
        ),
        None => para(
            o,
            "No expected rate: the case for the advice could not be measured.",
        ),
    }
    let changed: Vec<&str> = a
        .settings
        .iter()
        .filter(|s| s.kind == AdviceKind::Change)
        .map(|s| s.name.as_str())
        .collect();
    if changed.is_empty() {
        para(
            o,
            "Your defaults are right here: no value measured faster beyond the noise.",
        );
    } else {
        para(
            o,
            &format!("Changed from the defaults: {}.", changed.join(", ")),
        );
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
        para(
            o,
            &format!(
                "Trade-offs measured faster, not applied (see their cost below): {}.",
                trade.join(", ")
            ),
        );
    }
    for n in &a.notes {
        para(o, &format!("note: {}", within(&n.to_string(), dir)));
    }
}

/// A paragraph: the later lines of a sentence under its first.
fn para(o: &mut String, text: &str) {
    hanging(o, "  ", 4, text);
}

/// The engine's fragment as the text shows it, indented by `indent`
/// columns: scratch files named within the probed directory `dir`, and a
/// comment line still too wide for 80 columns (one holding a long path)
/// wrapped onto more comment lines, so that the engine reads the same
/// settings. (`--write-config` writes the fragment the JSON holds.)
fn fragment(a: &EngineAdvice, dir: &Path, indent: usize) -> String {
    let mut o = String::new();
    for line in within(&a.fragment(), dir).lines() {
        let text = line.trim_start();
        let lead = &line[..line.len() - text.len()];
        match text.strip_prefix("# ") {
            Some(comment) if indent + line.chars().count() > COLUMNS => {
                let head = format!("{lead}# ");
                let width = COLUMNS - indent - head.chars().count();
                for l in wrap(comment, width) {
                    out!(o, "{head}{l}");
                }
            }
            _ => out!(o, "{line}"),
        }
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
pub(super) fn check_dir(dir: &Path) -> fspace::Result<()> {
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

/// Writes each engine's fragment into `dir`, each replacing any earlier
/// one whole (a server that reads its configuration meanwhile, or after a
/// power cut, finds the old fragment or the new one: [`fspace::replace_file`]);
/// returns the files written.
pub(super) fn write(dir: &Path, r: &ProbeResult) -> fspace::Result<Vec<PathBuf>> {
    let mut written = vec![];
    for a in &r.engines {
        let p = dir.join(file_name(a.engine));
        fspace::replace_file(&p, a.fragment().as_bytes(), 0o644)?;
        written.push(p);
    }
    Ok(written)
}
