//! The layout of the Python `cg_annotate` (Valgrind 3.21 and later; the
//! details below were checked against 3.24):
//!
//! ```text
//! -- Metadata
//! Invocation:       .../cg_annotate v3.24/loop-n.cachegrind.out
//! Command:          ./loop 100000            (--diff: "Command 1:", "Command 2:")
//! Events recorded:  Ir
//! Events shown:     Ir
//! ...
//! -- Summary
//! Ir______________
//!
//! 857,711 (100.0%)  PROGRAM TOTALS
//!
//! -- File:function summary
//!   Ir______________________  file:function
//!
//! < 728,704 (85.0%, 85.0%)  src/loop.c:                 (a file: its total, running total)
//!   700,007 (81.6%)           spin_17h1a2b3c4d          (its functions above the threshold)
//!    28,676  (3.3%)           checksum
//!
//! <   8,106  (1.0%, 93.7%)  ./elf/dl-new-hash.h:_dl_lookup_symbol_x
//!                                                       (a file whose one listed function
//!                                                        is all of it: a single row)
//! -- Function:file summary                              (the same costs, grouped by function)
//! -- Annotated source file: ...                         (source listings)
//! -- Annotation summary
//! ```
//!
//! (Rules of 80 dashes around each `-- ` heading are left out above.)
//!
//! A file's total (the `<` row) counts all of its functions, including those
//! below the threshold, so it is not a function row. Only the `File:function`
//! section is read; the `Function:file` section repeats the same numbers.

use super::{columns, is_rule, split_file_function, Annotation, Header};
use crate::{FunctionCost, ProfileError};

const SUMMARY: &str = "-- Summary";
const FILE_FUNCTION: &str = "-- File:function summary";

/// Whether the text has this layout's section headings.
pub(super) fn recognises(lines: &[&str]) -> bool {
    lines
        .iter()
        .any(|line| *line == "-- Metadata" || *line == SUMMARY)
}

pub(super) fn parse(lines: &[&str]) -> Result<Annotation, ProfileError> {
    // "Events shown:" is in the Metadata section, before "-- Summary".
    let header = Header::find(lines, 0)?;
    let summary_heading = heading(lines, SUMMARY, 0).ok_or(ProfileError::Truncated {
        missing: "`-- Summary` section",
    })?;
    if header.totals_line < summary_heading {
        return Err(ProfileError::malformed(
            header.totals_line + 1,
            "`PROGRAM TOTALS` before the `-- Summary` heading",
        ));
    }

    let section =
        heading(lines, FILE_FUNCTION, header.totals_line).ok_or(ProfileError::Truncated {
            missing: "`-- File:function summary` section",
        })?;
    // The heading, its closing rule, then the column header line.
    let column_header = section + 2;
    match lines.get(column_header) {
        Some(line) if line.trim_end().ends_with(" file:function") => {}
        Some(line) => {
            return Err(ProfileError::malformed(
                column_header + 1,
                format!("expected the `file:function` column header, found {line:?}"),
            ))
        }
        None => {
            return Err(ProfileError::Truncated {
                missing: "`-- File:function summary` section",
            })
        }
    }

    let functions = file_function_rows(lines, column_header + 1, &header)?;
    Ok(Annotation {
        events: header.events,
        total_instructions: header.total_instructions,
        functions,
    })
}

/// Reads the `File:function` rows from line index `start` up to the rule that
/// opens the next section.
fn file_function_rows(
    lines: &[&str],
    start: usize,
    header: &Header,
) -> Result<Vec<FunctionCost>, ProfileError> {
    let columns = header.events.len();
    let mut functions = Vec::new();
    // The file of the group being read, once its `<` row said it has
    // function rows under it.
    let mut group_file: Option<String> = None;
    for i in start..lines.len() {
        let line = lines[i];
        let n = i + 1;
        if line.trim().is_empty() {
            group_file = None;
        } else if is_rule(line) {
            // The next section starts: this one is complete.
            return Ok(functions);
        } else if let Some(outer) = line.strip_prefix("< ") {
            let row = columns::row(n, outer, columns)?;
            let has_function_rows = lines
                .get(i + 1)
                .is_some_and(|next| next.starts_with("  ") && !next.trim().is_empty());
            if has_function_rows {
                let file = row.label.strip_suffix(':').ok_or_else(|| {
                    ProfileError::malformed(
                        n,
                        format!(
                            "expected `file:` over the function rows, found {:?}",
                            row.label
                        ),
                    )
                })?;
                group_file = Some(file.to_owned());
            } else {
                // Only one function was listed and it is the whole file:
                // cg_annotate prints both on one `file:function` row.
                let (file, function) = split_file_function(n, row.label)?;
                functions.push(FunctionCost {
                    file,
                    function,
                    instructions: row.counts[header.ir].unwrap_or(0),
                });
                group_file = None;
            }
        } else if line.starts_with("  ") {
            let Some(file) = &group_file else {
                return Err(ProfileError::malformed(
                    n,
                    format!("function row without a `< file:` row above it: {line:?}"),
                ));
            };
            let row = columns::row(n, line, columns)?;
            functions.push(FunctionCost {
                file: file.clone(),
                function: row.label.to_owned(),
                instructions: row.counts[header.ir].unwrap_or(0),
            });
        } else {
            return Err(ProfileError::malformed(
                n,
                format!("expected a `< file` row or a function row, found {line:?}"),
            ));
        }
    }
    // The Function:file section always follows; without it rows may be
    // missing.
    Err(ProfileError::Truncated {
        missing: "end of the `-- File:function summary` section",
    })
}

/// The index of the line `-- {title}` framed by rules, searching from
/// `from`.
fn heading(lines: &[&str], title: &str, from: usize) -> Option<usize> {
    (from.max(1)..lines.len().saturating_sub(1))
        .find(|&i| lines[i] == title && is_rule(lines[i - 1]) && is_rule(lines[i + 1]))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use crate::{FunctionCost, ProfileError};

    const RULE: &str =
        "--------------------------------------------------------------------------------";

    fn report(rows: &str) -> String {
        format!(
            "{RULE}\n-- Metadata\n{RULE}\nInvocation:       cg_annotate x\nCommand:          ./loop 10\n\
             Events recorded:  Ir\nEvents shown:     Ir\nEvent sort order: Ir\n\
             Threshold:        0.1%\nAnnotation:       on\n\n\
             {RULE}\n-- Summary\n{RULE}\nIr______________ \n\n\
             1,000 (100.0%)  PROGRAM TOTALS\n\n\
             {RULE}\n-- File:function summary\n{RULE}\n  Ir______________________  file:function\n\n\
             {rows}\
             {RULE}\n-- Function:file summary\n{RULE}\n  Ir_____  function:file\n\n"
        )
    }

    fn cost(file: &str, function: &str, instructions: i64) -> FunctionCost {
        FunctionCost {
            file: file.into(),
            function: function.into(),
            instructions,
        }
    }

    #[test]
    fn groups_and_single_rows() {
        let text = report(
            "< 900 (90.0%, 90.0%)  src/lib.rs:\n\
            \x20 700 (70.0%)           a::b::c\n\
            \x20 150 (15.0%)           <T as core::ops::Drop>::drop\n\
             \n\
             < -80 (-8.0%, 82.0%)  ???:(below main)\n\
             \n",
        );
        let annotation = parse(&text).expect("valid");
        assert_eq!(annotation.events, ["Ir"]);
        assert_eq!(annotation.total_instructions, 1_000);
        assert_eq!(
            annotation.functions,
            [
                cost("src/lib.rs", "a::b::c", 700),
                cost("src/lib.rs", "<T as core::ops::Drop>::drop", 150),
                cost("???", "(below main)", -80),
            ]
        );
    }

    #[test]
    fn no_rows() {
        let annotation = parse(&report("")).expect("valid");
        assert!(annotation.functions.is_empty());
    }

    #[test]
    fn truncation() {
        let full = report("< 900 (90.0%, 90.0%)  a.c:main\n\n");
        for cut in [
            full.find("Events shown").expect("present") + 3,
            full.find("-- Summary").expect("present") + 12,
            full.find("PROGRAM").expect("present") + 3,
            full.find("-- File:function").expect("present") + 3,
            full.find("a.c:main").expect("present") + 8,
        ] {
            match parse(&full[..cut]) {
                Err(ProfileError::Truncated { .. }) => {}
                other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
            }
        }
    }

    #[test]
    fn orphan_function_row_is_malformed() {
        let text = report("  700 (70.0%)           f\n\n");
        assert!(matches!(parse(&text), Err(ProfileError::Malformed { .. })));
    }

    #[test]
    fn a_group_header_must_end_in_a_colon() {
        let text = report("< 900 (90.0%, 90.0%)  a.c:main\n  700 (70.0%)  f\n\n");
        assert!(matches!(parse(&text), Err(ProfileError::Malformed { .. })));
    }

    #[test]
    fn stray_text_is_malformed() {
        let text = report("something else\n\n");
        assert!(matches!(parse(&text), Err(ProfileError::Malformed { .. })));
    }
}
