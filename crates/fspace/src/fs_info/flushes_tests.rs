//! Tests of flushes.rs: the write-cache and flush facts.

use super::*;

/// A device as `block_devices` describes it.
fn dev(name: &str, cache: &str, fua: bool, lower: Vec<BlockDevice>) -> BlockDevice {
    BlockDevice {
        name: name.into(),
        dev: String::new(),
        disk: None,
        write_cache: Some(cache.into()),
        fua: Some(fua),
        rotational: None,
        discard_max_bytes: None,
        discard_granularity: None,
        write_zeroes_max_bytes: None,
        write_zeroes_unmap_max_bytes: None,
        logical_block_size: None,
        physical_block_size: None,
        atomic_write_unit_min_bytes: None,
        atomic_write_unit_max_bytes: None,
        atomic_write_max_bytes: None,
        atomic_write_boundary_bytes: None,
        backing_file: None,
        lower,
        lower_note: None,
    }
}

/// Writes a `stat` file under `class/name` whose flush field is `n`.
fn stat(class: &Path, name: &str, n: u64) {
    let d = class.join(name);
    // Request-based, as loop, virtio and SCSI disks are.
    std::fs::create_dir_all(d.join("mq")).unwrap();
    let mut f = vec!["0"; 17];
    let n = n.to_string();
    f[FLUSH_FIELD - 1] = &n;
    std::fs::write(d.join("stat"), f.join(" ") + "\n").unwrap();
}

/// A bio-based device (no `mq/`) that counted no flush is not called
/// "not durable": its flushes may be counted beneath it.
#[test]
fn a_bio_based_device_without_flushes_is_not_judged() {
    let t = tempfile::tempdir().unwrap();
    let class = t.path();
    let d = dev("nvme0n1", "write back", false, vec![]);
    stat(class, "nvme0n1", 10);
    std::fs::remove_dir(class.join("nvme0n1").join("mq")).unwrap();
    let c = FlushCounter::of_devices(std::slice::from_ref(&d), class);
    let s = c.start();
    let f = s.finish(200, 200, false);
    assert_eq!(f.verdict, FlushVerdict::NotMeasured, "{f:?}");
    assert!(f.reason.contains("bio-based"), "{}", f.reason);
    stat(class, "nvme0n1", 210);
    std::fs::remove_dir(class.join("nvme0n1").join("mq")).unwrap();
    assert_eq!(s.finish(200, 200, false).verdict, FlushVerdict::Flushed);
}

#[test]
fn verdicts_from_counts_and_declarations() {
    let t = tempfile::tempdir().unwrap();
    let class = t.path();
    let run = |d: BlockDevice, after: u64, syncs: u64, direct: bool| {
        stat(class, &d.name, 10);
        let c = FlushCounter::of_devices(std::slice::from_ref(&d), class);
        let s = c.start();
        stat(class, &d.name, 10 + after);
        s.finish(syncs, syncs, direct)
    };
    let wb = dev("loop0", "write back", false, vec![]);
    let f = run(wb.clone(), 200, 200, false);
    assert_eq!(
        (f.verdict, f.flushes, f.per_sync),
        (FlushVerdict::Flushed, 200, Some(1.0))
    );
    let f = run(wb.clone(), 0, 200, false);
    assert_eq!(f.verdict, FlushVerdict::NotDurable, "{f:?}");
    assert!(
        f.reason.contains("not reaching stable storage"),
        "{}",
        f.reason
    );
    let f = run(wb.clone(), 50, 200, false);
    assert_eq!(f.verdict, FlushVerdict::FewerFlushes);
    // No syncs: nothing to judge.
    assert_eq!(run(wb, 0, 0, false).verdict, FlushVerdict::NotMeasured);
    // Write-through: no flush needed.
    let wt = dev("sda", "write through", false, vec![]);
    let f = run(wt, 0, 200, false);
    assert_eq!(f.verdict, FlushVerdict::WriteThrough);
    assert!(f.reason.contains("rests on"), "{}", f.reason);
    // FUA: O_DIRECT syncs may be FUA writes, which are not counted;
    // buffered syncs still flush.
    let fua = dev("nvme0n1", "write back", true, vec![]);
    assert_eq!(
        run(fua.clone(), 0, 200, true).verdict,
        FlushVerdict::FuaUncounted
    );
    assert_eq!(run(fua, 0, 200, false).verdict, FlushVerdict::NotDurable);
    // Two runs as one.
    let a = run(dev("loop0", "write back", false, vec![]), 3, 3, false);
    let b = run(dev("loop0", "write back", false, vec![]), 0, 4, false);
    let ab = sum_flushes([&a, &b]).unwrap();
    assert_eq!((ab.syncs, ab.flushes), (7, 3));
    assert_eq!(ab.verdict, FlushVerdict::FewerFlushes);
}

/// A device-mapper device passes flushes on: they are counted at its
/// slaves; a partition's on its whole disk; a loop device's backing
/// disk is reported further down.
#[test]
fn where_flushes_are_counted() {
    let t = tempfile::tempdir().unwrap();
    let class = t.path();
    let mut part = dev("sda1", "write back", false, vec![]);
    part.disk = Some("sda".into());
    let dm = dev("dm-0", "write back", false, vec![part]);
    let c = FlushCounter::of_devices(&[dm], class);
    let names: Vec<(&str, &str)> = c
        .top
        .iter()
        .map(|c| (c.name.as_str(), c.counted_on.as_str()))
        .collect();
    assert_eq!(names, [("sda1", "sda")]);
    assert!(c.top[0].stat.ends_with("sda/stat"));
    let mut lp = dev(
        "loop3",
        "write back",
        false,
        vec![dev("vda", "write back", false, vec![])],
    );
    lp.backing_file = Some("/img".into());
    let c = FlushCounter::of_devices(&[lp], class);
    assert_eq!(c.top.len(), 1);
    assert_eq!(c.top[0].name, "loop3");
    assert_eq!(c.lower[0].name, "vda");
    // Unreadable counters: not measured, and said so.
    let f = c.start().finish(5, 5, false);
    assert_eq!(f.verdict, FlushVerdict::NotMeasured);
    assert!(f.unmeasured.is_some());
}

#[test]
fn mount_options_that_turn_flushes_off() {
    assert!(says_nobarrier("rw,relatime | rw,nobarrier"));
    assert!(says_nobarrier("rw | rw,barrier=0,data=ordered"));
    assert!(!says_nobarrier("rw,relatime | rw,barrier=1"));
    assert!(!says_nobarrier("rw | rw,space_cache=v2"));
}
