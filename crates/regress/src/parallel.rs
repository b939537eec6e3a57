//! Runs independent jobs on all cores.
//!
//! Valgrind runs one client thread at a time, so one Valgrind process uses
//! one core; a suite uses the machine by running one process per core.

use std::fmt::Display;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::harness_name::HarnessName;
use crate::measure::measurement::Measurement;
use crate::report::events::{Event, Listener};

/// How many jobs to run at once: the machine's cores, unless `requested`.
pub fn workers(requested: Option<usize>) -> usize {
    requested
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Applies `job` to every item on `workers` threads; results keep the
/// items' order. `done` is called as each job finishes (for progress).
pub fn map<T, R, F, D>(items: &[T], workers: usize, job: F, done: D) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
    D: Fn(usize, &T, &R) + Sync,
{
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else { break };
                let result = job(item);
                let count = finished.fetch_add(1, Ordering::Relaxed) + 1;
                done(count, item, &result);
                if let Ok(mut results) = results.lock() {
                    results[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

/// Measures every item with `measure` on `workers` threads, telling
/// `listener` when the batch starts, as each measurement ends (named by
/// `label`: a diff's side, if any, and the harness), and when all are done.
/// The one way `regress run`, `regress noise` and `regress diff` measure.
pub fn measure_all<T, E, L, M>(
    items: &[T],
    workers: usize,
    listener: &dyn Listener,
    label: L,
    measure: M,
) -> Vec<Result<Measurement, E>>
where
    T: Sync,
    E: Display + Send,
    L: for<'a> Fn(&'a T) -> (Option<&'a str>, &'a HarnessName) + Sync,
    M: Fn(&T) -> Result<Measurement, E> + Sync,
{
    let started = Instant::now();
    let total = items.len();
    listener.event(Event::MeasuringStarted { total, workers });
    let results = map(items, workers, measure, |_, item, result| {
        let (side, harness) = label(item);
        listener.event(Event::Measured {
            side,
            harness,
            result: match result {
                Ok(measurement) => Ok(measurement.instructions),
                Err(error) => Err(error),
            },
        });
    });
    listener.event(Event::MeasuringFinished {
        total,
        workers,
        elapsed: started.elapsed(),
    });
    results
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order_and_runs_everything() {
        let items: Vec<u64> = (0..50).collect();
        let results = super::map(&items, 4, |n| n * 2, |_, _, _| {});
        assert_eq!(results, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        assert!(super::map(&[] as &[u64], 4, |n| *n, |_, _, _| {}).is_empty());
    }
}
