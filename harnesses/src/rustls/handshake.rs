//! Config building, full handshakes and resumption.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ::rustls::client::{
    ClientSessionStore, Resumption, Tls12ClientSessionValue, Tls12Resumption,
    Tls13ClientSessionValue,
};
use ::rustls::pki_types::ServerName;
use ::rustls::{ClientConfig, HandshakeKind, NamedGroup, ServerConfig};
use regress_measure::{Harness, HarnessError};

use super::transport::{Accepting, Pair};
use super::{
    client_config, server_config, Configs, Context as _, Expect, NotingServerVerifier, PemSet,
    Pins, Tickets, ECDSA_P256, RSA4096, TLS12_SUITE,
};

// ---------------------------------------------------------------------------
// ConfigBuild
// ---------------------------------------------------------------------------

/// Builds a rustls `ServerConfig` (RSA-4096 chain and key) and a
/// `ClientConfig` (trusting only the test RSA CA): the work s2n-tls's
/// `config_build` does in its one combined config.
///
/// **Counted:** parsing the PEM chain, key and CA (rustls-pki-types's PEM
/// decoder); the server builder with the pinned versions, loading the key
/// into aws-lc (`KeyProvider::load_private_key`) and rustls's key/certificate
/// match check (it parses the leaf and compares public keys); turning off
/// session storage and tickets; the client builder: a root store with the CA
/// (parsed into a webpki trust anchor), rustls's `WebPkiServerVerifier` in a
/// [`NotingServerVerifier`] (one extra small allocation), resumption off; and
/// putting both configs in `Arc`s for sharing. This is what an application
/// pays once per config, and why configs should be reused.
///
/// **Not counted:** building the pinned [`Pins`] (provider, clock), which is
/// the counterpart of s2n-tls's security policy, and copying the PEM files to
/// the heap (`setup`). Nothing is read from disk; no system trust store is
/// loaded.
///
/// **Check:** a native handshake between connections of the two built
/// configs, which must negotiate the pinned TLS 1.3 parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

/// What [`ConfigBuild`] runs share: the pins and the PEM inputs, copied to
/// the heap (see [`PemSet`]).
#[derive(Debug)]
pub struct ConfigBuildSetup {
    pins: Pins,
    pem: PemSet,
}

/// The two configs a [`ConfigBuild`] run built.
#[derive(Debug)]
pub struct BuiltConfigs {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    server_verifier: Arc<NotingServerVerifier>,
}

impl Harness for ConfigBuild {
    type Setup = ConfigBuildSetup;
    type Input = ();
    type Output = BuiltConfigs;

    fn setup(&self) -> Result<ConfigBuildSetup, HarnessError> {
        Ok(ConfigBuildSetup {
            pins: Pins::tls13(&RSA4096),
            pem: PemSet::copy(&RSA4096),
        })
    }

    fn prepare(&self, _: &ConfigBuildSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ConfigBuildSetup, _: ()) -> Result<BuiltConfigs, HarnessError> {
        let (server, _) = server_config(&setup.pins, &setup.pem, false, Tickets::Off)?;
        let (client, server_verifier) = client_config(&setup.pins, &setup.pem, false, None)?;
        Ok(BuiltConfigs {
            client: Arc::new(client),
            server: Arc::new(server),
            server_verifier,
        })
    }

    fn check(&self, setup: &ConfigBuildSetup, built: &BuiltConfigs) -> Result<(), HarnessError> {
        let configs = Configs::assemble(
            built.client.clone(),
            built.server.clone(),
            built.server_verifier.clone(),
            None,
            Expect::new(&setup.pins, false, false)?,
            &setup.pem,
        )?;
        let pair = configs
            .handshake()
            .context("handshaking with the built configs")?;
        configs.check(&pair, HandshakeKind::Full)
    }
}

// ---------------------------------------------------------------------------
// Full handshakes
// ---------------------------------------------------------------------------

/// Defines a full-handshake harness: configs from `$pins` in `setup`, a
/// waiting server in `prepare`, and in `run` the client connection (which
/// writes the ClientHello) and the handshake.
macro_rules! full_handshake {
    ($(#[$doc:meta])* $name:ident, pins: $pins:expr, client_auth: $client_auth:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl Harness for $name {
            type Setup = Configs;
            type Input = Accepting;
            type Output = Pair;

            fn setup(&self) -> Result<Configs, HarnessError> {
                Configs::build(&$pins, $client_auth, None)
            }

            fn prepare(&self, configs: &Configs) -> Result<Accepting, HarnessError> {
                configs.accept()
            }

            fn run(&self, configs: &Configs, accepting: Accepting) -> Result<Pair, HarnessError> {
                let mut pair = configs.connect(accepting)?;
                pair.handshake()?;
                Ok(pair)
            }

            fn check(&self, configs: &Configs, pair: &Pair) -> Result<(), HarnessError> {
                configs.check(pair, HandshakeKind::Full)
            }
        }
    };
}

full_handshake!(
    /// One full TLS 1.3 handshake between a rustls client and server, the
    /// server authenticating with an RSA-4096 certificate.
    ///
    /// **Counted:** `ClientConnection::new`, where rustls generates the
    /// client's secp256r1 key share and writes the ClientHello, then both
    /// sides' `write_tls` / `read_tls` / `process_new_packets` in turn until
    /// neither is handshaking, with the in-memory transport's copies: the
    /// server's key exchange, certificate chain and rsa_pss_rsae_sha256
    /// CertificateVerify (an RSA-4096 private-key operation), the client
    /// validating the chain against the test CA at the fixed time, checking
    /// the name `localhost` and CertificateVerify (RSA-4096 public-key
    /// operations), and both Finished messages: one new connection on both
    /// ends.
    ///
    /// **Not counted:** building the configs (`setup`; see [`ConfigBuild`]),
    /// creating the server connection and the pipes (`prepare`: allocation
    /// only, a rustls server does nothing before it reads a ClientHello), and
    /// freeing. No session store, no tickets: every run is a full handshake.
    ///
    /// **Check:** both sides report TLS 1.3, TLS_AES_128_GCM_SHA256,
    /// secp256r1 and a full handshake; the client's verifier accepted an
    /// rsa_pss_rsae_sha256 signature; the client received the test chain;
    /// the server saw SNI `localhost`, got no client certificate and queued
    /// nothing after the handshake (no ticket).
    HandshakeRsa4096,
    pins: Pins::tls13(&RSA4096),
    client_auth: false
);

full_handshake!(
    /// [`HandshakeRsa4096`] with the ECDSA P-256 hierarchy: the server signs
    /// CertificateVerify with ecdsa_secp256r1_sha256 and the client trusts
    /// only the ECDSA CA.
    ///
    /// **Counted:** as [`HandshakeRsa4096`], with a P-256 signature instead
    /// of the RSA-4096 private-key operation, and P-256 verifications of the
    /// leaf's certificate signature and of CertificateVerify.
    ///
    /// **Not counted:** as [`HandshakeRsa4096`].
    ///
    /// **Check:** as [`HandshakeRsa4096`], with ecdsa_secp256r1_sha256.
    HandshakeEcdsaP256,
    pins: Pins::tls13(&ECDSA_P256),
    client_auth: false
);

full_handshake!(
    /// One full TLS 1.3 handshake with client certificates (mutual TLS),
    /// RSA-4096 hierarchy.
    ///
    /// **Counted:** everything [`HandshakeRsa4096`] counts, plus the server's
    /// CertificateRequest (naming the test CA), the client sending its
    /// RSA-4096 chain and an rsa_pss_rsae_sha256 CertificateVerify (a second
    /// RSA-4096 private-key operation), and the server verifying that chain
    /// against the test CA (rustls's `WebPkiClientVerifier`, certificate
    /// required) and the client's signature.
    ///
    /// **Not counted:** as [`HandshakeRsa4096`]; both sides' keys are loaded
    /// in `setup`.
    ///
    /// **Check:** as [`HandshakeRsa4096`], plus: the server received the test
    /// client chain and its verifier accepted an rsa_pss_rsae_sha256 client
    /// signature, the same scheme as the server's.
    MtlsRsa4096,
    pins: Pins::tls13(&RSA4096),
    client_auth: true
);

full_handshake!(
    /// [`MtlsRsa4096`] with the ECDSA P-256 hierarchy: both sides sign with
    /// ecdsa_secp256r1_sha256 and trust only the ECDSA CA.
    ///
    /// **Counted:** as [`MtlsRsa4096`], with P-256 keys.
    ///
    /// **Not counted:** as [`HandshakeRsa4096`].
    ///
    /// **Check:** as [`MtlsRsa4096`], with ecdsa_secp256r1_sha256.
    MtlsEcdsaP256,
    pins: Pins::tls13(&ECDSA_P256),
    client_auth: true
);

full_handshake!(
    /// One full TLS 1.2 handshake, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 with
    /// an RSA-4096 server certificate.
    ///
    /// **Counted:** `ClientConnection::new` (the TLS 1.2 ClientHello, with
    /// the extended-master-secret extension and no session-ticket extension),
    /// then both sides in turn over two round trips: ServerHello, chain,
    /// ServerKeyExchange signed with rsa_pss_rsae_sha256 (RSA-4096 private
    /// key) over a secp256r1 ECDHE share; the client verifying chain and
    /// signature, its ClientKeyExchange, ChangeCipherSpec and Finished; the
    /// server's ChangeCipherSpec and Finished.
    ///
    /// **Not counted:** as [`HandshakeRsa4096`]. Both configs allow TLS 1.2
    /// only; the server has no session storage (so its ServerHello carries
    /// an empty session id) and no ticketer, the client no session store; both
    /// *require* extended master secret, so a handshake without it fails
    /// instead of silently measuring something else.
    ///
    /// **Check:** TLS 1.2, the pinned suite, secp256r1, a full handshake, an
    /// rsa_pss_rsae_sha256 ServerKeyExchange signature, the test chain, SNI,
    /// no client certificate.
    HandshakeTls12Rsa4096,
    pins: Pins::new(&::rustls::version::TLS12, TLS12_SUITE, &RSA4096),
    client_auth: false
);

// ---------------------------------------------------------------------------
// SessionResumption
// ---------------------------------------------------------------------------

/// A client session store holding TLS 1.3 tickets in a queue, without
/// hashing: either it *catches* the tickets a client receives (and offers
/// none), or it *offers* queued tickets, oldest first (and keeps none).
///
/// rustls's own `ClientSessionMemoryCache` keys sessions by server name in a
/// `HashMap` with a per-process random hasher; one server name needs no map.
/// Key-exchange hints are not kept: with secp256r1 the only group, the
/// client's key share is the same either way.
#[derive(Debug)]
struct TicketQueue {
    offers: bool,
    tickets: Mutex<VecDeque<Tls13ClientSessionValue>>,
}

impl TicketQueue {
    fn new(offers: bool) -> TicketQueue {
        TicketQueue {
            offers,
            tickets: Mutex::new(VecDeque::new()),
        }
    }

    fn push(&self, ticket: Tls13ClientSessionValue) -> Result<(), HarnessError> {
        self.tickets
            .lock()
            .map_err(|_| "the ticket queue's lock is poisoned")?
            .push_back(ticket);
        Ok(())
    }

    fn pop(&self) -> Option<Tls13ClientSessionValue> {
        self.tickets.lock().ok()?.pop_front()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.tickets.lock().map(|queue| queue.len()).unwrap_or(0)
    }
}

impl ClientSessionStore for TicketQueue {
    fn set_kx_hint(&self, _: ServerName<'static>, _: NamedGroup) {}

    fn kx_hint(&self, _: &ServerName<'_>) -> Option<NamedGroup> {
        None
    }

    fn set_tls12_session(&self, _: ServerName<'static>, _: Tls12ClientSessionValue) {}

    fn tls12_session(&self, _: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        None
    }

    fn remove_tls12_session(&self, _: &ServerName<'static>) {}

    fn insert_tls13_ticket(&self, _: ServerName<'static>, ticket: Tls13ClientSessionValue) {
        if !self.offers {
            // A store cannot report errors; a poisoned lock loses the ticket
            // and `SessionResumption::prepare` reports it missing.
            let _ = self.push(ticket);
        }
    }

    fn take_tls13_ticket(&self, _: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        if self.offers {
            self.pop()
        } else {
            None
        }
    }
}

/// One TLS 1.3 handshake resumed from a session ticket (PSK with (EC)DHE),
/// RSA-4096 server.
///
/// **Counted:** `ClientConnection::new`, where the client takes the queued
/// ticket from its session store and writes a ClientHello with a secp256r1
/// key share and the ticket as PSK identity and binder; the server
/// decrypting the stateless ticket (rustls's aws-lc-rs `Ticketer`:
/// AES-256-CBC and HMAC-SHA256) and checking the binder, the secp256r1 key
/// exchange (psk_dhe_ke keeps forward secrecy), both Finished messages, and
/// the server encrypting one fresh ticket and queuing it in a
/// NewSessionTicket, which rustls does as it processes the client's Finished
/// (s2n-tls issues one too). No certificate and no RSA operation: that
/// difference from [`HandshakeRsa4096`] is what this path is for. The ticket
/// is never delivered to the client.
///
/// **Not counted:** configs (`setup`), and in `prepare`, a full handshake
/// with a clone of the client config whose store catches the ticket the
/// server sends, moving that ticket to the queue the counted client offers
/// from, and a fresh server connection. A rustls client ticket is single-use
/// (the store hands it over, it cannot be copied), so each run gets its own
/// ticket from its own `prepare`; all are issued by the same ticketer and are
/// the same size. Fixed time makes the ticket age zero.
///
/// A caveat: rustls's `Ticketer` rotates its key every 6 hours and reads the
/// system clock (`SystemTime::now`, not the config's time provider) on each
/// encryption and decryption to decide; in a measured process the key never
/// rotates, so the path is the same, but those two clock reads are counted.
///
/// **Check:** both sides report `HandshakeKind::Resumed` with TLS 1.3,
/// TLS_AES_128_GCM_SHA256 and secp256r1; the server saw SNI and has the new
/// ticket queued. A full handshake fails this check.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionResumption;

/// What [`SessionResumption`] runs share.
#[derive(Debug)]
pub struct ResumptionSetup {
    /// Server with tickets; client offering from `offered`.
    configs: Configs,
    /// Tickets waiting for a run, one per prepared input.
    offered: Arc<TicketQueue>,
    /// A clone of the client config whose store catches tickets.
    catching_client: Arc<ClientConfig>,
    caught: Arc<TicketQueue>,
}

impl ResumptionSetup {
    /// A full handshake whose ticket is moved to the queue the next run's
    /// client offers from.
    fn queue_ticket(&self) -> Result<(), HarnessError> {
        let mut pair = self
            .configs
            .connect_with(&self.catching_client, self.configs.accept()?)?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        self.configs.check(&pair, HandshakeKind::Full)?;
        pair.server_to_client()
            .context("delivering the session ticket")?;
        let ticket = self
            .caught
            .pop()
            .ok_or("the client received no session ticket")?;
        self.offered.push(ticket)
    }
}

impl Harness for SessionResumption {
    type Setup = ResumptionSetup;
    type Input = Accepting;
    type Output = Pair;

    fn setup(&self) -> Result<ResumptionSetup, HarnessError> {
        let offered = Arc::new(TicketQueue::new(true));
        let configs = Configs::build(&Pins::tls13(&RSA4096), false, Some(offered.clone()))?;
        let caught = Arc::new(TicketQueue::new(false));
        let mut catching_client = ClientConfig::clone(&configs.client);
        catching_client.resumption =
            Resumption::store(caught.clone()).tls12_resumption(Tls12Resumption::Disabled);
        Ok(ResumptionSetup {
            configs,
            offered,
            catching_client: Arc::new(catching_client),
            caught,
        })
    }

    fn prepare(&self, setup: &ResumptionSetup) -> Result<Accepting, HarnessError> {
        setup.queue_ticket()?;
        setup.configs.accept()
    }

    fn run(&self, setup: &ResumptionSetup, accepting: Accepting) -> Result<Pair, HarnessError> {
        let mut pair = setup.configs.connect(accepting)?;
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, setup: &ResumptionSetup, pair: &Pair) -> Result<(), HarnessError> {
        setup.configs.check(pair, HandshakeKind::Resumed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rustls::transport::{self, flush, Pipe};
    use regress_measure::harness::run_natively;

    #[test]
    fn config_build_runs_natively() {
        run_natively(&ConfigBuild).expect("ConfigBuild");
    }

    #[test]
    fn handshake_rsa4096_runs_natively() {
        run_natively(&HandshakeRsa4096).expect("HandshakeRsa4096");
    }

    #[test]
    fn handshake_ecdsa_p256_runs_natively() {
        run_natively(&HandshakeEcdsaP256).expect("HandshakeEcdsaP256");
    }

    #[test]
    fn mtls_rsa4096_runs_natively() {
        run_natively(&MtlsRsa4096).expect("MtlsRsa4096");
    }

    #[test]
    fn mtls_ecdsa_p256_runs_natively() {
        run_natively(&MtlsEcdsaP256).expect("MtlsEcdsaP256");
    }

    #[test]
    fn handshake_tls12_rsa4096_runs_natively() {
        run_natively(&HandshakeTls12Rsa4096).expect("HandshakeTls12Rsa4096");
    }

    #[test]
    fn session_resumption_runs_natively() {
        run_natively(&SessionResumption).expect("SessionResumption");
    }

    /// As the measured child does: all inputs prepared first, then the runs.
    #[test]
    fn session_resumption_runs_after_three_prepares() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        let inputs: Vec<_> = (0..3)
            .map(|_| harness.prepare(&setup).expect("prepare"))
            .collect();
        assert_eq!(setup.offered.len(), 3);
        for input in inputs {
            let pair = harness.run(&setup, input).expect("run");
            harness.check(&setup, &pair).expect("resumed");
        }
        assert_eq!(setup.offered.len(), 0);
    }

    #[test]
    fn resumption_check_rejects_a_full_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        // The same configs, but no ticket queued: a full handshake.
        let accepting = setup.configs.accept().expect("accept");
        let pair = harness.run(&setup, accepting).expect("full handshake");
        setup
            .configs
            .check(&pair, HandshakeKind::Full)
            .expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("Resumed"), "{error}");
    }

    #[test]
    fn handshake_check_rejects_a_resumed_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        let accepting = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, accepting).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        assert!(setup.configs.check(&pair, HandshakeKind::Full).is_err());
    }

    /// The server issues exactly one ticket per resumed handshake: one
    /// encrypted record (a TLS 1.3 NewSessionTicket) is all it has queued.
    #[test]
    fn resumed_server_issues_exactly_one_ticket() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        let accepting = harness.prepare(&setup).expect("prepare");
        let mut pair = harness.run(&setup, accepting).expect("run");
        let mut out = Pipe::with_capacity(transport::PIPE_CAPACITY);
        flush(&mut pair.server, &mut out).expect("flush");
        let bytes = out.unread();
        assert!(bytes.len() > 5, "nothing queued");
        assert_eq!(bytes[0], 0x17, "an encrypted record");
        let length = usize::from(u16::from_be_bytes([bytes[3], bytes[4]]));
        assert_eq!(bytes.len(), 5 + length, "exactly one record");
    }

    /// Without resumption configured, a second handshake from the same
    /// configs is full again (rustls's default would resume it).
    #[test]
    fn full_handshakes_never_resume() {
        let harness = HandshakeRsa4096;
        let configs = harness.setup().expect("setup");
        for _ in 0..3 {
            let accepting = harness.prepare(&configs).expect("prepare");
            let pair = harness.run(&configs, accepting).expect("run");
            harness.check(&configs, &pair).expect("full");
        }
    }
}
