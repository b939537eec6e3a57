//! [`SessionResumption`]: a handshake resumed from a session: a TLS 1.3
//! ticket (stateless, or the key of the server's [`SessionCache`]) or a
//! TLS 1.2 ticket.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use regress_measure::{Harness, HarnessError};

use super::api::{ClientConfig, Ticket, Tls12Session};
use super::check::check_handshake;
use super::config::{client_resumption, Configs};
use super::transport::{Accepting, Pair};
use crate::common::error::Context as _;
use crate::common::pins::TlsVersion;
use crate::paths::Handshake;

/// A client session store holding TLS 1.3 tickets and TLS 1.2 sessions in
/// queues, without hashing: either it *catches* the sessions a client
/// receives (and offers none), or it *offers* queued ones, oldest first
/// (and keeps none).
///
/// rustls's own `ClientSessionMemoryCache` keys sessions by server name in a
/// `HashMap` with a per-process random hasher; one server name needs no map.
/// Key-exchange hints are not kept: with secp256r1 the only group, the
/// client's key share is the same either way.
///
/// Its `ClientSessionStore` impl is in [`super::api`] (the trait differs by
/// rustls version): it only calls `TicketQueue::catch` and
/// `TicketQueue::offer`.
#[derive(Debug)]
pub struct TicketQueue {
    offers: bool,
    tickets: Mutex<VecDeque<Ticket>>,
    tls12: Mutex<VecDeque<Tls12Session>>,
}

impl TicketQueue {
    fn new(offers: bool) -> TicketQueue {
        TicketQueue {
            offers,
            tickets: Mutex::new(VecDeque::new()),
            tls12: Mutex::new(VecDeque::new()),
        }
    }

    fn push(&self, ticket: Ticket) -> Result<(), HarnessError> {
        self.tickets
            .lock()
            .map_err(|_| "the ticket queue's lock is poisoned")?
            .push_back(ticket);
        Ok(())
    }

    fn pop(&self) -> Option<Ticket> {
        self.tickets.lock().ok()?.pop_front()
    }

    /// Moves the sessions this queue caught to `offering`; an error if it
    /// caught none.
    fn hand_over(&self, offering: &TicketQueue) -> Result<(), HarnessError> {
        let poisoned = "a ticket queue's lock is poisoned";
        let mut tickets = self.tickets.lock().map_err(|_| poisoned)?;
        let mut tls12 = self.tls12.lock().map_err(|_| poisoned)?;
        if tickets.is_empty() && tls12.is_empty() {
            return Err("the client received no session ticket".into());
        }
        offering
            .tickets
            .lock()
            .map_err(|_| poisoned)?
            .extend(tickets.drain(..));
        offering
            .tls12
            .lock()
            .map_err(|_| poisoned)?
            .extend(tls12.drain(..));
        Ok(())
    }

    /// A ticket the client received: kept by a catching queue.
    pub(in crate::rustls) fn catch(&self, ticket: Ticket) {
        if !self.offers {
            // A store cannot report errors; a poisoned lock loses the ticket
            // and `SessionResumption::prepare` reports it missing.
            let _ = self.push(ticket);
        }
    }

    /// The ticket a client offers: the oldest queued, from an offering
    /// queue.
    pub(in crate::rustls) fn offer(&self) -> Option<Ticket> {
        if self.offers {
            self.pop()
        } else {
            None
        }
    }

    /// A TLS 1.2 session the client completed: kept by a catching queue.
    pub(in crate::rustls) fn catch_tls12(&self, session: Tls12Session) {
        if !self.offers {
            if let Ok(mut queue) = self.tls12.lock() {
                queue.push_back(session);
            }
        }
    }

    /// The TLS 1.2 session a client offers: the oldest queued, from an
    /// offering queue.
    pub(in crate::rustls) fn offer_tls12(&self) -> Option<Tls12Session> {
        if self.offers {
            self.tls12.lock().ok()?.pop_front()
        } else {
            None
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.tickets.lock().map(|queue| queue.len()).unwrap_or(0)
    }
}

/// A server's session cache for [`Resumption::Cache`] paths: sessions in
/// a queue of `(key, session)`, found by comparing keys, oldest first.
///
/// rustls's own `ServerSessionMemoryCache` is a `HashMap` with a
/// per-process random hasher, whose probing would move counts from one
/// process to the next; a real server plugs in its own store the same way
/// (`ServerConfig::session_storage`). Its `StoresServerSessions` impl is in
/// [`super::api`]: it only calls `keep`, `find` and `remove`.
///
/// [`Resumption::Cache`]: crate::paths::Resumption::Cache
#[derive(Debug, Default)]
pub struct SessionCache {
    sessions: Mutex<VecDeque<(Vec<u8>, Vec<u8>)>>,
}

impl SessionCache {
    /// Keeps `session` under `key`, replacing any session of that key.
    pub(in crate::rustls) fn keep(&self, key: &[u8], session: Vec<u8>) -> bool {
        let Ok(mut sessions) = self.sessions.lock() else {
            return false;
        };
        sessions.retain(|(kept, _)| kept != key);
        sessions.push_back((key.to_vec(), session));
        true
    }

    /// The session kept under `key`.
    pub(in crate::rustls) fn find(&self, key: &[u8]) -> Option<Vec<u8>> {
        let sessions = self.sessions.lock().ok()?;
        sessions
            .iter()
            .find(|(kept, _)| kept == key)
            .map(|(_, session)| session.clone())
    }

    /// The session kept under `key`, no longer kept (TLS 1.3 sessions are
    /// single-use).
    pub(in crate::rustls) fn remove(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut sessions = self.sessions.lock().ok()?;
        let at = sessions.iter().position(|(kept, _)| kept == key)?;
        sessions.remove(at).map(|(_, session)| session)
    }

    /// How many sessions are kept.
    pub fn len(&self) -> usize {
        self.sessions
            .lock()
            .map(|sessions| sessions.len())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One handshake resumed from a session of the configs of its
/// [`Handshake`] path (tickets on): as below for a TLS 1.3 stateless ticket;
/// with [`Resumption::Cache`], the server has no ticketer, and instead of
/// decrypting the ticket it takes the session its id names from its
/// [`SessionCache`] (and keeps the fresh session it issues there); on
/// TLS 1.2, an abbreviated handshake: the client offers the ticket in its
/// SessionTicket extension, the server decrypts it, both derive keys from
/// the resumed master secret (no key exchange), the server sends a fresh
/// NewSessionTicket before its ChangeCipherSpec and Finished.
///
/// [`Resumption::Cache`]: crate::paths::Resumption::Cache
///
/// **Counted:** `ClientConnection::new`, where the client takes the queued
/// ticket from its session store and writes a ClientHello with a secp256r1
/// key share and the ticket as PSK identity and binder; the server
/// decrypting the stateless ticket (rustls's aws-lc-rs `Ticketer`:
/// AES-256-CBC and HMAC-SHA256) and checking the binder, the secp256r1 key
/// exchange (psk_dhe_ke keeps forward secrecy), both Finished messages, and
/// the server encrypting one fresh ticket and queuing it in a
/// NewSessionTicket, which rustls does as it processes the client's Finished
/// (s2n-tls issues one too). No certificate and no signature: that
/// difference from the full handshake is what this path is for. The ticket
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
/// A caveat: rustls's `Ticketer` rotates its key every 6 hours and reads a
/// clock (`SystemTime::now`; 0.24: `Instant::now`; not the config's time
/// provider) on each encryption and decryption to decide; in a measured
/// process the key never rotates, so the path is the same, but those two
/// clock reads are counted.
///
/// **Check:** both sides report `HandshakeKind::Resumed` with the pinned
/// version, suite and group; the server saw SNI and has the new ticket
/// queued. A full handshake fails this check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionResumption(pub Handshake);

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
        check_handshake(&self.configs, &pair, &self.configs.profile.expected(false))?;
        if self.configs.profile.pins.version == TlsVersion::Tls13 {
            // A TLS 1.2 client has its session when the handshake is done.
            pair.server_to_client()
                .context("delivering the session ticket")?;
        }
        self.caught.hand_over(&self.offered)
    }
}

impl Harness for SessionResumption {
    type Setup = ResumptionSetup;
    type Input = Accepting;
    type Output = Pair;

    /// The driver marks its sides' calls, as in a full handshake.
    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &ResumptionSetup, pair: &mut Pair) -> Result<bool, HarnessError> {
        crate::tls::first_record::<super::tls::Rustls>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<ResumptionSetup, HarnessError> {
        let offered = Arc::new(TicketQueue::new(true));
        let configs = Configs::build(&self.0.profile(), Some(offered.clone()))?;
        let caught = Arc::new(TicketQueue::new(false));
        let mut catching_client = ClientConfig::clone(&configs.client);
        catching_client.resumption =
            client_resumption(caught.clone(), configs.profile.pins.version);
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
        check_handshake(&setup.configs, pair, &self.0.expected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn harness() -> SessionResumption {
        SessionResumption(Handshake::ALL[5])
    }

    /// Every resumption path of this library (ticket, cache, TLS 1.2,
    /// post-quantum, as the build has them).
    fn every_path() -> Vec<SessionResumption> {
        Handshake::resumptions()
            .filter(|handshake| {
                let benchmark = crate::paths::Benchmark {
                    library: crate::paths::Library::Rustls,
                    path: crate::paths::Path::Handshake(*handshake),
                };
                crate::registry::not_applicable(&benchmark).is_none()
            })
            .map(SessionResumption)
            .collect()
    }

    /// Each path resumes and passes its check; a full handshake of the
    /// same configs fails it.
    #[test]
    fn every_resumption_path_resumes_and_a_full_handshake_fails_it() {
        let paths = every_path();
        assert!(paths.len() >= 4, "{paths:?}");
        for harness in paths {
            let name = harness.0.to_string();
            let setup = harness.setup().expect(&name);
            let input = harness.prepare(&setup).expect(&name);
            let pair = harness.run(&setup, input).expect(&name);
            harness.check(&setup, &pair).expect(&name);
            let full = harness
                .run(&setup, setup.configs.accept().expect(&name))
                .expect(&name);
            let error = harness
                .check(&setup, &full)
                .expect_err("a full handshake must fail the resumption check");
            // A full TLS 1.2 handshake exchanges a key, which the resumed
            // one does not: the group may be what its check names first.
            let error = error.to_string();
            assert!(
                error.contains("esumed") || error.contains("group"),
                "{name}: {error}"
            );
        }
    }

    /// As the measured child does: all inputs prepared first, then the runs.
    #[test]
    fn session_resumption_runs_after_three_prepares() {
        let harness = harness();
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
        let harness = harness();
        let setup = harness.setup().expect("setup");
        // The same configs, but no ticket queued: a full handshake.
        let accepting = setup.configs.accept().expect("accept");
        let pair = harness.run(&setup, accepting).expect("full handshake");
        check_handshake(
            &setup.configs,
            &pair,
            &setup.configs.profile.expected(false),
        )
        .expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("Resumed"), "{error}");
    }

    #[test]
    fn handshake_check_rejects_a_resumed_handshake() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        let accepting = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, accepting).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        let full = setup.configs.profile.expected(false);
        assert!(check_handshake(&setup.configs, &pair, &full).is_err());
    }

    /// The server issues exactly one ticket per resumed handshake: one
    /// encrypted record (a TLS 1.3 NewSessionTicket) is all it has queued.
    #[test]
    fn resumed_server_issues_exactly_one_ticket() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        let accepting = harness.prepare(&setup).expect("prepare");
        let mut pair = harness.run(&setup, accepting).expect("run");
        pair.server.flush(&mut pair.server_end).expect("flush");
        let records = pair.client_end.incoming_records().expect("whole records");
        assert_eq!(records.len(), 1, "exactly one record: {records:?}");
        assert_eq!(
            pair.client_end.incoming_bytes()[0],
            0x17,
            "an encrypted record"
        );
    }
}
