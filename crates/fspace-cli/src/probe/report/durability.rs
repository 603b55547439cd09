//! Whether durable commits reached the device, in the probe's report: the
//! banner over every figure where they did not, and the section with the
//! devices' flush counts (the text's are crate::durability's).

use super::chart::esc;
use crate::durability::{devices, per_sync, NOT_DURABLE};
use crate::fmt::format_count as commas;
use fspace::probe::Durability;

/// The probe report's banner at the top, where the commits were not
/// reaching stable storage: every figure below it is of such commits.
pub(super) fn banner_html(d: Option<&Durability>) -> String {
    match d.filter(|d| d.not_durable()) {
        Some(d) => format!(
            "<p class=bad><strong>{NOT_DURABLE}</strong>: the commits measured \
             here are not reaching stable storage, so their figures and the \
             advice drawn from them are not those of durable commits ({}).\
             </p>\n",
            esc(&d.devices.join(", "))
        ),
        None => String::new(),
    }
}

/// The probe report's section.
pub(super) fn html(d: Option<&Durability>) -> String {
    let mut h = String::new();
    let Some(d) = d else {
        return h;
    };
    h.push_str("<h2>Durability</h2>\n");
    let class = if d.not_durable() { " class=bad" } else { "" };
    let head = if d.not_durable() {
        format!("<strong>{NOT_DURABLE}</strong>: ")
    } else {
        String::new()
    };
    out!(h, "<p{class}>{head}{}</p>", esc(&d.reason));
    if d.methods.iter().all(|m| m.flushes.devices.is_empty()) {
        return h;
    }
    out!(
        h,
        "<p class=sub>Cache flushes completed by {} during the commits, \
         as the kernel counts them.</p>",
        esc(&devices(&d.methods[0].flushes))
    );
    h.push_str(
        "<table><tr><th>synced by</th><th class=n>commits</th>\
         <th class=n>syncs</th><th class=n>flushes</th>\
         <th class=n>per sync</th><th class=n>per commit</th>\
         <th>verdict</th></tr>\n",
    );
    for m in &d.methods {
        let f = &m.flushes;
        out!(
            h,
            "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td>\
             <td class=n>{}</td><td class=n>{}</td><td class=n>{}</td>\
             <td>{}</td></tr>",
            esc(&m.method),
            commas(f.commits as f64),
            commas(f.syncs as f64),
            commas(f.flushes as f64),
            per_sync(f),
            f.per_commit.map_or("-".into(), |p| format!("{p:.2}")),
            esc(f.verdict.name())
        );
    }
    h.push_str("</table>\n");
    h
}
