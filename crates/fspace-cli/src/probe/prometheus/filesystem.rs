//! The filesystem measured, as the labels every sample carries and as
//! metrics of its own facts and its block devices'.

use super::exposition::{flag, Metrics};
use fspace::{BlockDevice, FsInfo};
use std::path::Path;

/// The labels of the filesystem measured: the directory given, and the
/// mount source, type and point as node_exporter's filesystem metrics
/// name them.
pub(super) fn labels(dir: &Path, f: &FsInfo) -> Vec<(&'static str, String)> {
    vec![
        ("path", dir.to_string_lossy().into_owned()),
        ("device", f.source.clone().unwrap_or_default()),
        ("fstype", f.display_name()),
        (
            "mountpoint",
            f.mount_point
                .as_deref()
                .map(|m| m.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
    ]
}

/// The filesystem's and its block devices' facts.
pub(super) fn samples(m: &mut Metrics, f: &FsInfo) {
    m.gauge(
        "fspace_probe_filesystem_block_size_bytes",
        "The filesystem's preferred I/O size (f_bsize).",
        &[],
        f.block_size as f64,
    );
    if let Some(u) = &f.allocation_unit {
        m.gauge(
            "fspace_probe_filesystem_allocation_unit_bytes",
            "The filesystem's allocation unit (cluster on ext4 bigalloc, else block).",
            &[],
            u.bytes as f64,
        );
    }
    m.gauge(
        "fspace_probe_filesystem_size_bytes",
        "The filesystem's size.",
        &[],
        f.total_bytes as f64,
    );
    m.gauge(
        "fspace_probe_filesystem_free_bytes",
        "Bytes free for unprivileged users (f_bavail) when the probe measured.",
        &[],
        f.free_bytes as f64,
    );
    m.gauge(
        "fspace_probe_filesystem_copy_on_write",
        "1 if overwrites allocate new blocks (btrfs, zfs, bcachefs), else 0.",
        &[],
        flag(f.copy_on_write),
    );
    m.gauge(
        "fspace_probe_filesystem_network",
        "1 if the data goes over a network protocol (NFS, sshfs), else 0.",
        &[],
        flag(f.network),
    );
    if let Some(c) = f.caps() {
        for (name, cap) in c.named() {
            m.gauge(
                "fspace_probe_capability",
                "1 if the operation works on this filesystem (measured on scratch files), else 0.",
                &[("capability", name)],
                flag(cap.supported),
            );
        }
    }
    let Ok(devices) = &f.block_devices else {
        return;
    };
    for d in devices {
        device_samples(m, d);
    }
}

/// A block device's facts, those it reports.
fn device_samples(m: &mut Metrics, d: &BlockDevice) {
    let l = [("disk", d.name.as_str())];
    let facts: [(&'static str, &'static str, Option<f64>); 6] = [
        (
            "fspace_probe_device_rotational",
            "1 if the block device says it is rotational (a driver's default: virtio disks say 1), else 0.",
            d.rotational.map(flag),
        ),
        (
            "fspace_probe_device_logical_block_size_bytes",
            "The block device's logical block size.",
            d.logical_block_size.map(|x| x as f64),
        ),
        (
            "fspace_probe_device_physical_block_size_bytes",
            "The block device's physical block size.",
            d.physical_block_size.map(|x| x as f64),
        ),
        (
            "fspace_probe_device_write_cache",
            "1 if the block device has a volatile write cache (write back: flushes are sent), 0 if write through.",
            d.write_cache.as_deref().map(|w| flag(w == "write back")),
        ),
        (
            "fspace_probe_device_fua",
            "1 if writes can bypass the device's cache (Force Unit Access), else 0.",
            d.fua.map(flag),
        ),
        (
            "fspace_probe_device_discard_max_bytes",
            "The block device's largest discard; 0 is no discard.",
            d.discard_max_bytes.map(|x| x as f64),
        ),
    ];
    for (name, help, v) in facts {
        if let Some(v) = v {
            m.gauge(name, help, &l, v);
        }
    }
}
