//! Committed baselines: one JSON file per harness in `baselines/`.
//!
//! A file holds one entry per fingerprint, because machines differ: the CPU
//! features Valgrind reports decide which assembly aws-lc runs, and the
//! Valgrind version decides the counting method. The threshold belongs to the
//! harness, not to an entry.
//!
//! Baselines change only through [`bless`] ([`super::bless`]), which the user runs on purpose
//! (`regress bless`); measuring never writes them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::bless::{bless, bless_all, Blessed};
use super::{Threshold, ThresholdProblem};
use crate::harness_name::HarnessName;
use crate::limits::{self, MAX_COUNT};
use crate::measure::fingerprint::{Fingerprint, FingerprintProblem};
use crate::measure::measurement::{validate_metrics, MetricsProblem};
use crate::measure::metrics::Metrics;

/// Bumped whenever the file's meaning changes.
pub const BASELINE_SCHEMA: u32 = 1;

/// The largest count a baseline may hold: the runner's counts come from
/// `i64` profile totals, and a larger one can only be a hand edit.
pub const MAX_INSTRUCTIONS: u64 = MAX_COUNT;

/// The most entries a file may hold (one per kind of machine: a handful).
pub const MAX_ENTRIES: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error(
        "the baseline {path} is not valid JSON of the expected shape: {source}.\n  \
         Fix the hand edit (see `git diff {path}`) or restore it with `git checkout -- {path}`."
    )]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "the baseline {path} is invalid: {problem}.\n  \
         Fix the hand edit (see `git diff {path}`) or restore it with `git checkout -- {path}`."
    )]
    Invalid { path: PathBuf, problem: Problem },

    #[error(
        "cannot {action} the baseline {path}: {source}.\n  {}; the file itself was not changed.",
        crate::limits::io_hint(source)
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot turn the baseline {path} into JSON: {source}")]
    Serialize {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "cannot write the baseline {path}: {source}\n  \
         No baseline was changed: a bless replaces the whole set of baselines in one step, \
         or none of it."
    )]
    Write {
        path: PathBuf,
        /// Boxed to keep every baseline `Result` small.
        #[source]
        source: Box<crate::MeasureError>,
    },
}

/// What is wrong with a baseline file that parses as JSON.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("schema {found} is not the {BASELINE_SCHEMA} this runner reads")]
    Schema { found: u32 },
    #[error("it names harness {found:?}, but its file name says {expected:?}")]
    HarnessName { found: String, expected: String },
    #[error(transparent)]
    Threshold(ThresholdProblem),
    #[error("entry {entry} has an instruction count of 0")]
    ZeroCount { entry: usize },
    #[error("entry {entry} counts {count} instructions, more than any measurement can ({MAX_INSTRUCTIONS})")]
    CountTooLarge { entry: usize, count: u64 },
    #[error("entry {entry} makes 0 calls per run")]
    ZeroOperations { entry: usize },
    #[error("entry {entry}: `{field}` is {value}, more than {MAX_COUNT}")]
    TooLarge {
        entry: usize,
        field: &'static str,
        value: u64,
    },
    #[error("entry {entry} repeats the fingerprint of an earlier entry")]
    DuplicateFingerprint { entry: usize },
    #[error("entry {entry}: {problem}")]
    Fingerprint {
        entry: usize,
        problem: FingerprintProblem,
    },
    #[error("it has more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    #[error("entry {entry}: {problem}")]
    Metrics {
        entry: usize,
        problem: MetricsProblem,
    },
    #[error("heap_threshold: {0}")]
    HeapThreshold(ThresholdProblem),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    pub fingerprint: Fingerprint,
    pub instructions: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_run: Option<u64>,
    /// Calls of the measured API the counted run made. A count is only
    /// comparable with one of the same number of calls; written only when
    /// it is not 1.
    #[serde(
        default = "crate::measure::measurement::one_operation",
        skip_serializing_if = "is_one_operation"
    )]
    pub operations_per_run: u64,
    /// The run's other figures (sides, stages, heap), gated beside the
    /// count. Absent in an entry blessed before they existed: the gate then
    /// judges the count and asks for a bless for the rest.
    #[serde(default, skip_serializing_if = "Metrics::is_empty")]
    pub metrics: Metrics,
}

fn is_one_operation(operations: &u64) -> bool {
    *operations == 1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    pub schema: u32,
    /// Checked when the file is read: a name that is not a harness name
    /// does not load.
    pub harness: HarnessName,
    /// The threshold of the instruction count, and of the instructions of
    /// each side, stage and the glue.
    pub threshold: Threshold,
    /// The threshold of the heap figures ([`Threshold::heap_default`] in a
    /// file from before them).
    #[serde(default = "Threshold::heap_default")]
    pub heap_threshold: Threshold,
    pub entries: Vec<BaselineEntry>,
}

impl BaselineFile {
    /// Where the baseline of `harness` lives in `dir`.
    pub fn path(dir: &Path, harness: &HarnessName) -> PathBuf {
        harness.file_in(dir, ".json")
    }

    /// Loads and validates the baseline of `harness`; `Ok(None)` when it
    /// has no file. A file that does not load is an error, never "no
    /// baseline": it must be fixed, not judged around or overwritten.
    pub fn load(dir: &Path, harness: &HarnessName) -> Result<Option<BaselineFile>, BaselineError> {
        let path = BaselineFile::path(dir, harness);
        let text = match limits::read_capped(&path, limits::MAX_SMALL_FILE) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(BaselineError::Io {
                    action: "read",
                    path,
                    source,
                })
            }
        };
        let file: BaselineFile =
            serde_json::from_str(&text).map_err(|source| BaselineError::Corrupt {
                path: path.clone(),
                source,
            })?;
        file.validate(harness)
            .map_err(|problem| BaselineError::Invalid { path, problem })?;
        Ok(Some(file))
    }

    fn validate(&self, harness: &HarnessName) -> Result<(), Problem> {
        if self.schema != BASELINE_SCHEMA {
            return Err(Problem::Schema { found: self.schema });
        }
        if &self.harness != harness {
            return Err(Problem::HarnessName {
                found: self.harness.to_string(),
                expected: harness.to_string(),
            });
        }
        self.threshold.validate().map_err(Problem::Threshold)?;
        self.heap_threshold
            .validate()
            .map_err(Problem::HeapThreshold)?;
        if self.entries.len() > MAX_ENTRIES {
            return Err(Problem::TooManyEntries);
        }
        for (index, entry) in self.entries.iter().enumerate() {
            if entry.instructions == 0 {
                return Err(Problem::ZeroCount { entry: index });
            }
            if entry.instructions > MAX_INSTRUCTIONS {
                return Err(Problem::CountTooLarge {
                    entry: index,
                    count: entry.instructions,
                });
            }
            if entry.operations_per_run == 0 {
                return Err(Problem::ZeroOperations { entry: index });
            }
            for (field, value) in [
                ("operations_per_run", entry.operations_per_run),
                ("bytes_per_run", entry.bytes_per_run.unwrap_or(0)),
            ] {
                if value > MAX_COUNT {
                    return Err(Problem::TooLarge {
                        entry: index,
                        field,
                        value,
                    });
                }
            }
            validate_metrics(&entry.metrics, entry.instructions).map_err(|problem| {
                Problem::Metrics {
                    entry: index,
                    problem,
                }
            })?;
            entry
                .fingerprint
                .validate()
                .map_err(|problem| Problem::Fingerprint {
                    entry: index,
                    problem,
                })?;
            if self.entries[..index]
                .iter()
                .any(|earlier| earlier.fingerprint == entry.fingerprint)
            {
                return Err(Problem::DuplicateFingerprint { entry: index });
            }
        }
        Ok(())
    }

    /// The entry measured under `fingerprint`, if any.
    pub fn entry_for(&self, fingerprint: &Fingerprint) -> Option<&BaselineEntry> {
        self.entries
            .iter()
            .find(|entry| &entry.fingerprint == fingerprint)
    }

    /// The entry whose fingerprint differs least from `fingerprint`, with
    /// the differences: what a user needs to understand a mismatch.
    pub fn closest(&self, fingerprint: &Fingerprint) -> Option<(&BaselineEntry, Vec<String>)> {
        self.entries
            .iter()
            .map(|entry| (entry, entry.fingerprint.differences(fingerprint)))
            .min_by_key(|(_, differences)| differences.len())
    }
}

impl BaselineFile {
    /// The file's text: pretty JSON, one field a line, ending in a newline,
    /// so that a re-bless reads as a small `git diff`.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use crate::measure::measurement::Measurement;

    const HARNESS_NAME: &str = "s2n_tls::handshake_rsa4096";

    fn harness() -> HarnessName {
        fixtures::name(HARNESS_NAME)
    }

    fn fingerprint(valgrind: &str) -> Fingerprint {
        fixtures::fingerprint(valgrind)
    }

    fn measurement(valgrind: &str, instructions: u64) -> Measurement {
        let mut measurement = fixtures::measurement(HARNESS_NAME, instructions, None);
        measurement.fingerprint = fixtures::fingerprint(valgrind);
        measurement
    }

    #[test]
    fn bless_creates_adds_updates_and_keeps_other_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outcome = bless(dir.path(), &measurement("3.19.0", 100_000)).expect("create");
        assert!(matches!(
            outcome,
            Blessed::Created {
                instructions: 100_000,
                ..
            }
        ));
        let outcome = bless(dir.path(), &measurement("3.24.0", 100_010)).expect("add");
        assert!(matches!(outcome, Blessed::Added { .. }));
        let outcome = bless(dir.path(), &measurement("3.19.0", 90_000)).expect("update");
        assert!(matches!(
            outcome,
            Blessed::Updated {
                from: 100_000,
                to: 90_000,
                ..
            }
        ));
        let outcome = bless(dir.path(), &measurement("3.19.0", 90_000)).expect("again");
        assert!(matches!(outcome, Blessed::Unchanged { .. }));

        let file = BaselineFile::load(dir.path(), &harness())
            .expect("load")
            .expect("a file");
        assert_eq!(file.entries.len(), 2);
        assert_eq!(
            file.entry_for(&fingerprint("3.19.0"))
                .map(|e| e.instructions),
            Some(90_000)
        );
        assert_eq!(
            file.entry_for(&fingerprint("3.24.0"))
                .map(|e| e.instructions),
            Some(100_010)
        );
        assert_eq!(file.threshold, Threshold::default());
    }

    #[test]
    fn bless_keeps_a_hand_tuned_threshold() {
        let dir = tempfile::tempdir().expect("tempdir");
        bless(dir.path(), &measurement("3.19.0", 100_000)).expect("create");
        let path = BaselineFile::path(dir.path(), &harness());
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(
            &path,
            text.replace("\"relative_percent\": 0.05", "\"relative_percent\": 0.5"),
        )
        .expect("write");
        bless(dir.path(), &measurement("3.19.0", 120_000)).expect("update");
        let file = BaselineFile::load(dir.path(), &harness())
            .expect("load")
            .expect("a file");
        assert_eq!(file.threshold.relative_percent, 0.5);
    }

    #[test]
    fn a_missing_baseline_is_no_file_not_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(BaselineFile::load(dir.path(), &harness())
            .expect("load")
            .is_none());
    }

    /// A folder that cannot hold files is an I/O error that says so, not a
    /// complaint about the baseline's contents.
    #[test]
    fn an_io_failure_is_not_called_corrupt() {
        let dir = tempfile::tempdir().expect("tempdir");
        let not_a_folder = dir.path().join("baselines");
        std::fs::write(&not_a_folder, "a file").expect("write");
        let error = bless(&not_a_folder, &measurement("3.19.0", 5)).unwrap_err();
        assert!(matches!(error, BaselineError::Io { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            !message.contains("not valid JSON") && !message.contains("invalid"),
            "{message}"
        );
        assert!(message.contains("cannot read the baseline"), "{message}");
    }

    /// Each damaged file must be refused with its own reason, and blessing
    /// over it must leave it byte-identical.
    #[test]
    fn corrupt_and_hand_edited_baselines_are_refused_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        bless(dir.path(), &measurement("3.19.0", 100_000)).expect("create");
        let path = BaselineFile::path(dir.path(), &harness());
        let good = std::fs::read_to_string(&path).expect("read");
        let cases: Vec<(String, &str)> = vec![
            (good[..good.len() / 2].to_owned(), "not valid JSON"),
            ("".to_owned(), "not valid JSON"),
            (
                good.replace("\"instructions\"", "\"instructons\""),
                "unknown field",
            ),
            (
                good.replace("\"instructions\": 100000", "\"instructions\": -5"),
                "not valid JSON",
            ),
            (
                good.replace("\"instructions\": 100000", "\"instructions\": 0"),
                "count of 0",
            ),
            (good.replace("\"schema\": 1", "\"schema\": 7"), "schema 7"),
            (
                good.replace(
                    "\"instructions\": 100000",
                    "\"instructions\": 18446744073709551615",
                ),
                "more than any measurement can",
            ),
            (
                good.replace("s2n_tls::handshake_rsa4096", "s2n_tls::other"),
                "names harness",
            ),
            (
                good.replace("\"relative_percent\": 0.05", "\"relative_percent\": -1.0"),
                "from 0 to 100",
            ),
            (
                good.replace("\"relative_percent\": 0.05", "\"relative_percent\": 1e300"),
                "from 0 to 100",
            ),
            (
                good.replace("\"absolute\": 1000", "\"absolute\": 18446744073709551615"),
                "more than any count",
            ),
            (
                good.replace(
                    "\"instructions\": 100000",
                    "\"instructions\": 9223372036854775808",
                ),
                "more than any measurement can",
            ),
            (
                good.replace(
                    "\"instructions\": 100000",
                    "\"instructions\": 100000, \"operations_per_run\": 0",
                ),
                "0 calls per run",
            ),
            (
                good.replace("s2n_tls::handshake_rsa4096", "../../../tmp/x"),
                "is not a harness name",
            ),
            (
                good.replace("\"valgrind\": \"3.19.0\"", "\"valgrind\": \"<b>3</b>\""),
                "not a Valgrind version",
            ),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, &text).expect("write");
            let error = BaselineFile::load(dir.path(), &harness()).unwrap_err();
            let message = error.to_string();
            assert!(
                message.contains(expected),
                "expected {expected:?} in: {message}"
            );
            assert!(message.contains(&path.display().to_string()), "{message}");
            assert!(bless(dir.path(), &measurement("3.19.0", 5)).is_err());
            assert_eq!(
                std::fs::read_to_string(&path).expect("read"),
                text,
                "file changed"
            );
        }
    }

    #[test]
    fn duplicate_fingerprints_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = fixtures::baseline(HARNESS_NAME, &[("3.19.0", 1), ("3.19.0", 1)]);
        let path = BaselineFile::path(dir.path(), &harness());
        std::fs::write(&path, serde_json::to_string(&file).expect("json")).expect("write");
        let message = BaselineFile::load(dir.path(), &harness())
            .unwrap_err()
            .to_string();
        assert!(message.contains("repeats the fingerprint"), "{message}");
    }
}
