//! What a measured child process does.
//!
//! The runner re-executes a harness's own test binary under Valgrind for that
//! one test, with the variables below set. The test sees them, calls
//! [`ChildRequest::from_env`], and hands over to [`run`] instead of running
//! natively.
//!
//! # Which run is counted
//!
//! The process always prepares [`PREPARED_INPUTS`] inputs, whatever it is
//! asked to run, so preparation costs the same in every child. It then runs
//! the path `runs` times. Two methods count the last of those runs:
//!
//! - **Markers** (Valgrind 3.22+): `runs = 3`, and Cachegrind counts only
//!   between the start/stop requests around the last run.
//! - **Subtraction** (Valgrind < 3.22, whose Cachegrind always counts the
//!   whole process): one child with `runs = 3`, one with `runs = 2`; the
//!   difference of the two whole-process counts is the third run.
//!
//! Both count the *same* run, the third, after two warm-up runs. That matters:
//! with the deterministic RNG of a measurement build, every run draws
//! different random numbers (RSA blinding, say), so run 2 and run 3 may differ
//! slightly; measuring the same one keeps the two methods in agreement.
//!
//! The child does not `check` outputs: the test has already checked the
//! path natively, and a check's own cost can differ between children.
//!
//! Nothing happens after the counted run: the child's report is written
//! before setup, and outputs, inputs and setup are leaked on purpose, so that
//! neither teardown nor heap-state-dependent allocation costs land in the
//! region or differ between the two subtraction children.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::harness::{Harness, HarnessError};
use crate::{cpu, region};

/// Names the harness the child must measure. Set by the runner.
pub const ENV_HARNESS: &str = "REGRESS_CHILD_HARNESS";
/// How many times to run the path (1..=[`PREPARED_INPUTS`]).
pub const ENV_RUNS: &str = "REGRESS_CHILD_RUNS";
/// `1` to bracket the last run with Cachegrind start/stop requests.
pub const ENV_MARKERS: &str = "REGRESS_CHILD_MARKERS";
/// Where the child writes its [`ChildReport`].
pub const ENV_REPORT: &str = "REGRESS_CHILD_REPORT";

/// Inputs every child prepares, so that preparation is identical across
/// children that run the path a different number of times.
pub const PREPARED_INPUTS: usize = 3;

/// What the runner asked this child process to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildRequest {
    pub harness: String,
    pub runs: usize,
    pub markers: bool,
    pub report: PathBuf,
}

/// A malformed child request: the runner and the child disagree.
#[derive(Debug)]
pub struct ChildRequestError(String);

impl fmt::Display for ChildRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ChildRequestError {}

impl ChildRequest {
    /// Reads the request from the environment; `Ok(None)` in a process the
    /// runner did not start (a plain `cargo test`).
    pub fn from_env() -> Result<Option<ChildRequest>, ChildRequestError> {
        let Some(harness) = std::env::var_os(ENV_HARNESS) else {
            return Ok(None);
        };
        let harness = harness
            .into_string()
            .map_err(|_| ChildRequestError(format!("{ENV_HARNESS} is not UTF-8")))?;
        let runs = std::env::var(ENV_RUNS)
            .map_err(|_| ChildRequestError(format!("{ENV_RUNS} is not set")))?;
        let runs: usize = runs
            .parse()
            .ok()
            .filter(|n| (1..=PREPARED_INPUTS).contains(n))
            .ok_or_else(|| {
                ChildRequestError(format!(
                    "{ENV_RUNS}={runs:?} is not a whole number from 1 to {PREPARED_INPUTS}"
                ))
            })?;
        let markers = match std::env::var(ENV_MARKERS).as_deref() {
            Ok("1") => true,
            Ok("0") | Err(_) => false,
            Ok(other) => {
                return Err(ChildRequestError(format!(
                    "{ENV_MARKERS}={other:?} must be 0 or 1"
                )))
            }
        };
        let report = std::env::var_os(ENV_REPORT)
            .map(PathBuf::from)
            .ok_or_else(|| ChildRequestError(format!("{ENV_REPORT} is not set")))?;
        Ok(Some(ChildRequest {
            harness,
            runs,
            markers,
            report,
        }))
    }

    /// The variables that make a child of this request.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        vec![
            (ENV_HARNESS, self.harness.clone()),
            (ENV_RUNS, self.runs.to_string()),
            (ENV_MARKERS, if self.markers { "1" } else { "0" }.to_owned()),
            (ENV_REPORT, self.report.display().to_string()),
        ]
    }
}

/// What a child tells the runner about itself, from inside the measured
/// process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildReport {
    /// The harness that ran: lets the runner catch a test filter that
    /// matched nothing or the wrong test.
    pub harness: String,
    /// CPU features the process saw (under Valgrind: Valgrind's CPU).
    pub cpu_features: Vec<String>,
    /// Application bytes one run moves, for throughput paths.
    pub bytes_per_run: Option<u64>,
    /// Calls of the measured API one run makes ([`Harness::operations_per_run`]).
    #[serde(default = "one")]
    pub operations_per_run: u64,
    /// Run-time library versions ([`Harness::runtime_libraries`]).
    #[serde(default)]
    pub runtime_libraries: std::collections::BTreeMap<String, String>,
}

/// Runs `harness` as the child `request` describes and writes its report.
///
/// `name` is the harness's name as the test knows it; a mismatch with the
/// request is an error, not a silent measurement of the wrong thing.
pub fn run<H: Harness>(
    name: &str,
    harness: &H,
    request: &ChildRequest,
) -> Result<(), HarnessError> {
    if request.harness != name {
        return Err(format!(
            "asked to measure {:?} but this test is {name:?}",
            request.harness
        )
        .into());
    }
    // The report goes first. Writing it allocates, and what an allocation
    // costs depends on the heap's state: written after the runs, it cost a
    // few hundred instructions more in a child that ran the path 3 times
    // than in one that ran it twice (measured: 274 in `_int_malloc` on
    // rustls's session_resumption), and the subtraction method counted them
    // as part of the path. Nothing the report says depends on the runs.
    let report = ChildReport {
        harness: name.to_owned(),
        cpu_features: cpu::features(),
        bytes_per_run: harness.bytes_per_run(),
        operations_per_run: harness.operations_per_run(),
        runtime_libraries: harness.runtime_libraries().into_iter().collect(),
    };
    write_report(&request.report, &report)?;

    let setup = harness.setup()?;
    let mut inputs = Vec::with_capacity(PREPARED_INPUTS);
    for _ in 0..PREPARED_INPUTS {
        inputs.push(Some(harness.prepare(&setup)?));
    }
    if request.runs > inputs.len() {
        return Err("fewer inputs than runs".into());
    }
    for (index, slot) in inputs.iter_mut().take(request.runs).enumerate() {
        let input = slot.take().ok_or("an input was used twice")?;
        let last = index + 1 == request.runs;
        if last && request.markers {
            region::start_instrumentation();
        }
        let output = harness.run(&setup, input);
        if last && request.markers {
            region::stop_instrumentation();
        }
        // No `check` here: the test checked the path natively before
        // measuring it, and a check draws random numbers (a handshake's
        // blinding, say) whose cost would differ between the two children
        // of a subtraction (measured: 261 K instructions on OpenSSL's
        // config_build, whose check handshakes with the built contexts).
        std::mem::forget(output?);
    }
    // Leaked whole, in one step whose cost does not depend on how many
    // inputs are left unused (iterating over the leftovers would).
    std::mem::forget(inputs);
    std::mem::forget(setup);
    Ok(())
}

fn one() -> u64 {
    1
}

/// Writes the report next to its final name, then renames it into place, so
/// the runner never reads a half-written report.
fn write_report(path: &Path, report: &ChildReport) -> Result<(), HarnessError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let mut file = std::fs::File::create(&partial)
        .map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
    serde_json::to_writer(&mut file, report)?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
        .map_err(|e| format!("cannot rename {} into place: {e}", partial.display()))?;
    Ok(())
}
