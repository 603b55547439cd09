//! `fspace wal stat|verify|dump DIR`: looking into a log read-only
//! ([`fspace::wal::WalView`]): nothing in the directory changes, and a live
//! log can be looked at while its writer runs.

use crate::cli::{WalArgs, WalCommand, WalDumpArgs};
use crate::fmt::format_human;
use crate::output::{emit, print_json, ser_path};
use fspace::wal::{RecoveryReport, SegmentInfo, WalView};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `fspace wal ...`.
pub(crate) fn run(a: WalArgs) -> fspace::Result<()> {
    match a.command {
        WalCommand::Stat(a) => stat(&a.dir, a.json),
        WalCommand::Verify(a) => verify(&a.dir, a.json),
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

fn opt(v: Option<u64>) -> String {
    v.map_or("unknown".into(), format_human)
}

fn stat_text(st: &Stat<'_>) -> String {
    let mut o = String::new();
    out!(o, "log:        {} (id {})", st.dir.display(), st.log_id);
    out!(
        o,
        "records:    {} readable, LSN {} to {} (next {})",
        st.records,
        st.first_lsn,
        st.next_lsn.saturating_sub(1),
        st.next_lsn
    );
    out!(o, "segments:   {} live", st.segments.len());
    out!(
        o,
        "  {:>6} {:>12} {:>9}  {:>9} {:>9} {:>9}  FILE",
        "SEQ",
        "FIRST LSN",
        "SIZE",
        "WRITTEN",
        "UNWRITTEN",
        "HOLES"
    );
    for s in &st.segments {
        out!(
            o,
            "  {:>6} {:>12} {:>9}  {:>9} {:>9} {:>9}  {}",
            s.seq,
            s.first_lsn,
            format_human(s.size),
            opt(s.written),
            opt(s.unwritten),
            opt(s.holes),
            s.path.display()
        );
    }
    tail_text(&mut o, st.recovery);
    out!(o, "prepared:   {} segment(s) ready", st.prepared.len());
    out!(
        o,
        "pool:       {} released segment(s) kept for recycling",
        st.recycle_pool.len()
    );
    cleanup_text(&mut o, st.recovery);
    o
}

/// Where the last segment's records end, and why.
fn tail_text(o: &mut String, r: &RecoveryReport) {
    match &r.tail {
        Some(t) => {
            out!(
                o,
                "end:        {} at offset {}: {}{}",
                t.segment.display(),
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
            );
        }
        None => out!(o, "end:        the last segment is full"),
    }
}

/// What a writable open would clean up (nothing was changed).
fn cleanup_text(o: &mut String, r: &RecoveryReport) {
    if r.removed_temp_files > 0 {
        out!(o, "note: {} temporary file(s) of an unfinished segment creation; the next writable open removes them", r.removed_temp_files);
    }
    for p in &r.removed_files {
        out!(
            o,
            "note: {} is not part of the log; the next writable open removes it",
            p.display()
        );
    }
    if let Some(p) = &r.torn_header {
        out!(o, "note: {} has a torn header (a cut while it was being started); the log ends before it and the next writable open sets it aside", p.display());
    }
    for p in &r.foreign_files {
        out!(o, "note: {} is not the log's; left alone", p.display());
    }
}

/// `fspace wal verify`: every record of every live segment read and its
/// CRC checked (the view's opening does it); damage is an error naming
/// the segment and the offset of the first bad byte (exit 1).
fn verify(dir: &Path, json: bool) -> fspace::Result<()> {
    let v = WalView::open(dir)?;
    let r = v.recovery();
    if json {
        #[derive(Serialize)]
        struct Verified<'a> {
            ok: bool,
            #[serde(serialize_with = "ser_path")]
            dir: &'a Path,
            segments: usize,
            records: u64,
            first_lsn: u64,
            next_lsn: u64,
            recovery: &'a RecoveryReport,
        }
        return print_json(&Verified {
            ok: true,
            dir,
            segments: r.segments,
            records: r.records,
            first_lsn: v.first_lsn().0,
            next_lsn: v.next_lsn().0,
            recovery: r,
        });
    }
    let mut o = String::new();
    out!(
        o,
        "ok: {} records in {} segment(s) verified (CRC, LSN sequence, segment chain), LSN {} to {}",
        r.records,
        r.segments,
        v.first_lsn(),
        v.next_lsn().0.saturating_sub(1)
    );
    tail_text(&mut o, r);
    cleanup_text(&mut o, r);
    emit(&o)
}

/// `fspace wal dump`: the records from `--from`, as lines or JSON lines.
fn dump(a: WalDumpArgs) -> fspace::Result<()> {
    let v = WalView::open(&a.dir)?;
    let from = a.from.map_or(v.first_lsn(), fspace::Lsn);
    let mut o = String::new();
    let limit = a
        .limit
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    for rec in v.read_from(from)?.take(limit) {
        let rec = rec?;
        if a.json {
            let line = serde_json::json!({
                "lsn": rec.lsn.0,
                "segment": rec.segment,
                "offset": rec.offset,
                "len": rec.data.len(),
                "data": hex(&rec.data),
            });
            out!(o, "{line}");
        } else {
            let shown = &rec.data[..rec.data.len().min(32)];
            out!(
                o,
                "lsn {:>10}  segment {:>6}  offset {:>10}  len {:>8}  {}{}",
                rec.lsn,
                rec.segment,
                rec.offset,
                rec.data.len(),
                hex(shown),
                if rec.data.len() > shown.len() {
                    "…"
                } else {
                    ""
                }
            );
        }
        if o.len() >= 1 << 16 {
            emit(&o)?;
            o.clear();
        }
    }
    emit(&o)
}
