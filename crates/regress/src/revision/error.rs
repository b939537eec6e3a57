//! What can stop a revision's build for good (as opposed to a revision
//! that does not build, which callers skip or report).

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
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
    Runner(#[from] crate::Error),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),

    #[error(transparent)]
    Diff(Box<crate::diff::DiffError>),
}

impl From<regress_source::SourceError> for RevisionError {
    fn from(error: regress_source::SourceError) -> RevisionError {
        RevisionError::Source(Box::new(error))
    }
}

impl From<crate::diff::DiffError> for RevisionError {
    fn from(error: crate::diff::DiffError) -> RevisionError {
        RevisionError::Diff(Box::new(error))
    }
}

impl RevisionError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> RevisionError {
        RevisionError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether the user interrupted (Ctrl-C, SIGTERM) while it ran.
    pub fn is_interrupted(&self) -> bool {
        crate::process::interrupted()
    }
}
