//! The harness shapes every TLS library shares, and what a library provides
//! to fill them.
//!
//! A full handshake and a record transfer are measured the same way for
//! every library: the same split into setup, prepare, run and check, the
//! same payload, the same transport, the same pins. That shape exists once
//! ([`handshake::FullHandshake`], [`record::Records`]); each library
//! implements [`Tls`]: how it builds configs from a profile, makes a fresh
//! connection pair, handshakes, moves application data and reports what it
//! negotiated. What differs too much to share (session resumption, config
//! building, X.509) stays a harness of the library's own.

pub mod handshake;
pub mod record;
#[cfg(test)]
pub mod testing;

use regress_measure::HarnessError;

use crate::common::pins::{Expected, Negotiated};
use crate::paths::Profile;

/// A TLS library, as the shared harnesses drive it.
pub trait Tls: 'static {
    /// A client and a server config built from a [`Profile`], shared by
    /// every run (as a server shares its config).
    type Configs;
    /// What one full-handshake run starts from: a fresh client and server
    /// joined by the transport (or, for rustls, a server waiting for its
    /// client, since creating a rustls client already writes its
    /// ClientHello).
    type Fresh;
    /// A client and a server after a handshake, joined by the transport.
    type Pair;

    /// Both configs of `profile` (`setup`, not counted).
    fn configs(profile: &Profile) -> Result<Self::Configs, HarnessError>;

    /// A fresh connection pair on `configs` (`prepare`, not counted).
    fn fresh(configs: &Self::Configs) -> Result<Self::Fresh, HarnessError>;

    /// The full handshake: what a handshake path counts.
    fn handshake(configs: &Self::Configs, fresh: Self::Fresh) -> Result<Self::Pair, HarnessError>;

    /// What each side reports it negotiated. `handshake` says whether this
    /// is the check right after the handshake (a library may report some
    /// parameters only once).
    fn negotiated(
        configs: &Self::Configs,
        pair: &Self::Pair,
        handshake: bool,
    ) -> Result<[(&'static str, Negotiated); 2], HarnessError>;

    /// Checks a finished handshake against `expected`: the shared
    /// comparison of [`Tls::negotiated`], and what only this library
    /// reports (handshake type, certificates, SNI, what is left in the
    /// transport).
    fn check(
        configs: &Self::Configs,
        pair: &Self::Pair,
        expected: &Expected,
    ) -> Result<(), HarnessError>;

    /// Moves `payload` from client to server in `write_size`-byte writes
    /// into `received`; returns the bytes the server read. What a record
    /// path counts.
    fn transfer(
        pair: &mut Self::Pair,
        payload: &[u8],
        write_size: usize,
        received: &mut [u8],
    ) -> Result<usize, HarnessError>;

    /// Unread bytes in each direction: `(client to server, server to
    /// client)`.
    fn in_flight(pair: &Self::Pair) -> (usize, usize);

    /// Checks what only this library can tell after a transfer (rustls:
    /// that the client has nothing left to send).
    fn check_transfer(_pair: &Self::Pair) -> Result<(), HarnessError> {
        Ok(())
    }

    /// Run-time library versions for the fingerprint
    /// ([`regress_measure::Harness::runtime_libraries`]).
    fn runtime_libraries() -> Vec<(String, String)> {
        Vec::new()
    }
}
