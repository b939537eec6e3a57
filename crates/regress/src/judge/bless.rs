//! `regress bless`: recording measurements as baselines, all or nothing.
//!
//! Every file is loaded and checked before any is written, and a write that
//! fails (a full disk) puts back the files written before it, so a bless of
//! many harnesses never leaves some updated and some not.

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
    /// The file's bytes before (`None`: there was no file).
    before: Option<Vec<u8>>,
    /// The new text, `None` when the entry is already there.
    after: Option<String>,
    outcome: Blessed,
}

/// Records every measurement as [`bless`] does, all or nothing: every file
/// is loaded and checked before any is written, and a write that fails
/// (a full disk) puts back the files written before it.
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
    for (index, plan) in plans.iter().enumerate() {
        let Some(text) = &plan.after else { continue };
        if let Err(source) = atomic_file::write(&plan.path, text.as_bytes()) {
            for written in plans[..index].iter().filter(|p| p.after.is_some()) {
                let _ = match &written.before {
                    Some(bytes) => atomic_file::write(&written.path, bytes),
                    None => std::fs::remove_file(&written.path)
                        .map_err(|source| crate::MeasureError::io("remove", &written.path, source)),
                };
            }
            return Err(BaselineError::Write {
                path: plan.path.clone(),
                source: Box::new(source),
            });
        }
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
    let before = match &loaded {
        None => None,
        Some(_) => Some(std::fs::read(&path).map_err(|source| BaselineError::Io {
            action: "read",
            path: path.clone(),
            source,
        })?),
    };
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
        before,
        after,
        outcome,
    })
}
