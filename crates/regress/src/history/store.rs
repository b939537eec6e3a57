//! The committed history: one JSON file per published version or revision.
//!
//! ```text
//! baselines/history/<library>/<version>.json        a published version (crates.io)
//! baselines/history/<library>/rev/<commit>.json     a commit of a library checkout
//! ```
//!
//! Committed with the baselines, in a folder of their own, not under
//! `perf_outputs/` (generated scratch, removed freely): the baselines are
//! the files of `baselines/` itself, one per harness (`<lib>.<name>.json`),
//! rewritten by `bless` and judged on every run, and their loader passes a
//! folder by, so a history is neither judged nor refused as a baseline. A
//! history is a record that is only ever added to, one version at a time,
//! and read by people, the README and the report. One file per version
//! keeps each addition a new file in a pull request, never an edit of
//! another's numbers. A file holds one entry per Valgrind version and method (the
//! counts of the two methods differ by a few instructions), each with the
//! full fingerprint of its measurements.
//!
//! Files are read back as hostile input: at most 1 MiB, the schema and the
//! library checked, the file named after its revision, every harness name a
//! [`HarnessName`], every count from 1 to 2^63 - 1, every text bounded and
//! printable, at most [`MAX_ENTRIES`] entries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::harness_name::HarnessName;
use crate::limits::{self, MAX_COUNT};
use crate::measure::fingerprint::{Fingerprint, FingerprintProblem};
use crate::measure::valgrind::{Method, Valgrind};

pub const HISTORY_SCHEMA: u32 = 1;
/// Entries per file (Valgrind versions and methods).
pub const MAX_ENTRIES: usize = 16;
/// Harnesses per entry.
pub const MAX_HARNESSES: usize = 512;
/// The longest function or file name kept.
const MAX_NAME: usize = 512;

/// What a file is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A version published on crates.io.
    Published,
    /// A commit of a checkout of the library's repository.
    Commit,
}

/// One version's (or commit's) measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub schema: u32,
    pub library: String,
    pub kind: Kind,
    /// The version (`0.3.47`) or the full commit.
    pub revision: String,
    /// A commit's subject line, for tables; `None` for versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub entries: Vec<Entry>,
}

/// The measurements of one Valgrind version and method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub fingerprint: Fingerprint,
    pub paths: BTreeMap<HarnessName, PathCount>,
    /// What moved from the version before this one in the history (with
    /// the same Valgrind), per harness; `None` for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<Step>,
}

/// One harness's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathCount {
    pub instructions: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_run: Option<u64>,
    pub operations_per_run: u64,
}

/// The step from the previous version: for each harness whose count
/// changed, the function that moved most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The previous version (or commit) the step is from.
    pub from: String,
    pub moved: BTreeMap<HarnessName, Moved>,
}

/// The function whose cost changed most in a step (names normalised as
/// the diff normalises them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moved {
    pub function: String,
    pub file: String,
    pub delta: i64,
}

/// What is wrong with a history file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Measure(#[from] crate::MeasureError),
    #[error(
        "{path} is not a history file this version of regress reads: {reason}.\n  \
         Fix or remove it (it is one version's data; `regress history` measures it again)."
    )]
    Invalid {
        path: PathBuf,
        #[source]
        reason: HistoryProblem,
    },
}

/// What makes a file no history file this regress reads.
#[derive(Debug, thiserror::Error)]
pub enum HistoryProblem {
    /// Not JSON of a record's shape, in `serde_json`'s words.
    #[error(transparent)]
    Json(serde_json::Error),
    #[error("schema {0} (this regress reads {HISTORY_SCHEMA})")]
    Schema(u32),
    /// The library the file names (cut at 60 characters) and its folder's.
    #[error("it is of {found:?}, not {expected}")]
    Library { found: String, expected: String },
    /// The revision the file names (cut at 60 characters) and its name's.
    #[error("it says {found:?} but is named {named}")]
    Revision { found: String, named: String },
    #[error("`{field}` is empty, longer than {MAX_NAME} bytes or holds control characters")]
    Text { field: &'static str },
    #[error("{0} entries, at most {MAX_ENTRIES}")]
    Entries(usize),
    #[error(transparent)]
    Fingerprint(FingerprintProblem),
    #[error("{0} harnesses, at most {MAX_HARNESSES}")]
    Harnesses(usize),
    #[error("{harness}: `{field}` is outside 1 to {MAX_COUNT}")]
    Count {
        harness: HarnessName,
        field: &'static str,
    },
    /// Cut at 60 characters.
    #[error("{0:?} is neither a version nor a full commit")]
    NotARevision(String),
    #[error("{harness}: the step's delta is out of bounds")]
    Delta { harness: HarnessName },
    #[error("it is a {0:?} record")]
    Kind(Kind),
    /// Cut at 60 characters.
    #[error("{0:?} cannot name a file")]
    CannotNameFile(String),
}

impl Entry {
    /// Whether this entry was measured with `valgrind`'s version and method.
    pub fn is_of(&self, valgrind: &Valgrind) -> bool {
        self.fingerprint.valgrind == valgrind.version.to_string()
            && self.fingerprint.method == valgrind.method
    }

    /// `(Valgrind version, method)`, the entry's identity in its file.
    pub fn setup(&self) -> (String, Method) {
        (self.fingerprint.valgrind.clone(), self.fingerprint.method)
    }
}

impl Record {
    /// How tables and charts name the record: a commit by its short hash,
    /// a version as it is, and an `openssl-src` release by the OpenSSL
    /// release it carries (`300.0.13+3.0.8` is 3.0.8).
    pub fn label(&self) -> String {
        if self.title.is_some() {
            return regress_source::git::short(&self.revision).to_owned();
        }
        semver::Version::parse(&self.revision)
            .ok()
            .and_then(|version| regress_source::openssl_src::OpenSslVersion::of_release(&version))
            .map_or_else(|| self.revision.clone(), |release| release.to_string())
    }

    /// The entry of `setup`, if the record has one.
    pub fn entry(&self, setup: &(String, Method)) -> Option<&Entry> {
        self.entries.iter().find(|entry| &entry.setup() == setup)
    }

    /// Puts `entry` in place of the one of the same setup.
    pub fn put(&mut self, entry: Entry) {
        let setup = entry.setup();
        self.entries.retain(|old| old.setup() != setup);
        self.entries.push(entry);
        self.entries.sort_by(|a, b| a.setup().0.cmp(&b.setup().0));
    }

    fn validate(&self, library: &str, revision: &str) -> Result<(), HistoryProblem> {
        if self.schema != HISTORY_SCHEMA {
            return Err(HistoryProblem::Schema(self.schema));
        }
        if self.library != library {
            return Err(HistoryProblem::Library {
                found: short(&self.library),
                expected: library.to_owned(),
            });
        }
        if self.revision != revision {
            return Err(HistoryProblem::Revision {
                found: short(&self.revision),
                named: revision.to_owned(),
            });
        }
        if let Some(title) = &self.title {
            text("title", title)?;
        }
        if self.entries.len() > MAX_ENTRIES {
            return Err(HistoryProblem::Entries(self.entries.len()));
        }
        for entry in &self.entries {
            entry
                .fingerprint
                .validate()
                .map_err(HistoryProblem::Fingerprint)?;
            if entry.paths.len() > MAX_HARNESSES {
                return Err(HistoryProblem::Harnesses(entry.paths.len()));
            }
            for (name, path) in &entry.paths {
                for (field, value) in [
                    ("instructions", Some(path.instructions)),
                    ("bytes_per_run", path.bytes_per_run),
                    ("operations_per_run", Some(path.operations_per_run)),
                ] {
                    if value.is_some_and(|v| v == 0 || v > MAX_COUNT) {
                        return Err(HistoryProblem::Count {
                            harness: name.clone(),
                            field,
                        });
                    }
                }
            }
            if let Some(step) = &entry.step {
                revision_text(&step.from)?;
                for (name, moved) in &step.moved {
                    text("function", &moved.function)?;
                    text("file", &moved.file)?;
                    if moved.delta.unsigned_abs() > MAX_COUNT {
                        return Err(HistoryProblem::Delta {
                            harness: name.clone(),
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

fn short(text: &str) -> String {
    text.chars().take(60).collect()
}

fn text(field: &'static str, value: &str) -> Result<(), HistoryProblem> {
    if value.is_empty() || value.len() > MAX_NAME || value.chars().any(char::is_control) {
        return Err(HistoryProblem::Text { field });
    }
    Ok(())
}

/// Whether `revision` can name a history file: a version, or a full commit.
fn revision_text(revision: &str) -> Result<(), HistoryProblem> {
    let is_commit = matches!(revision.len(), 40 | 64)
        && revision
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    if is_commit || semver::Version::parse(revision).is_ok() {
        Ok(())
    } else {
        Err(HistoryProblem::NotARevision(short(revision)))
    }
}

/// One library's history folder.
#[derive(Debug, Clone)]
pub struct HistoryDir {
    dir: PathBuf,
    library: String,
}

impl HistoryDir {
    /// `root/<library>`; `library` must be a known library's name (it
    /// becomes a folder name).
    pub fn new(root: &Path, library: &'static regress_source::Library) -> HistoryDir {
        HistoryDir {
            dir: root.join(library.name),
            library: library.name.to_owned(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `revision` of `kind`; `None` when `revision` cannot be
    /// a file name (it is neither a version nor a full commit).
    pub fn path(&self, kind: Kind, revision: &str) -> Option<PathBuf> {
        revision_text(revision).ok()?;
        Some(match kind {
            Kind::Published => self.dir.join(format!("{revision}.json")),
            Kind::Commit => self.dir.join("rev").join(format!("{revision}.json")),
        })
    }

    /// The record of `revision`, if there is one.
    pub fn load(&self, kind: Kind, revision: &str) -> Result<Option<Record>, StoreError> {
        let Some(path) = self.path(kind, revision) else {
            return Ok(None);
        };
        if !path.exists() {
            return Ok(None);
        }
        let text = limits::read_capped(&path, limits::MAX_SMALL_FILE)
            .map_err(|source| crate::MeasureError::io("read", &path, source))?;
        let invalid = |reason: HistoryProblem| StoreError::Invalid {
            path: path.clone(),
            reason,
        };
        let record: Record =
            serde_json::from_str(&text).map_err(|error| invalid(HistoryProblem::Json(error)))?;
        record.validate(&self.library, revision).map_err(invalid)?;
        if record.kind != kind {
            return Err(invalid(HistoryProblem::Kind(record.kind)));
        }
        Ok(Some(record))
    }

    /// Every published version's record, oldest version first.
    pub fn published(&self) -> Result<Vec<Record>, StoreError> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Ok(Vec::new());
        };
        let mut versions: Vec<semver::Version> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                semver::Version::parse(name.strip_suffix(".json")?).ok()
            })
            .collect();
        versions.sort();
        let mut records = Vec::new();
        for version in versions {
            if let Some(record) = self.load(Kind::Published, &version.to_string())? {
                records.push(record);
            }
        }
        Ok(records)
    }

    /// Writes `record` (whole, replacing the file).
    pub fn save(&self, record: &Record) -> Result<PathBuf, StoreError> {
        let path = self
            .path(record.kind, &record.revision)
            .ok_or_else(|| StoreError::Invalid {
                path: self.dir.clone(),
                reason: HistoryProblem::CannotNameFile(short(&record.revision)),
            })?;
        let mut text = serde_json::to_string_pretty(record).expect("a record serialises");
        text.push('\n');
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| {
                crate::MeasureError::io("create the folder", parent.to_path_buf(), source)
            })?;
        }
        crate::atomic_file::write(&path, text.as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(revision: &str) -> Record {
        Record {
            schema: HISTORY_SCHEMA,
            library: "rustls".to_owned(),
            kind: Kind::Published,
            revision: revision.to_owned(),
            title: None,
            entries: vec![Entry {
                fingerprint: crate::fixtures::fingerprint("3.24.0"),
                paths: BTreeMap::from([(
                    crate::fixtures::name("rustls::x509_parse_chain"),
                    PathCount {
                        instructions: 7_718,
                        bytes_per_run: None,
                        operations_per_run: 1,
                    },
                )]),
                step: None,
            }],
        }
    }

    #[test]
    fn records_round_trip_and_hostile_ones_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = HistoryDir::new(dir.path(), &regress_source::library::RUSTLS);
        let saved = record("0.23.46");
        let path = history.save(&saved).expect("save");
        assert!(path.ends_with("rustls/0.23.46.json"));
        assert_eq!(
            history.load(Kind::Published, "0.23.46").expect("load"),
            Some(saved.clone())
        );
        assert_eq!(history.published().expect("all").len(), 1);
        assert!(history.path(Kind::Published, "../../x").is_none());

        let text = std::fs::read_to_string(&path).expect("read");
        for (from, to, expected) in [
            (
                "\"instructions\": 7718",
                "\"instructions\": 0",
                "outside 1 to",
            ),
            (
                "rustls::x509_parse_chain",
                "../../etc",
                "not a harness name",
            ),
            (
                "\"revision\": \"0.23.46\"",
                "\"revision\": \"0.23.45\"",
                "is named 0.23.46",
            ),
            (
                "\"library\": \"rustls\"",
                "\"library\": \"s2n-tls\"",
                "not rustls",
            ),
        ] {
            std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
            let error = history.load(Kind::Published, "0.23.46").unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
    }
}
