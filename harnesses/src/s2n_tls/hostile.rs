//! s2n-tls's server under a hostile client's flight ([`Victim`]).

use std::task::Poll;

use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::transport::{Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::hostile::{ServeError, Victim};

impl Victim for S2nTls {
    fn attacker(pair: &Pair) -> &Endpoint {
        &pair.client_end
    }

    /// The server's `poll_negotiate` until it has read the whole flight and
    /// waits for more (s2n-tls writes its answer inside the call), or
    /// fails.
    fn serve(pair: &mut Pair) -> Result<(), ServeError> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            match pair.server.poll_negotiate() {
                Poll::Pending if !pair.server_end.has_incoming() => return Ok(()),
                Poll::Pending => {}
                Poll::Ready(Ok(_)) => return Err(ServeError::Finished),
                Poll::Ready(Err(error)) => return Err(ServeError::Library(error.to_string())),
            }
        }
        Err(ServeError::Unread {
            calls: MAX_HANDSHAKE_ROUNDS,
        })
    }
}
