//! What parsing a name and checking options fail with, as values:
//! [`ParseError`] and [`InvalidOption`]. Below every type that parses or
//! checks (the strategies, the modes, the options), and below `error`,
//! which names strategies itself.

use std::fmt;

/// A name that is none of a type's values: what every `FromStr` of the
/// library ([`Strategy`](crate::Strategy), [`Intent`](crate::Intent),
/// [`SyncMethod`](crate::SyncMethod), the copy's modes, the engines, ...)
/// fails with. What was parsed, the text and the names accepted are
/// values; `Display` says it for people
/// (`unknown strategy "fast" (sparse, reserve, ...)`). Where an operation
/// is refused for it, its errno is `EINVAL`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseError {
    /// What was being parsed: `strategy`, `sync method`, `intent`,
    /// `engine`, `I/O path`, `mode` (of `fspace bench commit`),
    /// `sparse mode`, `reflink mode`, `crash model`.
    pub what: &'static str,
    /// The text given.
    pub input: String,
    /// The names accepted.
    pub expected: Vec<&'static str>,
}

impl ParseError {
    /// A `what` named `input` that is none of `expected`.
    pub(crate) fn new(
        what: &'static str,
        input: &str,
        expected: impl IntoIterator<Item = &'static str>,
    ) -> ParseError {
        ParseError {
            what,
            input: input.to_string(),
            expected: expected.into_iter().collect(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} {:?} ({})",
            self.what,
            self.input,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for ParseError {}

/// Options that cannot be used together or at all: which one, and why.
/// What `validate()` of [`WalOptions`](crate::wal::WalOptions) and
/// [`CopyOptions`](crate::CopyOptions) fails with; the operations that
/// take them refuse them with `EINVAL` and this message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidOption {
    /// The field at fault (its Rust name: `segment_size`, `sparse`, ...);
    /// for two that cannot go together, the one named second in the
    /// message.
    pub option: &'static str,
    /// Why, for people, with the value.
    pub message: String,
}

impl InvalidOption {
    pub(crate) fn new(option: &'static str, message: impl Into<String>) -> InvalidOption {
        InvalidOption {
            option,
            message: message.into(),
        }
    }
}

impl fmt::Display for InvalidOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InvalidOption {}
