//! Errors of a bisect. Each says what to do next; none leaves anything in
//! the user's repositories (nothing is ever written there), and kept
//! builds and measurements stay for the next run.

use crate::harness_name::HarnessName;

#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error("GOOD {revision} cannot be measured: {reason}\n  Pick a GOOD whose program builds and has the harness.")]
    GoodUnmeasurable {
        revision: String,
        #[source]
        reason: Skip,
    },

    #[error("no harness is named \"{harness}\" at GOOD; `cargo run -p regress -- list` shows the names (bisect takes exactly one)")]
    UnknownHarness { harness: HarnessName },

    #[error(
        "BAD {revision} has no harness {harness}: it was renamed or removed between GOOD and \
         BAD, so no count of BAD can be compared with GOOD's.\n  \
         Bisect the name BAD has (`cargo run -p regress -- list` at BAD), or pick a BAD that \
         still has {harness}."
    )]
    MissingAtBad {
        harness: HarnessName,
        revision: String,
    },

    #[error("{0}")]
    Undecided(String),

    #[error("{what}")]
    Unexpected { what: String },

    #[error(transparent)]
    Line(Box<crate::program::LineError>),

    #[error(transparent)]
    Revision(Box<crate::program::RevisionError>),

    #[error(transparent)]
    Source(Box<regress_source::SourceError>),

    #[error(transparent)]
    Measure(#[from] crate::MeasureError),

    #[error(transparent)]
    Program(Box<crate::program::ProgramError>),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
}

/// Why a revision of the line has no count, so that a bisect skips it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    /// It does not build: the reason kept with its build.
    #[error("{0}")]
    DoesNotBuild(String),
    /// It builds, but its program has no such harness.
    #[error("its program has no harness {harness}")]
    NoHarness { harness: HarnessName },
}

crate::program::boxed_from!(
    BisectError: Line(crate::program::LineError),
    Revision(crate::program::RevisionError),
    Source(regress_source::SourceError),
    Program(crate::program::ProgramError)
);
