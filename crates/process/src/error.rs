//! Why a child did not run to completion.

/// What went wrong with a child; each says what to do next where there is
/// something to do.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start {program}: {source}; is it installed (and on PATH)?")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{command} did not finish within {seconds} s and was killed with its children.{remedy}"
    )]
    TimedOut {
        command: String,
        seconds: u64,
        /// What to do about it (from the [`crate::Limits`] it ran with),
        /// starting with a line break; empty when there is nothing.
        remedy: &'static str,
    },

    #[error("interrupted (SIGINT or SIGTERM); every child process was stopped")]
    Interrupted,

    #[error("{command} was stopped because the run was cancelled")]
    Cancelled { command: String },

    #[error("{command} printed more than {limit} bytes; it was stopped")]
    OutputTooLarge { command: String, limit: usize },

    #[error("cannot {action} {command}: {source}")]
    Io {
        action: &'static str,
        command: String,
        #[source]
        source: std::io::Error,
    },
}
