//! How the CLI prints numbers. Byte counts go through the library's
//! [`fspace::Size`] (the same units it parses); counts and durations are
//! presentation and belong here.

/// Formats a byte count for people: `1.5 GiB`, `512 B`.
pub(crate) fn format_human(n: u64) -> String {
    fspace::Size(n).to_string()
}

/// Formats a count rounded to a whole number with thousands separators:
/// `7,034`.
pub(crate) fn format_count(x: f64) -> String {
    let digits = (x.round().max(0.0) as u64).to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats a duration in seconds for people: `725 µs`, `1.4 ms`, `2.50 s`.
pub(crate) fn format_seconds(secs: f64) -> String {
    match secs {
        s if s < 1e-3 => format!("{:.0} µs", s * 1e6),
        s if s < 1.0 => format!("{:.1} ms", s * 1e3),
        s => format!("{s:.2} s"),
    }
}

/// The head of the probe's line on fspace's log against plain appending
/// (`LogVsAppend`), followed by its outcome: the text and the HTML report
/// print the same words.
pub(crate) const LOG_VS_APPEND: &str = "fspace's log against appending";

/// Splits `s` into lines of at most `width` characters at spaces (a longer
/// word gets a line of its own).
pub(crate) fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = vec![];
    let mut cur = String::new();
    // A number stays with its unit ("1.2 MiB" never ends one line and
    // starts the next).
    let mut words: Vec<String> = vec![];
    for w in s.split(' ') {
        let unit = ["B", "KiB", "MiB", "GiB", "TiB", "ms", "µs", "s"]
            .iter()
            .any(|u| {
                w.strip_prefix(u).is_some_and(|rest| {
                    rest.starts_with('/') || rest.chars().all(|c| c.is_ascii_punctuation())
                })
            });
        match words.last_mut() {
            Some(prev) if unit && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
    }
    for w in &words {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_a_number_with_its_unit() {
        let lines = wrap("48 MiB in 4 files, 804 KiB referenced, 1.2 MiB pinned", 44);
        assert_eq!(
            lines,
            ["48 MiB in 4 files, 804 KiB referenced,", "1.2 MiB pinned"].map(String::from)
        );
        // Words that merely start like a unit are not units.
        assert_eq!(
            wrap("3 runs so far", 5),
            ["3", "runs", "so", "far"].map(String::from)
        );
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(format_human(16 << 20), "16 MiB");
        assert_eq!(format_count(7034.4), "7,034");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_seconds(0.000725), "725 µs");
        assert_eq!(format_seconds(0.0014), "1.4 ms");
        assert_eq!(format_seconds(2.5), "2.50 s");
    }
}
