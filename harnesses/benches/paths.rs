//! Wall-clock benchmarks of every harness path, with criterion.
//!
//! The same harness definitions the instruction counts use (one definition of
//! each path, listed once in `harnesses::registry::all()`): `prepare` runs
//! outside the timed part, `run` inside it (criterion's `iter_custom` over
//! [`Timer::time_runs`](regress_measure::program::Timer::time_runs)), and
//! outputs are dropped after timing. Throughput paths report bytes per
//! second. The raw AEAD paths are measured a second time in CPU cycles, read
//! from the time-stamp counter, and report bytes per cycle.
//!
//! `cargo bench` runs them all (a few minutes); `cargo bench -- rustls::`
//! filters.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use regress_measure::program::Entry;

mod cycles;

/// Benchmarks one harness: setup once, then criterion asks for batches of
/// runs; each run's input is prepared outside the timed part, and only
/// `clock` differences across `run` are summed.
fn bench<M: Measurement>(
    c: &mut Criterion<M>,
    group_name: &str,
    entry: &Entry,
    clock: fn() -> u64,
    value: fn(u64) -> M::Value,
) {
    let name = &entry.name;
    let mut timer = match entry.harness.timer() {
        Ok(timer) => timer,
        Err(error) => panic!("{name}: setup failed: {error}"),
    };
    let path = name
        .split_once("::")
        .map_or(name.as_str(), |(_, path)| path);
    let mut group = c.benchmark_group(group_name);
    if let Some(bytes) = entry.harness.bytes_per_run() {
        group.throughput(Throughput::Bytes(bytes));
    }
    group.bench_function(path, |b| {
        b.iter_custom(|iterations| {
            let mut read = clock;
            let ticks = timer
                .time_runs(iterations, &mut read)
                .unwrap_or_else(|error| panic!("{name}: run failed: {error}"));
            value(ticks)
        })
    });
    group.finish();
}

/// Nanoseconds since the first reading: a monotonic clock in `u64`.
fn nanoseconds() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

fn library(name: &str) -> &str {
    name.split_once("::").map_or("", |(library, _)| library)
}

fn main() {
    let mut wall = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args();
    let entries = harnesses::registry::all();
    for entry in &entries {
        bench(
            &mut wall,
            library(&entry.name),
            entry,
            nanoseconds,
            Duration::from_nanos,
        );
    }
    if cycles::available() {
        let mut cpu = Criterion::default()
            .with_measurement(cycles::Cycles)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(20)
            .configure_from_args();
        for entry in entries.iter().filter(|e| library(&e.name) == "aws_lc_rs") {
            bench(&mut cpu, "cycles", entry, cycles::now, |ticks| ticks);
        }
    } else {
        eprintln!("the CPU's time-stamp counter is not readable here: no bytes-per-cycle figures");
    }
    Criterion::default().configure_from_args().final_summary();
}
