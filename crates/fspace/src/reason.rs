//! Why something could not be done or measured, as a type: a report's
//! "could not" fields (a strategy unsupported in a benchmark, a fact that
//! could not be read) carry a [`Reason`], so that a program acts on its
//! kind and errno instead of parsing a sentence (docs/api.md, "Typed
//! reports").

use crate::errno::ErrorKind;
use serde::Serialize;
use std::fmt;
use std::io;

/// Why something could not be done or measured.
///
/// Built from the [`Error`](crate::Error) that stopped it ([`Reason::from`]), which keeps
/// its errno, or for a cause with no system call behind it (no commit
/// completed in the time) with [`Reason::new`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Reason {
    /// The class a program acts on (`unsupported`, `no-space`, ...).
    pub kind: ErrorKind,
    /// The errno, when a system call said so.
    pub errno: Option<i32>,
    /// The whole story for people: the call, the path, the OS's words.
    pub text: String,
}

impl Reason {
    /// A reason of `kind` with no errno behind it.
    pub fn new(kind: ErrorKind, text: impl Into<String>) -> Reason {
        Reason {
            kind,
            errno: None,
            text: text.into(),
        }
    }

    /// The reason a failed call with raw errno `errno` gives: its kind is
    /// the errno's ([`ErrorKind::from_raw_os_error`]).
    pub fn errno(errno: i32, text: impl Into<String>) -> Reason {
        Reason {
            kind: ErrorKind::from_raw_os_error(errno),
            errno: Some(errno),
            text: text.into(),
        }
    }

    /// "Not possible here": a call the caller moved on from (a growth's
    /// fallback, a state the benchmark could not make), kind
    /// [`ErrorKind::Unsupported`] whatever the errno was (a kernel that
    /// does not know a mode flag says EINVAL), the errno kept.
    pub fn unsupported(errno: Option<i32>, text: impl Into<String>) -> Reason {
        Reason {
            kind: ErrorKind::Unsupported,
            errno,
            text: text.into(),
        }
    }

    /// The reason an I/O error gives about `what` (`what: error`), with its
    /// errno when it has one.
    pub fn of_io(what: &str, e: &io::Error) -> Reason {
        let text = format!("{what}: {e}");
        match e.raw_os_error() {
            Some(errno) => Reason::errno(errno, text),
            None => Reason::new(ErrorKind::Io, text),
        }
    }

    /// The same reason, its text preceded by `what: ` (what was being
    /// done when it happened).
    pub fn context(mut self, what: &str) -> Reason {
        self.text = format!("{what}: {}", self.text);
        self
    }

    /// In a few words: the errno's own (`Operation not supported`), or the
    /// whole text where there is no errno.
    pub fn short(&self) -> String {
        match self.errno {
            Some(errno) => {
                let words = io::Error::from_raw_os_error(errno).to_string();
                // std writes "<strerror> (os error N)"; the number is noise
                // in a sentence that already names the call.
                let suffix = format!(" (os error {errno})");
                words.strip_suffix(&suffix).unwrap_or(&words).to_string()
            }
            None => self.text.clone(),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::Reason;
    use crate::errno::ErrorKind;

    #[test]
    fn an_errno_gives_its_kind_and_words() {
        let r = Reason::errno(95, "fallocate(f): Operation not supported (os error 95)");
        assert_eq!(r.errno, Some(95));
        assert_eq!(r.kind, ErrorKind::Unsupported);
        assert_eq!(r.short(), "Operation not supported");
    }

    #[test]
    fn without_errno_the_short_form_is_the_text() {
        let r = Reason::new(ErrorKind::Io, "no commit completed");
        assert_eq!(r.errno, None);
        assert_eq!(r.short(), "no commit completed");
        assert_eq!(r.to_string(), "no commit completed");
    }

    #[test]
    fn serializes_as_an_object() {
        let r = Reason::errno(28, "fallocate(f): No space left on device (os error 28)");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["kind"], "no-space");
        assert_eq!(j["errno"], 28);
        assert!(j["text"].as_str().unwrap().starts_with("fallocate(f)"));
    }
}
