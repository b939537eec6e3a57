//! The fairness pins, as typed values every library maps, and the one
//! comparison of what a path pins with what a connection negotiated.
//!
//! On a shared path the three TLS libraries must negotiate the same thing,
//! or their counts compare defaults rather than code (left alone, s2n-tls
//! picks AES-128-GCM with secp256r1, rustls AES-256-GCM with X25519MLKEM768,
//! OpenSSL AES-256-GCM with X25519). So every path pins a protocol version,
//! a cipher suite, a key-exchange group and a handshake signature scheme
//! ([`Pins`]); each library builds its configs from them (a security policy,
//! a crypto provider, an `SslContext`) and, after the handshake, reports
//! what it negotiated as a [`Negotiated`] per side. [`Expected::check`]
//! compares the two and words the error. A library upgrade that changes a
//! default therefore fails a check instead of silently moving a count.
//!
//! The pieces, in the order a path uses them:
//! - [`protocol`]: the protocol version, what protects records, the cipher
//!   suite;
//! - [`group`]: the key-exchange group;
//! - [`signature`]: the handshake signature scheme;
//! - [`expected`]: what a finished handshake must show ([`Expected`]), what
//!   a library reported ([`Negotiated`]) and the comparison of the two.

mod expected;
mod group;
mod protocol;
mod signature;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub use expected::every_other_expectation;
pub use expected::{Expected, Negotiated, Seen};
pub use group::NamedGroup;
pub use protocol::{Cipher, CipherSuite, TlsVersion};
pub use signature::SignatureScheme;

/// What a path pins: the parameters all libraries must negotiate on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pins {
    pub version: TlsVersion,
    pub suite: CipherSuite,
    pub group: NamedGroup,
    /// The scheme of every handshake signature (server, and mTLS client).
    pub scheme: SignatureScheme,
}
