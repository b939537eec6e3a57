//! OpenSSL contexts from a path's [`Profile`]: version, suite, group and
//! signature scheme pinned on both sides, no session cache, tickets only
//! when the profile asks, the fixed verification time, the test PKI.

use openssl::dh::Dh;
use openssl::ssl::{
    SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode,
};
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::X509;
use regress_measure::HarnessError;

use super::system::init;
use crate::common::error::Context as _;
use crate::common::pins::{NamedGroup, TlsVersion};
use crate::common::pki::Host;
use crate::common::time::FIXED_UNIX_SECS;
use crate::paths::{Profile, Resumption};

/// The fixed time as OpenSSL takes it (`X509_VERIFY_PARAM_set_time`).
pub const FIXED_VERIFY_TIME: libc::time_t = FIXED_UNIX_SECS as libc::time_t;

/// A group's name in OpenSSL's group lists (`set_groups_list`).
fn group_name(group: NamedGroup) -> &'static str {
    match group {
        NamedGroup::Secp256r1 => "P-256",
        NamedGroup::X25519 => "X25519",
        NamedGroup::X25519MlKem768 => "X25519MLKEM768",
        NamedGroup::Ffdhe2048 => "ffdhe2048",
    }
}

/// An OpenSSL group list of `groups`, in order. An OpenSSL client sends
/// one key share, for the first group of its list.
fn group_list(groups: &[NamedGroup]) -> String {
    groups
        .iter()
        .map(|group| group_name(*group))
        .collect::<Vec<_>>()
        .join(":")
}

/// What both sides of a profile share: the version (min = max), exactly the
/// pinned suite (`set_ciphersuites` for TLS 1.3, `set_cipher_list` for
/// TLS 1.2), the pinned group only (the client's one key share is of it, so
/// there is no HelloRetryRequest; `groups` says otherwise for a client that
/// guesses another group first), exactly one signature scheme
/// (`set_sigalgs_list` on both sides, which also fixes the scheme of an mTLS
/// client's CertificateVerify), sessions as the profile says (none:
/// `SSL_OP_NO_TICKET`, no TLS 1.3 tickets and no session cache; tickets:
/// exactly one per handshake, no cache; cache: the server's internal
/// session cache and one stateful ticket per handshake), and the fixed
/// verification time.
fn base_builder(
    profile: &Profile,
    groups: &[NamedGroup],
) -> Result<SslContextBuilder, HarnessError> {
    let mut builder = SslContext::builder(SslMethod::tls()).context("SSL_CTX_new")?;
    let pins = &profile.pins;
    let version = match pins.version {
        TlsVersion::Tls12 => openssl::ssl::SslVersion::TLS1_2,
        TlsVersion::Tls13 => openssl::ssl::SslVersion::TLS1_3,
    };
    builder
        .set_min_proto_version(Some(version))
        .context("setting the minimum protocol version")?;
    builder
        .set_max_proto_version(Some(version))
        .context("setting the maximum protocol version")?;
    match pins.version {
        TlsVersion::Tls13 => builder
            .set_ciphersuites(pins.suite.name())
            .context("setting the TLS 1.3 cipher suite")?,
        TlsVersion::Tls12 => builder
            .set_cipher_list(pins.suite.name())
            .context("setting the TLS 1.2 cipher")?,
    }
    builder
        .set_groups_list(&group_list(groups))
        .context("setting the groups")?;
    builder
        .set_sigalgs_list(pins.scheme.name())
        .context("setting the signature schemes")?;
    match profile.resumption {
        Some(Resumption::Ticket) => {
            builder.set_session_cache_mode(SslSessionCacheMode::OFF);
            builder
                .set_num_tickets(1)
                .context("setting the number of tickets")?;
        }
        Some(Resumption::Cache) => {
            // A TLS 1.3 server with SSL_OP_NO_TICKET issues stateful
            // tickets: the session stays in its internal cache and the
            // ticket is its id. The client side keeps no cache (the
            // harness hands it its session).
            builder.set_session_cache_mode(SslSessionCacheMode::SERVER);
            builder.set_options(SslOptions::NO_TICKET);
            builder
                .set_num_tickets(1)
                .context("setting the number of tickets")?;
        }
        None => {
            builder.set_session_cache_mode(SslSessionCacheMode::OFF);
            builder.set_options(SslOptions::NO_TICKET);
            builder
                .set_num_tickets(0)
                .context("turning TLS 1.3 tickets off")?;
        }
    }
    builder.verify_param_mut().set_time(FIXED_VERIFY_TIME);
    Ok(builder)
}

/// A fresh store trusting only the CA in `ca_pem`: `set_default_verify_paths`
/// is never called, so no system trust store.
pub fn trust_store(ca_pem: &[u8]) -> Result<X509Store, HarnessError> {
    let ca = X509::from_pem(ca_pem).context("parsing the CA certificate")?;
    let mut store = X509StoreBuilder::new().context("X509_STORE_new")?;
    store.add_cert(ca).context("adding the CA to the store")?;
    Ok(store.build())
}

/// Loads a PEM chain (leaf first) and its private key into `builder`, and
/// checks that they match.
pub fn load_identity(
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
/// client authentication, it requires a client certificate from the
/// profile's CA (`SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT`).
pub fn server_context(
    profile: &Profile,
    chain_pem: &[u8],
    key_pem: &[u8],
) -> Result<SslContext, HarnessError> {
    let mut builder = base_builder(profile, &[profile.pins.group])?;
    load_identity(&mut builder, chain_pem, key_pem)?;
    // A TLS 1.2 DHE server exchanges keys on its configured parameters.
    if let Some(pem) = profile.pins.group.dh_params_pem() {
        let params = Dh::params_from_pem(pem).context("reading the DH parameters")?;
        builder
            .set_tmp_dh(&params)
            .context("setting the DH parameters")?;
    }
    if profile.client_auth {
        builder
            .set_verify_cert_store(trust_store(profile.pki.ca_pem())?)
            .context("setting the server's verify store")?;
        builder.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    Ok(builder.build())
}

/// The client context: verifies the server against `ca_pem` alone and
/// checks `host`: a host name (`X509_VERIFY_PARAM_set1_host`) or an IP
/// address (`X509_VERIFY_PARAM_set1_ip`, no host name); with client
/// authentication, it presents the profile's client certificate.
pub fn client_context(
    profile: &Profile,
    ca_pem: &[u8],
    host: Host,
) -> Result<SslContext, HarnessError> {
    let mut builder = base_builder(profile, &profile.client_groups())?;
    builder
        .set_verify_cert_store(trust_store(ca_pem)?)
        .context("setting the client's verify store")?;
    builder.set_verify(SslVerifyMode::PEER);
    let param = builder.verify_param_mut();
    match host {
        Host::Dns(name) => param.set_host(name).context("setting the host to verify")?,
        Host::Ip(address) => param
            .set_ip(
                address
                    .parse()
                    .context("parsing the IP address to verify")?,
            )
            .context("setting the IP address to verify")?,
    }
    if profile.client_auth {
        load_identity(
            &mut builder,
            profile.pki.client_chain_pem(),
            profile.pki.client_key_pem(),
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
    pub client: SslContext,
    pub server: SslContext,
    /// What both were built from, and what checks expect.
    pub profile: Profile,
}

impl Contexts {
    /// Both contexts of `profile`, from the embedded certificates.
    pub fn new(profile: &Profile) -> Result<Contexts, HarnessError> {
        init()?;
        let pki = profile.pki;
        Ok(Contexts {
            server: server_context(profile, pki.server_chain_pem(), pki.server_key_pem())?,
            client: client_context(profile, profile.trusted_ca().ca_pem(), profile.pki.host())?,
            profile: *profile,
        })
    }
}
