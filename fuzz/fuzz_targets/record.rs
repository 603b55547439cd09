//! The record decoder on arbitrary bytes at arbitrary positions and
//! versions, and on records whose checksum is made right so that the
//! length, padding and LSN checks run. Whatever it decodes must lie within
//! the bytes and the room it was given, and a record encoded by the
//! writer must decode to itself.
#![no_main]

use fspace::internals::{
    decode_record, encode_record, record_crc, record_span, Decoded, RecordKey, FORMAT_V1,
    FORMAT_VERSION, RECORD_HEADER_LEN,
};
use libfuzzer_sys::fuzz_target;

const KEY: RecordKey = RecordKey {
    log_id: *b"fuzz-log-id-0123",
    seq: 7,
    nonce: 0x5eed,
};

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

fn decode_checked(b: &[u8], room: usize, expect: u64, version: u32) {
    match decode_record(b, room, &KEY, expect, version) {
        Decoded::Record { lsn, payload, span } => {
            assert_eq!(lsn, expect);
            assert!(span <= room && span >= RECORD_HEADER_LEN + payload.len());
            assert!(RECORD_HEADER_LEN + payload.len() <= b.len());
            // The payload is the bytes after the header, as long as the
            // length word says.
            let word = le32(&b[0..4]) as usize;
            assert_eq!(payload, &b[RECORD_HEADER_LEN..RECORD_HEADER_LEN + word]);
        }
        Decoded::Padding { span } => {
            assert!(span <= room && span >= RECORD_HEADER_LEN);
            assert_ne!(version, FORMAT_V1, "format 1 has no padding records");
        }
        Decoded::NeedMore(n) => assert!(n > b.len() && n <= room, "{n} {} {room}", b.len()),
        Decoded::End(_) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 12 {
        return;
    }
    let version = if data[0] & 1 == 0 {
        FORMAT_VERSION
    } else {
        FORMAT_V1
    };
    let expect = le64(&data[1..9]) % 1024;
    let extra = (le32(&data[8..12]) % 65536) as usize;
    let body = &data[12..];
    // As read: `room` at least the bytes given.
    decode_checked(body, body.len() + extra, expect, version);
    decode_checked(body, body.len(), expect, version);
    // With the checksum made right for the record the bytes describe.
    if body.len() >= RECORD_HEADER_LEN {
        let mut b = body.to_vec();
        let word = le32(&b[0..4]);
        let lsn = le64(&b[8..16]);
        let len = (word as usize).min(b.len() - RECORD_HEADER_LEN);
        let crc = record_crc(&KEY, lsn, &b[RECORD_HEADER_LEN..RECORD_HEADER_LEN + len]);
        b[4..8].copy_from_slice(&crc.to_le_bytes());
        decode_checked(&b, b.len() + extra, expect, version);
        decode_checked(&b, b.len(), lsn, version);
    }
    // The writer's own encoding reads back as itself.
    let mut out = Vec::new();
    encode_record(&mut out, &KEY, expect, body);
    assert_eq!(out.len(), record_span(body.len()));
    match decode_record(&out, out.len(), &KEY, expect, FORMAT_VERSION) {
        Decoded::Record { lsn, payload, span } => {
            assert_eq!((lsn, payload, span), (expect, body, out.len()));
        }
        other => panic!("own record decoded as {other:?}"),
    }
});
