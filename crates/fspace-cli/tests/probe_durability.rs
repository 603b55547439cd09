//! Durability verified, not assumed: the probe and `bench commit` count
//! the cache flushes the devices under the filesystem complete during the
//! commits (`/sys/block/DEV/stat`, flush I/Os), and say when durable
//! commits send none to a volatile cache.
//!
//! Each test makes its own loop filesystem (`LoopFs`, removed on drop,
//! also when it fails), so that no other test's mount is remounted:
//! - ext4 mounted `barrier=0`: `probe --quick` says its commits are not
//!   reaching stable storage, in text, JSON, the HTML report, Prometheus
//!   and the `--for` advice; remounted `barrier=1`, at least one device
//!   flush per durable sync, for every sync method and the log;
//! - btrfs mounted `nobarrier`: `bench commit` says the same; remounted
//!   `barrier`, flushed;
//! - xfs (no `nobarrier` since Linux 4.19: the mount is refused): flushed;
//!   with the loop device's cache declared write-through in sysfs, no
//!   flush is sent and the verdict says durability rests on that
//!   declaration;
//! - tmpfs and sshfs (the matrix's): no block device, said so.

mod probe_common;
use fspace_test_kit as common;

use common::loop_fs::LoopFs;
use probe_common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn bench(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(["bench", "commit"])
        .args(args)
        .arg(dir)
        .output()
        .expect("run fspace bench commit")
}

/// Every line of `out` fits 80 columns.
fn fits(out: &str, what: &str) {
    for l in out.lines() {
        assert!(l.chars().count() <= 80, "{what}: wider than 80: {l:?}");
    }
}

/// The JSON document embedded in a probe's HTML report.
fn embedded_json(html: &str) -> Value {
    let start = html
        .find("id=\"probe-json\">")
        .expect("the report embeds its JSON")
        + "id=\"probe-json\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The probe's `commit.durability` methods, by name.
fn methods(v: &Value) -> Vec<(String, &Value)> {
    v["commit"]["durability"]["methods"]
        .as_array()
        .unwrap_or_else(|| panic!("no commit.durability.methods: {v}"))
        .iter()
        .map(|m| (m["method"].as_str().unwrap().to_string(), m))
        .collect()
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "ext4"),
    ignore = "needs root, losetup and mkfs.ext4"
)]
fn ext4_without_barriers_is_not_durable_and_with_them_flushes() {
    let _m = measuring();
    let fs = LoopFs::sized("probe_durability", "ext4", Some(320), Some("barrier=0"));
    let out = tempfile::tempdir().unwrap();
    let (html, prom) = (out.path().join("r.html"), out.path().join("m.prom"));
    let o = probe(
        &[
            "--quick",
            "--for",
            "postgresql",
            "--report",
            html.to_str().unwrap(),
            "--prometheus",
            prom.to_str().unwrap(),
        ],
        &fs.mnt,
        Some(out.path()),
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("NOT DURABLE: commits are not reaching"), "{t}");
    assert!(t.contains("mounted nobarrier"), "{t}");
    let durability = &t[t.find("\nDurability").unwrap()..];
    fits(
        &durability[..durability.find("\n\n").unwrap()],
        "durability",
    );

    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<strong>NOT DURABLE</strong>"), "no mark");
    let v = embedded_json(&page);
    let d = &v["commit"]["durability"];
    assert_eq!(d["verdict"], "not-durable", "{d}");
    assert_eq!(d["write_cache"], "write-back", "{d}");
    for (name, m) in methods(&v) {
        assert!(m["syncs"].as_u64() > Some(0), "{name}: {m}");
        assert_eq!(m["flushes"], 0, "{name}: {m}");
        assert_eq!(m["verdict"], "not-durable", "{name}: {m}");
        assert_eq!(m["nobarrier"], true, "{name}: {m}");
    }
    let kinds = |notes: &Value| -> Vec<String> {
        notes
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(kinds(&v["notes"]).contains(&"not-durable".to_string()));
    let advice = &v["engines"][0];
    assert!(
        kinds(&advice["notes"]).contains(&"not-durable".to_string()),
        "the --for advice does not say it: {advice}"
    );
    // The configuration it advises says it too, in comments.
    let config = advice["config"].as_str().unwrap();
    assert!(
        config.starts_with("# NOT DURABLE: commits are not"),
        "{config}"
    );
    fits(config, "postgresql.conf fragment");
    assert!(t.contains("    # NOT DURABLE: commits are not"), "{t}");
    let metrics = std::fs::read_to_string(&prom).unwrap();
    let line = metrics
        .lines()
        .find(|l| l.starts_with("fspace_probe_commits_not_durable{"))
        .unwrap_or_else(|| panic!("no fspace_probe_commits_not_durable:\n{metrics}"));
    assert!(line.ends_with(" 1"), "{line}");

    // The same filesystem with barriers: at least one flush per sync.
    fs.remount("barrier=1");
    let o = probe(&["--quick", "--json"], &fs.mnt, Some(out.path()));
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["commit"]["durability"]["verdict"], "flushed");
    let ms = methods(&v);
    for want in ["fdatasync", "dsync", "direct-dsync", "wal"] {
        assert!(ms.iter().any(|(n, _)| n == want), "no {want}: {ms:?}");
    }
    for (name, m) in ms {
        let (syncs, flushes) = (m["syncs"].as_u64().unwrap(), m["flushes"].as_u64().unwrap());
        assert!(syncs > 0 && flushes >= syncs, "{name}: {m}");
        assert_eq!(m["verdict"], "flushed", "{name}: {m}");
        assert!(m["per_sync"].as_f64() >= Some(1.0), "{name}: {m}");
        // One writer: one sync per commit, so a flush per commit too.
        assert!(m["per_commit"].as_f64() >= Some(1.0), "{name}: {m}");
        assert_eq!(m["nobarrier"], false, "{name}: {m}");
    }
    // Each state's runs carry their own counts too.
    let fdatasync = &v["commit"]["durability"]["methods"][0];
    assert_eq!(fdatasync["devices"][0]["write_cache"], "write-back");
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "btrfs"),
    ignore = "needs root, losetup and mkfs.btrfs"
)]
fn btrfs_nobarrier_bench_commit_is_not_durable() {
    let _m = measuring();
    let fs = LoopFs::sized("probe_durability", "btrfs", None, Some("nobarrier"));
    let args = [
        "--mode",
        "recycled,wal",
        "--seconds",
        "1",
        "--file-size",
        "16MiB",
        "--segment-size",
        "4MiB",
    ];
    let o = bench(&fs.mnt, &args);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("NOT DURABLE"), "{t}");
    assert!(t.contains("mounted nobarrier"), "{t}");
    // The flush lines: their head and the indented lines under it.
    let block: Vec<&str> = t[t.find("device flushes").unwrap()..]
        .lines()
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with("  "))
        .map(|(_, l)| l)
        .collect();
    assert!(block.len() >= 3, "{t}");
    fits(&block.join("\n"), "bench commit");
    let mut json = args.to_vec();
    json.push("--json");
    let o = bench(&fs.mnt, &json);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for r in v["results"].as_array().unwrap() {
        let f = &r["flushes"];
        assert_eq!(f["verdict"], "not-durable", "{r}");
        assert_eq!(f["flushes"], 0, "{r}");
    }
    fs.remount("barrier");
    let o = bench(&fs.mnt, &json);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for r in v["results"].as_array().unwrap() {
        let f = &r["flushes"];
        assert_eq!(f["verdict"], "flushed", "{r}");
        assert!(f["flushes"].as_u64() >= f["syncs"].as_u64(), "{r}");
    }
}

#[test]
#[cfg_attr(
    not(fspace_loop_fs = "xfs"),
    ignore = "needs root, losetup and mkfs.xfs"
)]
fn xfs_flushes_and_a_declared_write_through_cache_is_said() {
    let _m = measuring();
    let fs = LoopFs::new("probe_durability", "xfs");
    // xfs lost `nobarrier` in Linux 4.19: the mount is refused.
    let refused = Command::new("mount")
        .args(["-o", "remount,nobarrier", fs.mnt.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "xfs took nobarrier");
    let args = ["--mode", "recycled", "--seconds", "1", "--json"];
    let args = [&args[..], &["--file-size", "16MiB"]].concat();
    let o = bench(&fs.mnt, &args);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["results"][0]["flushes"];
    assert_eq!(f["verdict"], "flushed", "{v}");

    // The loop device's cache declared write-through by hand: the kernel
    // sends no flushes, and the verdict says what durability rests on.
    let dev = fs.device().trim_start_matches("/dev/").to_string();
    let knob = format!("/sys/block/{dev}/queue/write_cache");
    std::fs::write(&knob, "write through").unwrap();
    let o = bench(&fs.mnt, &args);
    std::fs::write(&knob, "write back").unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["results"][0]["flushes"];
    assert_eq!(f["verdict"], "write-through", "{v}");
    assert_eq!(f["write_cache"], "write-through", "{v}");
    assert_eq!(f["flushes"], 0, "{v}");
    assert!(f["reason"].as_str().unwrap().contains("rests on"), "{f}");
}

common::per_fs! {
    fn no_block_device_is_said(fs) on [tmpfs, sshfs] {
        let d = fs.tempdir();
        let args = ["--mode", "recycled", "--seconds", "0.5", "--file-size", "4MiB"];
        let o = bench(d.path(), &[&args[..], &["--json"]].concat());
        assert!(o.status.success(), "{}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let f = &v["results"][0]["flushes"];
        assert_eq!(f["verdict"], "no-device", "{}: {v}", fs.name);
        let o = bench(d.path(), &args);
        let t = text(&o);
        assert!(t.contains("device flushes: no block device"), "{}: {t}", fs.name);
    }
}
