//! [`SessionResumption`]: a handshake resumed from a session: a TLS 1.3
//! ticket (stateless, or the id of a session in the server's cache) or a
//! TLS 1.2 ticket.

use std::ffi::c_long;

use openssl::ssl::{ErrorCode, SslSession};
use regress_measure::{Harness, HarnessError};

use super::check::check_handshake;
use super::context::Contexts;
use super::ffi;
use super::system::runtime_libraries;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::TlsVersion;
use crate::paths::{Handshake, Resumption};

/// How far the client's copy of the resumption session is backdated, in
/// seconds (see [`SessionResumption`]).
pub const SESSION_BACKDATE_SECS: c_long = 60;

/// One handshake resumed from a session of the contexts of its
/// [`Handshake`] path (tickets on): as below for a TLS 1.3 stateless
/// ticket. With [`Resumption::Cache`] the server keeps the session in its
/// internal cache (`SSL_OP_NO_TICKET` on TLS 1.3: a stateful ticket), looks
/// it up by the ticket's id instead of decrypting the ticket, takes it out
/// (single use) and caches the fresh session it issues; each run resumes a
/// session of its own `prepare`'s full handshake. On TLS 1.2, an
/// abbreviated handshake: the ticket in the client's SessionTicket
/// extension, no key exchange, no new ticket (OpenSSL renews none).
///
/// **Counted:** both sides' `SSL_do_handshake` until done: the client's
/// ClientHello offering the ticket as a PSK identity with its binder and a
/// P-256 key share (OpenSSL clients offer only `psk_dhe_ke`), the server
/// decrypting the ticket, checking the binder and doing the P-256 key
/// exchange (resumption keeps forward secrecy), both Finished messages, and
/// the server encrypting and sending one fresh NewSessionTicket, which it
/// does within its last `SSL_do_handshake` (`set_num_tickets(1)`; OpenSSL
/// sends at most one ticket after a resumption). No certificate is sent and
/// no signature is made or checked: that difference from the full handshake
/// is what this path is for.
///
/// **Not counted:** the contexts and the full handshake in `setup` that
/// obtains the ticket (the client processes the server's post-handshake
/// NewSessionTicket with an `SSL_read`, and keeps `SSL_get1_session`,
/// serialized); decoding a copy of the session, creating the connections and
/// `SSL_set_session` (`prepare`). The client never reads the new ticket sent
/// during the run.
///
/// **Time:** OpenSSL 3.0 has no clock hook. The client computes the ticket's
/// age from `time()` minus the session's time and takes different branches
/// for an age of 0 seconds and more (`if (agesec > 0) agesec--`), so a run
/// that happened to cross a second boundary after `setup` would count a few
/// instructions more. `setup` therefore backdates the client's copy of the
/// session by [`SESSION_BACKDATE_SECS`]: the age is always at least that,
/// and well inside the ticket's lifetime (7200 s). The server's own
/// ticket-age comparison (early-data tolerance) then always takes the
/// same "out of tolerance" branch, which changes nothing here: no early data
/// is sent.
///
/// **Check:** both sides report `session_reused()`, negotiated the pinned
/// version, suite and group (so the PSK mode was `psk_dhe_ke`), and no
/// signature was made or checked by either side; the server sent exactly
/// one record after its Finished (the new ticket). A full handshake fails
/// this check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionResumption(pub Handshake);

/// What [`SessionResumption`] runs share: contexts with tickets on and the
/// client's session from a full handshake, serialized.
///
/// Each run resumes from its own copy of the session, decoded in `prepare`:
/// OpenSSL marks a session "not resumable" when a connection that used it is
/// freed without sending close_notify, so sharing one `SSL_SESSION` would
/// make the runs depend on one another.
#[derive(Debug)]
pub struct ResumptionSetup {
    contexts: Contexts,
    session_der: Vec<u8>,
}

impl SessionResumption {
    /// A full handshake whose client session, backdated and serialized, a
    /// run resumes from.
    fn obtain_session(&self, contexts: &Contexts) -> Result<Vec<u8>, HarnessError> {
        let mut pair = Pair::new(contexts, None)?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        check_handshake(&pair, &contexts.profile, &contexts.profile.expected(false))?;
        if self.0.version == TlsVersion::Tls13 {
            let records = pair.server_records();
            ensure(records.as_ref().map(Vec::len) == Some(1), || {
                format!(
                    "after a full handshake the server must send one ticket record: {records:?}"
                )
            })?;
            // In TLS 1.3 the ticket arrives after the handshake; a read
            // processes it (and then wants more: there is no application
            // data). A TLS 1.2 ticket came within the handshake.
            let mut byte = [0u8; 1];
            match pair.client.ssl_read(&mut byte) {
                Err(e) if e.code() == ErrorCode::WANT_READ => {}
                Ok(n) => return Err(format!("client read {n} unexpected application bytes").into()),
                Err(e) => return Err(e).context("client reading the session ticket"),
            }
        }
        let session = pair
            .client
            .ssl()
            .session()
            .ok_or("the client has no session after the handshake")?
            .to_owned();
        ensure(ffi::session_has_ticket(&session), || {
            "the client's session has no ticket".to_owned()
        })?;
        // Close the connection properly, then free it: the session is then
        // ours alone and may be changed. (Freeing an `SSL` that has not sent
        // close_notify marks its session "bad", never to be resumed, and a
        // server takes it out of its cache.)
        pair.client
            .shutdown()
            .context("client sending close_notify")?;
        if self.0.resumption == Some(Resumption::Cache) {
            pair.server
                .shutdown()
                .context("server sending close_notify")?;
        }
        drop(pair);
        let backdated = session.time() - SESSION_BACKDATE_SECS;
        // SAFETY: no connection uses the session any more and it has not
        // been shared with another thread.
        unsafe { ffi::set_session_time(&session, backdated) }.context("backdating the session")?;
        session.to_der().context("serializing the session")
    }
}

impl Harness for SessionResumption {
    type Setup = ResumptionSetup;
    type Input = Pair;
    type Output = Pair;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        runtime_libraries()
    }

    /// The driver marks its sides' calls, as in a full handshake.
    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &ResumptionSetup, pair: &mut Pair) -> Result<bool, HarnessError> {
        crate::tls::first_record::<super::tls::OpenSsl>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<ResumptionSetup, HarnessError> {
        let contexts = Contexts::new(&self.0.profile())?;
        let session_der = self.obtain_session(&contexts)?;
        Ok(ResumptionSetup {
            contexts,
            session_der,
        })
    }

    fn prepare(&self, setup: &ResumptionSetup) -> Result<Pair, HarnessError> {
        // A session the server keeps in its cache resumes once (TLS 1.3
        // anti-replay takes it out): each run has its own.
        let fresh;
        let der = if self.0.resumption == Some(Resumption::Cache) {
            fresh = self.obtain_session(&setup.contexts)?;
            &fresh
        } else {
            &setup.session_der
        };
        let session = SslSession::from_der(der).context("decoding the session")?;
        Pair::new(&setup.contexts, Some(&session))
    }

    fn run(&self, _: &ResumptionSetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, _: &ResumptionSetup, pair: &Pair) -> Result<(), HarnessError> {
        check_handshake(pair, &self.0.profile(), &self.0.expected())?;
        let (to_server, _) = pair.in_flight();
        ensure(to_server == 0, || {
            format!("{to_server} bytes from the client left unread by the server")
        })?;
        // A TLS 1.3 server sends one fresh ticket after resuming; a TLS 1.2
        // server renews no ticket and has nothing left to send.
        let tickets = usize::from(self.0.version == TlsVersion::Tls13);
        let records = pair.server_records();
        ensure(records.as_ref().map(Vec::len) == Some(tickets), || {
            format!(
                "the server must send exactly {tickets} ticket record(s) after resuming: \
                 {records:?}"
            )
        })
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
                    library: crate::paths::Library::OpenSsl,
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
            let full = harness
                .run(&setup, Pair::new(&setup.contexts, None).expect(&name))
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

    #[test]
    fn resumption_check_rejects_a_full_handshake() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        // Same contexts, but the client offers no session.
        let pair = Pair::new(&setup.contexts, None).expect("pair");
        let pair = harness.run(&setup, pair).expect("full handshake");
        let full = setup.contexts.profile.expected(false);
        check_handshake(&pair, &setup.contexts.profile, &full).expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("resumed"), "{error}");
    }

    #[test]
    fn handshake_check_rejects_a_resumed_handshake() {
        let harness = harness();
        let setup = harness.setup().expect("setup");
        let pair = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, pair).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        let full = setup.contexts.profile.expected(false);
        assert!(check_handshake(&pair, &setup.contexts.profile, &full).is_err());
    }
}
