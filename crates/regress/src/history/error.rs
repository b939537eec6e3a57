//! Errors of a history run. Each says what to do next; what was measured
//! before the error is kept (records are written one version at a time).

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{0}.\n  `regress history --help` shows the forms.")]
    Request(String),

    #[error("--versions {range:?}: {reason}.\n  Write it as A..=B (B included) or A..B, for example 0.3.40..=0.3.47.")]
    BadRange { range: String, reason: String },

    #[error(
        "crates.io has no version of {krate} in {range} (yanked versions do not count).\n  \
         `cargo info {krate}` shows the latest one; widen the range."
    )]
    NoPublishedVersion { krate: String, range: String },

    #[error(
        "cargo could not say which versions of {krate} match `{requirement}`:\n{detail}\n  \
         Check the network and the registry (`cargo info {krate}`), then run again."
    )]
    Registry {
        krate: String,
        requirement: String,
        detail: String,
    },

    #[error(transparent)]
    Store(#[from] super::store::StoreError),

    #[error(transparent)]
    Revision(Box<crate::program::RevisionError>),

    #[error(transparent)]
    Line(Box<crate::program::LineError>),

    #[error(transparent)]
    Source(Box<regress_source::SourceError>),

    #[error(transparent)]
    Measure(#[from] crate::MeasureError),

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
}

crate::program::boxed_from!(
    HistoryError: Revision(crate::program::RevisionError),
    Line(crate::program::LineError),
    Source(regress_source::SourceError)
);
