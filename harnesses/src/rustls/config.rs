//! rustls configs from a path's [`Profile`]: a crypto provider that offers
//! exactly the pins, a fixed clock, the test PKI, resumption only when the
//! profile asks.

use std::sync::Arc;
use std::time::Duration;

use regress_measure::parts::Side;
use regress_measure::HarnessError;

use super::api::pki_types::pem::PemObject;
use super::api::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use super::api::{
    self, ClientConfig, ClientSessionStore, CryptoProvider, NoServerSessionStorage, Resumption,
    RootCertStore, ServerConfig, TimeProvider, Tls12Resumption,
};
use super::resumption::SessionCache;
use super::rng;
use super::transport::{Accepting, Pair};
use super::verify::{NotingClientVerifier, NotingServerVerifier};
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{Pins, TlsVersion};
use crate::common::pki::{Host, PemCopies};
use crate::common::time::FIXED_UNIX_SECS;
use crate::paths::{Profile, Resumption as Sessions};
use crate::tls::sides::creating;

/// The fixed time as a [`UnixTime`], for APIs that take one directly.
pub fn fixed_now() -> UnixTime {
    UnixTime::since_unix_epoch(Duration::from_secs(FIXED_UNIX_SECS))
}

/// A [`TimeProvider`] stuck at the fixed time. rustls asks it whenever it
/// validates a certificate (both sides), issues a session ticket and judges
/// a ticket's age.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedTime;

impl TimeProvider for FixedTime {
    fn current_time(&self) -> Option<UnixTime> {
        Some(fixed_now())
    }
}

/// Everything rustls pins before building configs: a provider with exactly
/// one suite, one group (the client's: its guess first on a
/// HelloRetryRequest path) and one signature scheme, deterministic randomness
/// ([`rng::DETERMINISTIC_RANDOM`]), the fixed clock and the version
/// ([`api::pinned_provider`]).
///
/// rustls offers (client) and requests (server, for client certificates)
/// only the schemes its verifier supports, and a peer must sign with one it
/// was offered, so the one mapped scheme is the only one either side can
/// use. Certificate signatures (sha256WithRSAEncryption, ecdsa-with-SHA256)
/// are verified with the provider's full default list of algorithms, as
/// rustls does by default. Built in `setup`; `run` only clones its `Arc`s.
#[derive(Debug, Clone)]
pub struct Pinned {
    /// The server's provider (and the client's, unless the client offers
    /// other groups).
    pub provider: Arc<CryptoProvider>,
    /// The client's provider: the server's, or with the client's groups.
    pub client_provider: Arc<CryptoProvider>,
    time: Arc<dyn TimeProvider>,
    pins: Pins,
}

impl Pinned {
    /// The provider, clock and version of `pins`, both sides offering
    /// exactly the pinned group.
    pub fn new(pins: &Pins) -> Pinned {
        let provider = Arc::new(api::pinned_provider(
            pins,
            &[pins.group],
            &rng::DETERMINISTIC_RANDOM,
        ));
        Pinned {
            client_provider: provider.clone(),
            provider,
            time: Arc::new(FixedTime),
            pins: *pins,
        }
    }

    /// [`Pinned::new`] for `profile`, whose client may offer other groups
    /// first (rustls sends a key share for its first group only, so a
    /// server without it asks for a HelloRetryRequest).
    pub fn of(profile: &Profile) -> Pinned {
        let mut pinned = Pinned::new(&profile.pins);
        let groups = profile.client_groups();
        if groups != [profile.pins.group] {
            pinned.client_provider = Arc::new(api::pinned_provider(
                &profile.pins,
                &groups,
                &rng::DETERMINISTIC_RANDOM,
            ));
        }
        pinned
    }
}

/// Every certificate in `pem`, in order (rustls-pki-types's PEM parser).
pub fn parse_chain(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, HarnessError> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parsing a PEM certificate chain")?;
    ensure(!chain.is_empty(), || {
        "no certificate in the PEM chain".into()
    })?;
    Ok(chain)
}

/// The one private key in `pem` (PKCS#8).
pub fn parse_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, HarnessError> {
    PrivateKeyDer::from_pem_slice(pem).context("parsing a PEM private key")
}

/// A root store holding exactly the CA in `ca_pem`: no system trust store.
pub fn trust_only(ca_pem: &[u8]) -> Result<Arc<RootCertStore>, HarnessError> {
    let ca = CertificateDer::from_pem_slice(ca_pem).context("parsing the PEM CA")?;
    let mut roots = RootCertStore::empty();
    roots.add(ca).context("adding the CA to the root store")?;
    Ok(Arc::new(roots))
}

/// A server config, built from PEM the way an application builds one.
///
/// With `client_auth`, the server requires a client certificate and verifies
/// it against the CA with rustls's `WebPkiClientVerifier`; the returned
/// verifier notes the client's signature scheme. Sessions: with
/// [`Sessions::Ticket`], stateless tickets from rustls's aws-lc-rs
/// `Ticketer` (TLS 1.3, or TLS 1.2's SessionTicket), one per handshake, and
/// no session storage; with [`Sessions::Cache`], no ticketer and a
/// [`SessionCache`], whose key the TLS 1.3 ticket is; with neither, no
/// tickets, no storage, so TLS 1.2 servers send no session id. Extended master secret
/// is *required*: rustls negotiates it by default, requiring it turns its
/// absence into a failed handshake instead of a silent change.
pub fn server_config(
    pinned: &Pinned,
    pem: &PemCopies,
    client_auth: bool,
    sessions: Option<Sessions>,
) -> Result<(ServerConfig, Option<Arc<NotingClientVerifier>>), HarnessError> {
    let builder = api::server_builder(&pinned.provider, &pinned.time, &pinned.pins)?;
    let (builder, client_verifier) = if client_auth {
        let inner = api::client_verifier(trust_only(&pem.ca)?, &pinned.provider)?;
        let verifier = Arc::new(NotingClientVerifier::new(inner));
        (
            builder.with_client_cert_verifier(verifier.clone()),
            Some(verifier),
        )
    } else {
        (builder.with_no_client_auth(), None)
    };
    let chain = parse_chain(&pem.server_chain)?;
    let mut config = api::with_single_cert(builder, chain, parse_key(&pem.server_key)?)
        .context("loading the server chain and key")?;
    config.session_storage = match sessions {
        Some(Sessions::Cache) => Arc::new(SessionCache::default()),
        _ => Arc::new(NoServerSessionStorage {}),
    };
    config.require_ems = true;
    api::set_tickets(&mut config, sessions)?;
    Ok((config, client_verifier))
}

/// A client config trusting only the CA in `pem`, built from PEM.
///
/// With `client_auth`, it presents the client chain. `resumption` is `None`
/// for no resumption at all (rustls otherwise resumes its second handshake
/// from the same config: about 2.8 M instead of 76.5 M instructions), or the
/// store to resume TLS 1.3 sessions from (TLS 1.2 resumption stays off).
/// Extended master secret is required, as on the server.
pub fn client_config(
    pinned: &Pinned,
    pem: &PemCopies,
    client_auth: bool,
    resumption: Option<Arc<dyn ClientSessionStore>>,
) -> Result<(ClientConfig, Arc<NotingServerVerifier>), HarnessError> {
    let inner = api::server_verifier(trust_only(&pem.ca)?, &pinned.client_provider)?;
    let verifier = Arc::new(NotingServerVerifier::new(inner));
    let builder = api::client_builder(&pinned.client_provider, &pinned.time, &pinned.pins)?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone());
    let mut config = if client_auth {
        let chain = parse_chain(&pem.client_chain)?;
        api::with_client_auth_cert(builder, chain, parse_key(&pem.client_key)?)
            .context("loading the client chain and key")?
    } else {
        api::with_no_client_auth(builder).context("finishing the client config")?
    };
    config.resumption = match resumption {
        None => Resumption::disabled(),
        Some(store) => client_resumption(store, pinned.pins.version),
    };
    config.require_ems = true;
    Ok((config, verifier))
}

/// A client's resumption from `store`: of TLS 1.2 sessions (from a ticket
/// or a session id) only when the path is TLS 1.2's, so a TLS 1.3 client's
/// ClientHello carries no empty SessionTicket extension.
pub fn client_resumption(store: Arc<dyn ClientSessionStore>, version: TlsVersion) -> Resumption {
    let tls12 = match version {
        TlsVersion::Tls12 => Tls12Resumption::SessionIdOrTickets,
        TlsVersion::Tls13 => Tls12Resumption::Disabled,
    };
    Resumption::store(store).tls12_resumption(tls12)
}

/// The name a client connects to `host` by: a DNS name (sent as SNI), or
/// an IP address (`ServerName::IpAddress`, for which rustls sends no SNI).
pub fn server_name(host: Host) -> Result<ServerName<'static>, HarnessError> {
    Ok(match host {
        Host::Dns(name) => ServerName::try_from(name)
            .context("the server name")?
            .to_owned(),
        Host::Ip(address) => ServerName::IpAddress(
            address
                .parse::<std::net::IpAddr>()
                .context("the server's IP address")?
                .into(),
        ),
    })
}

/// A client and a server config built for one path, in `Arc`s shared by
/// all its connections (as a server does: a fresh config per handshake
/// would count key parsing and precomputation as part of the handshake),
/// and what checks compare their handshakes with.
#[derive(Debug)]
pub struct Configs {
    pub client: Arc<ClientConfig>,
    pub server: Arc<ServerConfig>,
    pub server_verifier: Arc<NotingServerVerifier>,
    pub client_verifier: Option<Arc<NotingClientVerifier>>,
    pub server_name: ServerName<'static>,
    pub profile: Profile,
    /// The chains each side must receive.
    pub server_chain: Vec<CertificateDer<'static>>,
    pub client_chain: Vec<CertificateDer<'static>>,
}

impl Configs {
    /// Both configs of `profile`. `resumption` is the client's session
    /// store, exactly when the profile has tickets.
    pub fn build(
        profile: &Profile,
        resumption: Option<Arc<dyn ClientSessionStore>>,
    ) -> Result<Configs, HarnessError> {
        ensure(profile.resumption.is_some() == resumption.is_some(), || {
            "a client session store goes with tickets, and only with them".into()
        })?;
        let pinned = Pinned::of(profile);
        let mut pem = PemCopies::of(profile.pki);
        if profile.untrusted {
            pem.ca = profile.trusted_ca().ca_pem().to_vec();
        }
        let (server, client_verifier) =
            server_config(&pinned, &pem, profile.client_auth, profile.resumption)?;
        let (client, server_verifier) =
            client_config(&pinned, &pem, profile.client_auth, resumption)?;
        Configs::assemble(
            Arc::new(client),
            Arc::new(server),
            server_verifier,
            client_verifier,
            profile,
            &pem,
        )
    }

    /// Wraps built configs for sharing and notes the chains each side must
    /// receive.
    pub fn assemble(
        client: Arc<ClientConfig>,
        server: Arc<ServerConfig>,
        server_verifier: Arc<NotingServerVerifier>,
        client_verifier: Option<Arc<NotingClientVerifier>>,
        profile: &Profile,
        pem: &PemCopies,
    ) -> Result<Configs, HarnessError> {
        Ok(Configs {
            client,
            server,
            server_verifier,
            client_verifier,
            server_name: server_name(profile.pki.host())?,
            profile: *profile,
            server_chain: parse_chain(&pem.server_chain)?,
            client_chain: if profile.client_auth {
                parse_chain(&pem.client_chain)?
            } else {
                Vec::new()
            },
        })
    }

    /// A fresh server connection and empty pipes, waiting for a client.
    pub fn accept(&self) -> Result<Accepting, HarnessError> {
        let server = creating(Side::Server, || api::Side::server(&self.server))
            .context("creating the server connection")?;
        Ok(Accepting::new(server))
    }

    /// Creates the client connection, which picks the session to offer (if
    /// any), generates its key share and queues the ClientHello, and joins it
    /// to `accepting`.
    pub fn connect(&self, accepting: Accepting) -> Result<Pair, HarnessError> {
        self.connect_with(&self.client, accepting)
    }

    /// [`Configs::connect`] with another client config (a clone of this
    /// one's, differing only in its session store, or a negative test's).
    pub fn connect_with(
        &self,
        client: &Arc<ClientConfig>,
        accepting: Accepting,
    ) -> Result<Pair, HarnessError> {
        // The client's first call is marked in `Accepting::connect`.
        accepting.connect(client, self.server_name.clone())
    }

    /// A complete handshake outside any count (for `prepare`s and `check`s).
    pub fn handshake(&self) -> Result<Pair, HarnessError> {
        let mut pair = self.connect(self.accept()?)?;
        pair.handshake()?;
        Ok(pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pki::Pki;
    use crate::paths::Handshake;

    #[test]
    fn pinned_provider_offers_one_suite_one_group_one_scheme() {
        for path in Handshake::ALL.into_iter().chain(Handshake::REAL_WORLD) {
            let profile = path.profile();
            let pins = profile.pins;
            let pinned = Pinned::of(&profile);
            let client_groups: Vec<u16> = pinned
                .client_provider
                .kx_groups
                .iter()
                .map(|g| g.name().into())
                .collect();
            if path.group.is_finite_field() {
                // rustls has no TLS 1.2 DHE: nothing to offer (the registry
                // reports the path not applicable).
                assert!(client_groups.is_empty(), "{path}: {client_groups:?}");
                assert!(api::suites_of(&pinned.provider).is_empty(), "{path}");
                continue;
            }
            let expected: Vec<u16> = profile.client_groups().iter().map(|g| g.iana()).collect();
            assert_eq!(client_groups, expected, "{path}");
            let provider = pinned.provider;
            assert_eq!(api::suites_of(&provider), [pins.suite.iana()]);
            let groups: Vec<u16> = provider.kx_groups.iter().map(|g| g.name().into()).collect();
            assert_eq!(groups, [pins.group.iana()]);
            let schemes: Vec<u16> = provider
                .signature_verification_algorithms
                .supported_schemes()
                .into_iter()
                .map(u16::from)
                .collect();
            assert_eq!(schemes, [pins.scheme.iana()]);
        }
    }

    #[test]
    fn pem_files_parse() {
        for pki in Pki::ALL {
            let pem = PemCopies::of(pki);
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

    #[test]
    fn fixed_time_is_the_shared_instant() {
        assert_eq!(FixedTime.current_time(), Some(fixed_now()));
        assert_eq!(fixed_now().as_secs(), FIXED_UNIX_SECS);
    }
}
