//! The committed allowlist: differences between variants that depend only
//! on public data, each with its reason.
//!
//! `baselines/constant-flow-allowlist.toml`:
//!
//! ```toml
//! [[allow]]
//! operation = "*::aes128gcm_open"          # <library>::<operation>, `*` matches any run of characters
//! between = ["accepted", "rejected"]       # the two groups compared (the same group twice: within it)
//! functions = ["ERR_*", "free"]           # function name patterns, `*` as above
//! reason = "after the verdict: the failure is public (a TLS peer sees the alert)"
//! # known_finding = true                 # a secret-dependent difference, known and accepted
//! ```
//!
//! The file is read as hostile: size-capped, unknown keys refused, every
//! field bounded and checked, at most [`MAX_ENTRIES`] entries. An entry that
//! matched no difference of an operation it covers in this run is *stale*:
//! reported as a warning (the code it excused became constant-flow, or its
//! pattern no longer names the function), never a failure, so a library
//! that fixed a difference does not break the check.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::limits;

/// The allowlist's place in the workspace.
pub const PATH: &str = "baselines/constant-flow-allowlist.toml";
/// The largest allowlist file read.
pub const MAX_BYTES: u64 = 64 << 10;
/// The most entries an allowlist may have.
pub const MAX_ENTRIES: usize = 256;
/// The most function patterns one entry may have.
pub const MAX_FUNCTIONS: usize = 64;
/// The longest pattern accepted.
pub const MAX_PATTERN: usize = 200;
/// The longest reason accepted.
pub const MAX_REASON: usize = 1000;
/// The shortest reason accepted: a reason must say something.
pub const MIN_REASON: usize = 12;

/// An allowlist that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AllowlistError {
    #[error("cannot read the constant-flow allowlist {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the constant-flow allowlist {path} is not valid: {reason}.\n  \
         Each [[allow]] entry has exactly operation, between (two group names), functions and \
         reason; see the README's \"Constant-flow check\"."
    )]
    Invalid {
        path: PathBuf,
        #[source]
        reason: InvalidAllowlist,
    },
}

/// Why [`Allowlist::parse`] refuses an allowlist's text.
#[derive(Debug, thiserror::Error)]
pub enum InvalidAllowlist {
    /// Not TOML of the allowlist's shape: `toml`'s message, cut at 300
    /// bytes.
    #[error("{}", toml_message(.0))]
    Toml(#[source] toml::de::Error),
    #[error("{0} entries, at most {MAX_ENTRIES}")]
    TooManyEntries(usize),
    #[error("entry {number}: {problem}")]
    Entry {
        number: usize,
        problem: EntryProblem,
    },
}

/// What is wrong with one entry of an allowlist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryProblem {
    #[error("functions must list 1 to {MAX_FUNCTIONS} patterns")]
    FunctionCount,
    #[error("{field} must be 1 to {MAX_PATTERN} bytes")]
    PatternLength { field: &'static str },
    #[error("{field} holds control characters")]
    Control { field: &'static str },
    #[error("{field} {pattern:?} would allow everything within a group; name what is allowed")]
    Everything {
        field: &'static str,
        pattern: String,
    },
    #[error("operation {0:?} is not <library>::<operation> in [a-z0-9_] with `*`")]
    Operation(String),
    #[error("the group {0:?} is not a group name")]
    Group(String),
    #[error("the reason must say why, in {MIN_REASON} to {MAX_REASON} bytes")]
    Reason,
}

fn toml_message(error: &toml::de::Error) -> String {
    crate::format::at_most(error.message(), 300).to_owned()
}

/// One allowed difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `<library>::<operation>` pattern.
    pub operation: String,
    /// The two groups whose variants may differ here (unordered; the same
    /// group twice allows a difference within that group).
    pub between: [String; 2],
    /// Function name patterns (1 to [`MAX_FUNCTIONS`]).
    pub functions: Vec<String>,
    /// Why the difference depends only on public data; or, for a known
    /// finding, what is known about it.
    pub reason: String,
    /// A secret-dependent difference that is known and accepted for now
    /// (a library's, not this project's to fix): it does not fail the
    /// check, and every report lists it as a finding, not as allowed.
    #[serde(default)]
    pub known_finding: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    allow: Vec<Entry>,
}

/// The checked allowlist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    pub entries: Vec<Entry>,
}

impl Allowlist {
    /// Reads and checks `path`; a missing file is an empty allowlist.
    pub fn load(path: &Path) -> Result<Allowlist, AllowlistError> {
        let text = match limits::read_capped(path, MAX_BYTES) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Allowlist::default())
            }
            Err(source) => {
                return Err(AllowlistError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        Allowlist::parse(&text).map_err(|reason| AllowlistError::Invalid {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// Parses and checks the text of an allowlist.
    pub fn parse(text: &str) -> Result<Allowlist, InvalidAllowlist> {
        let file: File = toml::from_str(text).map_err(InvalidAllowlist::Toml)?;
        if file.allow.len() > MAX_ENTRIES {
            return Err(InvalidAllowlist::TooManyEntries(file.allow.len()));
        }
        for (index, entry) in file.allow.iter().enumerate() {
            check_entry(entry).map_err(|problem| InvalidAllowlist::Entry {
                number: index + 1,
                problem,
            })?;
        }
        Ok(Allowlist {
            entries: file.allow,
        })
    }

    /// The first entry that allows `function` to differ between groups
    /// `groups` of `operation`, by index.
    pub fn allows(&self, operation: &str, groups: [&str; 2], function: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|entry| entry.matches(operation, groups, function))
    }
}

impl Entry {
    /// Whether this entry covers `operation` at all.
    pub fn covers(&self, operation: &str) -> bool {
        glob(&self.operation, operation)
    }

    fn matches(&self, operation: &str, [a, b]: [&str; 2], function: &str) -> bool {
        let [x, y] = [&self.between[0], &self.between[1]];
        self.covers(operation)
            && ((x == a && y == b) || (x == b && y == a))
            && self.functions.iter().any(|pattern| glob(pattern, function))
    }
}

fn check_entry(entry: &Entry) -> Result<(), EntryProblem> {
    if entry.functions.is_empty() || entry.functions.len() > MAX_FUNCTIONS {
        return Err(EntryProblem::FunctionCount);
    }
    let patterns = std::iter::once(("operation", &entry.operation))
        .chain(entry.functions.iter().map(|pattern| ("functions", pattern)));
    for (field, pattern) in patterns {
        if pattern.is_empty() || pattern.len() > MAX_PATTERN {
            return Err(EntryProblem::PatternLength { field });
        }
        if pattern.chars().any(|c| c.is_control()) {
            return Err(EntryProblem::Control { field });
        }
        // Within a group, every function must be named. Across groups (a
        // public verdict), an entry may allow every function: the
        // within-group comparisons are what test the secret.
        if field == "functions"
            && pattern.chars().all(|c| c == '*')
            && entry.between[0] == entry.between[1]
        {
            return Err(EntryProblem::Everything {
                field,
                pattern: pattern.clone(),
            });
        }
    }
    if !entry
        .operation
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b':' | b'*'))
    {
        return Err(EntryProblem::Operation(entry.operation.clone()));
    }
    for group in &entry.between {
        if group.is_empty()
            || group.len() > 64
            || !group
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(EntryProblem::Group(group.clone()));
        }
    }
    let reason = entry.reason.trim();
    if reason.len() < MIN_REASON || entry.reason.len() > MAX_REASON {
        return Err(EntryProblem::Reason);
    }
    Ok(())
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters (none included) and everything else itself. Iterative, with
/// one backtrack point: linear in practice, never exponential.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((star_pi, star_ti)) = star {
            pi = star_pi + 1;
            ti = star_ti + 1;
            star = Some((star_pi, star_ti + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_cut_between_characters() {
        // The unknown key is quoted in toml's message; cut at 300 bytes,
        // the cut falls inside a two-byte character.
        for pad in 0..2 {
            let text = format!("\"{}{}\" = 1\n", "a".repeat(pad), "é".repeat(200));
            let error = Allowlist::parse(&text).expect_err("an unknown key");
            let message = error.to_string();
            assert!(message.len() <= 300, "{message}");
            assert!(message.contains("éé"), "{message}");
        }
    }

    #[test]
    fn globs_match_as_documented() {
        assert!(glob("ERR_*", "ERR_put_error"));
        assert!(glob("*::aes128gcm_open", "openssl::aes128gcm_open"));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(glob("abc", "abc"));
        assert!(!glob("abc", "abcd"));
        assert!(!glob("a*c", "ab"));
        assert!(glob("*", ""));
        // No exponential blow-up on a hostile pattern.
        let long = "a".repeat(5000);
        assert!(!glob(&"*a".repeat(100), &format!("{long}b")));
    }

    #[test]
    fn entries_are_checked_and_matched() {
        let text = r#"
[[allow]]
operation = "*::aes128gcm_open"
between = ["rejected", "accepted"]
functions = ["ERR_*"]
reason = "the failure is public: the peer sees the alert"
"#;
        let list = Allowlist::parse(text).expect("valid");
        assert_eq!(
            list.allows(
                "openssl::aes128gcm_open",
                ["accepted", "rejected"],
                "ERR_new"
            ),
            Some(0)
        );
        assert_eq!(
            list.allows(
                "openssl::aes128gcm_open",
                ["rejected", "rejected"],
                "ERR_new"
            ),
            None
        );
        assert_eq!(
            list.allows("openssl::x25519", ["accepted", "rejected"], "ERR_new"),
            None
        );
    }

    #[test]
    fn hostile_files_are_refused_with_the_reason() {
        let entry = |operation: &str, function: &str, reason: &str, between: &str| {
            format!(
                "[[allow]]\noperation = {operation:?}\nbetween = {between}\nfunctions = [{function:?}]\nreason = {reason:?}\n"
            )
        };
        let good = "a reason long enough";
        for (text, expected) in [
            (entry("*", "*", good, r#"["a", "a"]"#), "allow everything"),
            (entry("a::b", "**", good, r#"["b", "b"]"#), "allow everything"),
            (entry("a::b", "f", "short", r#"["a", "b"]"#), "reason"),
            (entry("A::B", "f", good, r#"["a", "b"]"#), "not <library>"),
            (entry("a::b", "f", good, r#"["a"]"#), "array of length 2"),
            ("[[allow]]\noperation = \"a::b\"\nbetween = [\"a\", \"b\"]\nfunctions = []\nreason = \"a reason long enough\"\n".to_owned(), "1 to"),
            (entry("a::b", "f", good, r#"["a", "B C"]"#), "group"),
            (
                entry("a::b", "f", good, r#"["a", "b"]"#).replace("[\"f\"]", "[\"f\\u001b[31m\"]"),
                "control",
            ),
            (
                format!("{}extra = 1\n", entry("a::b", "f", good, r#"["a", "b"]"#)),
                "unknown field",
            ),
            ("[[allow]]\n".to_owned(), "missing field"),
        ] {
            let error = Allowlist::parse(&text).expect_err(&text).to_string();
            assert!(error.contains(expected), "{expected}: {error}");
        }
        let many = entry("a::b", "f", good, r#"["a", "b"]"#).repeat(MAX_ENTRIES + 1);
        assert!(Allowlist::parse(&many)
            .expect_err("too many")
            .to_string()
            .contains("entries"));
    }

    #[test]
    fn a_missing_file_is_empty_and_a_huge_one_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            Allowlist::load(&dir.path().join("none.toml")).expect("empty"),
            Allowlist::default()
        );
        let huge = dir.path().join("huge.toml");
        std::fs::write(&huge, "#".repeat(MAX_BYTES as usize + 10)).expect("write");
        assert!(Allowlist::load(&huge).is_err());
    }
}
