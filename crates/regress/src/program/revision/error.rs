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
