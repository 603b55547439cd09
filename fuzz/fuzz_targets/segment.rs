//! A whole log directory read back through the public reader
//! (`WalView::open_to_damage` and `WalView::open`, as `fspace wal dump` and
//! `fspace wal verify --strict` do). The input is a small program that
//! writes one to three segments: real records and padding (made by the
//! writer's encoder, so they pass their checksums), raw bytes, zero runs,
//! flipped bytes and a cut file. Whatever the bytes, the reader must not
//! panic, must hand out records with consecutive LSNs, and a log written
//! without damage must read back exactly as written.
#![no_main]

use fspace::internals::{
    encode_padding, encode_record, record_span, segment_name, RecordKey, SegmentHeader, FORMAT_V1,
    FORMAT_VERSION, RECORD_ALIGN, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN,
};
use fspace::wal::WalView;
use libfuzzer_sys::fuzz_target;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

const LOG_ID: [u8; 16] = *b"fuzz-log-id-0123";

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let Some(shape) = input.byte() else { return };
    let segments = 1 + usize::from(shape % 3);
    let size = [1024usize, 4096, 8192][usize::from(shape / 3 % 3)];
    let version = if shape & 0x80 != 0 {
        FORMAT_V1
    } else {
        FORMAT_VERSION
    };
    let first = 1 + u64::from(input.byte().unwrap_or(0));
    let Ok(dir) = tempfile::Builder::new().prefix("fspace-fuzz-").tempdir_in(
        if std::path::Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        },
    ) else {
        return;
    };
    let mut written: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut clean = true;
    let mut lsn = first;
    for s in 0..segments as u64 {
        let header = SegmentHeader {
            version,
            log_id: LOG_ID,
            seq: s + 1,
            size: size as u64,
            first_lsn: lsn,
            nonce: 0x5eed + s as u32,
        };
        let key = RecordKey::from(&header);
        let mut seg = header.encode().to_vec();
        let mut cut = None;
        while let Some(op) = input.byte() {
            let room = size - seg.len();
            match op % 8 {
                // A record (most often: programs are mostly records).
                0..=3 => {
                    let len = usize::from(input.byte().unwrap_or(0)) * usize::from(op / 8 + 1);
                    if version == FORMAT_V1 || record_span(len) > room {
                        break; // the segment is full: the next one starts
                    }
                    let payload = input.take(len).to_vec();
                    encode_record(&mut seg, &key, lsn, &payload);
                    written.push((lsn, payload));
                    lsn += 1;
                }
                // Padding before the next record.
                4 => {
                    let span = RECORD_HEADER_LEN
                        + RECORD_ALIGN * usize::from(input.byte().unwrap_or(0) % 16);
                    if version == FORMAT_V1 || span > room {
                        break;
                    }
                    encode_padding(&mut seg, &key, lsn, span);
                }
                // Raw bytes where a record belongs.
                5 => {
                    let n = usize::from(input.byte().unwrap_or(0)).min(room);
                    seg.extend_from_slice(input.take(n));
                    clean = false;
                }
                // A flipped byte anywhere already written (the header too).
                6 => {
                    let at = usize::from(input.byte().unwrap_or(0)) * 8
                        + usize::from(input.byte().unwrap_or(0));
                    let at = at % seg.len();
                    seg[at] ^= input.byte().unwrap_or(1) | 1;
                    clean = false;
                }
                // The file cut short here (a segment the writer never finished).
                _ => {
                    cut = Some(seg.len() - usize::from(input.byte().unwrap_or(0)).min(seg.len()));
                    clean = false;
                    break;
                }
            }
        }
        seg.resize(size.max(seg.len()), 0);
        if let Some(c) = cut {
            seg.truncate(c);
        }
        if std::fs::write(dir.path().join(segment_name(s + 1)), &seg).is_err() {
            return;
        }
        if input.0.is_empty() {
            break;
        }
    }
    let _ = SEGMENT_HEADER_LEN;

    let tolerant = WalView::open_to_damage(dir.path());
    let strict = WalView::open(dir.path());
    let read = |view: &WalView| -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        let Ok(reader) = view.read_from(view.first_lsn()) else {
            return out;
        };
        let mut expect = view.first_lsn().0;
        for rec in reader {
            let Ok(rec) = rec else { break };
            assert_eq!(rec.lsn.0, expect, "LSNs run in sequence");
            expect += 1;
            out.push((rec.lsn.0, rec.data));
        }
        assert!(expect <= view.next_lsn().0, "no record at or past next_lsn");
        out
    };
    let tolerant_records = tolerant.as_ref().ok().map(read);
    // Records are checksummed with their segment and LSN: whatever is read,
    // even from a damaged log, is a record that was written, byte for byte.
    for (lsn, data) in tolerant_records.iter().flatten() {
        assert!(
            written.iter().any(|(l, d)| l == lsn && d == data),
            "record {lsn} read back was never written ({} bytes)",
            data.len()
        );
    }
    if let Ok(view) = &strict {
        assert!(view.damage().is_none(), "a strict open holds no damage");
        let records = read(view);
        // Where both open, they agree.
        if let Some(t) = &tolerant_records {
            assert_eq!(&records, t);
        }
    }
    if clean && version == FORMAT_VERSION {
        let records = tolerant_records.expect("a log written without damage opens");
        assert_eq!(
            records, written,
            "a log written without damage reads back whole"
        );
        assert!(
            strict.is_ok(),
            "a log written without damage opens strictly: {strict:?}"
        );
    }
});
