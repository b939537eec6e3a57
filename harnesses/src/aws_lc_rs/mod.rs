//! aws-lc-rs harnesses: raw AEAD calls, without TLS around them.
//!
//! aws-lc-rs wraps the same aws-lc that s2n-tls (and rustls's default
//! provider) use, so these counts are the floor under the record paths:
//! what one AES-GCM seal or open of a given size costs before any record
//! layer, buffering or I/O is added.
//!
//! One harness, [`aead::AeadCalls`], parameterised by its `aead_*` path's
//! data (`crate::paths::Aead`: cipher, direction, message length). The
//! library's correctness against published known answers is a unit test
//! (`vectors`).

pub mod aead;
#[cfg(test)]
mod vectors;

use regress_measure::program::AnyHarness;

use crate::paths::{NoHarness, Path};

/// The harness of `path`, or why aws-lc-rs has none.
pub fn harness(path: &Path) -> Result<Box<dyn AnyHarness>, NoHarness> {
    match *path {
        Path::Aead(aead) => Ok(Box::new(aead::AeadCalls(aead))),
        _ => Err(NoHarness::OnlyAead),
    }
}
