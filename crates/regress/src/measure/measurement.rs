//! The record of one harness's latest measured count.
//!
//! Every measurement writes `perf_outputs/<harness>.json` beside its
//! annotated profile. `regress bless` turns these records into baselines, and
//! reports read them; nothing re-runs Valgrind to learn what the last run saw.

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{MeasureError, Result};
use crate::harness_name::HarnessName;
use crate::limits::{self, MAX_COUNT};
use crate::measure::fingerprint::{Fingerprint, FingerprintProblem};
use crate::measure::metrics::{self, Kind, Metric, Metrics};
use crate::workspace::Workspace;

/// What a record or baseline entry written before `operations_per_run`
/// existed means: one call per run.
pub(crate) fn one_operation() -> u64 {
    1
}

/// Bumped whenever the record's meaning changes.
pub const MEASUREMENT_SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    pub schema: u32,
    /// `<library>::<path>`, checked when the record is read.
    pub harness: HarnessName,
    /// Instructions executed by one warm run of the path.
    pub instructions: u64,
    /// Application bytes one run moves, for throughput paths.
    pub bytes_per_run: Option<u64>,
    /// Calls of the measured API one run makes (1 for most paths; the AEAD
    /// paths repeat a small call, see `Harness::operations_per_run`).
    #[serde(default = "one_operation")]
    pub operations_per_run: u64,
    /// What the count depends on.
    pub fingerprint: Fingerprint,
    /// Whether the harness marks its client's and server's calls (a
    /// handshake). When it does not, its run cannot be split by side, and
    /// reports say so instead of showing zeros.
    #[serde(default)]
    pub sides: bool,
    /// The run's other figures: instructions by side and stage (when
    /// `sides`), allocations and bytes. Empty in a record of a program from
    /// before them.
    #[serde(default, skip_serializing_if = "Metrics::is_empty")]
    pub metrics: Metrics,
    /// The CPUID words each run-time library said it dispatched on (leaf 1
    /// ECX, EDX, leaf 7 EBX, ECX; OpenSSL's after `OPENSSL_ia32cap`): the
    /// evidence that the CPU profile reached it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub library_cpu: BTreeMap<String, [u32; 4]>,
    /// The annotated profile of the region, relative to the workspace root.
    pub annotated: PathBuf,
    /// The raw Cachegrind profile of the region, relative to the root.
    pub profile: PathBuf,
}

/// What is wrong with a record that parses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    #[error("it is not named after its harness ({expected})")]
    FileName { expected: String },
    #[error("`{field}` is {value}, outside 1 to {MAX_COUNT}")]
    Count { field: &'static str, value: u64 },
    #[error("`{field}` is empty, longer than 1024 bytes or holds control characters")]
    Path { field: &'static str },
    #[error(transparent)]
    Fingerprint(FingerprintProblem),
    #[error(transparent)]
    Metrics(MetricsProblem),
    #[error("`library_cpu` has more than 16 libraries or a name that is not short and printable")]
    LibraryCpu,
}

/// What is wrong with the metrics of a run ([`validate_metrics`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetricsProblem {
    #[error("`{key}` is {value}, more than {MAX_COUNT}")]
    TooLarge { key: &'static str, value: u64 },
    #[error("the split by side and stage is incomplete")]
    IncompleteSplit,
    #[error(
        "its parts do not add up: client {client} + server {server} + glue {glue} = {}, \
         not {instructions} (or a side is not the sum of its stages)",
        // 128 bits: three figures below 2^63 may not add up in 64.
        u128::from(*client) + u128::from(*server) + u128::from(*glue)
    )]
    PartsDoNotAddUp {
        client: u64,
        server: u64,
        glue: u64,
        instructions: u64,
    },
}

/// Checks the metrics of a run of `instructions`: every value a count, and
/// a split complete and adding up to the run (client + server + glue).
/// Shared by records and baseline entries, both read from files.
pub fn validate_metrics(
    metrics: &Metrics,
    instructions: u64,
) -> std::result::Result<(), MetricsProblem> {
    if let Some((metric, value)) = metrics.iter().find(|(_, value)| **value > MAX_COUNT) {
        return Err(MetricsProblem::TooLarge {
            key: metric.key(),
            value: *value,
        });
    }
    // The split's figures are the instruction figures: all or none.
    let side_metrics = Metric::ALL
        .iter()
        .filter(|metric| metric.kind() == Kind::Instructions);
    let present = side_metrics
        .clone()
        .filter(|metric| metrics.contains_key(metric))
        .count();
    if present != 0 && present != side_metrics.count() {
        return Err(MetricsProblem::IncompleteSplit);
    }
    if metrics::is_split(metrics) {
        // 128 bits: each figure is bounded above, but three of them may
        // still not fit in 64.
        let get = |metric| u128::from(metrics[&metric]);
        let stages_add_up = get(Metric::ClientHello) + get(Metric::ClientFinish)
            == get(Metric::Client)
            && get(Metric::ServerFlight) + get(Metric::ServerFinish) == get(Metric::Server);
        let sum = get(Metric::Client) + get(Metric::Server) + get(Metric::Glue);
        if !stages_add_up || sum != u128::from(instructions) {
            return Err(MetricsProblem::PartsDoNotAddUp {
                client: metrics[&Metric::Client],
                server: metrics[&Metric::Server],
                glue: metrics[&Metric::Glue],
                instructions,
            });
        }
    }
    Ok(())
}

/// Instructions per application byte, for throughput paths (those that
/// move bytes); shared by records, baselines and comparisons.
pub fn per_byte(instructions: u64, bytes_per_run: Option<u64>) -> Option<f64> {
    bytes_per_run
        .filter(|bytes| *bytes > 0)
        .map(|bytes| instructions as f64 / bytes as f64)
}

/// Instructions per call of the measured API, for paths that make more
/// than one call per run.
pub fn per_operation(instructions: u64, operations_per_run: u64) -> Option<f64> {
    (operations_per_run > 1).then(|| instructions as f64 / operations_per_run as f64)
}

impl Measurement {
    /// Instructions per application byte, for throughput paths.
    pub fn instructions_per_byte(&self) -> Option<f64> {
        per_byte(self.instructions, self.bytes_per_run)
    }

    /// Instructions per call of the measured API, for paths that make more
    /// than one call per run.
    pub fn instructions_per_operation(&self) -> Option<f64> {
        per_operation(self.instructions, self.operations_per_run)
    }

    /// Where the record of `harness` lives in the workspace's
    /// `perf_outputs/` (a [`crate::Runner`] with another output folder
    /// writes it there instead: [`Measurement::path_in`]).
    pub fn path(workspace: &Workspace, harness: &HarnessName) -> PathBuf {
        Measurement::path_in(&workspace.perf_outputs_dir(), harness)
    }

    /// Where the record of `harness` lives in the output folder `dir`.
    pub fn path_in(dir: &Path, harness: &HarnessName) -> PathBuf {
        harness.file_in(dir, ".json")
    }

    /// Reads a record, treating it as hostile: a name that is not a harness
    /// name, a file name that is not the harness's, a count or a number of
    /// calls out of bounds, a path that leaves the project or a fingerprint
    /// out of shape is refused with its reason.
    pub fn read(path: &Path) -> Result<Measurement> {
        let text = limits::read_capped(path, limits::MAX_SMALL_FILE)
            .map_err(|source| MeasureError::io("read", path, source))?;
        let record: Measurement =
            serde_json::from_str(&text).map_err(|source| MeasureError::Json {
                what: "measurement record",
                path: path.to_path_buf(),
                source,
            })?;
        if record.schema != MEASUREMENT_SCHEMA {
            return Err(MeasureError::Schema {
                path: path.to_path_buf(),
                found: record.schema,
                expected: MEASUREMENT_SCHEMA,
            });
        }
        record
            .validate(path)
            .map_err(|problem| MeasureError::BadRecord {
                path: path.to_path_buf(),
                problem,
            })?;
        Ok(record)
    }

    fn validate(&self, path: &Path) -> Result<(), RecordProblem> {
        let expected = format!("{}.json", self.harness.file_stem());
        if path.file_name().and_then(|name| name.to_str()) != Some(expected.as_str()) {
            return Err(RecordProblem::FileName { expected });
        }
        if self.instructions == 0 || self.instructions > MAX_COUNT {
            return Err(RecordProblem::Count {
                field: "instructions",
                value: self.instructions,
            });
        }
        if self.operations_per_run == 0 || self.operations_per_run > MAX_COUNT {
            return Err(RecordProblem::Count {
                field: "operations_per_run",
                value: self.operations_per_run,
            });
        }
        if let Some(bytes) = self.bytes_per_run.filter(|bytes| *bytes > MAX_COUNT) {
            return Err(RecordProblem::Count {
                field: "bytes_per_run",
                value: bytes,
            });
        }
        // The paths are what the record says it was written with; they are
        // shown, never opened (readers find a harness's files by its name).
        for (field, value) in [("annotated", &self.annotated), ("profile", &self.profile)] {
            let text = value.to_string_lossy();
            if text.is_empty() || text.len() > 1024 || text.chars().any(char::is_control) {
                return Err(RecordProblem::Path { field });
            }
        }
        validate_metrics(&self.metrics, self.instructions).map_err(RecordProblem::Metrics)?;
        if self.library_cpu.len() > 16
            || self.library_cpu.keys().any(|name| {
                name.is_empty() || name.len() > 64 || name.chars().any(char::is_control)
            })
        {
            return Err(RecordProblem::LibraryCpu);
        }
        self.fingerprint
            .validate()
            .map_err(RecordProblem::Fingerprint)
    }

    /// Every record in `perf_outputs/`, sorted by harness name. A harness's
    /// other JSON output, its line data (`<harness>.lines.json`), is not a
    /// record and is passed over.
    pub fn read_all(workspace: &Workspace) -> Result<Vec<Measurement>> {
        let dir = workspace.perf_outputs_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(MeasureError::io("list", dir, source)),
        };
        let mut records = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|source| MeasureError::io("list", &dir, source))?
                .path();
            let lines = path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.ends_with(crate::coverage::lines::SUFFIX));
            if path.extension().is_some_and(|ext| ext == "json") && !lines {
                records.push(Measurement::read(&path)?);
            }
        }
        records.sort_by(|a, b| a.harness.cmp(&b.harness));
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bless`, `compare` and the report read every record of
    /// `perf_outputs/`: a harness's line data beside its record is not one
    /// (it made `regress bless` fail on every measured tree), and a file
    /// that claims to be a record and is not still fails.
    #[test]
    fn read_all_passes_over_line_data_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Workspace::new(dir.path());
        let outputs = workspace.perf_outputs_dir();
        std::fs::create_dir_all(&outputs).expect("mkdir");
        let record = crate::fixtures::measurement("s2n_tls::handshake_rsa4096", 77, None);
        let name = HarnessName::new("s2n_tls::handshake_rsa4096").expect("name");
        std::fs::write(
            Measurement::path_in(&outputs, &name),
            serde_json::to_string(&record).expect("serialize"),
        )
        .expect("write");
        std::fs::write(
            name.file_in(&outputs, crate::coverage::lines::SUFFIX),
            r#"{"schema":1,"files":{}}"#,
        )
        .expect("write");
        let all = Measurement::read_all(&workspace).expect("the record alone is read");
        assert_eq!(all, vec![record]);
        std::fs::write(outputs.join("s2n_tls.other.json"), "{}").expect("write");
        assert!(Measurement::read_all(&workspace).is_err());
    }

    /// Records written before `operations_per_run` existed read as one
    /// operation per run, and a record round-trips through JSON.
    #[test]
    fn operations_per_run_defaults_to_one() {
        let record = crate::fixtures::measurement("s2n_tls::handshake_rsa4096", 77, None);
        let mut json: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&record).expect("serialize"))
                .expect("json");
        json.as_object_mut()
            .expect("object")
            .remove("operations_per_run");
        let old: Measurement = serde_json::from_value(json).expect("an older record");
        assert_eq!(old, record);
        assert_eq!(old.instructions_per_operation(), None);

        let mut repeated = crate::fixtures::measurement("aws_lc_rs::aead", 900, Some(16));
        repeated.operations_per_run = 3;
        assert_eq!(repeated.instructions_per_operation(), Some(300.0));
    }
}
