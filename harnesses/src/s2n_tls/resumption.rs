//! [`SessionResumption`]: a TLS 1.3 handshake resumed from a session ticket.

use std::sync::{Arc, Mutex};
use std::task::Poll;

use regress_measure::{Harness, HarnessError};
use s2n_tls::callbacks::{SessionTicket, SessionTicketCallback};
use s2n_tls::connection::Connection;

use super::transport::Pair;
use super::{
    check_negotiated, client_config, new_pair, pinned_policy, server_config, ClientOptions,
    Configs, Context as _, Expected, ServerOptions, HANDSHAKE_PIPE_CAPACITY,
};

/// Name and key of the server's session-ticket key. Fixed so that the
/// ticket, and with it the resumed handshake, is the same in every process.
pub(super) const TICKET_KEY_NAME: &[u8] = b"regress-ticket";
pub(super) const TICKET_KEY: [u8; 32] = [0x5a; 32];

/// Session-ticket callback that keeps the first ticket a client receives.
#[derive(Debug, Clone, Default)]
pub(super) struct TicketStore(Arc<Mutex<Option<Vec<u8>>>>);

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

/// One TLS 1.3 handshake resumed from a session ticket (PSK with (EC)DHE).
///
/// **Counted:** both sides' `poll_negotiate` until done: the client's
/// ClientHello with the ticket as a PSK identity and binder, the server
/// decrypting the ticket and checking the binder, a secp256r1 key exchange
/// (TLS 1.3 resumption keeps forward secrecy), both Finished messages, and the
/// server encrypting and sending one fresh NewSessionTicket, which s2n-tls
/// does at the end of its `poll_negotiate` whenever tickets are enabled. No
/// certificate is sent and no RSA operation happens: that difference from
/// [`HandshakeRsa4096`](super::HandshakeRsa4096) is what this path is for.
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
            client: client_config(
                &policy,
                ClientOptions {
                    tickets: Some(store.clone()),
                    ..ClientOptions::rsa()
                },
            )?,
            server: server_config(
                &policy,
                ServerOptions {
                    tickets: true,
                    ..ServerOptions::RSA
                },
            )?,
        };

        let mut pair = new_pair(
            &configs.client,
            &configs.server,
            HANDSHAKE_PIPE_CAPACITY,
            None,
        )?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        check_negotiated(&pair, &Expected::TICKETS_FULL)?;
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
        check_negotiated(pair, &Expected::RESUMED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_measure::harness::run_natively;

    #[test]
    fn session_resumption_runs_natively() {
        run_natively(&SessionResumption).expect("SessionResumption");
    }

    #[test]
    fn full_handshake_check_rejects_a_resumed_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        let pair = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, pair).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        assert!(check_negotiated(&pair, &Expected::TICKETS_FULL).is_err());
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
        check_negotiated(&pair, &Expected::TICKETS_FULL).expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("resumed"), "{error}");
    }
}
