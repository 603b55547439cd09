//! Horizontal bar charts as inline SVG for the probe's report: a value
//! axis (linear or log), group headings, bars with their text, and every
//! run of a bar drawn over it (a line from the slowest to the fastest, a
//! dot each). The SVG scales to the page (the report's style sheet).

use std::fmt::Write;

/// `s` escaped for HTML text and attributes.
pub(super) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Scale {
    Linear,
    Log,
}

/// One bar of a chart; `value` None draws the text only (not supported).
/// `runs`, when there are two or more, are drawn over the bar: a line from
/// the slowest to the fastest and a dot per run.
#[derive(Default)]
pub(super) struct Row {
    pub(super) group: Option<String>,
    pub(super) label: String,
    pub(super) value: Option<f64>,
    pub(super) runs: Vec<f64>,
    pub(super) text: String,
    pub(super) class: &'static str,
}

const LABEL_W: f64 = 190.0;
const BAR_W: f64 = 360.0;
const ROW_H: f64 = 24.0;
const GROUP_H: f64 = 22.0;

/// A chart's value axis: where a value's bar ends.
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl Axis {
    /// The axis that holds every positive value of `rows`.
    fn of(rows: &[Row], scale: Scale) -> Axis {
        let vals: Vec<f64> = rows
            .iter()
            .flat_map(|r| r.value.into_iter().chain(r.runs.iter().copied()))
            .filter(|v| *v > 0.0)
            .collect();
        let max = vals.iter().copied().fold(0.0, f64::max);
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let (lo, hi) = match scale {
            Scale::Linear => (0.0, nice_max(max)),
            Scale::Log => (
                (min.max(1e-12).log10().floor()),
                (max.max(1e-12).log10().ceil()).max(min.max(1e-12).log10().floor() + 1.0),
            ),
        };
        Axis { scale, lo, hi }
    }

    /// The bar length of `v`.
    fn len(&self, v: f64) -> f64 {
        if v <= 0.0 || self.hi <= self.lo {
            return 0.0;
        }
        (self.fraction(v) * BAR_W).clamp(2.0, BAR_W)
    }

    fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v / self.hi,
            Scale::Log => (v.log10() - self.lo) / (self.hi - self.lo),
        }
    }

    /// The grid lines with their labels, and the unit.
    fn ticks(&self, unit: &str, height: f64) -> String {
        let ticks: Vec<(f64, String)> = match self.scale {
            Scale::Linear => (0..=4)
                .map(|i| {
                    let v = self.hi * f64::from(i) / 4.0;
                    (v, short(v))
                })
                .collect(),
            Scale::Log => (self.lo as i32..=self.hi as i32)
                .map(|e| (10f64.powi(e), short(10f64.powi(e))))
                .collect(),
        };
        let mut s = String::new();
        for (v, t) in &ticks {
            let x = LABEL_W
                + if self.hi > self.lo {
                    self.fraction(*v) * BAR_W
                } else {
                    0.0
                };
            let _ = writeln!(
                s,
                r#"<line class="grid" x1="{x:.1}" y1="22" x2="{x:.1}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                height - 22.0,
                height - 8.0,
                esc(t)
            );
        }
        let _ = writeln!(
            s,
            r#"<text class="unit" x="{:.1}" y="14" text-anchor="end">{}{}</text>"#,
            LABEL_W + BAR_W,
            esc(unit),
            if self.scale == Scale::Log {
                " (log scale)"
            } else {
                ""
            }
        );
        s
    }
}

/// A horizontal bar chart as inline SVG. `id` names the measured group
/// (`data-group`), so a reader (or a test) can match charts to the JSON.
pub(super) fn chart(id: &str, title: &str, unit: &str, scale: Scale, rows: &[Row]) -> String {
    let groups = rows
        .iter()
        .enumerate()
        .filter(|(i, r)| r.group.is_some() && (*i == 0 || rows[i - 1].group != r.group))
        .count();
    let height = 30.0 + rows.len() as f64 * ROW_H + groups as f64 * GROUP_H + 26.0;
    let width = LABEL_W + BAR_W + 200.0;
    let axis = Axis::of(rows, scale);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<figure class="chart" data-group="{id}"><figcaption>{}</figcaption>
<svg class="chart" data-group="{id}" role="img" aria-label="{}" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
"#,
        esc(title),
        esc(title)
    );
    s.push_str(&axis.ticks(unit, height));
    s.push_str(&bars(rows, &axis));
    s.push_str("</svg></figure>\n");
    s
}

/// The rows: group headings, labels, and bars (or the text alone).
fn bars(rows: &[Row], axis: &Axis) -> String {
    let mut s = String::new();
    let mut y = 26.0;
    let mut last_group: Option<&str> = None;
    for r in rows {
        if let Some(g) = r.group.as_deref() {
            if last_group != Some(g) {
                let _ = writeln!(
                    s,
                    r#"<text class="group" x="4" y="{:.1}">{}</text>"#,
                    y + 15.0,
                    esc(g)
                );
                y += GROUP_H;
                last_group = Some(g);
            }
        }
        let _ = writeln!(
            s,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 8.0,
            y + 16.0,
            esc(&r.label)
        );
        match r.value {
            Some(v) => {
                let w = axis.len(v);
                let text_x =
                    LABEL_W + w.max(axis.len(r.runs.iter().copied().fold(0.0, f64::max))) + 6.0;
                let _ = writeln!(
                    s,
                    r#"<rect class="bar {}" x="{LABEL_W}" y="{:.1}" width="{w:.1}" height="{:.1}" rx="2"><title>{}: {}</title></rect><text class="value" x="{:.1}" y="{:.1}">{}</text>"#,
                    r.class,
                    y + 3.0,
                    ROW_H - 6.0,
                    esc(&r.label),
                    esc(&r.text),
                    text_x,
                    y + 16.0,
                    esc(&r.text)
                );
                s.push_str(&runs_marks(&r.runs, axis, y + ROW_H / 2.0));
            }
            None => {
                let _ = writeln!(
                    s,
                    r#"<text class="na" x="{:.1}" y="{:.1}">{}</text>"#,
                    LABEL_W + 4.0,
                    y + 16.0,
                    esc(&r.text)
                );
            }
        }
        y += ROW_H;
    }
    s
}

/// Every run of a bar: a line from the slowest to the fastest, a dot each.
fn runs_marks(runs: &[f64], axis: &Axis, mid: f64) -> String {
    if runs.len() < 2 {
        return String::new();
    }
    let x = |v: f64| LABEL_W + axis.len(v);
    let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = runs.iter().copied().fold(0.0, f64::max);
    let mut s = format!(
        r#"<line class="range" x1="{:.1}" y1="{mid:.1}" x2="{:.1}" y2="{mid:.1}"/>"#,
        x(lo),
        x(hi)
    );
    for v in runs {
        let _ = write!(
            s,
            r#"<circle class="run" cx="{:.1}" cy="{mid:.1}" r="2.6"/>"#,
            x(*v)
        );
    }
    s.push('\n');
    s
}

/// The smallest "nice" axis end (1, 2, 2.5, 5 × 10^k per step, four
/// steps) at or above `max`, so that the ticks fall on round numbers.
fn nice_max(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    step * 4.0
}

fn short(v: f64) -> String {
    let a = v.abs();
    // One decimal where a whole number would hide a 2.5 or 1.5 step.
    let unit = |x: f64, suffix: &str| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{x:.0}{suffix}")
        } else {
            format!("{x:.1}{suffix}")
        }
    };
    if a >= 1e12 {
        unit(v / 1e12, "T")
    } else if a >= 1e9 {
        unit(v / 1e9, "G")
    } else if a >= 1e6 {
        unit(v / 1e6, "M")
    } else if a >= 1e3 {
        unit(v / 1e3, "k")
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}
