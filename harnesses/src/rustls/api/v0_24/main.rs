//! What rustls main after the 0.24.0-dev.1 release does its own way
//! (feature `rustls-0-24-main`; from commit d993ef74b, "Move to externally
//! buffered TLS output", through at least 6868ee84 of 2026-08-19): every
//! call that produces TLS data appends it to a `Vec<u8>` the caller owns,
//! received plaintext is handed out record by record through a
//! `MessageHandler` (no plaintext buffer inside the connection), and a
//! verifier's identity check returns the `VerifiedIdentity` it checked.

use std::io::{self, Write as _};
use std::sync::Arc;

use ::rustls024::crypto::{Identity, VerifiedIdentity};
use ::rustls024::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};
use ::rustls024::{Error, VecInput};
use pki_types::ServerName;
use regress_measure::HarnessError;

use super::{pki_types, Outputs};
use crate::common::error::{ensure, with_context, Context as _};
use crate::common::transport::Endpoint;

/// What a successful server-certificate verification returns.
pub type ServerVerified = VerifiedIdentity<'static>;

/// The identity a side's peer proved.
pub(super) fn peer_identity(outputs: &Outputs) -> Option<&Identity<'static>> {
    outputs.peer_identity().map(|verified| verified.identity())
}

/// `verify_identity` passed through, for a verifier of `$side`'s
/// certificates (`client`: of servers; `server`: of clients).
macro_rules! identity_check {
    ($side:ident, $identity:ident) => {
        fn verify_identity<'a>(
            &self,
            identity: &::rustls024::$side::danger::$identity<'a, '_>,
        ) -> Result<::rustls024::crypto::VerifiedIdentity<'a>, Error> {
            self.inner.verify_identity(identity)
        }
    };
}

/// One side of a connection: the connection, the buffer of TLS data it
/// reads from, and the buffer it writes its TLS data into (rustls main
/// queues nothing itself).
#[derive(Debug)]
pub struct Side<C> {
    conn: C,
    input: VecInput,
    output: Vec<u8>,
}

/// Hands `output` to `end` in one write and empties it.
#[inline(always)]
fn write_out(output: &mut Vec<u8>, end: &mut Endpoint) -> io::Result<()> {
    if !output.is_empty() {
        end.write_all(output)?;
        output.clear();
    }
    Ok(())
}

impl Side<ServerConnection> {
    /// A server connection waiting for a ClientHello (allocation only).
    pub fn server(config: &Arc<ServerConfig>) -> Result<Self, Error> {
        Ok(Side {
            conn: ServerConnection::new(config.clone())?,
            input: VecInput::default(),
            output: Vec::new(),
        })
    }
}

impl Side<ClientConnection> {
    /// A client connection: building it picks the session to offer,
    /// generates the key share and writes the ClientHello into the side's
    /// output buffer.
    pub fn client(config: &Arc<ClientConfig>, name: ServerName<'static>) -> Result<Self, Error> {
        let mut output = Vec::new();
        Ok(Side {
            conn: config.connect(name).build(&mut output)?,
            input: VecInput::default(),
            output,
        })
    }

    /// Encrypts `plaintext` into records and hands them to `end` (for
    /// tests that write themselves).
    #[cfg(test)]
    pub fn send(&mut self, plaintext: &[u8], end: &mut Endpoint) -> Result<usize, HarnessError> {
        self.conn
            .write_tls(plaintext.into(), &mut self.output)
            .context("write_tls")?;
        self.flush(end).context("writing TLS data")?;
        Ok(plaintext.len())
    }
}

impl<C: Connection> Side<C> {
    /// Moves everything the connection wrote into `end`.
    pub fn flush(&mut self, end: &mut Endpoint) -> io::Result<()> {
        write_out(&mut self.output, end)
    }

    /// Feeds everything the peer sent to `end` into the connection, until
    /// nothing is left. No application data is expected here.
    pub fn deliver(&mut self, end: &mut Endpoint) -> Result<(), HarnessError> {
        while end.has_incoming() {
            self.input.read(end).context("reading TLS data")?;
            let mut handler = self
                .conn
                .process_new_packets(&mut self.input, &mut self.output);
            while let Some(payload) = handler.next_payload() {
                let length = payload.context("process_new_packets")?.bytes().len();
                ensure(length == 0, || {
                    format!("{length} bytes of unexpected application data")
                })?;
            }
        }
        Ok(())
    }

    /// Whether the handshake is still going.
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Whether the connection wrote TLS data not yet handed to the
    /// transport.
    pub fn wants_write(&self) -> bool {
        !self.output.is_empty()
    }

    /// What the connection negotiated.
    pub fn outputs(&self) -> &Outputs {
        &self.conn
    }

    /// `write_tls` of all of `plaintext` into records, handed to `end` in
    /// one write (the first record after a handshake).
    pub fn send_all(&mut self, plaintext: &[u8], end: &mut Endpoint) -> Result<(), HarnessError> {
        self.conn
            .write_tls(plaintext.into(), &mut self.output)
            .context("write_tls")?;
        self.flush(end).context("writing TLS data")
    }

    /// Reads what arrived at `end`, `process_new_packets`, and copies each
    /// record's plaintext into `into`; 0 when nothing is readable yet.
    pub fn receive(&mut self, end: &mut Endpoint, into: &mut [u8]) -> Result<usize, HarnessError> {
        let mut got = 0;
        while end.has_incoming() {
            self.input.read(end).context("reading TLS data")?;
            let mut handler = self
                .conn
                .process_new_packets(&mut self.input, &mut self.output);
            while let Some(payload) = handler.next_payload() {
                let bytes = match &payload {
                    Ok(payload) => payload.bytes(),
                    Err(e) => return Err(with_context("process_new_packets", e.clone())),
                };
                let Some(slot) = into.get_mut(got..got + bytes.len()) else {
                    return Err("more plaintext arrived than there is room for".into());
                };
                slot.copy_from_slice(bytes);
                got += bytes.len();
            }
        }
        Ok(got)
    }
}

impl<C> std::ops::Deref for Side<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.conn
    }
}

/// The most plaintext one record carries, for a suite whose records carry
/// `overhead` bytes of encryption overhead: rustls main (commit 86e066192,
/// "Account for encryption overhead in `max_fragment_size` fragmentation")
/// keeps a record's whole payload within 16 KiB, so a 16 KiB write is two
/// records.
pub const fn max_record_plaintext(overhead: usize) -> usize {
    16 * 1024 - overhead
}

/// A record path's counted loop: for each write, the client's `write_tls`
/// (rustls encrypts the plaintext into records appended to the client's
/// output buffer), that buffer handed to the transport in one write, and
/// the server's reads into its input buffer (at most 4 KiB per call,
/// growing it to a record's size), `process_new_packets` (decryption in
/// place) and each record's plaintext copied into `received`
/// (`MessageHandler::next_payload`). Returns the plaintext bytes the
/// server read.
///
/// Written for a small footprint, as 0.23's (`super::super::queued`).
#[inline(always)]
pub fn transfer(
    client: &mut Side<ClientConnection>,
    server: &mut Side<ServerConnection>,
    client_end: &mut Endpoint,
    server_end: &mut Endpoint,
    payload: &[u8],
    write_size: usize,
    received: &mut [u8],
) -> Result<usize, HarnessError> {
    let mut got = 0;
    for write in payload.chunks(write_size) {
        if let Err(e) = client.conn.write_tls(write.into(), &mut client.output) {
            return Err(with_context("client write_tls", e));
        }
        if let Err(e) = write_out(&mut client.output, client_end) {
            return Err(with_context("client writing TLS data", e));
        }
        while server_end.has_incoming() {
            if let Err(e) = server.input.read(server_end) {
                return Err(with_context("server reading TLS data", e));
            }
            let mut handler = server
                .conn
                .process_new_packets(&mut server.input, &mut server.output);
            while let Some(payload) = handler.next_payload() {
                let bytes = match &payload {
                    Ok(payload) => payload.bytes(),
                    Err(e) => return Err(with_context("server process_new_packets", e.clone())),
                };
                let Some(into) = received.get_mut(got..got + bytes.len()) else {
                    return Err("the server received more plaintext than was sent".into());
                };
                into.copy_from_slice(bytes);
                got += bytes.len();
            }
        }
    }
    Ok(got)
}
