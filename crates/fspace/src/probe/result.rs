//! The whole result of a probe, [`ProbeResult`], with what is asked of it
//! and how its measured recommendations are saved. Apart from the sections
//! it holds (`schema`), so that the engines' advice can use those sections
//! and still be part of the result.

use super::commit::concurrency::ConcurrencySection;
use super::engines::{Engine, EngineAdvice};
use super::schema::{CommitSection, GrowthSection, Level, StateResult, SweepPoint};
use super::untorn::UntornSection;
use crate::bench::SpaceState;
use crate::error::Result;
use crate::fs_info::FsInfo;
use crate::grow::Intent;
use crate::note::Note;
use crate::policy::{FsKey, Recommendation, SavedPolicy, SavedResults};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// Everything one probe measured and concluded (the JSON document).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ProbeResult {
    /// [`SCHEMA`](super::SCHEMA).
    pub schema: &'static str,
    /// The fspace version that measured.
    pub fspace_version: &'static str,
    /// How thorough the run was.
    pub level: Level,
    /// The directory probed.
    #[serde(serialize_with = "crate::units::ser_path_lossy")]
    pub directory: PathBuf,
    /// When the probe started, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The same as `YYYY-MM-DD HH:MM:SS UTC`.
    pub started_utc: String,
    /// How long it took.
    #[serde(rename = "elapsed_ms", serialize_with = "crate::units::ser_ms")]
    pub elapsed: Duration,
    /// The level's time budget, seconds.
    pub budget_seconds: f64,
    /// The filesystem and its measured capabilities.
    pub filesystem: FsInfo,
    /// What identifies this filesystem for saved measurements.
    pub key: FsKey,
    /// Commit rate and latency per space state.
    pub commit: CommitSection,
    /// Growth time per strategy.
    pub growth: GrowthSection,
    /// The record-size sweep ([`Level::Full`] only).
    pub sweep: Option<Vec<SweepPoint>>,
    /// Commits through the log, by appending and into recycled space at
    /// each writer count, and where each stopped scaling.
    pub concurrency: ConcurrencySection,
    /// What the rest of the machine did during the growth and commit
    /// measurements.
    pub machine: super::busy::Busy,
    /// One recommendation per intent (log, bulk, sparse).
    pub recommendations: Vec<Recommendation>,
    /// The advice for each engine asked for ([`ProbeOptions::engines`](super::ProbeOptions::engines)),
    /// in that order; empty when none was.
    pub engines: Vec<EngineAdvice>,
    /// Untorn page writes here: the facts, the answer for 8 and 16 KiB
    /// pages through `O_DIRECT` and the page cache, and what untorn writes
    /// cost against plain ones where they exist.
    pub untorn: UntornSection,
    /// What qualifies the run (scaled down, over budget, ...).
    pub notes: Vec<Note>,
}

impl ProbeResult {
    /// Returns the measurements of `state`.
    pub fn state(&self, state: SpaceState) -> Option<&StateResult> {
        self.commit.states.iter().find(|s| s.state == state)
    }

    /// Returns the advice for `engine`, if it was asked for.
    pub fn engine(&self, engine: Engine) -> Option<&EngineAdvice> {
        self.engines.iter().find(|a| a.engine == engine)
    }

    /// Returns the recommendation for `intent`.
    pub fn recommendation(&self, intent: Intent) -> Option<&Recommendation> {
        self.recommendations.iter().find(|r| r.intent == intent)
    }
}

/// Saves `result`'s measured recommendations in `store` for its filesystem
/// (replacing an earlier one; [`SavedResults::save`] says what a power cut
/// may leave), where the policy follows them. Returns the file's path.
///
/// A recommendation the measurement could not decide
/// ([`Recommendation::too_noisy`]) is left out, so the policy keeps its
/// built-in choice for that intent, unless `force`.
pub fn save(result: &ProbeResult, store: &SavedResults, force: bool) -> Result<PathBuf> {
    store.save(&saved_policy(result, force))
}

/// The part of `result` that is saved: the key and the recommendations a
/// measurement decided (with `force`, also those too noisy to decide).
pub fn saved_policy(result: &ProbeResult, force: bool) -> SavedPolicy {
    SavedPolicy {
        schema: crate::policy::SCHEMA.to_string(),
        measured_utc: result.started_utc.clone(),
        measured_by: format!(
            "fspace probe --save{} ({})",
            if force { " --force" } else { "" },
            result.level.name()
        ),
        key: result.key.clone(),
        recommendations: result
            .recommendations
            .iter()
            .filter(|r| r.measured && (force || !r.too_noisy))
            .map(|r| {
                let mut r = r.clone();
                if r.sync_too_noisy && !force {
                    // The log then keeps its built-in sync method.
                    r.sync_method = None;
                    r.sync_reason = None;
                }
                r
            })
            .collect(),
        expected: expected(result),
    }
}

/// What the log reached with the recommended setup (the prediction's
/// runs), when it was measured.
fn expected(result: &ProbeResult) -> Option<crate::policy::Expected> {
    let p = result.commit.prediction.as_ref()?;
    let setup = p.log.clone()?;
    (p.commits_per_sec > 0.0 && !setup.runs.is_empty()).then_some(crate::policy::Expected {
        commits_per_sec: p.commits_per_sec,
        setup,
        baseline: result.commit.baseline.clone(),
    })
}

impl ProbeResult {
    /// The recommendations too noisy to decide, in their strategy or
    /// their sync method (left out by [`save`], or their sync method
    /// left out, unless forced).
    pub fn undecided(&self) -> Vec<&Recommendation> {
        self.recommendations
            .iter()
            .filter(|r| r.measured && (r.too_noisy || r.sync_too_noisy))
            .collect()
    }
}
