//! Errors of a diff. Each says what went wrong and what to do next; none
//! leaves a worktree behind (the guards in [`super::git`] see to that).

use std::path::PathBuf;

use super::Side;

/// The checks of the refs a diff names are `regress-source`'s, shared with
/// `--library`: their errors arrive as [`DiffError::Source`].
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
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
        source: crate::discover::BuildError,
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

    #[error(
        "the target folder {target_dir} contains {worktrees}, where the diff's worktrees are \
         created; cargo would then take one commit's sources for the other's.\n  \
         Pick a --target-dir outside it."
    )]
    TargetDirContainsWorktrees {
        target_dir: PathBuf,
        worktrees: PathBuf,
    },

    #[error("`cargo metadata` cannot list the workspace crates in {dir}: {detail}")]
    Metadata { dir: PathBuf, detail: String },

    #[error(
        "no harness of either commit matches {filters:?}.\n  \
         `cargo run -p regress -- list` shows the harness names."
    )]
    NoHarness { filters: Vec<String> },

    #[error(
        "cannot {action} {path}: {source}.\n  {}",
        crate::limits::io_hint(source)
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not a diff report this version of regress reads: {reason}")]
    BadReport { path: PathBuf, reason: String },

    #[error("cannot write the report as JSON: {0}")]
    Serialize(#[source] serde_json::Error),

    #[error("cannot merge the shard reports: {0}")]
    Merge(String),

    #[error(
        "--library {spec:?}: {reason}.\n  \
         Write it as NAME=PATH, for example --library s2n-tls=../s2n-tls; the libraries \
         regress builds from source are: {known}."
    )]
    LibrarySpec {
        spec: String,
        reason: String,
        known: String,
    },

    #[error(
        "{library} is given twice (--library {first} and --library {second}); \
         give each library once"
    )]
    LibraryTwice {
        library: &'static str,
        first: String,
        second: String,
    },

    #[error(
        "{what}.\n  With --library, BASE and HEAD are revisions of the library's checkout; \
         `regress diff --help` shows the forms."
    )]
    LibraryRevisions { what: String },

    #[error(transparent)]
    Source(#[from] regress_source::SourceError),

    #[error("interrupted; the worktrees have been removed")]
    Interrupted,

    #[error(transparent)]
    Runner(#[from] crate::Error),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
}

impl DiffError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> DiffError {
        DiffError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
