//! The text exposition format: gauges with their help and samples, the
//! label values and help texts escaped, the values spelled as the format
//! wants.

/// One metric family: a gauge with its help and samples.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

/// The metrics of one file, families in the order first added.
#[derive(Default)]
pub(in crate::probe) struct Metrics {
    /// Labels every sample carries, first.
    common: Vec<(&'static str, String)>,
    families: Vec<Family>,
}

impl Metrics {
    /// Metrics whose samples all carry `common` first.
    pub(super) fn with_labels(common: Vec<(&'static str, String)>) -> Metrics {
        Metrics {
            common,
            families: vec![],
        }
    }

    /// Adds a sample of gauge `name` (created on first use with `help`):
    /// one family per name, however often it is added to.
    pub(super) fn gauge(
        &mut self,
        name: &'static str,
        help: &'static str,
        labels: &[(&'static str, &str)],
        value: f64,
    ) {
        let labels: Vec<(&'static str, String)> = self
            .common
            .iter()
            .cloned()
            .chain(labels.iter().map(|(k, v)| (*k, v.to_string())))
            .collect();
        match self.families.iter_mut().find(|f| f.name == name) {
            Some(f) => f.samples.push((labels, value)),
            None => self.families.push(Family {
                name,
                help,
                samples: vec![(labels, value)],
            }),
        }
    }

    /// The exposition text: per family `# HELP`, `# TYPE ... gauge`, then
    /// its samples, no timestamps; a final newline.
    pub(in crate::probe) fn render(&self) -> String {
        let mut o = String::new();
        for f in &self.families {
            out!(o, "# HELP {} {}", f.name, escape_help(f.help));
            out!(o, "# TYPE {} gauge", f.name);
            for (labels, v) in &f.samples {
                let l: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                if l.is_empty() {
                    out!(o, "{} {}", f.name, value(*v));
                } else {
                    out!(o, "{}{{{}}} {}", f.name, l.join(","), value(*v));
                }
            }
        }
        o
    }
}

/// A label value escaped as the exposition format asks: backslash, double
/// quote and line feed as `\\`, `\"` and `\n`.
fn escape_label(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// A help text escaped as the exposition format asks: backslash and line
/// feed.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: a Go-parsable float (`NaN`, `+Inf`, `-Inf` spelled as
/// the format wants).
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

pub(super) fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family once, with HELP and TYPE before its samples.
    fn check_families(text: &str) -> Vec<String> {
        let mut seen: Vec<String> = vec![];
        let mut current = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let name = rest.split(' ').next().unwrap().to_string();
                assert!(!seen.contains(&name), "{name} twice:\n{text}");
                seen.push(name.clone());
                current = name;
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                assert_eq!(rest, format!("{current} gauge"), "{text}");
            } else {
                let name = line.split(['{', ' ']).next().unwrap();
                assert_eq!(name, current, "sample outside its family:\n{text}");
                // A value and no timestamp.
                let after = line
                    .rsplit_once("} ")
                    .map_or_else(|| line.split_once(' ').unwrap().1, |(_, v)| v);
                assert!(!after.contains(' '), "timestamp or junk: {line}");
                assert!(
                    after.parse::<f64>().is_ok() || ["NaN", "+Inf", "-Inf"].contains(&after),
                    "{line}"
                );
            }
        }
        seen
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("line\nnext"), r"line\nnext");
        assert_eq!(escape_label("/mnt/ök dir"), "/mnt/ök dir");
        assert_eq!(escape_help("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
        let mut m = Metrics::with_labels(vec![("path", "/srv/\"odd\"\\\ndir".into())]);
        m.gauge("fspace_probe_x", "help", &[("state", "zero-filled")], 1.5);
        assert_eq!(
            m.render(),
            "# HELP fspace_probe_x help\n# TYPE fspace_probe_x gauge\n\
             fspace_probe_x{path=\"/srv/\\\"odd\\\"\\\\\\ndir\",state=\"zero-filled\"} 1.5\n"
        );
    }

    #[test]
    fn each_family_has_help_and_type_once() {
        let mut m = Metrics::default();
        m.gauge("fspace_probe_a", "A.", &[("k", "1")], 1.0);
        m.gauge("fspace_probe_b", "B.", &[], 2.0);
        // Added to again after another family: still one family, its
        // samples together.
        m.gauge("fspace_probe_a", "A.", &[("k", "2")], 3.0);
        let text = m.render();
        assert_eq!(check_families(&text), ["fspace_probe_a", "fspace_probe_b"]);
        assert_eq!(
            text,
            "# HELP fspace_probe_a A.\n# TYPE fspace_probe_a gauge\n\
             fspace_probe_a{k=\"1\"} 1\nfspace_probe_a{k=\"2\"} 3\n\
             # HELP fspace_probe_b B.\n# TYPE fspace_probe_b gauge\nfspace_probe_b 2\n"
        );
    }

    #[test]
    fn special_values_are_spelled_as_the_format_wants() {
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "+Inf");
        assert_eq!(value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(value(1e21), "1000000000000000000000");
        assert_eq!(value(0.25), "0.25");
    }
}
