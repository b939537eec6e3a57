//! rustls 0.23 (the default build): its built-in aws-lc-rs provider,
//! `ServerCertVerifier`/`ClientCertVerifier`, and connections that buffer
//! their own output (`write_tls`) and received plaintext (`reader`).

use std::io::{self, Read as _, Write as _};
use std::ops::DerefMut;
use std::sync::Arc;

use ::rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
/// A TLS 1.2 session as the client keeps it.
pub use ::rustls::client::Tls12ClientSessionValue as Tls12Session;
use ::rustls::client::Tls13ClientSessionValue;
pub use ::rustls::client::{
    ClientSessionStore, Resumption, Tls12Resumption, WantsClientCert, WebPkiServerVerifier,
};
use ::rustls::crypto::aws_lc_rs::{self as provider, cipher_suite, kx_group};
pub use ::rustls::crypto::{CryptoProvider, GetRandomFailed, SecureRandom};
use ::rustls::crypto::{SupportedKxGroup, WebPkiSupportedAlgorithms};
pub use ::rustls::pki_types;
use ::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use ::rustls::server::WebPkiClientVerifier;
pub use ::rustls::server::{NoServerSessionStorage, StoresServerSessions, WantsServerCert};
pub use ::rustls::time_provider::TimeProvider;
pub use ::rustls::DigitallySignedStruct;
pub use ::rustls::{
    ClientConfig, ClientConnection, ConfigBuilder, Error, HandshakeKind, ProtocolVersion,
    RootCertStore, ServerConfig, ServerConnection, SignatureScheme, WantsVerifier,
};
use ::rustls::{
    CommonState, ConnectionCommon, DistinguishedName, NamedGroup, SupportedCipherSuite,
    SupportedProtocolVersion,
};
/// The webpki rustls 0.23 verifies with.
pub use ::webpki;
pub use ::webpki::KeyUsage as Eku;
use pki_types::{
    CertificateDer, PrivateKeyDer, ServerName, SignatureVerificationAlgorithm, UnixTime,
};
use regress_measure::HarnessError;

pub use super::queued::transfer;
use super::queued::{self, Queued};
use crate::common::error::Context as _;
use crate::common::pins::TlsVersion;
use crate::common::pins::{CipherSuite, NamedGroup as Group, Pins, SignatureScheme as Scheme};
use crate::common::transport::Endpoint;
use crate::paths::Resumption as Sessions;
use crate::rustls::resumption::{SessionCache, TicketQueue};
use crate::rustls::verify::Noting;

/// What a connection reports it negotiated.
pub type Outputs = CommonState;
/// A TLS 1.3 ticket as a client keeps it.
pub type Ticket = Tls13ClientSessionValue;
/// What a successful server-certificate verification returns.
pub type ServerVerified = ServerCertVerified;
/// The client-certificate verifier an mTLS server wraps.
pub type ClientVerifier = dyn ClientCertVerifier;
/// What a handshake-signature check returns.
pub type Verified = Result<HandshakeSignatureValid, Error>;
/// The server identity the x509 harnesses verify: the leaf.
pub type LeafIdentity = CertificateDer<'static>;

/// The aws-lc-rs provider's implementation of a pinned suite, if rustls
/// has one (it implements no CBC suite).
fn suite(suite: CipherSuite) -> Option<SupportedCipherSuite> {
    Some(match suite {
        CipherSuite::Tls13Aes128GcmSha256 => cipher_suite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::Tls13Aes256GcmSha384 => cipher_suite::TLS13_AES_256_GCM_SHA384,
        CipherSuite::Tls13ChaCha20Poly1305Sha256 => cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        CipherSuite::EcdheRsaAes128GcmSha256 => cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::EcdheRsaAes256GcmSha384 => cipher_suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => {
            cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
        CipherSuite::EcdheRsaAes128CbcSha | CipherSuite::DheRsaAes128GcmSha256 => return None,
    })
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

/// A provider's scheme mapping: the pinned scheme alone, verified with
/// webpki's algorithm for it.
type MappingEntry = (
    SignatureScheme,
    &'static [&'static dyn SignatureVerificationAlgorithm],
);

fn scheme_mapping(scheme: Scheme) -> &'static [MappingEntry] {
    static RSA_PSS_RSAE_SHA256: [MappingEntry; 1] = [(
        SignatureScheme::RSA_PSS_SHA256,
        &[webpki::aws_lc_rs::RSA_PSS_2048_8192_SHA256_LEGACY_KEY],
    )];
    static ECDSA_SECP256R1_SHA256: [MappingEntry; 1] = [(
        SignatureScheme::ECDSA_NISTP256_SHA256,
        &[webpki::aws_lc_rs::ECDSA_P256_SHA256],
    )];
    static RSA_PKCS1_SHA256: [MappingEntry; 1] = [(
        SignatureScheme::RSA_PKCS1_SHA256,
        &[webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA256],
    )];
    match scheme {
        Scheme::RsaPssRsaeSha256 => &RSA_PSS_RSAE_SHA256,
        Scheme::EcdsaSecp256r1Sha256 => &ECDSA_SECP256R1_SHA256,
        Scheme::RsaPkcs1Sha256 => &RSA_PKCS1_SHA256,
    }
}

/// The aws-lc-rs provider with exactly the pinned suite, group and
/// signature scheme, and `random`. Certificate signatures are verified with
/// the provider's full default list of algorithms. The version is pinned by
/// the builders ([`server_builder`], [`client_builder`]).
pub fn pinned_provider(
    pins: &Pins,
    groups: &[Group],
    random: &'static dyn SecureRandom,
) -> CryptoProvider {
    let base = provider::default_provider();
    CryptoProvider {
        // No suite where rustls has none: its config builder refuses the
        // provider.
        cipher_suites: suite(pins.suite).into_iter().collect(),
        kx_groups: groups.iter().filter_map(|g| group(*g)).collect(),
        signature_verification_algorithms: WebPkiSupportedAlgorithms {
            all: base.signature_verification_algorithms.all,
            mapping: scheme_mapping(pins.scheme),
        },
        secure_random: random,
        key_provider: base.key_provider,
    }
}

/// The aws-lc-rs provider's defaults, drawing from `random`.
pub fn default_provider(random: &'static dyn SecureRandom) -> CryptoProvider {
    CryptoProvider {
        secure_random: random,
        ..provider::default_provider()
    }
}

/// A server config builder on `provider` and `time` with rustls's default
/// protocol versions.
pub fn default_server_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
) -> Result<ConfigBuilder<ServerConfig, WantsVerifier>, HarnessError> {
    ServerConfig::builder_with_details(provider.clone(), time.clone())
        .with_safe_default_protocol_versions()
        .context("the server's default protocol versions")
}

/// A client config builder on `provider` and `time` with rustls's default
/// protocol versions.
pub fn default_client_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
) -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, HarnessError> {
    ClientConfig::builder_with_details(provider.clone(), time.clone())
        .with_safe_default_protocol_versions()
        .context("the client's default protocol versions")
}

/// The signature verification algorithms of `provider`, for webpki.
pub fn all_algorithms(
    provider: &CryptoProvider,
) -> &'static [&'static dyn SignatureVerificationAlgorithm] {
    provider.signature_verification_algorithms.all
}

/// rustls's protocol version for a pinned one.
fn version(version: TlsVersion) -> &'static SupportedProtocolVersion {
    match version {
        TlsVersion::Tls12 => &::rustls::version::TLS12,
        TlsVersion::Tls13 => &::rustls::version::TLS13,
    }
}

/// A server config builder on `provider` and `time`, pinned to `pins`'s
/// version.
pub fn server_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
    pins: &Pins,
) -> Result<ConfigBuilder<ServerConfig, WantsVerifier>, HarnessError> {
    ServerConfig::builder_with_details(provider.clone(), time.clone())
        .with_protocol_versions(&[version(pins.version)])
        .context("pinning the server's protocol version")
}

/// A client config builder on `provider` and `time`, pinned to `pins`'s
/// version.
pub fn client_builder(
    provider: &Arc<CryptoProvider>,
    time: &Arc<dyn TimeProvider>,
    pins: &Pins,
) -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, HarnessError> {
    ClientConfig::builder_with_details(provider.clone(), time.clone())
        .with_protocol_versions(&[version(pins.version)])
        .context("pinning the client's protocol version")
}

/// rustls's webpki verifier of servers, trusting `roots`.
pub fn server_verifier(
    roots: Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, HarnessError> {
    WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .context("building the server-certificate verifier")
}

/// rustls's webpki verifier of clients (a certificate required), trusting
/// `roots`.
pub fn client_verifier(
    roots: Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<ClientVerifier>, HarnessError> {
    WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .context("building the client-certificate verifier")
}

/// The server's chain and key.
pub fn with_single_cert(
    builder: ConfigBuilder<ServerConfig, WantsServerCert>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ServerConfig, Error> {
    builder.with_single_cert(chain, key)
}

/// The mTLS client's chain and key.
pub fn with_client_auth_cert(
    builder: ConfigBuilder<ClientConfig, WantsClientCert>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ClientConfig, Error> {
    builder.with_client_auth_cert(chain, key)
}

/// A client without a certificate.
pub fn with_no_client_auth(
    builder: ConfigBuilder<ClientConfig, WantsClientCert>,
) -> Result<ClientConfig, Error> {
    Ok(builder.with_no_client_auth())
}

/// How the server keeps sessions: with [`Sessions::Ticket`], stateless
/// tickets from the provider's `Ticketer` (TLS 1.3, and TLS 1.2's
/// SessionTicket extension); with [`Sessions::Cache`], no ticketer, so the
/// TLS 1.3 ticket is the key of its session storage; one ticket per
/// handshake either way. `None`: no tickets.
pub fn set_tickets(
    config: &mut ServerConfig,
    sessions: Option<Sessions>,
) -> Result<(), HarnessError> {
    config.send_tls13_tickets = usize::from(sessions.is_some());
    if sessions == Some(Sessions::Ticket) {
        config.ticketer = provider::Ticketer::new().context("creating the ticketer")?;
    }
    Ok(())
}

/// The SNI a server received.
pub fn sni(server: &ServerConnection) -> Option<&str> {
    server.server_name()
}

/// The chain a side received from its peer.
pub fn peer_chain(outputs: &Outputs) -> Option<Vec<CertificateDer<'static>>> {
    outputs.peer_certificates().map(<[_]>::to_vec)
}

/// One side of a connection: rustls 0.23 keeps its input, its output
/// records and the plaintext it received itself.
pub type Side<C> = queued::Side<C, ()>;

impl Side<ServerConnection> {
    /// A server connection waiting for a ClientHello (allocation only).
    pub fn server(config: &Arc<ServerConfig>) -> Result<Self, Error> {
        Ok(queued::Side {
            conn: ServerConnection::new(config.clone())?,
            input: (),
        })
    }
}

impl Side<ClientConnection> {
    /// A client connection: `ClientConnection::new` picks the session to
    /// offer, generates the key share and queues the ClientHello.
    pub fn client(config: &Arc<ClientConfig>, name: ServerName<'static>) -> Result<Self, Error> {
        Ok(queued::Side {
            conn: ClientConnection::new(config.clone(), name)?,
            input: (),
        })
    }
}

impl<C, D> Queued for Side<C>
where
    C: DerefMut<Target = ConnectionCommon<D>>,
    D: 'static,
{
    type Error = Error;

    #[inline(always)]
    fn read_tls(&mut self, end: &mut Endpoint) -> io::Result<usize> {
        self.conn.read_tls(end)
    }

    #[inline(always)]
    fn process(&mut self) -> Result<usize, Error> {
        Ok(self.conn.process_new_packets()?.plaintext_bytes_to_read())
    }

    queued_calls!();
}

impl<C, D> Side<C>
where
    C: DerefMut<Target = ConnectionCommon<D>>,
    D: 'static,
{
    /// What the connection negotiated.
    pub fn outputs(&self) -> &Outputs {
        &self.conn
    }

    /// `read_tls` and `process_new_packets` of everything that arrived at
    /// `end`, stopping at rustls's first error, returned as rustls's own
    /// error (a failed read of the transport as `Error::General`).
    pub fn deliver_raw(&mut self, end: &mut Endpoint) -> Result<(), Error> {
        while end.has_incoming() {
            self.conn
                .read_tls(end)
                .map_err(|error| Error::General(error.to_string()))?;
            self.conn.process_new_packets()?;
        }
        Ok(())
    }

    /// Queues a close_notify alert (`send_close_notify`).
    pub fn send_close_notify(&mut self) {
        self.conn.send_close_notify();
    }

    /// Whether the peer's close_notify has been processed
    /// (`process_new_packets`'s `peer_has_closed`; with nothing new to
    /// process, it only reports).
    pub fn peer_has_closed(&mut self) -> Result<bool, Error> {
        Ok(self.conn.process_new_packets()?.peer_has_closed())
    }

    /// `refresh_traffic_keys`: a KeyUpdate (update_requested) goes out with
    /// the next write, and the sending keys change after it (the key_update
    /// path).
    pub fn refresh_traffic_keys(&mut self) -> Result<(), Error> {
        self.conn.refresh_traffic_keys()
    }
}

/// The alert a rustls error says the peer sent, as its TLS code.
pub fn received_alert(error: &Error) -> Option<u8> {
    match error {
        Error::AlertReceived(alert) => Some(u8::from(*alert)),
        _ => None,
    }
}

/// A connection's current traffic keys and record sequence numbers, each
/// way (the key_update path's check).
pub use ::rustls::{ConnectionTrafficSecrets, ExtractedSecrets};

impl Side<ClientConnection> {
    /// `dangerous_extract_secrets` (the config must allow it).
    pub fn extract_secrets(self) -> Result<ExtractedSecrets, Error> {
        self.conn.dangerous_extract_secrets()
    }
}

impl Side<ServerConnection> {
    /// `dangerous_extract_secrets` (the config must allow it).
    pub fn extract_secrets(self) -> Result<ExtractedSecrets, Error> {
        self.conn.dangerous_extract_secrets()
    }
}

/// A server identity (the leaf alone) for [`verify_server`].
pub fn server_identity(leaf: &CertificateDer<'static>) -> LeafIdentity {
    leaf.clone()
}

/// Verifies `leaf` for `name` at `now`, as a rustls client does in a
/// handshake (no intermediates, no OCSP response).
pub fn verify_server(
    verifier: &WebPkiServerVerifier,
    leaf: &LeafIdentity,
    name: &ServerName<'static>,
    now: UnixTime,
) -> Result<ServerVerified, Error> {
    verifier.verify_server_cert(leaf, &[], name, &[], now)
}

/// The methods both verifier traits have: the two handshake-signature
/// checks, noting what verified, and the scheme list and raw-key flag,
/// passed through.
macro_rules! signature_checks {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Verified {
            self.noted(dss, self.inner.verify_tls12_signature(message, cert, dss))
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Verified {
            self.noted(dss, self.inner.verify_tls13_signature(message, cert, dss))
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.inner.supported_verify_schemes()
        }

        fn requires_raw_public_keys(&self) -> bool {
            self.inner.requires_raw_public_keys()
        }
    };
}

impl ServerCertVerifier for Noting<WebPkiServerVerifier> {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    signature_checks!();

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}

impl ClientCertVerifier for Noting<ClientVerifier> {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
    }

    signature_checks!();
}

ticket_queue_store!(ServerName, Tls12Session);
session_cache_store!(Vec<u8>, &[u8]);

/// The most plaintext one record carries, for a suite whose records carry
/// `overhead` bytes of encryption overhead: a full 16 KiB.
pub const fn max_record_plaintext(_overhead: usize) -> usize {
    16 * 1024
}

/// The IANA codes of `provider`'s cipher suites.
#[cfg(test)]
pub fn suites_of(provider: &CryptoProvider) -> Vec<u16> {
    provider
        .cipher_suites
        .iter()
        .map(|suite| suite.suite().into())
        .collect()
}
