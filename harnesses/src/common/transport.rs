//! The one in-memory transport between a client and a server, for every
//! library.
//!
//! Each direction is a [`Pipe`]: a fixed buffer the sender copies into and
//! the receiver copies out of. Each side holds an [`Endpoint`]: it reads
//! from one pipe and writes to the other. No sockets, addresses or clocks
//! are involved, and nothing is allocated while a run is counted: the pipes
//! are allocated when a connection pair is made (`prepare`), never grow, and
//! start again at the front whenever they are drained.
//!
//! Each library adapts the same endpoint to its own IO interface:
//!
//! - s2n-tls: its send and receive callbacks call [`Endpoint::send`] and
//!   [`Endpoint::receive`] (`s2n_tls::transport`);
//! - OpenSSL: the `openssl` crate's custom BIO drives an `SslStream` over an
//!   endpoint through [`std::io::Read`] and [`std::io::Write`];
//! - rustls: `read_tls` and `write_tls` take the endpoint through the same
//!   traits.
//!
//! So the transport's own cost is the same code for every library: a
//! `RefCell` borrow, a few instructions of bookkeeping and one plain copy
//! (`copy_from_slice`, glibc's `memcpy`) per call, each way. The copy is
//! what a socket would do in the kernel, where Valgrind does not count it;
//! here glibc's `memcpy` is counted, and the runner keeps it off
//! `rep movsb` (which Valgrind counts per byte) with `GLIBC_TUNABLES` in
//! every measured child. Two things differ by library because their APIs
//! do: how often each library calls (s2n-tls reads a record's header and
//! body separately, rustls reads at most 4 KiB per `read_tls`), and the
//! glue between the library and the endpoint (a C callback, the crate's
//! BIO, a trait call).
//!
//! The semantics every library relies on: an empty pipe *would block*
//! (never end-of-file, which all three would read as the peer closing), and
//! a write that does not fit is an error (never partial, never growing).

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

/// Room in each direction: a handshake's flights (a few KiB, RSA-4096
/// chains included) and a full-size record (16 KiB plus at most 22 bytes in
/// TLS 1.3) fit with plenty to spare. Record paths read each record before
/// the next is written, so one record is the most a pipe holds.
pub const PIPE_CAPACITY: usize = 64 * 1024;

/// Length of a TLS record header (type, version, length).
pub const RECORD_HEADER_LEN: usize = 5;

/// Upper bound on the rounds of a handshake loop (one step of each side per
/// round). TLS 1.3 needs two or three, TLS 1.2 three or four; running out
/// means the sides stopped making progress, which is an error, not a hang.
pub const MAX_HANDSHAKE_ROUNDS: usize = 16;

/// One direction: a fixed buffer with a read and a write position.
///
/// Writes copy in at the write position, reads copy out from the read
/// position, and once the reader has caught up both go back to the start,
/// so every read and write is one contiguous copy.
#[derive(Debug)]
pub struct Pipe {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Pipe {
    /// An empty pipe that holds at most `capacity` unread bytes.
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

    /// Appends all of `bytes`, or fails without writing any.
    #[inline(always)]
    pub fn push(&mut self, bytes: &[u8]) -> io::Result<usize> {
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

    /// Appends every slice in turn; the general case of a vectored write.
    #[inline(never)]
    fn push_each(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let mut written = 0;
        for buf in bufs {
            written += self.push(buf)?;
        }
        Ok(written)
    }

    /// Appends every slice: rustls writes all its queued records with one
    /// vectored write, and taking all of them at once (`Write`'s default
    /// takes only the first) keeps its calls, and so their glue, minimal.
    #[inline]
    pub fn push_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        // One slice: the usual case, kept free of the loop (which would make
        // every call save and restore more registers).
        if let [buf] = bufs {
            return self.push(buf);
        }
        self.push_each(bufs)
    }

    /// Moves up to `out.len()` unread bytes into `out`. An empty pipe would
    /// block: it is never `Ok(0)`, which a TLS library takes for the peer
    /// closing the connection.
    #[inline]
    pub fn pull(&mut self, out: &mut [u8]) -> io::Result<usize> {
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

    /// The lengths of the complete TLS records waiting in the pipe, from
    /// their headers; `None` if the unread bytes do not end on a record
    /// boundary. Lets checks count records without decrypting them.
    pub fn pending_records(&self) -> Option<Vec<usize>> {
        let (records, rest) = split_records(self.unread());
        rest.is_empty().then_some(records)
    }
}

/// The lengths of the whole TLS records `bytes` starts with, from their
/// headers, and what follows them: a record cut short, or nothing when
/// `bytes` ends on a record boundary.
pub fn split_records(mut bytes: &[u8]) -> (Vec<usize>, &[u8]) {
    let mut records = Vec::new();
    while let Some(header) = bytes.get(..RECORD_HEADER_LEN) {
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let Some(rest) = bytes.get(RECORD_HEADER_LEN + len..) else {
            break;
        };
        records.push(len);
        bytes = rest;
    }
    (records, bytes)
}

#[cold]
#[inline(never)]
fn pipe_full(capacity: usize) -> io::Error {
    io::Error::other(format!("in-memory pipe full ({capacity} bytes)"))
}

#[cold]
#[inline(never)]
fn reentered() -> io::Error {
    io::Error::other("the in-memory transport was re-entered from one of its own calls")
}

/// One side's view of the transport: it reads from `incoming` and writes to
/// `outgoing`, which the other side's endpoint holds the other way round.
#[derive(Debug)]
pub struct Endpoint {
    incoming: Rc<RefCell<Pipe>>,
    outgoing: Rc<RefCell<Pipe>>,
}

/// Two empty pipes of [`PIPE_CAPACITY`], as the ends of a client and a
/// server: `(client, server)`.
pub fn connected() -> (Endpoint, Endpoint) {
    let client_to_server = Rc::new(RefCell::new(Pipe::with_capacity(PIPE_CAPACITY)));
    let server_to_client = Rc::new(RefCell::new(Pipe::with_capacity(PIPE_CAPACITY)));
    (
        Endpoint {
            incoming: Rc::clone(&server_to_client),
            outgoing: Rc::clone(&client_to_server),
        },
        Endpoint {
            incoming: client_to_server,
            outgoing: server_to_client,
        },
    )
}

impl Endpoint {
    /// Sends all of `bytes` to the peer ([`Pipe::push`]). Takes `&self`:
    /// the pipes are `RefCell`s, so C callbacks need only a shared pointer;
    /// a re-entered call is an error, never a panic across FFI.
    #[inline(always)]
    pub fn send(&self, bytes: &[u8]) -> io::Result<usize> {
        match self.outgoing.try_borrow_mut() {
            Ok(mut pipe) => pipe.push(bytes),
            Err(_) => Err(reentered()),
        }
    }

    /// Receives what the peer sent, up to `out.len()` bytes
    /// ([`Pipe::pull`]: an empty pipe would block).
    #[inline(always)]
    pub fn receive(&self, out: &mut [u8]) -> io::Result<usize> {
        match self.incoming.try_borrow_mut() {
            Ok(mut pipe) => pipe.pull(out),
            Err(_) => Err(reentered()),
        }
    }

    /// Whether the peer sent bytes this side has not read.
    #[inline(always)]
    pub fn has_incoming(&self) -> bool {
        !self.incoming.borrow().is_empty()
    }

    /// Unread bytes in each direction, from this side: `(outgoing,
    /// incoming)`; from the client's endpoint that is `(client to server,
    /// server to client)`.
    pub fn in_flight(&self) -> (usize, usize) {
        (self.outgoing.borrow().len(), self.incoming.borrow().len())
    }

    /// The records this side sent that the peer has not read
    /// ([`Pipe::pending_records`]).
    pub fn outgoing_records(&self) -> Option<Vec<usize>> {
        self.outgoing.borrow().pending_records()
    }

    /// The records the peer sent that this side has not read.
    pub fn incoming_records(&self) -> Option<Vec<usize>> {
        self.incoming.borrow().pending_records()
    }

    /// The unread bytes the peer sent, copied (for tests and checks).
    pub fn incoming_bytes(&self) -> Vec<u8> {
        self.incoming.borrow().unread().to_vec()
    }

    /// Discards what the peer sent and this side has not read.
    pub fn discard_incoming(&self) {
        let mut pipe = self.incoming.borrow_mut();
        pipe.start = 0;
        pipe.end = 0;
    }
}

impl io::Read for Endpoint {
    #[inline(always)]
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.receive(out)
    }
}

impl io::Write for Endpoint {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.send(bytes)
    }

    #[inline(always)]
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self.outgoing.try_borrow_mut() {
            Ok(mut pipe) => pipe.push_vectored(bufs),
            Err(_) => Err(reentered()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn pipe_reads_what_was_written_in_order() {
        let mut pipe = Pipe::with_capacity(16);
        pipe.push(b"hello").expect("write");
        let written = pipe
            .push_vectored(&[io::IoSlice::new(b" wo"), io::IoSlice::new(b"rld")])
            .expect("vectored write");
        assert_eq!(written, 6, "a vectored write takes every slice");
        assert_eq!(pipe.len(), 11);
        assert_eq!(pipe.unread(), b"hello world");
        let mut out = [0u8; 4];
        assert_eq!(pipe.pull(&mut out).expect("read"), 4);
        assert_eq!(&out, b"hell");
        let mut rest = [0u8; 32];
        assert_eq!(pipe.pull(&mut rest).expect("read"), 7);
        assert_eq!(&rest[..7], b"o world");
        assert!(pipe.is_empty());
    }

    #[test]
    fn empty_pipe_would_block_instead_of_signalling_eof() {
        let mut pipe = Pipe::with_capacity(8);
        let error = pipe.pull(&mut [0u8; 4]).expect_err("empty pipe");
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn full_pipe_refuses_to_grow() {
        let mut pipe = Pipe::with_capacity(8);
        pipe.push(b"12345").expect("fits");
        let error = pipe.push(b"6789").expect_err("does not fit");
        assert!(error.to_string().contains("full"), "{error}");
        assert_eq!(pipe.unread(), b"12345", "a failed write writes nothing");
    }

    #[test]
    fn drained_pipe_starts_again_at_the_front() {
        let mut pipe = Pipe::with_capacity(16);
        for _ in 0..100 {
            pipe.push(&[7; 16]).expect("write");
            let mut out = [0u8; 16];
            assert_eq!(pipe.pull(&mut out).expect("read"), 16);
            assert_eq!((pipe.start, pipe.end), (0, 0));
        }
    }

    #[test]
    fn pending_records_follows_headers() {
        let mut pipe = Pipe::with_capacity(64);
        pipe.push(&[23, 3, 3, 0, 2, 0xaa, 0xbb]).expect("write");
        pipe.push(&[23, 3, 3, 0, 1, 0xcc]).expect("write");
        assert_eq!(pipe.pending_records(), Some(vec![2, 1]));
        pipe.pull(&mut [0u8; 7]).expect("read");
        assert_eq!(pipe.pending_records(), Some(vec![1]));
        pipe.push(&[23, 3]).expect("write");
        assert_eq!(pipe.pending_records(), None, "a partial header");
    }

    #[test]
    fn endpoints_are_crossed() {
        let (mut client, mut server) = connected();
        assert_eq!(client.write(b"hello").expect("write"), 5);
        assert_eq!(client.in_flight(), (5, 0));
        assert_eq!(server.in_flight(), (0, 5));
        assert!(server.has_incoming() && !client.has_incoming());
        let mut out = [0u8; 8];
        assert_eq!(server.read(&mut out).expect("read"), 5);
        assert_eq!(&out[..5], b"hello");
        let error = server.read(&mut out).expect_err("drained");
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        server.send(&[23, 3, 3, 0, 0]).expect("send");
        assert_eq!(client.incoming_records(), Some(vec![0]));
        assert_eq!(server.outgoing_records(), Some(vec![0]));
        client.discard_incoming();
        assert_eq!(client.in_flight(), (0, 0));
    }

    #[test]
    fn a_reentered_endpoint_fails_instead_of_panicking() {
        let (client, server) = connected();
        let _held = server.incoming.borrow_mut();
        assert!(client.send(b"x").is_err());
        assert!(server.receive(&mut [0u8; 1]).is_err());
    }
}
