//! `regress bless`: recording measurements as baselines, all or nothing.
//!
//! Every file is loaded and checked before any is written; the new set of
//! baselines is then made beside the old one and swapped in by one rename
//! ([`atomic_file::replace_in_folder`]), so a bless of many harnesses never
//! leaves some updated and some not: not on an error (a full disk), not on
//! Ctrl-C, not when the process is killed outright.

use std::path::{Path, PathBuf};

use super::baseline::{BaselineEntry, BaselineError, BaselineFile, BASELINE_SCHEMA};
use super::Threshold;
use crate::atomic_file;
use crate::measure::measurement::Measurement;

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
    let mut outcomes = bless_all(dir, std::slice::from_ref(measurement))?;
    Ok(outcomes.remove(0))
}

/// One file's part in a bless: what it held, and what it will hold.
struct Plan {
    path: PathBuf,
    /// The new text, `None` when the entry is already there.
    after: Option<String>,
    outcome: Blessed,
}

/// Records every measurement as [`bless`] does, all or nothing: every file
/// is loaded and checked before any is written, and the folder's new set
/// of files replaces the old one in one step.
pub fn bless_all(dir: &Path, measurements: &[Measurement]) -> Result<Vec<Blessed>, BaselineError> {
    let plans = measurements
        .iter()
        .map(|measurement| plan(dir, measurement))
        .collect::<Result<Vec<Plan>, BaselineError>>()?;
    if plans.iter().any(|plan| plan.after.is_some()) {
        std::fs::create_dir_all(dir).map_err(|source| BaselineError::Io {
            action: "create the folder of",
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let changes: Vec<(PathBuf, Vec<u8>)> = plans
        .iter()
        .filter_map(|plan| {
            let text = plan.after.as_ref()?;
            let name = plan.path.file_name()?;
            Some((PathBuf::from(name), text.clone().into_bytes()))
        })
        .collect();
    if !changes.is_empty() {
        atomic_file::replace_in_folder(dir, &changes).map_err(|source| BaselineError::Write {
            path: dir.to_path_buf(),
            source: Box::new(source),
        })?;
    }
    Ok(plans.into_iter().map(|plan| plan.outcome).collect())
}

fn plan(dir: &Path, measurement: &Measurement) -> Result<Plan, BaselineError> {
    let path = BaselineFile::path(dir, &measurement.harness);
    let entry = BaselineEntry {
        fingerprint: measurement.fingerprint.clone(),
        instructions: measurement.instructions,
        bytes_per_run: measurement.bytes_per_run,
        operations_per_run: measurement.operations_per_run,
        metrics: measurement.metrics.clone(),
    };
    let loaded = BaselineFile::load(dir, &measurement.harness)?;
    let (file, outcome) = match loaded {
        None => (
            BaselineFile {
                schema: BASELINE_SCHEMA,
                harness: measurement.harness.clone(),
                threshold: Threshold::for_count(measurement.instructions),
                heap_threshold: Threshold::heap_default(),
                entries: vec![entry],
            },
            Blessed::Created {
                path: path.clone(),
                instructions: measurement.instructions,
            },
        ),
        Some(mut file) => {
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
    let after = match outcome {
        Blessed::Unchanged { .. } => None,
        _ => Some(file.to_json().map_err(|source| BaselineError::Serialize {
            path: path.clone(),
            source,
        })?),
    };
    Ok(Plan {
        path,
        after,
        outcome,
    })
}
