//! The layout of the Perl `cg_annotate` (Valgrind 3.19 and earlier):
//!
//! ```text
//! --------------------------------------------------------------------------------
//! I1 cache:         32768 B, 64 B, 8-way associative        (desc: lines, if any)
//! Command:          ./loop 100000
//! Data file:        v3.19/loop-n.cachegrind.out
//! Events recorded:  Ir
//! Events shown:     Ir
//! ...
//! --------------------------------------------------------------------------------
//! Ir
//! --------------------------------------------------------------------------------
//! 857,380 (100.0%)  PROGRAM TOTALS
//!
//! --------------------------------------------------------------------------------
//! Ir                file:function
//! --------------------------------------------------------------------------------
//! 700,007 (81.64%)  src/loop.c:spin_17h1a2b3c4d
//!  28,676 ( 3.34%)  src/loop.c:checksum
//!  ...
//!                                                           (a blank line ends the list)
//! -- Auto-annotated source: src/loop.c                      (source listings follow)
//! ```
//!
//! On a `cg_diff` output the header has `Files compared:` and counts may be
//! negative; nothing else changes.

use super::{columns, is_rule, split_file_function, Annotation, Header};
use crate::{FunctionCost, ProfileError};

/// Whether the text looks like this layout (the caller checks first that it
/// has no Python-style headings): it opens with a rule, or has the
/// `Events shown:` line. Recognising the opening rule alone lets a report
/// cut short in its header be called truncated rather than unrecognised.
pub(super) fn recognises(lines: &[&str]) -> bool {
    lines.first().is_some_and(|line| is_rule(line))
        || lines.iter().any(|line| line.starts_with("Events shown:"))
}

pub(super) fn parse(lines: &[&str]) -> Result<Annotation, ProfileError> {
    let header = Header::find(lines, 0)?;

    // The list header: a rule, the event names ending in "file:function", a
    // rule.
    let list_header = (header.totals_line + 1..lines.len())
        .find(|&i| lines[i].trim_end().ends_with(" file:function"))
        .ok_or(ProfileError::Truncated {
            missing: "`file:function` list",
        })?;
    let first_row = list_header + 2;
    match lines.get(list_header + 1) {
        Some(line) if is_rule(line) => {}
        Some(line) => {
            return Err(ProfileError::malformed(
                list_header + 2,
                format!("expected a rule under the `file:function` header, found {line:?}"),
            ))
        }
        None => {
            return Err(ProfileError::Truncated {
                missing: "`file:function` list",
            })
        }
    }

    let mut functions = Vec::new();
    let mut ended = false;
    for (i, line) in lines.iter().enumerate().skip(first_row) {
        if line.trim().is_empty() {
            ended = true;
            break;
        }
        let row = columns::row(i + 1, line, header.events.len())?;
        let (file, function) = split_file_function(i + 1, row.label)?;
        functions.push(FunctionCost {
            file,
            function,
            // "." means the function has no count for the event: none ran.
            instructions: row.counts[header.ir].unwrap_or(0),
        });
    }
    if !ended {
        // cg_annotate always ends the list with a blank line; without it we
        // cannot know whether rows are missing.
        return Err(ProfileError::Truncated {
            missing: "blank line that ends the `file:function` list",
        });
    }

    Ok(Annotation {
        events: header.events,
        total_instructions: header.total_instructions,
        functions,
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use crate::{FunctionCost, ProfileError};

    const RULE: &str =
        "--------------------------------------------------------------------------------";

    fn report(rows: &str) -> String {
        format!(
            "{RULE}\nCommand:          ./loop 10\nData file:        x\nEvents recorded:  Ir Bc\n\
             Events shown:     Ir Bc\nEvent sort order: Ir Bc\nThresholds:       0.1 100\n\
             Include dirs:     \nUser annotated:   \nAuto-annotation:  on\n\n\
             {RULE}\nIr             Bc            \n{RULE}\n\
             1,000 (100.0%) 20 (100.0%)  PROGRAM TOTALS\n\n\
             {RULE}\nIr            Bc          file:function\n{RULE}\n{rows}"
        )
    }

    #[test]
    fn reads_totals_and_rows() {
        let text = report(&format!(
            "  900 (90.00%) 15 (75.00%)  a.c:main\n \
             -100 (-10.0%)  .           ???:(below main)\n\n\
             {RULE}\n-- Auto-annotated source: a.c\n"
        ));
        let annotation = parse(&text).expect("valid");
        assert_eq!(annotation.events, ["Ir", "Bc"]);
        assert_eq!(annotation.total_instructions, 1_000);
        assert_eq!(
            annotation.functions,
            [
                FunctionCost {
                    file: "a.c".into(),
                    function: "main".into(),
                    instructions: 900
                },
                FunctionCost {
                    file: "???".into(),
                    function: "(below main)".into(),
                    instructions: -100
                },
            ]
        );
    }

    #[test]
    fn an_empty_list_is_fine_when_it_is_complete() {
        let annotation = parse(&report("\n")).expect("valid");
        assert!(annotation.functions.is_empty());
    }

    #[test]
    fn truncation() {
        let full = report("  900 (90.00%) 15 (75.00%)  a.c:main\n\n");
        // Cut anywhere before the list's closing blank line: an error.
        for cut in [
            full.find("Events shown").expect("present") + 3,
            full.find("PROGRAM").expect("present") + 3,
            full.find("file:function").expect("present") + 20,
            full.find("a.c:main").expect("present") + 8,
        ] {
            match parse(&full[..cut]) {
                Err(ProfileError::Truncated { .. }) => {}
                other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_bad_row_is_malformed() {
        let text = report("  9x0 (90.00%) 15 (75.00%)  a.c:main\n\n");
        assert!(matches!(parse(&text), Err(ProfileError::Malformed { .. })));
        let text = report("  900 (90.00%) 15 (75.00%)  nofunction\n\n");
        assert!(matches!(parse(&text), Err(ProfileError::Malformed { .. })));
    }

    #[test]
    fn ir_must_be_shown() {
        let text = report("\n").replace("Events shown:     Ir Bc", "Events shown:     Bc");
        assert!(matches!(
            parse(&text),
            Err(ProfileError::MissingEvent { .. })
        ));
    }
}
