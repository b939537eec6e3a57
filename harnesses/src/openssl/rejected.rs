//! OpenSSL's failed handshake ([`Rejection`]): the client rejecting the
//! server's chain.

use openssl::ssl::{ErrorCode, SslStream};
use regress_measure::HarnessError;

use super::context::Contexts;
use super::tls::OpenSsl;
use super::transport::Pair;
use crate::common::transport::Endpoint;
use crate::tls::rejected::{Failure, Rejection};

/// Rounds of `SSL_do_handshake` before a failure that never comes is an
/// error.
const MAX_ROUNDS: usize = 16;

/// OpenSSL reports a received alert as the reason code
/// `SSL_AD_REASON_OFFSET` (1000) plus the alert (`ssl.h`).
const SSL_AD_REASON_OFFSET: i32 = 1000;

/// One `SSL_do_handshake`: `Ok(None)` while it waits for the peer,
/// `Ok(Some((error, alert)))` once it failed, with the alert it received
/// (from its error queue's reason codes), an error if it finished.
fn step(stream: &mut SslStream<Endpoint>) -> Result<Option<(String, Option<u8>)>, HarnessError> {
    match stream.do_handshake() {
        Ok(()) => Err("the handshake completed".into()),
        Err(error) if error.code() == ErrorCode::WANT_READ => Ok(None),
        Err(error) => {
            let alert = error.ssl_error().and_then(|stack| {
                stack
                    .errors()
                    .iter()
                    .find_map(|entry| u8::try_from(entry.reason_code() - SSL_AD_REASON_OFFSET).ok())
            });
            Ok(Some((error.to_string(), alert)))
        }
    }
}

impl Rejection for OpenSsl {
    /// Both sides' `SSL_do_handshake` in turn until each has failed; the
    /// alert is read from the server's error queue.
    fn reject(_: &Contexts, mut pair: Pair) -> Result<(Pair, Failure), HarnessError> {
        let mut client = None;
        let mut server = None;
        for _ in 0..MAX_ROUNDS {
            if client.is_none() {
                client = step(&mut pair.client)?;
            }
            if server.is_none() {
                server = step(&mut pair.server)?;
            }
            if let (Some((client, _)), Some((server, alert))) = (&client, &server) {
                let failure = Failure {
                    client: client.clone(),
                    server: server.clone(),
                    alert: *alert,
                };
                return Ok((pair, failure));
            }
        }
        Err(format!(
            "the handshake did not fail on both sides within {MAX_ROUNDS} rounds \
             (client: {client:?}, server: {server:?})"
        )
        .into())
    }
}
