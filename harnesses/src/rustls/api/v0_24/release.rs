//! What the crates.io release 0.24.0-dev.1 (rustls commit bd9f7f59a,
//! 2026-07-23) does its own way: a connection queues its output records
//! (`wants_write`, `write_tls` into an `io::Write`) and the plaintext it
//! received (`reader`), and a verifier's identity check returns a bare
//! `PeerVerified`.

use std::io::{self, Read as _, Write as _};
use std::sync::Arc;

use ::rustls024::client::danger::{PeerVerified, ServerIdentity, ServerVerifier as _};
use ::rustls024::crypto::Identity;
use ::rustls024::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};
use ::rustls024::{Error, VecInput};
use pki_types::{ServerName, UnixTime};
use regress_measure::HarnessError;

use super::{pki_types, Outputs, WebPkiServerVerifier};
use crate::common::error::{with_context, Context as _};
use crate::common::transport::Endpoint;

/// What a successful server-certificate verification returns.
pub type ServerVerified = PeerVerified;

/// The identity a side's peer proved.
pub(super) fn peer_identity(outputs: &Outputs) -> Option<&Identity<'static>> {
    outputs.peer_identity()
}

/// `verify_identity` passed through (a server's certificate).
macro_rules! server_identity_check {
    () => {
        fn verify_identity(
            &self,
            identity: &::rustls024::client::danger::ServerIdentity<'_>,
        ) -> Result<::rustls024::client::danger::PeerVerified, Error> {
            self.inner.verify_identity(identity)
        }
    };
}

/// `verify_identity` passed through (a client's certificate).
macro_rules! client_identity_check {
    () => {
        fn verify_identity(
            &self,
            identity: &::rustls024::server::danger::ClientIdentity<'_>,
        ) -> Result<::rustls024::server::danger::PeerVerified, Error> {
            self.inner.verify_identity(identity)
        }
    };
}

/// Verifies `identity` (the leaf) for `name` at `now`, as a rustls client
/// does in a handshake (no intermediates, no OCSP response).
pub fn verify_server(
    verifier: &WebPkiServerVerifier,
    identity: &Identity<'static>,
    name: &ServerName<'static>,
    now: UnixTime,
) -> Result<ServerVerified, Error> {
    verifier.verify_identity(&ServerIdentity::new(identity, name, now))
}

/// One side of a connection: the connection (which queues its output and
/// received plaintext) and the buffer of TLS data it reads from.
#[derive(Debug)]
pub struct Side<C> {
    conn: C,
    input: VecInput,
}

impl Side<ServerConnection> {
    /// A server connection waiting for a ClientHello (allocation only).
    pub fn server(config: &Arc<ServerConfig>) -> Result<Self, Error> {
        Ok(Side {
            conn: ServerConnection::new(config.clone())?,
            input: VecInput::default(),
        })
    }

    /// Reads what `end` holds into the input buffer, decrypts it
    /// (`process_new_packets`, which moves the plaintext into the
    /// connection's buffer) and copies the plaintext into `received`
    /// (`reader().read`): a record path's counted server step.
    #[inline(always)]
    pub fn receive(
        &mut self,
        end: &mut Endpoint,
        received: &mut [u8],
    ) -> Result<usize, HarnessError> {
        let mut got = 0;
        while end.has_incoming() {
            if let Err(e) = self.input.read(end) {
                return Err(with_context("server reading TLS data", e));
            }
            match self.conn.process_new_packets(&mut self.input) {
                Ok(state) if state.plaintext_bytes_to_read() == 0 => {}
                Ok(_) => match self.conn.reader().read(&mut received[got..]) {
                    Ok(n) => got += n,
                    Err(e) => return Err(with_context("server read", e)),
                },
                Err(e) => return Err(with_context("server process_new_packets", e)),
            }
        }
        Ok(got)
    }
}

impl Side<ClientConnection> {
    /// A client connection: building it picks the session to offer,
    /// generates the key share and queues the ClientHello.
    pub fn client(config: &Arc<ClientConfig>, name: ServerName<'static>) -> Result<Self, Error> {
        Ok(Side {
            conn: config.connect(name).build()?,
            input: VecInput::default(),
        })
    }

    /// Encrypts `plaintext` into one record (`writer().write`) and hands
    /// the queued record to `end` (`write_tls`): a record path's counted
    /// client step.
    #[inline(always)]
    pub fn send(&mut self, plaintext: &[u8], end: &mut Endpoint) -> Result<usize, HarnessError> {
        let sent = match self.conn.writer().write(plaintext) {
            Ok(n) => n,
            Err(e) => return Err(with_context("client write", e)),
        };
        if let Err(e) = self.conn.write_tls(end) {
            return Err(with_context("client write_tls", e));
        }
        Ok(sent)
    }
}

impl<C: Connection> Side<C> {
    /// Moves everything the connection has queued to send into `end`.
    pub fn flush(&mut self, end: &mut Endpoint) -> io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(end)?;
        }
        Ok(())
    }

    /// Feeds everything the peer sent to `end` into the connection, until
    /// nothing is left.
    pub fn deliver(&mut self, end: &mut Endpoint) -> Result<(), HarnessError> {
        while end.has_incoming() {
            self.input.read(end).context("reading TLS data")?;
            self.conn
                .process_new_packets(&mut self.input)
                .context("process_new_packets")?;
        }
        Ok(())
    }

    /// Whether the handshake is still going.
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Whether the connection has records it has not handed to the
    /// transport.
    pub fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// What the connection negotiated.
    pub fn outputs(&self) -> &Outputs {
        &self.conn
    }
}

impl<C> std::ops::Deref for Side<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.conn
    }
}

/// The most plaintext one record carries, for a suite whose records carry
/// `overhead` bytes of encryption overhead: a full 16 KiB.
pub const fn max_record_plaintext(_overhead: usize) -> usize {
    16 * 1024
}
