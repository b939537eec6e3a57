//! rustls harnesses.
//!
//! Mutually exclusive paths of rustls 0.23 with its aws-lc-rs provider, each
//! a unit struct implementing [`Harness`](regress_measure::Harness):
//!
//! - [`ConfigBuild`]: building a server and a client config from PEM.
//! - [`HandshakeRsa4096`], [`HandshakeEcdsaP256`]: one full TLS 1.3
//!   handshake; [`MtlsRsa4096`], [`MtlsEcdsaP256`]: the same with client
//!   certificates; [`HandshakeTls12Rsa4096`]: one full TLS 1.2 handshake.
//! - [`SessionResumption`]: one TLS 1.3 handshake resumed from a ticket.
//! - `Record*`: 1 MiB of application data, client to server, per cipher
//!   suite and write size ([`RecordAes128Gcm16k`] and the others).
//! - [`X509ParseChain`], [`X509VerifyChain`]: parsing, and verifying, the
//!   RSA-4096 test chain the way rustls's webpki verifier does.
//!
//! # What every harness pins, and why
//!
//! The harnesses of the three libraries must negotiate the same thing, or
//! their counts are not comparable. rustls's defaults differ from s2n-tls's
//! (AES-256-GCM first, X25519MLKEM768 first, RSA-PSS-SHA512 first), so each
//! harness builds its own [`CryptoProvider`] ([`Pins`]):
//!
//! - **Cipher suites**: exactly one, the one the harness is about
//!   ([`TLS13_HANDSHAKE_SUITE`] for handshakes, [`TLS12_SUITE`] for TLS 1.2,
//!   the pinned suite for each record harness).
//! - **Key exchange**: secp256r1 only ([`EXPECTED_GROUP`]). The client's
//!   ClientHello carries one secp256r1 key share, so there is never a
//!   HelloRetryRequest.
//! - **Signature schemes**: the provider maps exactly one TLS signature
//!   scheme to a verification algorithm: rsa_pss_rsae_sha256 for the RSA-4096
//!   hierarchy, ecdsa_secp256r1_sha256 for ECDSA P-256 ([`Hierarchy`]). rustls
//!   offers (client) and requests (server, for client certificates) only the
//!   schemes its verifier supports, and a peer must sign with one it was
//!   offered, so that is the only scheme either side can use. Certificate
//!   signatures (sha256WithRSAEncryption, ecdsa-with-SHA256) are verified with
//!   the provider's full default list of algorithms, as rustls does by
//!   default.
//! - **Protocol version**: TLS 1.3 only, or TLS 1.2 only for
//!   [`HandshakeTls12Rsa4096`]. Extended master secret is *required* on both
//!   sides (`require_ems`; rustls negotiates it by default, requiring it turns
//!   its absence into a failed handshake instead of a silent change).
//! - **No resumption** except in [`SessionResumption`]: clients use
//!   `Resumption::disabled()` (rustls otherwise resumes its second handshake
//!   from the same config: about 2.8 M instead of 76.5 M instructions), servers
//!   `NoServerSessionStorage`, `send_tls13_tickets = 0` and no ticketer, so
//!   TLS 1.2 servers send no session id and no ticket either.
//! - **Fixed time** ([`clock::FixedTime`]) on every config and for x509
//!   verification, and **deterministic randomness** for rustls's own draws
//!   ([`rng::DETERMINISTIC_RANDOM`], test only). aws-lc's randomness
//!   (key shares, RSA blinding, PSS salts, ticket keys) is deterministic
//!   through the build (`.cargo/config.toml`).
//! - **No system trust store**: each client trusts only its hierarchy's test
//!   CA ([`crate::certs`]). Clients send SNI `localhost`
//!   ([`crate::certs::SERVER_NAME`]).
//! - **Configs in `Arc`s, built once in `setup`** and shared by every
//!   connection, as a server does; a fresh config per handshake would count
//!   key parsing and precomputation as part of the handshake.
//! - **An in-memory transport** ([`transport`]).
//!
//! Every `check` asserts what was negotiated: version, suite, group,
//! handshake kind (full, resumed), the signature scheme of each
//! CertificateVerify (or TLS 1.2 ServerKeyExchange) as the peer's verifier
//! saw it ([`SchemeLog`]), the certificates each side received, and SNI.
//!
//! Inside this module the rustls crate is `::rustls`, to keep it apart from
//! the module's own name.

pub mod clock;
mod handshake;
mod record;
pub mod rng;
pub mod transport;
mod x509;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ::rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use ::rustls::client::{ClientSessionStore, Resumption, Tls12Resumption, WebPkiServerVerifier};
use ::rustls::crypto::aws_lc_rs::{self as provider, kx_group};
use ::rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use ::rustls::pki_types::pem::PemObject;
use ::rustls::pki_types::{
    CertificateDer, PrivateKeyDer, ServerName, SignatureVerificationAlgorithm, UnixTime,
};
use ::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use ::rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use ::rustls::time_provider::TimeProvider;
use ::rustls::{
    CipherSuite, ClientConfig, ClientConnection, CommonState, DigitallySignedStruct,
    DistinguishedName, HandshakeKind, NamedGroup, ProtocolVersion, RootCertStore, ServerConfig,
    ServerConnection, SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion,
};
use regress_measure::HarnessError;

pub use self::handshake::{
    BuiltConfigs, ConfigBuild, ConfigBuildSetup, HandshakeEcdsaP256, HandshakeRsa4096,
    HandshakeTls12Rsa4096, MtlsEcdsaP256, MtlsRsa4096, ResumptionSetup, SessionResumption,
};
pub use self::record::{
    RecordAes128Gcm16k, RecordAes128Gcm1k, RecordAes256Gcm16k, RecordAes256Gcm1k,
    RecordChaCha20Poly1305_16k, RecordChaCha20Poly1305_1k, RecordSetup, Transfer, RECORD_BYTES,
};
pub use self::x509::{ParseSetup, ParsedChain, VerifySetup, X509ParseChain, X509VerifyChain};

use self::clock::FixedTime;
use self::transport::{Accepting, Pair};
use crate::certs;

/// The only key-exchange group any harness offers or accepts.
pub const EXPECTED_GROUP: NamedGroup = NamedGroup::secp256r1;

/// The cipher suite of every TLS 1.3 handshake harness.
pub const TLS13_HANDSHAKE_SUITE: SupportedCipherSuite =
    provider::cipher_suite::TLS13_AES_128_GCM_SHA256;

/// The cipher suite of [`HandshakeTls12Rsa4096`].
pub const TLS12_SUITE: SupportedCipherSuite =
    provider::cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256;

// ---------------------------------------------------------------------------
// Errors with context
// ---------------------------------------------------------------------------

/// An error with a note of what was being done when it happened.
#[derive(Debug)]
struct ContextError {
    what: &'static str,
    source: HarnessError,
}

impl std::fmt::Display for ContextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for ContextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Adds a static note to an error. The note is a `&'static str` so that the
/// success path allocates nothing: `run` code uses this too.
pub(crate) trait Context<T> {
    fn context(self, what: &'static str) -> Result<T, HarnessError>;
}

impl<T, E: Into<HarnessError>> Context<T> for Result<T, E> {
    /// Inlined, with the error path out of line, so that on success (the
    /// only path a counted run takes) it costs a test and a branch.
    #[inline(always)]
    fn context(self, what: &'static str) -> Result<T, HarnessError> {
        match self {
            Ok(value) => Ok(value),
            Err(source) => Err(with_context(what, source.into())),
        }
    }
}

/// `source` with the note `what`: the out-of-line error path of
/// [`Context::context`].
#[cold]
#[inline(never)]
fn with_context(what: &'static str, source: HarnessError) -> HarnessError {
    Box::new(ContextError { what, source })
}

/// `Err(message)` unless `condition` holds.
#[inline(always)]
fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), HarnessError> {
    if condition {
        Ok(())
    } else {
        Err(message().into())
    }
}

// ---------------------------------------------------------------------------
// Certificate hierarchies and pinned providers
// ---------------------------------------------------------------------------

/// One of the two test certificate hierarchies, and the one TLS signature
/// scheme its keys sign handshakes with.
#[derive(Debug)]
pub struct Hierarchy {
    /// For messages.
    pub name: &'static str,
    /// The self-signed CA, the only certificate clients (and, for client
    /// certificates, servers) trust.
    pub ca_pem: &'static [u8],
    /// The server's chain (leaf for `localhost`, then the CA) and key.
    pub server_chain_pem: &'static [u8],
    pub server_key_pem: &'static [u8],
    /// The client's chain (leaf, then the CA) and key, for mTLS.
    pub client_chain_pem: &'static [u8],
    pub client_key_pem: &'static [u8],
    /// The signature scheme both sides' CertificateVerify must use.
    pub scheme: SignatureScheme,
    /// The provider's scheme mapping: [`Hierarchy::scheme`] alone.
    verify_mapping: &'static [(
        SignatureScheme,
        &'static [&'static dyn SignatureVerificationAlgorithm],
    )],
}

/// The RSA-4096 hierarchy; handshakes sign with rsa_pss_rsae_sha256.
pub static RSA4096: Hierarchy = Hierarchy {
    name: "RSA-4096",
    ca_pem: certs::CA_PEM,
    server_chain_pem: certs::LEAF_CHAIN_PEM,
    server_key_pem: certs::LEAF_KEY_PEM,
    client_chain_pem: certs::CLIENT_RSA_CHAIN_PEM,
    client_key_pem: certs::CLIENT_RSA_KEY_PEM,
    scheme: SignatureScheme::RSA_PSS_SHA256,
    verify_mapping: &[(
        SignatureScheme::RSA_PSS_SHA256,
        &[webpki::aws_lc_rs::RSA_PSS_2048_8192_SHA256_LEGACY_KEY],
    )],
};

/// The ECDSA P-256 hierarchy; handshakes sign with ecdsa_secp256r1_sha256.
pub static ECDSA_P256: Hierarchy = Hierarchy {
    name: "ECDSA P-256",
    ca_pem: certs::ECDSA_CA_PEM,
    server_chain_pem: certs::ECDSA_LEAF_CHAIN_PEM,
    server_key_pem: certs::ECDSA_LEAF_KEY_PEM,
    client_chain_pem: certs::CLIENT_ECDSA_CHAIN_PEM,
    client_key_pem: certs::CLIENT_ECDSA_KEY_PEM,
    scheme: SignatureScheme::ECDSA_NISTP256_SHA256,
    verify_mapping: &[(
        SignatureScheme::ECDSA_NISTP256_SHA256,
        &[webpki::aws_lc_rs::ECDSA_P256_SHA256],
    )],
};

/// Everything a harness pins before building configs: the provider (one
/// suite, secp256r1, one signature scheme, deterministic randomness), the
/// fixed clock, the protocol version and the certificate hierarchy.
///
/// Built in `setup`; `run` only clones its `Arc`s.
#[derive(Debug, Clone)]
pub struct Pins {
    provider: Arc<CryptoProvider>,
    time: Arc<dyn TimeProvider>,
    version: &'static SupportedProtocolVersion,
    hierarchy: &'static Hierarchy,
}

impl Pins {
    /// Pins `version`, `suite` and `hierarchy`'s signature scheme.
    pub fn new(
        version: &'static SupportedProtocolVersion,
        suite: SupportedCipherSuite,
        hierarchy: &'static Hierarchy,
    ) -> Pins {
        let base = provider::default_provider();
        Pins {
            provider: Arc::new(CryptoProvider {
                cipher_suites: vec![suite],
                kx_groups: vec![kx_group::SECP256R1],
                signature_verification_algorithms: WebPkiSupportedAlgorithms {
                    all: base.signature_verification_algorithms.all,
                    mapping: hierarchy.verify_mapping,
                },
                secure_random: &rng::DETERMINISTIC_RANDOM,
                key_provider: base.key_provider,
            }),
            time: Arc::new(FixedTime),
            version,
            hierarchy,
        }
    }

    /// TLS 1.3 with [`TLS13_HANDSHAKE_SUITE`].
    pub fn tls13(hierarchy: &'static Hierarchy) -> Pins {
        Pins::new(&::rustls::version::TLS13, TLS13_HANDSHAKE_SUITE, hierarchy)
    }

    /// The pinned provider.
    pub fn provider(&self) -> &Arc<CryptoProvider> {
        &self.provider
    }
}

/// A hierarchy's PEM files, copied from the binary to the heap.
///
/// Parsing reads them with copies whose instruction count depends on the
/// buffers' alignment; the alignment of data embedded in the binary moves
/// whenever unrelated code changes, a fresh allocation's does not.
#[derive(Debug)]
pub struct PemSet {
    ca: Vec<u8>,
    server_chain: Vec<u8>,
    server_key: Vec<u8>,
    client_chain: Vec<u8>,
    client_key: Vec<u8>,
}

impl PemSet {
    /// Heap copies of `hierarchy`'s files.
    pub fn copy(hierarchy: &Hierarchy) -> PemSet {
        PemSet {
            ca: hierarchy.ca_pem.to_vec(),
            server_chain: hierarchy.server_chain_pem.to_vec(),
            server_key: hierarchy.server_key_pem.to_vec(),
            client_chain: hierarchy.client_chain_pem.to_vec(),
            client_key: hierarchy.client_key_pem.to_vec(),
        }
    }
}

/// Every certificate in `pem`, in order (rustls-pki-types's PEM parser).
fn parse_chain(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, HarnessError> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parsing a PEM certificate chain")?;
    ensure(!chain.is_empty(), || {
        "no certificate in the PEM chain".into()
    })?;
    Ok(chain)
}

/// The one private key in `pem` (PKCS#8).
fn parse_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, HarnessError> {
    PrivateKeyDer::from_pem_slice(pem).context("parsing a PEM private key")
}

/// A root store holding exactly the CA in `ca_pem`.
fn trust_only(ca_pem: &[u8]) -> Result<Arc<RootCertStore>, HarnessError> {
    let ca = CertificateDer::from_pem_slice(ca_pem).context("parsing the PEM CA")?;
    let mut roots = RootCertStore::empty();
    roots.add(ca).context("adding the CA to the root store")?;
    Ok(Arc::new(roots))
}

// ---------------------------------------------------------------------------
// Verifiers that note the signature scheme they verified
// ---------------------------------------------------------------------------

/// The signature scheme of the last handshake signature a verifier accepted.
///
/// rustls does not report the scheme of the peer's CertificateVerify (or
/// TLS 1.2 ServerKeyExchange), so the harnesses' verifiers wrap rustls's own
/// webpki verifiers and note it here: an atomic store per verified signature,
/// a few instructions per handshake. `check` [`take`](SchemeLog::take)s it.
#[derive(Debug, Default)]
pub struct SchemeLog(AtomicU32);

/// Set in a [`SchemeLog`] value once a scheme has been noted.
const NOTED: u32 = 1 << 16;

impl SchemeLog {
    fn note(&self, scheme: SignatureScheme) {
        self.0
            .store(NOTED | u32::from(u16::from(scheme)), Ordering::Relaxed);
    }

    /// The last scheme noted since the previous `take`, if any.
    pub fn take(&self) -> Option<SignatureScheme> {
        let value = self.0.swap(0, Ordering::Relaxed);
        (value & NOTED != 0).then(|| SignatureScheme::from(value as u16))
    }
}

/// rustls's [`WebPkiServerVerifier`], noting verified handshake signatures.
/// Every other call is passed through unchanged.
#[derive(Debug)]
pub struct NotingServerVerifier {
    inner: Arc<WebPkiServerVerifier>,
    /// Schemes of the server signatures this client verified.
    pub log: SchemeLog,
}

impl ServerCertVerifier for NotingServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, ::rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, ::rustls::Error> {
        let valid = self.inner.verify_tls12_signature(message, cert, dss)?;
        self.log.note(dss.scheme);
        Ok(valid)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, ::rustls::Error> {
        let valid = self.inner.verify_tls13_signature(message, cert, dss)?;
        self.log.note(dss.scheme);
        Ok(valid)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}

/// rustls's `WebPkiClientVerifier` (client certificate required), noting
/// verified handshake signatures. Every other call is passed through.
#[derive(Debug)]
pub struct NotingClientVerifier {
    inner: Arc<dyn ClientCertVerifier>,
    /// Schemes of the client signatures this server verified.
    pub log: SchemeLog,
}

impl ClientCertVerifier for NotingClientVerifier {
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
    ) -> Result<ClientCertVerified, ::rustls::Error> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, ::rustls::Error> {
        let valid = self.inner.verify_tls12_signature(message, cert, dss)?;
        self.log.note(dss.scheme);
        Ok(valid)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, ::rustls::Error> {
        let valid = self.inner.verify_tls13_signature(message, cert, dss)?;
        self.log.note(dss.scheme);
        Ok(valid)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }
}

// ---------------------------------------------------------------------------
// Configs
// ---------------------------------------------------------------------------

/// How a server config handles resumption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tickets {
    /// No tickets, no session cache, no session ids: nothing ever resumes.
    Off,
    /// Stateless TLS 1.3 tickets from rustls's aws-lc-rs `Ticketer`, one per
    /// handshake; still no server-side session cache.
    One,
}

/// A server config, built from PEM the way an application builds one.
///
/// With `client_auth`, the server requires a client certificate and verifies
/// it against the hierarchy's CA with rustls's `WebPkiClientVerifier`; the
/// returned verifier notes the client's signature scheme.
fn server_config(
    pins: &Pins,
    pem: &PemSet,
    client_auth: bool,
    tickets: Tickets,
) -> Result<(ServerConfig, Option<Arc<NotingClientVerifier>>), HarnessError> {
    let builder = ServerConfig::builder_with_details(pins.provider.clone(), pins.time.clone())
        .with_protocol_versions(&[pins.version])
        .context("pinning the server's protocol version")?;
    let (builder, client_verifier) = if client_auth {
        let inner = WebPkiClientVerifier::builder_with_provider(
            trust_only(&pem.ca)?,
            pins.provider.clone(),
        )
        .build()
        .context("building the client-certificate verifier")?;
        let verifier = Arc::new(NotingClientVerifier {
            inner,
            log: SchemeLog::default(),
        });
        (
            builder.with_client_cert_verifier(verifier.clone()),
            Some(verifier),
        )
    } else {
        (builder.with_no_client_auth(), None)
    };
    let mut config = builder
        .with_single_cert(parse_chain(&pem.server_chain)?, parse_key(&pem.server_key)?)
        .context("loading the server chain and key")?;
    config.session_storage = Arc::new(NoServerSessionStorage {});
    config.require_ems = true;
    match tickets {
        Tickets::Off => config.send_tls13_tickets = 0,
        Tickets::One => {
            config.ticketer = provider::Ticketer::new().context("creating the ticketer")?;
            config.send_tls13_tickets = 1;
        }
    }
    Ok((config, client_verifier))
}

/// A client config trusting only the hierarchy's CA, built from PEM.
///
/// With `client_auth`, it presents the hierarchy's client chain. `resumption`
/// is `None` for no resumption at all, or the store to resume TLS 1.3
/// sessions from (TLS 1.2 resumption stays off).
fn client_config(
    pins: &Pins,
    pem: &PemSet,
    client_auth: bool,
    resumption: Option<Arc<dyn ClientSessionStore>>,
) -> Result<(ClientConfig, Arc<NotingServerVerifier>), HarnessError> {
    let inner =
        WebPkiServerVerifier::builder_with_provider(trust_only(&pem.ca)?, pins.provider.clone())
            .build()
            .context("building the server-certificate verifier")?;
    let verifier = Arc::new(NotingServerVerifier {
        inner,
        log: SchemeLog::default(),
    });
    let builder = ClientConfig::builder_with_details(pins.provider.clone(), pins.time.clone())
        .with_protocol_versions(&[pins.version])
        .context("pinning the client's protocol version")?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone());
    let mut config = if client_auth {
        builder
            .with_client_auth_cert(parse_chain(&pem.client_chain)?, parse_key(&pem.client_key)?)
            .context("loading the client chain and key")?
    } else {
        builder.with_no_client_auth()
    };
    config.resumption = match resumption {
        None => Resumption::disabled(),
        Some(store) => Resumption::store(store).tls12_resumption(Tls12Resumption::Disabled),
    };
    config.require_ems = true;
    Ok((config, verifier))
}

/// What a handshake must have negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    pub version: ProtocolVersion,
    pub suite: CipherSuite,
    pub scheme: SignatureScheme,
    pub client_auth: bool,
    /// Whether the server queues a session ticket after the handshake.
    pub ticket: bool,
}

impl Expect {
    /// What configs built with `pins` must negotiate.
    fn new(pins: &Pins, client_auth: bool, ticket: bool) -> Result<Expect, HarnessError> {
        let suite = pins
            .provider
            .cipher_suites
            .first()
            .ok_or("the pinned provider has no cipher suite")?
            .suite();
        Ok(Expect {
            version: pins.version.version,
            suite,
            scheme: pins.hierarchy.scheme,
            client_auth,
            ticket,
        })
    }
}

/// A client and a server config built for one harness, shared by all its
/// connections, and what their handshakes must negotiate.
#[derive(Debug)]
pub struct Configs {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    server_verifier: Arc<NotingServerVerifier>,
    client_verifier: Option<Arc<NotingClientVerifier>>,
    server_name: ServerName<'static>,
    expect: Expect,
    server_chain: Vec<CertificateDer<'static>>,
    client_chain: Vec<CertificateDer<'static>>,
}

impl Configs {
    /// Builds both configs for `pins` (see [`server_config`] and
    /// [`client_config`]).
    fn build(
        pins: &Pins,
        client_auth: bool,
        resumption: Option<Arc<dyn ClientSessionStore>>,
    ) -> Result<Configs, HarnessError> {
        let pem = PemSet::copy(pins.hierarchy);
        let tickets = if resumption.is_some() {
            Tickets::One
        } else {
            Tickets::Off
        };
        let (server, client_verifier) = server_config(pins, &pem, client_auth, tickets)?;
        let (client, server_verifier) = client_config(pins, &pem, client_auth, resumption)?;
        Configs::assemble(
            Arc::new(client),
            Arc::new(server),
            server_verifier,
            client_verifier,
            Expect::new(pins, client_auth, tickets == Tickets::One)?,
            &pem,
        )
    }

    /// Wraps built configs for sharing and notes the chains each side must
    /// receive.
    fn assemble(
        client: Arc<ClientConfig>,
        server: Arc<ServerConfig>,
        server_verifier: Arc<NotingServerVerifier>,
        client_verifier: Option<Arc<NotingClientVerifier>>,
        expect: Expect,
        pem: &PemSet,
    ) -> Result<Configs, HarnessError> {
        Ok(Configs {
            client,
            server,
            server_verifier,
            client_verifier,
            server_name: ServerName::try_from(certs::SERVER_NAME)
                .context("the server name")?
                .to_owned(),
            expect,
            server_chain: parse_chain(&pem.server_chain)?,
            client_chain: if expect.client_auth {
                parse_chain(&pem.client_chain)?
            } else {
                Vec::new()
            },
        })
    }

    /// A fresh server connection and empty pipes, waiting for a client.
    fn accept(&self) -> Result<Accepting, HarnessError> {
        let server =
            ServerConnection::new(self.server.clone()).context("creating the server connection")?;
        Ok(Accepting::new(server))
    }

    /// Creates the client connection, which picks the session to offer (if
    /// any), generates its key share and queues the ClientHello, and joins it
    /// to `accepting`.
    fn connect(&self, accepting: Accepting) -> Result<Pair, HarnessError> {
        self.connect_with(&self.client, accepting)
    }

    /// [`Configs::connect`] with another client config (a clone of this
    /// one's, differing only in its session store).
    fn connect_with(
        &self,
        client: &Arc<ClientConfig>,
        accepting: Accepting,
    ) -> Result<Pair, HarnessError> {
        let client = ClientConnection::new(client.clone(), self.server_name.clone())
            .context("creating the client connection")?;
        Ok(accepting.connect(client))
    }

    /// A complete handshake outside any count (for `prepare`s and `check`s).
    fn handshake(&self) -> Result<Pair, HarnessError> {
        let mut pair = self.connect(self.accept()?)?;
        pair.handshake()?;
        Ok(pair)
    }

    /// Checks that both sides finished a handshake of `kind` with exactly
    /// the pinned parameters.
    ///
    /// For a full handshake it also checks the signature scheme each
    /// verifier saw (and takes it from the log), the chains each side
    /// received, and that a client certificate was (or was not) sent. A
    /// resumed handshake has no certificates and no signatures: its proof is
    /// both sides reporting [`HandshakeKind::Resumed`].
    fn check(&self, pair: &Pair, kind: HandshakeKind) -> Result<(), HarnessError> {
        let expect = &self.expect;
        self.check_parameters(pair, kind)?;
        let sni = pair.server.server_name();
        ensure(sni == Some(certs::SERVER_NAME), || {
            format!("server saw SNI {sni:?}, expected {:?}", certs::SERVER_NAME)
        })?;
        ensure(pair.server.wants_write() == expect.ticket, || {
            format!(
                "server has post-handshake data queued: {}, expected {} (a session ticket)",
                pair.server.wants_write(),
                expect.ticket
            )
        })?;
        if kind != HandshakeKind::Full {
            return Ok(());
        }

        let received = pair.client.peer_certificates();
        ensure(received == Some(&self.server_chain[..]), || {
            "the client did not receive the test server chain".into()
        })?;
        let scheme = self.server_verifier.log.take();
        ensure(scheme == Some(expect.scheme), || {
            format!(
                "the client verified a server signature with {scheme:?}, pinned {:?}",
                expect.scheme
            )
        })?;

        let received = pair.server.peer_certificates();
        match &self.client_verifier {
            Some(verifier) => {
                ensure(received == Some(&self.client_chain[..]), || {
                    "the server did not receive the test client chain".into()
                })?;
                let scheme = verifier.log.take();
                ensure(scheme == Some(expect.scheme), || {
                    format!(
                        "the server verified a client signature with {scheme:?}, pinned {:?}",
                        expect.scheme
                    )
                })?;
            }
            None => ensure(received.is_none(), || {
                "the server received a client certificate it did not ask for".into()
            })?,
        }
        Ok(())
    }

    /// Checks that both sides finished a handshake of `kind` with the pinned
    /// version, suite and group (what [`Configs::check`] checks first; usable
    /// again later in a connection's life).
    fn check_parameters(&self, pair: &Pair, kind: HandshakeKind) -> Result<(), HarnessError> {
        let expect = &self.expect;
        let sides: [(&str, &CommonState); 2] = [("client", &pair.client), ("server", &pair.server)];
        for (side, conn) in sides {
            ensure(!conn.is_handshaking(), || {
                format!("{side}: still handshaking")
            })?;
            let version = conn.protocol_version();
            ensure(version == Some(expect.version), || {
                format!(
                    "{side}: negotiated {version:?}, pinned {:?}",
                    expect.version
                )
            })?;
            let suite = conn.negotiated_cipher_suite().map(|s| s.suite());
            ensure(suite == Some(expect.suite), || {
                format!("{side}: negotiated {suite:?}, pinned {:?}", expect.suite)
            })?;
            let group = conn.negotiated_key_exchange_group().map(|g| g.name());
            ensure(group == Some(EXPECTED_GROUP), || {
                format!("{side}: negotiated group {group:?}, pinned {EXPECTED_GROUP:?}")
            })?;
            let actual = conn.handshake_kind();
            ensure(actual == Some(kind), || {
                format!("{side}: handshake kind {actual:?}, expected {kind:?}")
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_log_keeps_the_last_scheme_until_taken() {
        let log = SchemeLog::default();
        assert_eq!(log.take(), None);
        log.note(SignatureScheme::RSA_PKCS1_SHA256);
        log.note(SignatureScheme::RSA_PSS_SHA256);
        assert_eq!(log.take(), Some(SignatureScheme::RSA_PSS_SHA256));
        assert_eq!(log.take(), None);
    }

    #[test]
    fn pinned_provider_offers_one_suite_one_group_one_scheme() {
        for hierarchy in [&RSA4096, &ECDSA_P256] {
            let pins = Pins::tls13(hierarchy);
            let provider = pins.provider();
            assert_eq!(provider.cipher_suites, vec![TLS13_HANDSHAKE_SUITE]);
            let groups: Vec<_> = provider.kx_groups.iter().map(|g| g.name()).collect();
            assert_eq!(groups, vec![EXPECTED_GROUP]);
            assert_eq!(
                provider
                    .signature_verification_algorithms
                    .supported_schemes(),
                vec![hierarchy.scheme]
            );
        }
    }

    #[test]
    fn pem_files_parse() {
        for hierarchy in [&RSA4096, &ECDSA_P256] {
            let pem = PemSet::copy(hierarchy);
            assert_eq!(
                parse_chain(&pem.server_chain).expect("server chain").len(),
                2
            );
            assert_eq!(
                parse_chain(&pem.client_chain).expect("client chain").len(),
                2
            );
            parse_key(&pem.server_key).expect("server key");
            parse_key(&pem.client_key).expect("client key");
            trust_only(&pem.ca).expect("CA");
        }
        assert!(parse_chain(b"no PEM here").is_err());
        assert!(parse_key(b"").is_err());
    }

    /// The client really verifies the chain: a client trusting the other
    /// hierarchy's CA fails the handshake.
    #[test]
    fn handshake_fails_with_the_wrong_ca() {
        let pins = Pins::tls13(&RSA4096);
        let configs = Configs::build(&pins, false, None).expect("configs");
        let mut wrong = PemSet::copy(&RSA4096);
        wrong.ca = ECDSA_P256.ca_pem.to_vec();
        let (client, _) = client_config(&pins, &wrong, false, None).expect("client config");
        let mut pair = configs
            .connect_with(&Arc::new(client), configs.accept().expect("accept"))
            .expect("connect");
        let error = pair.handshake().expect_err("untrusted server certificate");
        assert!(error.to_string().contains("client processing"), "{error}");
    }

    /// The client really checks the server's name.
    #[test]
    fn handshake_fails_for_another_server_name() {
        let configs = Configs::build(&Pins::tls13(&RSA4096), false, None).expect("configs");
        let name = ServerName::try_from("example.com").expect("name");
        let client = ClientConnection::new(configs.client.clone(), name).expect("client");
        let mut pair = configs.accept().expect("accept").connect(client);
        assert!(pair.handshake().is_err());
    }

    /// An mTLS server rejects a client that presents no certificate.
    #[test]
    fn mtls_server_requires_a_client_certificate() {
        let pins = Pins::tls13(&ECDSA_P256);
        let configs = Configs::build(&pins, true, None).expect("configs");
        let (anonymous, _) =
            client_config(&pins, &PemSet::copy(&ECDSA_P256), false, None).expect("client");
        let mut pair = configs
            .connect_with(&Arc::new(anonymous), configs.accept().expect("accept"))
            .expect("connect");
        let error = pair.handshake().expect_err("no client certificate");
        assert!(error.to_string().contains("server processing"), "{error}");
    }

    /// The check notices a handshake that negotiated something else.
    #[test]
    fn check_rejects_other_parameters() {
        let configs = Configs::build(&Pins::tls13(&RSA4096), false, None).expect("configs");
        let pair = configs.handshake().expect("handshake");
        let mut other = configs.expect;
        other.suite = CipherSuite::TLS13_AES_256_GCM_SHA384;
        let mut wrong = Configs::build(&Pins::tls13(&RSA4096), false, None).expect("configs");
        wrong.expect = other;
        assert!(wrong.check(&pair, HandshakeKind::Full).is_err());
        configs
            .check(&pair, HandshakeKind::Full)
            .expect("the pinned parameters");
        // The log was taken: a second check has no scheme to see.
        assert!(configs.check(&pair, HandshakeKind::Full).is_err());
    }
}
