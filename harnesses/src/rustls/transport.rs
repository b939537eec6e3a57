//! rustls over the shared in-memory transport.
//!
//! rustls does no IO of its own: `write_tls` hands its pending records to an
//! `io::Write`, `read_tls` takes bytes from an `io::Read`, and
//! `process_new_packets` acts on what was read. Each side's `Endpoint`
//! (`crate::common::transport`) is that `Read` and `Write`, so inside a
//! counted run the transport costs a `RefCell` borrow and one `memcpy` per
//! call, as it does for the other libraries.

use std::io;

use ::rustls::{ClientConnection, ConnectionCommon, ServerConnection};
use regress_measure::HarnessError;

use crate::common::error::Context as _;
use crate::common::transport::{self, Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::sides::Sides;
use regress_measure::parts::Side;

/// Moves everything `conn` has queued to send into `end`.
pub fn flush<D>(conn: &mut ConnectionCommon<D>, end: &mut Endpoint) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(end)?;
    }
    Ok(())
}

/// Feeds everything the peer sent to `end` into `conn`: `read_tls` (rustls
/// reads at most 4 KiB, or up to a record's end, per call), then
/// `process_new_packets`, until nothing is left.
pub fn deliver<D>(conn: &mut ConnectionCommon<D>, end: &mut Endpoint) -> Result<(), HarnessError> {
    while end.has_incoming() {
        // A read fails only when nothing is left, which the loop rules out;
        // an error here is rustls refusing to buffer more.
        conn.read_tls(end).context("read_tls")?;
        conn.process_new_packets().context("process_new_packets")?;
    }
    Ok(())
}

/// A server connection and both ends of the transport, waiting for a
/// client: what a handshake harness's `prepare` builds.
///
/// The client connection is not created here. rustls's
/// `ClientConnection::new` *is* the first step of the handshake: it picks the
/// session to resume, generates the key share and writes the ClientHello. A
/// counted handshake therefore starts with it ([`Accepting::connect`]).
#[derive(Debug)]
pub struct Accepting {
    server: ServerConnection,
    client_end: Endpoint,
    server_end: Endpoint,
}

impl Accepting {
    /// Wraps `server` with a fresh transport.
    pub fn new(server: ServerConnection) -> Accepting {
        let (client_end, server_end) = transport::connected();
        Accepting {
            server,
            client_end,
            server_end,
        }
    }

    /// Joins `client` to the waiting server.
    pub fn connect(self, client: ClientConnection) -> Pair {
        Pair {
            client,
            server: self.server,
            client_end: self.client_end,
            server_end: self.server_end,
        }
    }
}

/// A client and a server connection joined in memory.
#[derive(Debug)]
pub struct Pair {
    /// The client side.
    pub client: ClientConnection,
    /// The server side.
    pub server: ServerConnection,
    pub client_end: Endpoint,
    pub server_end: Endpoint,
}

impl Pair {
    /// Drives both sides until neither is handshaking.
    ///
    /// A round moves the client's pending flight to the server and the
    /// server's to the client. The loop stops as soon as both sides are done,
    /// so anything the server queues after the handshake (a TLS 1.3
    /// NewSessionTicket) stays in the server's send queue: the client never
    /// reads it during the handshake. Each `flush` and `deliver` is marked
    /// as its side's ([`Sides`]; the client's first mark is in
    /// `Configs::connect_with`, where the client is created).
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        let mut sides = Sides::new();
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            sides
                .call(Side::Client, || {
                    flush(&mut self.client, &mut self.client_end)
                })
                .context("client writing its flight")?;
            sides.note(self.in_flight());
            sides
                .call(Side::Server, || {
                    deliver(&mut self.server, &mut self.server_end)
                })
                .context("server processing the client's flight")?;
            sides.note(self.in_flight());
            if self.is_done() {
                return Ok(());
            }
            sides
                .call(Side::Server, || {
                    flush(&mut self.server, &mut self.server_end)
                })
                .context("server writing its flight")?;
            sides.note(self.in_flight());
            sides
                .call(Side::Client, || {
                    deliver(&mut self.client, &mut self.client_end)
                })
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
        flush(&mut self.server, &mut self.server_end)
            .context("server writing post-handshake messages")?;
        deliver(&mut self.client, &mut self.client_end)
            .context("client processing post-handshake messages")
    }

    /// Unread bytes in each direction: `(client to server, server to client)`.
    pub fn in_flight(&self) -> (usize, usize) {
        self.client_end.in_flight()
    }
}
