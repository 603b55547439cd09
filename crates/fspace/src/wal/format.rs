//! The on-disk format of the segment log, byte by byte (also in
//! `docs/wal-format.md`). All integers are little-endian.
//!
//! A segment file `NNNNNNNNNNNN.seg` (its sequence number, at least 12
//! decimal digits) is [`SEGMENT_HEADER_LEN`] bytes of header followed by
//! records, each starting at a multiple of the format's alignment (16 in
//! format 2, 8 in format 1):
//!
//! ```text
//! header   0  magic "FSPACWAL"            8 bytes
//!          8  format version (2; 1 read)  u32
//!         12  header length (64)          u32
//!         16  log id                      16 bytes, random per log
//!         32  segment sequence            u64, equals the file name's number
//!         40  segment size                u64, bytes
//!         48  first LSN                   u64, LSN of the segment's first record
//!         56  nonce                       u32, random each time the segment goes live
//!         60  CRC32C of bytes 0..60       u32
//! record   0  length word                 u32, payload length; in format 2
//!                                         bit 31 set marks padding
//!          4  CRC32C                      u32, see `record_crc`
//!          8  LSN                         u64
//!         16  payload, then zeros up to the next multiple of the alignment
//! ```
//!
//! The record CRC covers the log id, the segment sequence, the segment's
//! nonce, the length word, the LSN and the payload. A record from a
//! segment's previous life (recycled under a new sequence, or reused under
//! the same sequence after a crash cut its first run short) therefore fails
//! its CRC even if its LSN happened to fit, and a record of another log
//! never verifies.
//!
//! Format 2 adds **padding**: a writer that ends a flush inside a page may
//! fill the rest of the page with a padding record (bit 31 of the length
//! word set, the low bits counting the bytes after its header, the LSN the
//! next record's), so that the next flush starts on a fresh page and no
//! page is ever written twice (docs/wal-format.md, "Padding"). Its CRC
//! covers its header only; the bytes it skips carry nothing.

/// The magic at the start of every segment.
pub const MAGIC: [u8; 8] = *b"FSPACWAL";
/// The format version new segments are written in.
pub const FORMAT_VERSION: u32 = 2;
/// The first format, still read (its segments open, recover and read).
pub const FORMAT_V1: u32 = 1;
/// Bit 31 of a format-2 length word: the record is padding.
pub const PAD_FLAG: u32 = 1 << 31;
/// Bytes of segment header; the first record starts here.
pub const SEGMENT_HEADER_LEN: usize = 64;
/// Bytes of record header before the payload.
pub const RECORD_HEADER_LEN: usize = 16;
/// Records start at multiples of this many bytes (format 2): every gap
/// left before a page boundary is then 0 or at least one record header,
/// so a padding record always fits.
pub const RECORD_ALIGN: usize = 16;
/// Record alignment of format 1.
pub const RECORD_ALIGN_V1: usize = 8;
/// Largest payload format 2 can describe (the length word's low 31 bits).
pub const MAX_PAYLOAD: usize = (PAD_FLAG - 1) as usize;
/// Largest segment sequence and LSN accepted (2^62): far beyond any real
/// log, and it keeps `+ 1` arithmetic on values read from disk safe.
pub const MAX_NUMBER: u64 = 1 << 62;

/// A segment header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The format its records are written in: [`FORMAT_VERSION`] for
    /// segments this build writes, [`FORMAT_V1`] for older ones.
    pub version: u32,
    /// The log this segment belongs to.
    pub log_id: [u8; 16],
    /// The segment's sequence number.
    pub seq: u64,
    /// The segment's size in bytes (header included).
    pub size: u64,
    /// The LSN of the segment's first record.
    pub first_lsn: u64,
    /// Chosen when the segment goes live; covered by every record's CRC.
    pub nonce: u32,
}

/// Why a segment header did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderProblem {
    /// Fewer than [`SEGMENT_HEADER_LEN`] bytes.
    Short,
    /// Not a segment of this format: the magic is absent (zeros, or a
    /// file of something else).
    NoMagic,
    /// The magic is there but the version is one this build cannot read.
    Version(u32),
    /// The header's checksum does not match (torn or corrupt).
    Checksum,
    /// The declared header length or segment size is impossible.
    Invalid,
}

impl std::fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderProblem::Short => write!(f, "shorter than a segment header"),
            HeaderProblem::NoMagic => write!(f, "no segment magic"),
            HeaderProblem::Version(v) => write!(
                f,
                "format version {v}, this build reads versions {FORMAT_V1} and {FORMAT_VERSION}"
            ),
            HeaderProblem::Checksum => write!(f, "header checksum mismatch"),
            HeaderProblem::Invalid => write!(f, "impossible header length or segment size"),
        }
    }
}

impl SegmentHeader {
    /// Encodes the header into its [`SEGMENT_HEADER_LEN`] bytes.
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut b = [0u8; SEGMENT_HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12..16].copy_from_slice(&(SEGMENT_HEADER_LEN as u32).to_le_bytes());
        b[16..32].copy_from_slice(&self.log_id);
        b[32..40].copy_from_slice(&self.seq.to_le_bytes());
        b[40..48].copy_from_slice(&self.size.to_le_bytes());
        b[48..56].copy_from_slice(&self.first_lsn.to_le_bytes());
        b[56..60].copy_from_slice(&self.nonce.to_le_bytes());
        let crc = crc32c(&b[0..60]);
        b[60..64].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a header from the start of `b`.
    pub fn decode(b: &[u8]) -> Result<SegmentHeader, HeaderProblem> {
        if b.len() < SEGMENT_HEADER_LEN {
            return Err(HeaderProblem::Short);
        }
        if b[0..8] != MAGIC {
            return Err(HeaderProblem::NoMagic);
        }
        let version = le32(&b[8..12]);
        if version != FORMAT_VERSION && version != FORMAT_V1 {
            return Err(HeaderProblem::Version(version));
        }
        if le32(&b[60..64]) != crc32c(&b[0..60]) {
            return Err(HeaderProblem::Checksum);
        }
        let h = SegmentHeader {
            version,
            log_id: b[16..32].try_into().map_err(|_| HeaderProblem::Short)?,
            seq: le64(&b[32..40]),
            size: le64(&b[40..48]),
            first_lsn: le64(&b[48..56]),
            nonce: le32(&b[56..60]),
        };
        if le32(&b[12..16]) as usize != SEGMENT_HEADER_LEN
            || h.size < (SEGMENT_HEADER_LEN + RECORD_HEADER_LEN) as u64
            || h.first_lsn == 0
            || h.first_lsn > MAX_NUMBER
            || h.seq > MAX_NUMBER
        {
            return Err(HeaderProblem::Invalid);
        }
        Ok(h)
    }
}

/// Returns the bytes a record with a payload of `len` bytes occupies in
/// the format this build writes, alignment padding included.
pub const fn record_span(len: usize) -> usize {
    span_in(FORMAT_VERSION, len)
}

/// Returns the bytes a record with a payload of `len` bytes occupies in
/// format `version`, alignment padding included.
pub const fn span_in(version: u32, len: usize) -> usize {
    let align = align_of(version);
    (RECORD_HEADER_LEN + len).div_ceil(align) * align
}

/// Returns the record alignment of format `version`.
pub const fn align_of(version: u32) -> usize {
    if version == FORMAT_V1 {
        RECORD_ALIGN_V1
    } else {
        RECORD_ALIGN
    }
}

/// The segment a record belongs to, as its CRC sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordKey {
    /// The log id.
    pub log_id: [u8; 16],
    /// The segment sequence.
    pub seq: u64,
    /// The segment's nonce.
    pub nonce: u32,
}

impl From<&SegmentHeader> for RecordKey {
    fn from(h: &SegmentHeader) -> RecordKey {
        RecordKey {
            log_id: h.log_id,
            seq: h.seq,
            nonce: h.nonce,
        }
    }
}

/// Returns the CRC32C of a record: log id, segment sequence, nonce,
/// payload length, LSN, then the payload.
pub fn record_crc(key: &RecordKey, lsn: u64, payload: &[u8]) -> u32 {
    header_crc(key, payload.len() as u32, lsn, payload)
}

/// Returns the CRC32C of a record whose length word is `word`: log id,
/// segment sequence, nonce, `word`, LSN, then `payload` (empty for
/// padding, whose skipped bytes are not covered).
fn header_crc(key: &RecordKey, word: u32, lsn: u64, payload: &[u8]) -> u32 {
    let mut pre = [0u8; 40];
    pre[0..16].copy_from_slice(&key.log_id);
    pre[16..24].copy_from_slice(&key.seq.to_le_bytes());
    pre[24..28].copy_from_slice(&key.nonce.to_le_bytes());
    pre[28..32].copy_from_slice(&word.to_le_bytes());
    pre[32..40].copy_from_slice(&lsn.to_le_bytes());
    crc32c_append(crc32c(&pre), payload)
}

/// CRC-32C (Castagnoli, the iSCSI polynomial) of `bytes`.
pub fn crc32c(bytes: &[u8]) -> u32 {
    super::crc::append(0, bytes)
}

/// CRC-32C of `a` followed by `bytes`, given `crc = crc32c(a)`.
pub fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    super::crc::append(crc, bytes)
}

/// Appends a record (header, payload, zero padding) to `out`, in the
/// format this build writes.
pub fn encode_record(out: &mut Vec<u8>, key: &RecordKey, lsn: u64, payload: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&record_crc(key, lsn, payload).to_le_bytes());
    out.extend_from_slice(&lsn.to_le_bytes());
    out.extend_from_slice(payload);
    out.resize(start + record_span(payload.len()), 0);
}

/// Appends a padding record of `span` bytes in all (a multiple of
/// `RECORD_ALIGN`, at least `RECORD_HEADER_LEN`) to `out`: its header,
/// then zeros. `lsn` is the LSN of the record that will follow it.
pub fn encode_padding(out: &mut Vec<u8>, key: &RecordKey, lsn: u64, span: usize) {
    debug_assert!(span >= RECORD_HEADER_LEN && span.is_multiple_of(RECORD_ALIGN));
    let word = PAD_FLAG | (span - RECORD_HEADER_LEN) as u32;
    out.extend_from_slice(&word.to_le_bytes());
    out.extend_from_slice(&header_crc(key, word, lsn, &[]).to_le_bytes());
    out.extend_from_slice(&lsn.to_le_bytes());
    out.resize(out.len() + span - RECORD_HEADER_LEN, 0);
}

/// What the bytes at a record position hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// A verified record with the expected LSN.
    Record {
        /// Its LSN.
        lsn: u64,
        /// Its payload.
        payload: &'a [u8],
        /// Bytes it occupies, padding included.
        span: usize,
    },
    /// A verified padding record (format 2): skip `span` bytes; the
    /// record expected here comes after it.
    Padding {
        /// Bytes it occupies, its header included.
        span: usize,
    },
    /// Not a record; the log ends (or is damaged) here.
    End(EndReason),
    /// The record runs past the bytes given: read more and try again
    /// (only when the bytes given end before the segment does).
    NeedMore(usize),
}

/// Why reading stopped at a record position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// An all-zero record header: the clean end of the written records.
    Zero,
    /// The length runs past the end of the segment.
    BadLength,
    /// The CRC does not match: a torn write, corruption, or a record of a
    /// segment's previous life.
    BadCrc,
    /// The CRC matches but the LSN is not the next one.
    LsnBreak {
        /// The LSN found.
        found: u64,
    },
    /// The segment ends here.
    EndOfSegment,
    /// The file ends before the segment should (a truncated segment).
    FileEnds,
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndReason::Zero => write!(f, "zeros (end of records)"),
            EndReason::BadLength => write!(f, "record length runs past the segment end"),
            EndReason::BadCrc => write!(f, "record checksum mismatch"),
            EndReason::LsnBreak { found } => write!(f, "record LSN {found} breaks the sequence"),
            EndReason::EndOfSegment => write!(f, "end of segment"),
            EndReason::FileEnds => write!(f, "the file ends before the segment does (truncated)"),
        }
    }
}

/// Decodes the record at the start of `b`, expected to carry LSN
/// `expect`, in format `version`. `room` is the number of bytes from this
/// position to the end of the segment (at least `b.len()`); when `b` is
/// shorter than the record but `room` is not, asks for more.
pub fn decode_record<'a>(
    b: &'a [u8],
    room: usize,
    key: &RecordKey,
    expect: u64,
    version: u32,
) -> Decoded<'a> {
    if room < RECORD_HEADER_LEN {
        return Decoded::End(EndReason::EndOfSegment);
    }
    if b.len() < RECORD_HEADER_LEN {
        return Decoded::NeedMore(RECORD_HEADER_LEN);
    }
    let word = le32(&b[0..4]);
    let crc = le32(&b[4..8]);
    let lsn = le64(&b[8..16]);
    if word == 0 && crc == 0 && lsn == 0 {
        return Decoded::End(EndReason::Zero);
    }
    let align = align_of(version);
    if version != FORMAT_V1 && word & PAD_FLAG != 0 {
        // Padding: only its header is covered; the bytes it skips are not
        // read at all.
        let skip = (word & !PAD_FLAG) as usize;
        if skip > room - RECORD_HEADER_LEN || !skip.is_multiple_of(align) {
            return Decoded::End(EndReason::BadLength);
        }
        if header_crc(key, word, lsn, &[]) != crc {
            return Decoded::End(EndReason::BadCrc);
        }
        if lsn != expect {
            return Decoded::End(EndReason::LsnBreak { found: lsn });
        }
        return Decoded::Padding {
            span: RECORD_HEADER_LEN + skip,
        };
    }
    let len = word as usize;
    if len > room - RECORD_HEADER_LEN {
        return Decoded::End(EndReason::BadLength);
    }
    let span = span_in(version, len).min(room);
    if b.len() < RECORD_HEADER_LEN + len {
        return Decoded::NeedMore(span);
    }
    let payload = &b[RECORD_HEADER_LEN..RECORD_HEADER_LEN + len];
    if record_crc(key, lsn, payload) != crc {
        return Decoded::End(EndReason::BadCrc);
    }
    if lsn != expect {
        return Decoded::End(EndReason::LsnBreak { found: lsn });
    }
    Decoded::Record { lsn, payload, span }
}

fn le32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Returns the file name of segment `seq`.
pub fn segment_name(seq: u64) -> String {
    format!("{seq:012}.seg")
}

/// Parses a segment file name back to its sequence number.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".seg")?;
    if digits.len() < 12 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| *n <= MAX_NUMBER)
}

/// Prefix of segments in the recycle pool: `free-NNNNNNNNNNNN.seg`
/// (the number is the segment's last sequence, for tracing only).
pub const FREE_PREFIX: &str = "free-";

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The record CRC is CRC-32C (the check value of the standard vector)
    /// over the prefix and the payload as one run of bytes: logs written
    /// with an earlier CRC implementation still verify.
    #[test]
    fn crc_is_crc32c_of_prefix_and_payload() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        let key = RecordKey {
            log_id: [7; 16],
            seq: 3,
            nonce: 0xDEAD_BEEF,
        };
        let payload: Vec<u8> = (0..9000u32).map(|i| (i * 31) as u8).collect();
        let mut all = Vec::new();
        all.extend_from_slice(&key.log_id);
        all.extend_from_slice(&3u64.to_le_bytes());
        all.extend_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        all.extend_from_slice(&9000u32.to_le_bytes());
        all.extend_from_slice(&42u64.to_le_bytes());
        all.extend_from_slice(&payload);
        assert_eq!(record_crc(&key, 42, &payload), crc32c(&all));
        // A value computed with the crc32c crate before the switch.
        assert_eq!(record_crc(&key, 42, &payload), 0x2EF5_5E68);
    }

    const ID: [u8; 16] = [7; 16];
    const KEY: RecordKey = RecordKey {
        log_id: ID,
        seq: 5,
        nonce: 99,
    };

    #[test]
    fn header_round_trips_and_rejects_damage() {
        let h = SegmentHeader {
            version: FORMAT_VERSION,
            log_id: ID,
            seq: 3,
            size: 16 << 20,
            first_lsn: 42,
            nonce: 0xdead,
        };
        let b = h.encode();
        assert_eq!(SegmentHeader::decode(&b), Ok(h));
        for i in 0..64 {
            let mut d = b;
            d[i] ^= 0x10;
            assert!(SegmentHeader::decode(&d).is_err(), "byte {i} flipped");
        }
        assert_eq!(
            SegmentHeader::decode(&[0u8; 64]),
            Err(HeaderProblem::NoMagic)
        );
        assert_eq!(SegmentHeader::decode(&b[..63]), Err(HeaderProblem::Short));
        // Format 1 still decodes, and says so; an unknown version is
        // named, never skipped.
        let v1 = SegmentHeader {
            version: FORMAT_V1,
            ..h
        };
        assert_eq!(SegmentHeader::decode(&v1.encode()), Ok(v1));
        let v3 = SegmentHeader { version: 3, ..h };
        assert_eq!(
            SegmentHeader::decode(&v3.encode()),
            Err(HeaderProblem::Version(3))
        );
    }

    #[test]
    fn record_round_trips_and_is_aligned() {
        for len in [0usize, 1, 7, 8, 9, 4096] {
            let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut out = vec![];
            encode_record(&mut out, &KEY, 9, &payload);
            assert_eq!(out.len() % RECORD_ALIGN, 0);
            assert_eq!(out.len(), record_span(len));
            match decode_record(&out, 1 << 20, &KEY, 9, FORMAT_VERSION) {
                Decoded::Record {
                    lsn,
                    payload: p,
                    span,
                } => {
                    assert_eq!((lsn, p, span), (9, &payload[..], out.len()));
                }
                other => panic!("{other:?}"),
            }
            // Another segment, another life of it, another log, the wrong LSN.
            for other in [
                RecordKey { seq: 4, ..KEY },
                RecordKey { nonce: 98, ..KEY },
                RecordKey {
                    log_id: [8; 16],
                    ..KEY
                },
            ] {
                assert_eq!(
                    decode_record(&out, 1 << 20, &other, 9, FORMAT_VERSION),
                    Decoded::End(EndReason::BadCrc)
                );
            }
            assert_eq!(
                decode_record(&out, 1 << 20, &KEY, 10, FORMAT_VERSION),
                Decoded::End(EndReason::LsnBreak { found: 9 })
            );
        }
    }

    /// Format 1 records (8-byte alignment, no padding) still decode: a
    /// record of 9 bytes spans 32 bytes in format 1 and 32 in format 2, one
    /// of 1 byte 24 and 32.
    #[test]
    fn format_1_records_decode_with_their_alignment() {
        for (len, v1_span) in [(1usize, 24usize), (9, 32), (8, 24), (0, 16)] {
            let payload = vec![5u8; len];
            let mut out = vec![];
            encode_record(&mut out, &KEY, 3, &payload);
            out.truncate(RECORD_HEADER_LEN + len);
            out.resize(v1_span, 0);
            match decode_record(&out, v1_span, &KEY, 3, FORMAT_V1) {
                Decoded::Record {
                    span, payload: p, ..
                } => {
                    assert_eq!((span, p), (v1_span, &payload[..]));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// Padding verifies by its header alone, carries the next record's
    /// LSN, is refused in format 1, and never runs past the segment.
    #[test]
    fn padding_round_trips_and_rejects_damage() {
        let mut out = vec![];
        encode_padding(&mut out, &KEY, 7, 4000);
        assert_eq!(out.len(), 4000);
        assert_eq!(
            decode_record(&out, 4000, &KEY, 7, FORMAT_VERSION),
            Decoded::Padding { span: 4000 }
        );
        // The bytes it skips are not covered: a torn rest of the page
        // does not matter.
        let mut torn = out.clone();
        torn[3999] = 0xff;
        assert_eq!(
            decode_record(&torn, 4000, &KEY, 7, FORMAT_VERSION),
            Decoded::Padding { span: 4000 }
        );
        assert_eq!(
            decode_record(&out, 4000, &KEY, 8, FORMAT_VERSION),
            Decoded::End(EndReason::LsnBreak { found: 7 })
        );
        assert_eq!(
            decode_record(&out, 3984, &KEY, 7, FORMAT_VERSION),
            Decoded::End(EndReason::BadLength)
        );
        assert!(matches!(
            decode_record(&out, 4000, &KEY, 7, FORMAT_V1),
            Decoded::End(_)
        ));
        for other in [RecordKey { seq: 4, ..KEY }, RecordKey { nonce: 1, ..KEY }] {
            assert_eq!(
                decode_record(&out, 4000, &other, 7, FORMAT_VERSION),
                Decoded::End(EndReason::BadCrc)
            );
        }
        for i in 0..16 {
            let mut d = out.clone();
            d[i] ^= 0x04;
            assert!(
                matches!(
                    decode_record(&d, 4000, &KEY, 7, FORMAT_VERSION),
                    Decoded::End(_) | Decoded::NeedMore(_)
                ),
                "byte {i}"
            );
        }
        // The smallest padding is a bare header.
        let mut out = vec![];
        encode_padding(&mut out, &KEY, 1, RECORD_HEADER_LEN);
        assert_eq!(
            decode_record(&out, 16, &KEY, 1, FORMAT_VERSION),
            Decoded::Padding { span: 16 }
        );
    }

    #[test]
    fn segment_names() {
        assert_eq!(segment_name(3), "000000000003.seg");
        assert_eq!(parse_segment_name("000000000003.seg"), Some(3));
        assert_eq!(parse_segment_name("3.seg"), None);
        assert_eq!(parse_segment_name("00000000000x.seg"), None);
        assert_eq!(
            parse_segment_name(&segment_name(MAX_NUMBER)),
            Some(MAX_NUMBER)
        );
        assert_eq!(parse_segment_name(&segment_name(u64::MAX)), None);
    }

    proptest! {
        /// Arbitrary bytes never panic the decoder and never decode to a
        /// record whose CRC does not match.
        #[test]
        fn arbitrary_bytes_decode_safely(b in proptest::collection::vec(any::<u8>(), 0..300), room in 0usize..400, expect in 0u64..4, v2 in any::<bool>()) {
            let room = room.max(b.len());
            let version = if v2 { FORMAT_VERSION } else { FORMAT_V1 };
            if let Decoded::Padding { span } = decode_record(&b, room, &KEY, expect, version) {
                prop_assert!(v2 && span <= room && span >= RECORD_HEADER_LEN);
            }
            if let Decoded::Record { lsn, payload, span } = decode_record(&b, room, &KEY, expect, version) {
                prop_assert_eq!(lsn, expect);
                prop_assert!(span <= room);
                let crc = u32::from_le_bytes(b[4..8].try_into().unwrap());
                prop_assert_eq!(record_crc(&KEY, lsn, payload), crc);
            }
            let _ = SegmentHeader::decode(&b);
        }
    }
}
