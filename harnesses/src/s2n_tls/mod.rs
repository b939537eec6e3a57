//! s2n-tls harnesses.
//!
//! Mutually exclusive paths of s2n-tls 0.3.42 to 0.3.47 (`Cargo.lock`
//! holds 0.3.47; 0.3.42 is the aws/s2n-tls repository's HEAD of
//! 2026-08-07, checked by building from it), one harness per kind of path,
//! each parameterised by its path's data (`crate::paths`). Full handshakes
//! and records use the shapes every TLS library shares (`crate::tls`),
//! which [`tls::S2nTls`] fills:
//!
//! | path | harness | what is counted |
//! |---|---|---|
//! | `config_build` | [`config_build::ConfigBuild`] | building a server-and-client `Config` from PEM |
//! | `handshake_*`, `mtls_*` | `FullHandshake<S2nTls>` ([`tls`]) | one full handshake: TLS 1.3 with each PKI, with and without client certificates; TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256 with extended master secret |
//! | `session_resumption` | [`resumption::SessionResumption`] | a TLS 1.3 handshake resumed from a ticket |
//! | `record_*` | `Records<S2nTls>` ([`tls`]) | 1 MiB of application data, client to server, in 16 KiB or 1 KiB writes |
//! | `key_update` | `KeyUpdates<S2nTls>` ([`key_update`]) | one KeyUpdate each way on an established TLS 1.3 connection, and a 64-byte record each way under the new keys |
//! | `psk_handshake` | [`psk::PskHandshake`] | a TLS 1.3 handshake with an external PSK (psk_dhe_ke): binder, secp256r1 key exchange, no certificate |
//! | `connection_serialize` | [`serialize::SerializeRoundTrip`] | an established TLS 1.3 connection serialized and deserialized into fresh connections, both sides |
//! | `async_private_key` | [`async_pkey::AsyncPrivateKeyHandshake`] | a full ECDSA P-256 handshake whose server signs through the private-key callback |
//! | `client_hello_callback` | [`client_hello::ClientHelloHandshake`] | a full ECDSA P-256 handshake whose server's ClientHello callback reads the server name |
//! | `connection_info` | [`connection_info::ConnectionInfo`] | after an mTLS ECDSA P-256 handshake, the server's getters an access log reads and the client's identity extension |
//!
//! There are no `x509_*` harnesses for s2n-tls: the s2n-tls crate has no
//! standalone X.509 API (certificates are only parsed and verified inside
//! `Config` building and the handshake), so the certificate work is part of
//! `config_build` and the handshakes.
//!
//! # How s2n-tls meets the fairness pins
//!
//! Every path pins a version, a suite, secp256r1 and its PKI's signature
//! scheme (`crate::common::pins`); session tickets and resumption are off
//! everywhere but `session_resumption`, and no server has a session cache.
//! The feature paths (`psk_handshake`, `connection_serialize`,
//! `async_private_key`, `client_hello_callback`, `connection_info`;
//! [`features`]) are
//! s2n-tls's alone: no other library is measured on them.
//! There is no system trust store (`with_system_certs(false)` everywhere):
//! peers trust only their PKI's test CA. [`check`] maps what each side
//! reports to the shared comparison and adds what only s2n-tls reports.
//!
//! # Security policies
//!
//! s2n-tls 0.3.47 has no security-policy builder: a policy is one of the
//! library's named tables. Numbered policies never change, so every harness
//! uses numbered ones ([`config::policies`] picks them from the pins). Two
//! peers of s2n-tls negotiate the *server's* most preferred mutually
//! supported cipher suite, group and signature scheme.
//!
//! | policy | used by | why |
//! |---|---|---|
//! | [`config::PINNED_POLICY`] `20240503` (`default_tls13` in 0.3.47) | both sides of every TLS 1.3 path except as below; the server of TLS 1.2 handshakes | first TLS 1.3 suite AES-128-GCM-SHA256, first group secp256r1, so one round trip (no HelloRetryRequest); with an RSA (rsaEncryption) key its first usable scheme is rsa_pss_rsae_sha256, with a P-256 key ecdsa_secp256r1_sha256 |
//! | [`config::TLS12_CLIENT_POLICY`] `20240501` | the client of TLS 1.2 handshakes | TLS 1.2 only (no TLS 1.3 suites), offers ECDHE-RSA-AES128-GCM-SHA256, secp256r1 and rsa_pss_rsae_sha256 |
//! | [`config::AES256_SERVER_POLICY`] `20190802` | the server of AES-256-GCM records | the only numbered policies whose TLS 1.3 preference starts with AES-256-GCM-SHA384 and whose groups start with secp256r1 |
//! | [`config::CHACHA20_POLICY`] `20201021` | both sides of ChaCha20-Poly1305 records | see below: **TLS 1.2** |
//! | [`config::CBC_POLICY`] `20170718` | both sides of CBC records | TLS 1.2 at most, ECDHE-RSA-AES128-SHA first, secp256r1 first; its schemes (2014's) have no PSS, so the CBC paths pin rsa_pkcs1_sha256 for every library |
//!
//! **ChaCha20-Poly1305 cannot be negotiated in TLS 1.3 between two s2n-tls
//! 0.3.47 peers.** Every named policy that offers TLS 1.3 lists
//! TLS_CHACHA20_POLY1305_SHA256 after both AES-GCM suites, the server picks
//! by its own preference, and "ChaCha20 boosting" (a server preferring
//! ChaCha20 when the client lists it first) needs a client policy that lists
//! ChaCha20 first, and the only such policies (`20190122`, `20201021`) offer
//! no TLS 1.3 suite at all. So s2n-tls's ChaCha20 record paths run TLS 1.2
//! with ECDHE-RSA-CHACHA20-POLY1305 (RFC 7905), their check asserts TLS 1.2,
//! and they are named `record_tls12_chacha20poly1305_*` so that no
//! comparison lines them up with the TLS 1.3 `record_chacha20poly1305_*`
//! paths of the other libraries. Its record protection is the same AEAD with
//! the same per-record nonce construction as TLS 1.3's; the record differs in
//! the additional data (13 bytes instead of 5) and in carrying no inner
//! content type (21 bytes of overhead per record instead of 22). Compare them
//! with other libraries' TLS 1.3 ChaCha20 records only with that in mind.
//!
//! # Determinism
//!
//! - **Fixed clocks** on every config ([`config::FixedWallClock`],
//!   [`config::FixedMonotonicClock`]), and a fixed session-ticket key.
//! - **Self-service blinding** on every connection ([`transport::Pair::new`]).
//! - **The shared in-memory transport** ([`transport`]).
//!
//! The rest of the determinism recipe (aws-lc's deterministic RNG, hiding
//! RDRAND, a clean environment) belongs to the build and the runner, not to
//! this code; see `.cargo/config.toml`.

pub mod async_pkey;
pub mod check;
pub mod client_hello;
pub mod config;
pub mod config_build;
pub mod connection_info;
pub mod defaults;
pub mod features;
pub mod hostile;
pub mod key_update;
pub mod psk;
pub mod rejected;
pub mod resumption;
pub mod serialize;
pub mod shutdown;
pub mod tls;
pub mod transport;

use regress_measure::program::AnyHarness;

use self::tls::S2nTls;
use crate::paths::{NoHarness, Path};
use crate::tls::handshake::FullHandshake;
use crate::tls::key_update::KeyUpdates;
use crate::tls::record::Records;

/// The harness of `path`, or why s2n-tls has none.
pub fn harness(path: &Path) -> Result<Box<dyn AnyHarness>, NoHarness> {
    Ok(match *path {
        Path::ConfigBuild => Box::new(config_build::ConfigBuild),
        Path::Handshake(handshake) => {
            config::policies(&handshake.profile()).map_err(NoHarness::Unpinnable)?;
            if handshake.resumption.is_some() {
                Box::new(resumption::SessionResumption(handshake))
            } else {
                Box::new(FullHandshake::<S2nTls>::new(handshake))
            }
        }
        Path::Record(record) => {
            config::policies(&record.profile()).map_err(NoHarness::Unpinnable)?;
            Box::new(Records::<S2nTls>::new(record))
        }
        Path::Rejected => Box::new(crate::tls::rejected::RejectedHandshake::<S2nTls>::new()),
        Path::Shutdown => Box::new(crate::tls::shutdown::Shutdown::<S2nTls>::new()),
        Path::Defaults => Box::new(crate::tls::defaults::DefaultHandshake::<S2nTls>::new()),
        Path::X509Parse | Path::X509Verify => return Err(NoHarness::NoX509Api),
        Path::KeyUpdate => Box::new(KeyUpdates::<S2nTls>::new()),
        Path::Feature(feature) => return features::harness(feature),
        Path::Hostile(input) => crate::tls::hostile::harness::<S2nTls>(input),
        Path::Aead(_) | Path::Spin { .. } => return Err(NoHarness::NotTls),
    })
}
