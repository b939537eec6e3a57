//! s2n-tls harnesses.
//!
//! Mutually exclusive paths of s2n-tls 0.3.47, each a type implementing
//! [`Harness`](regress_measure::Harness):
//!
//! | harness | type | what is counted |
//! |---|---|---|
//! | `config_build` | [`ConfigBuild`] | building a server-and-client `Config` from PEM |
//! | `handshake_rsa4096` | [`HandshakeRsa4096`] | a full TLS 1.3 handshake, RSA-4096 server certificate |
//! | `handshake_ecdsa_p256` | [`HandshakeEcdsaP256`] | a full TLS 1.3 handshake, ECDSA P-256 server certificate |
//! | `mtls_rsa4096` | [`MtlsRsa4096`] | a full TLS 1.3 handshake with a required RSA-4096 client certificate |
//! | `mtls_ecdsa_p256` | [`MtlsEcdsaP256`] | a full TLS 1.3 handshake with a required ECDSA P-256 client certificate |
//! | `handshake_tls12_rsa4096` | [`HandshakeTls12Rsa4096`] | a full TLS 1.2 handshake (ECDHE-RSA-AES128-GCM-SHA256, extended master secret) |
//! | `session_resumption` | [`SessionResumption`] | a TLS 1.3 handshake resumed from a ticket |
//! | `record_<cipher>_<size>` | [`Record`] | 1 MiB of application data, client to server, in 16 KiB or 1 KiB writes |
//!
//! There are no `x509_*` harnesses for s2n-tls: the s2n-tls crate has no
//! standalone X.509 API (certificates are only parsed and verified inside
//! `Config` building and the handshake), so the certificate work is part of
//! [`ConfigBuild`] and the handshake harnesses.
//!
//! # The fairness contract, and how s2n-tls meets it
//!
//! The rustls and OpenSSL harnesses of the same names negotiate the same
//! parameters, so the counts compare libraries, not configurations:
//!
//! - TLS 1.3 handshakes use TLS_AES_128_GCM_SHA256, the secp256r1 group, and
//!   rsa_pss_rsae_sha256 (RSA-4096) or ecdsa_secp256r1_sha256 (ECDSA P-256)
//!   for the server's CertificateVerify; an mTLS client signs with the same
//!   scheme as its hierarchy's server.
//! - Session tickets and resumption are off everywhere except
//!   [`SessionResumption`]. No session cache is configured on any server.
//! - No system trust store: `with_system_certs(false)` everywhere. Loading it
//!   costs about 57 M instructions and depends on the machine (and on
//!   `SSL_CERT_FILE`); peers trust only their hierarchy's test CA
//!   ([`crate::certs`]).
//!
//! Every `check` asserts what was negotiated (version, cipher, group,
//! signature scheme, key types, client authentication, resumption), so a
//! library upgrade that changes a default fails a test instead of silently
//! moving a count.
//!
//! # Security policies
//!
//! s2n-tls 0.3.47 has no security-policy builder: a policy is one of the
//! library's named tables. Numbered policies never change, so every harness
//! uses numbered ones. Two peers of s2n-tls negotiate the *server's* most
//! preferred mutually supported cipher suite, group and signature scheme.
//!
//! | policy | used by | why |
//! |---|---|---|
//! | [`PINNED_POLICY`] `20240503` (`default_tls13` in 0.3.47) | both sides of every TLS 1.3 harness except as below; the server of [`HandshakeTls12Rsa4096`] | first TLS 1.3 suite AES-128-GCM-SHA256, first group secp256r1, so one round trip (no HelloRetryRequest); with an RSA (rsaEncryption) key its first usable scheme is rsa_pss_rsae_sha256, with a P-256 key ecdsa_secp256r1_sha256 |
//! | [`TLS12_CLIENT_POLICY`] `20240501` | the client of [`HandshakeTls12Rsa4096`] | TLS 1.2 only (no TLS 1.3 suites), offers ECDHE-RSA-AES128-GCM-SHA256, secp256r1 and rsa_pss_rsae_sha256 |
//! | [`AES256_SERVER_POLICY`] `20190802` | the server of the AES-256-GCM record harnesses | the only numbered policies whose TLS 1.3 preference starts with AES-256-GCM-SHA384 and whose groups start with secp256r1 |
//! | [`CHACHA20_POLICY`] `20201021` | both sides of the ChaCha20-Poly1305 record harnesses | see below: **TLS 1.2** |
//!
//! **ChaCha20-Poly1305 cannot be negotiated in TLS 1.3 between two s2n-tls
//! 0.3.47 peers.** Every named policy that offers TLS 1.3 lists
//! TLS_CHACHA20_POLY1305_SHA256 after both AES-GCM suites, the server picks
//! by its own preference, and "ChaCha20 boosting" (a server preferring
//! ChaCha20 when the client lists it first) needs a client policy that lists
//! ChaCha20 first, and the only such policies (`20190122`, `20201021`) offer
//! no TLS 1.3 suite at all. So s2n-tls's ChaCha20 record harnesses run
//! TLS 1.2 with ECDHE-RSA-CHACHA20-POLY1305 (RFC 7905), their check asserts
//! TLS 1.2, and they are named `record_tls12_chacha20poly1305_*` so that no
//! comparison lines them up with the TLS 1.3 `record_chacha20poly1305_*`
//! paths of the other libraries. Its record protection is the same AEAD with the same
//! per-record nonce construction as TLS 1.3's; the record differs in the
//! additional data (13 bytes instead of 5) and in carrying no inner content
//! type (21 bytes of overhead per record instead of 22). Compare them with
//! other libraries' TLS 1.3 ChaCha20 records only with that in mind.
//!
//! # Determinism
//!
//! - **Fixed clocks** ([`clock`]) on every config: certificate validity and
//!   ticket ages must not depend on the day of the measurement.
//! - **Self-service blinding** on every connection. With s2n-tls's built-in
//!   blinding a failed handshake sleeps 10-30 s inside the failing call;
//!   self-service leaves the delay to the caller. It changes nothing on a
//!   successful path, and makes the negative tests fast.
//! - **An in-memory transport** ([`transport`]) that needs no sockets,
//!   addresses or time.
//!
//! The rest of the determinism recipe (aws-lc's deterministic RNG, hiding
//! RDRAND, a clean environment) belongs to the build and the runner, not to
//! this code; see `.cargo/config.toml`.

pub mod clock;
mod config_build;
mod handshake;
mod record;
mod resumption;
pub mod transport;

use regress_measure::HarnessError;
use s2n_tls::callbacks::VerifyHostNameCallback;
use s2n_tls::config::{self, Config};
use s2n_tls::connection::{Builder as _, Connection};
use s2n_tls::enums::{Blinding, ClientAuthType, HashAlgorithm, Mode, SignatureAlgorithm, Version};
use s2n_tls::security::Policy;

pub use self::config_build::{ConfigBuild, ConfigBuildSetup};
pub use self::handshake::{
    HandshakeEcdsaP256, HandshakeRsa4096, HandshakeTls12Rsa4096, MtlsEcdsaP256, MtlsRsa4096,
};
pub use self::record::{Record, RecordCipher, RecordSetup, Transfer, RECORD_BYTES};
pub use self::resumption::{ResumptionSetup, SessionResumption};

use self::clock::{FixedMonotonicClock, FixedWallClock};
use self::resumption::TicketStore;
use self::transport::Pair;
use crate::certs::{self, SERVER_NAME};

/// The numbered s2n-tls security policy of every TLS 1.3 harness (both
/// sides unless the table in the module documentation says otherwise):
/// `default_tls13` in s2n-tls 0.3.47.
pub const PINNED_POLICY: &str = "20240503";

/// The client policy of [`HandshakeTls12Rsa4096`]: TLS 1.2 is its highest
/// version (it lists no TLS 1.3 suite).
pub const TLS12_CLIENT_POLICY: &str = "20240501";

/// The server policy of the AES-256-GCM record harnesses: its TLS 1.3
/// preference starts with TLS_AES_256_GCM_SHA384, its groups with secp256r1.
pub const AES256_SERVER_POLICY: &str = "20190802";

/// The policy of both sides of the ChaCha20-Poly1305 record harnesses: TLS 1.2
/// only, ECDHE-RSA-CHACHA20-POLY1305 first, secp256r1 first.
pub const CHACHA20_POLICY: &str = "20201021";

/// The cipher suite every TLS 1.3 handshake harness negotiates.
pub const EXPECTED_CIPHER: &str = "TLS_AES_128_GCM_SHA256";

/// The cipher suite of [`HandshakeTls12Rsa4096`] (s2n-tls's name for
/// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256).
pub const EXPECTED_TLS12_CIPHER: &str = "ECDHE-RSA-AES128-GCM-SHA256";

/// The key-exchange group every harness negotiates.
pub const EXPECTED_GROUP: &str = "secp256r1";

/// The server's CertificateVerify scheme with the RSA-4096 test key.
pub const EXPECTED_SIGNATURE_SCHEME: &str = "rsa_pss_rsae_sha256";

/// The CertificateVerify scheme with the ECDSA P-256 test keys, under its
/// TLS 1.3 name (s2n-tls reports the TLS 1.3 name on TLS 1.3 connections).
pub const EXPECTED_ECDSA_SIGNATURE_SCHEME: &str = "ecdsa_secp256r1_sha256";

/// The server key type s2n-tls reports for the RSA-4096 test leaf.
pub const EXPECTED_SERVER_KEY: &str = "rsa4096";

/// The key type s2n-tls reports for the ECDSA P-256 test leaves.
pub const EXPECTED_ECDSA_KEY: &str = "ecdsa_secp256r1";

/// Room in the transport for a handshake's flights.
const HANDSHAKE_PIPE_CAPACITY: usize = 64 * 1024;

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
    fn context(self, what: &'static str) -> Result<T, HarnessError> {
        self.map_err(|source| {
            Box::new(ContextError {
                what,
                source: source.into(),
            }) as HarnessError
        })
    }
}

/// `Err(message)` unless `condition` holds.
fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), HarnessError> {
    if condition {
        Ok(())
    } else {
        Err(message().into())
    }
}

// ---------------------------------------------------------------------------
// Callbacks
// ---------------------------------------------------------------------------

/// Verify-host callback that accepts exactly one name.
///
/// s2n-tls calls it for each DNS name in the peer's leaf certificate. The
/// harnesses use [`AcceptHost::LOCALHOST`]: every test leaf (server and
/// client) is for `localhost` only, so anything else means the wrong
/// certificate was presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptHost(pub &'static str);

impl AcceptHost {
    /// Accepts `localhost` and nothing else.
    pub const LOCALHOST: AcceptHost = AcceptHost(SERVER_NAME);
}

impl VerifyHostNameCallback for AcceptHost {
    fn verify_host_name(&self, host_name: &str) -> bool {
        host_name == self.0
    }
}

// ---------------------------------------------------------------------------
// Certificate hierarchies
// ---------------------------------------------------------------------------

/// One of the two test PKIs of [`crate::certs`]: a CA, a server leaf and a
/// client leaf, all of one key type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hierarchy {
    /// RSA-4096 CA and leaves (rsaEncryption keys).
    Rsa4096,
    /// ECDSA P-256 CA and leaves.
    EcdsaP256,
}

impl Hierarchy {
    /// The CA certificate peers trust.
    pub fn ca_pem(self) -> &'static [u8] {
        match self {
            Hierarchy::Rsa4096 => certs::CA_PEM,
            Hierarchy::EcdsaP256 => certs::ECDSA_CA_PEM,
        }
    }

    /// The server's chain (leaf, then CA) and its private key.
    pub fn server_pem(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Hierarchy::Rsa4096 => (certs::LEAF_CHAIN_PEM, certs::LEAF_KEY_PEM),
            Hierarchy::EcdsaP256 => (certs::ECDSA_LEAF_CHAIN_PEM, certs::ECDSA_LEAF_KEY_PEM),
        }
    }

    /// The mTLS client's chain (leaf, then CA) and its private key.
    pub fn client_pem(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Hierarchy::Rsa4096 => (certs::CLIENT_RSA_CHAIN_PEM, certs::CLIENT_RSA_KEY_PEM),
            Hierarchy::EcdsaP256 => (certs::CLIENT_ECDSA_CHAIN_PEM, certs::CLIENT_ECDSA_KEY_PEM),
        }
    }

    /// The key type s2n-tls reports for this hierarchy's leaves.
    pub fn key_type(self) -> &'static str {
        match self {
            Hierarchy::Rsa4096 => EXPECTED_SERVER_KEY,
            Hierarchy::EcdsaP256 => EXPECTED_ECDSA_KEY,
        }
    }

    /// The TLS 1.3 signature scheme a leaf of this hierarchy signs with.
    pub fn signature_scheme(self) -> &'static str {
        match self {
            Hierarchy::Rsa4096 => EXPECTED_SIGNATURE_SCHEME,
            Hierarchy::EcdsaP256 => EXPECTED_ECDSA_SIGNATURE_SCHEME,
        }
    }

    /// [`signature_scheme`](Hierarchy::signature_scheme) as the signature
    /// algorithm and hash s2n-tls reports for a client certificate. In TLS 1.3
    /// the pair names the scheme uniquely (ECDSA with SHA-256 implies P-256).
    fn signature_parts(self) -> (SignatureAlgorithm, HashAlgorithm) {
        match self {
            Hierarchy::Rsa4096 => (SignatureAlgorithm::RSA_PSS_RSAE, HashAlgorithm::SHA256),
            Hierarchy::EcdsaP256 => (SignatureAlgorithm::ECDSA, HashAlgorithm::SHA256),
        }
    }
}

// ---------------------------------------------------------------------------
// Configs and connections
// ---------------------------------------------------------------------------

/// A numbered policy. Built once per setup: `Policy::from_version` allocates.
fn policy(name: &str) -> Result<Policy, HarnessError> {
    Policy::from_version(name).context("constructing a security policy")
}

/// [`PINNED_POLICY`].
fn pinned_policy() -> Result<Policy, HarnessError> {
    policy(PINNED_POLICY)
}

/// A builder with what every harness config shares: no system trust store,
/// the given policy and fixed clocks.
fn base_builder(policy: &Policy) -> Result<config::Builder, HarnessError> {
    let mut builder = config::Builder::new();
    builder
        .with_system_certs(false)
        .context("skipping the system trust store")?
        .set_security_policy(policy)
        .context("setting the security policy")?
        .set_wall_clock(FixedWallClock)
        .context("setting the wall clock")?
        .set_monotonic_clock(FixedMonotonicClock)
        .context("setting the monotonic clock")?;
    Ok(builder)
}

/// What a server config has beyond [`base_builder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ServerOptions {
    /// Whose server chain and key it loads.
    hierarchy: Hierarchy,
    /// Issue and accept session tickets (with a fixed ticket key).
    tickets: bool,
    /// Require a client certificate, verified against the hierarchy's CA.
    client_auth: bool,
}

impl ServerOptions {
    /// RSA-4096, no tickets, no client authentication.
    const RSA: ServerOptions = ServerOptions {
        hierarchy: Hierarchy::Rsa4096,
        tickets: false,
        client_auth: false,
    };
}

/// Server config: the hierarchy's chain and key; with `tickets`, a fixed
/// session-ticket key so it issues and accepts tickets; with `client_auth`,
/// a required client certificate, the hierarchy's CA as the only trust anchor
/// and the `localhost` name check on the client's leaf.
fn server_config(policy: &Policy, options: ServerOptions) -> Result<Config, HarnessError> {
    let mut builder = base_builder(policy)?;
    let (chain, key) = options.hierarchy.server_pem();
    builder
        .load_pem(chain, key)
        .context("loading the server chain and key")?;
    if options.tickets {
        builder
            .add_session_ticket_key(
                resumption::TICKET_KEY_NAME,
                &resumption::TICKET_KEY,
                clock::fixed_wall_time(),
            )
            .context("adding the session-ticket key")?;
    }
    if options.client_auth {
        builder
            .set_client_auth_type(ClientAuthType::Required)
            .context("requiring client certificates")?
            .trust_pem(options.hierarchy.ca_pem())
            .context("trusting the client CA")?
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .context("setting the client-certificate name check")?;
    }
    builder.build().context("building the server config")
}

/// What a client config has beyond [`base_builder`].
#[derive(Debug, Clone)]
struct ClientOptions {
    /// Whose CA it trusts and (with `client_cert`) whose client leaf it loads.
    hierarchy: Hierarchy,
    /// Ask for session tickets and hand them to the store.
    tickets: Option<TicketStore>,
    /// Load the hierarchy's client chain and key, for mTLS.
    client_cert: bool,
}

impl ClientOptions {
    /// Trusts the RSA-4096 CA; no tickets, no client certificate.
    fn rsa() -> ClientOptions {
        ClientOptions {
            hierarchy: Hierarchy::Rsa4096,
            tickets: None,
            client_cert: false,
        }
    }
}

/// Client config: trusts the hierarchy's CA, accepts `localhost`; with
/// `tickets`, asks for session tickets and hands them to the store; with
/// `client_cert`, presents the hierarchy's client chain when asked.
fn client_config(policy: &Policy, options: ClientOptions) -> Result<Config, HarnessError> {
    let mut builder = base_builder(policy)?;
    builder
        .trust_pem(options.hierarchy.ca_pem())
        .context("trusting the test CA")?
        .set_verify_host_callback(AcceptHost::LOCALHOST)
        .context("setting the verify-host callback")?;
    if options.client_cert {
        let (chain, key) = options.hierarchy.client_pem();
        builder
            .load_pem(chain, key)
            .context("loading the client chain and key")?;
    }
    if let Some(store) = options.tickets {
        builder
            .enable_session_tickets(true)
            .context("enabling session tickets")?
            .set_session_ticket_callback(store)
            .context("setting the session-ticket callback")?;
    }
    builder.build().context("building the client config")
}

/// Client and server configs, built once in `setup` and shared by every run:
/// real servers reuse one config, and a fresh config per run would count
/// certificate parsing and private-key precomputation as part of the
/// handshake.
#[derive(Debug)]
pub struct Configs {
    client: Config,
    server: Config,
}

/// A fresh client and server joined in memory, nothing sent yet. The client
/// sends SNI `localhost` and, with `session`, offers that session.
fn new_pair(
    client_config: &Config,
    server_config: &Config,
    client_to_server_capacity: usize,
    session: Option<&[u8]>,
) -> Result<Pair, HarnessError> {
    let mut client = client_config
        .build_connection(Mode::Client)
        .context("creating the client connection")?;
    client
        .set_blinding(Blinding::SelfService)
        .context("setting client blinding")?
        .set_server_name(SERVER_NAME)
        .context("setting the server name")?;
    if let Some(session) = session {
        client
            .set_session_ticket(session)
            .context("setting the client's session")?;
    }
    let mut server = server_config
        .build_connection(Mode::Server)
        .context("creating the server connection")?;
    server
        .set_blinding(Blinding::SelfService)
        .context("setting server blinding")?;
    Pair::connect(client, server, client_to_server_capacity)
}

// ---------------------------------------------------------------------------
// What a handshake must have negotiated
// ---------------------------------------------------------------------------

/// Everything a harness's handshake must have negotiated, checked on both
/// sides by [`check_negotiated`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Expected {
    version: Version,
    cipher: &'static str,
    group: &'static str,
    /// The certificate hierarchy the server authenticated with; `None` for a
    /// resumption, which sends no certificate and makes no signature.
    server: Option<Hierarchy>,
    /// The server's signature scheme, as s2n-tls names it for `version`.
    server_scheme: Option<&'static str>,
    /// The hierarchy of a client certificate the server required and
    /// verified; `None` when there is no client authentication.
    client: Option<Hierarchy>,
    /// Whether the handshake resumed a session.
    resumed: bool,
    /// Whether the configs have session tickets on (only in
    /// [`SessionResumption`]). Without them nothing may be left in the
    /// transport after the handshake: in particular no TLS 1.3
    /// NewSessionTicket, which a server with tickets sends right after it.
    tickets: bool,
}

impl Expected {
    /// A full TLS 1.3 handshake with the contract's parameters, the server
    /// authenticating with `hierarchy`.
    const fn tls13(hierarchy: Hierarchy) -> Expected {
        Expected {
            version: Version::TLS13,
            cipher: EXPECTED_CIPHER,
            group: EXPECTED_GROUP,
            server: Some(hierarchy),
            server_scheme: Some(match hierarchy {
                Hierarchy::Rsa4096 => EXPECTED_SIGNATURE_SCHEME,
                Hierarchy::EcdsaP256 => EXPECTED_ECDSA_SIGNATURE_SCHEME,
            }),
            client: None,
            resumed: false,
            tickets: false,
        }
    }

    /// [`Expected::tls13`] with a required client certificate of the same
    /// hierarchy.
    const fn mtls(hierarchy: Hierarchy) -> Expected {
        let mut expected = Expected::tls13(hierarchy);
        expected.client = Some(hierarchy);
        expected
    }

    /// The full TLS 1.2 handshake of [`HandshakeTls12Rsa4096`].
    const TLS12_RSA: Expected = Expected {
        version: Version::TLS12,
        cipher: EXPECTED_TLS12_CIPHER,
        group: EXPECTED_GROUP,
        server: Some(Hierarchy::Rsa4096),
        server_scheme: Some(EXPECTED_SIGNATURE_SCHEME),
        client: None,
        resumed: false,
        tickets: false,
    };

    /// The full TLS 1.3 handshake of [`SessionResumption`]'s configs, which
    /// have session tickets on: the server sends a NewSessionTicket after it.
    const TICKETS_FULL: Expected = {
        let mut expected = Expected::tls13(Hierarchy::Rsa4096);
        expected.tickets = true;
        expected
    };

    /// A TLS 1.3 resumption: PSK from a ticket with a secp256r1 key exchange,
    /// no certificate, no signature.
    const RESUMED: Expected = Expected {
        version: Version::TLS13,
        cipher: EXPECTED_CIPHER,
        group: EXPECTED_GROUP,
        server: None,
        server_scheme: None,
        client: None,
        resumed: true,
        tickets: true,
    };
}

/// Checks both sides finished a handshake with exactly the `expected`
/// parameters.
fn check_negotiated(pair: &Pair, expected: &Expected) -> Result<(), HarnessError> {
    let resumed = expected.resumed;
    for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
        ensure(conn.handshake_complete(), || {
            format!("{side}: handshake is not complete")
        })?;
        let version = conn
            .actual_protocol_version()
            .context("reading the protocol version")?;
        ensure(version == expected.version, || {
            format!(
                "{side}: negotiated {version:?}, expected {:?}",
                expected.version
            )
        })?;
        let cipher = conn.cipher_suite().context("reading the cipher suite")?;
        ensure(cipher == expected.cipher, || {
            format!(
                "{side}: negotiated cipher {cipher}, pinned {}",
                expected.cipher
            )
        })?;
        let group = conn.selected_key_exchange_group();
        ensure(group == Some(expected.group), || {
            format!(
                "{side}: negotiated group {group:?}, pinned {}",
                expected.group
            )
        })?;
        let handshake_type = conn
            .handshake_type()
            .context("reading the handshake type")?;
        ensure(conn.resumed() == resumed, || {
            format!(
                "{side}: resumed() is {}, expected {resumed} (handshake type {handshake_type})",
                conn.resumed()
            )
        })?;
        ensure(handshake_type.contains("FULL_HANDSHAKE") != resumed, || {
            format!("{side}: handshake type {handshake_type}, expected resumed={resumed}")
        })?;
        ensure(!handshake_type.contains("HELLO_RETRY_REQUEST"), || {
            format!("{side}: handshake type {handshake_type}: a HelloRetryRequest was needed")
        })?;
        ensure(!handshake_type.contains("WITH_SESSION_TICKET"), || {
            format!("{side}: handshake type {handshake_type}: a TLS 1.2 ticket was issued")
        })?;
        let client_auth = expected.client.is_some();
        ensure(
            handshake_type.contains("CLIENT_AUTH") == client_auth,
            || {
                format!(
                    "{side}: handshake type {handshake_type}, expected client auth {client_auth}"
                )
            },
        )?;
        let scheme = conn.signature_scheme();
        ensure(scheme == expected.server_scheme, || {
            format!(
                "{side}: signature scheme {scheme:?}, expected {:?}",
                expected.server_scheme
            )
        })?;
        check_client_auth(side, conn, expected.client)?;
    }
    if !expected.tickets {
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
    }
    if let Some(server) = expected.server {
        let key = pair
            .client
            .signature_public_key_type(Mode::Server)
            .context("reading the server's key type")?;
        ensure(key == server.key_type(), || {
            format!("server key is {key}, expected {}", server.key_type())
        })?;
    }
    if let Some(client) = expected.client {
        ensure(pair.client.client_cert_used(), || {
            "the client did not send its certificate".to_owned()
        })?;
        let chain = pair
            .server
            .client_cert_chain_bytes()
            .context("reading the client's chain on the server")?;
        ensure(chain.is_some_and(|chain| !chain.is_empty()), || {
            "the server holds no verified client certificate chain".to_owned()
        })?;
        let key = pair
            .server
            .signature_public_key_type(Mode::Client)
            .context("reading the client's key type on the server")?;
        ensure(key == client.key_type(), || {
            format!("client key is {key}, expected {}", client.key_type())
        })?;
    }
    Ok(())
}

/// Checks the client's CertificateVerify scheme as `conn` saw it: the
/// hierarchy's scheme when a client certificate was expected, none otherwise.
fn check_client_auth(
    side: &str,
    conn: &Connection,
    client: Option<Hierarchy>,
) -> Result<(), HarnessError> {
    let algorithm = conn
        .selected_client_signature_algorithm()
        .context("reading the client signature algorithm")?;
    let hash = conn
        .selected_client_hash_algorithm()
        .context("reading the client signature hash")?;
    let expected = client.map(Hierarchy::signature_parts);
    ensure((algorithm, hash) == expected.unzip(), || {
        format!(
            "{side}: client signature {algorithm:?} with {hash:?}, expected {:?}",
            expected
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_host_accepts_localhost_only() {
        let callback = AcceptHost::LOCALHOST;
        assert!(callback.verify_host_name("localhost"));
        for other in ["", "localhost.", "LOCALHOST", "example.com", "*.localhost"] {
            assert!(!callback.verify_host_name(other), "{other:?}");
        }
    }

    /// Every named policy the harnesses use exists in this s2n-tls: a config
    /// with an unknown name fails to build.
    #[test]
    fn every_policy_exists() {
        for name in [
            PINNED_POLICY,
            TLS12_CLIENT_POLICY,
            AES256_SERVER_POLICY,
            CHACHA20_POLICY,
        ] {
            let policy = policy(name).expect("policy");
            base_builder(&policy).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let unknown = policy("no-such-policy").expect("policy name");
        assert!(base_builder(&unknown).is_err());
    }

    #[test]
    fn hierarchies_pair_the_right_files() {
        for hierarchy in [Hierarchy::Rsa4096, Hierarchy::EcdsaP256] {
            let ca = hierarchy.ca_pem();
            assert!(hierarchy.server_pem().0.ends_with(ca), "{hierarchy:?}");
            assert!(hierarchy.client_pem().0.ends_with(ca), "{hierarchy:?}");
        }
        assert_ne!(Hierarchy::Rsa4096.ca_pem(), Hierarchy::EcdsaP256.ca_pem());
    }

    /// The client really verifies the server's name: a client that accepts
    /// only another name fails the handshake against the `localhost` leaf.
    #[test]
    fn handshake_fails_when_the_host_callback_rejects() {
        let policy = pinned_policy().expect("policy");
        let mut builder = base_builder(&policy).expect("builder");
        builder
            .trust_pem(certs::CA_PEM)
            .expect("trust")
            .set_verify_host_callback(AcceptHost("example.com"))
            .expect("callback");
        let client = builder.build().expect("client config");
        let server = server_config(&policy, ServerOptions::RSA).expect("server config");
        let mut pair = new_pair(&client, &server, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    /// The client really verifies the chain: without the test CA in its
    /// trust store (and with no system store), the handshake fails.
    #[test]
    fn handshake_fails_without_the_test_ca() {
        let policy = pinned_policy().expect("policy");
        let mut builder = base_builder(&policy).expect("builder");
        builder
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .expect("callback");
        let client = builder.build().expect("client config");
        let server = server_config(&policy, ServerOptions::RSA).expect("server config");
        let mut pair = new_pair(&client, &server, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    /// A client trusting the other hierarchy's CA rejects the server.
    #[test]
    fn handshake_fails_with_the_other_hierarchys_ca() {
        let policy = pinned_policy().expect("policy");
        let client = client_config(
            &policy,
            ClientOptions {
                hierarchy: Hierarchy::EcdsaP256,
                tickets: None,
                client_cert: false,
            },
        )
        .expect("client config");
        let server = server_config(&policy, ServerOptions::RSA).expect("server config");
        let mut pair = new_pair(&client, &server, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    #[test]
    fn check_rejects_other_expectations() {
        let policy = pinned_policy().expect("policy");
        let client = client_config(&policy, ClientOptions::rsa()).expect("client config");
        let server = server_config(&policy, ServerOptions::RSA).expect("server config");
        let mut pair = new_pair(&client, &server, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        pair.handshake().expect("handshake");
        let good = Expected::tls13(Hierarchy::Rsa4096);
        check_negotiated(&pair, &good).expect("the real parameters");
        for (what, bad) in [
            ("ecdsa", Expected::tls13(Hierarchy::EcdsaP256)),
            ("mtls", Expected::mtls(Hierarchy::Rsa4096)),
            ("tls12", Expected::TLS12_RSA),
            ("resumed", Expected::RESUMED),
            (
                "group",
                Expected {
                    group: "x25519",
                    ..good
                },
            ),
            (
                "cipher",
                Expected {
                    cipher: "TLS_AES_256_GCM_SHA384",
                    ..good
                },
            ),
        ] {
            assert!(check_negotiated(&pair, &bad).is_err(), "{what}");
        }
    }

    #[test]
    fn context_keeps_the_source() {
        let error: Result<(), HarnessError> = Err::<(), _>("inner").context("outer");
        let error = error.expect_err("error");
        assert_eq!(error.to_string(), "outer: inner");
        assert!(std::error::Error::source(&*error).is_some());
    }
}
