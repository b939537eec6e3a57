//! The harness shapes every TLS library shares, and what a library provides
//! to fill them.
//!
//! A full handshake and a record transfer are measured the same way for
//! every library: the same split into setup, prepare, run and check, the
//! same payload, the same transport, the same pins. That shape exists once
//! ([`handshake::FullHandshake`], [`record::Records`]); each library
//! implements [`Tls`]: how it builds configs from a profile, makes a fresh
//! connection pair, handshakes, moves application data and reports what it
//! negotiated. What differs too much to share (session resumption, config
//! building, X.509) stays a harness of the library's own.

pub mod defaults;
pub mod handshake;
pub mod hostile;
pub mod key_update;
pub mod record;
pub mod rejected;
pub mod shutdown;
pub mod sides;
#[cfg(test)]
pub mod testing;

use regress_measure::parts::Side;
use regress_measure::HarnessError;

use crate::common::error::{ensure, Context as _};
use crate::common::pins::{Expected, Negotiated};
use crate::common::transport::Endpoint;
use crate::paths::{Alert, Profile};
use sides::Sides;

/// A TLS library, as the shared harnesses drive it.
pub trait Tls: 'static {
    /// A client and a server config built from a [`Profile`], shared by
    /// every run (as a server shares its config).
    type Configs;
    /// What one full-handshake run starts from: a fresh client and server
    /// joined by the transport (or, for rustls, a server waiting for its
    /// client, since creating a rustls client already writes its
    /// ClientHello).
    type Fresh;
    /// A client and a server after a handshake, joined by the transport.
    type Pair;

    /// Both configs of `profile` (`setup`, not counted).
    fn configs(profile: &Profile) -> Result<Self::Configs, HarnessError>;

    /// A fresh connection pair on `configs` (`prepare`, not counted).
    fn fresh(configs: &Self::Configs) -> Result<Self::Fresh, HarnessError>;

    /// The full handshake: what a handshake path counts.
    fn handshake(configs: &Self::Configs, fresh: Self::Fresh) -> Result<Self::Pair, HarnessError>;

    /// What each side reports it negotiated. `handshake` says whether this
    /// is the check right after the handshake (a library may report some
    /// parameters only once).
    fn negotiated(
        configs: &Self::Configs,
        pair: &Self::Pair,
        handshake: bool,
    ) -> Result<[(&'static str, Negotiated); 2], HarnessError>;

    /// Checks a finished handshake against `expected`: the shared
    /// comparison of [`Tls::negotiated`], and what only this library
    /// reports (handshake type, certificates, SNI, what is left in the
    /// transport).
    fn check(
        configs: &Self::Configs,
        pair: &Self::Pair,
        expected: &Expected,
    ) -> Result<(), HarnessError>;

    /// Moves `payload` from client to server in `write_size`-byte writes
    /// into `received`; returns the bytes the server read. What a record
    /// path counts.
    fn transfer(
        pair: &mut Self::Pair,
        payload: &[u8],
        write_size: usize,
        received: &mut [u8],
    ) -> Result<usize, HarnessError>;

    /// Unread bytes in each direction: `(client to server, server to
    /// client)`.
    fn in_flight(pair: &Self::Pair) -> (usize, usize);

    /// The client writes all of `bytes` as application data and hands the
    /// record(s) to the transport: one side's calls of [`first_record`].
    fn client_send(pair: &mut Self::Pair, bytes: &[u8]) -> Result<(), HarnessError>;

    /// The server reads what the client sent into `out`; returns the bytes
    /// read (0 when nothing was there). The other side's calls of
    /// [`first_record`].
    fn server_receive(pair: &mut Self::Pair, out: &mut [u8]) -> Result<usize, HarnessError>;

    /// Checks what only this library can tell after a transfer (rustls:
    /// that the client has nothing left to send).
    fn check_transfer(_pair: &Self::Pair) -> Result<(), HarnessError> {
        Ok(())
    }

    /// Run-time library versions for the fingerprint
    /// ([`regress_measure::Harness::runtime_libraries`]).
    fn runtime_libraries() -> Vec<regress_measure::RuntimeLibrary> {
        Vec::new()
    }
}

/// The server's side of a fresh pair sends `alert` (a profile's
/// [`Profile::first_alert`]) before anything else, in `prepare`: the record
/// waits in the transport, first in the client's way, when the handshake
/// starts. Proves it is all the client has to read. `None` sends nothing.
pub fn send_first_alert(server: &Endpoint, alert: Option<Alert>) -> Result<(), HarnessError> {
    let Some(alert) = alert else {
        return Ok(());
    };
    let record = alert.record();
    server
        .send(&record)
        .context("the server sending its first alert")?;
    let (to_client, to_server) = server.in_flight();
    ensure((to_client, to_server) == (record.len(), 0), || {
        format!(
            "after the server's first alert the transport holds {to_client} bytes for the \
             client and {to_server} for the server; {} and 0 expected",
            record.len()
        )
    })
}

/// Bytes of the first application record after a handshake: a small
/// request's worth, the record paths' small write.
pub const FIRST_RECORD_BYTES: usize = 1024;

/// The first application record over a fresh connection: the client sends
/// [`FIRST_RECORD_BYTES`], the server reads them, each side's calls marked.
/// After it, a heap child says what each side holds once data has flowed
/// (`Harness::first_record`).
pub fn first_record<L: Tls>(pair: &mut L::Pair) -> Result<(), HarnessError> {
    let payload = crate::common::payload::payload();
    let payload = &payload[..FIRST_RECORD_BYTES];
    let mut received = vec![0u8; FIRST_RECORD_BYTES];
    let sides = Sides::established();
    sides.call(Side::Client, || L::client_send(pair, payload))?;
    let mut got = 0;
    while got < payload.len() {
        let n = sides.call(Side::Server, || {
            L::server_receive(pair, &mut received[got..])
        })?;
        ensure(n > 0, || {
            format!("the server read {got} of the first record's {FIRST_RECORD_BYTES} bytes")
        })?;
        got += n;
    }
    ensure(received == payload, || {
        "the first record arrived changed".to_owned()
    })
}
