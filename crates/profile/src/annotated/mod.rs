//! The text report `cg_annotate` prints.
//!
//! The runner keeps this report to explain a count, and checks that its
//! total matches the raw profile's. Two layouts exist, and both are read:
//!
//! * the Perl `cg_annotate` of Valgrind 3.19 (and earlier): a header, a
//!   `PROGRAM TOTALS` line, then one flat list of `file:function` rows
//!   (the `perl` module);
//! * the Python rewrite (Valgrind 3.21 and later; checked against 3.24):
//!   `-- Metadata`, `-- Summary`, `-- File:function summary` and
//!   `-- Function:file summary` sections, where rows are grouped by file
//!   (the `python` module).
//!
//! The layout is recognised from the text itself (the Python one has
//! `-- Summary` headings), so callers need not know which Valgrind made it.
//! Both layouts print counts with thousands separators and, by default, a
//! percentage in parentheses; diffs (`cg_annotate` of a `cg_diff` output on
//! 3.19, `cg_annotate --diff` on 3.24) print negative counts.
//!
//! Only the summary parts are read. The annotated source listings that
//! follow are for people, and change with the source files on disk.

mod columns;
mod perl;
mod python;

use std::path::Path;

use crate::{FunctionCost, ProfileError};

/// What a `cg_annotate` report says, in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// The event columns of the report, in order (its `Events shown:` line;
    /// all recorded events unless `cg_annotate --show` chose fewer).
    pub events: Vec<String>,
    /// The total instructions (`Ir`) on the `PROGRAM TOTALS` line; for a
    /// diff, the difference, which may be negative.
    pub total_instructions: i64,
    /// The per-function rows of the function summary, in the order the
    /// report lists them (largest first, by absolute value). Only functions
    /// above `cg_annotate`'s threshold (0.1% by default) are listed, so
    /// these need not add up to the total.
    pub functions: Vec<FunctionCost>,
}

/// Parses the text `cg_annotate` printed, from either Valgrind generation.
///
/// # Errors
///
/// [`ProfileError::Empty`] for blank text; [`ProfileError::Truncated`] when
/// the report stops before the end of its function summary (there is no
/// `PROGRAM TOTALS` line, say); [`ProfileError::MissingEvent`] when `Ir` is
/// not among the columns (`--show` left it out);
/// [`ProfileError::Malformed`] for a line that does not fit the layout;
/// [`ProfileError::Unrecognized`] for text that is not a report at all.
pub fn parse(text: &str) -> Result<Annotation, ProfileError> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().all(|line| line.trim().is_empty()) {
        return Err(ProfileError::Empty);
    }
    if python::recognises(&lines) {
        python::parse(&lines)
    } else if perl::recognises(&lines) {
        perl::parse(&lines)
    } else {
        Err(ProfileError::Unrecognized {
            expected: "`cg_annotate` output",
            reason: "it has neither an `Events shown:` line nor `-- Summary` headings".to_owned(),
        })
    }
}

/// Reads and parses a file holding `cg_annotate` output.
///
/// # Errors
///
/// [`ProfileError::Io`] if the file cannot be read, otherwise the errors of
/// [`parse`] wrapped in [`ProfileError::InFile`], which names the file.
pub fn read(path: &Path) -> Result<Annotation, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|error| ProfileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    parse(&text).map_err(|error| error.in_file(path))
}

/// The parts both layouts share: the `Events shown:` line, and the
/// `PROGRAM TOTALS` line after it.
struct Header {
    events: Vec<String>,
    /// Index of `Ir` in `events`.
    ir: usize,
    total_instructions: i64,
    /// Index in the input of the `PROGRAM TOTALS` line.
    totals_line: usize,
}

impl Header {
    /// Finds the header parts, searching from line index `from` on.
    fn find(lines: &[&str], from: usize) -> Result<Header, ProfileError> {
        let (events_line, events) = lines
            .iter()
            .enumerate()
            .skip(from)
            .find_map(|(i, line)| {
                line.strip_prefix("Events shown:")
                    .map(|events| (i, events.split_whitespace().map(str::to_owned).collect()))
            })
            .ok_or(ProfileError::Truncated {
                missing: "`Events shown:` line",
            })?;
        let events: Vec<String> = events;
        if events.is_empty() {
            return Err(ProfileError::malformed(
                events_line + 1,
                "the `Events shown:` line names no event",
            ));
        }
        let ir =
            events
                .iter()
                .position(|e| e == "Ir")
                .ok_or_else(|| ProfileError::MissingEvent {
                    event: "Ir".to_owned(),
                    available: events.clone(),
                })?;

        let totals_line = (events_line..lines.len())
            .find(|&i| lines[i].trim_end().ends_with("PROGRAM TOTALS"))
            .ok_or(ProfileError::Truncated {
                missing: "`PROGRAM TOTALS` line",
            })?;
        let row = columns::row(totals_line + 1, lines[totals_line], events.len())?;
        if row.label != "PROGRAM TOTALS" {
            return Err(ProfileError::malformed(
                totals_line + 1,
                format!(
                    "expected only counts before `PROGRAM TOTALS`, found {:?}",
                    row.label
                ),
            ));
        }
        let total_instructions = row.counts[ir].ok_or_else(|| {
            ProfileError::malformed(
                totals_line + 1,
                "the `PROGRAM TOTALS` line has no `Ir` count",
            )
        })?;
        Ok(Header {
            events,
            ir,
            total_instructions,
            totals_line,
        })
    }
}

/// Splits a `file:function` label. The file comes first and the split is at
/// its first colon: function names often contain colons (`core::ptr::...`,
/// C++ `ns::f`), file paths on Linux practically never do, and the Perl
/// `cg_annotate` splits the same way.
fn split_file_function(line: usize, label: &str) -> Result<(String, String), ProfileError> {
    match label.split_once(':') {
        Some((file, function)) if !file.is_empty() && !function.is_empty() => {
            Ok((file.to_owned(), function.to_owned()))
        }
        _ => Err(ProfileError::malformed(
            line,
            format!("expected `file:function`, found {label:?}"),
        )),
    }
}

/// Whether `line` is one of the 80-dash rules both layouts draw.
fn is_rule(line: &str) -> bool {
    line.len() >= 3 && line.bytes().all(|b| b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_empty() {
        for text in ["", "\n", "   \n\n"] {
            assert!(matches!(parse(text), Err(ProfileError::Empty)), "{text:?}");
        }
    }

    #[test]
    fn other_text_is_unrecognized() {
        let error = parse("hello\nworld\n").expect_err("not cg_annotate output");
        assert!(
            matches!(error, ProfileError::Unrecognized { .. }),
            "{error}"
        );
        // A raw profile is not a report either.
        let error = parse("cmd: ./a\nevents: Ir\nfl=a\nfn=b\n1 1\nsummary: 1\n").expect_err("raw");
        assert!(
            matches!(error, ProfileError::Unrecognized { .. }),
            "{error}"
        );
    }

    #[test]
    fn file_function_splits_at_the_first_colon() {
        assert_eq!(
            split_file_function(1, "src/lib.rs:core::ptr::drop_in_place<x::Y>").expect("ok"),
            ("src/lib.rs".into(), "core::ptr::drop_in_place<x::Y>".into())
        );
        assert_eq!(
            split_file_function(1, "???:(below main)").expect("ok"),
            ("???".into(), "(below main)".into())
        );
        for bad in ["nocolon", ":f", "file:"] {
            assert!(split_file_function(7, bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rules() {
        assert!(is_rule(&"-".repeat(80)));
        assert!(!is_rule("-- Summary"));
        assert!(!is_rule(""));
    }

    #[test]
    fn read_names_the_file() {
        let error = read(Path::new("/nonexistent/annotated.txt")).expect_err("no such file");
        assert!(
            error.to_string().contains("/nonexistent/annotated.txt"),
            "{error}"
        );
    }
}
