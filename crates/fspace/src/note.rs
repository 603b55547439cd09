//! [`Note`]: something a report says that qualifies its figures or its
//! outcome without failing it, as a kind a caller matches on and the
//! sentence a person reads.
//!
//! Reports used to carry notes as bare sentences, and callers (the CLI
//! among them) picked one out by its first words: a rewording broke them
//! silently. The kind is the promise; the text may be reworded.

use serde::Serialize;
use std::fmt;

/// What a [`Note`] is about. New kinds may be added (`#[non_exhaustive]`):
/// match with a wildcard arm. In JSON a kind is its kebab-case name
/// (`"one-pass"`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoteKind {
    // The probe's run.
    /// The filesystem is memory (tmpfs, ramfs): `fdatasync` writes nothing,
    /// so commit figures measure memory copies.
    MemoryFilesystem,
    /// Free space was short: growth was measured on less than the level's size.
    ScaledDown,
    /// A small copy-on-write filesystem: growth and files were kept small
    /// so that the probe does not use up its chunk space.
    SmallCopyOnWrite,
    /// Writes were slow: commit files (and log segments) were made smaller
    /// than the level's size, before the rounds or during them.
    SlowWrites,
    /// Other processes, the hypervisor or other writers to the devices
    /// were busy while the probe measured: the figures are noisier.
    BusyMachine,
    /// The probe took longer than its level's budget.
    OverBudget,
    /// Durable commits sent no cache flush to a device whose write cache
    /// is volatile: the commits are not reaching stable storage, and the
    /// figures are not those of durable commits.
    NotDurable,
    /// The budget left too little time for some states: their commit
    /// figures are rough.
    RoughFigures,
    /// Short of time: after the first round only the cases that decide
    /// something ran again; the others were measured once.
    MeasuredOnce,
    /// Two contenders were too close to call: what was measured again,
    /// and whether that decided it.
    TooCloseToCall,
    /// The budget ran out before every point of the record-size sweep.
    SweepCut,
    /// A strategy that promises reserved space succeeded, but the file
    /// holds far less allocated space afterwards (`st_blocks`).
    SpaceNotReserved,
    /// The filesystem allocated beyond the end of a growing file
    /// (speculative preallocation); the extra is given back later.
    SpeculativePreallocation,

    // A commit benchmark run.
    /// The run stopped at the end of its file: the space it was prepared
    /// with was used up. The probe's runs end so by design.
    OnePass,
    /// The run wrapped around its file: later passes overwrote written blocks.
    WrappedAround,
    /// The append file was truncated to empty to stay within its size.
    Truncated,
    /// Few commits completed: the latency percentiles are rough.
    FewCommits,
    /// The log's space use after the run could not be measured.
    SpaceNotMeasured,

    // A copy.
    /// The source's unwritten (allocated, unwritten) extents are holes in
    /// the copy: no FIEMAP on the source, or no `fallocate` on the copy.
    AllocationNotKept,
    /// Zeros were written as data where holes belonged: the destination
    /// cannot punch holes, or cannot seek (a pipe, a character device).
    HolesAsZeros,
    /// The source's `SEEK_HOLE` reports every byte as data (network and
    /// FUSE filesystems): any holes in it could not be seen.
    HolesUnseen,
    /// The source's size could not be trusted (a pipe, a pseudo
    /// filesystem, a file that reports 0 bytes): it was read to its end.
    ReadToEnd,
    /// The source grew during the copy; the copy holds its length when
    /// the copy began.
    SourceGrew,
    /// Mode, owner and times were not preserved: the destination is not a file.
    NotPreserved,
    /// The owner was not preserved: only root may give files away.
    OwnerNotPreserved,
    /// The destination (a pipe or device) cannot be synced.
    NotSynced,
    /// The copy replaced a file without syncing the directory: a power cut
    /// may bring the old file back.
    DirectoryNotSynced,
    /// Zero ranges on a block device were skipped, not written: the device
    /// was declared to read zeros there.
    ZeroRangesSkipped,

    // Creating a file (copy, grow).
    /// The filesystem refuses `RENAME_NOREPLACE`: the name was checked to
    /// be free, then the file renamed plainly.
    CheckedRename,

    // The policy.
    /// A saved probe measurement exists but could not be read: the
    /// built-in policy decided.
    SavedUnreadable,

    // Advice for an engine (`fspace probe --for`).
    /// A setting that costs safety or a feature measured no faster: it is
    /// not offered.
    TradeOffNotFaster,
    /// Two settings each measured faster alone were not measured
    /// together: the expected rate is one of them alone.
    CombinationNotMeasured,
    /// The engine overrides a setting on this filesystem whatever it is
    /// set to: the measurement follows what the engine does.
    EngineOverrides,
    /// The filesystem is reached over a network (or FUSE): every sync is
    /// a round trip to its server.
    NetworkFilesystem,

    // A fact about a file, a filesystem or a device.
    /// The filesystem's `st_blocks` does not measure allocation (network
    /// and FUSE filesystems), so the fact cannot be known here.
    NotMeasurable,
    /// The fact was not measured: only the cache was consulted.
    NotMeasured,
    /// Reading the fact failed (the call and its error in the text).
    ReadFailed,
    /// No block device is under it (a file on tmpfs, a FUSE or network
    /// filesystem).
    NoBlockDevice,
    /// No `FIEMAP` here: the map comes from `SEEK_DATA`/`SEEK_HOLE`, which
    /// cannot tell written from unwritten blocks.
    MapWithoutFiemap,

    // Untorn-write preparation (`GrowOptions::untorn_unit`).
    /// The alignment of the units on the device stopped before every unit
    /// was placed: the filesystem refused a collapse.
    AlignmentStopped,
    /// The extent-size hint is not the unit: the file already had extents,
    /// or the filesystem refused it.
    HintNotSet,
}

impl NoteKind {
    /// The kind's name, as in JSON (`"one-pass"`).
    pub fn name(self) -> &'static str {
        match self {
            NoteKind::MemoryFilesystem => "memory-filesystem",
            NoteKind::ScaledDown => "scaled-down",
            NoteKind::SmallCopyOnWrite => "small-copy-on-write",
            NoteKind::SlowWrites => "slow-writes",
            NoteKind::BusyMachine => "busy-machine",
            NoteKind::OverBudget => "over-budget",
            NoteKind::NotDurable => "not-durable",
            NoteKind::RoughFigures => "rough-figures",
            NoteKind::MeasuredOnce => "measured-once",
            NoteKind::TooCloseToCall => "too-close-to-call",
            NoteKind::SweepCut => "sweep-cut",
            NoteKind::SpaceNotReserved => "space-not-reserved",
            NoteKind::SpeculativePreallocation => "speculative-preallocation",
            NoteKind::OnePass => "one-pass",
            NoteKind::WrappedAround => "wrapped-around",
            NoteKind::Truncated => "truncated",
            NoteKind::FewCommits => "few-commits",
            NoteKind::SpaceNotMeasured => "space-not-measured",
            NoteKind::AllocationNotKept => "allocation-not-kept",
            NoteKind::HolesAsZeros => "holes-as-zeros",
            NoteKind::HolesUnseen => "holes-unseen",
            NoteKind::ReadToEnd => "read-to-end",
            NoteKind::SourceGrew => "source-grew",
            NoteKind::NotPreserved => "not-preserved",
            NoteKind::OwnerNotPreserved => "owner-not-preserved",
            NoteKind::NotSynced => "not-synced",
            NoteKind::DirectoryNotSynced => "directory-not-synced",
            NoteKind::ZeroRangesSkipped => "zero-ranges-skipped",
            NoteKind::CheckedRename => "checked-rename",
            NoteKind::SavedUnreadable => "saved-unreadable",
            NoteKind::TradeOffNotFaster => "trade-off-not-faster",
            NoteKind::CombinationNotMeasured => "combination-not-measured",
            NoteKind::EngineOverrides => "engine-overrides",
            NoteKind::NetworkFilesystem => "network-filesystem",
            NoteKind::NotMeasurable => "not-measurable",
            NoteKind::NotMeasured => "not-measured",
            NoteKind::ReadFailed => "read-failed",
            NoteKind::NoBlockDevice => "no-block-device",
            NoteKind::MapWithoutFiemap => "map-without-fiemap",
            NoteKind::AlignmentStopped => "alignment-stopped",
            NoteKind::HintNotSet => "hint-not-set",
        }
    }
}

impl fmt::Display for NoteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Something a report says that qualifies its figures or its outcome:
/// its [`kind`](Note::kind), to match on, and the sentence for a person
/// (its `Display`). The sentence may be reworded; the kind is kept.
///
/// ```
/// use fspace::{Note, NoteKind};
/// let n = Note::new(NoteKind::FewCommits, "only 12 commits: the percentiles are rough");
/// assert_eq!(n.kind, NoteKind::FewCommits);
/// assert_eq!(n.to_string(), "only 12 commits: the percentiles are rough");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// What it is about.
    pub kind: NoteKind,
    /// The sentence, in words.
    pub text: String,
}

impl Note {
    /// A note of `kind` that says `text`.
    pub fn new(kind: NoteKind, text: impl Into<String>) -> Note {
        Note {
            kind,
            text: text.into(),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::{Note, NoteKind};

    #[test]
    fn kinds_serialize_as_their_names() {
        for k in [
            NoteKind::MemoryFilesystem,
            NoteKind::ScaledDown,
            NoteKind::SmallCopyOnWrite,
            NoteKind::SlowWrites,
            NoteKind::BusyMachine,
            NoteKind::OverBudget,
            NoteKind::NotDurable,
            NoteKind::RoughFigures,
            NoteKind::MeasuredOnce,
            NoteKind::TooCloseToCall,
            NoteKind::SweepCut,
            NoteKind::SpaceNotReserved,
            NoteKind::SpeculativePreallocation,
            NoteKind::OnePass,
            NoteKind::WrappedAround,
            NoteKind::Truncated,
            NoteKind::FewCommits,
            NoteKind::SpaceNotMeasured,
            NoteKind::AllocationNotKept,
            NoteKind::HolesAsZeros,
            NoteKind::HolesUnseen,
            NoteKind::ReadToEnd,
            NoteKind::SourceGrew,
            NoteKind::NotPreserved,
            NoteKind::OwnerNotPreserved,
            NoteKind::NotSynced,
            NoteKind::DirectoryNotSynced,
            NoteKind::ZeroRangesSkipped,
            NoteKind::CheckedRename,
            NoteKind::SavedUnreadable,
            NoteKind::TradeOffNotFaster,
            NoteKind::CombinationNotMeasured,
            NoteKind::EngineOverrides,
            NoteKind::NetworkFilesystem,
            NoteKind::NotMeasurable,
            NoteKind::NotMeasured,
            NoteKind::ReadFailed,
            NoteKind::NoBlockDevice,
            NoteKind::MapWithoutFiemap,
            NoteKind::AlignmentStopped,
            NoteKind::HintNotSet,
        ] {
            let json = serde_json::to_string(&k).expect("serialize");
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
        let n = Note::new(NoteKind::OnePass, "stopped");
        assert_eq!(
            serde_json::to_string(&n).expect("serialize"),
            r#"{"kind":"one-pass","text":"stopped"}"#
        );
    }
}
