//! What a from-source diff (`regress diff --library`) compared, as part of
//! its report: each library's two revisions, and the harnesses it left out
//! because no patched library's code reaches them.
//!
//! A report read back from a file is hostile input ([`super::untrusted`]):
//! [`check`] bounds every string here, and the Markdown shows them only as
//! code.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::report::markdown::code;

/// The most libraries one diff patches (there are four known ones).
const MAX_LIBRARIES: usize = 8;
/// The most harness groups listed as not measured.
const MAX_GROUPS: usize = 64;
/// The longest label, key or version kept.
const MAX_TEXT: usize = 256;

/// The libraries of a from-source diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    pub libraries: Vec<LibrarySides>,
    /// Harness groups (`openssl::`) that none of the libraries reaches, so
    /// they were not measured (`--all-harnesses` measures them too).
    pub not_measured: Vec<String>,
}

/// One library's two sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibrarySides {
    /// `s2n-tls`, `rustls` or `aws-lc-rs`.
    pub library: String,
    pub base: SourceSide,
    pub head: SourceSide,
}

/// One revision of a library as it was built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSide {
    /// What it was, for people: `main (0123456789ab)`, `the working tree
    /// (wt-…)`, or the release this workspace locks.
    pub label: String,
    /// The commit, `wt-<hash>` of a working tree's content, or `released`.
    pub key: String,
    /// The crates it provided with their versions: `s2n-tls 0.3.47`.
    pub crates: Vec<String>,
}

impl Sources {
    /// The lines the terminal shows above the table.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for library in &self.libraries {
            let _ = writeln!(
                out,
                "{}: base {} [{}]  head {} [{}]",
                library.library,
                library.base.label,
                library.base.crates.join(", "),
                library.head.label,
                library.head.crates.join(", ")
            );
        }
        if !self.not_measured.is_empty() {
            let _ = writeln!(
                out,
                "not measured (no patched library reaches them; --all-harnesses measures them): {}",
                self.not_measured.join(" ")
            );
        }
        out
    }

    /// The paragraph the Markdown shows above the table; every string as code.
    pub fn markdown(&self) -> String {
        let mut out = String::from("Built from source:\n\n");
        for library in &self.libraries {
            let crates = |side: &SourceSide| {
                side.crates
                    .iter()
                    .map(|name| code(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                out,
                "- {}: base {} ({}), head {} ({})",
                code(&library.library),
                code(&library.base.label),
                crates(&library.base),
                code(&library.head.label),
                crates(&library.head),
            );
        }
        if self.not_measured.is_empty() {
            out.push_str("\nEvery harness was measured.\n\n");
        } else {
            let groups: Vec<String> = self.not_measured.iter().map(|g| code(g)).collect();
            let _ = writeln!(
                out,
                "\nNot measured, because no patched library's code reaches them: {}.\n",
                groups.join(", ")
            );
        }
        out
    }
}

/// What is wrong with the sources of a report read as hostile input
/// ([`check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourcesProblem {
    #[error("{0} libraries; a from-source diff has 1 to {MAX_LIBRARIES}")]
    LibraryCount(usize),
    /// The name, cut at 40 characters.
    #[error("{0:?} is not a library regress builds")]
    UnknownLibrary(String),
    #[error("a library label is longer than {MAX_TEXT} bytes or holds control characters")]
    Label,
    #[error("too many crates in one library")]
    TooManyCrates,
    #[error("too many harness groups not measured")]
    TooManyGroups,
    /// The group, cut at 40 characters.
    #[error("{0:?} is not a harness group")]
    NotAGroup(String),
}

/// Checks the sources of a report read as hostile input.
pub fn check(sources: &Sources) -> Result<(), SourcesProblem> {
    if sources.libraries.is_empty() || sources.libraries.len() > MAX_LIBRARIES {
        return Err(SourcesProblem::LibraryCount(sources.libraries.len()));
    }
    for library in &sources.libraries {
        if regress_source::Library::named(&library.library).is_err() {
            return Err(SourcesProblem::UnknownLibrary(truncate(&library.library)));
        }
        for side in [&library.base, &library.head] {
            for text in [&side.label, &side.key].into_iter().chain(&side.crates) {
                bounded(text)?;
            }
            if side.crates.len() > MAX_LIBRARIES {
                return Err(SourcesProblem::TooManyCrates);
            }
        }
    }
    if sources.not_measured.len() > MAX_GROUPS {
        return Err(SourcesProblem::TooManyGroups);
    }
    for group in &sources.not_measured {
        let name = group.strip_suffix("::").unwrap_or("");
        let plain = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !plain {
            return Err(SourcesProblem::NotAGroup(truncate(group)));
        }
    }
    Ok(())
}

fn bounded(text: &str) -> Result<(), SourcesProblem> {
    if text.len() > MAX_TEXT || text.chars().any(char::is_control) {
        return Err(SourcesProblem::Label);
    }
    Ok(())
}

fn truncate(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sources() -> Sources {
        let side = |label: &str, key: &str| SourceSide {
            label: label.to_owned(),
            key: key.to_owned(),
            crates: vec!["s2n-tls 0.3.47".to_owned(), "s2n-tls-sys 0.3.47".to_owned()],
        };
        Sources {
            libraries: vec![LibrarySides {
                library: "s2n-tls".to_owned(),
                base: side("main (0123456789ab)", &"0".repeat(40)),
                head: side("the working tree (wt-0123456789a)", "wt-0123"),
            }],
            not_measured: vec!["openssl::".to_owned(), "rustls::".to_owned()],
        }
    }

    #[test]
    fn renders_and_passes_its_own_check() {
        let sources = sources();
        check(&sources).expect("valid");
        let text = sources.text();
        assert!(text.contains("s2n-tls: base main (0123456789ab)"), "{text}");
        assert!(text.contains("openssl:: rustls::"), "{text}");
        let markdown = sources.markdown();
        assert!(markdown.contains("`s2n-tls`"), "{markdown}");
        assert!(markdown.contains("`openssl::`"), "{markdown}");
    }

    #[test]
    fn forged_sources_are_refused() {
        let mut unknown = sources();
        unknown.libraries[0].library = "boringssl".to_owned();
        assert!(check(&unknown).is_err());
        let mut long = sources();
        long.libraries[0].head.label = "x".repeat(1000);
        assert!(check(&long).is_err());
        let mut group = sources();
        group.not_measured.push("<b>::".to_owned());
        assert!(check(&group).is_err());
        let mut none = sources();
        none.libraries.clear();
        assert!(check(&none).is_err());
    }
}
