//! s2n-tls's key updates, as the shared [`KeyUpdates`] harness drives them.
//!
//! s2n-tls 0.3.47's `Connection::request_key_update` accepts only
//! `KeyUpdateNotRequested` (it fails with any other value), so an s2n-tls
//! client cannot ask its peer to update: both sides update their own
//! sending keys, the client first, the server after it has read the
//! client's KeyUpdate. A KeyUpdate is sent with the side's next
//! `poll_send`.

use std::task::Poll;

use regress_measure::HarnessError;
use s2n_tls::enums::PeerKeyUpdate;

use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::tls::key_update::KeyUpdate;
#[cfg(doc)]
use crate::tls::key_update::KeyUpdates;

impl KeyUpdate for S2nTls {
    /// `request_key_update(KeyUpdateNotRequested)` on the client.
    fn update_client(pair: &mut Pair) -> Result<(), HarnessError> {
        pair.client
            .request_key_update(PeerKeyUpdate::KeyUpdateNotRequested)
            .context("the client requesting a key update")?;
        Ok(())
    }

    /// `request_key_update(KeyUpdateNotRequested)` on the server.
    fn update_server(pair: &mut Pair) -> Result<(), HarnessError> {
        pair.server
            .request_key_update(PeerKeyUpdate::KeyUpdateNotRequested)
            .context("the server requesting a key update")?;
        Ok(())
    }

    /// `poll_send` until all of `bytes` is written (s2n-tls sends each
    /// write at once, its pending KeyUpdate first).
    fn server_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        let mut sent = 0;
        while sent < bytes.len() {
            match pair.server.poll_send(&bytes[sent..]) {
                Poll::Ready(Ok(n)) if n > 0 => sent += n,
                Poll::Ready(Ok(_)) | Poll::Pending => {
                    return Err(format!("server send stalled after {sent} bytes").into())
                }
                Poll::Ready(Err(e)) => return Err(e).context("server send failed"),
            }
        }
        Ok(())
    }

    /// One `poll_recv`: what arrived, or 0 when it would block.
    fn client_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        match pair.client.poll_recv(out) {
            Poll::Ready(Ok(n)) => Ok(n),
            Poll::Ready(Err(e)) => Err(e).context("client receive failed"),
            Poll::Pending => Ok(0),
        }
    }

    /// `s2n_connection_get_key_update_counts` (`key_update_counts`): the
    /// times s2n-tls itself changed each side's sending and receiving keys.
    /// It counts in `s2n_update_application_traffic_keys`, the function
    /// that derives the next traffic secret and installs its key and IV, so
    /// a count of one is one real change of keys in that direction.
    fn check_updates(pair: Pair, updates: u8, _: i32) -> Result<(), HarnessError> {
        for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
            let counts = conn
                .key_update_counts()
                .map_err(|e| format!("reading the {side}'s key-update counts: {e}"))?;
            let seen = (counts.send_key_updates, counts.recv_key_updates);
            ensure(seen == (updates, updates), || {
                format!(
                    "the {side} updated its sending and receiving keys {seen:?} times, \
                     not {updates} each"
                )
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use regress_measure::Harness as _;

    use super::*;
    use crate::tls::key_update::{self, KeyUpdates, FLIGHT_LEN};

    #[test]
    fn check_fails_without_an_update() {
        key_update::check_fails_without_an_update::<S2nTls>();
    }

    /// s2n-tls's counts fail a connection that did not update, even with
    /// the flights of one that did.
    #[test]
    fn counts_fail_without_an_update() {
        let harness = KeyUpdates::<S2nTls>::new();
        let setup = harness.setup().expect("setup");
        let plain = key_update::without_update(&harness, &setup, (FLIGHT_LEN, FLIGHT_LEN));
        let error = harness.check(&setup, &plain).expect_err("no update");
        assert!(error.to_string().contains("updated its sending"), "{error}");
        // Only the client updated: its own counts say so.
        let mut pair = key_update::take_pair(&key_update::without_update(&harness, &setup, (0, 0)));
        S2nTls::update_client(&mut pair).expect("update");
        <S2nTls as crate::tls::Tls>::client_send(&mut pair, b"one").expect("send");
        let mut out = [0; 3];
        S2nTls::server_receive_all(&mut pair, &mut out);
        let error = S2nTls::check_updates(pair, 1, 0).expect_err("one way only");
        assert!(
            error
                .to_string()
                .contains("client updated its sending and receiving keys (1, 0)"),
            "{error}"
        );
    }

    /// The s2n-tls client cannot request its peer's update (why its server
    /// updates on its own).
    #[test]
    fn the_client_cannot_request_an_update() {
        let harness = KeyUpdates::<S2nTls>::new();
        let setup = harness.setup().expect("setup");
        let updated = harness.prepare(&setup).expect("prepare");
        let mut pair = key_update::take_pair(&updated);
        assert!(pair
            .client
            .request_key_update(PeerKeyUpdate::KeyUpdatedRequested)
            .is_err());
    }

    impl S2nTls {
        /// The server reads until `out` is full.
        fn server_receive_all(pair: &mut Pair, out: &mut [u8]) {
            let mut got = 0;
            while got < out.len() {
                let n = <S2nTls as crate::tls::Tls>::server_receive(pair, &mut out[got..])
                    .expect("read");
                assert!(n > 0, "stalled");
                got += n;
            }
        }
    }
}
