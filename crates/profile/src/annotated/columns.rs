//! One row of counts followed by a name, as both `cg_annotate` layouts
//! print them:
//!
//! ```text
//! 700,007 (84.48%)  src/loop.c:spin                          (3.19)
//! -21,504 (-3.17%)  src/loop.c:checksum                      (3.19, diff)
//!       0           0           ./elf/rtld.c:dl_main         (3.19, zero: no percentage)
//! < 728,704 (85.0%, 85.0%)  src/loop.c:                      (3.24, file total)
//!    28,676  (3.3%)            checksum                      (3.24, function)
//! ```
//!
//! Each column is a count with thousands separators, or `.` (no count), then
//! optionally a parenthesised percentage: one (`(84.48%)`, `( 2.56%)`) or
//! two (`(85.0%, 85.0%)`), or `n/a` when the total is zero. Columns are
//! right-aligned, so the amount of white space carries no meaning. Whatever
//! follows the last column is the row's label; it may itself start with a
//! parenthesis (`(below main)` is a real Valgrind function name), which is
//! why a parenthesised group is only taken as a percentage if it looks like
//! one.

use crate::error::quote;
use crate::{number, ProfileError};

/// A parsed row: one count per column (`None` for `.`), then the label.
#[derive(Debug, PartialEq)]
pub(super) struct Row<'a> {
    pub(super) counts: Vec<Option<i64>>,
    pub(super) label: &'a str,
}

/// Parses `text` as `columns` counts and a label. `line` (1-based) is for
/// error messages. A leading `< `/`> ` marker must already be stripped.
pub(super) fn row(line: usize, text: &str, columns: usize) -> Result<Row<'_>, ProfileError> {
    let mut rest = text;
    let mut counts = Vec::with_capacity(columns);
    for column in 1..=columns {
        rest = rest.trim_start_matches(' ');
        let end = rest.find([' ', '(']).unwrap_or(rest.len());
        let token = &rest[..end];
        let count = if token == "." {
            None
        } else {
            Some(number::commified(token).ok_or_else(|| {
                ProfileError::malformed(
                    line,
                    format!(
                        "expected a count in column {column} of {columns}, found {} in {}",
                        quote(token),
                        quote(text)
                    ),
                )
            })?)
        };
        counts.push(count);
        rest = &rest[end..];
        rest = skip_percentage(rest);
    }
    if !rest.starts_with(' ') {
        return Err(ProfileError::malformed(
            line,
            format!("expected a name after the counts in {}", quote(text)),
        ));
    }
    let label = rest.trim();
    if label.is_empty() {
        return Err(ProfileError::malformed(
            line,
            format!("expected a name after the counts in {}", quote(text)),
        ));
    }
    Ok(Row { counts, label })
}

/// Skips white space and a parenthesised percentage group at the start of
/// `text`, if there is one; otherwise returns `text` unchanged.
fn skip_percentage(text: &str) -> &str {
    let Some(inner) = text.trim_start_matches(' ').strip_prefix('(') else {
        return text;
    };
    let Some(close) = inner.find(')') else {
        return text;
    };
    if is_percentage_group(&inner[..close]) {
        &inner[close + 1..]
    } else {
        text
    }
}

/// `84.48%`, ` 2.56%`, `-100.0%`, `85.0%, 85.0%`, `n/a`, `n/a, n/a`.
fn is_percentage_group(content: &str) -> bool {
    content.split(',').all(|part| {
        let part = part.trim();
        part == "n/a"
            || part
                .strip_suffix('%')
                .is_some_and(|value| !value.is_empty() && value.parse::<f64>().is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, columns: usize) -> (Vec<Option<i64>>, String) {
        let row = row(1, text, columns).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        (row.counts, row.label.to_owned())
    }

    #[test]
    fn perl_rows() {
        assert_eq!(
            ok("700,007 (84.48%)  src/loop.c:spin_17h1a2b3c4d", 1),
            (vec![Some(700_007)], "src/loop.c:spin_17h1a2b3c4d".into())
        );
        assert_eq!(
            ok(" 21,245 ( 2.56%)  ./elf/./elf/dl-lookup.c:do_lookup_x", 1),
            (
                vec![Some(21_245)],
                "./elf/./elf/dl-lookup.c:do_lookup_x".into()
            )
        );
        assert_eq!(
            ok("-700,007 (-100.0%)  src/src/loop.c:spin", 1),
            (vec![Some(-700_007)], "src/src/loop.c:spin".into())
        );
        assert_eq!(
            ok(
                "700,007 (81.69%) 100,001 (77.27%)  10 ( 0.31%)   0           0           src/loop.c:spin",
                5
            ),
            (
                vec![Some(700_007), Some(100_001), Some(10), Some(0), Some(0)],
                "src/loop.c:spin".into()
            )
        );
        assert_eq!(
            ok("828,612 (100.0%)  PROGRAM TOTALS", 1),
            (vec![Some(828_612)], "PROGRAM TOTALS".into())
        );
    }

    #[test]
    fn python_rows() {
        assert_eq!(
            ok(" 33,687  (4.1%, 88.5%)  ./elf/./elf/dl-lookup.c:", 1),
            (vec![Some(33_687)], "./elf/./elf/dl-lookup.c:".into())
        );
        assert_eq!(
            ok("   21,245  (2.6%)           do_lookup_x", 1),
            (vec![Some(21_245)], "do_lookup_x".into())
        );
        assert_eq!(
            ok("-21,504  (-3.2%, 100.0%)  checksum:src/loop.c", 1),
            (vec![Some(-21_504)], "checksum:src/loop.c".into())
        );
        assert_eq!(
            ok("0 (n/a, n/a)  a.c:f", 1),
            (vec![Some(0)], "a.c:f".into())
        );
    }

    #[test]
    fn no_percentages_and_missing_counts() {
        // --show-percs=no / --no-show-percs, and "." for no count.
        assert_eq!(
            ok("1,234 .  x.c:f", 2),
            (vec![Some(1_234), None], "x.c:f".into())
        );
    }

    #[test]
    fn a_name_in_parentheses_is_not_a_percentage() {
        assert_eq!(
            ok("     0           (below main)", 1),
            (vec![Some(0)], "(below main)".into())
        );
        assert_eq!(
            ok("1,000 (1.0%)  (below main)", 1),
            (vec![Some(1_000)], "(below main)".into())
        );
    }

    #[test]
    fn names_may_contain_spaces_and_colons() {
        assert_eq!(
            ok(
                "5 (0.1%)  src/lib.rs:<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop",
                1
            )
            .1,
            "src/lib.rs:<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"
        );
    }

    #[test]
    fn errors() {
        for (text, columns) in [
            ("", 1),
            ("PROGRAM TOTALS", 1),
            ("1234 (1%) x", 1),
            ("1,234 (1.0%)", 1),
            ("1,234 (1.0%)  ", 1),
            ("1,234 x.c:f", 2),
            ("1,234x.c:f", 1),
        ] {
            assert!(
                matches!(
                    row(3, text, columns),
                    Err(ProfileError::Malformed { line: 3, .. })
                ),
                "{text:?}"
            );
        }
    }

    #[test]
    fn percentage_groups() {
        for good in [
            "84.48%",
            " 2.56%",
            "-100.0%",
            "85.0%, 85.0%",
            "n/a",
            "n/a, n/a",
            "3.9%,  8.5%",
        ] {
            assert!(is_percentage_group(good), "{good:?}");
        }
        for bad in ["below main", "", "%", "1.0", "a%", "1.0%,"] {
            assert!(!is_percentage_group(bad), "{bad:?}");
        }
    }
}
