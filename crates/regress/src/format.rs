//! Numbers as people read them: `77,097,051`, `+51,176`, `+0.07%`.
//!
//! A leaf module: the gate, the diff and every report format their numbers
//! here, so a count reads the same in a test failure, a terminal table, a
//! pull request comment and the README.

/// The longest start of `text` of at most `max` bytes that ends between
/// two characters: where a text read from a file or a tool is cut to a
/// bound (`String::truncate` panics inside a character).
pub fn at_most(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `77097051` as `77,097,051`.
pub fn count(value: u64) -> String {
    group(&value.to_string())
}

/// `-1234` as `-1,234`, `1234` as `+1,234`. Takes any signed count up to
/// `i128`, the width of the judge's differences.
pub fn signed(value: impl Into<i128>) -> String {
    let value: i128 = value.into();
    let sign = if value < 0 { "-" } else { "+" };
    format!("{sign}{}", group(&value.unsigned_abs().to_string()))
}

/// The relative change from `from` to `to`, as `+0.07%`.
pub fn signed_percent(from: u64, to: u64) -> String {
    if from == 0 {
        return "n/a".to_owned();
    }
    let percent = (to as f64 - from as f64) / from as f64 * 100.0;
    // A change too small for two decimals still deserves a nonzero figure:
    // "-0.00%" reads as "nothing changed".
    if percent != 0.0 && percent.abs() < 0.005 {
        format!("{percent:+.4}%")
    } else {
        format!("{percent:+.2}%")
    }
}

fn group(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_cut_between_characters() {
        assert_eq!(at_most("abc", 5), "abc");
        assert_eq!(at_most("abc", 2), "ab");
        // "é" is two bytes: a cut inside it keeps the byte before.
        assert_eq!(at_most("aé", 2), "a");
        assert_eq!(at_most("ééé", 5), "éé");
        assert_eq!(at_most("", 0), "");
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(77_097_051), "77,097,051");
        assert_eq!(signed(-51_176), "-51,176");
        assert_eq!(signed(51_176), "+51,176");
        assert_eq!(signed_percent(77_000_000, 77_051_176), "+0.07%");
        assert_eq!(signed_percent(100, 50), "-50.00%");
        assert_eq!(signed_percent(95_773_780, 95_769_381), "-0.0046%");
        assert_eq!(signed_percent(5, 5), "+0.00%");
    }
}
