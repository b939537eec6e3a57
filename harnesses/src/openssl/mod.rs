//! OpenSSL harnesses.
//!
//! Fifteen mutually exclusive paths of the system OpenSSL (3.0 on Debian 12)
//! through the `openssl` 0.10 crate, each a unit struct implementing
//! [`Harness`](regress_measure::Harness):
//!
//! - [`ConfigBuild`]: building a server and a client `SslContext` from PEM.
//! - [`HandshakeRsa4096`], [`HandshakeEcdsaP256`]: one full TLS 1.3
//!   handshake with an RSA-4096 or an ECDSA P-256 server certificate.
//! - [`MtlsRsa4096`], [`MtlsEcdsaP256`]: the same with client certificates.
//! - [`HandshakeTls12Rsa4096`]: one full TLS 1.2 ECDHE-RSA handshake.
//! - [`SessionResumption`]: one TLS 1.3 handshake resumed from a ticket.
//! - [`RecordAes128Gcm16k`], [`RecordAes128Gcm1k`], [`RecordAes256Gcm16k`],
//!   [`RecordAes256Gcm1k`], [`RecordChacha20Poly1305_16k`],
//!   [`RecordChacha20Poly1305_1k`]: 1 MiB of application data, client to
//!   server, in 16 KiB or 1 KiB writes, with each TLS 1.3 cipher suite.
//! - [`X509ParseChain`]: decoding the RSA leaf and CA certificates from DER.
//! - [`X509VerifyChain`]: verifying the RSA leaf against the CA.
//!
//! # What every harness pins, and why
//!
//! The three libraries this project measures must negotiate the same thing,
//! or their counts compare defaults rather than code (OpenSSL alone would
//! pick X25519 and AES-256-GCM). Every context is built by [`Profile`] and
//! every `check` asserts what was negotiated ([`check_negotiated`]):
//!
//! - **TLS 1.3** (min = max), cipher suite [`TLS13_HANDSHAKE_SUITE`] for the
//!   handshakes (the record harnesses pin their own), key-exchange group
//!   secp256r1 only ([`GROUPS`]; the client's one key share is P-256, so
//!   there is never a HelloRetryRequest), and exactly one signature scheme:
//!   [`RSA_SIGALG`] or [`ECDSA_SIGALG`] (`set_sigalgs_list` on both sides,
//!   which also fixes the scheme of an mTLS client's CertificateVerify).
//! - **TLS 1.2** ([`HandshakeTls12Rsa4096`]): [`TLS12_CIPHER`], P-256,
//!   [`RSA_SIGALG`], the extended master secret (OpenSSL's default, asserted).
//! - **No resumption** anywhere but [`SessionResumption`]: the session cache
//!   is off on both sides, `SSL_OP_NO_TICKET` is set and the server issues
//!   no TLS 1.3 tickets (`set_num_tickets(0)`). [`SessionResumption`] turns
//!   tickets on, with exactly one ticket per handshake.
//! - **No system trust store**: `set_default_verify_paths` is never called;
//!   a verifying side trusts a fresh `X509Store` holding only the test CA of
//!   its hierarchy ([`crate::certs`]).
//! - **The server name**: clients send `localhost` as SNI and verify it as
//!   the certificate's host name (`X509_VERIFY_PARAM_set1_host`).
//!
//! # Determinism
//!
//! Counts must repeat to the instruction, so nothing in a counted path may
//! depend on randomness, time, the machine or addresses:
//!
//! - **A deterministic RNG** ([`rng`]) replaces OpenSSL's DRBG for the whole
//!   process, installed by [`init`] before anything draws randomness. It is
//!   **test-only: a process running it has no security at all.** The runner
//!   also hides RDRAND (`OPENSSL_ia32cap`).
//! - **A fixed verification time**, [`FIXED_VERIFY_TIME`], on every context
//!   and store (`X509_VERIFY_PARAM_set_time`), so certificate validity does
//!   not depend on the day. OpenSSL 3.0 has no clock hook for the rest of
//!   TLS: [`SessionResumption`] documents how its ticket-age arithmetic is
//!   kept on one branch.
//! - **No configuration file**: [`init`] initialises OpenSSL with
//!   `OPENSSL_INIT_NO_LOAD_CONFIG`. By default OpenSSL reads the machine's
//!   `openssl.cnf`, which can load providers and apply system-wide `ssl_conf`
//!   settings (some distributions set a `CipherString` or a minimum protocol)
//!   to every `SSL_CTX_new`: counts would depend on a file outside the
//!   project. (This machine's Debian 12 file sets nothing of the kind.)
//! - **An in-memory transport** ([`transport`]) with no sockets, addresses or
//!   time.
//!
//! Every harness reports the system library's version string
//! (`OpenSSL 3.0.x ...`) through [`Harness::runtime_libraries`]: `Cargo.lock`
//! only knows the crate versions, and the counts belong to the library.
//!
//! [`Harness::runtime_libraries`]: regress_measure::Harness::runtime_libraries

pub mod ffi;
mod handshake;
mod record;
pub mod rng;
pub mod transport;
mod x509;

use std::sync::OnceLock;

use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::ssl::{
    NameType, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode,
    SslSessionRef, SslVerifyMode, SslVersion,
};
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::{X509Ref, X509VerifyResult, X509};
use regress_measure::HarnessError;

pub use self::handshake::{
    ConfigBuild, ConfigBuildSetup, HandshakeEcdsaP256, HandshakeRsa4096, HandshakeTls12Rsa4096,
    MtlsEcdsaP256, MtlsRsa4096, ResumptionSetup, SessionResumption, SESSION_BACKDATE_SECS,
};
pub use self::record::{
    RecordAes128Gcm16k, RecordAes128Gcm1k, RecordAes256Gcm16k, RecordAes256Gcm1k,
    RecordChacha20Poly1305_16k, RecordChacha20Poly1305_1k, RecordSetup, Transfer, RECORD_BYTES,
    TLS13_RECORD_OVERHEAD,
};
use self::transport::Pair;
pub use self::x509::{
    ParseSetup, ParsedChain, VerifyInput, VerifyOutcome, VerifySetup, X509ParseChain,
    X509VerifyChain,
};
use crate::certs::{
    CA_PEM, CLIENT_ECDSA_CHAIN_PEM, CLIENT_ECDSA_KEY_PEM, CLIENT_RSA_CHAIN_PEM, CLIENT_RSA_KEY_PEM,
    ECDSA_CA_PEM, ECDSA_LEAF_CHAIN_PEM, ECDSA_LEAF_KEY_PEM, LEAF_CHAIN_PEM, LEAF_KEY_PEM,
    SERVER_NAME,
};

/// The time every verification runs at: 2026-01-01T00:00:00Z, inside the
/// test certificates' validity (2025-01-01 to 2125-01-01). The same instant
/// as the s2n-tls harnesses' fixed wall clock.
pub const FIXED_VERIFY_TIME: libc::time_t = 1_767_225_600;

/// The TLS 1.3 cipher suite of every handshake harness.
pub const TLS13_HANDSHAKE_SUITE: &str = "TLS_AES_128_GCM_SHA256";

/// The one TLS 1.2 cipher suite [`HandshakeTls12Rsa4096`] allows.
pub const TLS12_CIPHER: &str = "ECDHE-RSA-AES128-GCM-SHA256";

/// The one key-exchange group every context allows (`set_groups_list`).
pub const GROUPS: &str = "P-256";

/// The negotiated group every check expects, by its TLS name.
pub const EXPECTED_GROUP: &str = "secp256r1";

/// The one signature scheme of the RSA hierarchy.
pub const RSA_SIGALG: &str = "rsa_pss_rsae_sha256";

/// The one signature scheme of the ECDSA hierarchy.
pub const ECDSA_SIGALG: &str = "ecdsa_secp256r1_sha256";

/// Room in the transport for a handshake's flights.
pub const HANDSHAKE_PIPE_CAPACITY: usize = 64 * 1024;

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
    #[inline]
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
// Library initialisation
// ---------------------------------------------------------------------------

/// Initialises OpenSSL for measurement, once per process: without reading
/// `openssl.cnf`, and with the deterministic RNG ([`rng::install`]).
///
/// Every harness's `setup` calls it first, before any other OpenSSL call, so
/// the library's one-time initialisation stays out of every count and no
/// random byte is ever drawn from OpenSSL's own DRBG.
pub fn init() -> Result<(), HarnessError> {
    static LIBRARY: OnceLock<bool> = OnceLock::new();
    let initialised = *LIBRARY.get_or_init(|| {
        let options = ffi::OPENSSL_INIT_NO_LOAD_CONFIG
            | openssl_sys::OPENSSL_INIT_LOAD_SSL_STRINGS
            | openssl_sys::OPENSSL_INIT_NO_ATEXIT;
        // SAFETY: OPENSSL_init_ssl is thread-safe and may be called any
        // number of times; null settings mean the defaults. Running it
        // before the crate's own `init` makes "no config" the outcome of
        // OpenSSL's one-time config step, which later calls then skip.
        let ok = unsafe { openssl_sys::OPENSSL_init_ssl(options, std::ptr::null()) };
        openssl::init();
        ok == 1
    });
    ensure(initialised, || "OPENSSL_init_ssl failed".to_owned())?;
    rng::install()
}

/// The system OpenSSL's version string, for
/// [`Harness::runtime_libraries`](regress_measure::Harness::runtime_libraries).
fn runtime_libraries() -> Vec<(String, String)> {
    vec![("libssl".into(), openssl::version::version().into())]
}

// ---------------------------------------------------------------------------
// What a context pair is built from
// ---------------------------------------------------------------------------

/// The key type of a certificate hierarchy, and what it signs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// RSA-4096 (rsaEncryption), signing with RSA-PSS.
    Rsa4096,
    /// ECDSA on P-256.
    EcdsaP256,
}

impl KeyKind {
    /// What `SSL_get_peer_signature_type_nid` reports for this hierarchy's
    /// one signature scheme.
    fn signature_type(self) -> Nid {
        match self {
            KeyKind::Rsa4096 => Nid::RSASSAPSS,
            KeyKind::EcdsaP256 => Nid::X9_62_ID_ECPUBLICKEY,
        }
    }

    /// Checks that `cert` carries a key of this kind. Together with the
    /// signature type and digest this pins the scheme: an `rsa_pss_*`
    /// signature by an rsaEncryption key is `rsa_pss_rsae_*`, an ECDSA-SHA256
    /// one by a P-256 key is `ecdsa_secp256r1_sha256`.
    fn check_key(self, cert: &X509Ref) -> Result<(), HarnessError> {
        let key = cert
            .public_key()
            .context("reading a peer certificate's key")?;
        match self {
            KeyKind::Rsa4096 => ensure(key.id() == Id::RSA && key.bits() == 4096, || {
                format!(
                    "peer key is {:?}/{} bits, expected RSA-4096",
                    key.id(),
                    key.bits()
                )
            }),
            KeyKind::EcdsaP256 => {
                let curve = key.ec_key().ok().and_then(|ec| ec.group().curve_name());
                ensure(
                    key.id() == Id::EC && curve == Some(Nid::X9_62_PRIME256V1),
                    || format!("peer key is {:?} on {curve:?}, expected P-256", key.id()),
                )
            }
        }
    }
}

/// One certificate hierarchy of [`crate::certs`]: a CA, a server leaf and a
/// client leaf it signed, and the one signature scheme for its key type.
#[derive(Debug)]
pub struct Hierarchy {
    /// The CA certificate, the only trust anchor of a verifying side.
    pub ca: &'static [u8],
    /// The server's chain (leaf, then CA).
    pub server_chain: &'static [u8],
    /// The server leaf's private key.
    pub server_key: &'static [u8],
    /// The mTLS client's chain (leaf, then CA).
    pub client_chain: &'static [u8],
    /// The client leaf's private key.
    pub client_key: &'static [u8],
    /// The one signature scheme both sides allow (`set_sigalgs_list`).
    pub sigalg: &'static str,
    /// The key type of every leaf in the hierarchy.
    pub key: KeyKind,
}

/// The RSA-4096 hierarchy.
pub const RSA: Hierarchy = Hierarchy {
    ca: CA_PEM,
    server_chain: LEAF_CHAIN_PEM,
    server_key: LEAF_KEY_PEM,
    client_chain: CLIENT_RSA_CHAIN_PEM,
    client_key: CLIENT_RSA_KEY_PEM,
    sigalg: RSA_SIGALG,
    key: KeyKind::Rsa4096,
};

/// The ECDSA P-256 hierarchy.
pub const ECDSA: Hierarchy = Hierarchy {
    ca: ECDSA_CA_PEM,
    server_chain: ECDSA_LEAF_CHAIN_PEM,
    server_key: ECDSA_LEAF_KEY_PEM,
    client_chain: CLIENT_ECDSA_CHAIN_PEM,
    client_key: CLIENT_ECDSA_KEY_PEM,
    sigalg: ECDSA_SIGALG,
    key: KeyKind::EcdsaP256,
};

/// The protocol version and cipher suite a context allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// TLS 1.3 only, with exactly this suite.
    Tls13 { suite: &'static str },
    /// TLS 1.2 only, with [`TLS12_CIPHER`].
    Tls12,
}

impl Protocol {
    fn version(self) -> SslVersion {
        match self {
            Protocol::Tls13 { .. } => SslVersion::TLS1_3,
            Protocol::Tls12 => SslVersion::TLS1_2,
        }
    }

    /// The cipher's OpenSSL name, as `SSL_CIPHER_get_name` reports it.
    fn cipher(self) -> &'static str {
        match self {
            Protocol::Tls13 { suite } => suite,
            Protocol::Tls12 => TLS12_CIPHER,
        }
    }
}

/// Everything that decides what a client and server context negotiate.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    /// Certificates, keys and signature scheme.
    pub hierarchy: &'static Hierarchy,
    /// Version and cipher suite.
    pub protocol: Protocol,
    /// The server requires and verifies a client certificate.
    pub mutual: bool,
    /// The server issues one TLS 1.3 ticket per handshake and the client
    /// accepts it; otherwise tickets are off.
    pub tickets: bool,
}

impl Profile {
    /// The TLS 1.3 handshake profile of `hierarchy`.
    pub const fn tls13(hierarchy: &'static Hierarchy) -> Profile {
        Profile {
            hierarchy,
            protocol: Protocol::Tls13 {
                suite: TLS13_HANDSHAKE_SUITE,
            },
            mutual: false,
            tickets: false,
        }
    }
}

/// What both sides of a profile share: version, suite, group, signature
/// scheme, no session cache, tickets as the profile says, and the fixed
/// verification time.
fn base_builder(profile: &Profile) -> Result<SslContextBuilder, HarnessError> {
    let mut builder = SslContext::builder(SslMethod::tls()).context("SSL_CTX_new")?;
    let version = profile.protocol.version();
    builder
        .set_min_proto_version(Some(version))
        .context("setting the minimum protocol version")?;
    builder
        .set_max_proto_version(Some(version))
        .context("setting the maximum protocol version")?;
    match profile.protocol {
        Protocol::Tls13 { suite } => builder
            .set_ciphersuites(suite)
            .context("setting the TLS 1.3 cipher suite")?,
        Protocol::Tls12 => builder
            .set_cipher_list(TLS12_CIPHER)
            .context("setting the TLS 1.2 cipher")?,
    }
    builder
        .set_groups_list(GROUPS)
        .context("setting the groups")?;
    builder
        .set_sigalgs_list(profile.hierarchy.sigalg)
        .context("setting the signature schemes")?;
    builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    if profile.tickets {
        builder
            .set_num_tickets(1)
            .context("setting the number of tickets")?;
    } else {
        builder.set_options(SslOptions::NO_TICKET);
        builder
            .set_num_tickets(0)
            .context("turning TLS 1.3 tickets off")?;
    }
    builder.verify_param_mut().set_time(FIXED_VERIFY_TIME);
    Ok(builder)
}

/// A fresh store trusting only the CA in `ca_pem`.
fn trust_store(ca_pem: &[u8]) -> Result<X509Store, HarnessError> {
    let ca = X509::from_pem(ca_pem).context("parsing the CA certificate")?;
    let mut store = X509StoreBuilder::new().context("X509_STORE_new")?;
    store.add_cert(ca).context("adding the CA to the store")?;
    Ok(store.build())
}

/// Loads a PEM chain (leaf first) and its private key into `builder`, and
/// checks that they match.
fn load_identity(
    builder: &mut SslContextBuilder,
    chain_pem: &[u8],
    key_pem: &[u8],
) -> Result<(), HarnessError> {
    let mut chain = X509::stack_from_pem(chain_pem)
        .context("parsing the certificate chain")?
        .into_iter();
    let leaf = chain.next().ok_or("the certificate chain is empty")?;
    builder
        .set_certificate(&leaf)
        .context("setting the certificate")?;
    for cert in chain {
        builder
            .add_extra_chain_cert(cert)
            .context("adding a chain certificate")?;
    }
    let key = openssl::pkey::PKey::private_key_from_pem(key_pem).context("parsing the key")?;
    builder
        .set_private_key(&key)
        .context("setting the private key")?;
    builder
        .check_private_key()
        .context("the private key does not match the certificate")
}

/// The server context: `chain_pem`/`key_pem` as its identity; with
/// `profile.mutual`, it requires a client certificate from the hierarchy's
/// CA.
fn server_context(
    profile: &Profile,
    chain_pem: &[u8],
    key_pem: &[u8],
) -> Result<SslContext, HarnessError> {
    let mut builder = base_builder(profile)?;
    load_identity(&mut builder, chain_pem, key_pem)?;
    if profile.mutual {
        builder
            .set_verify_cert_store(trust_store(profile.hierarchy.ca)?)
            .context("setting the server's verify store")?;
        builder.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    Ok(builder.build())
}

/// The client context: verifies the server against `ca_pem` alone and
/// checks the host name [`SERVER_NAME`]; with `profile.mutual`, it presents
/// the hierarchy's client certificate.
fn client_context(profile: &Profile, ca_pem: &[u8]) -> Result<SslContext, HarnessError> {
    client_context_for_host(profile, ca_pem, SERVER_NAME)
}

fn client_context_for_host(
    profile: &Profile,
    ca_pem: &[u8],
    host: &str,
) -> Result<SslContext, HarnessError> {
    let mut builder = base_builder(profile)?;
    builder
        .set_verify_cert_store(trust_store(ca_pem)?)
        .context("setting the client's verify store")?;
    builder.set_verify(SslVerifyMode::PEER);
    builder
        .verify_param_mut()
        .set_host(host)
        .context("setting the host to verify")?;
    if profile.mutual {
        load_identity(
            &mut builder,
            profile.hierarchy.client_chain,
            profile.hierarchy.client_key,
        )?;
    }
    Ok(builder.build())
}

/// A client and server context built once in `setup` and shared by every
/// run: real servers reuse one context, and a fresh context per run would
/// count certificate parsing and key precomputation as part of the
/// handshake.
#[derive(Debug)]
pub struct Contexts {
    /// The client context.
    pub client: SslContext,
    /// The server context.
    pub server: SslContext,
    /// What both were built from, and what checks expect.
    pub profile: Profile,
}

impl Contexts {
    /// Both contexts of `profile`, from the embedded certificates.
    pub fn new(profile: Profile) -> Result<Contexts, HarnessError> {
        init()?;
        let hierarchy = profile.hierarchy;
        Ok(Contexts {
            server: server_context(&profile, hierarchy.server_chain, hierarchy.server_key)?,
            client: client_context(&profile, hierarchy.ca)?,
            profile,
        })
    }
}

/// A fresh client and server joined in memory, nothing sent yet. The client
/// sends SNI [`SERVER_NAME`] and, with `session`, offers that session.
fn new_pair(
    contexts: &Contexts,
    client_to_server_capacity: usize,
    session: Option<&SslSessionRef>,
) -> Result<Pair, HarnessError> {
    let mut client = Ssl::new(&contexts.client).context("creating the client SSL")?;
    client
        .set_hostname(SERVER_NAME)
        .context("setting the server name")?;
    if let Some(session) = session {
        // SAFETY: `set_session` is unsafe because the session must come from
        // a context compatible with this one; it was obtained by a
        // connection of this very client context.
        unsafe { client.set_session(session) }.context("offering the session")?;
    }
    let server = Ssl::new(&contexts.server).context("creating the server SSL")?;
    Pair::connect(client, server, client_to_server_capacity)
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

/// What a handshake must have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A full handshake: certificates and signatures, no resumption.
    Full,
    /// A resumption: PSK from a ticket, no certificate, no signature.
    Resumed,
}

/// Checks that both sides finished a handshake with exactly what `profile`
/// pins, and that it was (or was not) resumed.
pub fn check_negotiated(
    pair: &Pair,
    profile: &Profile,
    expect: Expect,
) -> Result<(), HarnessError> {
    let resumed = expect == Expect::Resumed;
    let version = profile.protocol.version();
    let cipher = profile.protocol.cipher();
    for (side, stream) in [("client", &pair.client), ("server", &pair.server)] {
        let ssl = stream.ssl();
        ensure(ssl.is_init_finished(), || {
            format!("{side}: the handshake is not finished")
        })?;
        let got = ssl.version2();
        ensure(got == Some(version), || {
            format!(
                "{side}: negotiated {}, expected {version:?}",
                ssl.version_str()
            )
        })?;
        let got = ssl.current_cipher().map(|c| c.name());
        ensure(got == Some(cipher), || {
            format!("{side}: negotiated cipher {got:?}, pinned {cipher}")
        })?;
        let group = ffi::negotiated_group(ssl);
        let name = group.and_then(|nid| ffi::group_name(ssl, nid));
        ensure(name == Some(EXPECTED_GROUP), || {
            format!("{side}: negotiated group {name:?} ({group:?}), pinned {EXPECTED_GROUP}")
        })?;
        ensure(ssl.session_reused() == resumed, || {
            format!(
                "{side}: session_reused() is {}, expected {resumed} ({expect:?} handshake)",
                ssl.session_reused()
            )
        })?;
        if version == SslVersion::TLS1_2 {
            ensure(ffi::extended_master_secret(ssl), || {
                format!("{side}: no extended master secret")
            })?;
        }
    }

    let client = pair.client.ssl();
    let server = pair.server.ssl();
    let servername = server.servername(NameType::HOST_NAME);
    ensure(servername == Some(SERVER_NAME), || {
        format!("server saw SNI {servername:?}, expected {SERVER_NAME}")
    })?;

    // Signatures: the server's CertificateVerify (or TLS 1.2
    // ServerKeyExchange), and with mTLS the client's CertificateVerify.
    let key = profile.hierarchy.key;
    let scheme = (!resumed).then(|| (key.signature_type(), Nid::SHA256));
    let client_scheme = (!resumed && profile.mutual).then(|| (key.signature_type(), Nid::SHA256));
    let signatures = [
        (
            "server's signature, as the client saw it",
            ffi::peer_signature_type(client).zip(ffi::peer_signature_digest(client)),
            scheme,
        ),
        (
            "server's signature, as the server made it",
            ffi::own_signature_type(server).zip(ffi::own_signature_digest(server)),
            scheme,
        ),
        (
            "client's signature, as the server saw it",
            ffi::peer_signature_type(server).zip(ffi::peer_signature_digest(server)),
            client_scheme,
        ),
        (
            "client's signature, as the client made it",
            ffi::own_signature_type(client).zip(ffi::own_signature_digest(client)),
            client_scheme,
        ),
    ];
    for (what, got, expected) in signatures {
        ensure(got == expected, || {
            format!(
                "{what}: {got:?}, expected {expected:?} ({})",
                profile.hierarchy.sigalg
            )
        })?;
    }

    // Certificates: the client verified the server's (kept in the session
    // when resumed); with mTLS the server verified the client's.
    let server_cert = client
        .peer_certificate()
        .ok_or("the client has no server certificate")?;
    key.check_key(&server_cert)?;
    ensure(client.verify_result() == X509VerifyResult::OK, || {
        format!("client's verification: {}", client.verify_result())
    })?;
    match server.peer_certificate() {
        Some(client_cert) if profile.mutual => {
            key.check_key(&client_cert)?;
            ensure(server.verify_result() == X509VerifyResult::OK, || {
                format!("server's verification: {}", server.verify_result())
            })?;
        }
        None if !profile.mutual => {}
        Some(_) => return Err("the server holds a client certificate without mTLS".into()),
        None => return Err("the server has no client certificate".into()),
    }
    Ok(())
}

/// The check of every full-handshake harness: the pinned parameters, nothing
/// left in the transport (so no ticket or other message was sent after the
/// handshake) and no ticket in the client's session.
fn check_full_handshake(contexts: &Contexts, pair: &Pair) -> Result<(), HarnessError> {
    check_negotiated(pair, &contexts.profile, Expect::Full)?;
    let in_flight = pair.in_flight();
    ensure(in_flight == (0, 0), || {
        format!("bytes left in the transport after the handshake: {in_flight:?}")
    })?;
    let session = pair
        .client
        .ssl()
        .session()
        .ok_or("the client has no session")?;
    ensure(!ffi::session_has_ticket(session), || {
        "the client received a session ticket".to_owned()
    })?;
    if contexts.profile.protocol == Protocol::Tls12 {
        // With the server's session cache off, OpenSSL sends an empty
        // session ID: nothing to resume statefully either.
        ensure(session.id().is_empty(), || {
            format!(
                "the server issued a session ID of {} bytes",
                session.id().len()
            )
        })?;
    }
    Ok(())
}

/// A deterministic, non-repeating-looking payload (xorshift64), so a lost,
/// duplicated or reordered record cannot go unnoticed by the check.
fn payload(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let take = (len - out.len()).min(8);
        out.extend_from_slice(&state.to_le_bytes()[..take]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_measure::Harness;

    #[test]
    fn runtime_library_is_the_system_openssl() {
        let libraries = HandshakeRsa4096.runtime_libraries();
        assert_eq!(libraries.len(), 1);
        assert_eq!(libraries[0].0, "libssl");
        assert!(libraries[0].1.starts_with("OpenSSL 3."), "{libraries:?}");
    }

    #[test]
    fn fixed_time_is_new_year_2026() {
        // 56 years of 365 days plus the 14 leap days from 1972 to 2024.
        assert_eq!(FIXED_VERIFY_TIME, (56 * 365 + 14) * 86_400);
    }

    /// The client really verifies the server's name.
    #[test]
    fn handshake_fails_for_another_host() {
        init().expect("init");
        let profile = Profile::tls13(&RSA);
        let contexts = Contexts {
            client: client_context_for_host(&profile, RSA.ca, "example.com").expect("client"),
            server: server_context(&profile, RSA.server_chain, RSA.server_key).expect("server"),
            profile,
        };
        let mut pair = new_pair(&contexts, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
        assert_eq!(
            pair.client.ssl().verify_result().as_raw(),
            openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH
        );
    }

    /// The client really verifies the chain: trusting only the ECDSA CA, it
    /// rejects the RSA server.
    #[test]
    fn handshake_fails_with_the_wrong_ca() {
        init().expect("init");
        let profile = Profile::tls13(&RSA);
        let contexts = Contexts {
            client: client_context(&profile, ECDSA.ca).expect("client"),
            server: server_context(&profile, RSA.server_chain, RSA.server_key).expect("server"),
            profile,
        };
        let mut pair = new_pair(&contexts, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    /// An mTLS server really requires a client certificate.
    #[test]
    fn mtls_server_rejects_a_client_without_certificate() {
        init().expect("init");
        let mutual = Profile {
            mutual: true,
            ..Profile::tls13(&RSA)
        };
        let contexts = Contexts {
            client: client_context(&Profile::tls13(&RSA), RSA.ca).expect("client"),
            server: server_context(&mutual, RSA.server_chain, RSA.server_key).expect("server"),
            profile: mutual,
        };
        let mut pair = new_pair(&contexts, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        // The TLS 1.3 client finishes before the server has judged it; the
        // server's failure is what matters.
        let error = pair.handshake().expect_err("no client certificate");
        assert!(error.to_string().contains("server"), "{error}");
    }

    #[test]
    fn payload_is_deterministic_and_not_constant() {
        let a = payload(1 << 20);
        assert_eq!(a.len(), 1 << 20);
        assert_eq!(a, payload(1 << 20));
        assert_ne!(a[..16384], a[16384..32768]);
    }

    #[test]
    fn context_keeps_the_source() {
        let error: Result<(), HarnessError> = Err::<(), _>("inner").context("outer");
        let error = error.expect_err("error");
        assert_eq!(error.to_string(), "outer: inner");
        assert!(std::error::Error::source(&*error).is_some());
    }
}
