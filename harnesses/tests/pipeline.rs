//! End-to-end tests of the measurement pipeline with the real Valgrind.
//!
//! They re-execute this very test binary under Cachegrind for fixture
//! harnesses defined below, in a scratch copy of the workspace layout, so
//! they never touch the project's own `perf_outputs/` or `baselines/`.
//! Without Valgrind they are skipped with a visible reason, unless
//! `REGRESS_REQUIRE_VALGRIND=1` (CI sets it) makes that a failure.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

mod support;

use harnesses::calibration::{Spin, INSTRUCTIONS_PER_ITERATION};
use regress::harness_name::HarnessName;
use regress::workspace::Workspace;
use regress::{MeasureError, Runner};
use regress_measure::program::{self, Entry};
use regress_measure::region::running_on_valgrind;
use regress_measure::{Harness, HarnessError};

// Measured like the real program, so its fingerprint names the libraries too.
harnesses::embed_library_versions!();

/// The fixture harnesses this binary hosts as a measured program. Natively
/// they never run: `main` only serves them to the runner.
fn fixtures() -> Vec<Entry> {
    vec![
        Entry::new(
            "fixture::spin_1m",
            Spin {
                iterations: 1_000_000,
            },
        ),
        Entry::new(
            "fixture::spin_2m",
            Spin {
                iterations: 2_000_000,
            },
        ),
        Entry::new("fixture::panics", Panics),
        Entry::new("fixture::hangs", Hangs),
    ]
}

fn main() -> ExitCode {
    // Measured child first: the runner re-executes this binary.
    program::serve(&fixtures());
    let tests: [(&'static str, fn()); 7] = [
        (
            "forked_children_count_what_started_children_count",
            forked_children_count_what_started_children_count,
        ),
        (
            "calibration_counts_exactly_three_instructions_per_iteration",
            calibration_counts_exactly_three_instructions_per_iteration,
        ),
        (
            "a_harness_that_panics_under_valgrind_shows_its_stderr",
            a_harness_that_panics_under_valgrind_shows_its_stderr,
        ),
        (
            "a_harness_that_hangs_is_killed_after_the_timeout",
            a_harness_that_hangs_is_killed_after_the_timeout,
        ),
        (
            "a_name_the_program_does_not_host_is_reported_not_measured",
            a_name_the_program_does_not_host_is_reported_not_measured,
        ),
        (
            "an_unwritable_output_folder_is_a_clear_error",
            an_unwritable_output_folder_is_a_clear_error,
        ),
        (
            "two_measurements_at_once_leave_whole_files",
            two_measurements_at_once_leave_whole_files,
        ),
    ];
    support::run_tests(&tests)
}

/// A harness that panics when measured.
struct Panics;

impl Harness for Panics {
    type Setup = ();
    type Input = ();
    type Output = ();
    fn setup(&self) -> Result<(), HarnessError> {
        Ok(())
    }
    fn prepare(&self, _: &()) -> Result<(), HarnessError> {
        Ok(())
    }
    fn run(&self, _: &(), _: ()) -> Result<(), HarnessError> {
        if running_on_valgrind() {
            panic!("the fixture harness panicked on purpose");
        }
        Ok(())
    }
    fn check(&self, _: &(), _: &()) -> Result<(), HarnessError> {
        Ok(())
    }
}

/// A harness that never finishes when measured.
struct Hangs;

impl Harness for Hangs {
    type Setup = ();
    type Input = ();
    type Output = ();
    fn setup(&self) -> Result<(), HarnessError> {
        Ok(())
    }
    fn prepare(&self, _: &()) -> Result<(), HarnessError> {
        Ok(())
    }
    fn run(&self, _: &(), _: ()) -> Result<(), HarnessError> {
        while running_on_valgrind() {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
    fn check(&self, _: &(), _: &()) -> Result<(), HarnessError> {
        Ok(())
    }
}

/// The runner, or `None` (with a visible notice) when Valgrind is absent.
fn runner(workspace: Workspace, timeout: Duration) -> Option<Runner> {
    let valgrind = support::valgrind()?;
    Some(Runner::new(workspace, valgrind, timeout).expect("runner"))
}

/// A fixture's name, checked as the runner wants it.
fn name(text: &str) -> HarnessName {
    HarnessName::new(text).expect("a harness name")
}

fn this_binary() -> PathBuf {
    std::env::current_exe().expect("current exe")
}

fn calibration_counts_exactly_three_instructions_per_iteration() {
    let scratch = support::Scratch::new();
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(300)) else {
        return;
    };
    let one = runner
        .measure(&name("fixture::spin_1m"), &this_binary())
        .expect("measure 1M");
    let two = runner
        .measure(&name("fixture::spin_2m"), &this_binary())
        .expect("measure 2M");
    assert_eq!(
        two.instructions - one.instructions,
        1_000_000 * INSTRUCTIONS_PER_ITERATION,
        "2N and N iterations must differ by exactly N x 3 instructions \
         (1M: {}, 2M: {})",
        one.instructions,
        two.instructions
    );
    // The loop is nearly all of the region: call overhead is a few dozen
    // instructions, never thousands.
    let loop_cost = 1_000_000 * INSTRUCTIONS_PER_ITERATION;
    assert!(
        one.instructions >= loop_cost && one.instructions < loop_cost + 1_000,
        "region of 1M iterations: {}",
        one.instructions
    );
    let again = runner
        .measure(&name("fixture::spin_1m"), &this_binary())
        .expect("measure again");
    assert_eq!(
        again.instructions, one.instructions,
        "counts must repeat exactly"
    );

    // The outputs explain themselves.
    let workspace = scratch.workspace();
    let annotated =
        std::fs::read_to_string(workspace.root().join(&one.annotated)).expect("annotated");
    assert!(
        annotated.contains("regress: harness fixture::spin_1m"),
        "{annotated}"
    );
    assert!(
        annotated.contains(&format!("method {}", runner.valgrind.method)),
        "{annotated}"
    );
    let text = regress::measure::runner::strip_header(&annotated);
    let parsed = regress_profile::annotated::parse(text).expect("parse annotated");
    assert_eq!(parsed.total_instructions as u64, one.instructions);
    assert!(
        parsed.functions.iter().any(|f| f.function.contains("spin")),
        "the loop function is named in the profile: {:?}",
        parsed.functions
    );
    let record = regress::Measurement::read(&regress::Measurement::path(&workspace, &one.harness))
        .expect("record");
    assert_eq!(record.fingerprint.method, runner.valgrind.method);
    assert!(record.fingerprint.libraries.contains_key("s2n-tls"));
}

/// A child forked from a fork server counts exactly what a child under a
/// Valgrind of its own counts, whichever children the server forked before
/// it, under Callgrind's method and this Valgrind's Cachegrind method
/// (subtraction before 3.22, whose two children are forked at the same
/// position of two servers, even after a child that failed put one server
/// ahead), and the servers end with their folders.
fn forked_children_count_what_started_children_count() {
    use regress::measure::fork_server;
    use regress::measure::valgrind::Method;
    let scratch = support::Scratch::new();
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(300)) else {
        return;
    };
    let binary = this_binary();
    let cachegrind = Method::for_version(runner.valgrind.version);
    for method in [Method::Callgrind, cachegrind] {
        let mut runner = runner.clone();
        runner.valgrind.method = method;
        let forked_before = fork_server::forked_children();
        let first = runner
            .measure(&name("fixture::spin_1m"), &binary)
            .expect("forked");
        runner
            .measure(&name("fixture::spin_2m"), &binary)
            .expect("another harness, forked from the same server");
        // Fails in its first child: under subtraction, that lane's server
        // is one child ahead of the other's from here on.
        runner
            .measure(&name("fixture::panics"), &binary)
            .expect_err("the fixture panics");
        let again = runner
            .measure(&name("fixture::spin_1m"), &binary)
            .expect("forked after other harnesses");
        assert!(
            fork_server::forked_children() >= forked_before + 4,
            "{method}: the children were not forked from a server"
        );
        let alone = runner
            .clone()
            .with_fork_servers(false)
            .measure(&name("fixture::spin_1m"), &binary)
            .expect("started on its own");
        assert_eq!(
            again, first,
            "{method}: a forked child depends on the ones before it"
        );
        assert_eq!(
            alone, first,
            "{method}: forked and started children disagree"
        );
    }

    let servers = || -> Vec<String> {
        let folder = scratch.workspace().perf_outputs_dir().join(".scratch");
        std::fs::read_dir(&folder)
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok())
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.starts_with("fork-server."))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(!servers().is_empty(), "no fork server folder while it runs");
    fork_server::shut_down();
    assert_eq!(
        servers(),
        Vec::<String>::new(),
        "a server outlived shut_down"
    );
}

fn a_harness_that_panics_under_valgrind_shows_its_stderr() {
    let scratch = support::Scratch::new();
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(300)) else {
        return;
    };
    let error = runner
        .measure(&name("fixture::panics"), &this_binary())
        .unwrap_err();
    assert!(matches!(error, MeasureError::ChildFailed { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("fixture::panics failed under Valgrind"),
        "{message}"
    );
    assert!(
        message.contains("the fixture harness panicked on purpose"),
        "{message}"
    );
}

fn a_harness_that_hangs_is_killed_after_the_timeout() {
    let scratch = support::Scratch::new();
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(15)) else {
        return;
    };
    let error = runner
        .measure(&name("fixture::hangs"), &this_binary())
        .unwrap_err();
    assert!(
        matches!(error, MeasureError::Timeout { seconds: 15, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("REGRESS_TIMEOUT_SECS"),
        "{error}"
    );
}

fn a_name_the_program_does_not_host_is_reported_not_measured() {
    let scratch = support::Scratch::new();
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(300)) else {
        return;
    };
    let error = runner
        .measure(&name("fixture::no_such_harness"), &this_binary())
        .unwrap_err();
    assert!(matches!(error, MeasureError::ChildFailed { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("has no harness named \"fixture::no_such_harness\""),
        "{error}"
    );
}

fn an_unwritable_output_folder_is_a_clear_error() {
    let scratch = support::Scratch::new();
    // A file where the output folder should be.
    std::fs::write(scratch.dir.path().join("perf_outputs"), "not a folder").expect("write");
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(300)) else {
        return;
    };
    let error = runner
        .measure(&name("fixture::spin_1m"), &this_binary())
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("perf_outputs"), "{message}");
    assert_eq!(
        std::fs::read_to_string(scratch.dir.path().join("perf_outputs")).expect("read"),
        "not a folder",
        "the user's file is untouched"
    );
}

fn two_measurements_at_once_leave_whole_files() {
    let scratch = support::Scratch::new();
    let Some(runner) = runner(scratch.workspace(), Duration::from_secs(300)) else {
        return;
    };
    let binary = this_binary();
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| runner.measure(&name("fixture::spin_1m"), &binary)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let counts: Vec<u64> = results
        .into_iter()
        .map(|r| r.expect("measure").instructions)
        .collect();
    assert_eq!(counts[0], counts[1]);
    let outputs = scratch.workspace().perf_outputs_dir();
    let record =
        regress::Measurement::read(&outputs.join("fixture.spin_1m.json")).expect("whole record");
    assert_eq!(record.instructions, counts[0]);
    let leftovers: Vec<_> = std::fs::read_dir(&outputs)
        .expect("list")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
