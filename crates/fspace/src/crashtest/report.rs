//! What `check` takes and gives: its options, the report, and each
//! failure with its story.

use super::model::Model;
use super::states::CrashPoint;
use super::trace::Trace;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How `check` explores and runs.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The models to build states under (all four by default); explored
    /// in [`Model::ALL`]'s order, each once, whatever the order given.
    pub models: Vec<Model>,
    /// At most this many states per crash point and model (64).
    pub per_point: usize,
    /// Crash points sampled between two durability points or
    /// acknowledgements (1).
    pub between: usize,
    /// Checkers run at once (the number of CPUs).
    pub jobs: usize,
    /// A checker still running after this long has failed (60 s).
    pub timeout: Duration,
    /// Leave the failing states' directories for a debugger.
    pub keep: bool,
    /// Where the states are written: in a new directory made inside this
    /// one (created when missing; the system's temporary directory by
    /// default). Only that new directory is removed afterwards, never
    /// anything else in this one.
    pub work_dir: Option<PathBuf>,
    /// At most this many distinct failures are described (20).
    pub max_failures: usize,
    /// The checker's exit status for "consistent, but acknowledged data
    /// is missing": a durability loss rather than corruption (3).
    pub loss_status: Option<i32>,
    /// Set (by a signal handler) to stop: no further checker starts, the
    /// states are removed, and `check` fails with an EINTR error.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            models: Model::ALL.to_vec(),
            per_point: 64,
            between: 1,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: Duration::from_secs(60),
            keep: false,
            work_dir: None,
            max_failures: 20,
            loss_status: Some(3),
            cancel: None,
        }
    }
}

/// How a checker ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "ended", rename_all = "kebab-case")]
pub enum CheckerExit {
    /// It exited with this status.
    Code {
        /// The status.
        code: i32,
    },
    /// A signal ended it.
    Signal {
        /// The signal's number.
        signal: i32,
    },
    /// It ran past the timeout and was killed.
    TimedOut,
}

impl CheckerExit {
    pub(crate) fn passed(self) -> bool {
        self == CheckerExit::Code { code: 0 }
    }
}

/// What kind of failure a rejected state is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The checker found the state inconsistent (any exit status but 0
    /// and the loss status): corruption.
    Inconsistent,
    /// The checker was killed by a signal.
    #[serde(rename = "checker-crashed")]
    Crashed,
    /// The checker ran past the timeout.
    TimedOut,
    /// The checker exited with the loss status: the state is consistent
    /// but acknowledged data is missing (a durability loss).
    #[serde(rename = "lost-acknowledged")]
    Lost,
}

impl FailureKind {
    /// Its name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Inconsistent => "inconsistent",
            FailureKind::Crashed => "checker-crashed",
            FailureKind::TimedOut => "timed-out",
            FailureKind::Lost => "lost-acknowledged",
        }
    }
}

/// A write that persisted only in part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TornWrite {
    /// The write's operation number.
    pub op: usize,
    /// The bytes of the file that got the new data.
    pub persisted: std::ops::Range<u64>,
    /// The write's whole range.
    pub range: std::ops::Range<u64>,
    /// The file's size grew to the write's end without its data (zeros).
    pub size_without_data: bool,
}

/// A crash state the checker rejected, as a story: the point, what
/// persisted of what was pending there, and what the checker said.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    /// Corruption or a durability loss (or a checker that crashed or hung).
    pub kind: FailureKind,
    /// The model it was built under (the first of them, when several
    /// models allow the same state).
    pub model: Model,
    /// Every model that allows it.
    pub models: Vec<Model>,
    /// Where the power failed.
    pub point: CrashPoint,
    /// Operations not yet durable there that persisted.
    pub persisted: Vec<usize>,
    /// Operations not yet durable there that did not persist.
    pub lost: Vec<usize>,
    /// A write that persisted in part.
    pub torn: Option<TornWrite>,
    /// How the checker ended.
    pub exit: CheckerExit,
    /// What it printed (stdout then stderr, at most 4 KiB).
    pub output: String,
    /// States (over all models and points) with the same contents and
    /// acknowledgements.
    pub same_states: usize,
    /// The state's directory, when kept.
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub state_dir: Option<PathBuf>,
}

/// What `check` found.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The models explored.
    pub models: Vec<Model>,
    /// Operations in the trace.
    pub ops: usize,
    /// Crash points.
    pub points: usize,
    /// Crash states built (over all models and points).
    pub states: usize,
    /// Distinct states (contents and acknowledgements): the checker runs.
    pub distinct: usize,
    /// States the checker rejected.
    pub failed_states: usize,
    /// Of those, states it called inconsistent (or crashed or hung on).
    pub inconsistent_states: usize,
    /// Of those, states that lost acknowledged data but were consistent.
    pub lost_states: usize,
    /// Distinct states the checker rejected.
    pub failed_distinct: usize,
    /// The first `max_failures` of them, the smallest story first.
    pub failures: Vec<Failure>,
    /// Wall time of the whole check, seconds.
    pub seconds: f64,
    /// Mean wall time per checker run (building the state included),
    /// milliseconds.
    pub ms_per_state: f64,
    /// What the recorder could not see: operation numbers of its limits.
    pub limits: Vec<usize>,
    /// Where the states were written (this check's own directory), when
    /// some were kept.
    #[serde(serialize_with = "crate::units::ser_opt_path_lossy")]
    pub work_dir: Option<PathBuf>,
}

/// The schema of [`CheckReport::document`].
pub const CHECK_FORMAT: &str = "fspace-crashtest-check/1";

impl CheckReport {
    /// No state failed.
    pub fn passed(&self) -> bool {
        self.failed_states == 0
    }

    /// The report as the JSON document of `fspace crashtest check --json`
    /// (schema [`CHECK_FORMAT`], docs/crashtest.md): the trace's path and
    /// program, the verdict (`found` or `not-found`), the report's fields
    /// and each failure's story. The Python package's `to_dict()` is the
    /// same document.
    pub fn document<'a>(&'a self, trace_path: &'a Path, trace: &'a Trace) -> impl Serialize + 'a {
        #[derive(Serialize)]
        struct Document<'a> {
            format: &'static str,
            // Lossy: the document must not fail after the check was made.
            trace: std::borrow::Cow<'a, str>,
            program: &'a [String],
            verdict: &'static str,
            #[serde(flatten)]
            report: &'a CheckReport,
            stories: Vec<Vec<String>>,
        }
        Document {
            format: CHECK_FORMAT,
            trace: trace_path.to_string_lossy(),
            program: &trace.manifest.program,
            verdict: if self.passed() { "not-found" } else { "found" },
            report: self,
            stories: self.failures.iter().map(|f| f.story(trace)).collect(),
        }
    }
}

impl Failure {
    /// The failure as a story for people: one line per fact.
    pub fn story(&self, trace: &Trace) -> Vec<String> {
        let ops = super::effects::describe_ops(trace);
        let describe = |n: usize| -> String {
            ops.get(n.wrapping_sub(1))
                .cloned()
                .unwrap_or_else(|| format!("#{n}"))
        };
        let mut lines = Vec::new();
        let at = match (self.point.after, self.point.kind) {
            (0, _) => "before the first operation".to_string(),
            (n, super::states::PointKind::DuringSyncWrite) => format!("during {}", describe(n)),
            (n, _) => format!("after {}", describe(n)),
        };
        lines.push(format!(
            "power cut {at} ({}), under {}",
            match self.point.kind {
                super::states::PointKind::BeforeSync => "just before a durability call",
                super::states::PointKind::AfterAck => "just after an acknowledgement",
                super::states::PointKind::DuringSyncWrite =>
                    "while this synchronous write was in flight",
                super::states::PointKind::Between => "between durability points",
                super::states::PointKind::End => "at the end of the run",
            },
            self.models
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if self.persisted.len() <= 3 {
            for &n in &self.persisted {
                lines.push(format!("  persisted:     {}", describe(n)));
            }
        } else {
            lines.push(format!(
                "  persisted:     {} pending operations ({})",
                self.persisted.len(),
                ranges(&self.persisted)
            ));
        }
        for &n in &self.lost {
            lines.push(format!("  NOT persisted: {}", describe(n)));
        }
        if let Some(t) = &self.torn {
            if t.size_without_data {
                lines.push(format!(
                    "  TORN:          {}: the file's size grew to {}, none of the data reached the disk (zeros)",
                    describe(t.op),
                    t.range.end
                ));
            } else {
                lines.push(format!(
                    "  TORN:          {}: only bytes {}..{} of {}..{} reached the disk",
                    describe(t.op),
                    t.persisted.start,
                    t.persisted.end,
                    t.range.start,
                    t.range.end
                ));
            }
        }
        let exit = match self.exit {
            CheckerExit::Code { code } => format!("exit status {code}"),
            CheckerExit::Signal { signal } => format!("killed by signal {signal}"),
            CheckerExit::TimedOut => "timed out".to_string(),
        };
        lines.push(format!(
            "  checker: {exit}: {}",
            match self.kind {
                FailureKind::Lost =>
                    "consistent, but acknowledged data is missing (a durability loss)",
                FailureKind::Inconsistent => "the state is inconsistent (corruption)",
                FailureKind::Crashed => "the checker crashed on the state",
                FailureKind::TimedOut => "the checker hung on the state",
            }
        ));
        for l in self.output.lines().take(12) {
            lines.push(format!("    | {l}"));
        }
        lines
    }
}

/// `#4-#12, #19`: operation numbers as ranges.
fn ranges(ns: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ns.len() {
        let mut j = i;
        while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("#{}-#{}", ns[i], ns[j])
        } else {
            format!("#{}", ns[i])
        });
        i = j + 1;
    }
    out.join(", ")
}
