//! A TLS library's git checkout as the command line names it
//! (`--library NAME=PATH`), checked at the edge before any request is made.

use std::path::PathBuf;

use regress_source::Library;

/// `--library NAME=PATH`: a library regress builds from source and the
/// folder of its git checkout.
#[derive(Debug, Clone)]
pub struct LibraryCheckout {
    pub library: &'static Library,
    pub path: PathBuf,
    /// `NAME=PATH` as the user wrote it, for messages.
    pub spec: String,
}
