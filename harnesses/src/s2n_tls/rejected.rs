//! s2n-tls's failed handshake ([`Rejection`]): the client rejecting the
//! server's chain.

use std::task::Poll;

use regress_measure::HarnessError;

use super::config::Configs;
use super::tls::S2nTls;
use super::transport::Pair;
use crate::tls::rejected::{Failure, Rejection};

/// Rounds of `poll_negotiate` before a failure that never comes is an error.
const MAX_ROUNDS: usize = 16;

impl Rejection for S2nTls {
    const ALERTS: bool = false;

    /// Both sides' `poll_negotiate` in turn until the client has failed,
    /// the server's next `poll_negotiate` (which waits for the client), and
    /// the alert it received (`s2n_connection_get_alert`: none), as a server
    /// logging a failure reads it.
    fn reject(_: &Configs, mut pair: Pair) -> Result<(Pair, Failure), HarnessError> {
        let mut client = None;
        let mut server = None;
        for _ in 0..MAX_ROUNDS {
            if client.is_none() {
                match pair.client.poll_negotiate() {
                    Poll::Ready(Ok(_)) => return Err("the client accepted the server".into()),
                    Poll::Ready(Err(error)) => client = Some(error.to_string()),
                    Poll::Pending => {}
                }
            }
            match pair.server.poll_negotiate() {
                Poll::Ready(Ok(_)) => return Err("the server finished its handshake".into()),
                Poll::Ready(Err(error)) => server = Some(error.to_string()),
                Poll::Pending if client.is_some() => {
                    server = Some("waiting for the client's next flight".into())
                }
                Poll::Pending => {}
            }
            if let (Some(client), Some(server)) = (&client, &server) {
                let failure = Failure {
                    client: client.clone(),
                    server: server.clone(),
                    alert: pair.server.alert(),
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
