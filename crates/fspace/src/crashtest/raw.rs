//! The recording preload's records (`ops.bin`, format version 1): a
//! magic, then records of a 112-byte little-endian header, two paths and
//! the data (docs/crashtest.md "Trace format"). Decoding only: the
//! preload (C, in the CLI) writes them.

use crate::error::{Error, Result};
use std::path::Path;

/// The first 8 bytes of `ops.bin`.
pub const MAGIC: &[u8; 8] = b"FSPCTRW1";
/// The record format this library reads.
pub const VERSION: u16 = 1;
const HEADER: usize = 112;

/// One record as the preload wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawRecord {
    pub kind: u16,
    pub pid: u32,
    pub t_ns: u64,
    pub ret: i64,
    pub err: i32,
    pub fd: i32,
    pub ino: u64,
    pub ino2: u64,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub d: u64,
    pub dev: u64,
    pub path1: Vec<u8>,
    pub path2: Vec<u8>,
    pub data: Vec<u8>,
    /// Byte offset of the record in the file (for error messages).
    pub at: u64,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(x)
}

/// Decodes a whole `ops.bin`. A record cut short at the end (the program
/// was killed while the preload wrote it) ends the list; anything else
/// malformed is `Corrupt`, naming the offset.
pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<Vec<RawRecord>> {
    let corrupt = |offset: usize, message: String| Error::Corrupt {
        op: "read crashtest trace",
        path: path.to_path_buf(),
        offset: offset as u64,
        message,
    };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(corrupt(
            0,
            format!(
                "not a recording: it does not start with {:?}",
                std::str::from_utf8(MAGIC).unwrap_or("")
            ),
        ));
    }
    let mut out = Vec::new();
    let mut at = MAGIC.len();
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.len() < HEADER {
            break;
        }
        let len = u32_at(rest, 0) as usize;
        let version = u16_at(rest, 6);
        if version != VERSION {
            return Err(corrupt(
                at,
                format!("record format {version}, this fspace reads {VERSION}"),
            ));
        }
        let (l1, l2, ld) = (
            u32_at(rest, 96) as usize,
            u32_at(rest, 100) as usize,
            u32_at(rest, 104) as usize,
        );
        let expected = HEADER
            .checked_add(l1)
            .and_then(|x| x.checked_add(l2))
            .and_then(|x| x.checked_add(ld));
        if expected != Some(len) {
            return Err(corrupt(
                at,
                format!("record length {len} does not match its header and lengths {l1}+{l2}+{ld}"),
            ));
        }
        if rest.len() < len {
            break;
        }
        let body = &rest[HEADER..len];
        out.push(RawRecord {
            kind: u16_at(rest, 4),
            pid: u32_at(rest, 8),
            t_ns: u64_at(rest, 16),
            ret: u64_at(rest, 24) as i64,
            err: u32_at(rest, 32) as i32,
            fd: u32_at(rest, 36) as i32,
            ino: u64_at(rest, 40),
            ino2: u64_at(rest, 48),
            a: u64_at(rest, 56),
            b: u64_at(rest, 64),
            c: u64_at(rest, 72),
            d: u64_at(rest, 80),
            dev: u64_at(rest, 88),
            path1: body[..l1].to_vec(),
            path2: body[l1..l1 + l2].to_vec(),
            data: body[l1 + l2..].to_vec(),
            at: at as u64,
        });
        at += len;
    }
    Ok(out)
}

/// Encodes a record as the preload does (the tests' traces).
#[cfg(test)]
pub(crate) fn encode(r: &RawRecord) -> Vec<u8> {
    let len = HEADER + r.path1.len() + r.path2.len() + r.data.len();
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&(len as u32).to_le_bytes());
    v.extend_from_slice(&r.kind.to_le_bytes());
    v.extend_from_slice(&VERSION.to_le_bytes());
    v.extend_from_slice(&r.pid.to_le_bytes());
    v.extend_from_slice(&r.pid.to_le_bytes());
    v.extend_from_slice(&r.t_ns.to_le_bytes());
    v.extend_from_slice(&r.ret.to_le_bytes());
    v.extend_from_slice(&r.err.to_le_bytes());
    v.extend_from_slice(&r.fd.to_le_bytes());
    for x in [r.ino, r.ino2, r.a, r.b, r.c, r.d, r.dev] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [r.path1.len(), r.path2.len(), r.data.len(), 0] {
        v.extend_from_slice(&(x as u32).to_le_bytes());
    }
    v.extend_from_slice(&r.path1);
    v.extend_from_slice(&r.path2);
    v.extend_from_slice(&r.data);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_cut_record() {
        let r = RawRecord {
            kind: 3,
            pid: 7,
            t_ns: 9,
            ret: 5,
            err: 0,
            fd: 4,
            ino: 11,
            ino2: 0,
            a: 100,
            b: 5,
            c: 0,
            d: 1,
            dev: 2,
            path1: b"/x".to_vec(),
            path2: vec![],
            data: b"hello".to_vec(),
            at: 8,
        };
        let mut bytes = MAGIC.to_vec();
        bytes.extend(encode(&r));
        let full = bytes.len();
        bytes.extend(encode(&r));
        let got = decode(&bytes, Path::new("t")).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], r);
        // Cut in the middle of the second: the first survives.
        let got = decode(&bytes[..full + 50], Path::new("t")).unwrap();
        assert_eq!(got, vec![r]);
        assert!(decode(b"nope", Path::new("t")).is_err());
    }
}
