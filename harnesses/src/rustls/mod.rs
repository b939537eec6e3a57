//! rustls harnesses.
//!
//! Mutually exclusive paths of rustls with its aws-lc-rs provider, one
//! harness per kind of path, each parameterised by its path's data
//! (`crate::paths`), for two API generations: rustls 0.23 (the default
//! build) and rustls 0.24.0-dev (feature `rustls-0-24`; see
//! [below](#rustls-024)). Full handshakes and records use the shapes every TLS
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
//!   `Resumption::disabled()`, servers `NoServerSessionStorage`, no TLS 1.3
//!   tickets and no ticketer.
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
//! # rustls 0.24
//!
//! The same harnesses, names, pins and checks build against rustls
//! 0.24.0-dev with `--features harnesses/rustls-0-24` (`Cargo.lock` holds
//! 0.24.0-dev.1 beside 0.23.46; `cargo test` builds 0.23). Only the calls
//! into rustls differ; they live in [`api`], one module per generation
//! ([`api`] says what each provides). What differs in 0.24:
//!
//! - **The provider is a crate of its own**: `rustls-aws-lc-rs` (0.1.0-dev.1
//!   for rustls 0.24.0-dev.1; its 0.24.0-dev.2 requires rustls
//!   0.24.0-dev.2). A `CryptoProvider` has separate `tls12_cipher_suites`
//!   and `tls13_cipher_suites` lists, a `ticketer_factory` (0.23:
//!   `aws_lc_rs::Ticketer::new()`), and no readable default list of
//!   certificate algorithms (`WebPkiSupportedAlgorithms::new`, whose `all`
//!   the harnesses spell out in the provider's order).
//! - **No version list**: the builders take none; a provider offers the
//!   versions it has suites for, so the one pinned suite pins the version
//!   (and the builders check that it does).
//! - **Identities**: a server's chain and key are an `Arc<Identity>` (built
//!   from the chain), a peer's chain is `peer_identity()`, and verifiers
//!   implement `ServerVerifier`/`ClientVerifier`, whose `verify_identity`
//!   checks the chain and whose signature checks take a
//!   `SignatureVerificationInput`.
//! - **Sessions**: a client's session store is keyed by
//!   `ClientSessionKey` (a config hash and the server name), and the
//!   server's ticket count is `Tls13Tickets { default, max }`.
//! - **IO**: the TLS data a connection reads waits in a buffer the caller
//!   owns (`VecInput`), and it reports what it negotiated through
//!   `ConnectionOutputs`.
//! - **webpki** is 0.104.0-alpha.7 (0.23: 0.103), whose end-entity check
//!   takes `&ExtendedKeyUsage`.
//!
//! rustls's `main` moved on after releasing 0.24.0-dev.1 without changing
//! the version (feature `rustls-0-24-main`, picked by `regress-source` from
//! the patched crate's source): from commit d993ef74b, a connection writes
//! its TLS data into a `Vec<u8>` the caller owns (nothing queued inside; a
//! side's buffer is handed to the transport in one write) and hands out
//! received plaintext record by record through a `MessageHandler` (no
//! plaintext buffer inside), and `verify_identity` returns the
//! `VerifiedIdentity` it checked. From commit 86e066192 a record's payload
//! including the 17 bytes of AEAD tag and content type stays within
//! 16 KiB, so on main a 16 KiB write is **two records** (16,367 + 17 bytes):
//! `record_*_16k` counts that change. crates.io's 0.24.0-dev.2 is yet
//! another API (connections as typestates) and is not covered.
//!
//! Inside this module the rustls crate is reached through [`api`]; the
//! crate names are `::rustls` (0.23) and `::rustls024` (0.24).

pub mod api;
pub mod check;
pub mod config;
pub mod config_build;
pub mod defaults;
#[cfg(not(feature = "rustls-0-24"))]
pub mod hostile;
#[cfg(not(feature = "rustls-0-24"))]
pub mod key_update;
#[cfg(not(feature = "rustls-0-24"))]
pub mod rejected;
pub mod resumption;
pub mod rng;
#[cfg(not(feature = "rustls-0-24"))]
pub mod shutdown;
pub mod tls;
pub mod transport;
pub mod verify;
pub mod x509;

use regress_measure::program::AnyHarness;

use self::tls::Rustls;
use crate::paths::{NoHarness, Path};
use crate::tls::handshake::FullHandshake;
use crate::tls::record::Records;

/// The harness of `path`, or why rustls has none.
pub fn harness(path: &Path) -> Result<Box<dyn AnyHarness>, NoHarness> {
    Ok(match *path {
        Path::ConfigBuild => Box::new(config_build::ConfigBuild),
        Path::Handshake(handshake) if handshake.resumption.is_some() => {
            Box::new(resumption::SessionResumption(handshake))
        }
        Path::Handshake(handshake) => Box::new(FullHandshake::<Rustls>::new(handshake)),
        Path::Record(record) => Box::new(Records::<Rustls>::new(record)),
        #[cfg(not(feature = "rustls-0-24"))]
        Path::Rejected => Box::new(crate::tls::rejected::RejectedHandshake::<Rustls>::new()),
        #[cfg(feature = "rustls-0-24")]
        Path::Rejected => return Err(NoHarness::NotYetRustls024),
        #[cfg(not(feature = "rustls-0-24"))]
        Path::Shutdown => Box::new(crate::tls::shutdown::Shutdown::<Rustls>::new()),
        #[cfg(feature = "rustls-0-24")]
        Path::Shutdown => return Err(NoHarness::NotYetRustls024),
        Path::Defaults => Box::new(crate::tls::defaults::DefaultHandshake::<Rustls>::new()),
        Path::X509Parse => Box::new(x509::X509ParseChain),
        Path::X509Verify => Box::new(x509::X509VerifyChain),
        #[cfg(not(feature = "rustls-0-24"))]
        Path::KeyUpdate => Box::new(crate::tls::key_update::KeyUpdates::<Rustls>::new()),
        #[cfg(feature = "rustls-0-24")]
        Path::KeyUpdate => return Err(NoHarness::NotYetRustls024),
        Path::Feature(_) => return Err(NoHarness::OnlyS2nTls),
        #[cfg(not(feature = "rustls-0-24"))]
        Path::Hostile(input) => crate::tls::hostile::harness::<Rustls>(input),
        #[cfg(feature = "rustls-0-24")]
        Path::Hostile(_) => return Err(NoHarness::NotYetRustls024),
        Path::Aead(_) | Path::Spin { .. } => return Err(NoHarness::NotTls),
    })
}
