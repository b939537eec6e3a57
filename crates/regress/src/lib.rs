//! The runner: measures harnesses under Valgrind Cachegrind and gates their
//! instruction counts against committed baselines.
//!
//! How the pieces fit, in the order a measurement flows through them:
//!
//! - [`valgrind`] finds Valgrind and picks the counting method from its
//!   version;
//! - [`cachegrind`] re-executes a harness's test binary under Cachegrind in a
//!   pinned environment;
//! - [`annotate`] runs `cg_diff` and `cg_annotate` on the profiles;
//! - [`runner`] ties those together and writes `perf_outputs/`;
//! - [`fingerprint`] says what a count depends on;
//! - [`baseline`] reads and blesses `baselines/`;
//! - [`gate`] judges a count against its baseline;
//! - [`harness_test`] is what each harness's `#[test]` calls;
//! - [`discover`], [`noise`] and [`report`] serve the `regress` binary;
//! - [`diff`] compares two commits (`regress diff`).

pub mod annotate;
pub mod atomic_file;
pub mod baseline;
pub mod cachegrind;
pub mod compare;
pub mod diff;
pub mod discover;
pub mod error;
pub mod fingerprint;
pub mod gate;
pub mod harness_test;
pub mod html;
pub mod measurement;
pub mod noise;
pub mod overhead;
pub mod parallel;
pub mod report;
pub mod runner;
pub mod scale;
pub mod toolchain;
pub mod valgrind;
pub mod workspace;

pub use error::{Error, Result};
pub use measurement::Measurement;
pub use runner::Runner;
