//! The error type shared by both parsers.
//!
//! Each message is meant to be read on its own: it says what was wrong, where
//! (line number, file), and when the likely cause is known (a run killed
//! before Cachegrind wrote its summary), says that too. Wrapped errors are
//! part of the message rather than a separate `source()`, so printing the
//! error with `{}` shows everything and printing the chain shows nothing
//! twice.

use std::path::PathBuf;

/// Why a profile or an annotation could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read at all (missing, unreadable, not UTF-8).
    #[error("cannot read {}: {error}", path.display())]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },

    /// Any other error, found while parsing the named file.
    #[error("{}: {error}", path.display())]
    InFile {
        /// The file that was being parsed.
        path: PathBuf,
        /// What was wrong with it.
        error: Box<ProfileError>,
    },

    /// The input has no content at all.
    #[error("the input is empty (was the run killed before it wrote anything?)")]
    Empty,

    /// The input stops before a part every complete file has.
    #[error(
        "the input is truncated: it ends before its {missing} (was the run killed, \
         or the file cut short?)"
    )]
    Truncated {
        /// The part that never came, e.g. "`summary:` line".
        missing: &'static str,
    },

    /// A line that does not fit the format.
    #[error("line {line}: {message}")]
    Malformed {
        /// 1-based line number in the input.
        line: usize,
        /// What was expected, and what was found.
        message: String,
    },

    /// The input is not the kind of text this parser reads at all.
    #[error("not {expected}: {reason}")]
    Unrecognized {
        /// What the parser reads, e.g. "`cg_annotate` output".
        expected: &'static str,
        /// What is missing that every such text has.
        reason: String,
    },

    /// The `summary:` line disagrees with the sum of the cost lines, which
    /// Cachegrind never writes: the file was edited or damaged.
    #[error(
        "the `summary:` line says {summary} {event} but the cost lines add up to {computed}: \
         the profile is damaged"
    )]
    SummaryMismatch {
        /// The event whose totals differ.
        event: String,
        /// The count on the `summary:` line.
        summary: i64,
        /// The sum of the cost lines.
        computed: i64,
    },

    /// The data has no column for an event that was asked for, typically
    /// `Ir` (instructions).
    #[error("no `{event}` event in this data (it has: {})", available.join(" "))]
    MissingEvent {
        /// The event that was asked for.
        event: String,
        /// The events the data does have.
        available: Vec<String>,
    },
}

impl ProfileError {
    /// Wraps `self` with the file it came from. Used by the `read`
    /// functions; an error that already names its file is left alone.
    pub(crate) fn in_file(self, path: &std::path::Path) -> ProfileError {
        match self {
            ProfileError::Io { .. } | ProfileError::InFile { .. } => self,
            error => ProfileError::InFile {
                path: path.to_path_buf(),
                error: Box::new(error),
            },
        }
    }

    pub(crate) fn malformed(line: usize, message: impl Into<String>) -> ProfileError {
        ProfileError::Malformed {
            line,
            message: message.into(),
        }
    }
}

/// Shortens `line` for quoting in an error message: cost lines can be long
/// and a binary file has no line breaks at all.
pub(crate) fn quote(line: &str) -> String {
    const MAX: usize = 80;
    match line.char_indices().nth(MAX) {
        Some((end, _)) => format!("{:?}...", &line[..end]),
        None => format!("{line:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn in_file_names_the_path_and_keeps_the_cause() {
        let error = ProfileError::Truncated {
            missing: "`summary:` line",
        }
        .in_file(Path::new("/tmp/cachegrind.out.1"));
        let message = error.to_string();
        assert!(message.starts_with("/tmp/cachegrind.out.1: "), "{message}");
        assert!(message.contains("truncated"), "{message}");
        assert!(message.contains("`summary:` line"), "{message}");
    }

    #[test]
    fn in_file_does_not_wrap_twice() {
        let error = ProfileError::Empty
            .in_file(Path::new("a"))
            .in_file(Path::new("b"));
        assert_eq!(error.to_string(), format!("a: {}", ProfileError::Empty));
    }

    #[test]
    fn quote_shortens_long_lines() {
        assert_eq!(quote("fl=x"), "\"fl=x\"");
        let long = "9".repeat(200);
        let quoted = quote(&long);
        assert!(quoted.ends_with("..."));
        assert_eq!(quoted.len(), 80 + 2 + 3);
        // Never splits a multi-byte character.
        assert!(quote(&"é".repeat(100)).ends_with("..."));
    }

    #[test]
    fn missing_event_lists_what_there_is() {
        let error = ProfileError::MissingEvent {
            event: "Ir".into(),
            available: vec!["Bc".into(), "Bcm".into()],
        };
        assert_eq!(
            error.to_string(),
            "no `Ir` event in this data (it has: Bc Bcm)"
        );
    }
}
