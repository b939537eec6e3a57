//! [`KeyUpdateFlood`]: a peer on an established TLS 1.3 connection sending
//! KeyUpdate after KeyUpdate, each followed by the smallest record there
//! is (one byte of data), so that no limit on consecutive updates applies.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError, Received};

use crate::common::error::{ensure, Context as _};
use crate::common::payload::payload;
use crate::paths::Handshake;
use crate::tls::key_update::{KeyUpdate, KEY_UPDATE_RECORD_LEN};

/// KeyUpdates in one flood.
pub const UPDATES: usize = 32;

/// Bytes on the wire of a one-byte TLS 1.3 AES-GCM record: header, byte,
/// inner content type, tag.
const ONE_BYTE_RECORD_LEN: usize = 5 + 1 + 1 + 16;

/// The flood on the wire: each KeyUpdate record and its one-byte record.
pub const FLOOD_LEN: usize = UPDATES * (KEY_UPDATE_RECORD_LEN + ONE_BYTE_RECORD_LEN);

/// [`UPDATES`] KeyUpdates from a client of library `L`, each followed by one
/// byte of application data, read by its server.
///
/// **Counted:** the server's reads ([`crate::tls::Tls::server_receive`]) until it has
/// the [`UPDATES`] bytes: for each KeyUpdate, the derivation of the
/// client's next traffic secret, key and IV, then the one-byte record
/// opened under them; rustls and OpenSSL clients send update_requested,
/// which their servers note (or queue an answer to) each time.
///
/// **Not counted:** configs (`setup`: [`Handshake::RSA4096`]'s, as the
/// key_update path's); the handshake, and the client writing the flood
/// (`prepare`), its own updates included: what the attacker pays is a
/// separate question this harness does not count.
///
/// **Check:** the flood was [`FLOOD_LEN`] bytes (a KeyUpdate record and a
/// one-byte record, [`UPDATES`] times: without the updates it is less than
/// half), the server read all of it, and every byte arrived exact: each was
/// sealed under the next generation of the client's keys, so a server that
/// skipped an update could not have opened it.
pub struct KeyUpdateFlood<L> {
    /// Whether the client updates its keys before each byte; false only in
    /// tests, to show that the check needs the updates.
    pub updates: bool,
    library: PhantomData<fn() -> L>,
}

impl<L> KeyUpdateFlood<L> {
    /// The harness.
    pub const fn new() -> KeyUpdateFlood<L> {
        KeyUpdateFlood {
            updates: true,
            library: PhantomData,
        }
    }
}

impl<L> Default for KeyUpdateFlood<L> {
    fn default() -> Self {
        KeyUpdateFlood::new()
    }
}

/// What the runs share.
pub struct FloodSetup<C> {
    configs: C,
    payload: Vec<u8>,
}

/// An established pair with the flood waiting at the server; after the
/// run, with what the server read.
pub struct Flooded<P> {
    pair: P,
    flood_len: usize,
    received: Vec<u8>,
}

impl<L: KeyUpdate> Harness for KeyUpdateFlood<L> {
    type Setup = FloodSetup<L::Configs>;
    type Input = Flooded<L::Pair>;
    type Output = Flooded<L::Pair>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<FloodSetup<L::Configs>, HarnessError> {
        Ok(FloodSetup {
            configs: L::key_update_configs(&Handshake::RSA4096.profile())?,
            payload: payload(),
        })
    }

    fn prepare(&self, setup: &FloodSetup<L::Configs>) -> Result<Flooded<L::Pair>, HarnessError> {
        let configs = &setup.configs;
        let mut pair =
            L::handshake(configs, L::fresh(configs)?).context("the handshake before the flood")?;
        L::check(configs, &pair, &Handshake::RSA4096.expected())?;
        for byte in setup.payload[..UPDATES].chunks(1) {
            if self.updates {
                L::update_client(&mut pair).context("the client's KeyUpdate")?;
            }
            L::client_send(&mut pair, byte).context("the client's one-byte record")?;
        }
        let flood_len = L::in_flight(&pair).0;
        Ok(Flooded {
            pair,
            flood_len,
            received: vec![0; UPDATES],
        })
    }

    fn run(
        &self,
        _: &FloodSetup<L::Configs>,
        mut flooded: Flooded<L::Pair>,
    ) -> Result<Flooded<L::Pair>, HarnessError> {
        let mut got = 0;
        while got < UPDATES {
            let n = L::server_receive(&mut flooded.pair, &mut flooded.received[got..])
                .map_err(|e| format!("the server failed on the key-update flood: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the server read {got} of the flood's {UPDATES} bytes, then nothing"
                )
                .into());
            }
            got += n;
        }
        Ok(flooded)
    }

    /// The flood as written: [`UPDATES`] KeyUpdate messages and as many
    /// one-byte records, each message a record of its own.
    fn received(&self, _: &FloodSetup<L::Configs>, flooded: &Flooded<L::Pair>) -> Option<Received> {
        let records = 2 * UPDATES as u64;
        Some(Received {
            bytes: flooded.flood_len as u64,
            records,
            messages: records,
        })
    }

    fn check(
        &self,
        setup: &FloodSetup<L::Configs>,
        flooded: &Flooded<L::Pair>,
    ) -> Result<(), HarnessError> {
        ensure(flooded.flood_len == FLOOD_LEN, || {
            format!(
                "the flood was {} bytes, not {UPDATES} KeyUpdate records and one-byte \
                 records ({FLOOD_LEN})",
                flooded.flood_len
            )
        })?;
        ensure(L::in_flight(&flooded.pair).0 == 0, || {
            format!(
                "the server left {} bytes of the flood unread",
                L::in_flight(&flooded.pair).0
            )
        })?;
        ensure(flooded.received == setup.payload[..UPDATES], || {
            "the flood's bytes arrived changed".into()
        })
    }
}
