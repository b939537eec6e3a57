//! The IO of connections that queue their own output records and received
//! plaintext: rustls 0.23 and the 0.24.0-dev.1 release. They differ only in
//! where the TLS data read from the peer waits (inside a 0.23 connection; in
//! a `VecInput` the caller owns in 0.24), which each implements in
//! [`Queued`]; the loops over the transport are here, once.

use std::io;

use regress_measure::HarnessError;

use crate::common::error::{with_context, Context as _};
use crate::common::transport::Endpoint;

/// One side of a connection: the connection, and where the TLS data it
/// reads waits (`()` when the connection keeps it itself).
#[derive(Debug)]
pub struct Side<C, I> {
    pub(super) conn: C,
    /// `()` for 0.23, which reads into the connection itself.
    #[cfg_attr(not(feature = "rustls-0-24"), allow(dead_code))]
    pub(super) input: I,
}

/// The calls of a queuing connection the IO is made of.
pub trait Queued {
    /// rustls's error type.
    type Error: Into<HarnessError>;

    /// Reads TLS data from `end`: at most 4 KiB per call, or up to a
    /// record's end.
    fn read_tls(&mut self, end: &mut Endpoint) -> io::Result<usize>;

    /// `process_new_packets`: the bytes of plaintext now readable.
    fn process(&mut self) -> Result<usize, Self::Error>;

    /// Hands queued records to `end` (all of them, in one vectored write).
    fn write_tls(&mut self, end: &mut Endpoint) -> io::Result<usize>;

    /// `writer().write`: encrypts `plaintext` into records.
    fn write_plaintext(&mut self, plaintext: &[u8]) -> io::Result<usize>;

    /// `reader().read`: copies received plaintext into `into`.
    fn read_plaintext(&mut self, into: &mut [u8]) -> io::Result<usize>;

    /// Whether records are queued.
    fn has_output(&self) -> bool;

    /// Whether the handshake is still going.
    fn handshaking(&self) -> bool;
}

/// The [`Queued`] calls both generations spell the same way (each
/// resolving to its own rustls's methods): everything but reading TLS data
/// and processing it.
macro_rules! queued_calls {
    () => {
        #[inline(always)]
        fn write_tls(&mut self, end: &mut Endpoint) -> io::Result<usize> {
            self.conn.write_tls(end)
        }

        #[inline(always)]
        fn write_plaintext(&mut self, plaintext: &[u8]) -> io::Result<usize> {
            self.conn.writer().write(plaintext)
        }

        #[inline(always)]
        fn read_plaintext(&mut self, into: &mut [u8]) -> io::Result<usize> {
            self.conn.reader().read(into)
        }

        fn has_output(&self) -> bool {
            self.conn.wants_write()
        }

        fn handshaking(&self) -> bool {
            self.conn.is_handshaking()
        }
    };
}

impl<C, I> Side<C, I>
where
    Self: Queued,
{
    /// Moves everything the connection has queued to send into `end`.
    pub fn flush(&mut self, end: &mut Endpoint) -> io::Result<()> {
        while self.has_output() {
            self.write_tls(end)?;
        }
        Ok(())
    }

    /// Feeds everything the peer sent to `end` into the connection, then
    /// `process_new_packets`, until nothing is left.
    pub fn deliver(&mut self, end: &mut Endpoint) -> Result<(), HarnessError> {
        while end.has_incoming() {
            // A read fails only when nothing is left, which the loop rules
            // out; an error here is rustls refusing to buffer more.
            self.read_tls(end).context("read_tls")?;
            self.process().context("process_new_packets")?;
        }
        Ok(())
    }

    /// Encrypts `plaintext` into records and hands them to `end` (for
    /// tests that write themselves).
    #[cfg(test)]
    pub fn send(&mut self, plaintext: &[u8], end: &mut Endpoint) -> Result<usize, HarnessError> {
        let sent = self.write_plaintext(plaintext).context("write")?;
        self.flush(end).context("write_tls")?;
        Ok(sent)
    }

    /// Whether the handshake is still going.
    pub fn is_handshaking(&self) -> bool {
        self.handshaking()
    }

    /// Whether the connection has records it has not handed to the
    /// transport.
    pub fn wants_write(&self) -> bool {
        self.has_output()
    }

    /// `writer().write` of all of `plaintext`, then `write_tls` until
    /// nothing is queued (the first record after a handshake).
    pub fn send_all(&mut self, plaintext: &[u8], end: &mut Endpoint) -> Result<(), HarnessError> {
        let mut sent = 0;
        while let Some(rest) = plaintext.get(sent..).filter(|rest| !rest.is_empty()) {
            let wrote = self.write_plaintext(rest).context("write")?;
            if wrote == 0 {
                return Err("write took no plaintext".into());
            }
            sent += wrote;
        }
        self.flush(end).context("write_tls")
    }

    /// `read_tls` and `process_new_packets` of what arrived at `end`, then
    /// `reader().read` of the plaintext into `into`; 0 when nothing is
    /// readable yet.
    pub fn receive(&mut self, end: &mut Endpoint, into: &mut [u8]) -> Result<usize, HarnessError> {
        self.deliver(end)?;
        match self.read_plaintext(into) {
            Ok(read) => Ok(read),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(with_context("read", e)),
        }
    }
}

impl<C, I> std::ops::Deref for Side<C, I> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.conn
    }
}

/// A record path's counted loop: for each write, the client's
/// `writer().write` (rustls encrypts the plaintext into one record at
/// once), `write_tls` into the transport (one call moves every queued
/// record: rustls hands them all to one vectored write; anything left
/// behind would show up as an incomplete transfer in `check`), and the
/// server's reads (at most 4 KiB per call, growing the buffer to a record's
/// size), `process_new_packets` (decryption) and `reader().read` into
/// `received`. Returns the plaintext bytes the server read.
///
/// Written for a small footprint: with 1 KiB writes the loop runs 1,024
/// times, so each of its own instructions is 0.01 % of the region. Error
/// paths are out of line.
#[inline(always)]
pub fn transfer<C, S, I>(
    client: &mut Side<C, I>,
    server: &mut Side<S, I>,
    client_end: &mut Endpoint,
    server_end: &mut Endpoint,
    payload: &[u8],
    write_size: usize,
    received: &mut [u8],
) -> Result<usize, HarnessError>
where
    Side<C, I>: Queued,
    Side<S, I>: Queued,
{
    let mut sent = 0;
    let mut got = 0;
    while sent < payload.len() {
        let end = payload.len().min(sent + write_size);
        match client.write_plaintext(&payload[sent..end]) {
            Ok(n) => sent += n,
            Err(e) => return Err(with_context("client write", e)),
        }
        if let Err(e) = client.write_tls(client_end) {
            return Err(with_context("client write_tls", e));
        }
        while server_end.has_incoming() {
            if let Err(e) = server.read_tls(server_end) {
                return Err(with_context("server read_tls", e));
            }
            match server.process() {
                Ok(0) => {}
                Ok(_) => match server.read_plaintext(&mut received[got..]) {
                    Ok(n) => got += n,
                    Err(e) => return Err(with_context("server read", e)),
                },
                Err(e) => return Err(with_context("server process_new_packets", e)),
            }
        }
    }
    Ok(got)
}
