//! Recovery: what a log directory holds, verified, before the log reopens.
//!
//! The invariants the writer keeps, and that recovery relies on:
//!
//! 1. A segment becomes *live* when its header (written in its first page,
//!    with the log id, its sequence and its first LSN) is durable. A
//!    segment's first page is written only after every earlier segment is
//!    durable (`fdatasync` returned). So if segment N is live, every
//!    segment before it is complete up to N's first LSN: damage there is
//!    corruption, reported, never skipped.
//! 2. Only the last live segment can end in a torn tail. Records are read
//!    until the first one that is zero, fails its CRC or does not carry the
//!    next LSN; everything from there on is discarded (and reported).
//! 3. The CRC of a record covers the segment's sequence and the log id, so
//!    a recycled segment's earlier records never verify in its new life.
//! 4. Opening always starts a new segment, whose durable header seals the
//!    recovered end: bytes a crashed run left after it are never read again.
//! 5. Released segments are renamed (or deleted) oldest first, with a
//!    directory `fsync` after each, so what a crash leaves of a release is a
//!    prefix: a gap *between* live segments is corruption.
//! 6. Before it uses anything recovery found, `Wal::open` makes it durable
//!    (the kept segments' data, then the directory), so a rename a killed
//!    process left without its directory `fsync` cannot be undone by a
//!    later power cut under records acknowledged after it.
//! 7. Only the newest segment's header can be torn by a power cut (it is
//!    the only one whose header write may not have returned); a torn one
//!    ends the log. Anywhere else a bad header is corruption.

use super::damage::{inspect_record, later_record, StopReason, WalDamage};
use super::format::{
    parse_segment_name, segment_name, HeaderProblem, SegmentHeader, FREE_PREFIX, SEGMENT_HEADER_LEN,
};
use super::options::{LOCK_NAME, WRITE_PAGE};
pub(crate) use super::recovery_report::{RecoveryReport, TailReport};
use super::scan::{open_segment, read_at, read_header, Scan, Step, SCAN_READ};
use super::storage::Storage;
use super::types::{Lsn, SegmentInfo};
use crate::durable::TEMP_MARKER;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(crate) struct Recovered {
    pub log_id: Option<[u8; 16]>,
    /// Damage before the log's end ([`OnDamage::Stop`] only; `live` then
    /// ends with the damaged segment, or before a segment that does not
    /// follow).
    pub damage: Option<WalDamage>,
    pub live: Vec<SegmentInfo>,
    pub next_lsn: u64,
    /// Prepared segments, in sequence order, starting right after the last
    /// live one.
    pub prepared: Vec<(u64, PathBuf)>,
    pub pool: Vec<PathBuf>,
    pub report: RecoveryReport,
}

fn corrupt(path: &Path, offset: u64, message: impl Into<String>) -> Error {
    Error::Corrupt {
        op: "recover",
        path: path.to_path_buf(),
        offset,
        message: message.into(),
    }
}

enum Found {
    Live(SegmentHeader),
    /// Not live, and harmless: an all-zero header (a prepared segment) or
    /// a valid header of another sequence (a recycled segment's old life).
    Blank,
    /// Not live, and not something the writer leaves: damage.
    Damaged(HeaderProblem),
}

/// Suffix of a newest segment set aside because its header was torn.
pub(crate) const TORN_SUFFIX: &str = ".torn-header";

/// How [`recover`] may treat the directory.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Access {
    /// A writable open holding the lock: leftovers are removed, a torn
    /// newest segment is set aside; prepared segments must have this size.
    Write { segment_size: u64 },
    /// A read-only look ([`WalView`](crate::wal::WalView)): nothing is changed;
    /// the report says what a writable open would do.
    ReadOnly,
}

/// What recovery does with damage before the log's end (in a segment
/// that is not the last, or in the chain of segments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnDamage {
    /// Refuse: [`Error::Corrupt`] naming the file and the offset.
    Fail,
    /// Stop reading there and report it ([`Recovered::damage`]): a
    /// read-only look for tools that show what is readable of a damaged
    /// log (as `pg_waldump` prints every record up to the first invalid
    /// one).
    Stop,
}

/// Recovers the log in `dir`: lists it, reads every segment's header,
/// checks the live chain, reads the live segments to their end, and sorts
/// out the segments after the last live one (prepared, torn, leftovers).
pub(crate) fn recover(io: &dyn Storage, dir: &Path, access: Access) -> Result<Recovered> {
    recover_with(io, dir, access, OnDamage::Fail)
}

/// [`recover`], with damage before the log's end refused or reported as
/// `on` says.
pub(crate) fn recover_with(
    io: &dyn Storage,
    dir: &Path,
    access: Access,
    on: OnDamage,
) -> Result<Recovered> {
    let start = Instant::now();
    let mut report = RecoveryReport {
        read_only: matches!(access, Access::ReadOnly),
        ..Default::default()
    };
    let (segs, pool) = list(io, dir, access, &mut report)?;
    let found = segs
        .iter()
        .map(|(seq, path)| read_found(io, *seq, path))
        .collect::<Result<Vec<_>>>()?;
    let last_live = found.iter().rposition(|f| matches!(f, Found::Live(..)));
    let (mut live, heads, log_id, chain_damage) = live_chain(dir, &segs, &found, last_live, on)?;
    if live.is_empty() && chain_damage.is_none() {
        if let Some(p) = pool.first() {
            // A release always leaves a live segment behind it (the next
            // one's header is durable first): segments were lost.
            return Err(corrupt(
                p,
                0,
                "released segments exist but no live one: the log's segments are missing",
            ));
        }
    }
    let (next_lsn, read_damage) = read_live(io, &mut live, &heads, &mut report, on)?;
    // The first damage in the log's order: a record's in a segment read
    // comes before a segment that does not follow them.
    let mut damage = read_damage.or(chain_damage.map(|mut d| {
        // Reading stopped where the segments before it end.
        if !live.is_empty() {
            d.expected_lsn = Some(Lsn(next_lsn));
        }
        d
    }));
    if damage.is_some() {
        // The segments read do not end the log: their tail is not its end.
        report.tail = None;
    }
    let after = last_live.map_or(0, |i| i + 1);
    // The sequence after the last live header, whether or not damage
    // stopped the reading before it.
    let expect_seq = last_live.map_or(1, |i| segs[i].0 + 1);
    let tail = Tail {
        segs: &segs[after..],
        found: &found[after..],
        expect_seq,
        access,
        next_lsn,
    };
    let prepared = settle_tail(io, tail, &mut report, on, &mut damage)?;
    report.created = live.is_empty() && damage.is_none();
    report.segments = live.len();
    report.first_lsn = Lsn(live.first().map_or(next_lsn, |s| s.first_lsn.0));
    report.next_lsn = Lsn(next_lsn);
    report.prepared = prepared.len();
    report.recycle_pool = pool.len();
    report.damage.clone_from(&damage);
    report.elapsed = start.elapsed();
    Ok(Recovered {
        log_id,
        damage,
        live,
        next_lsn,
        prepared,
        pool,
        report,
    })
}

/// `d` refused (`on` is [`OnDamage::Fail`]) or handed back to be
/// reported.
fn refuse_or_report(d: WalDamage, on: OnDamage) -> Result<WalDamage> {
    match on {
        OnDamage::Fail => Err(d.to_error("recover")),
        OnDamage::Stop => Ok(d),
    }
}

/// Damage at the header of segment `seq` (`path`), `offset` into it.
fn header_damage(
    path: &Path,
    seq: u64,
    offset: u64,
    reason: StopReason,
    message: String,
) -> WalDamage {
    WalDamage {
        segment: path.to_path_buf(),
        seq,
        offset,
        record_end: None,
        // Set by the caller once the segments before it are read.
        expected_lsn: None,
        found_lsn: None,
        reason,
        message,
    }
}

/// Segments by sequence, and pooled segments.
type Listing = (Vec<(u64, PathBuf)>, Vec<PathBuf>);

/// Lists `dir`: segments by sequence and pooled segments, in order; removes
/// temporary files (we hold the directory's lock: no live process is
/// creating) and notes foreign ones.
fn list(
    io: &dyn Storage,
    dir: &Path,
    access: Access,
    report: &mut RecoveryReport,
) -> Result<Listing> {
    let mut segs: Vec<(u64, PathBuf)> = vec![];
    let mut pool = vec![];
    let entries = io
        .list(dir)
        .map_err(|e| Error::io("readdir", dir, None, e))?;
    for entry in entries {
        let name = entry.name.to_string_lossy();
        let path = dir.join(&entry.name);
        let is_file = entry.is_file;
        if name == LOCK_NAME {
            continue;
        }
        if is_file && name.contains(TEMP_MARKER) {
            // Durable with open's directory fsync (`make_durable`); a cut
            // before it brings the file back, and the next open removes
            // it again. A read-only look counts it (a live writer may be
            // creating it right now).
            if let Access::Write { .. } = access {
                io.unlink(&path)
                    .map_err(|e| Error::io("unlink", &path, None, e))?;
            }
            report.removed_temp_files += 1;
        } else if let (true, Some(seq)) = (is_file, parse_segment_name(&name)) {
            segs.push((seq, path));
        } else if is_file
            && name.starts_with(FREE_PREFIX)
            && parse_segment_name(&name[FREE_PREFIX.len()..]).is_some()
        {
            pool.push(path);
        } else {
            report.foreign_files.push(path);
        }
    }
    segs.sort();
    pool.sort();
    report.foreign_files.sort();
    Ok((segs, pool))
}

/// What segment `seq`'s header says about it.
fn read_found(io: &dyn Storage, seq: u64, path: &Path) -> Result<Found> {
    let (fd, _) = open_segment(io, path)?;
    Ok(match read_header(&*fd, path)? {
        Ok(h) if h.seq == seq => Found::Live(h),
        Ok(_) => Found::Blank,
        Err(HeaderProblem::Version(v)) => {
            // Never recycle or skip a segment of another format: its
            // records could be replayed wrongly (raft-engine's lesson).
            return Err(corrupt(path, 8, format!("{}", HeaderProblem::Version(v))));
        }
        Err(p) => {
            let mut b = [0u8; SEGMENT_HEADER_LEN];
            let n = read_at(&*fd, path, &mut b, 0)?;
            if b[..n].iter().all(|&x| x == 0) {
                Found::Blank
            } else {
                Found::Damaged(p)
            }
        }
    })
}

/// The live segments (every one up to the last live header, which must
/// all be live, of one log, consecutive, with growing first LSNs), their
/// headers, and the log's id; with [`OnDamage::Stop`], the chain up to the
/// first segment that breaks it, and that damage.
type Chain = (
    Vec<SegmentInfo>,
    Vec<SegmentHeader>,
    Option<[u8; 16]>,
    Option<WalDamage>,
);

fn live_chain(
    dir: &Path,
    segs: &[(u64, PathBuf)],
    found: &[Found],
    last_live: Option<usize>,
    on: OnDamage,
) -> Result<Chain> {
    let log_id = last_live.and_then(|i| match &found[i] {
        Found::Live(h) => Some(h.log_id),
        _ => None,
    });
    let mut live: Vec<SegmentInfo> = vec![];
    let mut heads = vec![];
    let (Some(last), Some(id)) = (last_live, log_id) else {
        return Ok((live, heads, log_id, None));
    };
    for i in 0..=last {
        let (seq, path) = &segs[i];
        let checked = match &found[i] {
            Found::Live(h) if h.log_id == id => {
                match live
                    .last()
                    .and_then(|prev| check_follows(dir, prev, *seq, path, h))
                {
                    None => Ok(h),
                    Some(d) => Err(d),
                }
            }
            Found::Live(..) => Err(header_damage(
                path,
                *seq,
                16,
                StopReason::OtherLog,
                "belongs to another log (different log id)".into(),
            )),
            other => {
                let why = match other {
                    Found::Damaged(p) => p.to_string(),
                    _ => "no header".into(),
                };
                Err(header_damage(
                    path,
                    *seq,
                    0,
                    StopReason::SegmentHeader,
                    format!(
                        "invalid segment header ({why}), but later segment {} is live",
                        segs[last].1.display()
                    ),
                ))
            }
        };
        let h = match checked {
            Ok(h) => h,
            Err(d) => {
                let d = refuse_or_report(d, on)?;
                return Ok((live, heads, log_id, Some(d)));
            }
        };
        heads.push(*h);
        live.push(SegmentInfo {
            seq: *seq,
            first_lsn: Lsn(h.first_lsn),
            path: path.clone(),
            size: h.size,
            format: h.version,
        });
    }
    Ok((live, heads, log_id, None))
}

/// The damage of a live segment that does not follow `prev`: a missing
/// sequence or a first LSN that goes back.
fn check_follows(
    dir: &Path,
    prev: &SegmentInfo,
    seq: u64,
    path: &Path,
    h: &SegmentHeader,
) -> Option<WalDamage> {
    if seq != prev.seq + 1 {
        return Some(header_damage(
            &dir.join(segment_name(prev.seq + 1)),
            prev.seq + 1,
            0,
            StopReason::MissingSegment,
            format!(
                "segment is missing: {} and {} exist",
                prev.path.display(),
                path.display()
            ),
        ));
    }
    if h.first_lsn < prev.first_lsn.0 {
        return Some(header_damage(
            path,
            seq,
            48,
            StopReason::LsnGoesBack,
            format!(
                "first LSN {} is before the previous segment's {}",
                h.first_lsn, prev.first_lsn
            ),
        ));
    }
    None
}

/// Reads every live segment: complete ones must reach the next segment's
/// first LSN; the last one ends wherever its valid records end (the
/// report's tail says where and why). Returns the next LSN and, with
/// [`OnDamage::Stop`], the damage that stopped the reading (`live` then
/// ends with the damaged segment).
fn read_live(
    io: &dyn Storage,
    live: &mut Vec<SegmentInfo>,
    heads: &[SegmentHeader],
    report: &mut RecoveryReport,
    on: OnDamage,
) -> Result<(u64, Option<WalDamage>)> {
    let mut next_lsn = 1;
    for i in 0..live.len() {
        let seg = &live[i];
        let (fd, len) = open_segment(io, &seg.path)?;
        let h = heads[i];
        let mut scan = Scan::new(fd, seg.path.clone(), h, len);
        let until = live.get(i + 1).map(|n| n.first_lsn.0);
        let mut lsn = h.first_lsn;
        while until != Some(lsn) {
            match scan.step()? {
                Step::Record { .. } => {
                    lsn += 1;
                    report.records += 1;
                }
                Step::End { reason, offset } => {
                    let (record_end, found_lsn) =
                        inspect_record(io, &seg.path, h.size, offset, reason, h.version)?;
                    if let Some(want) = until {
                        let d = WalDamage {
                            segment: seg.path.clone(),
                            seq: seg.seq,
                            offset,
                            record_end,
                            expected_lsn: Some(Lsn(lsn)),
                            found_lsn,
                            reason: reason.into(),
                            message: format!(
                                "{reason} at LSN {lsn}, but the log continues in {} at LSN {want}, so this segment was complete",
                                live[i + 1].path.display()
                            ),
                        };
                        let d = refuse_or_report(d, on)?;
                        live.truncate(i + 1);
                        return Ok((lsn, Some(d)));
                    }
                    let discarded = count_discarded(io, &seg.path, offset, h.size.min(len))?;
                    let later_record = match reason {
                        super::format::EndReason::EndOfSegment => None,
                        _ => later_record(io, &seg.path, &h, offset, lsn)?,
                    };
                    report.tail = Some(TailReport {
                        segment: seg.path.clone(),
                        seq: seg.seq,
                        offset,
                        record_end,
                        expected_lsn: Lsn(lsn),
                        found_lsn,
                        reason: reason.into(),
                        stopped_at: reason.to_string(),
                        discarded_bytes: discarded,
                        later_record,
                    });
                    break;
                }
            }
        }
        next_lsn = lsn;
    }
    Ok((next_lsn, None))
}

/// The segments after the last live one, with what their headers say.
struct Tail<'a> {
    segs: &'a [(u64, PathBuf)],
    found: &'a [Found],
    /// The sequence the first of them must have to be the next segment.
    expect_seq: u64,
    access: Access,
    /// The LSN after the last record read.
    next_lsn: u64,
}

/// Sorts out the segments after the last live one (never written by the
/// writer: their headers are zeros or a recycled segment's old one): the
/// consecutive ones of the right size stay prepared, a torn newest header
/// is set aside, other damage refuses to open (or, with
/// [`OnDamage::Stop`], is reported in `damage` unless damage was found
/// before it), the rest is removed.
fn settle_tail(
    io: &dyn Storage,
    tail: Tail<'_>,
    report: &mut RecoveryReport,
    on: OnDamage,
    damage: &mut Option<WalDamage>,
) -> Result<Vec<(u64, PathBuf)>> {
    let mut prepared = vec![];
    let mut expect_seq = tail.expect_seq;
    for (i, (seq, path)) in tail.segs.iter().enumerate() {
        if let Found::Damaged(p) = &tail.found[i] {
            let torn = matches!(p, HeaderProblem::Checksum | HeaderProblem::NoMagic);
            if torn && i == 0 && *seq == expect_seq {
                set_aside_torn(io, (*seq, path), p, tail.access, tail.next_lsn, report)?;
                continue;
            }
            let mut d = header_damage(
                path,
                *seq,
                0,
                StopReason::SegmentHeader,
                format!("unreadable segment header ({p}): records written here may be lost; move the file away to open the log without it"),
            );
            d.expected_lsn = Some(Lsn(tail.next_lsn));
            let d = refuse_or_report(d, on)?;
            damage.get_or_insert(d);
            continue;
        }
        let (_, size) = open_segment(io, path)?;
        let size_ok = match tail.access {
            Access::Write { segment_size } => size == segment_size,
            Access::ReadOnly => true,
        };
        if *seq == expect_seq && size_ok {
            prepared.push((*seq, path.clone()));
            expect_seq += 1;
        } else {
            // Never written by the writer (not live), so it holds no
            // record; durable with open's directory fsync, and removed
            // again by the next open if a cut brings it back.
            if let Access::Write { .. } = tail.access {
                io.unlink(path)
                    .map_err(|e| Error::io("unlink", path, None, e))?;
            }
            report.removed_files.push(path.clone());
        }
    }
    Ok(prepared)
}

/// The newest segment, whose header may have been torn by a power cut while
/// it was being written (its fdatasync had not returned; a torn header
/// fails its checksum, or lacks the magic its first bytes would carry):
/// like an invalid page header at the end of PostgreSQL's WAL, the log ends
/// before it. A header whose checksum holds but whose numbers are
/// impossible was not torn, and stays an error. Moved aside, not deleted:
/// if it was damaged some other way, its bytes are still there to look at.
fn set_aside_torn(
    io: &dyn Storage,
    (seq, path): (u64, &Path),
    p: &HeaderProblem,
    access: Access,
    next_lsn: u64,
    report: &mut RecoveryReport,
) -> Result<()> {
    let aside = match access {
        Access::Write { .. } => set_aside(io, path)?,
        // A read-only look names the segment itself.
        Access::ReadOnly => path.to_path_buf(),
    };
    report.tail.get_or_insert_with(|| TailReport {
        segment: path.to_path_buf(),
        seq,
        offset: 0,
        record_end: None,
        expected_lsn: Lsn(next_lsn),
        found_lsn: None,
        reason: StopReason::SegmentHeader,
        stopped_at: format!("segment header invalid ({p})"),
        discarded_bytes: 0,
        later_record: None,
    });
    report.torn_header = Some(aside);
    Ok(())
}

/// Renames a segment with a torn header to `NAME.torn-header` (or
/// `NAME.torn-header.2`, ... if an earlier one is there: a file set aside
/// is never replaced).
fn set_aside(io: &dyn Storage, path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut n = 1;
    loop {
        let aside = path.with_file_name(match n {
            1 => format!("{name}{TORN_SUFFIX}"),
            _ => format!("{name}{TORN_SUFFIX}.{n}"),
        });
        match io.rename_noreplace(path, &aside) {
            Ok(_) => return Ok(aside),
            Err(e)
                if e.raw_os_error() == Some(crate::sys::Errno::EXIST.raw_os_error())
                    && n < 1000 =>
            {
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Counts the bytes from `offset` to the end of the last non-zero page
/// before the first all-zero page (or `end`).
fn count_discarded(io: &dyn Storage, path: &Path, offset: u64, end: u64) -> Result<u64> {
    let (fd, _) = open_segment(io, path)?;
    let page = WRITE_PAGE as u64;
    let mut buf = vec![0u8; SCAN_READ];
    let mut pos = offset;
    let mut last_nonzero = offset;
    while pos < end {
        // Reads end on page boundaries, so no page is split between two.
        let mut n = ((end - pos) as usize).min(buf.len());
        let stop = pos + n as u64;
        if stop < end && !stop.is_multiple_of(page) {
            n -= (stop % page) as usize;
        }
        let got = read_at(&*fd, path, &mut buf[..n], pos)?;
        if got == 0 {
            break;
        }
        let mut i = 0;
        while i < got {
            // Pages are counted from `pos`, aligned to file pages.
            let abs = pos + i as u64;
            let page_end = ((abs / page + 1) * page).min(pos + got as u64);
            let len = (page_end - abs) as usize;
            let chunk = &buf[i..i + len];
            if chunk.iter().all(|&b| b == 0) {
                // A whole zero page: what follows was never written in
                // this run (the rest of a page holding valid records does
                // not count, it was padded with zeros).
                if abs.is_multiple_of(page) {
                    return Ok(last_nonzero - offset);
                }
            } else if let Some(last) = chunk.iter().rposition(|&b| b != 0) {
                last_nonzero = abs + last as u64 + 1;
            }
            i += len;
        }
        pos += got as u64;
    }
    Ok(last_nonzero - offset)
}
