//! The raw profile files Cachegrind writes (`cachegrind.out.<pid>`), and
//! the files `cg_diff` writes, which have the same format.
//!
//! The format, as Valgrind's manual gives it and as both 3.19 and 3.24
//! write it:
//!
//! ```text
//! desc: I1 cache:         32768 B, 64 B, 8-way associative   (zero or more)
//! cmd: ./loop 100000
//! events: Ir
//! fl=src/loop.c                                                (a source file)
//! fn=spin                                                      (a function in it)
//! 34 300004                                                    (line, then one count per event)
//! 35 400002
//! summary: 828612                                              (totals, last line)
//! ```
//!
//! Cachegrind writes `summary:` only when the process has exited, so a file
//! without it comes from a run that was killed, or was cut short on disk;
//! that is an error ([`ProfileError::Truncated`]), never a smaller count.
//! The summary is also checked against the sum of the cost lines, as the
//! 3.24 `cg_annotate` does.
//!
//! Details from real files (see `tests/fixtures/`):
//! * 3.24 writes no `desc:` lines when the cache simulation is off;
//! * `cg_diff` (3.19) writes `cmd:` with two spaces and both commands joined
//!   by `; `, puts every cost on line 0, and writes negative counts;
//! * names are written in full: unlike Callgrind's `fl=(1) name`, Cachegrind
//!   does not compress them, in either version;
//! * a cost line may have fewer counts than there are events (the rest are
//!   zero), and the manual allows `.` for a zero count.

use std::collections::HashMap;
use std::path::Path;

use crate::error::quote;
use crate::{number, FunctionCost, ProfileError};

/// One Cachegrind profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The profiled command line, from the `cmd:` line (for a `cg_diff`
    /// output, both commands joined by `; `).
    pub command: Option<String>,
    /// The events counted, in column order, from the `events:` line:
    /// `["Ir"]` by default, more with `--cache-sim=yes` or
    /// `--branch-sim=yes`.
    pub events: Vec<String>,
    /// The totals from the `summary:` line, one per event. Negative values
    /// occur in `cg_diff` output.
    pub summary: Vec<i64>,
    /// Instructions per (file, function), summed over the function's lines,
    /// in the order each pair first appears in the file. Empty when the
    /// profile has no `Ir` event.
    pub functions: Vec<FunctionCost>,
}

impl Profile {
    /// The total count of `event` from the `summary:` line, or `None` if the
    /// profile did not count that event.
    #[must_use]
    pub fn total(&self, event: &str) -> Option<i64> {
        let index = self.events.iter().position(|e| e == event)?;
        self.summary.get(index).copied()
    }

    /// The total number of instructions executed (the `Ir` event).
    ///
    /// # Errors
    ///
    /// [`ProfileError::MissingEvent`] if the profile has no `Ir` column;
    /// Cachegrind always counts it, so such a file was not written by
    /// Cachegrind.
    pub fn instructions(&self) -> Result<i64, ProfileError> {
        self.total("Ir").ok_or_else(|| ProfileError::MissingEvent {
            event: "Ir".to_owned(),
            available: self.events.clone(),
        })
    }
}

/// Parses the text of a Cachegrind profile.
///
/// # Errors
///
/// [`ProfileError::Empty`] for blank text; [`ProfileError::Truncated`] when
/// the `events:` or the final `summary:` line is missing (a killed run);
/// [`ProfileError::Malformed`] for a line that does not fit the format, with
/// its line number; [`ProfileError::SummaryMismatch`] when the summary is
/// not the sum of the cost lines.
pub fn parse(text: &str) -> Result<Profile, ProfileError> {
    let mut parser = Parser::default();
    for (index, line) in text.lines().enumerate() {
        parser.line(index + 1, line)?;
    }
    parser.finish()
}

/// Reads and parses a Cachegrind profile file.
///
/// # Errors
///
/// [`ProfileError::Io`] if the file cannot be read, otherwise the errors of
/// [`parse`] wrapped in [`ProfileError::InFile`], which names the file.
pub fn read(path: &Path) -> Result<Profile, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|error| ProfileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    parse(&text).map_err(|error| error.in_file(path))
}

/// Line-by-line state. The file is read in one pass; functions are summed
/// as their cost lines go by.
#[derive(Default)]
struct Parser {
    /// Whether any line other than blanks and comments was seen.
    any_content: bool,
    command: Option<String>,
    events: Option<Vec<String>>,
    /// Index of `Ir` in `events`.
    ir: Option<usize>,
    /// The current `fl=` name.
    file: Option<String>,
    /// Index into `functions` of the current (`fl=`, `fn=`) pair.
    function: Option<usize>,
    functions: Vec<FunctionCost>,
    /// Where each (file, function) pair is in `functions`.
    function_index: HashMap<(String, String), usize>,
    /// Sum of all cost lines, per event, to check the summary against.
    computed: Vec<i64>,
    summary: Option<Vec<i64>>,
}

impl Parser {
    fn line(&mut self, n: usize, line: &str) -> Result<(), ProfileError> {
        // Both cg_annotate versions skip blank and `#` lines anywhere.
        if line.trim().is_empty() || line.starts_with('#') {
            return Ok(());
        }
        self.any_content = true;
        if self.summary.is_some() {
            return Err(ProfileError::malformed(
                n,
                format!(
                    "{} after the `summary:` line, which must be the last",
                    quote(line)
                ),
            ));
        }

        // The header: `desc:` and `cmd:` lines, then `events:`.
        let Some(events) = &self.events else {
            if line.starts_with("desc:") {
                return Ok(());
            }
            if let Some(command) = line.strip_prefix("cmd:") {
                if self.command.is_some() {
                    return Err(ProfileError::malformed(n, "a second `cmd:` line"));
                }
                self.command = Some(command.trim().to_owned());
                return Ok(());
            }
            if let Some(events) = line.strip_prefix("events:") {
                return self.events_line(n, events);
            }
            return Err(ProfileError::malformed(
                n,
                format!(
                    "expected a `desc:`, `cmd:` or `events:` header line, found {}",
                    quote(line)
                ),
            ));
        };

        // The body.
        if line.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            let width = events.len();
            self.cost_line(n, line, width)
        } else if let Some(name) = line.strip_prefix("fl=") {
            self.file = Some(name.to_owned());
            self.function = None;
            Ok(())
        } else if let Some(name) = line.strip_prefix("fn=") {
            self.fn_line(n, name)
        } else if let Some(counts) = line.strip_prefix("summary:") {
            let summary = counts_of(n, counts.split_whitespace(), events.len(), "summary")?;
            self.summary = Some(summary);
            Ok(())
        } else if line.starts_with("events:") {
            Err(ProfileError::malformed(n, "a second `events:` line"))
        } else {
            Err(ProfileError::malformed(
                n,
                format!(
                    "expected `fl=`, `fn=`, a cost line or `summary:`, found {}",
                    quote(line)
                ),
            ))
        }
    }

    fn events_line(&mut self, n: usize, text: &str) -> Result<(), ProfileError> {
        let events: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        if events.is_empty() {
            return Err(ProfileError::malformed(
                n,
                "the `events:` line names no event",
            ));
        }
        for (i, event) in events.iter().enumerate() {
            if events[..i].contains(event) {
                return Err(ProfileError::malformed(
                    n,
                    format!("event `{event}` appears twice on the `events:` line"),
                ));
            }
        }
        self.ir = events.iter().position(|e| e == "Ir");
        self.computed = vec![0; events.len()];
        self.events = Some(events);
        Ok(())
    }

    fn fn_line(&mut self, n: usize, name: &str) -> Result<(), ProfileError> {
        let Some(file) = &self.file else {
            return Err(ProfileError::malformed(
                n,
                "`fn=` line before any `fl=` line: a function must belong to a file",
            ));
        };
        let functions = &mut self.functions;
        let index = *self
            .function_index
            .entry((file.clone(), name.to_owned()))
            .or_insert_with_key(|(file, function)| {
                functions.push(FunctionCost {
                    file: file.clone(),
                    function: function.clone(),
                    instructions: 0,
                });
                functions.len() - 1
            });
        self.function = Some(index);
        Ok(())
    }

    fn cost_line(&mut self, n: usize, line: &str, width: usize) -> Result<(), ProfileError> {
        let Some(function) = self.function else {
            return Err(ProfileError::malformed(
                n,
                "cost line before any `fn=` line: costs must belong to a function",
            ));
        };
        let mut fields = line.split_whitespace();
        let line_number = fields.next().unwrap_or_default();
        if number::plain(line_number).is_none() {
            return Err(ProfileError::malformed(
                n,
                format!("expected a line number, found {}", quote(line_number)),
            ));
        }
        let counts = counts_of(n, fields, width, "cost line")?;
        for (total, count) in self.computed.iter_mut().zip(&counts) {
            *total = total
                .checked_add(*count)
                .ok_or_else(|| ProfileError::malformed(n, "the counts overflow a 64-bit total"))?;
        }
        if let Some(ir) = self.ir {
            let cost = &mut self.functions[function].instructions;
            *cost = cost.checked_add(counts[ir]).ok_or_else(|| {
                ProfileError::malformed(n, "the function's instructions overflow a 64-bit total")
            })?;
        }
        Ok(())
    }

    fn finish(self) -> Result<Profile, ProfileError> {
        if !self.any_content {
            return Err(ProfileError::Empty);
        }
        let Some(events) = self.events else {
            return Err(ProfileError::Truncated {
                missing: "`events:` line",
            });
        };
        let Some(summary) = self.summary else {
            return Err(ProfileError::Truncated {
                missing: "`summary:` line",
            });
        };
        for ((event, &summary), &computed) in events.iter().zip(&summary).zip(&self.computed) {
            if summary != computed {
                return Err(ProfileError::SummaryMismatch {
                    event: event.clone(),
                    summary,
                    computed,
                });
            }
        }
        let functions = if self.ir.is_some() {
            self.functions
        } else {
            Vec::new()
        };
        Ok(Profile {
            command: self.command,
            events,
            summary,
            functions,
        })
    }
}

/// Parses the counts of a cost or summary line: at most `width` of them,
/// each an integer or `.` (zero), padded with zeros to `width`, as both
/// `cg_annotate` versions do.
fn counts_of<'a>(
    n: usize,
    fields: impl Iterator<Item = &'a str>,
    width: usize,
    what: &str,
) -> Result<Vec<i64>, ProfileError> {
    let mut counts = Vec::with_capacity(width);
    for field in fields {
        if counts.len() == width {
            return Err(ProfileError::malformed(
                n,
                format!("{what} has more counts than the {width} events"),
            ));
        }
        let count = if field == "." {
            0
        } else {
            number::plain(field).ok_or_else(|| {
                ProfileError::malformed(n, format!("expected a count, found {}", quote(field)))
            })?
        };
        counts.push(count);
    }
    if what == "summary" && counts.is_empty() {
        return Err(ProfileError::malformed(
            n,
            "the `summary:` line has no count",
        ));
    }
    counts.resize(width, 0);
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "\
desc: I1 cache:         32768 B, 64 B, 8-way associative
cmd: ./loop 10
events: Ir Bc
fl=src/loop.c
fn=spin
33 1
34 31 11
fn=main
50 2
fl=inc.h
fn=spin
7 3 1
fl=src/loop.c
fn=spin
35 40
summary: 77 12
";

    #[test]
    fn parses_header_and_sums_functions_over_lines() {
        let profile = parse(SMALL).expect("valid profile");
        assert_eq!(profile.command.as_deref(), Some("./loop 10"));
        assert_eq!(profile.events, ["Ir", "Bc"]);
        assert_eq!(profile.summary, [77, 12]);
        assert_eq!(profile.total("Ir"), Some(77));
        assert_eq!(profile.total("Bc"), Some(12));
        assert_eq!(profile.total("Dr"), None);
        assert_eq!(profile.instructions().expect("has Ir"), 77);
        let cost = |file: &str, function: &str, instructions: i64| FunctionCost {
            file: file.into(),
            function: function.into(),
            instructions,
        };
        // spin in loop.c comes back after inc.h and is merged, not repeated;
        // spin inlined from inc.h is its own entry.
        assert_eq!(
            profile.functions,
            [
                cost("src/loop.c", "spin", 1 + 31 + 40),
                cost("src/loop.c", "main", 2),
                cost("inc.h", "spin", 3),
            ]
        );
    }

    #[test]
    fn cg_diff_output_with_negative_counts() {
        let text = "\
desc: Files compared:   a; b
cmd:  ./loop 1; ./loop 2
events:  Ir
fl=x.c
fn=f
0 -5
fn=g
0 12
summary: 7
";
        let profile = parse(text).expect("valid diff");
        assert_eq!(profile.command.as_deref(), Some("./loop 1; ./loop 2"));
        assert_eq!(profile.instructions().expect("has Ir"), 7);
        assert_eq!(profile.functions[0].instructions, -5);
        assert_eq!(profile.functions[1].instructions, 12);
    }

    #[test]
    fn short_cost_lines_and_dots_count_as_zero() {
        let text = "cmd: x\nevents: Ir Dr Dw\nfl=a\nfn=b\n1 5\n2 . 3\nsummary: 5 3\n";
        let profile = parse(text).expect("valid");
        assert_eq!(profile.summary, [5, 3, 0]);
        assert_eq!(profile.total("Dw"), Some(0));
    }

    #[test]
    fn no_desc_and_no_cmd_are_accepted() {
        // 3.24 writes no desc: lines without the cache simulation.
        let profile = parse("cmd: ./a\nevents: Ir\nfl=f\nfn=g\n1 1\nsummary: 1\n").expect("ok");
        assert_eq!(profile.command.as_deref(), Some("./a"));
        let profile = parse("events: Ir\nsummary: 0\n").expect("ok");
        assert_eq!(profile.command, None);
        assert!(profile.functions.is_empty());
    }

    #[test]
    fn without_ir_there_are_no_instructions() {
        let profile = parse("events: Bc\nfl=f\nfn=g\n1 4\nsummary: 4\n").expect("ok");
        assert_eq!(profile.total("Bc"), Some(4));
        assert!(profile.functions.is_empty());
        let error = profile.instructions().expect_err("no Ir");
        assert!(
            matches!(error, ProfileError::MissingEvent { .. }),
            "{error}"
        );
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let text = "# made by hand\ncmd: x\n\nevents: Ir\n# c\nfl=f\nfn=g\n1 2\n\nsummary: 2\n\n";
        assert_eq!(parse(text).expect("ok").summary, [2]);
    }

    #[test]
    fn empty_input() {
        for text in ["", "\n\n", "  \n", "# only a comment\n"] {
            assert!(matches!(parse(text), Err(ProfileError::Empty)), "{text:?}");
        }
    }

    #[test]
    fn missing_summary_is_truncation() {
        let cut = &SMALL[..SMALL.find("summary").expect("has summary")];
        match parse(cut) {
            Err(error @ ProfileError::Truncated { .. }) => {
                assert!(error.to_string().contains("`summary:` line"), "{error}");
            }
            other => panic!("expected Truncated, got {other:?}"),
        }
        // Cut inside the header.
        assert!(matches!(
            parse("desc: I1 cache: 32768 B\ncmd: ./lo"),
            Err(ProfileError::Truncated { missing }) if missing.contains("events")
        ));
    }

    #[test]
    fn a_cut_summary_line_is_caught_by_the_check() {
        let cut = SMALL.replace("summary: 77 12", "summary: 7");
        match parse(&cut) {
            Err(ProfileError::SummaryMismatch {
                event,
                summary,
                computed,
            }) => {
                assert_eq!((event.as_str(), summary, computed), ("Ir", 7, 77));
            }
            other => panic!("expected SummaryMismatch, got {other:?}"),
        }
    }

    #[test]
    fn malformed_lines_name_their_line_number() {
        let cases = [
            ("hello world\n", 1, "header"),
            (
                "events: Ir\nfl=a\nfn=b\n1 x\nsummary: 0\n",
                4,
                "expected a count",
            ),
            (
                "events: Ir\nfl=a\nfn=b\n1 1 2\nsummary: 1\n",
                4,
                "more counts",
            ),
            (
                "events: Ir\nfl=a\nfn=b\n1x 1\nsummary: 1\n",
                4,
                "line number",
            ),
            ("events: Ir\nfn=b\n1 1\nsummary: 1\n", 2, "before any `fl=`"),
            ("events: Ir\nfl=a\n1 1\nsummary: 1\n", 3, "before any `fn=`"),
            (
                "events: Ir\nfl=a\nfn=b\n1 1\nsummary: 1\nfl=c\n",
                6,
                "after the `summary:`",
            ),
            (
                "events: Ir\nfl=a\nfn=b\nbogus\nsummary: 0\n",
                4,
                "found \"bogus\"",
            ),
            ("events: Ir\nevents: Ir\n", 2, "second `events:`"),
            ("cmd: a\ncmd: b\nevents: Ir\n", 2, "second `cmd:`"),
            ("events:\n", 1, "no event"),
            ("events: Ir Ir\n", 1, "twice"),
            ("events: Ir\nsummary:\n", 2, "no count"),
            ("events: Ir\nsummary: 1 2\n", 2, "more counts"),
        ];
        for (text, line, needle) in cases {
            match parse(text) {
                Err(error @ ProfileError::Malformed { .. }) => {
                    let message = error.to_string();
                    assert!(message.starts_with(&format!("line {line}: ")), "{message}");
                    assert!(message.contains(needle), "{message} lacks {needle:?}");
                }
                other => panic!("{text:?}: expected Malformed, got {other:?}"),
            }
        }
    }

    #[test]
    fn binary_garbage_is_an_error_not_a_panic() {
        let garbage = "\u{1}\u{2}ELF\u{0}\u{0}\u{0}";
        assert!(matches!(
            parse(garbage),
            Err(ProfileError::Malformed { line: 1, .. })
        ));
    }

    #[test]
    fn overflow_is_an_error() {
        let text = "events: Ir\nfl=a\nfn=b\n1 9223372036854775807\n2 1\nsummary: 1\n";
        assert!(matches!(
            parse(text),
            Err(ProfileError::Malformed { line: 5, .. })
        ));
    }

    #[test]
    fn read_names_the_file() {
        let missing = Path::new("/nonexistent/cachegrind.out.1");
        let error = read(missing).expect_err("no such file");
        assert!(matches!(error, ProfileError::Io { .. }));
        assert!(error.to_string().contains("/nonexistent/cachegrind.out.1"));
    }
}
