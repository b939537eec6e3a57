//! OpenSSL over the shared in-memory transport.
//!
//! Each side is an `SslStream` over its `Endpoint`
//! (`crate::common::transport`), which the `openssl` crate wires to OpenSSL
//! through a custom BIO whose read and write call the endpoint's
//! `io::Read` and `io::Write`. OpenSSL's own BIO pair (`BIO_new_bio_pair`)
//! would move the bytes with OpenSSL's copy, in C; the custom BIO makes the
//! copy the same code as for the other libraries. Inside a counted run the
//! transport costs the crate's BIO glue, a `RefCell` borrow and one `memcpy`
//! per BIO call; the pipes are allocated before the count starts.

use openssl::ssl::{ErrorCode, Ssl, SslSessionRef, SslStream};
use regress_measure::HarnessError;

use super::context::Contexts;
use crate::common::error::Context as _;
use crate::common::transport::{self, Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::sides::{creating, Sides};
use regress_measure::parts::Side;

/// A client and a server `SslStream` joined in memory.
#[derive(Debug)]
pub struct Pair {
    /// The client side.
    pub client: SslStream<Endpoint>,
    /// The server side.
    pub server: SslStream<Endpoint>,
}

impl Pair {
    /// A fresh client and server on `contexts`, joined, nothing sent yet.
    /// The client connects to the profile's host
    /// ([`Pki::host`](crate::common::pki::Pki::host)): it sends SNI
    /// `localhost`, or none for an IP address (RFC 6066 section 3); with
    /// `session`, it offers that session.
    pub fn new(contexts: &Contexts, session: Option<&SslSessionRef>) -> Result<Pair, HarnessError> {
        let mut client = creating(Side::Client, || Ssl::new(&contexts.client))
            .context("creating the client SSL")?;
        if let Some(name) = contexts.profile.pki.host().sni() {
            client
                .set_hostname(name)
                .context("setting the server name")?;
        }
        if let Some(session) = session {
            // SAFETY: `set_session` is unsafe because the session must come
            // from a context compatible with this one; it was obtained by a
            // connection of this very client context.
            unsafe { client.set_session(session) }.context("offering the session")?;
        }
        let mut server = creating(Side::Server, || Ssl::new(&contexts.server))
            .context("creating the server SSL")?;
        client.set_connect_state();
        server.set_accept_state();
        let (client_end, server_end) = transport::connected();
        // The streams' BIOs are the connections' own (freed with them).
        Ok(Pair {
            client: creating(Side::Client, || SslStream::new(client, client_end))
                .context("creating the client stream")?,
            server: creating(Side::Server, || SslStream::new(server, server_end))
                .context("creating the server stream")?,
        })
    }

    /// Drives both sides, client first, until both report the handshake
    /// complete.
    ///
    /// Each round calls `SSL_do_handshake` once on each side; a side that
    /// has finished returns success again at once without reading. Each
    /// call is marked as its side's ([`Sides`]).
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        let mut sides = Sides::new();
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            let client = sides.call(Side::Client, || step(&mut self.client));
            sides.note(self.in_flight());
            let client_done = client.context("client handshake failed")?;
            let server = sides.call(Side::Server, || step(&mut self.server));
            sides.note(self.in_flight());
            let server_done = server.context("server handshake failed")?;
            if client_done && server_done {
                return Ok(());
            }
        }
        Err(format!(
            "handshake did not complete within {MAX_HANDSHAKE_ROUNDS} rounds of SSL_do_handshake"
        )
        .into())
    }

    /// Unread bytes in each direction: `(client to server, server to client)`.
    pub fn in_flight(&self) -> (usize, usize) {
        self.client.get_ref().in_flight()
    }

    /// The lengths of the records the server sent that the client has not
    /// read.
    pub fn server_records(&self) -> Option<Vec<usize>> {
        self.server.get_ref().outgoing_records()
    }

    /// The lengths of the records the client sent that the server has not
    /// read.
    pub fn client_records(&self) -> Option<Vec<usize>> {
        self.client.get_ref().outgoing_records()
    }
}

/// One `SSL_do_handshake`: `Ok(true)` when done, `Ok(false)` when it waits
/// for the peer.
pub(in crate::openssl) fn step(
    stream: &mut SslStream<Endpoint>,
) -> Result<bool, openssl::ssl::Error> {
    match stream.do_handshake() {
        Ok(()) => Ok(true),
        Err(e) if e.code() == ErrorCode::WANT_READ => Ok(false),
        Err(e) => Err(e),
    }
}
