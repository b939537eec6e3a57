//! API-path harnesses for TLS libraries.
//!
//! Each harness counts exactly one path a TLS connection takes, with its
//! setup outside the count (see [`regress_measure::Harness`]). The layout:
//!
//! - [`paths`]: the paths as data (a library and a path kind with its
//!   parameters); names, pins and config profiles follow from the data.
//! - [`registry`]: the list of benchmarks, validated once, as the entries
//!   the measured program, the tests and the benchmarks share.
//! - [`common`]: what every library shares, once: errors with context, the
//!   test PKIs, the fixed time, the record payload, the in-memory transport
//!   and the fairness pins with their one comparison.
//! - one module per library ([`s2n_tls`], [`rustls`], [`openssl`],
//!   [`aws_lc_rs`]), each with one harness per kind of path, and
//!   [`calibration`], the pipeline's own loop of known cost.
//! - [`constant_flow`]: secret-dependent operations under several secrets,
//!   served by the measured program beside the perf harnesses but compared
//!   with each other (`regress constant-flow`), never with baselines.

pub mod aws_lc_rs;
pub mod calibration;
pub mod common;
pub mod constant_flow;
#[cfg(test)]
mod fairness;
pub mod openssl;
pub mod paths;
pub mod registry;
pub mod rustls;
pub mod s2n_tls;
pub mod tls;

/// Puts the versions of the crates this build links into the program, as
/// the section `.regress.libraries` the runner reads for the measurement
/// fingerprint (written by `build.rs`, which says why). For the measured
/// program's `main.rs`, and for test binaries that are measured programs
/// themselves; a target of this package only (it needs its `OUT_DIR`).
#[macro_export]
macro_rules! embed_library_versions {
    () => {
        ::std::arch::global_asm!(include_str!(concat!(
            env!("OUT_DIR"),
            "/library-versions.s"
        )));
    };
}
