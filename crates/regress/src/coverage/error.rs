//! What can go wrong reading line data and sources.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::limits::io_hint;

#[derive(Debug, Error)]
pub enum CoverageError {
    #[error("cannot {action} {}: {source} ({})", path.display(), io_hint(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not a lines file this regress reads: {reason}; measure again (`regress run`) to rewrite it",
        path.display()
    )]
    BadLines { path: PathBuf, reason: String },
    #[error("{} is not a Cachegrind profile: {reason}", path.display())]
    BadProfile {
        path: PathBuf,
        #[source]
        reason: super::lines::ProfileError,
    },
    #[error(
        "no line data in {}: measure first (`regress run`, or `cargo test` with ENABLE_VALGRIND=true), \
         then run `regress coverage` again",
        dir.display()
    )]
    NoMeasurements { dir: PathBuf },
    #[error("no library is called {name:?}; the libraries are: {known}")]
    UnknownLibrary { name: String, known: String },
}

impl CoverageError {
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> CoverageError {
        CoverageError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}
