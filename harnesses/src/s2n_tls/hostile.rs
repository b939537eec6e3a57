//! s2n-tls's server under a hostile client's flight ([`Victim`]).

use std::task::Poll;

use regress_measure::{HarnessError, Received};
use s2n_tls::connection::Connection;

use super::config::Configs;
use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pki::ClientChain;
use crate::common::transport::{Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::paths::Hostile;
use crate::tls::hostile::client_chain::client_flight_size;
use crate::tls::hostile::{Refusal, ServeError, Victim};

/// `connection`'s `poll_negotiate` until it is done (`true`), or waits
/// with nothing left to read at `end` (`false`), or fails.
fn negotiate(connection: &mut Connection, end: &Endpoint) -> Result<bool, HarnessError> {
    for _ in 0..MAX_HANDSHAKE_ROUNDS {
        match connection.poll_negotiate() {
            Poll::Ready(Ok(_)) => return Ok(true),
            Poll::Ready(Err(error)) => return Err(error.into()),
            Poll::Pending if !end.has_incoming() => return Ok(false),
            Poll::Pending => {}
        }
    }
    Err(format!("still negotiating after {MAX_HANDSHAKE_ROUNDS} calls").into())
}

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

    /// s2n-tls refuses none of the invalid key shares with an alert: it
    /// writes its ServerHello before it computes the shared secret of the
    /// zero X25519 share, asks for another share in place of the point off
    /// the curve, and fails silently on the bad ML-KEM key.
    fn refusal(input: Hostile) -> Refusal {
        match input {
            Hostile::ZeroShare => Refusal::HelloThenFailure,
            Hostile::OffCurveShare => Refusal::RetrySameGroup,
            Hostile::BadMlKemShare => Refusal::Silence,
            _ => Refusal::Alert,
        }
    }

    /// s2n-tls reads at most 7 certificates of a peer's chain
    /// (`DEFAULT_MAX_CHAIN_DEPTH` in `s2n_x509_validator.c`): the leaf, 5
    /// intermediates and the CA the client sends after them.
    const LONGEST_CLIENT_CHAIN: ClientChain = ClientChain::Five;

    /// The client's `poll_negotiate` (its ClientHello), the server's (its
    /// flight), the client's again (it reads the flight, writes its
    /// certificate, signature and Finished, and is done).
    fn client_flight(_: &Configs, mut pair: Pair) -> Result<(Pair, Received), HarnessError> {
        let hello = negotiate(&mut pair.client, &pair.client_end).context("the client's hello")?;
        let served =
            negotiate(&mut pair.server, &pair.server_end).context("the server's flight")?;
        let done =
            negotiate(&mut pair.client, &pair.client_end).context("the client's second flight")?;
        ensure(!hello && !served && done, || {
            format!(
                "the handshake's steps ended out of turn (client {hello}, server {served}, \
                 client {done}; only the last should be done)"
            )
        })?;
        let flight = client_flight_size(&pair.client_end)?;
        Ok((pair, flight))
    }

    /// The server's `poll_negotiate` until its handshake is done.
    fn finish(pair: &mut Pair) -> Result<(), HarnessError> {
        let done = negotiate(&mut pair.server, &pair.server_end)?;
        ensure(done, || {
            "the server waits for more after the client's flight".into()
        })
    }
}
