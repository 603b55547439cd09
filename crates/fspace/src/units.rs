//! Byte sizes: parsing `16M`, `1.5GiB`, `4096`; printing `16MiB`.

use std::ops::Range;

/// Why a size string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// Empty input.
    #[error("empty size")]
    Empty,
    /// A leading minus sign.
    #[error("size {0:?} is negative; sizes are byte counts >= 0")]
    Negative(String),
    /// Not a number followed by an optional unit.
    #[error("size {0:?} is not a number of bytes (examples: 4096, 64K, 16MiB, 1.5G, 2T)")]
    Invalid(String),
    /// Larger than 2^64 - 1 bytes.
    #[error("size {0:?} does not fit in 64 bits")]
    Overflow(String),
    /// A fraction that is not a whole number of bytes.
    #[error("size {0:?} is not a whole number of bytes")]
    Fraction(String),
}

/// A byte count as people write and read it: parsed from `4096`, `64K`,
/// `16MiB`, `1.5G` or `10MB` ([`FromStr`](std::str::FromStr), the rules of
/// the command line's sizes) and printed as `16 MiB`, `1.5 GiB` or
/// `512 B` ([`Display`](std::fmt::Display); `{:#}` prints the exact form,
/// `16MiB`, or plain bytes when no binary unit divides it).
///
/// ```
/// use fspace::Size;
/// let s: Size = "16M".parse().unwrap();
/// assert_eq!(s.bytes(), 16 << 20);
/// assert_eq!("1MB".parse::<Size>().unwrap().bytes(), 1_000_000);
/// assert_eq!(s.to_string(), "16 MiB");
/// assert_eq!(format!("{:#}", Size(4097)), "4097");
/// assert!("1.1K".parse::<Size>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Size(pub u64);

impl Size {
    /// The largest length Linux allows a file (`loff_t` is signed 64-bit):
    /// 2^63 - 1 bytes.
    pub const MAX_FILE: Size = Size(MAX_FILE_SIZE);

    /// Returns the count in bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl std::str::FromStr for Size {
    type Err = SizeError;

    /// Parses a byte count: plain digits, or a number (decimals allowed)
    /// with a unit. `K`, `M`, `G`, `T`, `P`, `E` and `KiB` ... `EiB` are
    /// binary (`16M` = `16MiB` = 16 × 2^20); `kB`/`KB`, `MB`, `GB`, `TB`,
    /// `PB`, `EB` are decimal (`1MB` = 1,000,000), as in GNU `truncate` and
    /// `dd`. `B` or no unit means bytes; a lowercase `b` (`1b`, `4Kb`:
    /// blocks or bits elsewhere) is refused. A fraction must come to a
    /// whole number of bytes (`1.5K` is 1536; `1.1K` is refused).
    fn from_str(s: &str) -> Result<Size, SizeError> {
        parse_size(s).map(Size)
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            f.write_str(&format_exact(self.0))
        } else {
            f.write_str(&format_human(self.0))
        }
    }
}

impl From<u64> for Size {
    fn from(n: u64) -> Size {
        Size(n)
    }
}

impl From<Size> for u64 {
    fn from(s: Size) -> u64 {
        s.0
    }
}

/// The largest length Linux allows a file (`loff_t` is signed 64-bit):
/// 2^63 - 1 bytes.
pub const MAX_FILE_SIZE: u64 = i64::MAX as u64;

/// Parses a byte count: plain digits, or a number (decimals allowed) with a
/// unit. `K`, `M`, `G`, `T`, `P`, `E` and `KiB` ... `EiB` are binary
/// (`16M` = `16MiB` = 16 × 2^20); `kB`/`KB`, `MB`, `GB`, `TB`, `PB`, `EB`
/// are decimal (`1MB` = 1,000,000), as in GNU `truncate` and `dd`. `B` or no
/// unit means bytes; a lowercase `b` (`1b`, `4Kb`: blocks or bits
/// elsewhere) is refused. A fraction must come to a whole number of bytes
/// (`1.5K` is 1536; `1.1K` is refused rather than rounded).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(SizeError::Empty);
    }
    if t.starts_with('-') {
        return Err(SizeError::Negative(s.to_string()));
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    // A lowercase `b` alone or after a unit (`1b`, `4Kb`) means 512-byte
    // blocks to dd and bits to others: refuse rather than guess.
    if unit.ends_with('b') {
        return Err(SizeError::Invalid(s.to_string()));
    }
    let (base, power): (u128, u32) = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => (1, 0),
        "k" | "kib" => (1024, 1),
        "m" | "mib" => (1024, 2),
        "g" | "gib" => (1024, 3),
        "t" | "tib" => (1024, 4),
        "p" | "pib" => (1024, 5),
        "e" | "eib" => (1024, 6),
        "kb" => (1000, 1),
        "mb" => (1000, 2),
        "gb" => (1000, 3),
        "tb" => (1000, 4),
        "pb" => (1000, 5),
        "eb" => (1000, 6),
        _ => return Err(SizeError::Invalid(s.to_string())),
    };
    let scale_unit = base.pow(power);
    if num.is_empty() || num.matches('.').count() > 1 || num == "." {
        return Err(SizeError::Invalid(s.to_string()));
    }
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let int_v: u128 = if int.is_empty() {
        0
    } else {
        int.parse::<u128>()
            .map_err(|_| SizeError::Overflow(s.to_string()))?
    };
    let mut total: u128 = int_v
        .checked_mul(scale_unit)
        .ok_or_else(|| SizeError::Overflow(s.to_string()))?;
    let frac = frac.trim_end_matches('0');
    if !frac.is_empty() {
        if frac.len() > 30 {
            return Err(SizeError::Fraction(s.to_string()));
        }
        let f: u128 = frac
            .parse()
            .map_err(|_| SizeError::Invalid(s.to_string()))?;
        let denom = 10u128.pow(frac.len() as u32);
        let num = f
            .checked_mul(scale_unit)
            .ok_or_else(|| SizeError::Overflow(s.to_string()))?;
        if num % denom != 0 {
            return Err(SizeError::Fraction(s.to_string()));
        }
        total += num / denom;
    }
    u64::try_from(total).map_err(|_| SizeError::Overflow(s.to_string()))
}

/// Binary units, largest first, as (shift, name).
const BINARY_UNITS: [(u32, &str); 6] = [
    (60, "EiB"),
    (50, "PiB"),
    (40, "TiB"),
    (30, "GiB"),
    (20, "MiB"),
    (10, "KiB"),
];

/// Formats a byte count exactly: `16MiB` when it is a whole number of a
/// binary unit, plain bytes otherwise (`4097`).
pub fn format_exact(n: u64) -> String {
    if n == 0 {
        return "0".into();
    }
    for (shift, name) in BINARY_UNITS {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{}", n >> shift, name);
        }
    }
    n.to_string()
}

/// Formats a byte count for people: `1.5 GiB`, `512 B`.
pub fn format_human(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut i = 0;
    // 1023.95 and up would print as "1024.0": move to the next unit.
    while v >= 1023.95 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// A count for people: rounded to a whole number, with thousands
/// separators (`7,034`). The one formatting of counts the library's
/// reports and the CLI print (as [`Size`] is of bytes).
///
/// ```
/// assert_eq!(fspace::Count(7034.4).to_string(), "7,034");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Count(pub f64);

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = (self.0.round().max(0.0) as u64).to_string();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                f.write_str(",")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// A duration in seconds for people: `725 µs`, `1.4 ms`, `2.50 s`. The one
/// formatting of durations the library's reports and the CLI print.
///
/// ```
/// assert_eq!(fspace::Seconds(0.0014).to_string(), "1.4 ms");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Seconds(pub f64);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.0;
        if secs < 1e-3 {
            write!(f, "{:.0} µs", secs * 1e6)
        } else if secs < 1.0 {
            write!(f, "{:.1} ms", secs * 1e3)
        } else {
            write!(f, "{secs:.2} s")
        }
    }
}

/// [`Count`] as a `String`.
pub fn format_count(x: f64) -> String {
    Count(x).to_string()
}

/// [`Seconds`] as a `String`.
pub fn format_seconds(secs: f64) -> String {
    Seconds(secs).to_string()
}

/// Formats a range as `start..end` in the largest binary unit that
/// divides both ends (`0..16MiB`, `4KiB..8KiB`, `4097..8192`).
pub fn format_range(r: &Range<u64>) -> String {
    let both = r.start | r.end;
    for (shift, name) in BINARY_UNITS {
        let m = (1u64 << shift) - 1;
        if both & m == 0 && r.end >= 1 << shift {
            let fmt = |v: u64| {
                if v == 0 {
                    "0".to_string()
                } else {
                    format!("{}{name}", v >> shift)
                }
            };
            return format!("{}..{}", fmt(r.start), fmt(r.end));
        }
    }
    format!("{}..{}", r.start, r.end)
}

/// Serializes a path as a string, replacing bytes that are not UTF-8 (a
/// report must not fail after the work it reports was done).
pub(crate) fn ser_path_lossy<S: serde::Serializer>(
    p: &std::path::Path,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// [`ser_path_lossy`] for an optional path (`null` when absent).
#[allow(clippy::ref_option)] // serde's serialize_with passes a reference
pub(crate) fn ser_opt_path_lossy<S: serde::Serializer>(
    p: &Option<std::path::PathBuf>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// Serializes a duration as milliseconds with microsecond precision
/// (`elapsed_ms` in every report).
pub(crate) fn ser_ms<S: serde::Serializer>(
    d: &std::time::Duration,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1e6).round() / 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_seconds_and_errno_words() {
        assert_eq!(format_count(0.4), "0");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_count(7034.2), "7,034");
        assert_eq!(format_count(1_234_567.0), "1,234,567");
        assert_eq!(format_seconds(0.000_725), "725 µs");
        assert_eq!(format_seconds(0.0014), "1.4 ms");
        assert_eq!(format_seconds(2.5), "2.50 s");
    }

    #[test]
    fn parses_plain_and_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("16MB"), Ok(16_000_000));
        assert_eq!(parse_size("4kB"), Ok(4000));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size("1.50K"), Ok(1536));
        assert_eq!(parse_size("2.0M"), Ok(2 << 20));
        assert_eq!(parse_size("2TiB"), Ok(2 << 40));
        assert_eq!(parse_size("100B"), Ok(100));
        assert_eq!(parse_size("15E"), Ok(15 << 60));
    }

    #[test]
    fn rejects_garbage_negative_and_overflow() {
        assert!(matches!(parse_size(""), Err(SizeError::Empty)));
        assert!(matches!(parse_size("abc"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("12Q"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("1b"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("4Kb"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("4Mb"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("1.2.3M"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("1.5"), Err(SizeError::Fraction(_))));
        assert!(matches!(parse_size("1.1K"), Err(SizeError::Fraction(_))));
        assert!(matches!(
            parse_size("1.0000001K"),
            Err(SizeError::Fraction(_))
        ));
        assert!(matches!(parse_size("-1"), Err(SizeError::Negative(_))));
        assert!(matches!(parse_size("-4K"), Err(SizeError::Negative(_))));
        assert!(matches!(
            parse_size("18446744073709551616"),
            Err(SizeError::Overflow(_))
        ));
        assert!(matches!(parse_size("16E"), Err(SizeError::Overflow(_))));
        assert!(matches!(
            parse_size("99999999999999999999999999999999999999999"),
            Err(SizeError::Overflow(_))
        ));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn formats() {
        assert_eq!(format_exact(16 << 20), "16MiB");
        assert_eq!(format_exact(4097), "4097");
        assert_eq!(format_exact(0), "0");
        assert_eq!(format_human(1536 << 20), "1.5 GiB");
        assert_eq!(format_human(512), "512 B");
        assert_eq!(format_human((1 << 40) - 1), "1.0 TiB");
        assert_eq!(format_range(&(0..16 << 20)), "0..16MiB");
        assert_eq!(
            format_range(&(274944 << 10..400 << 20)),
            "274944KiB..409600KiB"
        );
        assert_eq!(format_range(&(4097..8192)), "4097..8192");
        assert_eq!(format_range(&(0..0)), "0..0");
    }
}
