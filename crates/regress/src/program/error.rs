//! Errors of building a revision's measured program and of finding the
//! revisions to build. Each says what went wrong and what to do next.

use std::path::PathBuf;

use super::Side;

/// What stops a commit of this workspace from becoming a measured program:
/// the repository, the build, the copy out of the target folder.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error(
        "{dir} is not inside a git repository ({detail}).\n  \
         Run `regress diff` from the project's checkout."
    )]
    NotARepository { dir: PathBuf, detail: String },

    #[error(
        "the {side} commit {commit}: {source}\n  \
         The worktree has been removed; to investigate, `git switch --detach {commit}` there."
    )]
    Build {
        side: Side,
        commit: String,
        #[source]
        source: super::discover::BuildError,
    },

    #[error(
        "cargo reused {binary}, which is older than the {side} worktree of {commit}: it was \
         built from another checkout, not from this commit.\n  \
         Use a target folder that no other checkout of this project builds in \
         (--target-dir), or remove {target_dir}."
    )]
    StaleBuild {
        side: Side,
        commit: String,
        binary: PathBuf,
        target_dir: PathBuf,
    },

    #[error("`cargo metadata` cannot list the workspace crates in {dir}: {detail}")]
    Metadata { dir: PathBuf, detail: String },

    /// Reading and writing files: the measure stage's `Io`, whose message
    /// says what to do.
    #[error(transparent)]
    Measure(Box<crate::MeasureError>),

    #[error(transparent)]
    Source(#[from] regress_source::SourceError),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
}

impl ProgramError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> ProgramError {
        crate::MeasureError::io(action, path, source).into()
    }
}

super::boxed_from!(ProgramError: Measure(crate::MeasureError));

/// What stops the line of revisions from GOOD to BAD from being listed
/// ([`super::line`]).
#[derive(Debug, thiserror::Error)]
pub enum LineError {
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

    #[error("{what}")]
    Unexpected { what: String },

    #[error(transparent)]
    Source(#[from] regress_source::SourceError),
}
