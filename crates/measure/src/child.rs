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
//! The boundaries of the last run, and those between its client's, its
//! server's and the harness's own code, do what the child's [`Plan`] says
//! (see [`crate::parts`]): start and stop Cachegrind around the parts a
//! child counts, dump Callgrind's cost of every segment, or nothing. A heap
//! child (with the hooks preloaded, see [`crate::heap`]) runs the same
//! steps and writes the heap figures of the last run.
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
use crate::parts::{self, Plan};
use crate::{cpu, heap};

/// Names the harness the child must measure. Set by the runner.
pub const ENV_HARNESS: &str = "REGRESS_CHILD_HARNESS";
/// How many times to run the path (1..=[`PREPARED_INPUTS`]).
pub const ENV_RUNS: &str = "REGRESS_CHILD_RUNS";
/// `1` to bracket the last run with Cachegrind start/stop requests: what a
/// runner from before [`ENV_PLAN`] asks for, still understood (a diff's
/// runner is built from the base commit and measures the head's program).
pub const ENV_MARKERS: &str = "REGRESS_CHILD_MARKERS";
/// What the boundaries of the last run do ([`Plan::parse`]); wins over
/// [`ENV_MARKERS`].
pub const ENV_PLAN: &str = "REGRESS_CHILD_PLAN";
/// Where the child writes its [`ChildReport`].
pub const ENV_REPORT: &str = "REGRESS_CHILD_REPORT";
/// Where a heap child writes its [`heap::HeapReport`]; set only for a heap
/// child, whose hooks are preloaded.
pub const ENV_HEAP_REPORT: &str = "REGRESS_CHILD_HEAP_REPORT";

/// The version of this protocol a program speaks, in its [`ChildReport`]:
/// 0 (absent) for a program from before plans and heap children, which
/// counts only whole runs. 3 since the loop's last warm-up enters
/// [`crate::parts::Part::Warm`], where Callgrind starts instrumenting: a
/// program of 2 marks parts but never starts Callgrind's instrumentation
/// (`--instr-atstart=no`), so the runner counts it as it counts a program
/// of 0.
pub const PROTOCOL: u32 = 3;

/// Inputs every child prepares, so that preparation is identical across
/// children that run the path a different number of times.
pub const PREPARED_INPUTS: usize = 3;

/// What the runner asked this child process to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildRequest {
    pub harness: String,
    pub runs: usize,
    pub plan: Plan,
    pub report: PathBuf,
    /// For a heap child: where its heap figures go.
    pub heap_report: Option<PathBuf>,
}

/// A malformed request from the runner (a child's, a scaling child's, or
/// one a fork server reads): the runner and the program disagree.
#[derive(Debug)]
pub struct ChildRequestError(String);

impl ChildRequestError {
    /// The error `message` words.
    pub(crate) fn new(message: impl Into<String>) -> ChildRequestError {
        ChildRequestError(message.into())
    }
}

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
        let plan = match std::env::var(ENV_PLAN) {
            Ok(text) => Plan::parse(&text).ok_or_else(|| {
                ChildRequestError(format!(
                    "{ENV_PLAN}={text:?} is not `nothing`, `callgrind` or `cachegrind:PART,...`"
                ))
            })?,
            Err(_) if markers => Plan::Cachegrind(parts::PartSet::run()),
            Err(_) => Plan::Nothing,
        };
        let report = std::env::var_os(ENV_REPORT)
            .map(PathBuf::from)
            .ok_or_else(|| ChildRequestError(format!("{ENV_REPORT} is not set")))?;
        Ok(Some(ChildRequest {
            harness,
            runs,
            plan,
            report,
            heap_report: std::env::var_os(ENV_HEAP_REPORT).map(PathBuf::from),
        }))
    }

    /// The variables that make a child of this request.
    ///
    /// [`ENV_MARKERS`] goes along for a program from before plans: it
    /// brackets the whole run when the plan counts the whole run with
    /// Cachegrind, and counts nothing otherwise (its report then says it
    /// speaks no [`PROTOCOL`], and the runner says so).
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let whole_run = self.plan == Plan::Cachegrind(parts::PartSet::run());
        let mut env = vec![
            (ENV_HARNESS, self.harness.clone()),
            (ENV_RUNS, self.runs.to_string()),
            (ENV_MARKERS, if whole_run { "1" } else { "0" }.to_owned()),
            (ENV_PLAN, self.plan.to_text()),
            (ENV_REPORT, self.report.display().to_string()),
        ];
        if let Some(heap) = &self.heap_report {
            env.push((ENV_HEAP_REPORT, heap.display().to_string()));
        }
        env
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
    /// The CPUID words each run-time library dispatches on, where it says
    /// ([`crate::harness::RuntimeLibrary::cpu`]).
    #[serde(default)]
    pub library_cpu: std::collections::BTreeMap<String, [u32; 4]>,
    /// The [`PROTOCOL`] the program speaks; 0 from a program before it.
    #[serde(default)]
    pub protocol: u32,
    /// Whether the harness marks its client's and server's calls
    /// ([`Harness::sides`]): only then can its run be split.
    #[serde(default)]
    pub sides: bool,
    /// The CPUID words the process saw ([`cpu::ids`]).
    #[serde(default)]
    pub cpuid: Option<[u32; 4]>,
}

/// What a child does first, on the thread that started it: checks that the
/// request names this harness, and writes its report.
///
/// `name` is the harness's name as the program knows it; a mismatch with
/// the request is an error, not a silent measurement of the wrong thing.
///
/// The report goes first, and not on the measuring thread. Writing it
/// allocates, and what an allocation costs depends on the heap's state:
/// written after the runs, it cost a few hundred instructions more in a
/// child that ran the path 3 times than in one that ran it twice (measured:
/// 274 in `_int_malloc` on rustls's session_resumption). Written on the
/// measuring thread before setup, its size (the report's file name is the
/// child's own) shifted everything that thread allocated after it: the
/// Callgrind child, whose report has a longer name, counted rustls's ECDSA
/// handshake 288 instructions lower than the Cachegrind children did. On
/// this thread it touches another arena.
pub fn announce<H: Harness>(
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
    let libraries = harness.runtime_libraries();
    let report = ChildReport {
        harness: name.to_owned(),
        cpu_features: cpu::features(),
        bytes_per_run: harness.bytes_per_run(),
        operations_per_run: harness.operations_per_run(),
        runtime_libraries: libraries
            .iter()
            .map(|library| (library.name.clone(), library.version.clone()))
            .collect(),
        library_cpu: libraries
            .iter()
            .filter_map(|library| Some((library.name.clone(), library.cpu?)))
            .collect(),
        protocol: PROTOCOL,
        sides: harness.sides(),
        cpuid: cpu::ids(),
    };
    write_report(&request.report, &report)?;
    // The process leaves through `program::exit_now`, which flushes
    // standard output, whose buffer Rust allocates on first use: here,
    // rather than after the runs.
    std::io::stdout().flush()?;
    Ok(())
}

/// Runs `harness` as the child `request` describes, on the measuring
/// thread, after [`announce`].
pub fn run<H: Harness>(harness: &H, request: &ChildRequest) -> Result<(), HarnessError> {
    parts::prepare(request.plan, request.runs);
    if request.heap_report.is_some() {
        heap::attach()?;
    }

    let setup = harness.setup()?;
    let mut inputs = Vec::with_capacity(PREPARED_INPUTS);
    for input in 1..=PREPARED_INPUTS {
        heap::set_input(input);
        inputs.push(Some(harness.prepare(&setup)?));
    }
    if request.runs > inputs.len() {
        return Err("fewer inputs than runs".into());
    }
    // Every iteration executes the same instructions but for the run
    // itself, and starts with the one boundary (`parts::between_runs`):
    // the counted region is exactly one iteration, whichever method
    // counts it.
    let mut last = None;
    let mut index = 0;
    loop {
        parts::between_runs(index);
        if index == request.runs {
            break;
        }
        heap::set_input(index + 1);
        let input = inputs[index].take().ok_or("an input was used twice")?;
        // No `check` here: the test checked the path natively before
        // measuring it, and a check draws random numbers (a handshake's
        // blinding, say) whose cost would differ between the two children
        // of a subtraction (measured: 261 K instructions on OpenSSL's
        // config_build, whose check handshakes with the built contexts).
        let output = harness.run(&setup, input)?;
        // The previous run's output is leaked, never dropped.
        std::mem::forget(last.replace(output));
        index += 1;
    }
    if let Some(path) = &request.heap_report {
        let output = last.take().ok_or("a heap child must run the path")?;
        heap_figures(harness, &setup, output, request.runs, path)?;
    }
    // Never dropped: freeing it would cost what the heap the runs left
    // makes it cost, after the region (and in one child of a subtraction
    // more than in the other).
    std::mem::forget(last);
    // Leaked whole, in one step whose cost does not depend on how many
    // inputs are left unused (iterating over the leftovers would).
    std::mem::forget(inputs);
    std::mem::forget(setup);
    Ok(())
}

fn one() -> u64 {
    1
}

/// A heap child's last step: the run's figures, and for a handshake what
/// each side holds after it and after its first record, written to `path`.
/// (Allocation after the run is harmless here: no instructions are
/// counted in a heap child.)
fn heap_figures<H: Harness>(
    harness: &H,
    setup: &H::Setup,
    mut output: H::Output,
    input: usize,
    path: &Path,
) -> Result<(), HarnessError> {
    let mut report = heap::run_report()?;
    report.received = harness.received(setup, &output);
    if harness.sides() {
        report.held_after_handshake = heap::held(input);
        if harness.first_record(setup, &mut output)? {
            report.held_after_first_record = heap::held(input);
        }
    }
    std::mem::forget(output);
    let text = serde_json::to_string(&report)?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
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
