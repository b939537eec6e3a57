//! What each harness's test does (`harnesses/tests/perf.rs`).
//!
//! 1. **Native** (`cargo test`): run the path for real and check it works.
//!    Needs no Valgrind.
//! 2. **Gate** (`ENABLE_VALGRIND=true cargo test`): after the native check,
//!    measure the harness under Valgrind and compare with its baseline.
//!
//! The measured process is the harnesses' own program, which cargo builds
//! beside the test and hands to it (`CARGO_BIN_EXE_harnesses`); the test
//! binary links this runner, the measured program does not.

use std::io::Write;
use std::path::Path;

use regress_measure::program::Entry;
use regress_measure::HarnessError;

use crate::harness_name::HarnessName;
use crate::judge::baseline::{BaselineError, BaselineFile};
use crate::judge::gate::{self, UnmatchedPolicy, VerdictMessage};
use crate::measure::runner::Runner;
use crate::measure::MeasureError;

/// True when the user asked for Valgrind measurements.
pub fn valgrind_enabled() -> bool {
    matches!(
        std::env::var(crate::env::ENABLE_VALGRIND)
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Ok("true" | "1" | "yes")
    )
}

/// Writes a line to the real stderr. The test harness captures `eprintln!`,
/// but a skipped gate or an improvement must be seen even in passing tests.
pub fn notice(message: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{message}");
}

/// Why a harness's test fails; each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum HarnessTestError {
    #[error("{name} does not work natively: {source}")]
    Native { name: String, source: HarnessError },
    #[error(
        "{}=true, but the runner cannot start: {source}",
        crate::env::ENABLE_VALGRIND
    )]
    RunnerCannotStart { source: MeasureError },
    /// The gate's setting, or the measurement.
    #[error(transparent)]
    Measure(#[from] MeasureError),
    /// The harness's baseline file cannot be read.
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    /// The gate fails the count: its verdict, as the test prints it.
    #[error("{0}")]
    Gate(String),
}

/// The body of a harness's test: `Err` with a message that says what to do
/// when the path is broken, the measurement failed, or the count regressed.
/// `program` is the measured program that hosts the same harness.
pub fn run(entry: &Entry, program: &Path) -> Result<(), HarnessTestError> {
    let name = entry.name.as_str();
    entry
        .harness
        .run_natively()
        .map_err(|source| HarnessTestError::Native {
            name: name.to_owned(),
            source,
        })?;
    if !valgrind_enabled() {
        return Ok(());
    }

    let runner =
        Runner::from_env().map_err(|source| HarnessTestError::RunnerCannotStart { source })?;
    let policy = UnmatchedPolicy::from_env()?;
    let harness = HarnessName::new(name).map_err(MeasureError::from)?;
    let measurement = runner.measure(&harness, program)?;
    let baseline = BaselineFile::load(&runner.workspace.baselines_dir(), &measurement.harness);
    let assessment = gate::evaluate(&measurement, baseline)?;
    let message = VerdictMessage {
        harness: &harness,
        verdict: &assessment.verdict,
        annotated: &measurement.annotated.display().to_string(),
        figures: Some(&assessment.figures),
    }
    .to_string();
    if assessment.fails(policy) {
        return Err(HarnessTestError::Gate(message));
    }
    let per_byte = measurement
        .instructions_per_byte()
        .map(|per_byte| format!(" ({per_byte:.3} instructions per byte)"))
        .unwrap_or_default();
    let per_operation = measurement
        .instructions_per_operation()
        .map(|per_operation| {
            format!(
                " ({per_operation:.1} per operation, {} operations per run)",
                measurement.operations_per_run
            )
        })
        .unwrap_or_default();
    notice(&format!("{message}{per_byte}{per_operation}"));
    Ok(())
}
