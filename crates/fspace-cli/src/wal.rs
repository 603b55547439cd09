//! `fspace wal stat|verify|dump DIR`: looking into a log read-only
//! ([`fspace::wal::WalView`]): nothing in the directory changes, and a live
//! log can be looked at while its writer runs.

use crate::cli::{WalArgs, WalCommand, WalDumpArgs, WalVerifyArgs};
use crate::errors::{add_error_detail, set_exit_status, EXIT_UNCLEAN_END};
use crate::fmt::{format_human, labelled, COLUMNS};
use crate::output::{emit, print_json, ser_path};
use fspace::wal::{RecoveryReport, SegmentInfo, StopReason, TailReport, WalDamage, WalView};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `fspace wal ...`.
pub(crate) fn run(a: WalArgs) -> fspace::Result<()> {
    match a.command {
        WalCommand::Stat(a) => stat(&a.dir, a.json),
        WalCommand::Verify(a) => verify(a),
        WalCommand::Dump(a) => dump(a),
    }
}

/// One segment as `stat` shows it.
#[derive(Serialize)]
struct Segment {
    seq: u64,
    path: PathBuf,
    first_lsn: u64,
    size: u64,
    /// The on-disk format its header and records are in (docs/wal-format.md).
    format: u32,
    /// Allocation from the extent map (`None` where it cannot be known).
    allocated: Option<u64>,
    written: Option<u64>,
    unwritten: Option<u64>,
    holes: Option<u64>,
    /// How the map was read (fiemap, or seek where FIEMAP is missing).
    map: Option<fspace::MapMethod>,
}

#[derive(Serialize)]
struct Stat<'a> {
    #[serde(serialize_with = "ser_path")]
    dir: &'a Path,
    log_id: String,
    first_lsn: u64,
    next_lsn: u64,
    records: u64,
    segments: Vec<Segment>,
    prepared: &'a [PathBuf],
    recycle_pool: &'a [PathBuf],
    recovery: &'a RecoveryReport,
}

fn segment(s: &SegmentInfo) -> Segment {
    let m = fspace::map_file(&s.path, fspace::MapOptions::default()).ok();
    let sum = m.as_ref().map(|m| &m.summary);
    Segment {
        seq: s.seq,
        path: s.path.clone(),
        first_lsn: s.first_lsn.0,
        size: s.size,
        format: s.format,
        allocated: sum.and_then(|x| x.allocated),
        written: sum.and_then(|x| x.written),
        unwritten: sum.and_then(|x| x.unwritten),
        holes: sum.and_then(|x| x.holes),
        map: m.map(|m| m.method),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `fspace wal stat`: segments, LSN range, allocation per segment, what a
/// writable open would find.
fn stat(dir: &Path, json: bool) -> fspace::Result<()> {
    let v = WalView::open(dir)?;
    let r = v.recovery();
    let st = Stat {
        dir,
        log_id: hex(&v.log_id()),
        first_lsn: v.first_lsn().0,
        next_lsn: v.next_lsn().0,
        records: r.records,
        segments: v.segments().iter().map(segment).collect(),
        prepared: v.prepared(),
        recycle_pool: v.pool(),
        recovery: r,
    };
    if json {
        return print_json(&st);
    }
    emit(&stat_text(&st))
}

/// The formats of the live segments in words: "2" when all are the
/// current one, else each format with the segments in it.
fn formats_text(segs: &[Segment]) -> String {
    let mut by: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
    for s in segs {
        by.entry(s.format).or_default().push(s.seq);
    }
    let current = fspace::wal::FORMAT_VERSION;
    if by.len() == 1 && by.contains_key(&current) {
        return format!("version {current} (docs/wal-format.md)");
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(f, seqs)| {
            let first = seqs.first().copied().unwrap_or(0);
            let last = seqs.last().copied().unwrap_or(0);
            if first == last {
                format!("version {f} in segment {first}")
            } else {
                format!("version {f} in segments {first}-{last}")
            }
        })
        .collect();
    format!(
        "{}; this build writes version {current}, reads 1 and {current}",
        parts.join(", ")
    )
}

fn opt(v: Option<u64>) -> String {
    v.map_or("unknown".into(), format_human)
}

fn stat_text(st: &Stat<'_>) -> String {
    let mut o = String::new();
    labelled(
        &mut o,
        "log:        ",
        &format!("{} (id {})", st.dir.display(), st.log_id),
    );
    out!(
        o,
        "records:    {} readable, LSN {} to {} (next {})",
        st.records,
        st.first_lsn,
        st.next_lsn.saturating_sub(1),
        st.next_lsn
    );
    out!(o, "segments:   {} live", st.segments.len());
    out!(o, "format:     {}", formats_text(&st.segments));
    // The file by its name in the log's directory (named above), so that
    // a row fits 80 columns.
    out!(
        o,
        "  {:>5} {:>10} {:>3} {:>9} {:>9} {:>9} {:>9} FILE",
        "SEQ",
        "FIRST LSN",
        "FMT",
        "SIZE",
        "WRITTEN",
        "UNWRITTEN",
        "HOLES"
    );
    for s in &st.segments {
        out!(
            o,
            "  {:>5} {:>10} {:>3} {:>9} {:>9} {:>9} {:>9} {}",
            s.seq,
            s.first_lsn,
            s.format,
            format_human(s.size),
            opt(s.written),
            opt(s.unwritten),
            opt(s.holes),
            in_log(&s.path, st.dir)
        );
    }
    tail_text(&mut o, st.recovery, st.dir);
    out!(o, "prepared:   {} segment(s) ready", st.prepared.len());
    out!(
        o,
        "pool:       {} released segment(s) kept for recycling",
        st.recycle_pool.len()
    );
    cleanup_text(&mut o, st.recovery, st.dir);
    o
}

/// A file of the log by its name within the log's directory `dir` (the
/// directory the user named), else whole.
fn in_log(path: &Path, dir: &Path) -> String {
    path.strip_prefix(dir)
        .ok()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Where the last segment's records end, and why (files named within
/// the log's directory `dir`).
fn tail_text(o: &mut String, r: &RecoveryReport, dir: &Path) {
    match &r.tail {
        Some(t) => {
            labelled(
                o,
                "end:        ",
                &format!(
                    "{} at offset {}: {}{}",
                    in_log(&t.segment, dir),
                    t.offset,
                    t.stopped_at,
                    if t.discarded_bytes > 0 {
                        format!(
                            " ({} after it would be discarded: a torn write or an older life of the segment)",
                            format_human(t.discarded_bytes)
                        )
                    } else {
                        String::new()
                    }
                ),
            );
        }
        None => out!(o, "end:        the last segment is full"),
    }
}

/// What a writable open would clean up (nothing was changed); files
/// named within the log's directory `dir`.
fn cleanup_text(o: &mut String, r: &RecoveryReport, dir: &Path) {
    let note = |o: &mut String, text: String| labelled(o, "note: ", &text);
    if r.removed_temp_files > 0 {
        note(o, format!("{} temporary file(s) of an unfinished segment creation; the next writable open removes them", r.removed_temp_files));
    }
    for p in &r.removed_files {
        note(
            o,
            format!(
                "{} is not part of the log; the next writable open removes it",
                in_log(p, dir)
            ),
        );
    }
    if let Some(p) = &r.torn_header {
        note(o, format!("{} has a torn header (a cut while it was being started); the log ends before it and the next writable open sets it aside", in_log(p, dir)));
    }
    for p in &r.foreign_files {
        note(
            o,
            format!("{} is not the log's; left alone", in_log(p, dir)),
        );
    }
}

/// The end of the log (the last segment's tail) as JSON: the same fields
/// as a damage's ([`damage_json`]), with `in_last_segment` true.
fn end_json(t: &TailReport) -> serde_json::Value {
    let clean = t.is_clean();
    serde_json::json!({
        "segment": t.segment.to_string_lossy(),
        "seq": t.seq,
        "offset": t.offset,
        "record_end": t.record_end,
        "expected_lsn": t.expected_lsn.0,
        "found_lsn": t.found_lsn.map(|l| l.0),
        "reason": t.reason.name(),
        "in_last_segment": true,
        "clean": clean,
        "discarded_bytes": t.discarded_bytes,
        "later_offset": t.later_record.map(|(o, _)| o),
        "later_lsn": t.later_record.map(|(_, l)| l.0),
        "message": t.stopped_at,
    })
}

/// Damage before the log's end as JSON (the `damage` object of the error).
fn damage_json(d: &WalDamage) -> serde_json::Value {
    serde_json::json!({
        "segment": d.segment.to_string_lossy(),
        "seq": d.seq,
        "offset": d.offset,
        "record_end": d.record_end,
        "expected_lsn": d.expected_lsn.map(|l| l.0),
        "found_lsn": d.found_lsn.map(|l| l.0),
        "reason": d.reason.name(),
        "in_last_segment": false,
        "clean": false,
        "message": d.message,
    })
}

/// The error for damage before the log's end, as `op` reports it: the
/// segment file, the offset where the invalid record starts (and its
/// extent, when its length is plausible), the LSN expected there and the
/// reason; with `--json`, the same as fields (`damage`).
fn damage_error(op: &'static str, d: &WalDamage, intact: u64) -> fspace::Error {
    add_error_detail("damage", damage_json(d));
    let extent = match d.record_end {
        Some(end) => format!(
            "; the invalid record spans bytes {}..{end} (a CRC cannot say which of them is wrong)",
            d.offset
        ),
        None => String::new(),
    };
    // A record's damage names its LSN in the message already; a segment's
    // does not.
    let segment_level = matches!(
        d.reason,
        StopReason::SegmentHeader
            | StopReason::MissingSegment
            | StopReason::OtherLog
            | StopReason::LsnGoesBack
    );
    let lsn = match d.expected_lsn {
        Some(l) if segment_level => format!("; LSN {l} expected there"),
        _ => String::new(),
    };
    fspace::Error::Corrupt {
        op,
        path: d.segment.clone(),
        offset: d.offset,
        message: format!(
            "{}{extent}{lsn}; {intact} record(s) before it are intact",
            d.message
        ),
    }
}

/// What it means that the log ends at `t`, when it does not end where
/// nothing was written: `None` for a clean end. The segment is named
/// `file`.
fn unclean_end(t: &TailReport, file: &str) -> Option<String> {
    if t.is_clean() {
        return None;
    }
    let at = match t.record_end {
        Some(end) => format!("bytes {}..{end} of {file}", t.offset),
        None => format!("offset {} of {file}", t.offset),
    };
    let expected = t.expected_lsn;
    if let Some((o, l)) = t.later_record {
        return Some(format!(
            "the log stops at offset {} of {file} ({}, where LSN {expected} was expected), but a record of it verifies later in the segment (LSN {l} at offset {o}): records were written beyond the stop, so either a flush reached the disk out of order before a power cut (its commits never returned: harmless) or acknowledged records were damaged (data lost); verify cannot tell which, and a writable open ends the log at the stop either way",
            t.offset, t.reason
        ));
    }
    let either = "either its last write was torn (a commit that never returned: harmless) \
        or an acknowledged record was damaged (data lost); verify cannot tell which";
    Some(match t.reason {
        StopReason::ChecksumMismatch => format!(
            "the log ends in a record that fails its checksum ({at}, where LSN {expected} was expected{}): {either}",
            match t.found_lsn {
                Some(l) => format!("; its LSN field says {l}"),
                None => String::new(),
            }
        ),
        StopReason::BadLength => format!(
            "the log ends in bytes whose length field runs past the segment ({at}, where LSN {expected} was expected): {either}"
        ),
        StopReason::LsnBreak { found } => format!(
            "the log ends in a record that passes its checksum but carries LSN {found} where {expected} was expected ({at}): not what a torn write leaves; records from LSN {expected} on may be lost"
        ),
        StopReason::Truncated => format!(
            "the log ends where its last segment's file is cut short ({at}, where LSN {expected} was expected): segments are written at their full size, so the file was truncated; records from LSN {expected} on may be lost"
        ),
        other => format!(
            "the log ends at {at}: {other} (LSN {expected} expected there)"
        ),
    })
}

/// `fspace wal verify`: every record of every live segment read and its
/// CRC checked, up to the first damage. Damage before the log's end is an
/// error naming the segment, the offset where the invalid record starts,
/// the LSN expected there and the reason (exit 1); a log that ends in bytes
/// that are not a valid record is `ok` with a warning, or exit
/// [`EXIT_UNCLEAN_END`] with `--strict`.
fn verify(a: WalVerifyArgs) -> fspace::Result<()> {
    let dir = a.dir.as_path();
    let v = WalView::open_to_damage(dir)?;
    let r = v.recovery();
    if let Some(d) = v.damage() {
        return Err(damage_error("verify", d, r.records));
    }
    let warning = r
        .tail
        .as_ref()
        .and_then(|t| unclean_end(t, &t.segment.display().to_string()));
    let ok = warning.is_none() || !a.strict;
    if !ok {
        set_exit_status(EXIT_UNCLEAN_END);
    }
    if a.json {
        #[derive(Serialize)]
        struct Verified<'a> {
            ok: bool,
            clean_end: bool,
            strict: bool,
            #[serde(serialize_with = "ser_path")]
            dir: &'a Path,
            segments: usize,
            records: u64,
            first_lsn: u64,
            next_lsn: u64,
            end: Option<serde_json::Value>,
            warning: Option<String>,
            recovery: &'a RecoveryReport,
        }
        return print_json(&Verified {
            ok,
            clean_end: warning.is_none(),
            strict: a.strict,
            dir,
            segments: r.segments,
            records: r.records,
            first_lsn: v.first_lsn().0,
            next_lsn: v.next_lsn().0,
            end: r.tail.as_ref().map(end_json),
            warning,
            recovery: r,
        });
    }
    let mut o = String::new();
    labelled(
        &mut o,
        "ok: ",
        &format!(
            "{} records in {} segment(s) verified (CRC, LSN sequence, segment chain), LSN {} to {}{}",
            r.records,
            r.segments,
            v.first_lsn(),
            v.next_lsn().0.saturating_sub(1),
            if warning.is_some() {
                "; warning: the log does not end cleanly"
            } else {
                ""
            }
        ),
    );
    tail_text(&mut o, r, dir);
    // The text names the segment within the log's directory.
    let warning = r
        .tail
        .as_ref()
        .and_then(|t| unclean_end(t, &in_log(&t.segment, dir)));
    if let Some(w) = &warning {
        labelled(&mut o, "warning:    ", w);
        labelled(
            &mut o,
            "            ",
            &format!(
                "a writable open ends the log before it{}",
                if a.strict {
                    format!("; --strict: exit {EXIT_UNCLEAN_END}")
                } else {
                    format!(" (--strict exits {EXIT_UNCLEAN_END} here)")
                }
            ),
        );
    }
    cleanup_text(&mut o, r, dir);
    emit(&o)
}

/// `fspace wal dump`: the records from `--from`, as lines or JSON lines,
/// up to the first damage; then, if the damage stopped it before
/// `--limit`, the error naming it (exit 1). What was read is printed
/// before any error.
fn dump(a: WalDumpArgs) -> fspace::Result<()> {
    let v = WalView::open_to_damage(&a.dir)?;
    let from = a.from.map_or(v.first_lsn(), fspace::Lsn);
    let mut o = String::new();
    let limit = a
        .limit
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let mut printed = 0usize;
    let mut failure = None;
    match v.read_from(from) {
        Err(e) => failure = Some(e),
        Ok(reader) => {
            for rec in reader.take(limit) {
                let rec = match rec {
                    Ok(rec) => rec,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                };
                record_line(&mut o, &rec, a.json);
                printed += 1;
                if o.len() >= 1 << 16 {
                    emit(&o)?;
                    o.clear();
                }
            }
        }
    }
    emit(&o)?;
    if let Some(e) = failure {
        return Err(e);
    }
    if printed < limit {
        if let Some(d) = v.damage() {
            let intact = d
                .expected_lsn
                .map_or(0, |l| l.0.saturating_sub(v.first_lsn().0));
            return Err(damage_error("dump", d, intact));
        }
        if let Some(w) = v
            .recovery()
            .tail
            .as_ref()
            .and_then(|t| unclean_end(t, &in_log(&t.segment, &a.dir)))
        {
            let mut msg = String::new();
            labelled(&mut msg, "fspace: warning: ", &w);
            eprint!("{msg}");
        }
    }
    Ok(())
}

/// One record as `dump` prints it.
fn record_line(o: &mut String, rec: &fspace::wal::Record, json: bool) {
    if json {
        let line = serde_json::json!({
            "lsn": rec.lsn.0,
            "segment": rec.segment,
            "offset": rec.offset,
            "len": rec.data.len(),
            "data": hex(&rec.data),
        });
        out!(o, "{line}");
    } else {
        let head = format!(
            "lsn {:>10} seg {:>6} off {:>10} len {:>7}  ",
            rec.lsn,
            rec.segment,
            rec.offset,
            rec.data.len()
        );
        // The first bytes of the data, as many as fit 80 columns with the
        // mark that more follow (`--json` has them all).
        let room = COLUMNS.saturating_sub(head.chars().count() + 1) / 2;
        let shown = &rec.data[..rec.data.len().min(room)];
        out!(
            o,
            "{head}{}{}",
            hex(shown),
            if rec.data.len() > shown.len() {
                "…"
            } else {
                ""
            }
        );
    }
}
