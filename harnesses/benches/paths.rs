//! Wall-clock benchmarks of every harness path, with criterion.
//!
//! The same harness definitions the instruction counts use (one definition of
//! each path, listed once in `harnesses::for_each_harness!`): `prepare` runs
//! outside the timed part (criterion's `iter_batched`), `run` inside it, and
//! outputs are dropped after timing. Throughput paths report bytes per
//! second. The raw AEAD paths are measured a second time in CPU cycles, read
//! from the time-stamp counter, and report bytes per cycle.
//!
//! `cargo bench` runs them all (a few minutes); `cargo bench -- rustls::`
//! filters.

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput};
use regress_measure::Harness;

mod cycles;

fn bench<H: Harness, M: criterion::measurement::Measurement>(
    c: &mut Criterion<M>,
    name: &str,
    harness: &H,
) {
    let setup = match harness.setup() {
        Ok(setup) => setup,
        Err(error) => panic!("{name}: setup failed: {error}"),
    };
    let (library, path) = name.split_once("::").unwrap_or(("", name));
    let mut group = c.benchmark_group(library);
    if let Some(bytes) = harness.bytes_per_run() {
        group.throughput(Throughput::Bytes(bytes));
    }
    group.bench_function(path, |b| {
        b.iter_batched(
            || {
                harness
                    .prepare(&setup)
                    .unwrap_or_else(|e| panic!("{name}: prepare failed: {e}"))
            },
            |input| {
                harness
                    .run(&setup, input)
                    .unwrap_or_else(|e| panic!("{name}: run failed: {e}"))
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

macro_rules! bench_all {
    ($($library:ident { $($path:ident => $harness:expr),* $(,)? })*) => {
        fn wall_clock(c: &mut Criterion) {
            $($(
                bench(c, concat!(stringify!($library), "::", stringify!($path)), &$harness);
            )*)*
        }

        fn cpu_cycles(c: &mut Criterion<cycles::Cycles>) {
            $($(
                if stringify!($library) == "aws_lc_rs" {
                    bench(c, concat!("cycles::", stringify!($library), "_", stringify!($path)), &$harness);
                }
            )*)*
        }
    };
}

harnesses::for_each_harness!(bench_all);

fn main() {
    let mut wall = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args();
    wall_clock(&mut wall);
    if cycles::available() {
        let mut cpu = Criterion::default()
            .with_measurement(cycles::Cycles)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(20)
            .configure_from_args();
        cpu_cycles(&mut cpu);
    } else {
        eprintln!("the CPU's time-stamp counter is not readable here: no bytes-per-cycle figures");
    }
    Criterion::default().configure_from_args().final_summary();
}
