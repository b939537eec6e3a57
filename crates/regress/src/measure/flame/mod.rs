//! Where a run's instructions went, as a flame graph: Callgrind's call
//! graph ([`graph`]), call paths rebuilt from it ([`fold`], which says how
//! and where that is approximate), and the pictures `inferno` draws from
//! them ([`svg`]): a plain one per measurement, and one of head coloured
//! by its change against base per harness of a diff.
//!
//! The runner keeps each Callgrind measurement's folded stacks beside its
//! profile (`<harness>.folded`) and draws `<harness>.flame.svg` from them;
//! a diff draws `<harness>.flame.diff.svg` from its two sides' stacks.

mod fold;
mod graph;
mod svg;

use std::path::{Path, PathBuf};

pub use fold::{fold, from_text, to_text, Folded, FoldedError, FoldedLine, Limits, NOT_FOLLOWED};
pub use graph::{frame, CallGraph, GraphError};
pub use svg::{differential, plain};

use crate::limits;

/// The suffix of a measurement's folded stacks.
pub const FOLDED: &str = ".folded";
/// The suffix of a measurement's flame graph.
pub const PLAIN: &str = ".flame.svg";
/// The suffix of a diff's differential flame graph of a harness.
pub const DIFFERENTIAL: &str = ".flame.diff.svg";

/// Whether measurements keep call paths and draw flame graphs.
pub fn enabled() -> bool {
    std::env::var(crate::env::FLAME_GRAPHS).map_or(true, |value| value.trim() != "off")
}

/// Why a flame graph could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FlameError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a folded-stack file this runner wrote: {reason}.\n  \
         Measure the side again (its measurement predates the call graph, or the file was edited)."
    )]
    BadFolded {
        path: PathBuf,
        #[source]
        reason: FoldedError,
    },
    #[error("inferno could not draw {path}: {source}")]
    Render {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Reads folded stacks a runner wrote.
pub fn read(path: &Path) -> Result<Folded, FlameError> {
    let text =
        limits::read_capped(path, limits::MAX_TOOL_FILE).map_err(|source| FlameError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
    from_text(&text).map_err(|reason| FlameError::BadFolded {
        path: path.to_path_buf(),
        reason,
    })
}

/// Draws an SVG with `draw` and writes it to `path`.
pub fn write_svg(
    path: &Path,
    draw: impl FnOnce() -> std::io::Result<Vec<u8>>,
) -> crate::Result<()> {
    let svg = draw().map_err(|source| FlameError::Render {
        path: path.to_path_buf(),
        source,
    })?;
    crate::atomic_file::write(path, &svg)
}
