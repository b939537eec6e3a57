//! End-to-end tests of the split by side and stage and of the heap figures,
//! with the real Valgrind, on fixture harnesses whose every figure is known
//! in advance.
//!
//! Like `tests/pipeline.rs`, this binary is its own measured program: the
//! runner re-executes it under Callgrind, Cachegrind and (with the heap
//! hooks) natively. Both methods are tested: Callgrind's (one child gives
//! the count and its parts) and Cachegrind's (markers or subtraction, by
//! version, with a Callgrind child for the parts, which must add up to
//! Cachegrind's count). Without Valgrind the tests are skipped with a
//! visible reason, unless `REGRESS_REQUIRE_VALGRIND=1`.

mod support;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use harnesses::calibration::{spin, INSTRUCTIONS_PER_ITERATION};
use regress::measure::metrics::Metric;
use regress::measure::valgrind::Method;
use regress::workspace::Workspace;
use regress::{MeasureError, Runner};
use regress_measure::parts::{self, Part};
use regress_measure::program::{self, Entry};
use regress_measure::{Harness, HarnessError};

/// Iterations of the spin loop each part runs in [`Sided`].
const CLIENT_HELLO: u64 = 10_000;
const SERVER_FLIGHT: u64 = 40_000;
const CLIENT_FINISH: u64 = 20_000;
const SERVER_FINISH: u64 = 5_000;

/// A "handshake" whose parts run known loops and make known allocations:
/// the client allocates 1,000 bytes and keeps them, the server 3 x 64 and
/// frees one, the glue 10 bytes it frees; creating the client (in
/// `prepare`) allocates 500 bytes it keeps; the first record makes the
/// client keep 7 bytes more.
struct Sided;

/// What a run of [`Sided`] keeps: the connection's blocks.
struct Kept(Vec<Vec<u8>>);

fn allocate(bytes: usize) -> Vec<u8> {
    std::hint::black_box(vec![1u8; bytes])
}

impl Harness for Sided {
    type Setup = ();
    type Input = Kept;
    type Output = Kept;

    fn sides(&self) -> bool {
        true
    }

    fn setup(&self) -> Result<(), HarnessError> {
        Ok(())
    }

    fn prepare(&self, _: &()) -> Result<Kept, HarnessError> {
        // Room for every block, allocated outside any part: nobody's.
        let mut kept = Vec::with_capacity(8);
        kept.push(parts::within(Part::ClientNew, || allocate(500)));
        Ok(Kept(kept))
    }

    fn run(&self, _: &(), mut kept: Kept) -> Result<Kept, HarnessError> {
        let client = parts::within(Part::ClientHello, || {
            spin(CLIENT_HELLO);
            allocate(1_000)
        });
        kept.0.push(client);
        let server = parts::within(Part::ServerFlight, || {
            spin(SERVER_FLIGHT);
            let blocks = [allocate(64), allocate(64), allocate(64)];
            let [a, b, c] = blocks;
            drop(c);
            (a, b)
        });
        kept.0.push(server.0);
        kept.0.push(server.1);
        parts::within(Part::ClientFinish, || spin(CLIENT_FINISH));
        parts::within(Part::ServerFinish, || spin(SERVER_FINISH));
        drop(allocate(10));
        Ok(kept)
    }

    fn first_record(&self, _: &(), kept: &mut Kept) -> Result<bool, HarnessError> {
        kept.0
            .push(parts::within(Part::ClientFinish, || allocate(7)));
        Ok(true)
    }

    fn check(&self, _: &(), _: &Kept) -> Result<(), HarnessError> {
        Ok(())
    }
}

/// A harness whose glue depends on which child runs it (the length of its
/// report's file name, which differs between the Cachegrind and the
/// Callgrind child): its parts cannot add up to the Cachegrind count, and
/// the runner must say so.
struct Uneven;

impl Harness for Uneven {
    type Setup = u64;
    type Input = ();
    type Output = u64;

    fn sides(&self) -> bool {
        true
    }

    fn setup(&self) -> Result<u64, HarnessError> {
        let name = std::env::var("REGRESS_CHILD_REPORT").unwrap_or_default();
        Ok(name.len() as u64 * 100)
    }

    fn prepare(&self, _: &u64) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, iterations: &u64, _: ()) -> Result<u64, HarnessError> {
        let server = parts::within(Part::ServerFlight, || spin(1_000));
        Ok(server + spin(*iterations))
    }

    fn check(&self, _: &u64, _: &u64) -> Result<(), HarnessError> {
        Ok(())
    }
}

fn fixtures() -> Vec<Entry> {
    vec![
        Entry::new("fixture::sided", Sided),
        Entry::new("fixture::uneven", Uneven),
    ]
}

fn main() -> ExitCode {
    program::serve(&fixtures());
    let tests: [(&'static str, fn()); 2] = [
        (
            "parts_add_up_to_the_count_and_each_is_its_own_loop",
            parts_add_up_to_the_count_and_each_is_its_own_loop,
        ),
        (
            "parts_that_do_not_add_up_are_an_error",
            parts_that_do_not_add_up_are_an_error,
        ),
    ];
    support::run_tests(&tests)
}

/// A workspace of its own, with the real Cargo.lock.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = Workspace::find_from(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("workspace");
    std::fs::copy(real.cargo_lock(), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    dir
}

/// A runner of `method`: Callgrind's, or the Cachegrind method of the
/// Valgrind version.
fn runner_of(dir: &Path, callgrind: bool) -> Option<Runner> {
    let mut valgrind = support::valgrind()?;
    valgrind.method = if callgrind {
        Method::Callgrind
    } else {
        Method::for_version(valgrind.version)
    };
    Some(Runner::new(Workspace::new(dir), valgrind, Duration::from_secs(300)).expect("runner"))
}

/// A fixture's name, checked as the runner wants it.
fn name(text: &str) -> regress::HarnessName {
    regress::HarnessName::new(text).expect("a harness name")
}

fn this_binary() -> PathBuf {
    std::env::current_exe().expect("current exe")
}

fn parts_add_up_to_the_count_and_each_is_its_own_loop() {
    #[allow(deprecated)]
    let dir = scratch().into_path();
    struct D(std::path::PathBuf);
    impl D {
        fn path(&self) -> &Path {
            &self.0
        }
    }
    let dir = D(dir);
    let Some(runner) = runner_of(dir.path(), true) else {
        return;
    };
    let measurement = runner
        .measure(&name("fixture::sided"), &this_binary())
        .expect("measure");
    let get = |metric: Metric| measurement.metrics[&metric];
    // The runner checked the sum; the record says it again.
    assert_eq!(
        get(Metric::Client) + get(Metric::Server) + get(Metric::Glue),
        measurement.instructions
    );
    // Each stage is its loop plus the few instructions of a call and an
    // allocation (or none), never another stage's.
    for (metric, iterations) in [
        (Metric::ClientHello, CLIENT_HELLO),
        (Metric::ServerFlight, SERVER_FLIGHT),
        (Metric::ClientFinish, CLIENT_FINISH),
        (Metric::ServerFinish, SERVER_FINISH),
    ] {
        let loop_cost = iterations * INSTRUCTIONS_PER_ITERATION;
        let count = get(metric);
        assert!(
            count >= loop_cost && count < loop_cost + 2_000,
            "{}: {count} for a loop of {loop_cost}",
            metric.key()
        );
    }
    assert!(get(Metric::Glue) < 2_000, "glue {}", get(Metric::Glue));
    // The heap: 1 + 3 + 1 allocations in the run, 1,202 bytes; at most
    // 1,000 + 192 + 10 at once (the glue's block comes after one server
    // block was freed: 1,000 + 192 is the peak); the client holds its
    // creation's 500 and its 1,000, the server its two kept blocks.
    assert_eq!(get(Metric::Allocations), 5);
    assert_eq!(get(Metric::BytesAllocated), 1_202);
    assert_eq!(get(Metric::PeakLiveBytes), 1_192);
    assert_eq!(get(Metric::ClientHeld), 1_500);
    assert_eq!(get(Metric::ServerHeld), 128);
    assert_eq!(get(Metric::ClientHeldAfterRecord), 1_507);
    assert_eq!(get(Metric::ServerHeldAfterRecord), 128);
    let annotated =
        std::fs::read_to_string(dir.path().join(&measurement.annotated)).expect("annotated output");
    assert!(
        annotated.contains("regress: client instructions"),
        "{annotated}"
    );
    // Measured again: every figure repeats exactly.
    let again = runner
        .measure(&name("fixture::sided"), &this_binary())
        .expect("again");
    assert_eq!(again.metrics, measurement.metrics);
    assert_eq!(again.instructions, measurement.instructions);
    // Cachegrind's method (with a Callgrind child for the parts) counts
    // the same run: the same count and figures, to the instruction.
    let Some(cachegrind) = runner_of(dir.path(), false) else {
        return;
    };
    let other = cachegrind
        .measure(&name("fixture::sided"), &this_binary())
        .expect("cachegrind's method");
    assert_eq!(
        (other.instructions, &other.metrics),
        (measurement.instructions, &measurement.metrics),
        "Cachegrind's method and Callgrind's"
    );
}

fn parts_that_do_not_add_up_are_an_error() {
    // Only Cachegrind's method has two tools whose counts can disagree.
    let dir = scratch();
    let Some(runner) = runner_of(dir.path(), false) else {
        return;
    };
    let error = runner
        .measure(&name("fixture::uneven"), &this_binary())
        .unwrap_err();
    assert!(
        matches!(error, MeasureError::PartsDoNotAddUp { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("its parts do not add up"),
        "{error}"
    );
}
