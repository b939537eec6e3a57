//! s2n-tls harnesses.
//!
//! Four mutually exclusive paths of s2n-tls 0.3.47, each a unit struct
//! implementing [`Harness`]:
//!
//! - [`ConfigBuild`]: building a server-and-client `Config` from PEM.
//! - [`HandshakeRsa4096`]: one full TLS 1.3 handshake, RSA-4096 certificate.
//! - [`SessionResumption`]: one TLS 1.3 handshake resumed from a ticket.
//! - [`RecordAesGcm`]: 1 MiB of application data, client to server.
//!
//! # What every harness pins, and why
//!
//! - **One security policy**, [`PINNED_POLICY`], on both sides. s2n-tls's
//!   named defaults (`default_tls13`) may change between releases; a numbered
//!   policy does not, so a count only moves when code does. In 0.3.47
//!   `default_tls13` *is* `20240503`. Its first TLS 1.3 suite is
//!   AES-128-GCM-SHA256 and its first group secp256r1, so two s2n-tls peers
//!   negotiate exactly those ([`EXPECTED_CIPHER`], [`EXPECTED_GROUP`]) in one
//!   round trip (no HelloRetryRequest); with an RSA (rsaEncryption) key the
//!   server signs with [`EXPECTED_SIGNATURE_SCHEME`]. Every `check` asserts all
//!   of it, so a policy change fails a test instead of silently moving a
//!   count.
//! - **Fixed clocks** ([`clock`]) on every config: certificate validity and
//!   ticket ages must not depend on the day of the measurement.
//! - **No system trust store**: `with_system_certs(false)` everywhere.
//!   Loading it costs about 57 M instructions and depends on the machine
//!   (and on `SSL_CERT_FILE`); clients trust only the test CA ([`crate::certs`]).
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
pub mod transport;

use std::sync::{Arc, Mutex};
use std::task::Poll;

use regress_measure::{Harness, HarnessError};
use s2n_tls::callbacks::{SessionTicket, SessionTicketCallback, VerifyHostNameCallback};
use s2n_tls::config::{self, Config};
use s2n_tls::connection::{Builder as _, Connection};
use s2n_tls::enums::{Blinding, Mode, Version};
use s2n_tls::security::Policy;

use self::clock::{fixed_wall_time, FixedMonotonicClock, FixedWallClock};
use self::transport::Pair;
use crate::certs::{CA_PEM, LEAF_CHAIN_PEM, LEAF_KEY_PEM, SERVER_NAME};

/// The numbered s2n-tls security policy every harness uses on both sides
/// (`default_tls13` in s2n-tls 0.3.47).
pub const PINNED_POLICY: &str = "20240503";

/// The cipher suite [`PINNED_POLICY`] negotiates between two s2n-tls peers.
pub const EXPECTED_CIPHER: &str = "TLS_AES_128_GCM_SHA256";

/// The key-exchange group [`PINNED_POLICY`] negotiates.
pub const EXPECTED_GROUP: &str = "secp256r1";

/// The server's CertificateVerify scheme with the RSA-4096 test key.
pub const EXPECTED_SIGNATURE_SCHEME: &str = "rsa_pss_rsae_sha256";

/// The server key type s2n-tls reports for the test leaf.
pub const EXPECTED_SERVER_KEY: &str = "rsa4096";

/// Application bytes [`RecordAesGcm`] moves per run.
pub const RECORD_BYTES: usize = 1 << 20;

/// Name and key of the server's session-ticket key ([`SessionResumption`]).
/// Fixed so that the ticket, and with it the resumed handshake, is the same
/// in every process.
const TICKET_KEY_NAME: &[u8] = b"regress-ticket";
const TICKET_KEY: [u8; 32] = [0x5a; 32];

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
/// s2n-tls calls it for each DNS name in the server certificate. The
/// harnesses use [`AcceptHost::LOCALHOST`]: the test leaf is for `localhost`
/// only, so anything else means the wrong certificate was presented.
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

/// Session-ticket callback that keeps the first ticket a client receives.
#[derive(Debug, Clone, Default)]
struct TicketStore(Arc<Mutex<Option<Vec<u8>>>>);

impl TicketStore {
    fn take(&self) -> Option<Vec<u8>> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

impl SessionTicketCallback for TicketStore {
    fn on_session_ticket(&self, _connection: &mut Connection, ticket: &SessionTicket) {
        // A callback cannot return an error: on failure it stores nothing,
        // and `SessionResumption::setup` reports the missing ticket.
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

// ---------------------------------------------------------------------------
// Configs and connections
// ---------------------------------------------------------------------------

/// The pinned policy. Built once per setup: `Policy::from_version` allocates.
fn pinned_policy() -> Result<Policy, HarnessError> {
    Policy::from_version(PINNED_POLICY).context("constructing the pinned security policy")
}

/// A builder with what every harness config shares: no system trust store,
/// the pinned policy and fixed clocks.
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

/// Server config: the RSA-4096 chain and key; with `tickets`, a fixed
/// session-ticket key so it issues and accepts tickets.
fn server_config(policy: &Policy, tickets: bool) -> Result<Config, HarnessError> {
    let mut builder = base_builder(policy)?;
    builder
        .load_pem(LEAF_CHAIN_PEM, LEAF_KEY_PEM)
        .context("loading the server chain and key")?;
    if tickets {
        builder
            .add_session_ticket_key(TICKET_KEY_NAME, &TICKET_KEY, fixed_wall_time())
            .context("adding the session-ticket key")?;
    }
    builder.build().context("building the server config")
}

/// Client config: trusts the test CA, accepts `localhost`; with `tickets`,
/// asks for session tickets and hands them to the store.
fn client_config(policy: &Policy, tickets: Option<TicketStore>) -> Result<Config, HarnessError> {
    let mut builder = base_builder(policy)?;
    builder
        .trust_pem(CA_PEM)
        .context("trusting the test CA")?
        .set_verify_host_callback(AcceptHost::LOCALHOST)
        .context("setting the verify-host callback")?;
    if let Some(store) = tickets {
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
/// certificate parsing and RSA key precomputation as part of the handshake.
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

/// What a handshake must have negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A full handshake: certificate, RSA-4096 signature, no resumption.
    Full,
    /// A resumption: PSK from a ticket, no certificate, no signature.
    Resumed,
}

/// Checks both sides finished a TLS 1.3 handshake with the pinned
/// parameters, and that it was (or was not) resumed.
fn check_negotiated(pair: &Pair, expect: Expect) -> Result<(), HarnessError> {
    let resumed = expect == Expect::Resumed;
    for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
        ensure(conn.handshake_complete(), || {
            format!("{side}: handshake is not complete")
        })?;
        let version = conn
            .actual_protocol_version()
            .context("reading the protocol version")?;
        ensure(version == Version::TLS13, || {
            format!("{side}: negotiated {version:?}, expected TLS 1.3")
        })?;
        let cipher = conn.cipher_suite().context("reading the cipher suite")?;
        ensure(cipher == EXPECTED_CIPHER, || {
            format!("{side}: negotiated cipher {cipher}, pinned {EXPECTED_CIPHER}")
        })?;
        let group = conn.selected_key_exchange_group();
        ensure(group == Some(EXPECTED_GROUP), || {
            format!("{side}: negotiated group {group:?}, pinned {EXPECTED_GROUP}")
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
            format!("{side}: handshake type {handshake_type}, expected {expect:?}")
        })?;
        let scheme = conn.signature_scheme();
        let expected_scheme = (!resumed).then_some(EXPECTED_SIGNATURE_SCHEME);
        ensure(scheme == expected_scheme, || {
            format!("{side}: signature scheme {scheme:?}, expected {expected_scheme:?}")
        })?;
    }
    if !resumed {
        let key = pair
            .client
            .signature_public_key_type(Mode::Server)
            .context("reading the server's key type")?;
        ensure(key == EXPECTED_SERVER_KEY, || {
            format!("server key is {key}, expected {EXPECTED_SERVER_KEY}")
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// ConfigBuild
// ---------------------------------------------------------------------------

/// Builds an s2n-tls `Config` ready to serve and to verify `localhost`.
///
/// **Counted:** `Builder::new` (`s2n_config_new_minimal`), the pinned policy,
/// both fixed clocks, the verify-host callback, loading the RSA-4096 chain and
/// private key (PEM parsing, key parsing and the key/certificate match check),
/// adding the CA to the trust store, and `build`. This is what an application
/// pays once per config, and why configs should be reused.
///
/// **Not counted:** s2n-tls's one-time library initialisation (`setup` calls
/// it, since the first `Builder::new` in a process would otherwise pay it)
/// and constructing the policy name. The PEM bytes are embedded in the
/// binary, so no file is read anywhere. The system trust store is *not*
/// loaded (`with_system_certs(false)`): it would add about 57 M instructions
/// that depend on the machine's CA bundle, not on s2n-tls.
///
/// **Check:** a native handshake between two connections using the built
/// config (as client and as server), which must negotiate the pinned
/// parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

/// What [`ConfigBuild`] runs share: the policy and the PEM inputs.
///
/// The PEM bytes are copied from the binary into heap buffers: parsing reads
/// them with copies whose instruction count depends on the buffers'
/// alignment, and the alignment of embedded data moves whenever unrelated
/// code in the binary changes, while a fresh allocation's does not.
#[derive(Debug)]
pub struct ConfigBuildSetup {
    policy: Policy,
    chain_pem: Vec<u8>,
    key_pem: Vec<u8>,
    ca_pem: Vec<u8>,
}

impl Harness for ConfigBuild {
    type Setup = ConfigBuildSetup;
    type Input = ();
    type Output = Config;

    fn setup(&self) -> Result<ConfigBuildSetup, HarnessError> {
        s2n_tls::init::init();
        Ok(ConfigBuildSetup {
            policy: pinned_policy()?,
            chain_pem: LEAF_CHAIN_PEM.to_vec(),
            key_pem: LEAF_KEY_PEM.to_vec(),
            ca_pem: CA_PEM.to_vec(),
        })
    }

    fn prepare(&self, _: &ConfigBuildSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ConfigBuildSetup, _: ()) -> Result<Config, HarnessError> {
        let mut builder = base_builder(&setup.policy)?;
        builder
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .context("setting the verify-host callback")?
            .load_pem(&setup.chain_pem, &setup.key_pem)
            .context("loading the chain and key")?
            .trust_pem(&setup.ca_pem)
            .context("trusting the CA")?;
        builder.build().context("building the config")
    }

    fn check(&self, _: &ConfigBuildSetup, config: &Config) -> Result<(), HarnessError> {
        let mut pair = new_pair(config, config, HANDSHAKE_PIPE_CAPACITY, None)?;
        pair.handshake()
            .context("handshaking with the built config")?;
        check_negotiated(&pair, Expect::Full)
    }
}

// ---------------------------------------------------------------------------
// HandshakeRsa4096
// ---------------------------------------------------------------------------

/// One full TLS 1.3 handshake between an s2n-tls client and server, the
/// server authenticating with an RSA-4096 certificate.
///
/// **Counted:** both sides' `poll_negotiate` calls, alternating client and
/// server until both are done, and the in-memory transport's copies between
/// them: ClientHello with a secp256r1 key share, the server's key exchange,
/// certificate chain and RSA-PSS-SHA256 CertificateVerify (an RSA-4096
/// private-key operation), the client validating the chain against the test
/// CA and checking CertificateVerify (RSA-4096 public-key operations), the
/// hostname callback and both Finished messages. That is the cost of one new
/// connection on both ends.
///
/// **Not counted:** building the configs (`setup`; see [`ConfigBuild`]),
/// creating and wiring the two connections (`prepare`), and freeing them.
/// Session tickets are disabled on both sides, so the server issues no ticket
/// and nothing resumes: every run is a full handshake.
///
/// **Check:** both sides complete TLS 1.3 with [`EXPECTED_CIPHER`],
/// [`EXPECTED_GROUP`] and [`EXPECTED_SIGNATURE_SCHEME`], a full (not resumed)
/// handshake, and an RSA-4096 server key.
#[derive(Debug, Clone, Copy, Default)]
pub struct HandshakeRsa4096;

impl Harness for HandshakeRsa4096 {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        let policy = pinned_policy()?;
        Ok(Configs {
            client: client_config(&policy, None)?,
            server: server_config(&policy, false)?,
        })
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        new_pair(
            &configs.client,
            &configs.server,
            HANDSHAKE_PIPE_CAPACITY,
            None,
        )
    }

    fn run(&self, _: &Configs, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, Expect::Full)
    }
}

// ---------------------------------------------------------------------------
// SessionResumption
// ---------------------------------------------------------------------------

/// One TLS 1.3 handshake resumed from a session ticket (PSK with (EC)DHE).
///
/// **Counted:** both sides' `poll_negotiate` until done: the client's
/// ClientHello with the ticket as a PSK identity and binder, the server
/// decrypting the ticket and checking the binder, a secp256r1 key exchange
/// (TLS 1.3 resumption keeps forward secrecy), both Finished messages, and the
/// server encrypting and sending one fresh NewSessionTicket, which s2n-tls
/// does at the end of its `poll_negotiate` whenever tickets are enabled. No
/// certificate is sent and no RSA operation happens: that difference from
/// [`HandshakeRsa4096`] is what this path is for.
///
/// **Not counted:** the full handshake in `setup` that obtains the ticket (the
/// client reads the server's post-handshake NewSessionTicket with a
/// `poll_recv`, and the session-ticket callback keeps it); configs;
/// connection creation and `set_session_ticket` on the client (`prepare`).
/// The client never reads the new ticket sent during the run. Fixed clocks
/// and a fixed ticket key make the ticket, its age and the key choice the
/// same in every process.
///
/// **Check:** both sides report `resumed()`, the handshake type has no
/// `FULL_HANDSHAKE`, no certificate signature was made, and the pinned
/// cipher and group were negotiated. A full handshake fails this check.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionResumption;

/// What [`SessionResumption`] runs share: configs with tickets enabled and
/// the serialized session obtained from a full handshake.
#[derive(Debug)]
pub struct ResumptionSetup {
    configs: Configs,
    session: Vec<u8>,
}

impl Harness for SessionResumption {
    type Setup = ResumptionSetup;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<ResumptionSetup, HarnessError> {
        let policy = pinned_policy()?;
        let store = TicketStore::default();
        let configs = Configs {
            client: client_config(&policy, Some(store.clone()))?,
            server: server_config(&policy, true)?,
        };

        let mut pair = new_pair(
            &configs.client,
            &configs.server,
            HANDSHAKE_PIPE_CAPACITY,
            None,
        )?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        check_negotiated(&pair, Expect::Full)?;
        // In TLS 1.3 the ticket arrives after the handshake; a read processes
        // it (and then blocks: there is no application data).
        let mut byte = [0u8; 1];
        match pair.client.poll_recv(&mut byte) {
            Poll::Pending => {}
            Poll::Ready(Ok(n)) => {
                return Err(format!("client read {n} unexpected application bytes").into())
            }
            Poll::Ready(Err(e)) => return Err(e).context("client reading the session ticket"),
        }
        let session = store
            .take()
            .ok_or("the server sent no session ticket (or the callback could not store it)")?;
        Ok(ResumptionSetup { configs, session })
    }

    fn prepare(&self, setup: &ResumptionSetup) -> Result<Pair, HarnessError> {
        new_pair(
            &setup.configs.client,
            &setup.configs.server,
            HANDSHAKE_PIPE_CAPACITY,
            Some(&setup.session),
        )
    }

    fn run(&self, _: &ResumptionSetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, _: &ResumptionSetup, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, Expect::Resumed)
    }
}

// ---------------------------------------------------------------------------
// RecordAesGcm
// ---------------------------------------------------------------------------

/// 1 MiB of application data from client to server over an established
/// TLS 1.3 connection using AES-128-GCM.
///
/// **Counted:** the client's `poll_send` of the whole buffer, which s2n-tls
/// splits into 64 full-size (16 KiB) records and encrypts, and the server's
/// `poll_recv` calls that decrypt them into the receive buffer, plus the
/// transport's copies in between. This is the steady-state record layer, the
/// cost that scales with bytes ([`Harness::bytes_per_run`] reports 1 MiB, so
/// results read as instructions per byte).
///
/// **Not counted:** configs and the payload (`setup`); the connections, their
/// full handshake, the receive buffer and the transport's 1 MiB reservation
/// (`prepare`). The handshake is outside the count because [`HandshakeRsa4096`]
/// measures it; buffers are allocated outside so the count is the library's,
/// not the allocator's.
///
/// **Check:** the server received exactly the bytes sent, nothing is left in
/// the transport, and the connection runs [`EXPECTED_CIPHER`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordAesGcm;

/// What [`RecordAesGcm`] runs share: configs and the payload.
#[derive(Debug)]
pub struct RecordSetup {
    configs: Configs,
    payload: Vec<u8>,
}

/// A connected pair and the server's receive buffer: the input of one
/// [`RecordAesGcm`] run, and (filled) its output.
#[derive(Debug)]
pub struct Transfer {
    pair: Pair,
    received: Vec<u8>,
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

impl Harness for RecordAesGcm {
    type Setup = RecordSetup;
    type Input = Transfer;
    type Output = Transfer;

    fn bytes_per_run(&self) -> Option<u64> {
        Some(RECORD_BYTES as u64)
    }

    fn setup(&self) -> Result<RecordSetup, HarnessError> {
        let policy = pinned_policy()?;
        Ok(RecordSetup {
            configs: Configs {
                client: client_config(&policy, None)?,
                server: server_config(&policy, false)?,
            },
            payload: payload(RECORD_BYTES),
        })
    }

    fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
        // The payload plus TLS 1.3 record overhead (22 bytes per 16 KiB
        // record) with room to spare: the pipe never grows during the run.
        let capacity = RECORD_BYTES + RECORD_BYTES / 16;
        let mut pair = new_pair(&setup.configs.client, &setup.configs.server, capacity, None)?;
        pair.handshake()
            .context("the handshake before the transfer")?;
        check_negotiated(&pair, Expect::Full)?;
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
        })
    }

    fn run(&self, setup: &RecordSetup, mut transfer: Transfer) -> Result<Transfer, HarnessError> {
        let payload = &setup.payload[..];
        let Transfer { pair, received } = &mut transfer;
        let mut sent = 0;
        let mut got = 0;
        while got < payload.len() {
            let mut progressed = false;
            if sent < payload.len() {
                match pair.client.poll_send(&payload[sent..]) {
                    Poll::Ready(Ok(n)) => {
                        sent += n;
                        progressed |= n > 0;
                    }
                    Poll::Ready(Err(e)) => return Err(e).context("client send failed"),
                    Poll::Pending => {}
                }
            }
            match pair.server.poll_recv(&mut received[got..]) {
                Poll::Ready(Ok(0)) => return Err("server saw the connection close".into()),
                Poll::Ready(Ok(n)) => {
                    got += n;
                    progressed = true;
                }
                Poll::Ready(Err(e)) => return Err(e).context("server receive failed"),
                Poll::Pending => {}
            }
            if !progressed {
                return Err(format!("transfer stalled after {sent} sent, {got} received").into());
            }
        }
        Ok(transfer)
    }

    fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
        let cipher = transfer
            .pair
            .client
            .cipher_suite()
            .context("reading the cipher suite")?;
        ensure(cipher == EXPECTED_CIPHER, || {
            format!("negotiated {cipher}, pinned {EXPECTED_CIPHER}")
        })?;
        let received = &transfer.received;
        ensure(received.len() == setup.payload.len(), || {
            format!(
                "received {} bytes, sent {}",
                received.len(),
                setup.payload.len()
            )
        })?;
        if let Some(at) = received
            .iter()
            .zip(&setup.payload)
            .position(|(a, b)| a != b)
        {
            return Err(format!("received data differs from what was sent at byte {at}").into());
        }
        let in_flight = transfer.pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the transfer: {in_flight:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn session_resumption_runs_natively() {
        run_natively(&SessionResumption).expect("SessionResumption");
    }

    #[test]
    fn record_aes_gcm_runs_natively() {
        run_natively(&RecordAesGcm).expect("RecordAesGcm");
        assert_eq!(RecordAesGcm.bytes_per_run(), Some(1_048_576));
    }

    #[test]
    fn verify_host_accepts_localhost_only() {
        let callback = AcceptHost::LOCALHOST;
        assert!(callback.verify_host_name("localhost"));
        for other in ["", "localhost.", "LOCALHOST", "example.com", "*.localhost"] {
            assert!(!callback.verify_host_name(other), "{other:?}");
        }
    }

    /// The client really verifies the server's name: a client that accepts
    /// only another name fails the handshake against the `localhost` leaf.
    #[test]
    fn handshake_fails_when_the_host_callback_rejects() {
        let policy = pinned_policy().expect("policy");
        let mut builder = base_builder(&policy).expect("builder");
        builder
            .trust_pem(CA_PEM)
            .expect("trust")
            .set_verify_host_callback(AcceptHost("example.com"))
            .expect("callback");
        let client = builder.build().expect("client config");
        let server = server_config(&policy, false).expect("server config");
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
        let server = server_config(&policy, false).expect("server config");
        let mut pair = new_pair(&client, &server, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    #[test]
    fn handshake_check_rejects_a_resumed_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        let pair = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, pair).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        assert!(check_negotiated(&pair, Expect::Full).is_err());
    }

    #[test]
    fn resumption_check_rejects_a_full_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        // Same configs, but the client offers no session.
        let pair = new_pair(
            &setup.configs.client,
            &setup.configs.server,
            HANDSHAKE_PIPE_CAPACITY,
            None,
        )
        .expect("pair");
        let pair = harness.run(&setup, pair).expect("full handshake");
        check_negotiated(&pair, Expect::Full).expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("resumed"), "{error}");
    }

    #[test]
    fn record_check_rejects_a_flipped_byte() {
        let harness = RecordAesGcm;
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        let mut output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("intact transfer");
        output.received[RECORD_BYTES / 2] ^= 0x01;
        let error = harness
            .check(&setup, &output)
            .expect_err("a flipped byte must fail the check");
        assert!(error.to_string().contains("524288"), "{error}");
    }

    /// The client sends full-size records: 64 records of 16 KiB, each with
    /// TLS 1.3's 22 bytes of overhead (5 header, 1 content type, 16 tag).
    #[test]
    fn record_path_uses_full_size_records() {
        let harness = RecordAesGcm;
        let setup = harness.setup().expect("setup");
        let mut transfer = harness.prepare(&setup).expect("prepare");
        let mut sent = 0;
        while sent < RECORD_BYTES {
            match transfer.pair.client.poll_send(&setup.payload[sent..]) {
                Poll::Ready(Ok(n)) => sent += n,
                other => panic!("send did not complete: {other:?}"),
            }
        }
        let records = RECORD_BYTES / (16 * 1024);
        assert_eq!(records, 64);
        assert_eq!(transfer.pair.in_flight(), (RECORD_BYTES + records * 22, 0));
    }

    #[test]
    fn payload_is_deterministic_and_not_constant() {
        let a = payload(RECORD_BYTES);
        assert_eq!(a.len(), RECORD_BYTES);
        assert_eq!(a, payload(RECORD_BYTES));
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
