//! The two ways the tools write counts.
//!
//! Profiles hold plain integers (`300004`, and `-700007` in `cg_diff`
//! output). `cg_annotate` groups digits with commas (`300,004`,
//! `-21,504`). Both are parsed strictly: a count that does not look exactly
//! like one is a sign of a format we do not understand, and guessing would
//! produce wrong totals.

/// Parses `-?[0-9]+` into an `i64`; `None` on anything else or overflow.
///
/// `str::parse::<i64>` alone would also accept a leading `+`, which neither
/// tool writes.
pub(crate) fn plain(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Parses a count as `cg_annotate` prints it: `-?` then groups of three
/// digits separated by commas, the first group one to three digits long
/// (`7`, `1,234`, `-1,400,007`). `None` on anything else or overflow.
pub(crate) fn commified(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let mut groups = digits.split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 || !first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut plain_digits = String::with_capacity(digits.len());
    plain_digits.push_str(first);
    for group in groups {
        if group.len() != 3 || !group.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        plain_digits.push_str(group);
    }
    let magnitude: i64 = plain_digits.parse().ok()?;
    Some(if text.starts_with('-') {
        -magnitude
    } else {
        magnitude
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_counts() {
        assert_eq!(plain("0"), Some(0));
        assert_eq!(plain("300004"), Some(300_004));
        assert_eq!(plain("-700007"), Some(-700_007));
        assert_eq!(plain("9223372036854775807"), Some(i64::MAX));
    }

    #[test]
    fn plain_rejects_what_the_tools_never_write() {
        for bad in [
            "",
            "-",
            "+5",
            "1,000",
            "1.5",
            "12a",
            " 1",
            "9223372036854775808",
        ] {
            assert_eq!(plain(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn commified_counts() {
        assert_eq!(commified("0"), Some(0));
        assert_eq!(commified("7"), Some(7));
        assert_eq!(commified("951"), Some(951));
        assert_eq!(commified("1,259"), Some(1_259));
        assert_eq!(commified("828,612"), Some(828_612));
        assert_eq!(commified("1,400,007"), Some(1_400_007));
        assert_eq!(commified("-21,504"), Some(-21_504));
        assert_eq!(commified("-700,007"), Some(-700_007));
    }

    #[test]
    fn commified_rejects_bad_grouping() {
        for bad in [
            "", "-", ",", "1,", ",123", "1234", "1234,567", "1,23", "1,2345", "1,,234", "+1",
            "1.5", "(1.0%)", ".",
        ] {
            assert_eq!(commified(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn commified_overflow_is_rejected() {
        assert_eq!(commified("9,223,372,036,854,775,807"), Some(i64::MAX));
        assert_eq!(commified("9,223,372,036,854,775,808"), None);
    }
}
