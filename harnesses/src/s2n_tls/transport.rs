//! An in-memory transport joining an s2n-tls client and server.
//!
//! Each direction is a [`Pipe`]: a byte vector the sender appends to and the
//! receiver reads from, wired to s2n-tls through its send/receive callbacks.
//! No sockets, addresses or clocks are involved, so the transport adds the
//! same few instructions to every run; and its only cost inside a counted run
//! is a `memcpy` per callback, since the buffers are allocated (and, for bulk
//! data, reserved) before the count starts.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::Poll;

use libc::{c_int, c_void};
use regress_measure::HarnessError;
use s2n_tls::connection::Connection;

use super::Context as _;

/// Upper bound on `poll_negotiate` rounds: a TLS 1.3 handshake needs a handful,
/// so running out means the two sides stopped making progress.
const MAX_HANDSHAKE_ROUNDS: usize = 64;

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
        self.data.extend_from_slice(bytes);
    }

    /// Moves up to `out.len()` unread bytes into `out`; returns how many.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let unread = &self.data[self.read..];
        let n = unread.len().min(out.len());
        out[..n].copy_from_slice(&unread[..n]);
        self.read += n;
        if self.read == self.data.len() {
            self.data.clear();
            self.read = 0;
        }
        n
    }
}

/// The shared handle s2n-tls's callbacks receive as their context pointer.
type SharedPipe = Rc<RefCell<Pipe>>;

/// A client and a server connection joined by two [`Pipe`]s.
///
/// The connections hold raw pointers to the pipes (their callback contexts).
/// The pipes are reference counted and owned here, and the connections are
/// declared first so they are dropped first: a connection never outlives the
/// pipes it points to.
pub struct Pair {
    /// The client side.
    pub client: Connection,
    /// The server side.
    pub server: Connection,
    client_to_server: SharedPipe,
    server_to_client: SharedPipe,
}

impl std::fmt::Debug for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pair")
            .field("client_to_server", &self.client_to_server.borrow().len())
            .field("server_to_client", &self.server_to_client.borrow().len())
            .finish_non_exhaustive()
    }
}

impl Pair {
    /// Joins `client` and `server`. `client_to_server_capacity` is reserved
    /// for the client's outgoing bytes, so a bulk-data run never grows the
    /// pipe while it is being counted.
    pub fn connect(
        mut client: Connection,
        mut server: Connection,
        client_to_server_capacity: usize,
    ) -> Result<Pair, HarnessError> {
        let client_to_server =
            Rc::new(RefCell::new(Pipe::with_capacity(client_to_server_capacity)));
        // Handshake flights from the server (certificate chain included) are
        // a few KiB; reserve enough that they never reallocate either.
        let server_to_client = Rc::new(RefCell::new(Pipe::with_capacity(64 * 1024)));
        wire(&mut client, &client_to_server, &server_to_client).context("wiring the client")?;
        wire(&mut server, &server_to_client, &client_to_server).context("wiring the server")?;
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
    /// Each round calls `poll_negotiate` once on each side; a side that has
    /// finished answers `Ready` again at once. The loop is bounded so a stuck
    /// handshake is an error, not a hang.
    pub fn handshake(&mut self) -> Result<(), HarnessError> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            let client_done = match self.client.poll_negotiate() {
                Poll::Ready(Ok(_)) => true,
                Poll::Ready(Err(e)) => return Err(e).context("client handshake failed"),
                Poll::Pending => false,
            };
            let server_done = match self.server.poll_negotiate() {
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
        (
            self.client_to_server.borrow().len(),
            self.server_to_client.borrow().len(),
        )
    }
}

/// Points `connection`'s send callback at `send` and its receive callback at
/// `recv`.
fn wire(
    connection: &mut Connection,
    send: &SharedPipe,
    recv: &SharedPipe,
) -> Result<(), s2n_tls::error::Error> {
    connection
        .set_send_callback(Some(send_cb))?
        .set_receive_callback(Some(recv_cb))?;
    // SAFETY: the contexts point into `Rc` allocations that `Pair` keeps
    // alive, and `Pair` drops its connections before its pipes, so the
    // pointers are valid whenever s2n-tls can call the callbacks. The
    // callbacks only take shared references and mutate through the `RefCell`.
    unsafe {
        connection
            .set_send_context(Rc::as_ptr(send) as *mut c_void)?
            .set_receive_context(Rc::as_ptr(recv) as *mut c_void)?;
    }
    Ok(())
}

/// s2n-tls send callback: appends the bytes to the pipe; never blocks.
///
/// # Safety
///
/// `context` must point to a live `RefCell<Pipe>` and `data` to `len`
/// readable bytes; s2n-tls guarantees the latter, [`wire`] the former.
unsafe extern "C" fn send_cb(context: *mut c_void, data: *const u8, len: u32) -> c_int {
    let pipe = &*(context as *const RefCell<Pipe>);
    // A callback cannot return more than `c_int::MAX`; accept at most that.
    let len = (len as usize).min(c_int::MAX as usize);
    let Ok(mut pipe) = pipe.try_borrow_mut() else {
        // Re-entered from inside another callback: impossible with s2n-tls's
        // single-threaded IO, but fail the IO rather than panic across FFI.
        errno::set_errno(errno::Errno(libc::EIO));
        return -1;
    };
    pipe.write(std::slice::from_raw_parts(data, len));
    len as c_int
}

/// s2n-tls receive callback: moves available bytes out of the pipe.
///
/// An empty pipe must not return 0, which s2n-tls reads as the peer closing
/// the connection: it returns -1 with `errno` set to `EWOULDBLOCK`, which
/// s2n-tls turns into "blocked on read", and `poll_*` into `Pending`.
///
/// # Safety
///
/// `context` must point to a live `RefCell<Pipe>` and `data` to `len`
/// writable bytes; s2n-tls guarantees the latter, [`wire`] the former.
unsafe extern "C" fn recv_cb(context: *mut c_void, data: *mut u8, len: u32) -> c_int {
    let pipe = &*(context as *const RefCell<Pipe>);
    let len = (len as usize).min(c_int::MAX as usize);
    let Ok(mut pipe) = pipe.try_borrow_mut() else {
        errno::set_errno(errno::Errno(libc::EIO));
        return -1;
    };
    let n = pipe.read(std::slice::from_raw_parts_mut(data, len));
    if n == 0 {
        errno::set_errno(errno::Errno(libc::EWOULDBLOCK));
        return -1;
    }
    n as c_int
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
    fn empty_pipe_blocks_instead_of_signalling_eof() {
        let pipe = RefCell::new(Pipe::default());
        let mut out = [0u8; 4];
        // SAFETY: a live pipe and a writable buffer of the stated length.
        let n = unsafe {
            recv_cb(
                &pipe as *const RefCell<Pipe> as *mut c_void,
                out.as_mut_ptr(),
                out.len() as u32,
            )
        };
        assert_eq!(n, -1);
        assert_eq!(errno::errno().0, libc::EWOULDBLOCK);
    }
}
