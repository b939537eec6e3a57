//! What the crates.io release 0.24.0-dev.1 (rustls commit bd9f7f59a,
//! 2026-07-23) does its own way: a connection queues its output records
//! (`wants_write`, `write_tls` into an `io::Write`) and the plaintext it
//! received (`reader`), as 0.23 does (the IO is `super::super::queued`'s),
//! and a verifier's identity check returns a bare `PeerVerified`.

use std::io::{self, Read as _, Write as _};
use std::sync::Arc;

use ::rustls024::client::danger::PeerVerified;
use ::rustls024::crypto::Identity;
use ::rustls024::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};
use ::rustls024::{Error, VecInput};
use pki_types::ServerName;

pub use super::super::queued::transfer;
use super::super::queued::{self, Queued};
use super::{pki_types, Outputs};
use crate::common::transport::Endpoint;

/// What a successful server-certificate verification returns.
pub type ServerVerified = PeerVerified;

/// The identity a side's peer proved.
pub(super) fn peer_identity(outputs: &Outputs) -> Option<&Identity<'static>> {
    outputs.peer_identity()
}

/// `verify_identity` passed through, for a verifier of `$side`'s
/// certificates (`client`: of servers; `server`: of clients).
macro_rules! identity_check {
    ($side:ident, $identity:ident) => {
        fn verify_identity(
            &self,
            identity: &::rustls024::$side::danger::$identity<'_>,
        ) -> Result<::rustls024::$side::danger::PeerVerified, Error> {
            self.inner.verify_identity(identity)
        }
    };
}

/// One side of a connection: the connection (which queues its output and
/// received plaintext) and the buffer of TLS data it reads from.
pub type Side<C> = queued::Side<C, VecInput>;

impl Side<ServerConnection> {
    /// A server connection waiting for a ClientHello (allocation only).
    pub fn server(config: &Arc<ServerConfig>) -> Result<Self, Error> {
        Ok(queued::Side {
            conn: ServerConnection::new(config.clone())?,
            input: VecInput::default(),
        })
    }
}

impl Side<ClientConnection> {
    /// A client connection: building it picks the session to offer,
    /// generates the key share and queues the ClientHello.
    pub fn client(config: &Arc<ClientConfig>, name: ServerName<'static>) -> Result<Self, Error> {
        Ok(queued::Side {
            conn: config.connect(name).build()?,
            input: VecInput::default(),
        })
    }
}

impl<C: Connection> Queued for Side<C> {
    type Error = Error;

    #[inline(always)]
    fn read_tls(&mut self, end: &mut Endpoint) -> io::Result<usize> {
        self.input.read(end)
    }

    #[inline(always)]
    fn process(&mut self) -> Result<usize, Error> {
        let state = self.conn.process_new_packets(&mut self.input)?;
        Ok(state.plaintext_bytes_to_read())
    }

    queued_calls!();
}

impl<C: Connection> Side<C> {
    /// What the connection negotiated.
    pub fn outputs(&self) -> &Outputs {
        &self.conn
    }
}

/// The most plaintext one record carries, for a suite whose records carry
/// `overhead` bytes of encryption overhead: a full 16 KiB.
pub const fn max_record_plaintext(_overhead: usize) -> usize {
    16 * 1024
}
