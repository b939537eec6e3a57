//! s2n-tls over the shared in-memory transport.
//!
//! s2n-tls does its IO through a send and a receive callback per
//! connection, each with a context pointer. Both of a side's callbacks get
//! that side's [`Endpoint`] (`crate::common::transport`), and do nothing
//! but call it and translate the result into the C convention: a byte
//! count, or -1 with `errno` set. The pipes are allocated when the pair is
//! made (`prepare`), so inside a counted run the transport costs a callback,
//! a `RefCell` borrow and one `memcpy` per call.

use std::io;
use std::rc::Rc;
use std::task::Poll;

use libc::{c_int, c_void};
use regress_measure::HarnessError;
use s2n_tls::connection::{Builder as _, Connection};
use s2n_tls::enums::{Blinding, Mode};

use super::config::Configs;
use crate::common::error::Context as _;
use crate::common::pki::Host;
use crate::common::transport::{self, Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::sides::{creating, Sides};
use regress_measure::parts::Side;

/// A client and a server connection joined in memory.
///
/// The connections hold raw pointers to the endpoints (their callback
/// contexts). The endpoints are reference counted and owned here, and the
/// connections are declared first so they are dropped first: a connection
/// never outlives the endpoint it points to.
pub struct Pair {
    /// The client side.
    pub client: Connection,
    /// The server side.
    pub server: Connection,
    pub(in crate::s2n_tls) client_end: Rc<Endpoint>,
    pub(in crate::s2n_tls) server_end: Rc<Endpoint>,
}

impl std::fmt::Debug for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pair")
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

impl Pair {
    /// A fresh client and server on `configs`, joined, nothing sent yet.
    /// The client connects to its PKI's host ([`Pki::host`](crate::common::pki::Pki::host)):
    /// it sends SNI `localhost`, or none for an IP address. A resuming
    /// client loads its session inside the counted run, as every resuming
    /// s2n-tls client must (`resumption.rs`). Both use self-service blinding: with s2n-tls's built-in
    /// blinding a failed handshake sleeps 10-30 s inside the failing call;
    /// self-service leaves the delay to the caller, changes nothing on a
    /// successful path, and makes the negative tests fast.
    ///
    /// Both prefer throughput: records of up to 16 KiB of plaintext, as
    /// rustls and OpenSSL write them. s2n-tls 0.3.47's Rust bindings make that
    /// the default (`set_binding_specific_defaults`), while the C library,
    /// and 0.3.42's bindings, default to 8 KiB records (a 16 KiB
    /// write was three records there: 8,087 + 8,087 + 210 bytes of
    /// plaintext). Set here so that every version writes the same records.
    pub fn new(configs: &Configs) -> Result<Pair, HarnessError> {
        Pair::connecting(&configs.client, &configs.server, configs.profile.pki.host())
    }

    /// [`Pair::new`] with any two configs (negative tests mix them), the
    /// client connecting to `localhost`.
    pub fn with_configs(
        client_config: &s2n_tls::config::Config,
        server_config: &s2n_tls::config::Config,
    ) -> Result<Pair, HarnessError> {
        Pair::connecting(client_config, server_config, Host::LOCALHOST)
    }

    /// [`Pair::with_configs`] with the client connecting to `host`: SNI its
    /// name, none for an address (RFC 6066 section 3).
    pub fn connecting(
        client_config: &s2n_tls::config::Config,
        server_config: &s2n_tls::config::Config,
        host: Host,
    ) -> Result<Pair, HarnessError> {
        let mut client = creating(Side::Client, || {
            client_config.build_connection(Mode::Client)
        })
        .context("creating the client connection")?;
        client
            .set_blinding(Blinding::SelfService)
            .context("setting client blinding")?
            .prefer_throughput()
            .context("preferring throughput on the client")?;
        if let Some(name) = host.sni() {
            client
                .set_server_name(name)
                .context("setting the server name")?;
        }
        let mut server = creating(Side::Server, || {
            server_config.build_connection(Mode::Server)
        })
        .context("creating the server connection")?;
        server
            .set_blinding(Blinding::SelfService)
            .context("setting server blinding")?
            .prefer_throughput()
            .context("preferring throughput on the server")?;
        let (client_end, server_end) = transport::connected();
        let (client_end, server_end) = (Rc::new(client_end), Rc::new(server_end));
        wire(&mut client, &client_end).context("wiring the client")?;
        wire(&mut server, &server_end).context("wiring the server")?;
        Ok(Pair {
            client,
            server,
            client_end,
            server_end,
        })
    }

    /// Drives both sides, client first, until both report the handshake
    /// complete.
    ///
    /// Each round calls `poll_negotiate` once on each side; a side that has
    /// finished answers `Ready` again at once. Each call is marked as its
    /// side's ([`Sides`]).
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        let mut sides = Sides::new();
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            let client = sides.call(Side::Client, || self.client.poll_negotiate().map_ok(drop));
            sides.note(self.in_flight());
            let client_done = match client {
                Poll::Ready(Ok(_)) => true,
                Poll::Ready(Err(e)) => return Err(e).context("client handshake failed"),
                Poll::Pending => false,
            };
            let server = sides.call(Side::Server, || self.server.poll_negotiate().map_ok(drop));
            sides.note(self.in_flight());
            let server_done = match server {
                Poll::Ready(Ok(_)) => true,
                Poll::Ready(Err(e)) => return Err(e).context("server handshake failed"),
                Poll::Pending => false,
            };
            if client_done && server_done {
                return Ok(());
            }
        }
        Err(format!(
            "handshake did not complete within {MAX_HANDSHAKE_ROUNDS} rounds of poll_negotiate"
        )
        .into())
    }

    /// Unread bytes in each direction: `(client to server, server to client)`.
    pub fn in_flight(&self) -> (usize, usize) {
        self.client_end.in_flight()
    }

    /// The records the client sent that the server has not read.
    pub fn client_records(&self) -> Option<Vec<usize>> {
        self.client_end.outgoing_records()
    }

    /// Discards what the client sent that the server has not read.
    pub fn discard_client_records(&self) {
        self.server_end.discard_incoming();
    }

    /// The client's end of the transport (the constant-flow check changes
    /// a record in flight through it).
    pub fn client_endpoint(&self) -> &crate::common::transport::Endpoint {
        &self.client_end
    }

    /// The server's end of the transport.
    pub fn server_endpoint(&self) -> &crate::common::transport::Endpoint {
        &self.server_end
    }
}

/// Points both of `connection`'s callbacks at `endpoint`.
fn wire(connection: &mut Connection, endpoint: &Rc<Endpoint>) -> Result<(), s2n_tls::error::Error> {
    connection
        .set_send_callback(Some(send_cb))?
        .set_receive_callback(Some(recv_cb))?;
    let context = Rc::as_ptr(endpoint) as *mut c_void;
    // SAFETY: the context points into an `Rc` allocation that `Pair` keeps
    // alive, and `Pair` drops its connections before its endpoints, so the
    // pointer is valid whenever s2n-tls can call the callbacks. They only
    // take shared references; the endpoint's pipes are `RefCell`s.
    unsafe {
        connection
            .set_send_context(context)?
            .set_receive_context(context)?;
    }
    Ok(())
}

/// The callbacks' answer: a byte count, or -1 with `errno` set, where "would
/// block" becomes `EWOULDBLOCK` (s2n-tls's "blocked", `Poll::Pending`) and
/// every other error `EIO`.
#[inline(always)]
fn answer(result: io::Result<usize>) -> c_int {
    match result {
        // A callback cannot return more than `c_int::MAX`; the lengths
        // passed in are capped below, so neither can the result.
        Ok(n) => n as c_int,
        Err(error) => failed(&error),
    }
}

#[cold]
#[inline(never)]
fn failed(error: &io::Error) -> c_int {
    let code = if error.kind() == io::ErrorKind::WouldBlock {
        libc::EWOULDBLOCK
    } else {
        libc::EIO
    };
    errno::set_errno(errno::Errno(code));
    -1
}

/// s2n-tls send callback: [`Endpoint::send`]; never blocks.
///
/// # Safety
///
/// `context` must point to a live `Endpoint` and `data` to `len` readable
/// bytes; s2n-tls guarantees the latter, [`wire`] the former.
unsafe extern "C" fn send_cb(context: *mut c_void, data: *const u8, len: u32) -> c_int {
    let endpoint = &*(context as *const Endpoint);
    let len = (len as usize).min(c_int::MAX as usize);
    answer(endpoint.send(std::slice::from_raw_parts(data, len)))
}

/// s2n-tls receive callback: [`Endpoint::receive`]. An empty pipe must not
/// return 0, which s2n-tls reads as the peer closing the connection: it
/// would block.
///
/// # Safety
///
/// `context` must point to a live `Endpoint` and `data` to `len` writable
/// bytes; s2n-tls guarantees the latter, [`wire`] the former.
unsafe extern "C" fn recv_cb(context: *mut c_void, data: *mut u8, len: u32) -> c_int {
    let endpoint = &*(context as *const Endpoint);
    let len = (len as usize).min(c_int::MAX as usize);
    answer(endpoint.receive(std::slice::from_raw_parts_mut(data, len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_pipe_blocks_instead_of_signalling_eof() {
        let (client, _server) = transport::connected();
        let mut out = [0u8; 4];
        // SAFETY: a live endpoint and a writable buffer of the stated length.
        let n = unsafe {
            recv_cb(
                &client as *const Endpoint as *mut c_void,
                out.as_mut_ptr(),
                out.len() as u32,
            )
        };
        assert_eq!(n, -1);
        assert_eq!(errno::errno().0, libc::EWOULDBLOCK);
    }

    #[test]
    fn a_full_pipe_is_an_io_error() {
        let (client, _server) = transport::connected();
        let big = vec![0u8; transport::PIPE_CAPACITY + 1];
        // SAFETY: a live endpoint and a readable buffer of the stated length.
        let n = unsafe {
            send_cb(
                &client as *const Endpoint as *mut c_void,
                big.as_ptr(),
                big.len() as u32,
            )
        };
        assert_eq!(n, -1);
        assert_eq!(errno::errno().0, libc::EIO);
    }
}
