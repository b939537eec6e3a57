//! What a harness's `#[test]` does.
//!
//! One test function per harness serves three purposes, depending on how the
//! test binary was started:
//!
//! 1. **Child**: the runner re-executed this binary under Valgrind for this
//!    one test (`REGRESS_CHILD_*` set). Run the measurement protocol and exit.
//! 2. **Native** (`cargo test`): run the path for real and check it works.
//!    Needs no Valgrind.
//! 3. **Gate** (`ENABLE_VALGRIND=true cargo test`): after the native check,
//!    measure the harness under Valgrind and compare with its baseline.
//! 4. **Scale**: the runner re-executed this binary natively to time the path
//!    on several threads (`REGRESS_SCALE_*` set; see `regress scale`).

use std::io::Write;

use regress_measure::child::{self, ChildRequest};
use regress_measure::harness::{run_natively, Harness};
use regress_measure::scale::{self, ScaleRequest};

use crate::baseline::BaselineFile;
use crate::gate::{self, UnmatchedPolicy, VerdictMessage};
use crate::runner::Runner;

/// Set to `true` to measure and gate under Valgrind.
pub const ENV_ENABLE: &str = "ENABLE_VALGRIND";

/// True when the user asked for Valgrind measurements.
pub fn valgrind_enabled() -> bool {
    matches!(
        std::env::var(ENV_ENABLE)
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

/// The body of a harness's test. Panics (fails the test) with a message that
/// says what to do when the path is broken, the measurement failed, or the
/// count regressed.
pub fn run<H: Harness + Sync>(name: &str, harness: &H) {
    match ScaleRequest::from_env() {
        Err(error) => panic!("{name}: bad scaling request from the runner: {error}"),
        Ok(Some(request)) => {
            if let Err(error) = scale::run(name, harness, &request) {
                panic!("{name} failed while being scaled: {error}");
            }
            return;
        }
        Ok(None) => {}
    }
    match ChildRequest::from_env() {
        Err(error) => panic!("{name}: bad measurement request from the runner: {error}"),
        Ok(Some(request)) => {
            if let Err(error) = child::run(name, harness, &request) {
                panic!("{name} failed while being measured: {error}");
            }
            // Leave now, from the test's own thread, without running exit
            // handlers. Letting libtest finish would wake its main thread (a
            // futex wait whose length depends on thread scheduling) and print
            // an elapsed time; C exit handlers (OpenSSL's cleanup) free
            // caches whose size depends on how many runs there were. All of
            // it would land in the difference the subtraction method counts.
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            exit_immediately();
        }
        Ok(None) => {}
    }

    if let Err(error) = run_natively(harness) {
        panic!("{name} does not work natively: {error}");
    }
    if !valgrind_enabled() {
        return;
    }

    let runner = Runner::from_env()
        .unwrap_or_else(|error| panic!("{ENV_ENABLE}=true, but the runner cannot start: {error}"));
    let policy = UnmatchedPolicy::from_env().unwrap_or_else(|error| panic!("{error}"));
    let binary = std::env::current_exe()
        .unwrap_or_else(|error| panic!("cannot find this test binary to re-execute: {error}"));
    let measurement = runner
        .measure(name, &binary)
        .unwrap_or_else(|error| panic!("{error}"));
    let baseline = BaselineFile::load(&runner.workspace.baselines_dir(), name);
    let verdict = gate::evaluate(&measurement, baseline).unwrap_or_else(|error| panic!("{error}"));
    let message = VerdictMessage {
        harness: name,
        verdict: &verdict,
        annotated: &measurement.annotated.display().to_string(),
    }
    .to_string();
    if verdict.fails(policy) {
        panic!("{message}");
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
}

/// Declares one `#[test]` per harness, named `<library>::<path>` after the
/// module and function it generates. That test path is the harness's name
/// everywhere: in baselines, outputs and the runner's re-execution filter.
///
/// ```ignore
/// regress::harness_tests! {
///     calibration {
///         spin_1m => harnesses::calibration::Spin { iterations: 1_000_000 },
///     }
/// }
/// ```
#[macro_export]
macro_rules! harness_tests {
    ($($library:ident { $($path:ident => $harness:expr),* $(,)? })*) => {
        $(
            mod $library {
                $(
                    #[test]
                    fn $path() {
                        $crate::harness_test::run(
                            concat!(stringify!($library), "::", stringify!($path)),
                            &$harness,
                        );
                    }
                )*
            }
        )*
    };
}

/// Ends the process at once: `_exit(2)`, no `atexit` handlers, no
/// destructors.
pub fn exit_immediately() -> ! {
    #[cfg(unix)]
    // SAFETY: _exit never returns and touches no Rust state.
    unsafe {
        libc::_exit(0)
    }
    #[cfg(not(unix))]
    std::process::exit(0)
}
