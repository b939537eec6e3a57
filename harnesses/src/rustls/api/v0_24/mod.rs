//! rustls 0.24.0-dev (feature `rustls-0-24`) with the `rustls-aws-lc-rs`
//! provider crate: `ServerVerifier`/`ClientVerifier`, identities instead of
//! certificate lists, the version pinned by the suites alone, tickets from
//! the provider's `TicketerFactory`, and received TLS data in a buffer the
//! caller owns (`VecInput`).
//!
//! The release on crates.io (0.24.0-dev.1) and rustls main after it (still
//! versioned 0.24.0-dev.1) differ in their IO and in what a verifier
//! returns; `release` and `main` hold those differences.

use std::borrow::Cow;
use std::sync::Arc;

use ::rustls024::client::danger::{
    HandshakeSignatureValid, ServerIdentity, ServerVerifier, SignatureVerificationInput,
};
/// A TLS 1.2 session as the client keeps it.
pub use ::rustls024::client::Tls12Session;
use ::rustls024::client::{ClientSessionKey, Tls13Session};
pub use ::rustls024::client::{
    ClientSessionStore, Resumption, Tls12Resumption, WantsClientCert, WebPkiServerVerifier,
};
use ::rustls024::crypto::kx::{NamedGroup, SupportedKxGroup};
use ::rustls024::crypto::{CertificateIdentity, Identity};
pub use ::rustls024::crypto::{
    CryptoProvider, GetRandomFailed, SecureRandom, SignatureScheme, WebPkiSupportedAlgorithms,
};
use ::rustls024::enums::CertificateType;
pub use ::rustls024::enums::ProtocolVersion;
pub use ::rustls024::pki_types;
use ::rustls024::server::danger::ClientVerifier as ClientVerifierTrait;
use ::rustls024::server::Tls13Tickets;
pub use ::rustls024::server::{
    NoServerSessionStorage, ServerSessionKey, StoresServerSessions, WantsServerCert,
    WebPkiClientVerifier,
};
pub use ::rustls024::time_provider::TimeProvider;
pub use ::rustls024::DigitallySignedStruct;
pub use ::rustls024::{
    ClientConfig, ClientConnection, ConfigBuilder, ConnectionOutputs as Outputs, Error,
    HandshakeKind, RootCertStore, ServerConfig, ServerConnection, WantsVerifier,
};
use ::rustls024::{DistinguishedName, Tls12CipherSuite, Tls13CipherSuite};
use pki_types::{
    CertificateDer, PrivateKeyDer, ServerName, SignatureVerificationAlgorithm, UnixTime,
};
use regress_measure::HarnessError;
use rustls_aws_lc_rs::{self as provider, cipher_suite, kx_group};
/// The webpki rustls 0.24 verifies with.
pub use webpki104 as webpki;
pub use webpki104::ExtendedKeyUsage as Eku;

use crate::common::error::{ensure, Context as _};
use crate::common::pins::TlsVersion;
use crate::common::pins::{CipherSuite, NamedGroup as Group, Pins, SignatureScheme as Scheme};
use crate::paths::Resumption as Sessions;
use crate::rustls::resumption::{SessionCache, TicketQueue};
use crate::rustls::verify::Noting;

#[cfg(not(feature = "rustls-0-24-main"))]
#[macro_use]
mod release;
#[cfg(not(feature = "rustls-0-24-main"))]
pub use release::*;

#[cfg(feature = "rustls-0-24-main")]
#[macro_use]
mod main;
#[cfg(feature = "rustls-0-24-main")]
pub use main::*;

/// A TLS 1.3 ticket as a client keeps it.
pub type Ticket = Tls13Session;
/// The client-certificate verifier an mTLS server wraps.
pub type ClientVerifier = WebPkiClientVerifier;
/// What a handshake-signature check returns.
pub type Verified = Result<HandshakeSignatureValid, Error>;
/// The server identity the x509 harnesses verify: the leaf.
pub type LeafIdentity = Identity<'static>;

/// The aws-lc-rs provider's implementation of a pinned suite: TLS 1.2 and
/// TLS 1.3 suites are separate lists, and a provider with suites of one
/// version only negotiates that version.
fn suites(
    suite: CipherSuite,
) -> (
    &'static [&'static Tls12CipherSuite],
    &'static [&'static Tls13CipherSuite],
) {
    static TLS13_AES_128: [&Tls13CipherSuite; 1] = [cipher_suite::TLS13_AES_128_GCM_SHA256];
    static TLS13_AES_256: [&Tls13CipherSuite; 1] = [cipher_suite::TLS13_AES_256_GCM_SHA384];
    static TLS13_CHACHA20: [&Tls13CipherSuite; 1] = [cipher_suite::TLS13_CHACHA20_POLY1305_SHA256];
    static TLS12_AES_128: [&Tls12CipherSuite; 1] =
        [cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256];
    static TLS12_AES_256: [&Tls12CipherSuite; 1] =
        [cipher_suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384];
    static TLS12_CHACHA20: [&Tls12CipherSuite; 1] =
        [cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256];
    match suite {
        CipherSuite::Tls13Aes128GcmSha256 => (&[], &TLS13_AES_128),
        CipherSuite::Tls13Aes256GcmSha384 => (&[], &TLS13_AES_256),
        CipherSuite::Tls13ChaCha20Poly1305Sha256 => (&[], &TLS13_CHACHA20),
        CipherSuite::EcdheRsaAes128GcmSha256 => (&TLS12_AES_128, &[]),
        CipherSuite::EcdheRsaAes256GcmSha384 => (&TLS12_AES_256, &[]),
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => (&TLS12_CHACHA20, &[]),
        // rustls implements no CBC suite: a provider without suites, which
        // its config builder refuses.
        CipherSuite::EcdheRsaAes128CbcSha | CipherSuite::DheRsaAes128GcmSha256 => (&[], &[]),
    }
}

/// The aws-lc-rs provider's implementation of a pinned group.
fn group(group: Group) -> Option<&'static dyn SupportedKxGroup> {
    match group {
        Group::Secp256r1 => Some(kx_group::SECP256R1),
        Group::X25519 => Some(kx_group::X25519),
        Group::X25519MlKem768 => Some(kx_group::X25519MLKEM768),
        // rustls has no TLS 1.2 DHE.
        Group::Ffdhe2048 => None,
    }
}

/// The algorithms certificate signatures are verified with: the provider's
/// default list, in its order (`rustls-aws-lc-rs`'s `SUPPORTED_SIG_ALGS`,
/// which 0.24 no longer lets others read).
static CERTIFICATE_ALGORITHMS: &[&dyn SignatureVerificationAlgorithm] = &[
    provider::ECDSA_P256_SHA256,
    provider::ECDSA_P256_SHA384,
    provider::ECDSA_P256_SHA512,
    provider::ECDSA_P384_SHA256,
    provider::ECDSA_P384_SHA384,
    provider::ECDSA_P384_SHA512,
    provider::ECDSA_P521_SHA256,
    provider::ECDSA_P521_SHA384,
    provider::ECDSA_P521_SHA512,
    provider::ED25519,
    provider::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
    provider::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
    provider::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
    provider::RSA_PKCS1_2048_8192_SHA256,
    provider::RSA_PKCS1_2048_8192_SHA384,
    provider::RSA_PKCS1_2048_8192_SHA512,
    provider::RSA_PKCS1_2048_8192_SHA256_ABSENT_PARAMS,
    provider::RSA_PKCS1_2048_8192_SHA384_ABSENT_PARAMS,
    provider::RSA_PKCS1_2048_8192_SHA512_ABSENT_PARAMS,
];

/// The certificate algorithms and the pinned scheme alone, verified with
/// the provider's algorithm for it.
fn algorithms(scheme: Scheme) -> WebPkiSupportedAlgorithms {
    type Entry = (
        SignatureScheme,
        &'static [&'static dyn SignatureVerificationAlgorithm],
    );
    static RSA_PSS_RSAE_SHA256: [Entry; 1] = [(
        SignatureScheme::RSA_PSS_SHA256,
        &[provider::RSA_PSS_2048_8192_SHA256_LEGACY_KEY],
    )];
    static ECDSA_SECP256R1_SHA256: [Entry; 1] = [(
        SignatureScheme::ECDSA_NISTP256_SHA256,
        &[provider::ECDSA_P256_SHA256],
    )];
    static RSA_PKCS1_SHA256: [Entry; 1] = [(
        SignatureScheme::RSA_PKCS1_SHA256,
        &[provider::RSA_PKCS1_2048_8192_SHA256],
    )];
    let mapping: &'static [Entry] = match scheme {
        Scheme::RsaPssRsaeSha256 => &RSA_PSS_RSAE_SHA256,
        Scheme::EcdsaSecp256r1Sha256 => &ECDSA_SECP256R1_SHA256,
        Scheme::RsaPkcs1Sha256 => &RSA_PKCS1_SHA256,
    };
    match WebPkiSupportedAlgorithms::new(CERTIFICATE_ALGORITHMS, mapping) {
        Ok(algorithms) => algorithms,
        // Both tables are non-empty constants.
        Err(error) => unreachable!("the pinned scheme tables are invalid: {error:?}"),
    }
}

/// The aws-lc-rs provider with exactly the pinned suite (and so version),
/// group and signature scheme, and `random`; its key provider and ticketer
/// factory.
pub fn pinned_provider(
    pins: &Pins,
    groups: &[Group],
    random: &'static dyn SecureRandom,
) -> CryptoProvider {
    let base = provider::DEFAULT_PROVIDER;
    let (tls12, tls13) = suites(pins.suite);
    CryptoProvider {
        tls12_cipher_suites: Cow::Borrowed(tls12),
        tls13_cipher_suites: Cow::Borrowed(tls13),
        kx_groups: Cow::Owned(groups.iter().filter_map(|g| group(*g)).collect()),
        signature_verification_algorithms: algorithms(pins.scheme),
        secure_random: random,
        key_provider: base.key_provider,
        ticketer_factory: base.ticketer_factory,
    }
}

/// The aws-lc-rs provider's defaults, drawing from `random`.
pub fn default_provider(random: &'static dyn SecureRandom) -> CryptoProvider {
    CryptoProvider {
        secure_random: random,
        ..provider::DEFAULT_PROVIDER
    }
}

/// A server config builder on `provider` and `time`: 0.24 offers the
/// versions its provider has suites for.
pub fn default_server_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
) -> Result<ConfigBuilder<ServerConfig, WantsVerifier>, HarnessError> {
    Ok(ServerConfig::builder_with_details(
        provider.clone(),
        time.clone(),
    ))
}

/// A client config builder on `provider` and `time`.
pub fn default_client_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
) -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, HarnessError> {
    Ok(ClientConfig::builder_with_details(
        provider.clone(),
        time.clone(),
    ))
}

/// The signature verification algorithms of `provider`, for webpki.
pub fn all_algorithms(
    _provider: &CryptoProvider,
) -> &'static [&'static dyn SignatureVerificationAlgorithm] {
    CERTIFICATE_ALGORITHMS
}

/// rustls 0.24 has no version list: a provider offers the versions it has
/// suites for. Checks that `provider` has suites of `pins`'s version only.
fn check_version(provider: &CryptoProvider, pins: &Pins) -> Result<(), HarnessError> {
    let versions = (
        !provider.tls12_cipher_suites.is_empty(),
        !provider.tls13_cipher_suites.is_empty(),
    );
    let expected = match pins.version {
        TlsVersion::Tls12 => (true, false),
        TlsVersion::Tls13 => (false, true),
    };
    ensure(versions == expected, || {
        format!(
            "the provider's suites (TLS 1.2, TLS 1.3: {versions:?}) do not pin {:?}",
            pins.version
        )
    })
}

/// A server config builder on `provider` and `time`, checked to offer
/// `pins`'s version only.
pub fn server_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
    pins: &Pins,
) -> Result<ConfigBuilder<ServerConfig, WantsVerifier>, HarnessError> {
    check_version(provider, pins)?;
    Ok(ServerConfig::builder_with_details(
        provider.clone(),
        time.clone(),
    ))
}

/// A client config builder on `provider` and `time`, checked to offer
/// `pins`'s version only.
pub fn client_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
    pins: &Pins,
) -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, HarnessError> {
    check_version(provider, pins)?;
    Ok(ClientConfig::builder_with_details(
        provider.clone(),
        time.clone(),
    ))
}

/// rustls's webpki verifier of servers, trusting `roots`.
pub fn server_verifier(
    roots: Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, HarnessError> {
    let verifier = WebPkiServerVerifier::builder(roots, provider)
        .build()
        .context("building the server-certificate verifier")?;
    Ok(Arc::new(verifier))
}

/// rustls's webpki verifier of clients (a certificate required), trusting
/// `roots`.
pub fn client_verifier(
    roots: Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<ClientVerifier>, HarnessError> {
    let verifier = WebPkiClientVerifier::builder(roots, provider)
        .build()
        .context("building the client-certificate verifier")?;
    Ok(Arc::new(verifier))
}

/// A chain as rustls 0.24 takes it.
fn identity(chain: Vec<CertificateDer<'static>>) -> Result<Arc<Identity<'static>>, Error> {
    Ok(Arc::new(Identity::from_cert_chain(chain)?))
}

/// The server's chain and key.
pub fn with_single_cert(
    builder: ConfigBuilder<ServerConfig, WantsServerCert>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ServerConfig, Error> {
    builder.with_single_cert(identity(chain)?, key)
}

/// The mTLS client's chain and key.
pub fn with_client_auth_cert(
    builder: ConfigBuilder<ClientConfig, WantsClientCert>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ClientConfig, Error> {
    builder.with_client_auth_cert(identity(chain)?, key)
}

/// A client without a certificate.
pub fn with_no_client_auth(
    builder: ConfigBuilder<ClientConfig, WantsClientCert>,
) -> Result<ClientConfig, Error> {
    builder.with_no_client_auth()
}

/// How the server keeps sessions: with [`Sessions::Ticket`], stateless
/// tickets from the provider's ticketer factory (a rotating RFC 5077
/// ticketer, as 0.23's `Ticketer`); with [`Sessions::Cache`], no ticketer,
/// so the TLS 1.3 ticket is the key of its session storage; one ticket per
/// handshake either way. `None`: no tickets.
pub fn set_tickets(
    config: &mut ServerConfig,
    sessions: Option<Sessions>,
) -> Result<(), HarnessError> {
    let count = usize::from(sessions.is_some());
    config.ticketer = if sessions == Some(Sessions::Ticket) {
        let factory = config.provider().ticketer_factory;
        Some(factory.ticketer().context("creating the ticketer")?)
    } else {
        None
    };
    config.send_tls13_tickets = Tls13Tickets {
        default: count,
        max: count,
    };
    Ok(())
}

/// The SNI a server received.
pub fn sni(server: &ServerConnection) -> Option<&str> {
    server.server_name().map(|name| name.as_ref())
}

/// The chain a side received from its peer.
pub fn peer_chain(outputs: &Outputs) -> Option<Vec<CertificateDer<'static>>> {
    match peer_identity(outputs)? {
        Identity::X509(CertificateIdentity {
            end_entity,
            intermediates,
            ..
        }) => Some(
            std::iter::once(end_entity)
                .chain(intermediates)
                .cloned()
                .collect(),
        ),
        _ => None,
    }
}

/// A server identity (the leaf alone) for [`verify_server`].
pub fn server_identity(leaf: &CertificateDer<'static>) -> LeafIdentity {
    Identity::X509(CertificateIdentity::new(leaf.clone(), Vec::new()))
}

/// Verifies `identity` (the leaf) for `name` at `now`, as a rustls client
/// does in a handshake (no intermediates, no OCSP response).
pub fn verify_server(
    verifier: &WebPkiServerVerifier,
    identity: &LeafIdentity,
    name: &ServerName<'static>,
    now: UnixTime,
) -> Result<ServerVerified, Error> {
    verifier.verify_identity(&ServerIdentity::new(identity, name, now))
}

/// Notes the scheme of `input`'s signature if `verified`.
fn noted<V: ?Sized>(
    noting: &Noting<V>,
    input: &SignatureVerificationInput<'_>,
    verified: Verified,
) -> Verified {
    noting.noted(input.signature, verified)
}

impl ServerVerifier for Noting<WebPkiServerVerifier> {
    identity_check!(client, ServerIdentity);

    fn verify_tls12_signature(&self, input: &SignatureVerificationInput<'_>) -> Verified {
        noted(self, input, self.inner.verify_tls12_signature(input))
    }

    fn verify_tls13_signature(&self, input: &SignatureVerificationInput<'_>) -> Verified {
        noted(self, input, self.inner.verify_tls13_signature(input))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn request_ocsp_response(&self) -> bool {
        self.inner.request_ocsp_response()
    }

    fn supported_certificate_types(&self) -> &'static [CertificateType] {
        self.inner.supported_certificate_types()
    }

    fn root_hint_subjects(&self) -> Option<Arc<[DistinguishedName]>> {
        self.inner.root_hint_subjects()
    }

    fn hash_config(&self, h: &mut dyn std::hash::Hasher) {
        self.inner.hash_config(h);
    }
}

impl ClientVerifierTrait for Noting<ClientVerifier> {
    identity_check!(server, ClientIdentity);

    fn verify_tls12_signature(&self, input: &SignatureVerificationInput<'_>) -> Verified {
        noted(self, input, self.inner.verify_tls12_signature(input))
    }

    fn verify_tls13_signature(&self, input: &SignatureVerificationInput<'_>) -> Verified {
        noted(self, input, self.inner.verify_tls13_signature(input))
    }

    fn root_hint_subjects(&self) -> Arc<[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn supported_certificate_types(&self) -> &'static [CertificateType] {
        self.inner.supported_certificate_types()
    }
}

ticket_queue_store!(ClientSessionKey, Tls12Session);
session_cache_store!(ServerSessionKey<'_>, ServerSessionKey<'_>);

/// The IANA codes of `provider`'s cipher suites, TLS 1.2 then TLS 1.3.
#[cfg(test)]
pub fn suites_of(provider: &CryptoProvider) -> Vec<u16> {
    let tls12 = provider.tls12_cipher_suites.iter().map(|s| s.common.suite);
    let tls13 = provider.tls13_cipher_suites.iter().map(|s| s.common.suite);
    tls12.chain(tls13).map(u16::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Handshake;
    use crate::rustls::config::FixedTime;
    use crate::rustls::rng::DETERMINISTIC_RANDOM;

    /// rustls 0.24 pins the version through the suites alone: the builders
    /// refuse a provider that would offer another version than the pinned
    /// one, or both.
    #[test]
    fn builders_refuse_a_provider_of_another_version() {
        let tls13 = Handshake::RSA4096.profile().pins;
        let tls12 = Handshake::ALL[4].profile().pins;
        let time: Arc<dyn TimeProvider> = Arc::new(FixedTime);
        let only12 = Arc::new(pinned_provider(
            &tls12,
            &[tls12.group],
            &DETERMINISTIC_RANDOM,
        ));
        let only13 = Arc::new(pinned_provider(
            &tls13,
            &[tls13.group],
            &DETERMINISTIC_RANDOM,
        ));
        let mut both = pinned_provider(&tls13, &[tls13.group], &DETERMINISTIC_RANDOM);
        both.tls12_cipher_suites = only12.tls12_cipher_suites.clone();
        let both = Arc::new(both);
        for (provider, pins, ok) in [
            (&only13, &tls13, true),
            (&only12, &tls12, true),
            (&only12, &tls13, false),
            (&only13, &tls12, false),
            (&both, &tls13, false),
            (&both, &tls12, false),
        ] {
            assert_eq!(server_builder(provider, &time, pins).is_ok(), ok);
            let client = client_builder(provider, &time, pins);
            match client {
                Ok(_) => assert!(ok),
                Err(error) => {
                    assert!(!ok);
                    assert!(error.to_string().contains("do not pin"), "{error}");
                }
            }
        }
    }

    /// The certificate algorithms are the provider's default list: every one
    /// the provider's own verifier uses for the test PKIs is there.
    #[test]
    fn certificate_algorithms_cover_the_test_pkis() {
        for algorithm in [
            provider::RSA_PKCS1_2048_8192_SHA256,
            provider::ECDSA_P256_SHA256,
            provider::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
        ] {
            let id = (algorithm.public_key_alg_id(), algorithm.signature_alg_id());
            assert!(CERTIFICATE_ALGORITHMS
                .iter()
                .any(|a| (a.public_key_alg_id(), a.signature_alg_id()) == id));
        }
        assert_eq!(CERTIFICATE_ALGORITHMS.len(), 19);
    }
}
