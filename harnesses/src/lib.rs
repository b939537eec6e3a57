//! API-path harnesses.
//!
//! Each harness counts exactly one path a TLS connection takes, with its
//! setup outside the count (see [`regress_measure::Harness`]). Modules are
//! named after the library they drive; the path is the type. The tests in
//! `tests/perf.rs` give every harness its public name, `<library>::<path>`,
//! which is also its baseline file and output name.

pub mod aws_lc_rs;
pub mod calibration;
pub mod certs;
pub mod openssl;
pub mod registry;
pub mod rustls;
pub mod s2n_tls;
