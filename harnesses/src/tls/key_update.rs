//! [`KeyUpdates`]: one TLS 1.3 KeyUpdate each way on an established
//! connection of any TLS library that implements [`KeyUpdate`].

use std::cell::Cell;
use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError};

use super::Tls;
use crate::common::error::{ensure, Context as _};
use crate::common::payload::payload;
use crate::common::transport::RECORD_HEADER_LEN;
use crate::paths::Handshake;

/// Plaintext bytes of the application record each side sends after its
/// KeyUpdate: a small request or response, so that the update, not the
/// record, is most of the count.
pub const KEY_UPDATE_RECORD_BYTES: usize = 64;

/// Bytes a TLS 1.3 AES-GCM record adds to its plaintext: the header, the
/// inner content type and the tag.
const RECORD_OVERHEAD: usize = RECORD_HEADER_LEN + 1 + 16;

/// Bytes of one encrypted KeyUpdate record on the wire: the 4-byte
/// handshake header and the 1-byte request, plus [`RECORD_OVERHEAD`]. No
/// other TLS 1.3 message has a 5-byte plaintext, and an application record
/// of 5 bytes would have reached the reader as data.
pub const KEY_UPDATE_RECORD_LEN: usize = 4 + 1 + RECORD_OVERHEAD;

/// What each side's flight of the run must be: its KeyUpdate record, then
/// its application record.
pub const FLIGHT_LEN: usize = KEY_UPDATE_RECORD_LEN + KEY_UPDATE_RECORD_BYTES + RECORD_OVERHEAD;

/// A TLS library's key updates, as [`KeyUpdates`] drives them.
pub trait KeyUpdate: Tls {
    /// Configs whose connections can report what [`KeyUpdate::check_updates`]
    /// reads (rustls: secret extraction on); otherwise [`Tls::configs`].
    fn key_update_configs(profile: &crate::paths::Profile) -> Result<Self::Configs, HarnessError> {
        Self::configs(profile)
    }

    /// The client's side of the update: it updates its sending keys, and
    /// where the library can, asks the server to update its own
    /// (update_requested). The KeyUpdate goes out with the client's next
    /// write.
    fn update_client(pair: &mut Self::Pair) -> Result<(), HarnessError>;

    /// The server's side, after it has read the client's KeyUpdate: a
    /// library that answered an update_requested on its own does nothing;
    /// s2n-tls, whose client cannot request, updates its sending keys here.
    /// The KeyUpdate goes out with the server's next write.
    fn update_server(pair: &mut Self::Pair) -> Result<(), HarnessError>;

    /// The server writes all of `bytes` as application data and hands its
    /// records (its KeyUpdate first, if one is due) to the transport.
    fn server_send(pair: &mut Self::Pair, bytes: &[u8]) -> Result<(), HarnessError>;

    /// The client reads what the server sent into `out`; returns the bytes
    /// read (0 when nothing is readable yet).
    fn client_receive(pair: &mut Self::Pair, out: &mut [u8]) -> Result<usize, HarnessError>;

    /// What the library says about the server right after it has read the
    /// client's record, noted inside the run for
    /// [`KeyUpdate::check_updates`] (OpenSSL: the server's pending
    /// key-update type, which only a received update_requested sets); 0
    /// where nothing is noted.
    fn server_state(_pair: &Self::Pair) -> i32 {
        0
    }

    /// What the library itself reports about the keys: both sides updated
    /// their sending and their receiving keys exactly `updates` times since
    /// the handshake, given what [`KeyUpdate::server_state`] noted. Takes
    /// the pair: a library may only report it by taking the connections
    /// apart (rustls's secret extraction).
    fn check_updates(pair: Self::Pair, updates: u8, server_state: i32) -> Result<(), HarnessError>;
}

/// One KeyUpdate each way on an established TLS 1.3 connection of library
/// `L` ([`crate::paths::Path::KeyUpdate`]), on the configs of
/// [`Handshake::RSA4096`] (TLS_AES_128_GCM_SHA256, secp256r1).
///
/// **Counted:** the client's update ([`KeyUpdate::update_client`]) and
/// write of a 64-byte record, which sends the KeyUpdate under the old keys
/// and the record under the new ones; the server's reads until it has the
/// 64 bytes (it processes the KeyUpdate, derives the client's next traffic
/// secret and keys, and decrypts the record with them); the server's update
/// ([`KeyUpdate::update_server`]) and write of its own 64-byte record (its
/// KeyUpdate, then the record under its new keys); and the client's reads
/// of both. Each side thus derives two next-generation traffic secrets and
/// key pairs (HKDF-Expand-Label "traffic upd", "key", "iv") and seals and
/// opens four records. rustls and OpenSSL clients send update_requested
/// and their servers answer; the s2n-tls client can only send
/// update_not_requested (its bindings refuse a request), so its server
/// updates on its own: the same two messages but for the request byte, and
/// the same derivations. The harness's own share: two reads of the
/// transport's byte counts, and for OpenSSL one `SSL_get_key_update_type`
/// call (a field read) after the server's read.
///
/// **Not counted:** configs (`setup`); the handshake and its check, and
/// one 64-byte record each way under the first keys, so the connection has
/// carried data before it updates (`prepare`).
///
/// **Check:** both records arrived byte-exact; each side's flight was
/// exactly one KeyUpdate record ([`KEY_UPDATE_RECORD_LEN`] bytes) and one
/// 64-byte record ([`FLIGHT_LEN`] in all: without an update it is 86
/// bytes); nothing is left in the transport; the pinned parameters are
/// unchanged; and what the library reports about its keys
/// ([`KeyUpdate::check_updates`]: s2n-tls's key-update counts, rustls's
/// record sequence numbers, which restart only with new keys, OpenSSL's
/// server's pending update right after it read the client's KeyUpdate,
/// which only a received update_requested sets). A connection that did not
/// update fails it.
pub struct KeyUpdates<L> {
    library: PhantomData<fn() -> L>,
}

impl<L> KeyUpdates<L> {
    /// The harness.
    pub const fn new() -> KeyUpdates<L> {
        KeyUpdates {
            library: PhantomData,
        }
    }
}

impl<L> Default for KeyUpdates<L> {
    fn default() -> Self {
        KeyUpdates::new()
    }
}

/// What the runs share: configs and the record's payload.
pub struct KeyUpdateSetup<L: Tls> {
    pub(crate) configs: L::Configs,
    payload: Vec<u8>,
}

/// An established pair and the receive buffers: a run's input and, filled,
/// its output.
pub struct Updated<L: Tls> {
    /// Taken by the check (a library may report only by taking it apart).
    pair: Cell<Option<L::Pair>>,
    to_server: Vec<u8>,
    to_client: Vec<u8>,
    /// Bytes in flight after each side's write: `(client's, server's)`.
    flights: (usize, usize),
    /// [`KeyUpdate::server_state`] after the server's read.
    server_state: i32,
}

impl<L: Tls> Updated<L> {
    fn pair_mut(&mut self) -> Result<&mut L::Pair, HarnessError> {
        self.pair
            .get_mut()
            .as_mut()
            .ok_or_else(|| "the connection was already checked".into())
    }
}

/// Reads with `receive` into `out` until it is full.
fn receive_all<P>(
    pair: &mut P,
    out: &mut [u8],
    receive: impl Fn(&mut P, &mut [u8]) -> Result<usize, HarnessError>,
) -> Result<(), HarnessError> {
    let mut got = 0;
    while got < out.len() {
        let n = receive(pair, &mut out[got..])?;
        if n == 0 {
            return Err(format!("read {got} of {} bytes, then nothing", out.len()).into());
        }
        got += n;
    }
    Ok(())
}

impl<L: KeyUpdate> KeyUpdates<L> {
    /// One record each way under the current keys (outside the count).
    fn exchange(setup: &KeyUpdateSetup<L>, updated: &mut Updated<L>) -> Result<(), HarnessError> {
        let bytes = &setup.payload[..KEY_UPDATE_RECORD_BYTES];
        let mut to_server = [0; KEY_UPDATE_RECORD_BYTES];
        let mut to_client = [0; KEY_UPDATE_RECORD_BYTES];
        let pair = updated.pair_mut()?;
        L::client_send(pair, bytes)?;
        receive_all(pair, &mut to_server, L::server_receive)?;
        L::server_send(pair, bytes)?;
        receive_all(pair, &mut to_client, L::client_receive)?;
        ensure(to_server == bytes && to_client == bytes, || {
            "a record before the update arrived changed".into()
        })
    }

    /// The checks of [`KeyUpdates`], with `updates` key updates expected.
    fn check_with(
        setup: &KeyUpdateSetup<L>,
        updated: &Updated<L>,
        updates: u8,
    ) -> Result<(), HarnessError> {
        let pair = updated
            .pair
            .take()
            .ok_or("the connection was already checked")?;
        let bytes = &setup.payload[..KEY_UPDATE_RECORD_BYTES];
        ensure(updated.to_server == bytes, || {
            "the client's record arrived changed".into()
        })?;
        ensure(updated.to_client == bytes, || {
            "the server's record arrived changed".into()
        })?;
        let flight = if updates == 0 {
            FLIGHT_LEN - KEY_UPDATE_RECORD_LEN
        } else {
            FLIGHT_LEN
        };
        ensure(updated.flights == (flight, flight), || {
            format!(
                "flights of {:?} bytes (client's, server's): a KeyUpdate record and a \
                 {KEY_UPDATE_RECORD_BYTES}-byte record each are {flight} bytes",
                updated.flights
            )
        })?;
        let in_flight = L::in_flight(&pair);
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the updates: {in_flight:?}")
        })?;
        let expected = Handshake::RSA4096.expected();
        expected.check(&L::negotiated(&setup.configs, &pair, false)?)?;
        L::check_updates(pair, updates, updated.server_state)
    }
}

impl<L: KeyUpdate> Harness for KeyUpdates<L> {
    type Setup = KeyUpdateSetup<L>;
    type Input = Updated<L>;
    type Output = Updated<L>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<KeyUpdateSetup<L>, HarnessError> {
        Ok(KeyUpdateSetup {
            configs: L::key_update_configs(&Handshake::RSA4096.profile())?,
            payload: payload(),
        })
    }

    fn prepare(&self, setup: &KeyUpdateSetup<L>) -> Result<Updated<L>, HarnessError> {
        let configs = &setup.configs;
        let pair = L::handshake(configs, L::fresh(configs)?)
            .context("the handshake before the key updates")?;
        L::check(configs, &pair, &Handshake::RSA4096.expected())?;
        let mut updated = Updated {
            pair: Cell::new(Some(pair)),
            to_server: vec![0; KEY_UPDATE_RECORD_BYTES],
            to_client: vec![0; KEY_UPDATE_RECORD_BYTES],
            flights: (0, 0),
            server_state: 0,
        };
        KeyUpdates::exchange(setup, &mut updated)?;
        Ok(updated)
    }

    fn run(
        &self,
        setup: &KeyUpdateSetup<L>,
        mut updated: Updated<L>,
    ) -> Result<Updated<L>, HarnessError> {
        let bytes = &setup.payload[..KEY_UPDATE_RECORD_BYTES];
        let Some(pair) = updated.pair.get_mut() else {
            return Err("no connection to update".into());
        };
        L::update_client(pair)?;
        L::client_send(pair, bytes)?;
        updated.flights.0 = L::in_flight(pair).0;
        receive_all(pair, &mut updated.to_server, L::server_receive)?;
        updated.server_state = L::server_state(pair);
        L::update_server(pair)?;
        L::server_send(pair, bytes)?;
        updated.flights.1 = L::in_flight(pair).1;
        receive_all(pair, &mut updated.to_client, L::client_receive)?;
        Ok(updated)
    }

    fn check(&self, setup: &KeyUpdateSetup<L>, updated: &Updated<L>) -> Result<(), HarnessError> {
        KeyUpdates::check_with(setup, updated, 1)
    }
}

/// A prepared connection that then exchanged one record each way without
/// updating, as a run's output would look with `flights` noted: what the
/// negative tests check.
#[cfg(test)]
pub fn without_update<L: KeyUpdate>(
    harness: &KeyUpdates<L>,
    setup: &KeyUpdateSetup<L>,
    flights: (usize, usize),
) -> Updated<L> {
    let mut plain = harness.prepare(setup).expect("prepare");
    KeyUpdates::exchange(setup, &mut plain).expect("records without an update");
    plain
        .to_server
        .copy_from_slice(&setup.payload[..KEY_UPDATE_RECORD_BYTES]);
    plain
        .to_client
        .copy_from_slice(&setup.payload[..KEY_UPDATE_RECORD_BYTES]);
    plain.flights = flights;
    plain.server_state = L::server_state(plain.pair.get_mut().as_ref().expect("a pair"));
    plain
}

/// The pair of a prepared or run connection (for tests of a library's
/// [`KeyUpdate::check_updates`]).
#[cfg(test)]
pub fn take_pair<L: KeyUpdate>(updated: &Updated<L>) -> L::Pair {
    updated.pair.take().expect("a pair")
}

/// Tests every library's [`KeyUpdate`] runs: a run passes the check; the
/// same exchange without the updates fails it on its flights, and passes
/// the check that expects no update (so the failure is the missing
/// update's).
#[cfg(test)]
pub fn check_fails_without_an_update<L: KeyUpdate>() {
    let harness = KeyUpdates::<L>::new();
    let setup = harness.setup().expect("setup");
    for _ in 0..2 {
        let updated = harness.prepare(&setup).expect("prepare");
        let updated = harness.run(&setup, updated).expect("run");
        harness.check(&setup, &updated).expect("updated");
        assert!(harness.check(&setup, &updated).is_err(), "checked twice");
    }
    let plain_flight = FLIGHT_LEN - KEY_UPDATE_RECORD_LEN;
    let plain = without_update(&harness, &setup, (plain_flight, plain_flight));
    let error = harness
        .check(&setup, &plain)
        .expect_err("no update happened");
    assert!(error.to_string().contains("flights of"), "{error}");
    let plain = without_update(&harness, &setup, (plain_flight, plain_flight));
    KeyUpdates::check_with(&setup, &plain, 0).expect("a connection that never updated");
}
