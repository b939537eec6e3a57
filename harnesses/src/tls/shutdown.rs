//! [`Shutdown`]: the end every well-behaved TLS connection takes, a
//! close_notify each way, for any TLS library.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError};

use super::Tls;
use crate::common::error::Context as _;
use crate::paths::Handshake;

/// A TLS library whose connections can be closed as RFC 8446 section 6.1
/// says: each side sends a close_notify alert and reads the other's.
pub trait Closure: Tls {
    /// The client sends close_notify; the server reads it and sends its
    /// own; the client reads that. What the shutdown path counts. Returns
    /// whether each side received the other's close_notify, as the library
    /// reported it: `(client received, server received)`.
    fn shutdown(pair: &mut Self::Pair) -> Result<(bool, bool), HarnessError>;
}

/// A connection after its shutdown, and what the library reported.
pub struct Closed<P> {
    pub pair: P,
    /// `(client received the server's close_notify, server received the
    /// client's)`.
    pub received: (bool, bool),
}

/// The connection a shutdown closes: handshake_rsa4096's, established
/// outside the count.
pub const CLOSED: Handshake = Handshake::RSA4096;

/// Closing an established connection of library `L`.
///
/// **Counted:** [`Closure::shutdown`]: the client encrypting and sending a
/// close_notify alert, the server decrypting it, answering with its own,
/// and the client decrypting that: both sides' alert and shutdown code, as
/// every connection that ends cleanly runs it.
///
/// **Not counted:** configs (`setup`), the connection and its full
/// handshake (`prepare`, checked there).
///
/// **Check:** both sides report having received the peer's close_notify
/// (a connection that was not closed fails it), and nothing is left in the
/// transport.
pub struct Shutdown<L>(PhantomData<fn() -> L>);

impl<L> Shutdown<L> {
    /// The harness.
    pub const fn new() -> Shutdown<L> {
        Shutdown(PhantomData)
    }
}

impl<L> Default for Shutdown<L> {
    fn default() -> Self {
        Shutdown::new()
    }
}

/// Checks that both sides received the other's close_notify and nothing
/// is left in the transport.
pub fn check_closed<L: Closure>(closed: &Closed<L::Pair>) -> Result<(), HarnessError> {
    let (client, server) = closed.received;
    if !(client && server) {
        return Err(format!(
            "close_notify received: client {client}, server {server}; expected both"
        )
        .into());
    }
    let in_flight = L::in_flight(&closed.pair);
    if in_flight != (0, 0) {
        return Err(
            format!("bytes left in the transport after the shutdown: {in_flight:?}").into(),
        );
    }
    Ok(())
}

impl<L: Closure> Harness for Shutdown<L> {
    type Setup = L::Configs;
    type Input = L::Pair;
    type Output = Closed<L::Pair>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<L::Configs, HarnessError> {
        L::configs(&CLOSED.profile())
    }

    fn prepare(&self, configs: &L::Configs) -> Result<L::Pair, HarnessError> {
        let pair = L::handshake(configs, L::fresh(configs)?)
            .context("the handshake before the shutdown")?;
        L::check(configs, &pair, &CLOSED.expected())?;
        Ok(pair)
    }

    fn run(&self, _: &L::Configs, mut pair: L::Pair) -> Result<Closed<L::Pair>, HarnessError> {
        let received = L::shutdown(&mut pair)?;
        Ok(Closed { pair, received })
    }

    fn check(&self, _: &L::Configs, closed: &Closed<L::Pair>) -> Result<(), HarnessError> {
        check_closed::<L>(closed)
    }
}
