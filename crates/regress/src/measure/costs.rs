//! The per-function, per-line cost of one counted run: what the
//! constant-flow check compares between variants of an operation.
//!
//! One Callgrind child of the usual protocol (the same [`ChildSpec`] as a
//! measurement: scratch folder, pinned environment, supervised process,
//! time limit), whose dumps are kept by part. Nothing is written to
//! `perf_outputs/` and no record is made: a constant-flow operation has no
//! baseline.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use regress_measure::child::PREPARED_INPUTS;
use regress_measure::parts::Plan;

use super::Result;
use crate::harness_name::HarnessName;
use crate::measure::cachegrind::{ChildSpec, Tool};
use crate::measure::runner::Runner;
use crate::measure::scratch::ScratchDir;
use crate::measure::split::{self, Dumps};

static NEXT_SCRATCH: AtomicU64 = AtomicU64::new(0);

/// The counted run of one harness, function by function.
#[derive(Debug, Clone)]
pub struct RunCosts {
    /// The run's dumps: its count by part, its self costs in all and by
    /// part.
    pub dumps: Dumps,
    /// Whether the harness marks its client's and server's calls.
    pub sides: bool,
    /// Calls of the measured API one run makes.
    pub operations_per_run: u64,
}

impl Runner {
    /// The self cost of every function and line `harness` (an entry of the
    /// measured program `binary`) executes in its counted run, measured by
    /// one Callgrind child whatever this runner's method (Callgrind counts
    /// the run on every Valgrind version). The scratch folder is removed
    /// afterwards, or kept as evidence when the child failed.
    pub fn function_costs(&self, harness: &HarnessName, binary: &Path) -> Result<RunCosts> {
        crate::process::check()?;
        let mut scratch = ScratchDir::create(
            &self.output_dir().join(".scratch"),
            &format!(
                "{}.costs.{}",
                harness.file_stem(),
                NEXT_SCRATCH.fetch_add(1, Ordering::Relaxed)
            ),
        )?;
        let result = ChildSpec {
            valgrind: &self.valgrind,
            binary,
            harness,
            runs: PREPARED_INPUTS,
            plan: Plan::Callgrind,
            tool: Tool::Callgrind,
            cpu: self.workspace.cpu(),
            scratch: scratch.path(),
            timeout: self.timeout,
            fork_servers: Some(self.fork_servers()),
            fork_position: None,
        }
        .run()
        .and_then(|child| {
            Ok(RunCosts {
                dumps: split::read_dumps(&child.profile, Some(&child.program))?,
                sides: child.report.sides,
                operations_per_run: child.report.operations_per_run,
            })
        });
        if let Err(error) = &result {
            if !error.is_interrupted() {
                scratch.keep();
            }
        }
        result
    }
}
