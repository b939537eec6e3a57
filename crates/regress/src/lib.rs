//! The runner: measures harnesses under Valgrind (Callgrind by default, or
//! Cachegrind's own methods), judges their instruction counts against
//! committed baselines or against another commit, and reports the results.
//!
//! # The rule: stages below, commands above
//!
//! The folders are layered by *stage*, not by command. A **stage** is a step
//! a count flows through, shared by every command that needs it:
//!
//! - [`program`]: a revision's measured program, built and kept (this
//!   workspace's, a commit's in a worktree, a library checkout's or a
//!   published version's), and the line of revisions between two commits;
//! - [`measure`]: find Valgrind, run one harness's child under Cachegrind,
//!   annotate its profile, and write the record into `perf_outputs/`
//!   ([`measure::runner::Runner`] ties it together);
//! - [`judge`]: the one judge of a change against a threshold, the
//!   committed `baselines/`, and the gate that applies the judge to a
//!   measurement;
//! - [`compare`]: two measurement sets, compared harness by harness and
//!   function by function;
//! - [`report`]: the one reporter of progress and results, the rendering
//!   toolkit, and the documents made from the data (comparison, README
//!   tables, HTML page).
//!
//! A **command** is one `regress` subcommand's own logic:
//!
//! - [`diff`]: two commits (or two revisions of a library's checkout),
//!   built, measured and compared, and the versioned report;
//! - [`bisect`]: the first revision that moved one harness's count;
//! - [`history`]: every path of a library over its published versions or a
//!   checkout's revisions;
//! - [`constant_flow`]: whether secret-dependent operations run the same
//!   instructions for every secret.
//!
//! **Commands import stages, never another command; stages never import a
//! command.** What two commands both need belongs in a stage. The test
//! `tests/layers.rs` reads every `crate::` path of `src/` and holds this
//! rule, with no exception. A document made from a command's data (the
//! history tables of the results pages) is handed that data by the binary
//! (`report::readme::MoreSections`).
//!
//! Beside them, small shared pieces that import no command: [`harness_test`]
//! (what each harness's test does), [`toolchain`] (which compilers built the
//! program), [`process`] (every child in a process group of its own, with a
//! time limit, stopped on Ctrl-C), [`harness_name`] (the checked name every
//! path is made from), [`env`] (every environment variable it reads), [`limits`] (the bounds on what is read from files),
//! [`workspace`], [`format`], [`atomic_file`], [`parallel`] and
//! [`fixtures`]. The `regress` binary (`src/bin/regress/`) is a thin layer
//! over this library: it reads the command line into typed requests and
//! calls the commands.

pub mod atomic_file;
pub mod bisect;
pub mod compare;
pub mod constant_flow;
pub mod coverage;
pub mod diff;
pub mod env;

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
pub mod program;
pub mod report;

pub mod toolchain;
pub mod workspace;

pub use harness_name::HarnessName;
pub use measure::measurement::Measurement;
pub use measure::runner::Runner;
pub use measure::{MeasureError, Result};
