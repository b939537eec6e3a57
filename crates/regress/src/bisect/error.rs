//! Errors of a bisect. Each says what to do next; none leaves anything in
//! the user's repositories (nothing is ever written there), and kept
//! builds and measurements stay for the next run.

#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error(
        "{which} {reference:?} cannot be bisected from: {reason}.\n  Name a branch, tag or commit."
    )]
    BadRef {
        which: &'static str,
        reference: String,
        reason: String,
    },

    #[error("GOOD {good:?} and BAD {bad:?} are the same commit; there is nothing between them to search")]
    SameRevision { good: String, bad: String },

    #[error("GOOD {good:?} is not an ancestor of BAD {bad:?}, so no line of commits leads from one to the other.\n  {hint}.")]
    NotAncestor {
        good: String,
        bad: String,
        hint: &'static str,
    },

    #[error("the range holds more than {max} revisions; bisect a narrower one")]
    TooLong { max: usize },

    #[error("GOOD {revision} cannot be measured: {reason}\n  Pick a GOOD whose program builds and has the harness.")]
    GoodUnmeasurable { revision: String, reason: String },

    #[error("no harness is named {harness:?} at GOOD; `cargo run -p regress -- list` shows the names (bisect takes exactly one)")]
    UnknownHarness { harness: String },

    #[error("{0}")]
    Undecided(String),

    #[error("{what}")]
    Unexpected { what: String },

    #[error(transparent)]
    Revision(Box<crate::revision::RevisionError>),

    #[error(transparent)]
    Source(Box<regress_source::SourceError>),

    #[error(transparent)]
    Runner(#[from] crate::Error),

    #[error(transparent)]
    Diff(Box<crate::diff::DiffError>),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
}

crate::revision::error::boxed_from!(
    BisectError: Revision(crate::revision::RevisionError),
    Source(regress_source::SourceError),
    Diff(crate::diff::DiffError)
);
