//! An in-memory transport joining an OpenSSL client and server.
//!
//! Each direction is a [`Pipe`]: a byte vector the sender appends to and the
//! receiver reads from. Each side's `SslStream` runs over an [`Endpoint`], a
//! `Read + Write` over its two pipes, which the `openssl` crate wires to
//! OpenSSL through a custom BIO. No sockets, addresses or clocks are
//! involved. Inside a counted run the transport costs one copy into and one
//! copy out of a pipe per BIO call, a `RefCell` borrow and the crate's BIO
//! glue; the buffers are allocated and reserved before the count starts.
//!
//! # Why the pipes do not copy with `memcpy`
//!
//! glibc's `memcpy` moves large blocks (4 KiB and up with AVX2) with
//! `rep movsb`, and Valgrind counts every byte of a `rep movsb` as one
//! instruction. Moving 1 MiB through a pipe with `memcpy` costs about 2.1 M
//! instructions (in and out): measured, 8 % (ChaCha20) to 21 % (AES-128-GCM)
//! of a 16 KiB record harness's count, all of it the transport's rather than
//! OpenSSL's. The pipes copy large buffers 128 bytes per loop iteration with
//! AVX2 instead (about 11 instructions per 128 bytes, so the same megabyte
//! costs about 0.16 M in and out together), and leave short ones to
//! `memcpy`, which is cheapest there. The transport is still the largest
//! cost outside OpenSSL in the record harnesses (about 2 % of
//! AES-128-GCM-16k's count); no byte-moving transport is free under
//! Valgrind.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

use openssl::ssl::{ErrorCode, Ssl, SslStream};
use regress_measure::HarnessError;

use super::Context as _;

/// Upper bound on handshake rounds: TLS 1.3 needs 2-3 and TLS 1.2 3, so
/// running out means the two sides stopped making progress.
const MAX_HANDSHAKE_ROUNDS: usize = 16;

/// TLS record header length (type, version, length).
pub const RECORD_HEADER_LEN: usize = 5;

/// One direction of the transport.
///
/// A `Vec` plus a read offset rather than a ring buffer: writes append, reads
/// copy from the front, and once the reader has caught up the vector is
/// cleared so its capacity is reused from the start. Every read is one
/// contiguous copy.
#[derive(Debug, Default)]
pub struct Pipe {
    data: Vec<u8>,
    read: usize,
}

impl Pipe {
    /// A pipe that can hold `capacity` unread bytes without reallocating.
    pub fn with_capacity(capacity: usize) -> Pipe {
        Pipe {
            data: Vec::with_capacity(capacity),
            read: 0,
        }
    }

    /// Bytes written and not yet read.
    pub fn len(&self) -> usize {
        self.data.len() - self.read
    }

    /// Whether every written byte has been read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        self.data.reserve(bytes.len());
        let start = self.data.len();
        // SAFETY: `reserve` made room for `bytes.len()` more bytes after
        // `start`; `copy_to` initialises exactly those before `set_len`
        // makes them part of the vector. `bytes` cannot overlap the vector's
        // spare capacity, which nothing else can reference.
        unsafe {
            copy_to(self.data.as_mut_ptr().add(start), bytes);
            self.data.set_len(start + bytes.len());
        }
    }

    /// Moves up to `out.len()` unread bytes into `out`; returns how many.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let unread = &self.data[self.read..];
        let n = unread.len().min(out.len());
        // SAFETY: `out` has room for `n` bytes, and a `&mut` slice cannot
        // overlap the pipe's own buffer.
        unsafe { copy_to(out.as_mut_ptr(), &unread[..n]) };
        self.read += n;
        if self.read == self.data.len() {
            self.data.clear();
            self.read = 0;
        }
        n
    }

    /// The lengths of the complete TLS records waiting in the pipe, from
    /// their headers; `None` if the unread bytes do not end on a record
    /// boundary. Lets checks count records without decrypting them.
    pub fn pending_records(&self) -> Option<Vec<usize>> {
        let mut unread = &self.data[self.read..];
        let mut records = Vec::new();
        while !unread.is_empty() {
            let header = unread.get(..RECORD_HEADER_LEN)?;
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            unread = unread.get(RECORD_HEADER_LEN + len..)?;
            records.push(len);
        }
        Some(records)
    }
}

/// Below this length [`copy_to`] uses `memcpy`: glibc copies such buffers
/// with a few vector moves and never with `rep movsb` (its threshold is
/// 2 KiB on SSE2-only CPUs, 4 KiB with AVX2), and it does so more cheaply
/// than a loop could. Covers record headers and 1 KiB records.
const MEMCPY_BELOW: usize = 2048;

/// Copies `src` to `dst` without glibc's `rep movsb` path for large
/// buffers (see the module documentation). Short copies go to `memcpy`;
/// long ones are copied 128 bytes per iteration with AVX2 when the CPU has
/// it (as Valgrind's virtual CPU does), 64 bytes with SSE2 otherwise, and
/// the tail (under one block) with `memcpy`.
///
/// # Safety
///
/// `dst` must be valid for `src.len()` writes and must not overlap `src`.
unsafe fn copy_to(dst: *mut u8, src: &[u8]) {
    let len = src.len();
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if len >= MEMCPY_BELOW {
        done = if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present; the buffers are as the caller
            // promised.
            unsafe { copy_blocks_avx2(dst, src) }
        } else {
            // SAFETY: as the caller promised; SSE2 is part of x86-64.
            unsafe { copy_blocks_sse2(dst, src) }
        };
    }
    // SAFETY: the remaining `len - done` bytes are in bounds of both buffers
    // (caller's contract), which do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(done), dst.add(done), len - done) };
}

/// Copies the whole 128-byte blocks of `src` to `dst` with four 32-byte
/// AVX2 moves each; returns the bytes copied. Four separate moves per block
/// keep LLVM from turning the loop back into a `memcpy` call.
///
/// # Safety
///
/// The CPU must support AVX2; `dst` must be valid for `src.len()` writes and
/// must not overlap `src`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_blocks_avx2(dst: *mut u8, src: &[u8]) -> usize {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};
    const BLOCK: usize = 128;
    let mut done = 0;
    while done + BLOCK <= src.len() {
        // SAFETY: bytes `done..done + 128` are in bounds of `src` (loop
        // condition) and of `dst` (caller's contract); unaligned moves.
        unsafe {
            let from = src.as_ptr().add(done).cast::<__m256i>();
            let to = dst.add(done).cast::<__m256i>();
            let a = _mm256_loadu_si256(from);
            let b = _mm256_loadu_si256(from.add(1));
            let c = _mm256_loadu_si256(from.add(2));
            let d = _mm256_loadu_si256(from.add(3));
            _mm256_storeu_si256(to, a);
            _mm256_storeu_si256(to.add(1), b);
            _mm256_storeu_si256(to.add(2), c);
            _mm256_storeu_si256(to.add(3), d);
        }
        done += BLOCK;
    }
    done
}

/// [`copy_blocks_avx2`] with 16-byte SSE2 moves and 64-byte blocks.
///
/// # Safety
///
/// `dst` must be valid for `src.len()` writes and must not overlap `src`.
#[cfg(target_arch = "x86_64")]
unsafe fn copy_blocks_sse2(dst: *mut u8, src: &[u8]) -> usize {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
    const BLOCK: usize = 64;
    let mut done = 0;
    while done + BLOCK <= src.len() {
        // SAFETY: SSE2 is part of the x86-64 baseline; bytes
        // `done..done + 64` are in bounds of both buffers; unaligned moves.
        unsafe {
            let from = src.as_ptr().add(done).cast::<__m128i>();
            let to = dst.add(done).cast::<__m128i>();
            let a = _mm_loadu_si128(from);
            let b = _mm_loadu_si128(from.add(1));
            let c = _mm_loadu_si128(from.add(2));
            let d = _mm_loadu_si128(from.add(3));
            _mm_storeu_si128(to, a);
            _mm_storeu_si128(to.add(1), b);
            _mm_storeu_si128(to.add(2), c);
            _mm_storeu_si128(to.add(3), d);
        }
        done += BLOCK;
    }
    done
}

/// A pipe shared by the two ends of one direction.
pub type SharedPipe = Rc<RefCell<Pipe>>;

/// One side's view of the transport: it reads from `incoming` and writes to
/// `outgoing`.
#[derive(Debug)]
pub struct Endpoint {
    incoming: SharedPipe,
    outgoing: SharedPipe,
}

impl Read for Endpoint {
    /// Moves available bytes out of the incoming pipe. An empty pipe is
    /// `WouldBlock`, never `Ok(0)`, which OpenSSL would read as the peer
    /// closing the connection: the crate's BIO turns it into a retryable
    /// read, and OpenSSL into `SSL_ERROR_WANT_READ`.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.incoming.borrow_mut().read(buf);
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }
}

impl Write for Endpoint {
    /// Appends everything to the outgoing pipe; never blocks.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outgoing.borrow_mut().write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A client and a server `SslStream` joined by two [`Pipe`]s.
#[derive(Debug)]
pub struct Pair {
    /// The client side.
    pub client: SslStream<Endpoint>,
    /// The server side.
    pub server: SslStream<Endpoint>,
    client_to_server: SharedPipe,
    server_to_client: SharedPipe,
}

impl Pair {
    /// Joins `client` (put in connect state) and `server` (accept state).
    /// `client_to_server_capacity` is reserved for the client's outgoing
    /// bytes, so a bulk-data run never grows the pipe while it is counted.
    pub fn connect(
        mut client: Ssl,
        mut server: Ssl,
        client_to_server_capacity: usize,
    ) -> Result<Pair, HarnessError> {
        client.set_connect_state();
        server.set_accept_state();
        let client_to_server =
            Rc::new(RefCell::new(Pipe::with_capacity(client_to_server_capacity)));
        // Server flights (an RSA-4096 chain is about 3 KiB) and tickets are
        // a few KiB; reserve enough that they never reallocate either.
        let server_to_client = Rc::new(RefCell::new(Pipe::with_capacity(64 * 1024)));
        let client = SslStream::new(
            client,
            Endpoint {
                incoming: Rc::clone(&server_to_client),
                outgoing: Rc::clone(&client_to_server),
            },
        )
        .context("creating the client stream")?;
        let server = SslStream::new(
            server,
            Endpoint {
                incoming: Rc::clone(&client_to_server),
                outgoing: Rc::clone(&server_to_client),
            },
        )
        .context("creating the server stream")?;
        Ok(Pair {
            client,
            server,
            client_to_server,
            server_to_client,
        })
    }

    /// Drives both sides, client first, until both report the handshake
    /// complete.
    ///
    /// Each round calls `SSL_do_handshake` once on each side; a side that
    /// has finished returns success again at once without reading. The loop
    /// is bounded so a stuck handshake is an error, not a hang.
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            let client_done = step(&mut self.client).context("client handshake failed")?;
            let server_done = step(&mut self.server).context("server handshake failed")?;
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
        (
            self.client_to_server.borrow().len(),
            self.server_to_client.borrow().len(),
        )
    }

    /// The lengths of the records the server sent that the client has not
    /// read (see [`Pipe::pending_records`]).
    pub fn pending_server_records(&self) -> Option<Vec<usize>> {
        self.server_to_client.borrow().pending_records()
    }

    /// The lengths of the records the client sent that the server has not
    /// read.
    pub fn pending_client_records(&self) -> Option<Vec<usize>> {
        self.client_to_server.borrow().pending_records()
    }
}

/// One `SSL_do_handshake`: `Ok(true)` when done, `Ok(false)` when it waits
/// for the peer.
fn step(stream: &mut SslStream<Endpoint>) -> Result<bool, openssl::ssl::Error> {
    match stream.do_handshake() {
        Ok(()) => Ok(true),
        Err(e) if e.code() == ErrorCode::WANT_READ => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_reads_what_was_written_in_order() {
        let mut pipe = Pipe::with_capacity(8);
        pipe.write(b"hello");
        pipe.write(b" world");
        assert_eq!(pipe.len(), 11);
        let mut out = [0u8; 4];
        assert_eq!(pipe.read(&mut out), 4);
        assert_eq!(&out, b"hell");
        let mut rest = [0u8; 32];
        assert_eq!(pipe.read(&mut rest), 7);
        assert_eq!(&rest[..7], b"o world");
        assert!(pipe.is_empty());
        assert_eq!(pipe.read(&mut rest), 0);
    }

    #[test]
    fn copies_are_exact_at_every_length_and_offset() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [
            0, 1, 15, 63, 64, 65, 127, 128, 129, 500, 2047, 2048, 2049, 2175, 4999,
        ] {
            for offset in [0, 1, 7] {
                let mut pipe = Pipe::with_capacity(4);
                pipe.write(&src[offset.min(len)..len]);
                let mut out = vec![0u8; len + 3];
                let n = pipe.read(&mut out[3..]);
                assert_eq!(&out[3..3 + n], &src[offset.min(len)..len], "{len}/{offset}");
                assert_eq!(&out[..3], &[0, 0, 0]);
            }
        }
    }

    /// The SSE2 fallback (AVX2 machines never take it in the other tests).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sse2_blocks_copy_exactly() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 13) as u8).collect();
        let mut dst = vec![0u8; 300];
        // SAFETY: `dst` has room for all of `src` and is a separate buffer.
        let n = unsafe { copy_blocks_sse2(dst.as_mut_ptr(), &src) };
        assert_eq!(n, 256);
        assert_eq!(dst[..256], src[..256]);
        assert!(dst[256..].iter().all(|&b| b == 0));
    }

    #[test]
    fn drained_pipe_reuses_its_capacity() {
        let mut pipe = Pipe::with_capacity(16);
        let capacity = pipe.data.capacity();
        for _ in 0..100 {
            pipe.write(&[7; 16]);
            let mut out = [0u8; 16];
            assert_eq!(pipe.read(&mut out), 16);
        }
        assert_eq!(pipe.data.capacity(), capacity);
    }

    #[test]
    fn empty_endpoint_would_block_instead_of_signalling_eof() {
        let pipe = Rc::new(RefCell::new(Pipe::default()));
        let mut endpoint = Endpoint {
            incoming: Rc::clone(&pipe),
            outgoing: Rc::clone(&pipe),
        };
        let mut out = [0u8; 4];
        let error = endpoint.read(&mut out).expect_err("empty pipe");
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(endpoint.write(b"ab").expect("write"), 2);
        assert_eq!(endpoint.read(&mut out).expect("read"), 2);
    }

    #[test]
    fn pending_records_follows_headers() {
        let mut pipe = Pipe::default();
        pipe.write(&[23, 3, 3, 0, 2, 0xaa, 0xbb]);
        pipe.write(&[23, 3, 3, 0, 1, 0xcc]);
        assert_eq!(pipe.pending_records(), Some(vec![2, 1]));
        let mut out = [0u8; 7];
        pipe.read(&mut out);
        assert_eq!(pipe.pending_records(), Some(vec![1]));
        pipe.write(&[23, 3]);
        assert_eq!(pipe.pending_records(), None, "a partial header");
    }
}
