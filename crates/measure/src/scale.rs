//! Wall-clock thread scaling: what a child does when the runner asks how a
//! path scales with threads.
//!
//! Instruction counts answer "did it get slower"; operators also ask how
//! many handshakes per second a machine does on 1, 2, ... N threads. The
//! runner re-executes the harness test binary natively (no Valgrind) with the
//! variables below; every thread builds its own setup (configs are per
//! thread, as in a server with a config per worker), then all start together
//! and run the path until the deadline.
//!
//! Only `run` is timed: each thread adds up the time spent inside it, so
//! preparing inputs (fresh connections) does not count against the path.

use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::child::ChildRequestError;
use crate::harness::{Harness, HarnessError};

/// Names the harness to scale.
pub const ENV_HARNESS: &str = "REGRESS_SCALE_HARNESS";
/// How many threads run the path at once.
pub const ENV_THREADS: &str = "REGRESS_SCALE_THREADS";
/// For how long, in seconds (a decimal number).
pub const ENV_SECONDS: &str = "REGRESS_SCALE_SECONDS";
/// Where the [`ScaleReport`] goes.
pub const ENV_REPORT: &str = "REGRESS_SCALE_REPORT";

/// A scaling request from the runner.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleRequest {
    pub harness: String,
    pub threads: usize,
    pub duration: Duration,
    pub report: PathBuf,
}

impl ScaleRequest {
    /// Reads the request from the environment; `Ok(None)` when there is none.
    pub fn from_env() -> Result<Option<ScaleRequest>, ChildRequestError> {
        let Ok(harness) = std::env::var(ENV_HARNESS) else {
            return Ok(None);
        };
        let threads = std::env::var(ENV_THREADS)
            .ok()
            .and_then(|text| text.parse::<usize>().ok())
            .filter(|threads| *threads > 0)
            .ok_or_else(|| {
                ChildRequestError::new(format!("{ENV_THREADS} must be a positive whole number"))
            })?;
        let duration = std::env::var(ENV_SECONDS)
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                ChildRequestError::new(format!(
                    "{ENV_SECONDS} must be a positive number of seconds"
                ))
            })?;
        let report = std::env::var_os(ENV_REPORT)
            .map(PathBuf::from)
            .ok_or_else(|| ChildRequestError::new(format!("{ENV_REPORT} is not set")))?;
        Ok(Some(ScaleRequest {
            harness,
            threads,
            duration,
            report,
        }))
    }

    /// The variables that make a child of this request.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        vec![
            (ENV_HARNESS, self.harness.clone()),
            (ENV_THREADS, self.threads.to_string()),
            (ENV_SECONDS, self.duration.as_secs_f64().to_string()),
            (ENV_REPORT, self.report.display().to_string()),
        ]
    }
}

/// One thread's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// Completed runs of the path.
    pub operations: u64,
    /// Seconds spent inside `run`.
    pub busy_seconds: f64,
}

/// What a scaling child reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleReport {
    pub harness: String,
    pub threads: usize,
    /// Wall time from the common start to the last thread's end.
    pub wall_seconds: f64,
    pub per_thread: Vec<ThreadResult>,
}

impl ScaleReport {
    pub fn total_operations(&self) -> u64 {
        self.per_thread.iter().map(|t| t.operations).sum()
    }

    /// Operations per second of the path on all threads together: the sum
    /// of each thread's rate inside `run`.
    pub fn operations_per_second(&self) -> f64 {
        self.per_thread
            .iter()
            .filter(|t| t.busy_seconds > 0.0)
            .map(|t| t.operations as f64 / t.busy_seconds)
            .sum()
    }

    pub fn operations_per_second_per_thread(&self) -> f64 {
        self.operations_per_second() / self.threads.max(1) as f64
    }
}

/// Runs `harness` on `request.threads` threads and writes the report.
pub fn run<H: Harness + Sync>(
    name: &str,
    harness: &H,
    request: &ScaleRequest,
) -> Result<(), HarnessError> {
    if request.harness != name {
        return Err(format!(
            "asked to scale {:?} but this test is {name:?}",
            request.harness
        )
        .into());
    }
    let barrier = Barrier::new(request.threads);
    let started = Instant::now();
    let results: Vec<Result<ThreadResult, HarnessError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..request.threads)
            .map(|_| scope.spawn(|| one_thread(harness, &barrier, request.duration)))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err("a thread panicked".into()))
            })
            .collect()
    });
    let wall_seconds = started.elapsed().as_secs_f64();
    let per_thread = results
        .into_iter()
        .collect::<Result<Vec<_>, HarnessError>>()?;
    let report = ScaleReport {
        harness: name.to_owned(),
        threads: request.threads,
        wall_seconds,
        per_thread,
    };
    write(&request.report, &report)
}

fn one_thread<H: Harness>(
    harness: &H,
    barrier: &Barrier,
    duration: Duration,
) -> Result<ThreadResult, HarnessError> {
    // A failed setup must still reach the barrier, or the other threads
    // would wait for ever.
    let setup = harness.setup();
    barrier.wait();
    let setup = setup?;
    let deadline = Instant::now() + duration;
    let mut operations = 0;
    let mut busy = Duration::ZERO;
    while Instant::now() < deadline {
        let input = harness.prepare(&setup)?;
        let start = Instant::now();
        let output = harness.run(&setup, input)?;
        busy += start.elapsed();
        operations += 1;
        if operations == 1 {
            harness.check(&setup, &output)?;
        }
    }
    Ok(ThreadResult {
        operations,
        busy_seconds: busy.as_secs_f64(),
    })
}

fn write(path: &Path, report: &ScaleReport) -> Result<(), HarnessError> {
    let text = serde_json::to_string(report)?;
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::rename(&partial, path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count;

    impl Harness for Count {
        type Setup = ();
        type Input = u64;
        type Output = u64;
        fn setup(&self) -> Result<(), HarnessError> {
            Ok(())
        }
        fn prepare(&self, _: &()) -> Result<u64, HarnessError> {
            Ok(1_000)
        }
        fn run(&self, _: &(), input: u64) -> Result<u64, HarnessError> {
            Ok((0..input).map(std::hint::black_box).sum())
        }
        fn check(&self, _: &(), output: &u64) -> Result<(), HarnessError> {
            if *output == 499_500 {
                Ok(())
            } else {
                Err("wrong sum".into())
            }
        }
    }

    #[test]
    fn every_thread_runs_and_reports() {
        let dir = std::env::temp_dir().join(format!("regress-scale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let request = ScaleRequest {
            harness: "demo::count".into(),
            threads: 2,
            duration: Duration::from_millis(50),
            report: dir.join("report.json"),
        };
        run("demo::count", &Count, &request).expect("scale");
        let report: ScaleReport =
            serde_json::from_str(&std::fs::read_to_string(&request.report).expect("read"))
                .expect("json");
        assert_eq!(report.threads, 2);
        assert_eq!(report.per_thread.len(), 2);
        assert!(report.per_thread.iter().all(|t| t.operations > 0));
        assert!(report.operations_per_second() > 0.0);
        assert!(run("demo::other", &Count, &request).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
