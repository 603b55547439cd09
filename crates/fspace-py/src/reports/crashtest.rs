//! What a crash test found (`fspace.crashtest_check`) and which rules a
//! trace breaks (`fspace.crashtest_lint`).

use super::common::{json_of, report};
use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::Path;

report! {
    /// A write that persisted only in part.
    TornWrite {
        /// The write's operation number in the trace.
        op: usize,
        /// The bytes of the file that got the new data, `(start, end)`.
        persisted: (u64, u64),
        /// The write's whole range, `(start, end)`.
        range: (u64, u64),
        /// The file's size grew to the write's end without its data (zeros).
        size_without_data: bool,
    }
}

report! {
    /// A crash state the checker rejected: where the power failed, what
    /// persisted of what was pending there, and what the checker said.
    CrashFailure {
        /// `"inconsistent"` (corruption), `"lost-acknowledged"` (consistent,
        /// but acknowledged data is missing), `"checker-crashed"` or
        /// `"timed-out"`.
        kind: String,
        /// The model it was built under (the first that allows it).
        model: String,
        /// Every model that allows it (`"posix"`, `"ext4"`, `"xfs"`,
        /// `"btrfs"`).
        models: Vec<String>,
        /// The power failed after this many operations had returned.
        after: usize,
        /// Why that point was chosen: `"before-sync"`, `"during-sync-write"`,
        /// `"after-ack"`, `"between"` or `"end"`.
        point: String,
        /// Operations pending there that persisted, by number.
        persisted: Vec<usize>,
        /// Operations pending there that did not persist.
        lost: Vec<usize>,
        /// A write that persisted in part.
        torn: Option<TornWrite>,
        /// The checker's exit status, when it exited.
        exit_status: Option<i32>,
        /// The signal that ended the checker, when one did.
        signal: Option<i32>,
        /// The checker ran past the timeout and was killed.
        timed_out: bool,
        /// What the checker printed (stdout then stderr, at most 4 KiB).
        output: String,
        /// States (over all models and points) with the same contents and
        /// acknowledgements.
        same_states: usize,
        /// The state's directory, when kept (`keep=True`).
        state_dir: Option<OsString>,
        /// The failure told for people, one line per fact (the CLI's story).
        story: Vec<String>,
    }
}

impl CrashFailure {
    fn from(f: &fspace::crashtest::Failure, trace: &fspace::crashtest::Trace) -> Self {
        use fspace::crashtest::CheckerExit;
        let (exit_status, signal, timed_out) = match f.exit {
            CheckerExit::Code { code } => (Some(code), None, false),
            CheckerExit::Signal { signal } => (None, Some(signal), false),
            CheckerExit::TimedOut => (None, None, true),
        };
        CrashFailure {
            kind: f.kind.name().into(),
            model: f.model.name().into(),
            models: f.models.iter().map(|m| m.name().into()).collect(),
            after: f.point.after,
            point: f.point.kind.name().into(),
            persisted: f.persisted.clone(),
            lost: f.lost.clone(),
            torn: f.torn.as_ref().map(|t| TornWrite {
                op: t.op,
                persisted: (t.persisted.start, t.persisted.end),
                range: (t.range.start, t.range.end),
                size_without_data: t.size_without_data,
            }),
            exit_status,
            signal,
            timed_out,
            output: f.output.clone(),
            same_states: f.same_states,
            state_dir: f.state_dir.as_ref().map(|d| d.as_os_str().to_owned()),
            story: f.story(trace),
        }
    }
}

report! {
    /// What `crashtest_check` found; `to_dict()` is the document of
    /// `fspace crashtest check --json` (schema `fspace-crashtest-check/1`).
    CrashCheckReport + json {
        /// The trace's directory.
        trace: OsString,
        /// The recorded program and its arguments.
        program: Vec<String>,
        /// No state failed the checker.
        passed: bool,
        /// The models explored.
        models: Vec<String>,
        /// Operations in the trace.
        ops: usize,
        /// Crash points.
        points: usize,
        /// Crash states built (over all models and points).
        states: usize,
        /// Distinct states (contents and acknowledgements): the checker runs.
        distinct: usize,
        /// States the checker rejected.
        failed_states: usize,
        /// Of those, states it called inconsistent (or crashed or hung on).
        inconsistent_states: usize,
        /// Of those, states that lost acknowledged data but were consistent.
        lost_states: usize,
        /// Distinct states the checker rejected.
        failed_distinct: usize,
        /// The first `max_failures` of them, the smallest story first.
        failures: Vec<CrashFailure>,
        /// Wall time of the whole check, seconds.
        seconds: f64,
        /// Mean wall time per checker run, milliseconds.
        ms_per_state: f64,
        /// Operation numbers of what the recorder could not see (its limits).
        limits: Vec<usize>,
        /// Where the states were written, when kept.
        work_dir: Option<OsString>,
    }
}

impl CrashCheckReport {
    pub(crate) fn from(
        path: &Path,
        trace: &fspace::crashtest::Trace,
        r: &fspace::crashtest::CheckReport,
    ) -> Self {
        CrashCheckReport {
            trace: path.as_os_str().to_owned(),
            program: trace.manifest.program.clone(),
            passed: r.passed(),
            models: r.models.iter().map(|m| m.name().into()).collect(),
            ops: r.ops,
            points: r.points,
            states: r.states,
            distinct: r.distinct,
            failed_states: r.failed_states,
            inconsistent_states: r.inconsistent_states,
            lost_states: r.lost_states,
            failed_distinct: r.failed_distinct,
            failures: r
                .failures
                .iter()
                .map(|f| CrashFailure::from(f, trace))
                .collect(),
            seconds: r.seconds,
            ms_per_state: r.ms_per_state,
            limits: r.limits.clone(),
            work_dir: r.work_dir.as_ref().map(|d| d.as_os_str().to_owned()),
            json: json_of(&r.document(path, trace)),
        }
    }
}

report! {
    /// A rule the trace breaks.
    LintFinding {
        /// The rule's name (`"unsynced-name"`, `"ack-before-sync"`, ...).
        rule: String,
        /// The operations involved, by number.
        ops: Vec<usize>,
        /// What happened, for people.
        text: String,
        /// Where the rule comes from.
        source: String,
    }
}

report! {
    /// What `crashtest_lint` found; `to_dict()` is the document of `fspace
    /// crashtest lint --json` (schema `fspace-crashtest-lint/1`).
    LintReport + json {
        /// The trace's directory.
        trace: OsString,
        /// The rules broken, in trace order per rule.
        findings: Vec<LintFinding>,
        /// Operation numbers of what the recorder could not see.
        limits: Vec<usize>,
    }
}

impl LintReport {
    pub(crate) fn from(
        path: &Path,
        trace: &fspace::crashtest::Trace,
        findings: &[fspace::crashtest::Finding],
    ) -> Self {
        LintReport {
            trace: path.as_os_str().to_owned(),
            findings: findings
                .iter()
                .map(|f| LintFinding {
                    rule: f.rule.name().into(),
                    ops: f.ops.clone(),
                    text: f.text.clone(),
                    source: f.rule.source().into(),
                })
                .collect(),
            limits: trace.limits().iter().map(|o| o.number).collect(),
            json: json_of(&fspace::crashtest::lint_document(path, trace, findings)),
        }
    }
}
