//! rustls over the shared in-memory transport.
//!
//! rustls does no IO of its own: it hands its TLS data to the caller and
//! takes the peer's from it. Each side's `Endpoint`
//! (`crate::common::transport`) is the `Read` and `Write` that data goes
//! through, so inside a counted run the transport costs a `RefCell` borrow
//! and one `memcpy` per call, as it does for the other libraries. How a
//! connection hands its data over depends on the rustls version
//! ([`api::Side`]): 0.23 and the 0.24.0-dev.1 release queue output records
//! inside the connection (`write_tls` into the endpoint), rustls main
//! appends them to a buffer the side owns, which is then written to the
//! endpoint in one call; 0.24 reads into a buffer the side owns
//! (`VecInput`).

use std::sync::Arc;

use regress_measure::HarnessError;

use super::api::{self, ClientConfig, ClientConnection, ServerConnection};
use crate::common::error::Context as _;
use crate::common::transport::{self, Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::sides::Sides;
use regress_measure::parts::Side;

/// A server connection and both ends of the transport, waiting for a
/// client: what a handshake harness's `prepare` builds.
///
/// The client connection is not created here. Creating a rustls client
/// *is* the first step of the handshake: it picks the session to resume,
/// generates the key share and writes the ClientHello. A counted handshake
/// therefore starts with it ([`Accepting::connect`]).
#[derive(Debug)]
pub struct Accepting {
    pub(in crate::rustls) server: api::Side<ServerConnection>,
    pub(in crate::rustls) client_end: Endpoint,
    pub(in crate::rustls) server_end: Endpoint,
}

impl Accepting {
    /// Wraps `server` with a fresh transport.
    pub fn new(server: api::Side<ServerConnection>) -> Accepting {
        let (client_end, server_end) = transport::connected();
        Accepting {
            server,
            client_end,
            server_end,
        }
    }

    /// Creates a client on `config` for `name` and joins it to the waiting
    /// server.
    pub fn connect(
        self,
        config: &Arc<ClientConfig>,
        name: api::pki_types::ServerName<'static>,
    ) -> Result<Pair, HarnessError> {
        // The client's first call: marked as its first stage.
        let client = Sides::new()
            .call(Side::Client, || api::Side::client(config, name))
            .context("creating the client connection")?;
        Ok(Pair {
            client,
            server: self.server,
            client_end: self.client_end,
            server_end: self.server_end,
        })
    }
}

/// A client and a server connection joined in memory.
#[derive(Debug)]
pub struct Pair {
    /// The client side.
    pub client: api::Side<ClientConnection>,
    /// The server side.
    pub server: api::Side<ServerConnection>,
    pub client_end: Endpoint,
    pub server_end: Endpoint,
}

impl Pair {
    /// Drives both sides until neither is handshaking.
    ///
    /// A round moves the client's pending flight to the server and the
    /// server's to the client. The loop stops as soon as both sides are done,
    /// so anything the server queues after the handshake (a TLS 1.3
    /// NewSessionTicket) stays with the server: the client never reads it
    /// during the handshake. Each `flush` and `deliver` is marked as its
    /// side's ([`Sides`]; the client's first mark is in
    /// [`Accepting::connect`], where the client is created).
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        let mut sides = Sides::new();
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            sides
                .call(Side::Client, || self.client.flush(&mut self.client_end))
                .context("client writing its flight")?;
            sides.note(self.in_flight());
            sides
                .call(Side::Server, || self.server.deliver(&mut self.server_end))
                .context("server processing the client's flight")?;
            sides.note(self.in_flight());
            if self.is_done() {
                return Ok(());
            }
            sides
                .call(Side::Server, || self.server.flush(&mut self.server_end))
                .context("server writing its flight")?;
            sides.note(self.in_flight());
            sides
                .call(Side::Client, || self.client.deliver(&mut self.client_end))
                .context("client processing the server's flight")?;
            sides.note(self.in_flight());
            if self.is_done() {
                return Ok(());
            }
        }
        Err(format!("handshake did not complete within {MAX_HANDSHAKE_ROUNDS} rounds").into())
    }

    fn is_done(&self) -> bool {
        !self.client.is_handshaking() && !self.server.is_handshaking()
    }

    /// Moves what the server has queued (post-handshake messages, such as a
    /// session ticket) to the client and lets the client process it.
    pub fn server_to_client(&mut self) -> Result<(), HarnessError> {
        self.server
            .flush(&mut self.server_end)
            .context("server writing post-handshake messages")?;
        self.client
            .deliver(&mut self.client_end)
            .context("client processing post-handshake messages")
    }

    /// Unread bytes in each direction: `(client to server, server to client)`.
    pub fn in_flight(&self) -> (usize, usize) {
        self.client_end.in_flight()
    }
}
