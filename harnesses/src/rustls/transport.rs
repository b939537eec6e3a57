//! An in-memory transport joining a rustls client and server.
//!
//! rustls does no IO of its own: `write_tls` hands its pending records to an
//! `io::Write`, `read_tls` takes bytes from an `io::Read`, and
//! `process_new_packets` acts on what was read. Each direction here is a
//! [`Pipe`] the harness owns: no sockets, addresses or clocks, and inside a
//! counted run only a `memcpy` per call, since the pipes' buffers are
//! allocated before the count starts and reused once drained.

use std::io;

use ::rustls::{ClientConnection, ConnectionCommon, ServerConnection};
use regress_measure::HarnessError;

use super::Context as _;

/// Upper bound on handshake rounds (one flight each way per round): TLS 1.3
/// needs two, TLS 1.2 two, so running out means the sides stopped making
/// progress.
const MAX_HANDSHAKE_ROUNDS: usize = 16;

/// Room in each direction: handshake flights (a few KiB, RSA-4096 chains
/// included) and full-size records (16 KiB + 22 bytes in TLS 1.3) fit with
/// plenty to spare. A pipe never grows; a write that does not fit fails.
pub const PIPE_CAPACITY: usize = 64 * 1024;

/// One direction of the transport.
///
/// A fixed buffer with a read and a write position: writes copy in at the
/// write position, reads copy out from the read position, and once the
/// reader has caught up both go back to the start. Every read and write is
/// one `memcpy` and a few instructions of bookkeeping; the buffer never
/// grows (a write that does not fit fails), so nothing is allocated while a
/// run is counted.
#[derive(Debug)]
pub struct Pipe {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Pipe {
    /// A pipe that can hold `capacity` unread bytes.
    pub fn with_capacity(capacity: usize) -> Pipe {
        Pipe {
            buf: vec![0; capacity].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Bytes written and not yet read.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether every written byte has been read.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The unread bytes.
    pub fn unread(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
}

impl Pipe {
    /// Writes every slice in turn; the general case of `write_vectored`.
    #[inline(never)]
    fn write_each(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let mut written = 0;
        for buf in bufs {
            written += io::Write::write(self, buf)?;
        }
        Ok(written)
    }
}

#[cold]
#[inline(never)]
fn pipe_full(capacity: usize) -> io::Error {
    io::Error::other(format!("in-memory pipe full ({capacity} bytes)"))
}

impl io::Write for Pipe {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        // Bookkeeping before the copy, so that little has to survive the
        // `memcpy` call (this runs once per record in the record paths).
        let start = self.end;
        let end = start + bytes.len();
        if end > self.buf.len() {
            return Err(pipe_full(self.buf.len()));
        }
        self.end = end;
        self.buf[start..end].copy_from_slice(bytes);
        Ok(bytes.len())
    }

    /// rustls writes its queued records with one vectored write; taking all
    /// of them at once (the default takes only the first) keeps the number
    /// of `write_tls` calls, and so the harness's overhead, minimal.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        // One record queued: the usual case, kept free of the loop (which
        // would make every call save and restore more registers).
        if let [buf] = bufs {
            return self.write(buf);
        }
        self.write_each(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl io::Read for Pipe {
    /// Moves up to `out.len()` unread bytes into `out`. An empty pipe is
    /// "would block", never `Ok(0)`: rustls takes `Ok(0)` for the peer
    /// closing the connection.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let start = self.start;
        let available = self.end - start;
        if available == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = available.min(out.len());
        if n == available {
            // Drained: the next write starts again at the front. (The bytes
            // stay where they are until then; they are copied just below.)
            self.start = 0;
            self.end = 0;
        } else {
            self.start = start + n;
        }
        out[..n].copy_from_slice(&self.buf[start..start + n]);
        Ok(n)
    }
}

/// Moves everything `conn` has queued to send into `pipe`.
pub fn flush<D>(conn: &mut ConnectionCommon<D>, pipe: &mut Pipe) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(pipe)?;
    }
    Ok(())
}

/// Feeds everything in `pipe` to `conn`: `read_tls` (rustls reads at most
/// 4 KiB, or up to a record's end, per call), then `process_new_packets`,
/// until the pipe is empty.
pub fn deliver<D>(conn: &mut ConnectionCommon<D>, pipe: &mut Pipe) -> Result<(), HarnessError> {
    while !pipe.is_empty() {
        // A `Pipe` read fails only when empty, which the loop rules out; an
        // error here is rustls refusing to buffer more.
        conn.read_tls(pipe).context("read_tls")?;
        conn.process_new_packets().context("process_new_packets")?;
    }
    Ok(())
}

/// A server connection and the two pipes, waiting for a client: what a
/// handshake harness's `prepare` builds.
///
/// The client connection is not created here. rustls's
/// `ClientConnection::new` *is* the first step of the handshake: it picks the
/// session to resume, generates the key share and writes the ClientHello. A
/// counted handshake therefore starts with it ([`Accepting::connect`]).
#[derive(Debug)]
pub struct Accepting {
    server: ServerConnection,
    client_to_server: Pipe,
    server_to_client: Pipe,
}

impl Accepting {
    /// Wraps `server` with two empty pipes of [`PIPE_CAPACITY`].
    pub fn new(server: ServerConnection) -> Accepting {
        Accepting {
            server,
            client_to_server: Pipe::with_capacity(PIPE_CAPACITY),
            server_to_client: Pipe::with_capacity(PIPE_CAPACITY),
        }
    }

    /// Joins `client` to the waiting server.
    pub fn connect(self, client: ClientConnection) -> Pair {
        Pair {
            client,
            server: self.server,
            client_to_server: self.client_to_server,
            server_to_client: self.server_to_client,
        }
    }
}

/// A client and a server connection joined by two [`Pipe`]s.
#[derive(Debug)]
pub struct Pair {
    /// The client side.
    pub client: ClientConnection,
    /// The server side.
    pub server: ServerConnection,
    client_to_server: Pipe,
    server_to_client: Pipe,
}

impl Pair {
    /// Drives both sides until neither is handshaking.
    ///
    /// A round moves the client's pending flight to the server and the
    /// server's to the client. The loop stops as soon as both sides are done,
    /// so anything the server queues after the handshake (a TLS 1.3
    /// NewSessionTicket) stays in the server's send queue: the client never
    /// reads it during the handshake. The loop is bounded so a stuck
    /// handshake is an error, not a hang.
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            flush(&mut self.client, &mut self.client_to_server)
                .context("client writing its flight")?;
            deliver(&mut self.server, &mut self.client_to_server)
                .context("server processing the client's flight")?;
            if self.is_done() {
                return Ok(());
            }
            flush(&mut self.server, &mut self.server_to_client)
                .context("server writing its flight")?;
            deliver(&mut self.client, &mut self.server_to_client)
                .context("client processing the server's flight")?;
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
        flush(&mut self.server, &mut self.server_to_client)
            .context("server writing post-handshake messages")?;
        deliver(&mut self.client, &mut self.server_to_client)
            .context("client processing post-handshake messages")
    }

    /// The client, the server and the client-to-server pipe, borrowed
    /// together, for paths that move application data.
    pub fn client_to_server(
        &mut self,
    ) -> (&mut ClientConnection, &mut ServerConnection, &mut Pipe) {
        (
            &mut self.client,
            &mut self.server,
            &mut self.client_to_server,
        )
    }

    /// Unread bytes in each direction: `(client to server, server to client)`.
    pub fn in_flight(&self) -> (usize, usize) {
        (self.client_to_server.len(), self.server_to_client.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn pipe_reads_what_was_written_in_order() {
        let mut pipe = Pipe::with_capacity(16);
        pipe.write_all(b"hello").expect("write");
        let written = pipe
            .write_vectored(&[io::IoSlice::new(b" wo"), io::IoSlice::new(b"rld")])
            .expect("vectored write");
        assert_eq!(written, 6, "a vectored write takes every slice");
        assert_eq!(pipe.len(), 11);
        assert_eq!(pipe.unread(), b"hello world");
        let mut out = [0u8; 4];
        assert_eq!(pipe.read(&mut out).expect("read"), 4);
        assert_eq!(&out, b"hell");
        let mut rest = [0u8; 32];
        assert_eq!(pipe.read(&mut rest).expect("read"), 7);
        assert_eq!(&rest[..7], b"o world");
        assert!(pipe.is_empty());
    }

    #[test]
    fn empty_pipe_would_block_instead_of_signalling_eof() {
        let mut pipe = Pipe::with_capacity(8);
        let error = pipe.read(&mut [0u8; 4]).expect_err("empty pipe");
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn full_pipe_refuses_to_grow() {
        let mut pipe = Pipe::with_capacity(8);
        pipe.write_all(b"12345").expect("fits");
        let error = pipe.write(b"6789").expect_err("does not fit");
        assert!(error.to_string().contains("full"), "{error}");
        assert_eq!(pipe.unread(), b"12345", "a failed write writes nothing");
    }

    #[test]
    fn drained_pipe_starts_again_at_the_front() {
        let mut pipe = Pipe::with_capacity(16);
        for _ in 0..100 {
            pipe.write_all(&[7; 16]).expect("write");
            let mut out = [0u8; 16];
            assert_eq!(pipe.read(&mut out).expect("read"), 16);
            assert_eq!((pipe.start, pipe.end), (0, 0));
        }
    }
}
