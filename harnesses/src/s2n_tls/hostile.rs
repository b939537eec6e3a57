//! s2n-tls's server under a hostile client's flight ([`Victim`]).

use std::task::Poll;

use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::transport::{Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::hostile::Victim;

impl Victim for S2nTls {
    fn attacker(pair: &Pair) -> &Endpoint {
        &pair.client_end
    }

    /// The server's `poll_negotiate` until it has read the whole flight and
    /// waits for more (s2n-tls writes its answer inside the call), or
    /// fails.
    fn serve(pair: &mut Pair) -> Result<(), String> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            match pair.server.poll_negotiate() {
                Poll::Pending if !pair.server_end.has_incoming() => return Ok(()),
                Poll::Pending => {}
                Poll::Ready(Ok(_)) => {
                    return Err("the server finished a handshake no client made".into())
                }
                Poll::Ready(Err(error)) => return Err(error.to_string()),
            }
        }
        Err(format!(
            "the server left the flight unread after {MAX_HANDSHAKE_ROUNDS} calls"
        ))
    }
}
