//! Feature paths: what one library's users rely on beyond the shared paths.

/// A feature path: what one library's users rely on beyond the paths every
/// library shares. Each runs on the pins of [`Handshake::RSA4096`] (TLS 1.3,
/// AES-128-GCM, secp256r1) unless its harness says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// A TLS 1.3 handshake with an external pre-shared key (psk_dhe_ke):
    /// no certificate, a secp256r1 key exchange.
    ExternalPsk,
    /// Serializing an established TLS 1.3 connection and deserializing it
    /// into a fresh one.
    Serialization,
    /// A full ECDSA P-256 handshake whose server signs through an
    /// asynchronous private-key callback.
    AsyncPrivateKey,
    /// A full ECDSA P-256 handshake whose server runs a ClientHello
    /// callback that reads the server name.
    ClientHelloCallback,
    /// After an mTLS ECDSA P-256 handshake, the server reading what an
    /// access log records about the connection (version, suite, group,
    /// signature scheme, handshake type, the client's chain) and the
    /// client's identity from a private extension of its leaf.
    ConnectionInfo,
}

impl Feature {
    /// Every feature path.
    pub const ALL: [Feature; 5] = [
        Feature::ExternalPsk,
        Feature::Serialization,
        Feature::AsyncPrivateKey,
        Feature::ClientHelloCallback,
        Feature::ConnectionInfo,
    ];

    /// The second half of its benchmark's name.
    pub const fn name(self) -> &'static str {
        match self {
            Feature::ExternalPsk => "psk_handshake",
            Feature::Serialization => "connection_serialize",
            Feature::AsyncPrivateKey => "async_private_key",
            Feature::ClientHelloCallback => "client_hello_callback",
            Feature::ConnectionInfo => "connection_info",
        }
    }
}
