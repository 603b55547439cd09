//! How the CLI prints numbers: byte counts, counts and durations through
//! the library's [`fspace::Size`], [`fspace::Count`] and
//! [`fspace::Seconds`], so that the CLI and the library's own sentences
//! print them alike; and how it wraps text.

/// Formats a byte count for people: `1.5 GiB`, `512 B`.
pub(crate) fn format_human(n: u64) -> String {
    fspace::Size(n).to_string()
}

/// Formats a count rounded to a whole number with thousands separators:
/// `7,034` (the library's [`fspace::Count`]).
pub(crate) fn format_count(x: f64) -> String {
    fspace::Count(x).to_string()
}

/// Formats a duration in seconds for people: `725 µs`, `1.4 ms`, `2.50 s`
/// (the library's [`fspace::Seconds`]).
pub(crate) fn format_seconds(secs: f64) -> String {
    fspace::Seconds(secs).to_string()
}

/// The head of the probe's line on fspace's log against plain appending
/// (`LogVsAppend`), followed by its outcome: the text and the HTML report
/// print the same words.
pub(crate) const LOG_VS_APPEND: &str = "fspace's log against appending";

/// The width every line of text output fits in (a terminal's default).
pub(crate) const COLUMNS: usize = 80;

/// Splits `s` into lines of at most `width` characters at spaces. A word
/// longer than a line (a path, mostly) is cut: after its last `/` that
/// leaves the line at least half full, else where the line ends.
pub(crate) fn wrap(s: &str, width: usize) -> Vec<String> {
    wrap_hanging(s, width, width)
}

/// [`wrap`] with a first line of at most `first` characters and later
/// lines of at most `rest`.
fn wrap_hanging(s: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut cur = String::new();
    // A number stays with its unit ("1.2 MiB" never ends one line and
    // starts the next), and an errno with its word ("os error 28").
    let mut words: Vec<String> = vec![];
    for w in s.split(' ') {
        if let Some(prev) = words.last_mut() {
            let errno = prev.ends_with("error") && w.starts_with(|c: char| c.is_ascii_digit());
            if errno || prev.ends_with("(os") && w == "error" {
                prev.push(' ');
                prev.push_str(w);
                continue;
            }
        }
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
    let chars = |s: &str| s.chars().count();
    for w in &words {
        let mut w = w.as_str();
        loop {
            let width = if lines.is_empty() { first } else { rest }.max(1);
            let room = if cur.is_empty() {
                width
            } else {
                width.saturating_sub(chars(&cur) + 1)
            };
            if chars(w) <= room {
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur.push_str(w);
                break;
            }
            // It fits a line of its own, or too little of it would fit
            // here: a new line.
            if !cur.is_empty() && (chars(w) <= rest || room == 0 || room < rest / 2) {
                lines.push(std::mem::take(&mut cur));
                continue;
            }
            // Longer than a line: as much as fits here, unless only a
            // fresh line can end it at a `/`.
            let cut = cut_at(w, room);
            if !cur.is_empty() && !w[..cut].ends_with('/') && w[..cut_at(w, rest)].ends_with('/') {
                lines.push(std::mem::take(&mut cur));
                continue;
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(&w[..cut]);
            lines.push(std::mem::take(&mut cur));
            w = &w[cut..];
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Where to cut `w` to keep at most `room` characters before the cut
/// (a byte index): after its last `/` that keeps at least half of them,
/// else at `room`.
fn cut_at(w: &str, room: usize) -> usize {
    let room = room.max(1);
    let end = w.char_indices().nth(room).map_or(w.len(), |(i, _)| i);
    match w[..end].rfind('/') {
        Some(i) if w[..=i].chars().count() * 2 >= room => i + 1,
        _ => end,
    }
}

/// Appends `text` wrapped to [`COLUMNS`]: its first line after `head`,
/// the others indented by `indent` spaces.
pub(crate) fn hanging(o: &mut String, head: &str, indent: usize, text: &str) {
    let first = COLUMNS.saturating_sub(head.chars().count());
    let rest = COLUMNS.saturating_sub(indent);
    let lines = wrap_hanging(text, first, rest);
    if lines.is_empty() {
        o.push_str(head.trim_end());
        o.push('\n');
    }
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            o.push_str(head);
        } else {
            o.extend(std::iter::repeat_n(' ', indent));
        }
        o.push_str(line);
        o.push('\n');
    }
}

/// Appends `text` after its label `head` (`"path:          "`), wrapped
/// to [`COLUMNS`] with the later lines under the first.
pub(crate) fn labelled(o: &mut String, head: &str, text: &str) {
    hanging(o, head, head.chars().count(), text);
}

/// `text` wrapped to 80 columns: two spaces in, four on later lines.
pub(crate) fn indented(o: &mut String, text: &str) {
    for (i, line) in wrap(text, 76).iter().enumerate() {
        out!(o, "{}{line}", if i == 0 { "  " } else { "    " });
    }
}

/// `text` with each path inside the directory `dir` that the user named
/// shortened to its name within it (`fallocate(DIR/.fspace-probe-1/f, ...`
/// becomes `fallocate(.fspace-probe-1/f, ...`): the scratch files of a
/// run, which the text already says are in `dir`. A path counts where it
/// starts the text or follows a space or a parenthesis.
pub(crate) fn within(text: &str, dir: &std::path::Path) -> String {
    let d = dir.to_string_lossy();
    let d = d.trim_end_matches('/');
    if d.is_empty() {
        return text.to_string();
    }
    let prefix = format!("{d}/");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(&prefix) {
        let starts = match rest[..i].chars().next_back() {
            None => out.is_empty() || out.ends_with([' ', '(']),
            Some(c) => c == ' ' || c == '(',
        };
        out.push_str(&rest[..i]);
        if !starts {
            out.push_str(&prefix);
        }
        rest = &rest[i + prefix.len()..];
    }
    out.push_str(rest);
    out
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
        // An errno stays with its word.
        assert_eq!(
            wrap("Operation not supported (os error 95)", 32),
            ["Operation not supported", "(os error 95)"].map(String::from)
        );
        // Words that merely start like a unit are not units.
        assert_eq!(
            wrap("3 runs so far", 5),
            ["3", "runs", "so", "far"].map(String::from)
        );
    }

    #[test]
    fn wrap_cuts_a_word_longer_than_a_line_after_a_slash() {
        let path = "/tmp/fspace-matrix/mnt/ext4/a-directory-with-a-long-name/wz.img,";
        let lines = wrap(&format!("fallocate({path} 0..16MiB): refused"), 40);
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert_eq!(lines[0], "fallocate(/tmp/fspace-matrix/mnt/ext4/");
        // Nothing lost, nothing added but the cuts.
        assert_eq!(
            lines.concat(),
            format!("fallocate({path}0..16MiB): refused")
        );
        // No `/` to cut after: cut where the line ends.
        let word = "x".repeat(25);
        assert_eq!(
            wrap(&word, 10),
            ["x".repeat(10), "x".repeat(10), "x".repeat(5)]
        );
        // A word that fits a line of its own is never cut.
        assert_eq!(
            wrap("a b /usr/share/doc/fspace", 22),
            ["a b", "/usr/share/doc/fspace"].map(String::from)
        );
    }

    #[test]
    fn hanging_lines_fit_80_columns() {
        let mut o = String::new();
        let long = format!("/{}/file", "d".repeat(120));
        labelled(&mut o, "path:          ", &format!("{long} (created)"));
        let lines: Vec<&str> = o.lines().collect();
        assert!(lines.len() >= 2, "{o}");
        assert!(lines.iter().all(|l| l.chars().count() <= COLUMNS), "{o}");
        assert!(
            lines[1..].iter().all(|l| l.starts_with(&" ".repeat(15))),
            "{o}"
        );
        let mut o = String::new();
        hanging(&mut o, "note: ", 2, &"word ".repeat(30));
        assert!(o.lines().skip(1).all(|l| l.starts_with("  word")), "{o}");
    }

    #[test]
    fn within_names_files_inside_the_directory() {
        let d = std::path::Path::new("/mnt/x/dir");
        assert_eq!(
            within("fallocate(/mnt/x/dir/.scratch/f, 0..1MiB): no", d),
            "fallocate(.scratch/f, 0..1MiB): no"
        );
        assert_eq!(within("/mnt/x/dir/a and /mnt/x/dir/b", d), "a and b");
        // Only a whole path: not one that merely ends the same way.
        assert_eq!(within("/y/mnt/x/dir/a", d), "/y/mnt/x/dir/a");
        assert_eq!(within("/mnt/x/directory/a", d), "/mnt/x/directory/a");
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
