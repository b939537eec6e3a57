//! What can stop a revision's build for good (as opposed to a revision
//! that does not build, which callers skip or report).

use std::path::{Path, PathBuf};

/// The lines of git's output a [`RevisionError::Git`] quotes (its last).
pub(crate) const GIT_DETAIL_LINES: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error("the build kept in {dir} cannot be read back; remove that folder and run again")]
    Cache { dir: PathBuf },

    #[error("`git {args}` failed in {dir}: {detail}")]
    Git {
        args: String,
        dir: PathBuf,
        detail: String,
    },

    #[error(transparent)]
    Source(Box<regress_source::SourceError>),

    #[error(transparent)]
    Measure(#[from] crate::MeasureError),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),

    #[error(transparent)]
    Program(Box<crate::program::ProgramError>),
}

/// Why a revision does not build (a compile error, a version the
/// harnesses do not cover): a bisect skips it and a history reports it
/// ([`super::Builder::build`]). Its text is kept with the build.
#[derive(Debug, thiserror::Error)]
pub enum DoesNotBuild {
    /// This workspace's program at a commit.
    #[error(transparent)]
    Program(crate::program::BuildError),
    /// A library's revision, or the harnesses built against it (the
    /// errors [`super::library`]'s `does_not_build` accepts).
    #[error(transparent)]
    Source(Box<regress_source::SourceError>),
    /// A library's revision of a version the harnesses do not cover.
    #[error(transparent)]
    NotCovered(regress_source::features::NotCovered),
    /// A published version the harnesses do not cover.
    #[error("{library} {version} is not covered; the harnesses cover {covered}")]
    VersionNotCovered {
        library: &'static regress_source::Library,
        version: semver::Version,
        covered: String,
    },
    /// No version of the crate this workspace locks can be moved to the
    /// published version.
    #[error(
        "this workspace locks {krate} at {locked}, none of which `cargo update --precise \
         {version}` can move"
    )]
    LockCannotMove {
        krate: &'static str,
        locked: String,
        version: semver::Version,
    },
    /// `cargo update --precise` failed: its command and last lines.
    #[error("`{command}` failed: {tail}")]
    UpdateFailed { command: String, tail: String },
    /// `cargo update --precise` ran, but the version is not locked.
    #[error("`{command}` did not lock {krate} {version}")]
    NotLocked {
        command: String,
        krate: &'static str,
        version: semver::Version,
    },
}

/// Implements `From<$error>` for `$target` by boxing it into the variant
/// `$target::$variant`: the errors of other modules are large, and boxing
/// them keeps every `Result` of bisect, history and revision small.
macro_rules! boxed_from {
    ($target:ident: $($variant:ident($error:ty)),*) => {$(
        impl From<$error> for $target {
            fn from(error: $error) -> $target {
                $target::$variant(Box::new(error))
            }
        }
    )*};
}
pub(crate) use boxed_from;

boxed_from!(RevisionError: Source(regress_source::SourceError), Program(crate::program::ProgramError));

impl RevisionError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> RevisionError {
        RevisionError::Measure(crate::MeasureError::io(action, path, source))
    }

    /// Whether the user interrupted (Ctrl-C, SIGTERM) while it ran.
    pub fn is_interrupted(&self) -> bool {
        crate::process::interrupted()
    }
}
