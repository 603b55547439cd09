//! What a probe measured and concluded (`fspace.probe`).

use super::common::{json_of, notes, os, report, secs};
use pyo3::prelude::*;
use std::ffi::OsString;

report! {
    /// The probe's advice for one intent.
    Recommendation {
        /// `"log"`, `"bulk"` or `"sparse"`.
        intent: String,
        /// The strategy to grow files with.
        strategy: String,
        /// The advice in a few words.
        summary: String,
        /// The measured reason, with the figures.
        reason: String,
        /// Whether a measurement decided (false: the built-in choice).
        measured: bool,
        /// True when the measurement could not separate the candidates.
        too_noisy: bool,
        /// For intent log: how commits are made durable, when measured.
        sync_method: Option<String>,
        /// For intent log: whether reusing written segments pays.
        recycle: Option<bool>,
    }
}

report! {
    /// What a probe measured and concluded (`fspace.probe`); the whole
    /// document (schema `fspace-probe/…`, docs/probe-json.md) is
    /// `to_dict()`.
    ProbeResult + json {
        /// The directory probed.
        directory: OsString,
        /// `"quick"`, `"standard"` or `"full"`.
        level: String,
        /// The filesystem's name.
        filesystem: String,
        /// Wall time in seconds.
        elapsed: f64,
        /// One recommendation per intent.
        recommendations: Vec<Recommendation>,
        /// What qualifies the run, in words.
        notes: Vec<super::common::Note>,
    }
}

impl ProbeResult {
    pub(crate) fn from(r: &fspace::probe::ProbeResult) -> Self {
        ProbeResult {
            directory: os(&r.directory),
            level: r.level.name().into(),
            filesystem: r.filesystem.display_name(),
            elapsed: secs(r.elapsed),
            recommendations: r
                .recommendations
                .iter()
                .map(|c| Recommendation {
                    intent: c.intent.name().into(),
                    strategy: c.strategy.name().into(),
                    summary: c.summary.clone(),
                    reason: c.reason.clone(),
                    measured: c.measured,
                    too_noisy: c.too_noisy,
                    sync_method: c.sync_method.map(|m| m.name().into()),
                    recycle: c.recycle,
                })
                .collect(),
            notes: notes(&r.notes),
            json: json_of(r),
        }
    }
}
