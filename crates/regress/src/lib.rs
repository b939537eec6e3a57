//! The runner: measures harnesses under Valgrind Cachegrind, judges their
//! instruction counts against committed baselines or against another
//! commit, and reports the results.
//!
//! The folders follow the pipeline a count flows through:
//!
//! - [`measure`]: find Valgrind, run one harness's child under Cachegrind,
//!   annotate its profile, and write the record into `perf_outputs/`
//!   ([`measure::runner::Runner`] ties it together);
//! - [`judge`]: the one judge of a change against a threshold, the
//!   committed `baselines/`, and the gate that applies the judge to a
//!   measurement;
//! - [`diff`]: two commits, built in worktrees, measured and compared
//!   function by function;
//! - [`report`]: the one reporter of progress and results, and the
//!   documents made from the data (comparison, README tables, HTML page);
//! - [`bisect`] and [`history`]: many revisions of one library or of this
//!   workspace (the first that moved a count; every path over published
//!   versions), each revision's program built and kept by [`revision`].
//!
//! Beside them: [`harness_test`] (what each harness's test does),
//! [`discover`] (building the measured program and listing its harnesses),
//! [`toolchain`] (which compilers built it), [`process`] (every child in a
//! process group of its own, with a time limit, stopped on Ctrl-C),
//! [`harness_name`] (the checked name every path is made from),
//! [`limits`] (the bounds on what is read from files), and the
//! small shared pieces [`workspace`], [`error`], [`format`],
//! [`atomic_file`], [`parallel`] and [`fixtures`]. The `regress` binary
//! (`src/bin/regress/`) is a thin layer of commands over this library.

pub mod atomic_file;
pub mod bisect;
pub mod constant_flow;
pub mod diff;
pub mod discover;
pub mod error;
#[doc(hidden)]
pub mod fixtures;
pub mod format;
pub mod harness_name;
pub mod harness_test;
pub mod history;
pub mod judge;
pub mod limits;
pub mod measure;
pub mod parallel;
pub mod process;
pub mod report;
pub mod revision;
pub mod toolchain;
pub mod workspace;

pub use error::{Error, Result};
pub use harness_name::HarnessName;
pub use measure::measurement::Measurement;
pub use measure::runner::Runner;
