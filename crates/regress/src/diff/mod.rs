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
//! - [`git`] resolves and validates the two refs, and owns the temporary
//!   worktrees (removed on success, on failure and on Ctrl-C);
//! - [`build`] builds each side's harness test binary and copies it out of
//!   the shared cargo target folder;
//! - [`pipeline`] checks the refs, builds both sides in worktrees (its
//!   lock, target folder and outputs in [`scratch`]), and [`assemble`]
//!   measures both with [`crate::Runner`] and puts the result together;
//! - [`library`] does the same for two revisions of a TLS library's own
//!   repository (`--library`), each built into a scratch copy of this
//!   workspace by [`regress_source`], described in the report by
//!   [`sources`], with a side's measurements reused by [`cache`];
//! - [`normalize`] makes the same function carry the same name in both
//!   builds (build places, library layouts, versions, symbol hashes), for
//!   our own comparison and for `cg_annotate`'s;
//! - [`annotate`] writes the human-readable per-function diff with Valgrind's
//!   own tools;
//! - [`attribution`] says where each function lives (the TLS library's C
//!   code, aws-lc, the Rust crates, the harness, std/glibc);
//! - [`compare`] computes per-function deltas and judges each harness
//!   against its threshold, and [`figures`] its other figures (sides,
//!   stages, heap) and, when the heap moved, the allocation sites that
//!   changed;
//! - [`shard`] splits the harnesses across CI runners, and
//!   [`report`] is the versioned result, which merges shards back into one;
//! - [`render`] turns a report into a terminal table, Markdown for a pull
//!   request comment, and Bencher Metric Format JSON;
//! - [`untrusted`] checks a report read back from a file (a CI artifact)
//!   before anything is merged or rendered from it.
//!
//! Nothing here prints: progress goes to a [`crate::report::events::Listener`].

pub mod annotate;
pub mod assemble;
pub mod attribution;
pub mod bmf;
pub mod build;
pub mod cache;
pub mod compare;
pub mod error;
pub mod figures;
pub mod git;
pub mod interrupt;
pub mod library;
pub mod normalize;
pub mod pipeline;
pub mod render;
pub mod render_figures;
pub mod report;
pub mod scratch;
pub mod shard;
pub mod sources;
pub mod untrusted;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use error::DiffError;
pub use report::DiffReport;

/// One of the two commits of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The commit compared against (a pull request's merge base).
    Base,
    /// The commit under review.
    Head,
}

impl Side {
    /// Both sides, base first.
    pub const BOTH: [Side; 2] = [Side::Base, Side::Head];

    pub fn name(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Head => "head",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
