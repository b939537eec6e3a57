//! The results pages' tables (`docs/results/*.md`), generated from
//! `baselines/`.
//!
//! The documentation quotes counts so a reader sees what the project
//! measures without running it. Typed by hand, they drifted from the data;
//! here every number in those tables comes from the committed baseline
//! entries, between markers that `regress readme` rewrites:
//!
//! ```text
//! <!-- regress readme: library-comparison -->
//! ...generated...
//! <!-- /regress readme: library-comparison -->
//! ```
//!
//! Baselines, not `perf_outputs/`: they are committed, so the check runs on
//! a fresh clone and in CI. What only a measurement knows (the harness
//! share, read from region profiles) is therefore left to `regress compare`.
//!
//! The pieces: the pages, their markers and their regeneration are here;
//! `tables.rs` makes each section's text from the baseline files
//! ([`load_all`], [`sections`]).

mod tables;

pub use tables::{load_all, sections};

use std::path::{Path, PathBuf};

use crate::judge::baseline::BaselineError;
use crate::measure::valgrind::Method;

/// The command that rewrites the sections, for messages.
pub const COMMAND: &str = "cargo run -p regress -- readme";

/// A generated page: its path from the workspace root and the sections it
/// holds, by marker name. Every page is rewritten (or checked) together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub path: &'static str,
    pub sections: &'static [&'static str],
}

/// Every file with generated sections. A marker in any other file is an
/// error of `regress readme --check`'s test (`every_marker_is_in_a_page`).
pub const PAGES: &[Page] = &[
    Page {
        path: "docs/results/libraries.md",
        sections: &[
            "library-comparison",
            "post-quantum",
            "defaults",
            "hostile",
            "amplification",
            "sides-and-held",
            "aead-per-call",
        ],
    },
    Page {
        path: "README.md",
        sections: &["worst-amplification"],
    },
    Page {
        path: "docs/results/method-agreement.md",
        sections: &["method-agreement"],
    },
    Page {
        path: "docs/results/cpu-profiles.md",
        sections: &["cpu-profiles"],
    },
    Page {
        path: "docs/results/history.md",
        sections: &["history-s2n-tls", "history-rustls", "history-openssl"],
    },
];

#[derive(Debug, thiserror::Error)]
pub enum ReadmeError {
    #[error(transparent)]
    Baseline(Box<BaselineError>),

    /// Boxed, like the baseline error, to keep every `Result` small.
    #[error(transparent)]
    Runner(Box<crate::MeasureError>),

    #[error(
        "{path} has no section `{section}`: add the two lines \
         `<!-- regress readme: {section} -->` and `<!-- /regress readme: {section} -->` \
         where its table belongs, then run `{COMMAND}`"
    )]
    NoSection { path: PathBuf, section: String },

    #[error(
        "{path} is missing ({source}); it holds generated tables: restore it with \
         `git checkout -- {shown}`"
    )]
    NoPage {
        path: PathBuf,
        shown: String,
        source: std::io::Error,
    },

    #[error("{dir} holds no baseline entry measured with the {method} method; nothing to show")]
    NoEntries { dir: PathBuf, method: Method },

    /// A section of [`MoreSections`] (the history tables, which
    /// `regress history` keeps in `baselines/history/`).
    #[error(transparent)]
    MoreSections(Box<dyn std::error::Error + Send + Sync>),
}

impl From<Box<BaselineError>> for ReadmeError {
    fn from(error: Box<BaselineError>) -> ReadmeError {
        ReadmeError::Baseline(error)
    }
}

impl From<crate::MeasureError> for ReadmeError {
    fn from(error: crate::MeasureError) -> ReadmeError {
        ReadmeError::Runner(Box::new(error))
    }
}

fn open_marker(section: &str) -> String {
    format!("<!-- regress readme: {section} -->")
}

fn close_marker(section: &str) -> String {
    format!("<!-- /regress readme: {section} -->")
}

/// `text` with each section's body replaced; `path` names it in errors.
pub fn update(
    text: &str,
    sections: &[(String, String)],
    path: &Path,
) -> Result<String, ReadmeError> {
    let mut out = text.to_owned();
    for (section, body) in sections {
        let missing = || ReadmeError::NoSection {
            path: path.to_path_buf(),
            section: section.clone(),
        };
        let (open, close) = (open_marker(section), close_marker(section));
        let start = out.find(&open).ok_or_else(missing)? + open.len();
        let end = start + out[start..].find(&close).ok_or_else(missing)?;
        out.replace_range(
            start..end,
            &format!("\n{}", body.trim_end_matches('\n').to_owned() + "\n"),
        );
    }
    Ok(out)
}

/// One generated page: its text as committed and as the baselines say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regenerated {
    pub path: PathBuf,
    pub text: String,
    pub updated: String,
}

impl Regenerated {
    /// Whether the committed tables agree with the baselines.
    pub fn is_current(&self) -> bool {
        self.text == self.updated
    }
}

/// The sections a page's markers name that come from a command's data, not
/// from the baselines: given the baselines folder and a page's text, the
/// sections (name, Markdown) of the markers the page has. The binary passes
/// the history tables (`regress::history::table::readme_sections`): a
/// document is made from every command's data, but `report/` imports no
/// command, so the one that knows them is handed in.
pub type MoreSections<'a> =
    &'a dyn Fn(
        &Path,
        &str,
    ) -> Result<Vec<(String, String)>, Box<dyn std::error::Error + Send + Sync>>;

/// Every page of [`PAGES`] under `root` as it should be: its sections
/// generated from the baselines in `baselines`, and those `more` makes.
pub fn regenerate(
    root: &Path,
    baselines: &Path,
    more: MoreSections<'_>,
) -> Result<Vec<Regenerated>, ReadmeError> {
    let files = load_all(baselines)?;
    let generated = sections(&files, baselines)?;
    let mut pages = Vec::with_capacity(PAGES.len());
    for page in PAGES {
        let path = root.join(page.path);
        let text = std::fs::read_to_string(&path).map_err(|source| ReadmeError::NoPage {
            path: path.clone(),
            shown: page.path.to_owned(),
            source,
        })?;
        let mut page_sections: Vec<(String, String)> = generated
            .iter()
            .filter(|(name, _)| page.sections.contains(&name.as_str()))
            .cloned()
            .collect();
        // A history section is generated where its marker is (one per
        // library with published versions measured).
        page_sections.extend(
            more(baselines, &text)
                .map_err(ReadmeError::MoreSections)?
                .into_iter()
                .filter(|(name, _)| page.sections.contains(&name.as_str())),
        );
        // Every section the page declares must be there: a missing one
        // would otherwise go unchecked.
        if let Some(section) = page
            .sections
            .iter()
            .find(|section| !text.contains(&open_marker(section)))
        {
            return Err(ReadmeError::NoSection {
                path: path.clone(),
                section: (*section).to_owned(),
            });
        }
        let updated = update(&text, &page_sections, &path)?;
        pages.push(Regenerated {
            path,
            text,
            updated,
        });
    }
    Ok(pages)
}

/// The generated-section markers of `text`, by section name, in order.
/// Only a name of lower-case letters, digits and `-` makes a marker, so
/// prose that shows the syntax (`<!-- regress readme: ... -->`) is none.
pub fn markers(text: &str) -> Vec<&str> {
    let prefix = "<!-- regress readme: ";
    text.match_indices(prefix)
        .filter_map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let name = &rest[..rest.find(" -->")?];
            let is_name = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            is_name.then_some(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn markers_are_read_in_order() {
        let text =
            "<!-- regress readme: a -->\n<!-- /regress readme: a -->\n<!-- regress readme: b -->";
        assert_eq!(markers(text), vec!["a", "b"]);
        assert!(markers("<!-- regress readme: unclosed").is_empty());
        assert!(markers("`<!-- regress readme: ... -->` markers").is_empty());
    }

    /// `baselines/history/` holds files of another shape (and, read as
    /// baselines, hostile ones): the baseline loader leaves the folder alone.
    #[test]
    fn the_history_folder_is_not_a_baseline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = fixtures::baseline("s2n_tls::handshake_rsa4096", &[("3.19.0", 76_880_677)]);
        std::fs::write(
            dir.path().join("s2n_tls.handshake_rsa4096.json"),
            serde_json::to_string(&file).expect("JSON"),
        )
        .expect("write");
        let history = dir.path().join("history").join("s2n-tls");
        std::fs::create_dir_all(&history).expect("mkdir");
        std::fs::write(history.join("0.3.47.json"), "{\"not\": \"a baseline\"}").expect("write");
        let files = load_all(dir.path()).expect("the history folder is passed by");
        assert_eq!(files, vec![file]);
        // A file at the top named like a baseline is still judged as one.
        std::fs::write(dir.path().join("rustls.handshake_rsa4096.json"), "{}").expect("write");
        assert!(load_all(dir.path()).is_err());
    }

    #[test]
    fn sections_are_replaced_between_their_markers_only() {
        let text = "intro\n<!-- regress readme: a -->\nold\n<!-- /regress readme: a -->\nprose\n";
        let sections = vec![("a".to_owned(), "| new |\n".to_owned())];
        let updated = update(text, &sections, Path::new("README.md")).expect("update");
        assert_eq!(
            updated,
            "intro\n<!-- regress readme: a -->\n| new |\n<!-- /regress readme: a -->\nprose\n"
        );
        assert_eq!(
            update(&updated, &sections, Path::new("R")).expect("again"),
            updated
        );
        let error = update("no markers", &sections, Path::new("README.md")).unwrap_err();
        assert!(
            error.to_string().contains("<!-- regress readme: a -->"),
            "{error}"
        );
    }

    #[test]
    fn tables_come_from_the_entries_of_each_method() {
        let mut seal = fixtures::baseline(
            "aws_lc_rs::aead_aes128gcm_seal_16",
            &[("3.19.0", 913_501), ("3.24.0", 913_496)],
        );
        for entry in &mut seal.entries {
            entry.operations_per_run = 1_024;
            entry.bytes_per_run = Some(16_384);
        }
        let handshake = fixtures::baseline(
            "s2n_tls::handshake_rsa4096",
            &[("3.19.0", 76_880_677), ("3.24.0", 76_880_673)],
        );
        let files = vec![seal, handshake];
        let sections = sections(&files, Path::new("baselines")).expect("sections");
        let text = |name: &str| &sections.iter().find(|(n, _)| n == name).expect("section").1;
        assert!(
            text("library-comparison").contains("| handshake_rsa4096 | 76,880,673 |"),
            "{}",
            text("library-comparison")
        );
        assert!(
            text("aead-per-call").contains("| 16 | 1,024 | 892 (55.76/B) | n/a | n/a | n/a |"),
            "{}",
            text("aead-per-call")
        );
        let agreement = text("method-agreement");
        assert!(
            agreement.contains(
                "| s2n_tls::handshake_rsa4096 | 76,880,677 | 76,880,673 | -4 | 0.00001 |"
            ),
            "{agreement}"
        );
        assert!(agreement.contains("| subtraction (Valgrind 3.19.0) | markers (Valgrind 3.24.0) |"));
        assert!(
            agreement.ends_with("largest difference: 0.00055 %\n"),
            "{agreement}"
        );
    }

    /// Baselines blessed with Callgrind's method on both versions: the
    /// tables show the newest Valgrind's entries and the agreement table
    /// sets the oldest against them.
    #[test]
    fn callgrind_entries_are_shown_when_there_are_any() {
        let mut handshake = fixtures::baseline(
            "s2n_tls::handshake_rsa4096",
            &[("3.19.0", 76_715_899), ("3.24.0", 76_715_901)],
        );
        for entry in &mut handshake.entries {
            entry.fingerprint.method = Method::Callgrind;
        }
        let sections = sections(&[handshake], Path::new("baselines")).expect("sections");
        let text = |name: &str| &sections.iter().find(|(n, _)| n == name).expect("section").1;
        assert!(
            text("library-comparison").contains("| handshake_rsa4096 | 76,715,901 |"),
            "{}",
            text("library-comparison")
        );
        let agreement = text("method-agreement");
        assert!(
            agreement.contains("| callgrind (Valgrind 3.19.0) | callgrind (Valgrind 3.24.0) |"),
            "{agreement}"
        );
        assert!(
            agreement.contains("| 76,715,899 | 76,715,901 | +2 |"),
            "{agreement}"
        );
    }
}
