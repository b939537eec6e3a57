//! `regress diff`: did a change make any API path more expensive, by how
//! much, and in which functions?
//!
//! A diff measures the harnesses of two commits, each built from a git
//! worktree of its own, with the same Valgrind on the same machine, and
//! compares the counts harness by harness and function by function. Nothing
//! is compared with a committed baseline: both sides are measured now, so the
//! difference is the change and nothing else (not the machine, not the
//! Valgrind version, not the compiler).
//!
//! The pieces, in the order a diff flows through them:
//!
//! - [`pipeline`] checks the refs, builds both sides in worktrees (the
//!   shared stage [`crate::program`] resolves the refs, owns the worktrees
//!   and builds each side; the diff's lock, target folder and outputs are
//!   in [`scratch`]), and [`assemble`] measures both with [`crate::Runner`]
//!   and puts the result together;
//! - [`library`] does the same for two revisions of a TLS library's own
//!   repository (`--library`), each built into a scratch copy of this
//!   workspace by [`regress_source`], described in the report by
//!   [`sources`], with a side's measurements reused by
//!   [`crate::program::MeasurementCache`];
//! - the comparison itself (names lined up, per-function deltas, the
//!   annotated text, attribution, the other figures) is the shared stage
//!   [`crate::compare`];
//! - [`shard`] splits the harnesses across CI runners, and
//!   [`report`] is the versioned result, which merges shards back into one;
//! - [`render`] turns a report into a terminal table, Markdown for a pull
//!   request comment, and Bencher Metric Format JSON;
//! - [`untrusted`] checks a report read back from a file (a CI artifact)
//!   before anything is merged or rendered from it;
//! - [`watch`] waits for a checkout's sources to change, for
//!   `regress diff --library … --watch`.
//!
//! Nothing here prints: progress goes to a [`crate::report::events::Listener`].

pub mod assemble;
pub mod bmf;
pub mod error;
pub mod interrupt;
mod kept;
pub mod library;
pub mod pipeline;
pub mod render;
pub mod render_figures;
pub mod report;
pub mod scratch;
pub mod shard;
pub mod sources;
pub mod untrusted;
pub mod watch;

pub use error::DiffError;
pub use report::DiffReport;

/// How a diff ended, which the binary turns into its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Nothing regressed beyond its threshold (exit code 0).
    Clean,
    /// At least one harness regressed beyond its threshold (exit code 1).
    Regressed,
    /// A harness could not be measured or compared, or shards are missing
    /// (exit code 2, like any other error).
    Incomplete,
}
