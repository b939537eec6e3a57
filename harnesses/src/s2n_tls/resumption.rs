//! [`SessionResumption`]: a TLS 1.3 handshake resumed from a session ticket.

use std::task::Poll;

use regress_measure::{Harness, HarnessError};

use super::check::check_handshake;
use super::config::Configs;
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::paths::Handshake;
use crate::tls::sides::Sides;
use regress_measure::parts::Side;

/// One TLS 1.3 handshake resumed from a session ticket (PSK with (EC)DHE),
/// of the configs of its [`Handshake`] path (tickets on).
///
/// **Counted:** the client loading the session it kept
/// (`s2n_connection_set_session`: s2n-tls has no client-side session store,
/// so every resuming s2n-tls client hands the library the bytes it saved,
/// and the library checks and parses them; rustls's store lookup is inside
/// its count too), marked as the client's first stage; then both sides'
/// `poll_negotiate` until done: the client's
/// ClientHello with the ticket as a PSK identity and binder, the server
/// decrypting the ticket and checking the binder, a secp256r1 key exchange
/// (TLS 1.3 resumption keeps forward secrecy), both Finished messages, and the
/// server encrypting and sending one fresh NewSessionTicket, which s2n-tls
/// does at the end of its `poll_negotiate` whenever tickets are enabled. No
/// certificate is sent and no signature made: that difference from the full
/// handshake is what this path is for.
///
/// **Not counted:** the full handshake in `setup` that obtains the ticket (the
/// client reads the server's post-handshake NewSessionTicket with a
/// `poll_recv`, and the session-ticket callback keeps it); configs;
/// connection creation (`prepare`).
/// The client never reads the new ticket sent during the run. Fixed clocks
/// and a fixed ticket key make the ticket, its age and the key choice the
/// same in every process.
///
/// **Check:** both sides report `resumed()`, the handshake type has no
/// `FULL_HANDSHAKE`, no certificate signature was made, and the pinned
/// version, suite and group were negotiated. A full handshake fails this
/// check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionResumption(pub Handshake);

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

    /// The driver marks its sides' calls, as in a full handshake.
    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &ResumptionSetup, pair: &mut Pair) -> Result<bool, HarnessError> {
        crate::tls::first_record::<super::tls::S2nTls>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<ResumptionSetup, HarnessError> {
        let configs = Configs::new(&self.0.profile())?;
        let mut pair = Pair::new(&configs)?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        check_handshake(&pair, &configs.profile, &configs.profile.expected(false))?;
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
        let session = configs
            .tickets
            .as_ref()
            .and_then(|store| store.take())
            .ok_or("the server sent no session ticket (or the callback could not store it)")?;
        Ok(ResumptionSetup { configs, session })
    }

    fn prepare(&self, setup: &ResumptionSetup) -> Result<Pair, HarnessError> {
        Pair::new(&setup.configs)
    }

    fn run(&self, setup: &ResumptionSetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        Sides::new()
            .call(Side::Client, || {
                pair.client.set_session_ticket(&setup.session).map(drop)
            })
            .context("the client loading its session")?;
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, _: &ResumptionSetup, pair: &Pair) -> Result<(), HarnessError> {
        check_handshake(pair, &self.0.profile(), &self.0.expected())
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
                    library: crate::paths::Library::S2nTls,
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
        assert!(paths.len() >= 3, "{paths:?}");
        for harness in paths {
            let name = harness.0.to_string();
            let setup = harness.setup().expect(&name);
            let input = harness.prepare(&setup).expect(&name);
            let pair = harness.run(&setup, input).expect(&name);
            harness.check(&setup, &pair).expect(&name);
            let mut full = Pair::new(&setup.configs).expect(&name);
            full.handshake().expect(&name);
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

    #[test]
    fn full_handshake_check_rejects_a_resumed_handshake() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        let pair = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, pair).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        let full = setup.configs.profile.expected(false);
        assert!(check_handshake(&pair, &setup.configs.profile, &full).is_err());
    }

    #[test]
    fn resumption_check_rejects_a_full_handshake() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        // Same configs, but the client offers no session.
        let mut pair = Pair::new(&setup.configs).expect("pair");
        pair.handshake().expect("full handshake");
        let full = setup.configs.profile.expected(false);
        check_handshake(&pair, &setup.configs.profile, &full).expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("resumed"), "{error}");
    }

    /// The run loads the session: a session cut short, or one with a
    /// byte of its length prefix changed, fails the run in the client's
    /// loading (s2n-tls checks the sizes it parses), before any handshake.
    #[test]
    fn the_run_loads_the_session_and_refuses_a_damaged_one() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        let whole = setup.session.clone();
        let mut damaged = vec![whole[..whole.len() / 2].to_vec()];
        let mut lengthened = whole.clone();
        // The ticket's 2-byte length follows the 1-byte format version.
        lengthened[1] ^= 0x40;
        damaged.push(lengthened);
        for session in damaged {
            let setup = ResumptionSetup {
                configs: Configs::new(&harness.0.profile()).expect("configs"),
                session,
            };
            let input = harness.prepare(&setup).expect("prepare");
            let error = harness
                .run(&setup, input)
                .expect_err("a damaged session must not load");
            assert!(error.to_string().contains("loading its session"), "{error}");
        }
    }
}
