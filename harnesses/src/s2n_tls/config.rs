//! s2n-tls configs from a path's [`Profile`]: numbered security policies,
//! fixed clocks, the test PKI, tickets only when the profile asks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use regress_measure::HarnessError;
use s2n_tls::callbacks::{
    MonotonicClock, SessionTicket, SessionTicketCallback, VerifyHostNameCallback, WallClock,
};
use s2n_tls::config::{self, Config};
use s2n_tls::connection::Connection;
use s2n_tls::enums::{AlertBehavior, ClientAuthType};
use s2n_tls::security::Policy;

use crate::common::error::Context as _;
use crate::common::pins::{CipherSuite, NamedGroup};
use crate::common::pki::{Host, Pki, SERVER_NAME};
use crate::common::time::{fixed_system_time, FIXED_UNIX_SECS};
use crate::paths::Profile;

/// The numbered policy of both sides of every TLS 1.3 path, except where
/// [`policies`] says otherwise: `default_tls13` in s2n-tls 0.3.47.
pub const PINNED_POLICY: &str = "20240503";

/// The client policy of TLS 1.2 with ECDHE-RSA-AES128-GCM-SHA256: TLS 1.2
/// is its highest version (it lists no TLS 1.3 suite).
pub const TLS12_CLIENT_POLICY: &str = "20240501";

/// The server policy of TLS 1.3 AES-256-GCM records: its TLS 1.3
/// preference starts with TLS_AES_256_GCM_SHA384, its groups with
/// secp256r1.
pub const AES256_SERVER_POLICY: &str = "20190802";

/// The policy of both sides of ChaCha20-Poly1305 records: TLS 1.2 only,
/// ECDHE-RSA-CHACHA20-POLY1305 first, secp256r1 first.
pub const CHACHA20_POLICY: &str = "20201021";

/// The policy of both sides of CBC records: `20170718`, TLS 1.0 to 1.2,
/// ECDHE-RSA-AES128-SHA first, secp256r1 first, and the PKCS#1 v1.5
/// schemes of 2014 (no PSS). No s2n-tls policy with a PSS scheme prefers a
/// CBC suite.
pub const CBC_POLICY: &str = "20170718";

/// The policy of both sides of DHE paths: `20150214`, TLS 1.2 at most,
/// DHE-RSA-AES128-GCM-SHA256 first, and the PKCS#1 v1.5 schemes of 2014
/// (no PSS). The server is given the ffdhe2048 parameters.
pub const DHE_POLICY: &str = "20150214";

/// The policy of both sides of post-quantum paths: `default_pq` in s2n-tls
/// 0.3.47 (`security_policy_20250721`: X25519MLKEM768 first among its KEM
/// groups, TLS_AES_128_GCM_SHA256 first; with an rsaEncryption key its first
/// usable scheme is rsa_pss_rsae_sha256, with a P-256 key
/// ecdsa_secp256r1_sha256).
pub const PQ_POLICY: &str = "20250721";

/// The policy of both sides of X25519 paths: x25519 first among its curves,
/// no KEM groups, TLS_AES_128_GCM_SHA256 first. Also the client of
/// HelloRetryRequest paths, whose one key share is then x25519.
pub const X25519_POLICY: &str = "20240603";

/// The server of HelloRetryRequest paths: TLS 1.3 with
/// TLS_AES_128_GCM_SHA256 first and curves secp256r1, secp384r1, secp521r1
/// only, so a client's x25519 share must be retried on secp256r1.
pub const NO_X25519_SERVER_POLICY: &str = "20230317";

/// The (client, server) policies that make two s2n-tls peers negotiate
/// `profile`'s pins (and its HelloRetryRequest), or why there are none (see
/// the table in the module documentation of `s2n_tls`). Two s2n-tls peers
/// negotiate the server's most preferred mutually supported suite, group
/// and scheme; with an RSA (rsaEncryption) key the first usable scheme of
/// these policies is rsa_pss_rsae_sha256, with a P-256 key
/// ecdsa_secp256r1_sha256.
pub fn policies(profile: &Profile) -> Result<(&'static str, &'static str), &'static str> {
    let pins = &profile.pins;
    let tls13_aes128 = pins.suite == CipherSuite::Tls13Aes128GcmSha256;
    match (pins.group, profile.retry_from) {
        (NamedGroup::Secp256r1, None) => {}
        (NamedGroup::Secp256r1, Some(NamedGroup::X25519)) if tls13_aes128 => {
            return Ok((X25519_POLICY, NO_X25519_SERVER_POLICY))
        }
        (NamedGroup::X25519, None) if tls13_aes128 => return Ok((X25519_POLICY, X25519_POLICY)),
        (NamedGroup::X25519MlKem768, None) if tls13_aes128 => return Ok((PQ_POLICY, PQ_POLICY)),
        (NamedGroup::Ffdhe2048, None) if pins.suite == CipherSuite::DheRsaAes128GcmSha256 => {
            return Ok((DHE_POLICY, DHE_POLICY))
        }
        _ => {
            return Err(
                "no pair of s2n-tls policies pins this group and retry with this suite \
                 (only TLS_AES_128_GCM_SHA256 has X25519, X25519MLKEM768 and the \
                 x25519-to-secp256r1 HelloRetryRequest)",
            )
        }
    }
    match pins.suite {
        CipherSuite::Tls13Aes128GcmSha256 => Ok((PINNED_POLICY, PINNED_POLICY)),
        CipherSuite::Tls13Aes256GcmSha384 => Ok((PINNED_POLICY, AES256_SERVER_POLICY)),
        CipherSuite::EcdheRsaAes128GcmSha256 => Ok((TLS12_CLIENT_POLICY, PINNED_POLICY)),
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => Ok((CHACHA20_POLICY, CHACHA20_POLICY)),
        CipherSuite::EcdheRsaAes128CbcSha => Ok((CBC_POLICY, CBC_POLICY)),
        CipherSuite::DheRsaAes128GcmSha256 => Err("a DHE suite needs a finite-field group"),
        CipherSuite::Tls13ChaCha20Poly1305Sha256 => Err(
            "no s2n-tls 0.3.47 policy lets two s2n-tls peers negotiate ChaCha20-Poly1305 \
             in TLS 1.3 (its ChaCha20 records are TLS 1.2)",
        ),
        CipherSuite::EcdheRsaAes256GcmSha384 => Err("no numbered policy pins it"),
    }
}

/// A numbered policy. Built once per setup: `Policy::from_version`
/// allocates.
pub fn policy(name: &str) -> Result<Policy, HarnessError> {
    Policy::from_version(name).context("constructing a security policy")
}

/// A wall clock stuck at the fixed time: certificate validity and ticket
/// ages must not depend on the day of the measurement.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedWallClock;

impl WallClock for FixedWallClock {
    fn get_time_since_epoch(&self) -> Duration {
        Duration::from_secs(FIXED_UNIX_SECS)
    }
}

/// A monotonic clock that never moves (s2n-tls only ever subtracts its
/// readings from one another, for timers).
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedMonotonicClock;

impl MonotonicClock for FixedMonotonicClock {
    fn get_time(&self) -> Duration {
        Duration::from_secs(1_000_000)
    }
}

/// Verify-host callback that accepts exactly one name.
///
/// s2n-tls calls it for each DNS name in the peer's leaf certificate, and
/// for each IP address, as text (`s2n_inet_ntop`). The harnesses use
/// [`AcceptHost::LOCALHOST`]: every test leaf (server and client) but the
/// IP-named one is for `localhost` only, so anything else means the wrong
/// certificate was presented; a client of the IP-named leaf accepts
/// `127.0.0.1` alone ([`AcceptHost::of`] its PKI's [`Host`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptHost(pub &'static str);

impl AcceptHost {
    /// Accepts `localhost` and nothing else.
    pub const LOCALHOST: AcceptHost = AcceptHost(SERVER_NAME);

    /// Accepts `host`'s name or address, as s2n-tls writes it, and nothing
    /// else.
    pub const fn of(host: Host) -> AcceptHost {
        AcceptHost(host.as_str())
    }
}

impl VerifyHostNameCallback for AcceptHost {
    fn verify_host_name(&self, host_name: &str) -> bool {
        host_name == self.0
    }
}

/// Name and key of the server's session-ticket key. Fixed so that the
/// ticket, and with it the resumed handshake, is the same in every process.
const TICKET_KEY_NAME: &[u8] = b"regress-ticket";
const TICKET_KEY: [u8; 32] = [0x5a; 32];

/// Session-ticket callback that keeps the first ticket a client receives.
#[derive(Debug, Clone, Default)]
pub struct TicketStore(Arc<Mutex<Option<Vec<u8>>>>);

impl TicketStore {
    /// The kept ticket, if any (and no longer kept).
    pub fn take(&self) -> Option<Vec<u8>> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

impl SessionTicketCallback for TicketStore {
    fn on_session_ticket(&self, _connection: &mut Connection, ticket: &SessionTicket) {
        // A callback cannot return an error: on failure it stores nothing,
        // and the resumption's setup reports the missing ticket.
        let Ok(len) = ticket.len() else { return };
        let mut data = vec![0; len];
        if ticket.data(&mut data).is_err() {
            return;
        }
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(data);
        }
    }
}

/// A builder with what every config shares: no system trust store (loading
/// it costs about 57 M instructions and depends on the machine and on
/// `SSL_CERT_FILE`), the policy and the fixed clocks.
pub fn base_builder(policy: &Policy) -> Result<config::Builder, HarnessError> {
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

/// Server config: the PKI's chain and key; with `tickets`, the fixed
/// session-ticket key so it issues and accepts tickets; with `client_auth`,
/// a required client certificate, the PKI's CA as the only trust anchor
/// and the `localhost` name check on the client's leaf. No session cache.
pub fn server_config(
    policy: &Policy,
    pki: Pki,
    tickets: bool,
    client_auth: bool,
) -> Result<Config, HarnessError> {
    server_config_with(
        policy,
        (pki.server_chain_pem(), pki.server_key_pem()),
        pki,
        tickets,
        client_auth,
        None,
    )
}

/// [`server_config`] with another identity, `(chain PEM, key PEM)`, than the
/// PKI's server leaf (the constant-flow check's server keys).
pub fn server_config_with(
    policy: &Policy,
    identity: (&[u8], &[u8]),
    pki: Pki,
    tickets: bool,
    client_auth: bool,
    dh_params: Option<&[u8]>,
) -> Result<Config, HarnessError> {
    server_builder(policy, identity, pki, tickets, client_auth, dh_params)?
        .build()
        .context("building the server config")
}

/// The builder [`server_config_with`] builds, for a harness that adds to it.
pub fn server_builder(
    policy: &Policy,
    (chain_pem, key_pem): (&[u8], &[u8]),
    pki: Pki,
    tickets: bool,
    client_auth: bool,
    dh_params: Option<&[u8]>,
) -> Result<config::Builder, HarnessError> {
    let mut builder = base_builder(policy)?;
    builder
        .load_pem(chain_pem, key_pem)
        .context("loading the server chain and key")?;
    if let Some(pem) = dh_params {
        builder
            .add_dhparams(pem)
            .context("adding the DH parameters")?;
    }
    if tickets {
        builder
            .add_session_ticket_key(TICKET_KEY_NAME, &TICKET_KEY, fixed_system_time())
            .context("adding the session-ticket key")?;
    }
    if client_auth {
        builder
            .set_client_auth_type(ClientAuthType::Required)
            .context("requiring client certificates")?
            .trust_pem(pki.ca_pem())
            .context("trusting the client CA")?
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .context("setting the client-certificate name check")?;
    }
    Ok(builder)
}

/// Client config: trusts `ca` (the PKI's CA, but for negative tests), accepts
/// `host` (the PKI's, [`Pki::host`]) alone; with `tickets`, asks for session tickets and hands them to
/// the store; with `client_cert`, presents that PKI's client chain.
pub fn client_config(
    policy: &Policy,
    ca: Pki,
    host: Host,
    tickets: Option<TicketStore>,
    client_cert: Option<Pki>,
) -> Result<Config, HarnessError> {
    client_builder(policy, ca, host, tickets, client_cert)?
        .build()
        .context("building the client config")
}

/// The builder [`client_config`] builds, for a caller that adds to it.
pub fn client_builder(
    policy: &Policy,
    ca: Pki,
    host: Host,
    tickets: Option<TicketStore>,
    client_cert: Option<Pki>,
) -> Result<config::Builder, HarnessError> {
    let mut builder = base_builder(policy)?;
    builder
        .trust_pem(ca.ca_pem())
        .context("trusting the test CA")?
        .set_verify_host_callback(AcceptHost::of(host))
        .context("setting the verify-host callback")?;
    if let Some(pki) = client_cert {
        builder
            .load_pem(pki.client_chain_pem(), pki.client_key_pem())
            .context("loading the client chain and key")?;
    }
    if let Some(store) = tickets {
        builder
            .enable_session_tickets(true)
            .context("enabling session tickets")?
            .set_session_ticket_callback(store)
            .context("setting the session-ticket callback")?;
    }
    Ok(builder)
}

/// Client and server configs, built once in `setup` and shared by every
/// run: real servers reuse one config, and a fresh config per run would
/// count certificate parsing and private-key precomputation as part of the
/// handshake.
#[derive(Debug)]
pub struct Configs {
    pub client: Config,
    pub server: Config,
    /// What they were built from, and what checks expect.
    pub profile: Profile,
    /// Where the client keeps the ticket it receives (with tickets only).
    pub tickets: Option<TicketStore>,
}

impl Configs {
    /// Both configs of `profile`, on the policies that pin its parameters.
    pub fn new(profile: &Profile) -> Result<Configs, HarnessError> {
        let (client_policy, server_policy) = policies(profile)?;
        let tickets = profile.resumption.is_some().then(TicketStore::default);
        let mut client = client_builder(
            &policy(client_policy)?,
            profile.trusted_ca(),
            profile.pki.host(),
            tickets.clone(),
            profile.client_auth.then_some(profile.pki),
        )?;
        if profile.first_alert.is_some() {
            // s2n-tls fails on any alert by default; a client that talks to
            // servers which send warnings is configured to go on.
            client
                .set_alert_behavior(AlertBehavior::IgnoreWarnings)
                .context("ignoring warning alerts")?;
        }
        Ok(Configs {
            client: client.build().context("building the client config")?,
            server: server_config_with(
                &policy(server_policy)?,
                (profile.pki.server_chain_pem(), profile.pki.server_key_pem()),
                profile.pki,
                profile.resumption.is_some(),
                profile.client_auth,
                profile.pins.group.dh_params_pem(),
            )?,
            profile: *profile,
            tickets,
        })
    }
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
            CBC_POLICY,
            DHE_POLICY,
            PQ_POLICY,
            X25519_POLICY,
            NO_X25519_SERVER_POLICY,
        ] {
            let policy = policy(name).expect("policy");
            base_builder(&policy).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let unknown = policy("no-such-policy").expect("policy name");
        assert!(base_builder(&unknown).is_err());
    }

    #[test]
    fn wall_clock_is_the_fixed_time() {
        assert_eq!(
            FixedWallClock.get_time_since_epoch(),
            Duration::from_secs(FIXED_UNIX_SECS)
        );
    }
}
