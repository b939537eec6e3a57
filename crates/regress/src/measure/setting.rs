//! The runner's settings that are one word of a few (`REGRESS_METHOD`,
//! `REGRESS_FORK_SERVER`, `REGRESS_HEAP_CHILD`, `REGRESS_UNMATCHED`):
//! read, and refused with the words they take, in one way.

use super::{MeasureError, Result};

/// The setting `value` of `variable` names, of `words` (each word and
/// what it means); unset, empty or blank is the first word's. Spaces
/// around the word are ignored; anything else is refused, naming the
/// words, with at most 40 characters of the value.
pub fn one_of<T: Copy>(
    variable: &'static str,
    value: Option<&str>,
    words: &[(&'static str, T)],
) -> Result<T> {
    let word = value.map(str::trim).unwrap_or_default();
    let chosen = if word.is_empty() {
        words.first()
    } else {
        words.iter().find(|(name, _)| *name == word)
    };
    match chosen {
        Some((_, meaning)) => Ok(*meaning),
        None => Err(MeasureError::BadSetting {
            variable,
            value: word.chars().take(40).collect(),
            expected: expected(words),
        }),
    }
}

/// "`a`", "`a` or `b`", "`a`, `b` or `c`".
fn expected<T>(words: &[(&'static str, T)]) -> String {
    let quoted: Vec<String> = words.iter().map(|(name, _)| format!("`{name}`")).collect();
    match quoted.split_last() {
        None => "nothing".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: [(&str, u8); 3] = [("on", 1), ("off", 0), ("auto", 2)];

    #[test]
    fn unset_and_blank_mean_the_first_word() {
        assert_eq!(one_of("X", None, &WORDS).ok(), Some(1));
        assert_eq!(one_of("X", Some(""), &WORDS).ok(), Some(1));
        assert_eq!(one_of("X", Some("  "), &WORDS).ok(), Some(1));
        assert_eq!(one_of("X", Some(" off\n"), &WORDS).ok(), Some(0));
        assert_eq!(one_of("X", Some("auto"), &WORDS).ok(), Some(2));
    }

    #[test]
    fn another_word_is_refused_naming_the_words() {
        let long = "y".repeat(100);
        let error = one_of("REGRESS_X", Some(&long), &WORDS)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("REGRESS_X="), "{error}");
        assert!(error.contains("`on`, `off` or `auto`"), "{error}");
        assert!(error.contains(&"y".repeat(40)), "{error}");
        assert!(!error.contains(&"y".repeat(41)), "{error}");
        let error = one_of("REGRESS_X", Some("On"), &WORDS[..2])
            .unwrap_err()
            .to_string();
        assert!(error.contains("must be `on` or `off`"), "{error}");
    }
}
