//! Errors of a diff. Each says what went wrong and what to do next; none
//! leaves a worktree behind (the guards in [`super::git`] see to that).

use std::path::PathBuf;

/// The checks of the refs a diff names are `regress-source`'s, shared with
/// `--library`: their errors arrive as [`DiffError::Source`].
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(
        "the target folder {target_dir} contains {worktrees}, where the diff puts the sources \
         it builds; cargo would then take one side's sources for the other's.\n  \
         Pick a --target-dir outside it."
    )]
    TargetDirContainsWorktrees {
        target_dir: PathBuf,
        worktrees: PathBuf,
    },

    #[error(
        "the head changes how it is built: {files} differ between base and head, so each side \
         would be built with another compiler or other cargo flags, and the diff would measure \
         that too.\n  \
         Land the build change on its own first, or, to measure the change of toolchain itself \
         (never in the PR gate), pass --allow-build-change."
    )]
    BuildConfigChanged { files: String },

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

    /// The report parses, but a part of it is one the runner would not
    /// write ([`super::untrusted::check`]): a forged or damaged artifact.
    #[error("{path} is not a diff report this version of regress reads: {source}")]
    Refused { path: PathBuf, source: Refusal },

    /// An object of the report repeats a key ([`crate::limits::refuse_duplicate_keys`]).
    #[error("{path} is not a diff report this version of regress reads: {source}")]
    RepeatedKey {
        path: PathBuf,
        source: crate::limits::RepeatedKey,
    },

    #[error("cannot write the report as JSON: {0}")]
    Serialize(#[source] serde_json::Error),

    #[error("cannot merge the shard reports: {0}")]
    Merge(String),

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
    Program(Box<crate::program::ProgramError>),

    /// Reading or keeping a side's build in the target folder's kept builds.
    #[error(transparent)]
    KeptBuild(Box<crate::program::RevisionError>),

    #[error(transparent)]
    Measure(#[from] crate::MeasureError),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
}

crate::program::boxed_from!(DiffError: Program(crate::program::ProgramError));

impl From<crate::program::RevisionError> for DiffError {
    /// A build's own error stays one ([`DiffError::Program`]); the rest is
    /// the kept builds'.
    fn from(error: crate::program::RevisionError) -> DiffError {
        match error {
            crate::program::RevisionError::Program(error) => DiffError::Program(error),
            other => DiffError::KeptBuild(Box::new(other)),
        }
    }
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

/// Why a report is refused ([`super::untrusted::check`]), and where in it: the reason and the parts of
/// the report around it, outermost first (`s2n_tls::x: instructions: the
/// verdict "regressed" is not what 100 -> 99 gives`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The parts of the report around the reason, outermost first.
    pub at: Vec<String>,
    /// The reason.
    pub why: String,
}

impl Refusal {
    pub(super) fn new(why: impl Into<String>) -> Refusal {
        Refusal {
            at: Vec::new(),
            why: why.into(),
        }
    }

    /// The same refusal, inside the part `part` of the report.
    pub(super) fn within(mut self, part: impl Into<String>) -> Refusal {
        self.at.insert(0, part.into());
        self
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for part in &self.at {
            write!(f, "{part}: ")?;
        }
        f.write_str(&self.why)
    }
}

impl std::error::Error for Refusal {}
