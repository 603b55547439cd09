//! Space made ready for untorn writes of a unit: the report a growth with
//! [`GrowOptions::untorn_unit`](crate::GrowOptions::untorn_unit) adds. The
//! growth itself (written extents, the extent-size hint, the aligned
//! units) is `grow`'s (`grow/untorn.rs`); this layer holds the facts.

use super::facts::Limits;
use super::layout::LayoutCheck;
use serde::Serialize;

/// What a growth for untorn writes did beyond the growth itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Ready {
    /// The unit asked for (bytes).
    pub unit: u32,
    /// The grown file's untorn-write limits: whether the space can take
    /// untorn writes at all.
    pub limits: Limits,
    /// The file's extent-size hint afterwards (bytes; 0: none), where the
    /// filesystem has hints.
    pub extent_size_hint: Option<u32>,
    /// Ranges cut out of the new allocation to put its units on aligned
    /// device addresses (XFS; see the module docs).
    pub collapses: u32,
    /// Why the alignment stopped before every unit was placed (the
    /// filesystem refused a collapse), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment_note: Option<crate::note::Note>,
    /// Why the hint is not the unit, when it is not and should be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint_note: Option<crate::note::Note>,
    /// The layout of the whole file, unit by unit, or why it could not be
    /// read.
    #[serde(serialize_with = "ser_layout")]
    pub layout: std::result::Result<LayoutCheck, crate::reason::Reason>,
}

fn ser_layout<S: serde::Serializer>(
    v: &std::result::Result<LayoutCheck, crate::reason::Reason>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::fs_info::ser_result(v, s, "error")
}
