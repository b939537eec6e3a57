//! OpenSSL's server under a hostile client's flight ([`Victim`]).

use openssl::ssl::ErrorCode;

use regress_measure::{HarnessError, Received};

use super::context::Contexts;
use super::ffi;
use super::tls::OpenSsl;
use super::transport::{step, Pair};
use crate::common::error::{ensure, Context as _};
use crate::common::pki::ClientChain;
use crate::common::transport::{Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::hostile::client_chain::client_flight_size;
use crate::tls::hostile::{ServeError, Victim};

impl Victim for OpenSsl {
    fn attacker(pair: &Pair) -> &Endpoint {
        pair.client.get_ref()
    }

    /// The server's `SSL_do_handshake` until it has read the whole flight
    /// and wants to read more (OpenSSL writes its answer, or its alert,
    /// inside the call), or fails.
    fn serve(pair: &mut Pair) -> Result<(), ServeError> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            match pair.server.do_handshake() {
                Err(error) if error.code() == ErrorCode::WANT_READ => {
                    if !pair.server.get_ref().has_incoming() {
                        return Ok(());
                    }
                }
                Err(error) => return Err(ServeError::Library(error.to_string())),
                Ok(()) => return Err(ServeError::Finished),
            }
        }
        Err(ServeError::Unread {
            calls: MAX_HANDSHAKE_ROUNDS,
        })
    }

    /// OpenSSL's default verify depth is 100 intermediates (`X509_VERIFY_PARAM`'s
    /// "default" entry); the client's Certificate message (about 48 KiB
    /// here) stays within its default limit of 100 KiB
    /// (`SSL_MAX_CERT_LIST_DEFAULT`).
    const LONGEST_CLIENT_CHAIN: ClientChain = ClientChain::Hundred;

    /// The client's `SSL_do_handshake` (its ClientHello), the server's (its
    /// flight), the client's again (it reads the flight, writes its
    /// certificate, signature and Finished, and is done).
    fn client_flight(_: &Contexts, mut pair: Pair) -> Result<(Pair, Received), HarnessError> {
        let hello = step(&mut pair.client).context("the client's hello")?;
        let served = step(&mut pair.server).context("the server's flight")?;
        let done = step(&mut pair.client).context("the client's second flight")?;
        ensure(!hello && !served && done, || {
            format!(
                "the handshake's steps ended out of turn (client {hello}, server {served}, \
                 client {done}; only the last should be done)"
            )
        })?;
        let flight = client_flight_size(pair.client.get_ref())?;
        Ok((pair, flight))
    }

    /// The server's `SSL_do_handshake` until its handshake is done.
    fn finish(pair: &mut Pair) -> Result<(), HarnessError> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            if step(&mut pair.server).context("the server on the client's flight")? {
                return Ok(());
            }
            if !pair.server.get_ref().has_incoming() {
                return Err("the server waits for more after the client's flight".into());
            }
        }
        Err(format!("the server still handshaking after {MAX_HANDSHAKE_ROUNDS} calls").into())
    }

    /// A full handshake of the default contexts, the client reading its
    /// tickets (`SSL_read`) and keeping its session, then a fresh client
    /// offering it: its first `SSL_do_handshake` writes the ClientHello.
    fn resumption_flight(contexts: &Contexts) -> Result<Vec<u8>, HarnessError> {
        let mut pair = Pair::new(contexts, None)?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        let mut byte = [0u8; 1];
        match pair.client.ssl_read(&mut byte) {
            Err(e) if e.code() == ErrorCode::WANT_READ => {}
            Ok(n) => return Err(format!("client read {n} unexpected application bytes").into()),
            Err(e) => return Err(e).context("client reading the session tickets"),
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
        // Freeing an `SSL` that has not sent close_notify marks its session
        // not resumable.
        pair.client
            .shutdown()
            .context("client sending close_notify")?;
        drop(pair);
        let mut resuming = Pair::new(contexts, Some(&session))?;
        match resuming.client.do_handshake() {
            Err(e) if e.code() == ErrorCode::WANT_READ => {}
            Ok(()) => return Err("the resuming client finished alone".into()),
            Err(e) => return Err(e).context("the resuming client writing its ClientHello"),
        }
        Ok(resuming.server.get_ref().incoming_bytes())
    }
}
