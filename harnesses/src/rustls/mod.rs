//! rustls harnesses.
//!
//! Mutually exclusive paths of rustls 0.23 with its aws-lc-rs provider, one
//! harness per kind of path, each parameterised by its path's data
//! (`crate::paths`). Full handshakes and records use the shapes every TLS
//! library shares (`crate::tls`), which [`tls::Rustls`] fills:
//!
//! | path | harness |
//! |---|---|
//! | `config_build` | [`config_build::ConfigBuild`]: a server and a client config from PEM |
//! | `handshake_*`, `mtls_*` | `FullHandshake<Rustls>`: one full TLS 1.3 or TLS 1.2 handshake |
//! | `session_resumption` | [`resumption::SessionResumption`]: one TLS 1.3 handshake resumed from a ticket |
//! | `record_*` | `Records<Rustls>`: 1 MiB of application data, client to server |
//! | `x509_parse_chain`, `x509_verify_chain` | [`x509::X509ParseChain`], [`x509::X509VerifyChain`]: the RSA-4096 test chain, the way rustls's webpki verifier parses and verifies it |
//!
//! # How rustls meets the fairness pins
//!
//! rustls's defaults differ from s2n-tls's (AES-256-GCM first,
//! X25519MLKEM768 first, RSA-PSS-SHA512 first), so every path gets its own
//! crypto provider ([`config::Pinned`]):
//!
//! - **Cipher suites**: exactly one, the path's. **Key exchange**: the pinned
//!   group (secp256r1) only; the ClientHello carries one key share of it, so
//!   there is never a HelloRetryRequest.
//! - **Signature schemes**: the provider maps exactly one TLS signature
//!   scheme to a verification algorithm, the PKI's, so that is the only
//!   scheme either side can offer, request or use.
//! - **Protocol version**: the pinned one only. Extended master secret is
//!   *required* on both sides.
//! - **No resumption** except in `session_resumption`: clients use
//!   `Resumption::disabled()`, servers `NoServerSessionStorage`,
//!   `send_tls13_tickets = 0` and no ticketer.
//! - **Fixed time** ([`config::FixedTime`]) on every config and for x509
//!   verification, and **deterministic randomness** for rustls's own draws
//!   ([`rng::DETERMINISTIC_RANDOM`], test only). aws-lc's randomness
//!   (key shares, RSA blinding, PSS salts, ticket keys) is deterministic
//!   through the build (`.cargo/config.toml`).
//! - **No system trust store**: each client trusts only its PKI's CA, and
//!   sends SNI `localhost`.
//! - **Configs in `Arc`s, built once in `setup`** and shared by every
//!   connection, as a server does.
//! - **The shared in-memory transport** ([`transport`]).
//!
//! Every `check` compares what was negotiated with the pins
//! ([`check`]): version, suite, group, handshake kind (full, resumed), the
//! signature scheme of each CertificateVerify (or TLS 1.2
//! ServerKeyExchange) as the peer's verifier saw it ([`verify`]), the
//! certificates each side received, and SNI.
//!
//! Inside this module the rustls crate is `::rustls`, to keep it apart from
//! the module's own name.

pub mod api;
pub mod check;
pub mod config;
pub mod config_build;
pub mod resumption;
pub mod rng;
pub mod tls;
pub mod transport;
pub mod verify;
pub mod x509;

use regress_measure::program::AnyHarness;

use self::tls::Rustls;
use crate::paths::Path;
use crate::tls::handshake::FullHandshake;
use crate::tls::record::Records;

/// The harness of `path`, or why rustls has none.
pub fn harness(path: &Path) -> Result<Box<dyn AnyHarness>, String> {
    Ok(match *path {
        Path::ConfigBuild => Box::new(config_build::ConfigBuild),
        Path::Handshake(handshake) if handshake.resumption => {
            Box::new(resumption::SessionResumption(handshake))
        }
        Path::Handshake(handshake) => Box::new(FullHandshake::<Rustls>::new(handshake)),
        Path::Record(record) => Box::new(Records::<Rustls>::new(record)),
        Path::X509Parse => Box::new(x509::X509ParseChain),
        Path::X509Verify => Box::new(x509::X509VerifyChain),
        Path::Aead(_) | Path::Spin { .. } => return Err("not a TLS path".into()),
    })
}
