//! Measures one harness: runs its child process(es) under Cachegrind,
//! annotates the region's profile into `perf_outputs/`, and records the
//! count.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use regress_measure::child::PREPARED_INPUTS;
use regress_profile::{annotated, cachegrind_out};

use crate::atomic_file;
use crate::error::{Error, Result};
use crate::harness_name::HarnessName;
use crate::measure::annotate;
use crate::measure::cachegrind::{self, ChildOutcome, ChildSpec};
use crate::measure::fingerprint::Fingerprint;
use crate::measure::measurement::{Measurement, MEASUREMENT_SCHEMA};
use crate::measure::scratch::ScratchDir;
use crate::measure::valgrind::{Method, Valgrind};
use crate::toolchain::Built;
use crate::workspace::Workspace;

static NEXT_SCRATCH: AtomicU64 = AtomicU64::new(0);

/// Lines the runner adds at the top of an annotated file start with this, so
/// readers can tell them from `cg_annotate`'s own output.
pub const HEADER_PREFIX: &str = "regress: ";

/// Everything needed to measure harnesses on this machine.
#[derive(Debug, Clone)]
pub struct Runner {
    pub workspace: Workspace,
    pub valgrind: Valgrind,
    pub timeout: Duration,
    outputs: PathBuf,
    /// How each measured program was built (its compilers and crate
    /// versions), read once per program.
    builds: Arc<Mutex<BTreeMap<PathBuf, Built>>>,
}

impl Runner {
    pub fn new(workspace: Workspace, valgrind: Valgrind, timeout: Duration) -> Result<Runner> {
        Ok(Runner {
            outputs: workspace.perf_outputs_dir(),
            workspace,
            valgrind,
            timeout,
            builds: Arc::default(),
        })
    }

    /// Writes every output, the record included, to `dir` instead of the
    /// workspace's `perf_outputs/` (a two-commit diff keeps each side's
    /// outputs apart, and an old commit's checkout is never written to).
    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> Runner {
        self.outputs = dir.into();
        self
    }

    /// Where this runner writes annotated profiles and records.
    pub fn output_dir(&self) -> &Path {
        &self.outputs
    }

    /// The runner the environment describes (`REGRESS_VALGRIND`,
    /// `REGRESS_TIMEOUT_SECS`, `REGRESS_ROOT`).
    pub fn from_env() -> Result<Runner> {
        Runner::new(
            Workspace::discover()?,
            Valgrind::from_env()?,
            cachegrind::timeout_from_env()?,
        )
    }

    /// Measures `harness`, a test of the test binary `binary`, and writes its
    /// annotated profile and record into `perf_outputs/`.
    pub fn measure(&self, harness: &str, binary: &Path) -> Result<Measurement> {
        let harness = HarnessName::new(harness)?;
        crate::process::check()?;
        let outputs = &self.outputs;
        std::fs::create_dir_all(outputs)
            .map_err(|source| Error::io("create the output folder", outputs, source))?;
        let mut scratch = ScratchDir::create(
            &self.outputs.join(".scratch"),
            &format!(
                "{}.{}",
                harness.file_stem(),
                NEXT_SCRATCH.fetch_add(1, Ordering::Relaxed)
            ),
        )?;
        let result = self.measure_in(&harness, binary, scratch.path());
        if let Err(error) = &result {
            // Keep the scratch folder after a failure: its logs are the
            // evidence the error message points to. An interrupted one
            // holds no evidence of anything.
            if !error.is_interrupted() {
                scratch.keep();
            }
        }
        result
    }

    /// How `binary` was built (compilers, linker, crate versions), read
    /// once.
    fn built(&self, binary: &Path) -> Result<Built> {
        let mut known = self
            .builds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(built) = known.get(binary) {
            return Ok(built.clone());
        }
        let built = crate::toolchain::of(binary)?;
        known.insert(binary.to_path_buf(), built.clone());
        Ok(built)
    }

    fn child<'a>(
        &'a self,
        harness: &'a HarnessName,
        binary: &'a Path,
        scratch: &'a Path,
        runs: usize,
    ) -> ChildSpec<'a> {
        ChildSpec {
            valgrind: &self.valgrind,
            binary,
            harness,
            runs,
            markers: self.valgrind.method == Method::Markers,
            scratch,
            timeout: self.timeout,
        }
    }

    fn measure_in(
        &self,
        harness: &HarnessName,
        binary: &Path,
        scratch: &Path,
    ) -> Result<Measurement> {
        let last = self
            .child(harness, binary, scratch, PREPARED_INPUTS)
            .run()?;
        let (region_profile, instructions) = match self.valgrind.method {
            Method::Markers => {
                let total = read_profile(&last.profile)?
                    .instructions()
                    .map_err(|source| Error::Profile {
                        path: last.profile.clone(),
                        source,
                    })?;
                (last.profile.clone(), total)
            }
            Method::Subtraction => {
                let before = self
                    .child(harness, binary, scratch, PREPARED_INPUTS - 1)
                    .run()?;
                check_same_machine(harness, &before, &last)?;
                let region = scratch.join("region.cachegrind.out");
                annotate::diff(&self.valgrind, &before.profile, &last.profile, &region)?;
                let (after, before) = (
                    instructions_of(&last.profile)?,
                    instructions_of(&before.profile)?,
                );
                // Checked: the counts come from files a child wrote.
                let total = after.checked_sub(before).ok_or(Error::NonPositiveCount {
                    harness: harness.to_string(),
                    count: i64::MIN,
                })?;
                (region, total)
            }
        };
        if instructions <= 0 {
            return Err(Error::NonPositiveCount {
                harness: harness.to_string(),
                count: instructions,
            });
        }
        let annotation_text = annotate::annotate(&self.valgrind, &region_profile)?;
        let annotation = annotated::parse(&annotation_text).map_err(|source| Error::Profile {
            path: region_profile.clone(),
            source,
        })?;
        if annotation.total_instructions != instructions {
            return Err(Error::AnnotationMismatch {
                harness: harness.to_string(),
                annotated: annotation.total_instructions,
                raw: instructions,
            });
        }

        // The versions the program was built with, and what it loads at run
        // time (the system's libssl).
        let Built {
            toolchain,
            mut libraries,
        } = self.built(binary)?;
        libraries.extend(last.report.runtime_libraries.clone());
        let fingerprint = Fingerprint::new(
            &self.valgrind,
            last.report.cpu_features.clone(),
            libraries,
            toolchain,
        );
        self.write_outputs(
            Outcome {
                harness,
                instructions: instructions as u64,
                bytes_per_run: last.report.bytes_per_run,
                operations_per_run: last.report.operations_per_run,
                fingerprint,
            },
            &annotation_text,
            &region_profile,
        )
    }

    /// Writes the annotated profile (with the runner's header), the raw
    /// region profile and the record of one measurement into this runner's
    /// output folder, and returns the record.
    fn write_outputs(
        &self,
        outcome: Outcome<'_>,
        annotation_text: &str,
        region_profile: &Path,
    ) -> Result<Measurement> {
        let harness = outcome.harness;
        let outputs = &self.outputs;
        let annotated_path = harness.file_in(outputs, ".annotated.txt");
        let profile_path = harness.file_in(outputs, ".cachegrind.out");
        let measurement = Measurement {
            schema: MEASUREMENT_SCHEMA,
            harness: harness.clone(),
            instructions: outcome.instructions,
            bytes_per_run: outcome.bytes_per_run,
            operations_per_run: outcome.operations_per_run,
            fingerprint: outcome.fingerprint,
            annotated: relative(&self.workspace, &annotated_path),
            profile: relative(&self.workspace, &profile_path),
        };

        let header = header(&measurement);
        atomic_file::write(
            &annotated_path,
            format!("{header}{annotation_text}").as_bytes(),
        )?;
        let profile_bytes = std::fs::read(region_profile)
            .map_err(|source| Error::io("read", region_profile, source))?;
        atomic_file::write(&profile_path, &profile_bytes)?;
        let mut record =
            serde_json::to_string_pretty(&measurement).map_err(|source| Error::Serialize {
                what: "measurement record",
                source,
            })?;
        record.push('\n');
        atomic_file::write(&Measurement::path_in(outputs, harness), record.as_bytes())?;
        Ok(measurement)
    }
}

/// What a measurement found, before it is written down.
struct Outcome<'a> {
    harness: &'a HarnessName,
    instructions: u64,
    bytes_per_run: Option<u64>,
    operations_per_run: u64,
    fingerprint: Fingerprint,
}

fn read_profile(path: &Path) -> Result<cachegrind_out::Profile> {
    cachegrind_out::read(path).map_err(|source| Error::Profile {
        path: path.to_path_buf(),
        source,
    })
}

fn instructions_of(path: &Path) -> Result<i64> {
    read_profile(path)?
        .instructions()
        .map_err(|source| Error::Profile {
            path: path.to_path_buf(),
            source,
        })
}

/// Both subtraction children must have seen the same CPU, or their
/// difference means nothing.
fn check_same_machine(
    harness: &HarnessName,
    before: &ChildOutcome,
    last: &ChildOutcome,
) -> Result<()> {
    if before.report.cpu_features != last.report.cpu_features {
        return Err(Error::CpuFeaturesDiffer {
            harness: harness.to_string(),
            before: before.report.cpu_features.clone(),
            after: last.report.cpu_features.clone(),
        });
    }
    Ok(())
}

fn relative(workspace: &Workspace, path: &Path) -> PathBuf {
    path.strip_prefix(workspace.root())
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The lines the runner puts above `cg_annotate`'s output: what was
/// measured and how, so the file explains itself.
fn header(measurement: &Measurement) -> String {
    let fingerprint = &measurement.fingerprint;
    let mut lines = vec![
        format!("harness {}", measurement.harness),
        format!(
            "region instructions {} (the third run of the path, after two warm-up runs)",
            crate::format::count(measurement.instructions)
        ),
        format!(
            "method {} (Valgrind {}); {}",
            fingerprint.method,
            fingerprint.valgrind,
            match fingerprint.method {
                Method::Markers => "Cachegrind counted only between start/stop requests",
                Method::Subtraction =>
                    "whole-process profile of 3 runs minus that of 2 runs (cg_diff)",
            }
        ),
        format!("{}; target {}", fingerprint.rustc, fingerprint.target),
        format!(
            "C compilers {}; linker {}",
            match &fingerprint.c_compilers {
                Some(compilers) if !compilers.is_empty() => compilers.join("; "),
                Some(_) => "none".to_owned(),
                None => "not recorded".to_owned(),
            },
            fingerprint.linker.as_deref().unwrap_or("not recorded")
        ),
    ];
    if let Some(per_byte) = measurement.instructions_per_byte() {
        lines.push(format!("instructions per byte {per_byte:.3}"));
    }
    if let Some(per_operation) = measurement.instructions_per_operation() {
        lines.push(format!(
            "instructions per operation {per_operation:.1} ({} operations per run)",
            measurement.operations_per_run
        ));
    }
    header_lines(&lines)
}

/// `lines` as the runner's header above a tool's text: each marked with
/// [`HEADER_PREFIX`], then a blank line ([`strip_header`] undoes it).
pub fn header_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(HEADER_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The `cg_annotate` text of an annotated file, without the runner's header.
pub fn strip_header(text: &str) -> &str {
    let mut rest = text;
    while let Some(line_end) = rest.find('\n') {
        let line = &rest[..line_end];
        if line.starts_with(HEADER_PREFIX) || (line.is_empty() && rest.len() != text.len()) {
            rest = &rest[line_end + 1..];
            if line.is_empty() {
                break;
            }
        } else {
            break;
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runner told to write elsewhere writes everything there, the record
    /// included, and nothing into the workspace's `perf_outputs/` (a diff
    /// must never write into the checkout of the commit it measures).
    #[test]
    fn another_output_folder_receives_the_record_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Workspace::new(dir.path().join("checkout"));
        let elsewhere = dir.path().join("diff/base");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        let runner = Runner {
            workspace: workspace.clone(),
            valgrind: crate::fixtures::valgrind("3.24.0"),
            timeout: Duration::from_secs(1),
            outputs: workspace.perf_outputs_dir(),
            builds: Arc::default(),
        }
        .with_output_dir(&elsewhere);
        let profile = dir.path().join("region.cachegrind.out");
        std::fs::write(&profile, "events: Ir\nsummary: 5\n").expect("write");
        let written = runner
            .write_outputs(
                Outcome {
                    harness: &HarnessName::new("a::b").expect("name"),
                    instructions: 5,
                    bytes_per_run: None,
                    operations_per_run: 1,
                    fingerprint: crate::fixtures::fingerprint("3.24.0"),
                },
                "annotated\n",
                &profile,
            )
            .expect("write outputs");
        let name = HarnessName::new("a::b").expect("name");
        let record = Measurement::read(&Measurement::path_in(&elsewhere, &name)).expect("record");
        assert_eq!(record, written);
        assert_eq!(record.profile, elsewhere.join("a.b.cachegrind.out"));
        assert!(elsewhere.join("a.b.annotated.txt").is_file());
        assert!(!workspace.perf_outputs_dir().exists());
    }

    #[test]
    fn header_round_trips() {
        let text = "regress: harness a::b\nregress: method markers\n\n----\nbody\n";
        assert_eq!(strip_header(text), "----\nbody\n");
        assert_eq!(strip_header("----\nbody\n"), "----\nbody\n");
        assert_eq!(strip_header("\n\nbody"), "\n\nbody");
    }

    #[test]
    fn header_gives_per_byte_and_per_operation_figures_where_they_apply() {
        let mut measurement = crate::fixtures::measurement("aws_lc_rs::a", 1_000, Some(64));
        measurement.operations_per_run = 4;
        let text = header(&measurement);
        assert!(
            text.contains("regress: instructions per byte 15.625\n"),
            "{text}"
        );
        assert!(
            text.contains("regress: instructions per operation 250.0 (4 operations per run)\n"),
            "{text}"
        );
        let single = header(&crate::fixtures::measurement("s2n_tls::b", 1_000, None));
        assert!(!single.contains("per operation"), "{single}");
        assert!(!single.contains("per byte"), "{single}");
    }
}
