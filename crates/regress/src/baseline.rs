//! Committed baselines: one JSON file per harness in `baselines/`.
//!
//! A file holds one entry per fingerprint, because machines differ: the CPU
//! features Valgrind reports decide which assembly aws-lc runs, and the
//! Valgrind version decides the counting method. The threshold belongs to the
//! harness, not to an entry.
//!
//! Baselines change only through [`bless`], which the user runs on purpose
//! (`regress bless`); measuring never writes them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file;
use crate::fingerprint::Fingerprint;
use crate::measurement::Measurement;
use crate::workspace::file_stem;

/// Bumped whenever the file's meaning changes.
pub const BASELINE_SCHEMA: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error(
        "no baseline for {harness}: {path} does not exist.\n  \
         Measure it (ENABLE_VALGRIND=true cargo test) and record it with \
         `cargo run -p regress -- bless --harness {harness}`."
    )]
    Missing { harness: String, path: PathBuf },

    #[error(
        "the baseline {path} is not valid JSON of the expected shape: {source}.\n  \
         Fix the hand edit (see `git diff {path}`) or restore it with `git checkout -- {path}`."
    )]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error("the baseline {path} is invalid: {reason}")]
    Invalid { path: PathBuf, reason: String },

    #[error("cannot {action} the baseline {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// When a change in count is worth failing for.
///
/// The counts repeat to the instruction, so the threshold is not a noise
/// margin; it is the smallest change worth a reviewer's attention. A change
/// counts when it exceeds the larger of the relative part of the baseline and
/// the absolute floor. The floor keeps tiny paths from failing on a handful
/// of instructions of allocator or harness drift.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// Percent of the baseline count, e.g. `0.05` for 0.05 %.
    pub relative_percent: f64,
    /// Instructions; changes up to this size never count.
    pub absolute: u64,
}

impl Default for Threshold {
    /// 0.05 % with a floor of 1,000 instructions. For the RSA-4096 handshake
    /// (~77 M) that is ~38 K instructions: a few hundred executed lines of C,
    /// well above the zero run-to-run spread and well below any change a
    /// maintainer would want to hear about.
    fn default() -> Threshold {
        Threshold {
            relative_percent: 0.05,
            absolute: 1_000,
        }
    }
}

impl Threshold {
    /// The threshold a new baseline of `instructions` gets: the default,
    /// with the absolute floor lowered to 1 % of the count (but at least 10
    /// instructions) for paths so small that 1,000 instructions would be
    /// most of them: a 7,715-instruction X.509 parse must not be allowed
    /// to grow by 13 % unnoticed.
    pub fn for_count(instructions: u64) -> Threshold {
        let default = Threshold::default();
        Threshold {
            absolute: (instructions / 100).clamp(10, default.absolute),
            ..default
        }
    }

    /// The largest change, in instructions, that does not count for a
    /// baseline of `baseline` instructions.
    pub fn allowance(&self, baseline: u64) -> u64 {
        let relative = (baseline as f64 * self.relative_percent / 100.0).floor() as u64;
        relative.max(self.absolute)
    }

    fn validate(&self) -> Result<(), String> {
        if !self.relative_percent.is_finite() || self.relative_percent < 0.0 {
            return Err(format!(
                "threshold.relative_percent must be a non-negative number, not {}",
                self.relative_percent
            ));
        }
        Ok(())
    }
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
        default = "crate::measurement::one_operation",
        skip_serializing_if = "is_one_operation"
    )]
    pub operations_per_run: u64,
}

fn is_one_operation(operations: &u64) -> bool {
    *operations == 1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    pub schema: u32,
    pub harness: String,
    pub threshold: Threshold,
    pub entries: Vec<BaselineEntry>,
}

impl BaselineFile {
    /// Where the baseline of `harness` lives in `dir`.
    pub fn path(dir: &Path, harness: &str) -> PathBuf {
        dir.join(format!("{}.json", file_stem(harness)))
    }

    /// Loads and validates the baseline of `harness`.
    pub fn load(dir: &Path, harness: &str) -> Result<BaselineFile, BaselineError> {
        let path = BaselineFile::path(dir, harness);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(BaselineError::Missing {
                    harness: harness.to_owned(),
                    path,
                })
            }
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
            .map_err(|reason| BaselineError::Invalid { path, reason })?;
        Ok(file)
    }

    fn validate(&self, harness: &str) -> Result<(), String> {
        if self.schema != BASELINE_SCHEMA {
            return Err(format!(
                "schema {} is not the {BASELINE_SCHEMA} this runner reads",
                self.schema
            ));
        }
        if self.harness != harness {
            return Err(format!(
                "it names harness {:?}, but its file name says {harness:?}",
                self.harness
            ));
        }
        self.threshold.validate()?;
        for (index, entry) in self.entries.iter().enumerate() {
            if entry.instructions == 0 {
                return Err(format!("entry {index} has an instruction count of 0"));
            }
            if self.entries[..index]
                .iter()
                .any(|earlier| earlier.fingerprint == entry.fingerprint)
            {
                return Err(format!(
                    "entry {index} repeats the fingerprint of an earlier entry"
                ));
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

/// What [`bless`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Blessed {
    /// A new file was created.
    Created { path: PathBuf, instructions: u64 },
    /// An entry was added for a fingerprint the file did not have.
    Added { path: PathBuf, instructions: u64 },
    /// The entry of this fingerprint changed.
    Updated { path: PathBuf, from: u64, to: u64 },
    /// The entry already held this count.
    Unchanged { path: PathBuf, instructions: u64 },
}

/// Records `measurement` as the baseline for its fingerprint, keeping every
/// other entry and the threshold. An existing file that does not load is
/// left alone: blessing must not paper over a corrupt baseline.
pub fn bless(dir: &Path, measurement: &Measurement) -> Result<Blessed, BaselineError> {
    let path = BaselineFile::path(dir, &measurement.harness);
    let entry = BaselineEntry {
        fingerprint: measurement.fingerprint.clone(),
        instructions: measurement.instructions,
        bytes_per_run: measurement.bytes_per_run,
        operations_per_run: measurement.operations_per_run,
    };
    let (file, outcome) = match BaselineFile::load(dir, &measurement.harness) {
        Err(BaselineError::Missing { .. }) => (
            BaselineFile {
                schema: BASELINE_SCHEMA,
                harness: measurement.harness.clone(),
                threshold: Threshold::for_count(measurement.instructions),
                entries: vec![entry],
            },
            Blessed::Created {
                path: path.clone(),
                instructions: measurement.instructions,
            },
        ),
        Err(other) => return Err(other),
        Ok(mut file) => {
            let outcome = match file
                .entries
                .iter_mut()
                .find(|existing| existing.fingerprint == entry.fingerprint)
            {
                Some(existing) if existing == &entry => Blessed::Unchanged {
                    path: path.clone(),
                    instructions: entry.instructions,
                },
                Some(existing) => {
                    let from = existing.instructions;
                    *existing = entry;
                    Blessed::Updated {
                        path: path.clone(),
                        from,
                        to: measurement.instructions,
                    }
                }
                None => {
                    file.entries.push(entry);
                    Blessed::Added {
                        path: path.clone(),
                        instructions: measurement.instructions,
                    }
                }
            };
            (file, outcome)
        }
    };
    if matches!(outcome, Blessed::Unchanged { .. }) {
        return Ok(outcome);
    }
    let mut text =
        serde_json::to_string_pretty(&file).map_err(|source| BaselineError::Corrupt {
            path: path.clone(),
            source,
        })?;
    text.push('\n');
    std::fs::create_dir_all(dir).map_err(|source| BaselineError::Io {
        action: "create the folder of",
        path: path.clone(),
        source,
    })?;
    atomic_file::write(&path, text.as_bytes()).map_err(|error| BaselineError::Invalid {
        path: path.clone(),
        reason: error.to_string(),
    })?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::MEASUREMENT_SCHEMA;
    use crate::valgrind::Method;

    const HARNESS: &str = "s2n_tls::handshake_rsa4096";

    fn fingerprint(valgrind: &str) -> Fingerprint {
        Fingerprint {
            valgrind: valgrind.into(),
            method: if valgrind == "3.19.0" {
                Method::Subtraction
            } else {
                Method::Markers
            },
            rustc: "rustc 1.95.0".into(),
            target: "x86_64-unknown-linux-gnu".into(),
            cpu_features: vec!["aes".into(), "avx2".into()],
            libraries: [("s2n-tls".to_owned(), "0.3.47".to_owned())].into(),
        }
    }

    fn measurement(valgrind: &str, instructions: u64) -> Measurement {
        Measurement {
            schema: MEASUREMENT_SCHEMA,
            harness: HARNESS.into(),
            instructions,
            bytes_per_run: None,
            operations_per_run: 1,
            fingerprint: fingerprint(valgrind),
            annotated: PathBuf::from("perf_outputs/a.txt"),
            profile: PathBuf::from("perf_outputs/a.out"),
        }
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

        let file = BaselineFile::load(dir.path(), HARNESS).expect("load");
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
    fn small_paths_get_a_proportionate_floor() {
        assert_eq!(Threshold::for_count(77_000_000), Threshold::default());
        assert_eq!(Threshold::for_count(100_000).absolute, 1_000);
        assert_eq!(Threshold::for_count(37_763).absolute, 377);
        assert_eq!(Threshold::for_count(947).absolute, 10);
        assert_eq!(Threshold::for_count(947).allowance(947), 10);
    }

    #[test]
    fn bless_keeps_a_hand_tuned_threshold() {
        let dir = tempfile::tempdir().expect("tempdir");
        bless(dir.path(), &measurement("3.19.0", 100_000)).expect("create");
        let path = BaselineFile::path(dir.path(), HARNESS);
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(
            &path,
            text.replace("\"relative_percent\": 0.05", "\"relative_percent\": 0.5"),
        )
        .expect("write");
        bless(dir.path(), &measurement("3.19.0", 120_000)).expect("update");
        let file = BaselineFile::load(dir.path(), HARNESS).expect("load");
        assert_eq!(file.threshold.relative_percent, 0.5);
    }

    #[test]
    fn a_missing_baseline_says_how_to_create_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = BaselineFile::load(dir.path(), HARNESS).unwrap_err();
        assert!(matches!(error, BaselineError::Missing { .. }));
        let message = error.to_string();
        assert!(
            message.contains("s2n_tls.handshake_rsa4096.json does not exist"),
            "{message}"
        );
        assert!(
            message.contains("bless --harness s2n_tls::handshake_rsa4096"),
            "{message}"
        );
    }

    /// Each damaged file must be refused with its own reason, and blessing
    /// over it must leave it byte-identical.
    #[test]
    fn corrupt_and_hand_edited_baselines_are_refused_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        bless(dir.path(), &measurement("3.19.0", 100_000)).expect("create");
        let path = BaselineFile::path(dir.path(), HARNESS);
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
                good.replace("s2n_tls::handshake_rsa4096", "s2n_tls::other"),
                "names harness",
            ),
            (
                good.replace("\"relative_percent\": 0.05", "\"relative_percent\": -1.0"),
                "non-negative",
            ),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, &text).expect("write");
            let error = BaselineFile::load(dir.path(), HARNESS).unwrap_err();
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
        let entry = BaselineEntry {
            fingerprint: fingerprint("3.19.0"),
            instructions: 1,
            bytes_per_run: None,
            operations_per_run: 1,
        };
        let file = BaselineFile {
            schema: BASELINE_SCHEMA,
            harness: HARNESS.into(),
            threshold: Threshold::default(),
            entries: vec![entry.clone(), entry],
        };
        let path = BaselineFile::path(dir.path(), HARNESS);
        std::fs::write(&path, serde_json::to_string(&file).expect("json")).expect("write");
        let message = BaselineFile::load(dir.path(), HARNESS)
            .unwrap_err()
            .to_string();
        assert!(message.contains("repeats the fingerprint"), "{message}");
    }
}
