//! [`RecordFlood`]: a peer on an established TLS 1.3 connection sending
//! the smallest records there are (one byte of data each), each after a
//! KeyUpdate ([`Hostile::KeyUpdateFlood`]: no limit on consecutive updates
//! then applies) or alone ([`Hostile::TinyRecords`]); and what writing
//! either costs the attacker ([`Hostile::KeyUpdateFloodSent`],
//! [`Hostile::TinyRecordsSent`]).

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError, Received};

use crate::common::error::{ensure, Context as _};
use crate::common::payload::payload;
use crate::paths::{Handshake, Hostile};
use crate::tls::key_update::{KeyUpdate, KEY_UPDATE_RECORD_LEN};

/// One-byte records in one flood, and KeyUpdates in a KeyUpdate flood.
pub const UPDATES: usize = 32;

/// Bytes on the wire of a one-byte TLS 1.3 AES-GCM record: header, byte,
/// inner content type, tag.
const ONE_BYTE_RECORD_LEN: usize = 5 + 1 + 1 + 16;

/// The KeyUpdate flood on the wire: each KeyUpdate record and its one-byte
/// record.
pub const FLOOD_LEN: usize = UPDATES * (KEY_UPDATE_RECORD_LEN + ONE_BYTE_RECORD_LEN);

/// The flood of one-byte records alone on the wire.
pub const TINY_LEN: usize = UPDATES * ONE_BYTE_RECORD_LEN;

/// [`UPDATES`] records of one byte of application data from a client of
/// library `L`, each after a KeyUpdate when `updates`, read by its server;
/// or, when `sent`, written by its client.
///
/// **Counted:** when `sent`, the client's calls writing the flood (for
/// each one-byte record, its sealing; before it, each KeyUpdate message and
/// the client's next keys): what the attacker pays. Otherwise the server's reads ([`crate::tls::Tls::server_receive`]) until it has
/// the [`UPDATES`] bytes: for each one-byte record, its opening; before it,
/// for each KeyUpdate, the derivation of the client's next traffic secret,
/// key and IV (rustls and OpenSSL clients send update_requested, which
/// their servers note, or queue an answer to, each time).
///
/// **Not counted:** configs (`setup`: [`Handshake::RSA4096`]'s, as the
/// key_update path's); the handshake; and the other side's part: the
/// client writing the flood when the server's reads are counted
/// (`prepare`), the server reading it when the client's writes are (`check`,
/// natively only).
///
/// **Check:** the flood was [`FLOOD_LEN`] bytes with the updates (a
/// KeyUpdate record and a one-byte record, [`UPDATES`] times) and
/// [`TINY_LEN`] without (less than half), the server read all of it, and
/// every byte arrived exact: with the updates, each was sealed under the
/// next generation of the client's keys, so a server that skipped an update
/// could not have opened it.
pub struct RecordFlood<L> {
    /// Whether the client updates its keys before each byte.
    pub updates: bool,
    /// Whether the run is the client writing the flood (the attacker's
    /// cost), not the server reading it.
    pub sent: bool,
    library: PhantomData<fn() -> L>,
}

impl<L> RecordFlood<L> {
    /// The harness of `input`: the KeyUpdate floods update, the others do
    /// not; the `Sent` inputs count the client's writing.
    pub const fn new(input: Hostile) -> RecordFlood<L> {
        RecordFlood {
            updates: matches!(input, Hostile::KeyUpdateFlood | Hostile::KeyUpdateFloodSent),
            sent: matches!(
                input,
                Hostile::KeyUpdateFloodSent | Hostile::TinyRecordsSent
            ),
            library: PhantomData,
        }
    }

    /// The client's side of the flood: [`UPDATES`] one-byte records of
    /// `payload`, each after a KeyUpdate when `updates`.
    fn write_flood(&self, pair: &mut L::Pair, payload: &[u8]) -> Result<(), HarnessError>
    where
        L: KeyUpdate,
    {
        for byte in payload[..UPDATES].chunks(1) {
            if self.updates {
                L::update_client(pair).context("the client's KeyUpdate")?;
            }
            L::client_send(pair, byte).context("the client's one-byte record")?;
        }
        Ok(())
    }

    /// The server's side: reads until it has the [`UPDATES`] bytes.
    fn read_flood(pair: &mut L::Pair, received: &mut [u8]) -> Result<(), HarnessError>
    where
        L: KeyUpdate,
    {
        let mut got = 0;
        while got < UPDATES {
            let n = L::server_receive(pair, &mut received[got..])
                .map_err(|e| format!("the server failed on the key-update flood: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the server read {got} of the flood's {UPDATES} bytes, then nothing"
                )
                .into());
            }
            got += n;
        }
        Ok(())
    }

    /// The flood's bytes on the wire.
    const fn expected_len(&self) -> usize {
        if self.updates {
            FLOOD_LEN
        } else {
            TINY_LEN
        }
    }
}

/// What the runs share.
pub struct FloodSetup<C> {
    configs: C,
    payload: Vec<u8>,
}

/// An established pair with the flood waiting at the server (or, for the
/// client's side, not yet written); after the run, with the flood's length
/// and what the server read.
pub struct Flooded<P> {
    pair: P,
    flood_len: usize,
    received: Vec<u8>,
}

impl<L: KeyUpdate> Harness for RecordFlood<L> {
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
        if !self.sent {
            self.write_flood(&mut pair, &setup.payload)?;
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
        setup: &FloodSetup<L::Configs>,
        mut flooded: Flooded<L::Pair>,
    ) -> Result<Flooded<L::Pair>, HarnessError> {
        if self.sent {
            self.write_flood(&mut flooded.pair, &setup.payload)?;
            flooded.flood_len = L::in_flight(&flooded.pair).0;
        } else {
            Self::read_flood(&mut flooded.pair, &mut flooded.received)?;
        }
        Ok(flooded)
    }

    /// The flood as written: [`UPDATES`] one-byte records, after as many
    /// KeyUpdate messages when `updates`, each message a record of its own.
    fn received(&self, _: &FloodSetup<L::Configs>, flooded: &Flooded<L::Pair>) -> Option<Received> {
        if self.sent {
            return None;
        }
        let records = if self.updates { 2 } else { 1 } * UPDATES as u64;
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
        ensure(flooded.flood_len == self.expected_len(), || {
            format!(
                "the flood was {} bytes, not {UPDATES} one-byte records{} ({})",
                flooded.flood_len,
                if self.updates {
                    " each after a KeyUpdate record"
                } else {
                    " alone"
                },
                self.expected_len()
            )
        })?;
        if self.sent {
            // The counted run wrote the flood (its length says so, the
            // updates included); that a flood written so is read exact is
            // proved on a pair of its own, natively (the output is not the
            // check's to change).
            let configs = &setup.configs;
            let mut pair = L::handshake(configs, L::fresh(configs)?)?;
            self.write_flood(&mut pair, &setup.payload)?;
            let mut received = vec![0; UPDATES];
            Self::read_flood(&mut pair, &mut received)?;
            return ensure(received == setup.payload[..UPDATES], || {
                "the flood's bytes arrived changed".into()
            });
        }
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
