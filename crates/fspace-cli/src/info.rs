//! `fspace info`: what the filesystem under a path is, what it can do
//! (measured), and what the policy answers there.

use crate::cli::InfoArgs;
use crate::fmt::{format_human, labelled};
use crate::output::{emit, print_json, yes_no};
use fspace::{FsInfo, Intent, Strategy};
use serde::Serialize;

/// The policy's answer for `intent` on `info`'s filesystem, as `info`,
/// `grow` and the log get it (saved measurements from the state directory).
fn policy_plan(info: &FsInfo, intent: Intent) -> fspace::Plan {
    fspace::plan(info, intent, &fspace::StrategyChoice::auto_from_state_dir())
}

/// The plan's reason with its notes.
fn plan_reason(p: &fspace::Plan) -> String {
    if p.notes.is_empty() {
        p.reason.clone()
    } else {
        let notes: Vec<&str> = p.notes.iter().map(|n| n.text.as_str()).collect();
        format!("{} ({})", p.reason, notes.join("; "))
    }
}

fn ladder(info: &FsInfo, intent: Intent) -> (String, String) {
    let p = policy_plan(info, intent);
    let names: Vec<&str> = p.ladder.iter().map(|s| s.name()).collect();
    let nocow = if p.nocow { " (on a NOCOW file)" } else { "" };
    (format!("{}{nocow}", names.join(" -> ")), plan_reason(&p))
}

/// `fspace info`: the filesystem, its capabilities and the policy's answer
/// per intent.
pub(crate) fn run(a: InfoArgs) -> fspace::Result<()> {
    let info = fspace::fs_info(&a.path)?.with_block_devices();
    let u = untorn(&info);
    if a.json {
        return print_json(&json(&info, u));
    }
    let mut o = facts(&info);
    o.push_str(&untorn_text(&u));
    o.push_str(&policy_text(&info));
    emit(&o)
}

const INTENTS: [Intent; 3] = [Intent::Bulk, Intent::Log, Intent::Sparse];

/// The JSON of `fspace info --json`: the description, and the policy per
/// intent.
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    info: &'a FsInfo,
    untorn: Untorn,
    policy: Vec<PolicyEntry>,
}

#[derive(Serialize)]
struct PolicyEntry {
    intent: Intent,
    ladder: Vec<Strategy>,
    reason: String,
    /// The saved probe measurement followed, if any.
    saved_probe: Option<String>,
    /// Whether the file is made NOCOW first (`Plan::nocow`).
    nocow: bool,
}

fn json(info: &FsInfo, untorn: Untorn) -> Json<'_> {
    let policy = INTENTS
        .iter()
        .map(|&i| {
            let p = policy_plan(info, i);
            PolicyEntry {
                intent: i,
                reason: plan_reason(&p),
                nocow: p.nocow,
                ladder: p.ladder,
                saved_probe: p.saved.map(|s| s.to_string_lossy().into_owned()),
            }
        })
        .collect();
    Json {
        info,
        untorn,
        policy,
    }
}

/// The filesystem's facts and measured capabilities, in words.
fn facts(info: &FsInfo) -> String {
    let mut o = String::new();
    labelled(&mut o, "path:          ", &info.path.to_string_lossy());
    out!(
        o,
        "filesystem:    {} (magic 0x{:x})",
        info.display_name(),
        info.magic
    );
    if let (Some(mp), Some(src)) = (&info.mount_point, &info.source) {
        labelled(
            &mut o,
            "mount:         ",
            &format!("{} from {}", mp.display(), src),
        );
    }
    out!(o, "block size:    {}", info.block_size);
    match (&info.allocation_unit, &info.allocation_unit_note) {
        (Some(u), _) => out!(o, "alloc unit:    {} ({})", u.bytes, u.source.name()),
        (None, Some(why)) => labelled(&mut o, "alloc unit:    ", &format!("unknown ({why})")),
        (None, None) => out!(o, "alloc unit:    unknown"),
    }
    if !info.st_blocks_measures_allocation {
        out!(
            o,
            "allocation:    unknown here (st_blocks does not measure it)"
        );
    }
    match &info.block_devices {
        Ok(devs) => {
            for d in devs {
                device_lines(&mut o, d, 0, "");
            }
        }
        Err(why) => labelled(&mut o, "device:        ", &why.text),
    }
    out!(
        o,
        "space:         {} total, {} free{}",
        format_human(info.total_bytes),
        format_human(info.free_bytes),
        if info.free_bytes_root != info.free_bytes {
            format!(" ({} for root)", format_human(info.free_bytes_root))
        } else {
            String::new()
        }
    );
    out!(o, "copy-on-write: {}", yes_no(info.copy_on_write));
    out!(o, "network:       {}", yes_no(info.network));
    out!(o, "read-only:     {}", yes_no(info.read_only));
    match &info.capabilities {
        Ok(c) => {
            out!(o, "capabilities (measured on a scratch file here):");
            for (name, cap) in c.named() {
                match &cap.detail {
                    Some(d) => labelled(
                        &mut o,
                        &format!("  {name:<13} {:<3}  ", yes_no(cap.supported)),
                        &crate::fmt::within(d, &info.path),
                    ),
                    None => out!(o, "  {name:<13} {}", yes_no(cap.supported)),
                }
            }
        }
        Err(e) => labelled(&mut o, "capabilities:  ", &format!("unknown ({e})")),
    }
    o
}

/// The policy's ladder and reason per intent, in words.
fn policy_text(info: &FsInfo) -> String {
    let mut o = String::new();
    let head = match policy_plan(info, Intent::Log).saved {
        Some(p) => format!(
            "auto policy (following the probe saved in {}; -> = fallback):",
            p.display()
        ),
        None => "auto policy (built in; `fspace probe --save DIR` measures this filesystem; -> = fallback):".to_string(),
    };
    labelled(&mut o, "", &head);
    for i in INTENTS {
        let (l, reason) = ladder(info, i);
        out!(o, "  {:<7} {l}", i.name());
        labelled(&mut o, "          ", &reason);
    }
    o
}

/// Two lines per block device (the ones under it indented), within 80
/// columns; `indent` starts every line.
pub(crate) fn device_lines(o: &mut String, d: &fspace::BlockDevice, depth: usize, indent: &str) {
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    };
    let bytes = |v: Option<u64>| match v {
        Some(0) => "no".to_string(),
        Some(n) => format_human(n),
        None => "?".to_string(),
    };
    let (label, pad) = if depth == 0 {
        ("device:", String::new())
    } else {
        ("  on:", "  ".repeat(depth - 1))
    };
    let name = match &d.disk {
        Some(disk) => format!("{} ({}) on {disk}", d.name, d.dev),
        None => format!("{} ({})", d.name, d.dev),
    };
    out!(o, "{indent}{label:<15}{pad}{name}");
    out!(
        o,
        "{indent}{:<15}{pad}  cache {}, FUA {}, rotational {}",
        "",
        d.write_cache.as_deref().unwrap_or("?"),
        yes_no(d.fua),
        yes_no(d.rotational)
    );
    out!(
        o,
        "{indent}{:<15}{pad}  discard {}, zeroes {} (unmap {}), blocks {}/{}",
        "",
        bytes(d.discard_max_bytes),
        bytes(d.write_zeroes_max_bytes),
        bytes(d.write_zeroes_unmap_max_bytes),
        d.logical_block_size.map_or("?".into(), |b| b.to_string()),
        d.physical_block_size.map_or("?".into(), |b| b.to_string())
    );
    if let Some(unit_max) = d.atomic_write_unit_max_bytes {
        let atomic = if unit_max == 0 {
            "no".to_string()
        } else {
            format!(
                "unit {}-{}, max {}, boundary {}",
                bytes(d.atomic_write_unit_min_bytes),
                format_human(unit_max),
                bytes(d.atomic_write_max_bytes),
                bytes(d.atomic_write_boundary_bytes)
            )
        };
        out!(o, "{indent}{:<15}{pad}  atomic writes {atomic}", "");
    }
    if let Some(f) = &d.backing_file {
        labelled(
            o,
            &format!("{indent}{:<15}{pad}  backing file ", ""),
            &f.to_string_lossy(),
        );
    }
    if let Some(why) = &d.lower_note {
        labelled(
            o,
            &format!("{indent}{:<15}{pad}  under it: ", ""),
            &why.text,
        );
    }
    for l in &d.lower {
        device_lines(o, l, depth + 1, indent);
    }
}

/// The untorn-write part of `fspace info`: the filesystem's facts measured
/// on a scratch file in the directory, the file's own when the path is a
/// regular file, and the answer for the page sizes databases use.
#[derive(Serialize)]
struct Untorn {
    #[serde(serialize_with = "ser_facts")]
    filesystem: Result<fspace::untorn::UntornFacts, String>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_opt_facts"
    )]
    file: Option<Result<fspace::untorn::UntornFacts, String>>,
    answers: Vec<fspace::untorn::Answer>,
}

fn ser_facts<S: serde::Serializer>(
    v: &Result<fspace::untorn::UntornFacts, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    match v {
        Ok(f) => f.serialize(s),
        Err(why) => {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("error", why)?;
            m.end()
        }
    }
}

fn ser_opt_facts<S: serde::Serializer>(
    v: &Option<Result<fspace::untorn::UntornFacts, String>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(f) => ser_facts(f, s),
        None => s.serialize_none(),
    }
}

/// Page sizes answered for: PostgreSQL's 8 KiB, InnoDB's 16 KiB.
const PAGES: [u64; 2] = [8192, 16384];

fn untorn(info: &FsInfo) -> Untorn {
    use fspace::untorn::{answer, facts, facts_of_fs, IoPath};
    let filesystem = if info.read_only {
        Err("read-only filesystem: not measured on a scratch file".to_string())
    } else {
        facts_of_fs(&info.path).map_err(|e| e.to_string())
    };
    let file = std::fs::metadata(&info.path)
        .is_ok_and(|m| m.is_file())
        .then(|| facts(&info.path).map_err(|e| e.to_string()));
    // Answer from the filesystem's measured facts; for a file on a
    // read-only filesystem, from the file's.
    let basis = filesystem
        .as_ref()
        .ok()
        .or_else(|| file.as_ref().and_then(|f| f.as_ref().ok()));
    let answers = basis
        .map(|f| {
            PAGES
                .iter()
                .flat_map(|&p| [IoPath::Direct, IoPath::Buffered].map(|io| answer(f, p, io)))
                .collect()
        })
        .unwrap_or_default();
    Untorn {
        filesystem,
        file,
        answers,
    }
}

/// The untorn-write facts in words.
fn untorn_text(u: &Untorn) -> String {
    let mut o = String::new();
    match &u.filesystem {
        Ok(f) => {
            out!(
                o,
                "untorn writes (statx and RWF_ATOMIC on a scratch file here):"
            );
            facts_lines(&mut o, f);
        }
        Err(why) => labelled(&mut o, "untorn writes: ", &format!("unknown ({why})")),
    }
    if let Some(file) = &u.file {
        match file {
            Ok(f) => {
                out!(o, "  this file:");
                labelled(&mut o, "    limits      ", &f.limits.words());
                out!(o, "    size hint   {}", hint(f));
            }
            Err(why) => labelled(&mut o, "  this file:   ", &format!("unknown ({why})")),
        }
    }
    for p in PAGES {
        let pick = |io| u.answers.iter().find(|a| a.page_size == p && a.io == io);
        if let (Some(d), Some(b)) = (
            pick(fspace::untorn::IoPath::Direct),
            pick(fspace::untorn::IoPath::Buffered),
        ) {
            out!(
                o,
                "  {:<14}direct {}; buffered {}",
                format!("{} pages", format_human(p)),
                d.short(),
                b.short()
            );
        }
    }
    // One reason, wrapped: the first untorn answer's, else the direct
    // one's (the buffered one adds nothing a reader needs here).
    let why = u.answers.iter().find(|a| a.untorn).or_else(|| {
        u.answers
            .iter()
            .find(|a| a.io == fspace::untorn::IoPath::Direct)
    });
    if let Some(a) = why {
        for (i, line) in crate::fmt::wrap(&a.reason, 64).iter().enumerate() {
            out!(o, "  {:<14}{line}", if i == 0 { "why" } else { "" });
        }
    }
    o
}

fn hint(f: &fspace::untorn::UntornFacts) -> String {
    match f.geometry.extent_size_hint {
        Some(0) => "none".into(),
        Some(h) => format_human(u64::from(h)),
        None => "not supported here".into(),
    }
}

fn facts_lines(o: &mut String, f: &fspace::untorn::UntornFacts) {
    for (i, line) in crate::fmt::wrap(&f.limits.words(), 64).iter().enumerate() {
        out!(o, "  {:<14}{line}", if i == 0 { "limits" } else { "" });
    }
    let hw = if f.hardware_max > 0 {
        format!(
            ", hardware path up to {}",
            format_human(u64::from(f.hardware_max))
        )
    } else {
        String::new()
    };
    let source = match f.source {
        fspace::untorn::Source::Filesystem => {
            "the filesystem's software path (writes out of place)"
        }
        fspace::untorn::Source::Device => "the device (one write command)",
        fspace::untorn::Source::DeviceAndFilesystem => "the device, then the filesystem",
        fspace::untorn::Source::Unknown => "the filesystem (path unknown)",
        _ => "none",
    };
    labelled(o, "  source        ", &format!("{source}{hw}"));
    let g = &f.geometry;
    let geometry = format!(
        "block {}, alloc unit {}, reflink {}, size hint {}",
        g.block_size,
        g.allocation_unit.map_or("?".into(), |u| u.to_string()),
        match g.reflink {
            Some(true) => "yes",
            Some(false) => "no",
            None => "?",
        },
        hint(f)
    );
    labelled(o, "  geometry      ", &geometry);
    let tried = |direct: bool| {
        f.tried
            .iter()
            .filter(|t| t.direct == direct)
            .map(|t| {
                format!(
                    "{} {}",
                    format_human(u64::from(t.size)),
                    if t.ok { "ok" } else { "refused" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    labelled(o, "  tried direct  ", &tried(true));
    labelled(o, "  tried cached  ", &tried(false));
    if let Some(e) = f.tried.iter().find_map(|t| t.error.as_ref()) {
        labelled(o, "                ", &format!("(refused: {e})"));
    }
}
