//! A revision's measured program, built and kept: the stage `regress run`,
//! `regress diff`, `regress bisect` and `regress history` share to turn a
//! revision into the program whose harnesses are measured.
//!
//! The pieces, in the order a build flows through them:
//!
//! - `discover` builds this workspace's measured program with cargo and
//!   lists its harnesses ([`build`], [`build_program`], [`list`]);
//! - `checkout` is a library's checkout as `--library NAME=PATH` names it
//!   ([`LibraryCheckout`]);
//! - `commit` names a comparison's two sides and a commit as the user
//!   named it and git resolved it ([`Side`], [`Commit`]);
//! - `worktree` resolves and validates refs in this project's repository,
//!   and owns temporary worktrees (removed on success, on failure and on
//!   Ctrl-C) ([`Repo`], [`Worktree`]);
//! - `isolation` keeps a worktree's workspace crates apart from other builds
//!   in a shared target folder, and builds one side's harness test binary
//!   ([`isolation`], [`build_harness_tests`]);
//! - [`line`] lists the revisions between two commits (GOOD, then BAD's
//!   first-parent line back to it);
//! - [`revision`] builds the program of one revision (of this workspace, of
//!   a library's checkout, of a library's published version) and keeps it;
//! - `measurement_cache` keeps a program's measurements, keyed by the
//!   program's bytes and the Valgrind ([`MeasurementCache`]).
//!
//! Nothing here compares or prints.

mod checkout;
mod commit;
mod discover;
mod error;
mod isolation;
pub mod line;
mod measurement_cache;
pub mod revision;
mod worktree;

pub use checkout::LibraryCheckout;
pub use commit::{Commit, Side};
pub use discover::{
    build, build_program, cargo, cargo_command, list, list_all, select, set_by_cargo_run,
    BuildError, BuildRequest, PROGRAM, PROGRAM_PACKAGE,
};
pub use error::{LineError, ProgramError};
pub use isolation::{build_harness_tests, isolation, BuildSpec, Isolation};
pub use measurement_cache::MeasurementCache;
pub(crate) use revision::error::boxed_from;
pub use revision::RevisionError;
pub use worktree::{Repo, Worktree};
