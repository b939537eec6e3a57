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

use crate::judge::baseline::BaselineFile;
use crate::judge::gate::{self, UnmatchedPolicy, VerdictMessage};
use crate::measure::runner::Runner;

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

/// The body of a harness's test: `Err` with a message that says what to do
/// when the path is broken, the measurement failed, or the count regressed.
/// `program` is the measured program that hosts the same harness.
pub fn run(entry: &Entry, program: &Path) -> Result<(), String> {
    let name = entry.name.as_str();
    entry
        .harness
        .run_natively()
        .map_err(|error| format!("{name} does not work natively: {error}"))?;
    if !valgrind_enabled() {
        return Ok(());
    }

    let runner = Runner::from_env().map_err(|error| {
        format!(
            "{}=true, but the runner cannot start: {error}",
            crate::env::ENABLE_VALGRIND
        )
    })?;
    let policy = UnmatchedPolicy::from_env().map_err(|error| error.to_string())?;
    let measurement = runner
        .measure(name, program)
        .map_err(|error| error.to_string())?;
    let baseline = BaselineFile::load(&runner.workspace.baselines_dir(), &measurement.harness);
    let assessment = gate::evaluate(&measurement, baseline).map_err(|error| error.to_string())?;
    let message = VerdictMessage {
        harness: name,
        verdict: &assessment.verdict,
        annotated: &measurement.annotated.display().to_string(),
        figures: Some(&assessment.figures),
    }
    .to_string();
    if assessment.fails(policy) {
        return Err(message);
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
