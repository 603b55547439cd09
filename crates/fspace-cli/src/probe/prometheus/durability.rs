//! Whether the probe's commits reached stable storage, as metrics.

use super::exposition::{flag, Metrics};

/// Whether the commits reached stable storage: the verdict, and per sync
/// method the durable syncs, the device flushes and their ratio.
pub(super) fn samples(m: &mut Metrics, d: Option<&fspace::probe::Durability>) {
    let Some(d) = d else {
        return;
    };
    m.gauge(
        "fspace_probe_commits_not_durable",
        "1 if durable commits sent no cache flush to a device whose write cache is volatile: \
         they are not reaching stable storage and the commit figures are not durable.",
        &[],
        flag(d.not_durable()),
    );
    m.gauge(
        "fspace_probe_durability_info",
        "Always 1: the verdict of the device flush counts and the write cache the devices declare, as labels.",
        &[
            ("verdict", d.verdict.name()),
            ("write_cache", d.write_cache.name()),
        ],
        1.0,
    );
    for x in &d.methods {
        let f = &x.flushes;
        let l = [("sync_method", x.method.as_str())];
        m.gauge(
            "fspace_probe_durable_syncs",
            "Durable syncs the probe's commits made, per sync method (wal: fspace's log).",
            &l,
            f.syncs as f64,
        );
        m.gauge(
            "fspace_probe_device_flushes",
            "Cache flushes the devices under the filesystem completed during those commits.",
            &l,
            f.flushes as f64,
        );
        if let Some(p) = f.per_commit {
            m.gauge(
                "fspace_probe_device_flushes_per_commit",
                "Device cache flushes per commit (below 1 where one sync serves a group of commits).",
                &l,
                p,
            );
        }
        if let Some(p) = f.per_sync {
            m.gauge(
                "fspace_probe_device_flushes_per_sync",
                "Device cache flushes per durable sync (0 on a volatile cache: not durable).",
                &l,
                p,
            );
        }
    }
}
