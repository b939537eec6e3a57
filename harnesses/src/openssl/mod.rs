//! OpenSSL harnesses.
//!
//! Mutually exclusive paths of OpenSSL (3.5 from source, [`system`])
//! through the `openssl` 0.10 crate, one harness per kind of path, each
//! parameterised by its path's data (`crate::paths`). Full handshakes and
//! records use the shapes every TLS library shares (`crate::tls`), which
//! [`tls::OpenSsl`] fills:
//!
//! | path | harness |
//! |---|---|
//! | `config_build` | [`config_build::ConfigBuild`]: a server and a client `SslContext` from PEM |
//! | `handshake_*`, `mtls_*` | `FullHandshake<OpenSsl>`: one full TLS 1.3 or TLS 1.2 handshake |
//! | `session_resumption` | [`resumption::SessionResumption`]: one TLS 1.3 handshake resumed from a ticket |
//! | `record_*` | `Records<OpenSsl>`: 1 MiB of application data, client to server |
//! | `x509_parse_chain` | [`x509::X509ParseChain`]: decoding the RSA leaf and CA certificates from DER |
//! | `x509_verify_chain` | [`x509::X509VerifyChain`]: verifying the RSA leaf against the CA |
//!
//! # How OpenSSL meets the fairness pins
//!
//! OpenSSL alone would pick X25519 and AES-256-GCM. Every context is built
//! from its path's profile ([`context`]): the pinned version (min = max),
//! suite, group and exactly one signature scheme on both sides; no session
//! cache, `SSL_OP_NO_TICKET` and no TLS 1.3 tickets anywhere but
//! `session_resumption` (exactly one ticket per handshake there); the
//! extended master secret in TLS 1.2 (OpenSSL's default, asserted); no
//! system trust store (`set_default_verify_paths` is never called, a
//! verifying side trusts a fresh `X509Store` holding only its PKI's CA);
//! clients send `localhost` as SNI and verify it as the certificate's host
//! name. Every `check` asserts what was negotiated ([`check`]).
//!
//! # Determinism
//!
//! Counts must repeat to the instruction, so nothing in a counted path may
//! depend on randomness, time, the machine or addresses:
//!
//! - **A deterministic RNG** ([`rng`]) replaces OpenSSL's DRBG for the whole
//!   process, installed by [`system::init`] before anything draws
//!   randomness. It is **test-only: a process running it has no security at
//!   all.** The runner also hides RDRAND (`OPENSSL_ia32cap`).
//! - **A fixed verification time** ([`context::FIXED_VERIFY_TIME`]) on every
//!   context and store. OpenSSL 3.0 has no clock hook for the rest of TLS:
//!   [`resumption::SessionResumption`] documents how its ticket-age
//!   arithmetic is kept on one branch.
//! - **No configuration file**: [`system::init`] initialises OpenSSL with
//!   `OPENSSL_INIT_NO_LOAD_CONFIG`.
//! - **The shared in-memory transport** ([`transport`]).
//!
//! Every harness reports the library's version string (`OpenSSL 3.5.x
//! ...`) and how it was built through `Harness::runtime_libraries`:
//! `Cargo.lock` only knows the crate versions, and the counts belong to the
//! library.

pub mod check;
pub mod config_build;
pub mod context;
pub mod defaults;
pub mod ffi;
pub mod hostile;
pub mod key_update;
pub mod rejected;
pub mod resumption;
pub mod rng;
pub mod shutdown;
pub mod system;
pub mod tls;
pub mod transport;
pub mod x509;

use regress_measure::program::AnyHarness;

pub use self::system::supports_mlkem;

use self::tls::OpenSsl;
use crate::paths::{NoHarness, Path};
use crate::tls::handshake::FullHandshake;
use crate::tls::record::Records;

/// The harness of `path`, or why OpenSSL has none.
pub fn harness(path: &Path) -> Result<Box<dyn AnyHarness>, NoHarness> {
    Ok(match *path {
        Path::ConfigBuild => Box::new(config_build::ConfigBuild),
        Path::Handshake(handshake) if handshake.resumption.is_some() => {
            Box::new(resumption::SessionResumption(handshake))
        }
        Path::Handshake(handshake) => Box::new(FullHandshake::<OpenSsl>::new(handshake)),
        Path::Record(record) => Box::new(Records::<OpenSsl>::new(record)),
        Path::Rejected => Box::new(crate::tls::rejected::RejectedHandshake::<OpenSsl>::new()),
        Path::Shutdown => Box::new(crate::tls::shutdown::Shutdown::<OpenSsl>::new()),
        Path::Defaults => Box::new(crate::tls::defaults::DefaultHandshake::<OpenSsl>::new()),
        Path::X509Parse => Box::new(x509::X509ParseChain),
        Path::X509Verify => Box::new(x509::X509VerifyChain),
        Path::KeyUpdate => Box::new(crate::tls::key_update::KeyUpdates::<OpenSsl>::new()),
        Path::Feature(_) => return Err(NoHarness::OnlyS2nTls),
        Path::Hostile(input) => crate::tls::hostile::harness::<OpenSsl>(input),
        Path::Aead(_) | Path::Spin { .. } => return Err(NoHarness::NotTls),
    })
}
