//! [`SerializeRoundTrip`]: an established connection serialized and
//! deserialized into a fresh one, both sides.

use std::cell::RefCell;
use std::task::Poll;

use regress_measure::{Harness, HarnessError};
use s2n_tls::enums::{SerializationVersion, Version};

use super::check::check_handshake;
use super::config::{base_builder, policy, AcceptHost, Configs, PINNED_POLICY};
use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{CipherSuite, Seen};
use crate::paths::Handshake;
use crate::tls::Tls as _;

/// Plaintext bytes of the record each way that proves a deserialized pair
/// works.
const PROOF_BYTES: usize = 64;

/// The configs of [`Handshake::RSA4096`], both with serialization version
/// 1 (`s2n_config_set_serialization_version`), without which s2n-tls
/// refuses to serialize a connection.
fn serializing_configs() -> Result<Configs, HarnessError> {
    let profile = Handshake::RSA4096.profile();
    let mut configs = Configs::new(&profile)?;
    let pinned = policy(PINNED_POLICY)?;
    let pki = profile.pki;
    let mut client = base_builder(&pinned)?;
    client
        .trust_pem(pki.ca_pem())
        .context("trusting the test CA")?
        .set_verify_host_callback(AcceptHost::LOCALHOST)
        .context("setting the verify-host callback")?
        .set_serialization_version(SerializationVersion::V1)
        .context("allowing the client to serialize")?;
    let mut server = base_builder(&pinned)?;
    server
        .load_pem(pki.server_chain_pem(), pki.server_key_pem())
        .context("loading the server chain and key")?
        .set_serialization_version(SerializationVersion::V1)
        .context("allowing the server to serialize")?;
    configs.client = client.build().context("building the client config")?;
    configs.server = server.build().context("building the server config")?;
    Ok(configs)
}

/// An established TLS 1.3 connection (the configs of
/// [`Handshake::RSA4096`] with serialization allowed) handed over to fresh
/// connections: each side serialized, then deserialized into a new
/// connection of the same config, as a server hands a connection to
/// another process or host.
///
/// **Counted:** for the client and then the server,
/// `s2n_connection_serialize` into a buffer (the version, the suite, both
/// sequence numbers, the fragment length, and the client and server
/// application traffic secrets and the resumption master secret: 126 bytes
/// with SHA-256), which then closes the old connection and wipes its keys;
/// and `s2n_connection_deserialize` into a fresh connection (parsing the
/// buffer back, deriving both directions' record keys and IVs from the
/// traffic secrets, restoring the sequence numbers).
///
/// **Not counted:** configs (`setup`); the handshake and its check, one
/// 64-byte record each way (so the sequence numbers the new connections
/// must carry on from are not zero), the fresh connections, wired to a fresh transport, and the buffers sized by
/// `serialization_length` (`prepare`). Freeing the old connections.
///
/// **Check:** a 64-byte record each way over the deserialized pair arrives
/// byte-exact (so the new client and server hold the same keys and
/// sequence numbers the old ones had), both report TLS 1.3 and the pinned
/// suite, and the old connections are left unusable as s2n-tls documents
/// (a send fails). A fresh pair that was not deserialized fails it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SerializeRoundTrip;

/// An established pair, the fresh pair it goes to, and the buffers. The
/// pairs are in cells so the check can send over them.
#[derive(Debug)]
pub struct HandOver {
    old: RefCell<Pair>,
    new: RefCell<Pair>,
    client_state: Vec<u8>,
    server_state: Vec<u8>,
}

/// One `PROOF_BYTES` record each way over `pair`, byte-exact.
fn exchange(pair: &mut Pair) -> Result<(), HarnessError> {
    let payload = crate::common::payload::payload();
    let bytes = &payload[..PROOF_BYTES];
    let mut out = [0; PROOF_BYTES];
    S2nTls::client_send(pair, bytes)?;
    receive_all(&mut out, |out| S2nTls::server_receive(pair, out))?;
    ensure(out == bytes, || {
        "the client's record arrived changed".into()
    })?;
    let mut sent = 0;
    while sent < bytes.len() {
        match pair.server.poll_send(&bytes[sent..]) {
            Poll::Ready(Ok(n)) if n > 0 => sent += n,
            Poll::Ready(Err(e)) => return Err(e).context("server send failed"),
            _ => return Err(format!("server send stalled after {sent} bytes").into()),
        }
    }
    let mut out = [0; PROOF_BYTES];
    receive_all(&mut out, |out| match pair.client.poll_recv(out) {
        Poll::Ready(Ok(n)) => Ok(n),
        Poll::Ready(Err(e)) => Err(e).context("client receive failed"),
        Poll::Pending => Ok(0),
    })?;
    ensure(out == bytes, || {
        "the server's record arrived changed".into()
    })
}

/// Reads with `read` until `out` is full.
fn receive_all(
    out: &mut [u8],
    mut read: impl FnMut(&mut [u8]) -> Result<usize, HarnessError>,
) -> Result<(), HarnessError> {
    let mut got = 0;
    while got < out.len() {
        let n = read(&mut out[got..])?;
        ensure(n > 0, || {
            format!("read {got} of {} bytes, then nothing", out.len())
        })?;
        got += n;
    }
    Ok(())
}

impl Harness for SerializeRoundTrip {
    type Setup = Configs;
    type Input = HandOver;
    type Output = HandOver;

    fn setup(&self) -> Result<Configs, HarnessError> {
        serializing_configs()
    }

    fn prepare(&self, configs: &Configs) -> Result<HandOver, HarnessError> {
        let mut old = Pair::new(configs)?;
        old.handshake()
            .context("the handshake before serializing")?;
        check_handshake(&old, &configs.profile, &Handshake::RSA4096.expected())?;
        exchange(&mut old).context("a record each way before serializing")?;
        let client_len = old
            .client
            .serialization_length()
            .context("the client's serialized length")?;
        let server_len = old
            .server
            .serialization_length()
            .context("the server's serialized length")?;
        Ok(HandOver {
            old: RefCell::new(old),
            new: RefCell::new(Pair::new(configs)?),
            client_state: vec![0; client_len],
            server_state: vec![0; server_len],
        })
    }

    fn run(&self, _: &Configs, mut hand: HandOver) -> Result<HandOver, HarnessError> {
        let (old, new) = (hand.old.get_mut(), hand.new.get_mut());
        old.client
            .serialize(&mut hand.client_state)
            .context("serializing the client")?;
        new.client
            .deserialize(&hand.client_state)
            .context("deserializing the client")?;
        old.server
            .serialize(&mut hand.server_state)
            .context("serializing the server")?;
        new.server
            .deserialize(&hand.server_state)
            .context("deserializing the server")?;
        Ok(hand)
    }

    fn check(&self, _: &Configs, hand: &HandOver) -> Result<(), HarnessError> {
        let mut new = hand.new.try_borrow_mut()?;
        for (side, conn) in [("client", &new.client), ("server", &new.server)] {
            let version = conn.actual_protocol_version();
            let suite = conn.cipher_suite();
            ensure(
                matches!(version, Ok(Version::TLS13))
                    && suite.as_ref().ok().map(|name| CipherSuite::from_name(name))
                        == Some(Seen::Is(Handshake::RSA4096.suite())),
                || format!("the deserialized {side} reports {version:?} with {suite:?}"),
            )?;
        }
        exchange(&mut new).context("a record each way over the deserialized pair")?;
        let mut old = hand.old.try_borrow_mut()?;
        let old = &mut *old;
        for (side, conn) in [("client", &mut old.client), ("server", &mut old.server)] {
            ensure(matches!(conn.poll_send(b"x"), Poll::Ready(Err(_))), || {
                format!("the serialized {side} still sends")
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh pair that was not deserialized fails the check (it has no
    /// keys to send with); so does an old pair that was never serialized
    /// (with a working pair of its own handshake in place of the new one).
    #[test]
    fn check_fails_without_the_round_trip() {
        let harness = SerializeRoundTrip;
        let configs = harness.setup().expect("setup");
        regress_measure::harness::run_natively(&harness).expect("the path");

        let hand = harness.prepare(&configs).expect("prepare");
        // What the documentation says is serialized: the format (8 bytes),
        // version (2), suite (2), two sequence numbers (8 each), fragment
        // length (2) and three SHA-256 secrets.
        let documented = 8 + 2 + 2 + 8 + 8 + 2 + 3 * 32;
        assert_eq!(
            (hand.client_state.len(), hand.server_state.len()),
            (documented, documented)
        );
        let error = harness
            .check(&configs, &hand)
            .expect_err("not deserialized");
        assert!(error.to_string().contains("deserialized client"), "{error}");

        let mut hand = harness.prepare(&configs).expect("prepare");
        let mut other = Pair::new(&configs).expect("pair");
        other.handshake().expect("another handshake");
        *hand.new.get_mut() = other;
        let error = harness
            .check(&configs, &hand)
            .expect_err("never serialized");
        assert!(error.to_string().contains("still sends"), "{error}");
    }
}
