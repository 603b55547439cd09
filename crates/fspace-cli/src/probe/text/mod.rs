//! The probe's text: the directory and its filesystem, then a section per
//! measurement, the recommendations and each engine's advice; the words
//! on what `--save` kept; and the text of `--compare-saved`.

mod advice;
mod commits;
mod compare;
mod growth;
mod untorn;

use crate::fmt::{format_human, indented, labelled};
use fspace::probe::ProbeResult;

pub(super) use advice::{saved, undecided};
pub(super) use compare::comparison;

/// The probe's text: the head, a section per measurement, the advice.
pub(super) fn result(r: &ProbeResult) -> String {
    let mut o = head(r);
    o.push_str(&commits::commits_text(r));
    o.push_str(&crate::durability::probe_text(r));
    o.push_str(&growth::growth_text(r));
    o.push_str(&commits::sweep_text(r));
    o.push_str(&crate::curves::probe_text(r));
    o.push_str(&untorn::untorn_text(r));
    o.push_str(&advice::recommendations_text(r));
    o.push_str(&crate::probe::engines::text(r));
    o
}

/// The directory, the filesystem and its capabilities.
fn head(r: &ProbeResult) -> String {
    let mut o = String::new();
    let f = &r.filesystem;
    labelled(&mut o, "fspace probe: ", &r.directory.to_string_lossy());
    indented(
        &mut o,
        &format!(
            "{}{}",
            f.display_name(),
            match (&f.source, &f.mount_point) {
                (Some(s), Some(m)) => format!(" from {s} at {}", m.display()),
                _ => String::new(),
            }
        ),
    );
    let unit = match &f.allocation_unit {
        Some(u) if u.bytes != f.block_size => format!(
            "; allocation unit {} ({})",
            format_human(u.bytes),
            u.source.name()
        ),
        _ => String::new(),
    };
    let run = format!(
        "{} run in {:.1} s (budget {:.0} s); {} free of {}; block size {}{unit}{}{}",
        r.level.name(),
        r.elapsed.as_secs_f64(),
        r.budget_seconds,
        format_human(f.free_bytes),
        format_human(f.total_bytes),
        f.block_size,
        if f.copy_on_write {
            "; copy-on-write"
        } else {
            ""
        },
        if f.network { "; network" } else { "" }
    );
    indented(&mut o, &run);
    if let Some(c) = f.caps() {
        let list: Vec<String> = c
            .named()
            .iter()
            .map(|(n, c)| format!("{n} {}", if c.supported { "yes" } else { "no" }))
            .collect();
        indented(&mut o, &format!("capabilities: {}", list.join(", ")));
    }
    match &f.block_devices {
        Ok(devs) => {
            for d in devs {
                crate::info::device_lines(&mut o, d, 0, "  ");
            }
        }
        Err(why) => labelled(&mut o, "  device:        ", &why.text),
    }
    o
}
