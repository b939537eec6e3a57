//! Every harness, as a test named `<library>::<path>`.
//!
//! `cargo test` runs each path natively and checks it works.
//! `ENABLE_VALGRIND=true cargo test` also measures each one under Valgrind
//! Cachegrind and gates its count against `baselines/<library>.<path>.json`.
//! The list itself is `harnesses::for_each_harness!` (harnesses/src/registry.rs);
//! the `regress` binary measures exactly the tests of this file.

harnesses::for_each_harness!(regress::harness_tests);
