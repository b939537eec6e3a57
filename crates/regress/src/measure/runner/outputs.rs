//! What a measurement writes into the runner's output folder: the
//! annotated profile, the raw region profile, the executed lines, the
//! flame graph and, last, the record.

use std::path::{Path, PathBuf};

use super::{Outcome, Runner};
use crate::atomic_file;
use crate::coverage::lines::Lines;
use crate::harness_name::HarnessName;
use crate::measure::flame;
use crate::measure::header::header;
use crate::measure::measurement::{Measurement, MEASUREMENT_SCHEMA};
use crate::measure::{MeasureError, Result};
use crate::workspace::Workspace;

impl Runner {
    /// Writes the folded call paths of a Callgrind measurement and its
    /// flame graph into this runner's output folder.
    pub(super) fn write_flame(
        &self,
        harness: &HarnessName,
        graph: &flame::CallGraph,
    ) -> Result<()> {
        let folded = flame::fold(graph, flame::Limits::default());
        let path = harness.file_in(&self.outputs, flame::FOLDED);
        atomic_file::write(&path, flame::to_text(&folded).as_bytes())?;
        flame::write_svg(&harness.file_in(&self.outputs, flame::PLAIN), || {
            flame::plain(&folded, &format!("{harness}: the counted run"))
        })
    }

    /// Writes the annotated profile (with the runner's header), the raw
    /// region profile, the lines it executed and the record of one
    /// measurement into this runner's output folder, and returns the
    /// record. The record is written last: a record means its files are
    /// there.
    pub(super) fn write_outputs(
        &self,
        outcome: Outcome<'_>,
        annotation_text: &str,
        region_profile: &Path,
        lines: &Lines,
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
            sides: outcome.sides,
            metrics: outcome.metrics,
            library_cpu: outcome.library_cpu,
            annotated: relative(&self.workspace, &annotated_path),
            profile: relative(&self.workspace, &profile_path),
        };

        let header = header(&measurement);
        atomic_file::write(
            &annotated_path,
            format!("{header}{annotation_text}").as_bytes(),
        )?;
        let profile_bytes = std::fs::read(region_profile)
            .map_err(|source| MeasureError::io("read", region_profile, source))?;
        atomic_file::write(&profile_path, &profile_bytes)?;
        self.line_data(|| {
            atomic_file::write(
                &Lines::path_in(outputs, harness),
                lines.to_json().as_bytes(),
            )
        })?;
        let mut record = serde_json::to_string_pretty(&measurement).map_err(|source| {
            MeasureError::Serialize {
                what: "measurement record",
                source,
            }
        })?;
        record.push('\n');
        atomic_file::write(&Measurement::path_in(outputs, harness), record.as_bytes())?;
        Ok(measurement)
    }
}

fn relative(workspace: &Workspace, path: &Path) -> PathBuf {
    path.strip_prefix(workspace.root())
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::measure::fork_server::ForkServers;
    use crate::measure::metrics::Metrics;
    use regress_profile::callgrind_out;

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
            hooks: Arc::default(),
            line_data_nanos: Arc::default(),
            fork_servers: ForkServers::from_env().expect("fork servers"),
        }
        .with_output_dir(&elsewhere);
        assert_eq!(runner.line_data_time(), Duration::ZERO);
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
                    sides: false,
                    metrics: Metrics::new(),
                    library_cpu: BTreeMap::new(),
                },
                "annotated\n",
                &profile,
                &Lines::from_costs(
                    &HarnessName::new("a::b").expect("name"),
                    &callgrind_out::Costs::from([(
                        ("/src/a.rs".to_owned(), "a::run".to_owned()),
                        BTreeMap::from([(7, 5)]),
                    )]),
                ),
            )
            .expect("write outputs");
        let name = HarnessName::new("a::b").expect("name");
        let record = Measurement::read(&Measurement::path_in(&elsewhere, &name)).expect("record");
        assert_eq!(record, written);
        assert_eq!(record.profile, elsewhere.join("a.b.cachegrind.out"));
        assert!(elsewhere.join("a.b.annotated.txt").is_file());
        let lines = Lines::read(&elsewhere.join("a.b.lines.json")).expect("lines");
        assert_eq!(lines.files["/src/a.rs"]["a::run"], [7]);
        assert!(!workspace.perf_outputs_dir().exists());
        // Writing the lines file counted as executed-lines work, in the
        // clone's figure as in the original's.
        assert!(runner.line_data_time() > Duration::ZERO);
        assert_eq!(runner.clone().line_data_time(), runner.line_data_time());
    }
}
