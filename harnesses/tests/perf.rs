//! Every harness, as a test named `<library>::<path>`.
//!
//! `cargo test` runs each path natively and checks it works.
//! `ENABLE_VALGRIND=true cargo test` also measures each one under Valgrind
//! Cachegrind and gates its count against `baselines/<library>.<path>.json`.
//!
//! The measured process is not this test binary but the `harnesses`
//! program (`src/main.rs`), which cargo builds beside it: this binary links
//! the runner, the measured one does not. The list of tests is
//! `harnesses::registry::all()`, so `cargo test s2n_tls::` and `--exact`
//! filter as usual.

use std::path::Path;
use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};

fn main() -> ExitCode {
    let arguments = Arguments::from_args();
    let program = Path::new(env!("CARGO_BIN_EXE_harnesses"));
    let trials = harnesses::registry::all()
        .into_iter()
        .map(|entry| {
            Trial::test(entry.name.clone(), move || {
                regress::harness_test::run(&entry, program).map_err(Failed::from)
            })
        })
        .chain(
            // Paths this build's libraries cannot run (OpenSSL before 3.5
            // has no ML-KEM): shown as ignored, with the reason, never run
            // and never passing.
            harnesses::registry::not_applicable_benchmarks()
                .into_iter()
                .map(|(name, why)| {
                    Trial::test(name, || Ok(()))
                        .with_kind(format!("not applicable: {why}"))
                        .with_ignored_flag(true)
                }),
        )
        .collect();
    libtest_mimic::run(&arguments, trials).exit_code()
}
