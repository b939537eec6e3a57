//! The record of one harness's latest measured count.
//!
//! Every measurement writes `perf_outputs/<harness>.json` beside its
//! annotated profile. `regress bless` turns these records into baselines, and
//! reports read them; nothing re-runs Valgrind to learn what the last run saw.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::workspace::{file_stem, Workspace};

/// Bumped whenever the record's meaning changes.
pub const MEASUREMENT_SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    pub schema: u32,
    /// `<library>::<path>`.
    pub harness: String,
    /// Instructions executed by one warm run of the path.
    pub instructions: u64,
    /// Application bytes one run moves, for throughput paths.
    pub bytes_per_run: Option<u64>,
    /// What the count depends on.
    pub fingerprint: Fingerprint,
    /// The annotated profile of the region, relative to the workspace root.
    pub annotated: PathBuf,
    /// The raw Cachegrind profile of the region, relative to the root.
    pub profile: PathBuf,
}

impl Measurement {
    /// Instructions per application byte, for throughput paths.
    pub fn instructions_per_byte(&self) -> Option<f64> {
        self.bytes_per_run
            .filter(|bytes| *bytes > 0)
            .map(|bytes| self.instructions as f64 / bytes as f64)
    }

    /// Where the record of `harness` lives.
    pub fn path(workspace: &Workspace, harness: &str) -> PathBuf {
        workspace
            .perf_outputs_dir()
            .join(format!("{}.json", file_stem(harness)))
    }

    pub fn read(path: &Path) -> Result<Measurement> {
        let text =
            std::fs::read_to_string(path).map_err(|source| Error::io("read", path, source))?;
        let record: Measurement = serde_json::from_str(&text).map_err(|source| Error::Json {
            what: "measurement record",
            path: path.to_path_buf(),
            source,
        })?;
        if record.schema != MEASUREMENT_SCHEMA {
            return Err(Error::Invalid(format!(
                "{} has schema {}, this runner reads {MEASUREMENT_SCHEMA}; measure again",
                path.display(),
                record.schema
            )));
        }
        Ok(record)
    }

    /// Every record in `perf_outputs/`, sorted by harness name.
    pub fn read_all(workspace: &Workspace) -> Result<Vec<Measurement>> {
        let dir = workspace.perf_outputs_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(Error::io("list", dir, source)),
        };
        let mut records = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|source| Error::io("list", &dir, source))?
                .path();
            if path.extension().is_some_and(|ext| ext == "json") {
                records.push(Measurement::read(&path)?);
            }
        }
        records.sort_by(|a, b| a.harness.cmp(&b.harness));
        Ok(records)
    }
}
