//! The harness-name rule, written once: the measured program's registry
//! checks its list with it, and the runner's `HarnessName` checks every
//! name it reads (from a program, a record, a baseline, a pull request's
//! report) with it.
//!
//! A harness name becomes a file name (`::` replaced by `.`) in
//! `perf_outputs/`, `baselines/` and a diff's outputs, so the rule is what
//! keeps a name from ever being a path.

/// The longest harness name, in bytes (the longest real one, a
/// constant-flow program's, is under 64).
pub const MAX_NAME_LEN: usize = 128;

/// Whether `name` is a harness name: two or more `::`-separated parts
/// (`<library>::<path>`; a constant-flow program's names have more), each
/// of lower-case ASCII letters, digits and underscores, at most
/// [`MAX_NAME_LEN`] bytes in all.
pub fn is_harness_name(name: &str) -> bool {
    name.len() <= MAX_NAME_LEN
        && name.split("::").nth(1).is_some()
        && name.split("::").all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_parts_of_lower_case_words() {
        for good in [
            "s2n_tls::handshake",
            "openssl::record_aes128gcm_16k",
            "constant_flow::openssl::x25519::ok::scalar_a",
        ] {
            assert!(is_harness_name(good), "{good}");
        }
        let long = format!("a::{}", "b".repeat(MAX_NAME_LEN - 3));
        assert!(is_harness_name(&long));
        for bad in [
            "",
            "handshake",
            "::handshake",
            "s2n_tls::",
            "s2n_tls:::handshake",
            "S2n::handshake",
            "s2n-tls::handshake",
            "../x::y",
            "a::b/c",
            "a::b c",
            "a::b.c",
            &format!("{long}b"),
        ] {
            assert!(!is_harness_name(bad), "{bad:?}");
        }
    }
}
