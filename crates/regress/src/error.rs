//! Errors of the runner. Every one says what went wrong, where, and what to
//! do next.

use std::path::PathBuf;

use crate::baseline::BaselineError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{tool} was not found{searched}.\n  {hint}")]
    ToolMissing {
        tool: &'static str,
        searched: String,
        hint: &'static str,
    },

    #[error("cannot tell the version of {program}: it printed {output:?}")]
    ToolVersion { program: PathBuf, output: String },

    #[error("cannot start {program}: {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{harness} failed under Valgrind ({status}).\n\
         --- its stderr (last lines) ---\n{stderr}\n--- end of stderr ---\n\
         Full logs: {logs}"
    )]
    ChildFailed {
        harness: String,
        status: String,
        stderr: String,
        logs: PathBuf,
    },

    #[error(
        "{harness} did not finish under Valgrind within {seconds} s and was killed.\n  \
         Raise the limit with REGRESS_TIMEOUT_SECS=<seconds> if the path is just slow. Logs: {logs}"
    )]
    Timeout {
        harness: String,
        seconds: u64,
        logs: PathBuf,
    },

    #[error(
        "{harness} ran under Valgrind but wrote no report: the test binary {binary} has no test \
         named exactly {harness:?}. A harness's name must be its test path (module::function)."
    )]
    NoReport { harness: String, binary: PathBuf },

    #[error("{program} failed ({status}) on {input}: {stderr}")]
    Annotate {
        program: PathBuf,
        status: String,
        input: PathBuf,
        stderr: String,
    },

    #[error("cannot read the profile {path}: {source}")]
    Profile {
        path: PathBuf,
        #[source]
        source: regress_profile::ProfileError,
    },

    #[error(
        "the annotated total of {harness} ({annotated}) disagrees with the raw profile ({raw}); \
         the profile is damaged or the tools disagree"
    )]
    AnnotationMismatch {
        harness: String,
        annotated: i64,
        raw: i64,
    },

    #[error("{harness}: the region count is {count}, not positive; the measurement is broken")]
    NonPositiveCount { harness: String, count: i64 },

    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not a valid {what}: {source}")]
    Json {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error(transparent)]
    Baseline(#[from] BaselineError),

    #[error(transparent)]
    Build(#[from] crate::discover::BuildError),

    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
