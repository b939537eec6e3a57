//! What the harnesses execute, line by line, and what a diff changed that
//! none of them runs.
//!
//! - [`lines`]: the runner keeps, for every harness it measures, the
//!   source lines the counted run executed (`<harness>.lines.json`, any
//!   method, any Valgrind);
//! - [`origin`]: whose source a profile's file is (s2n-tls's C, aws-lc,
//!   rustls, OpenSSL, other Rust crates, Rust's std, this workspace, the
//!   system);
//! - [`source`]: which function each line of a C or Rust file belongs to,
//!   from the source itself (so inlined code counts for its own function);
//! - [`report`]: `regress coverage`, per library and per file;
//! - [`blind`]: the blind spots every diff names: changed functions no
//!   measured harness ran on that side.

pub mod blind;
mod error;
pub mod lines;
pub mod origin;
pub mod report;
pub mod source;

pub use blind::{BlindSpot, BlindSpots, Scope};
pub use error::CoverageError;
pub use lines::Lines;
pub use origin::Origin;
pub use report::{coverage, Coverage, SourceFinder};
