//! The key-exchange group.

use super::Seen;

/// A key-exchange group. The laboratory paths pin secp256r1 (every library
/// can, so they compare); X25519 and the post-quantum hybrid X25519MLKEM768
/// (ML-KEM-768 with X25519, the default of rustls, of s2n-tls's `default_pq`
/// policy, of OpenSSL 3.5 and of browsers in 2026) are what real
/// connections negotiate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedGroup {
    Secp256r1,
    X25519,
    X25519MlKem768,
    /// RFC 7919's 2048-bit finite-field group, as the DH parameters a
    /// TLS 1.2 DHE server is configured with ([`NamedGroup::dh_params_pem`]):
    /// s2n-tls and OpenSSL do not negotiate it by name in TLS 1.2, they use
    /// the server's parameters, and report no group
    /// ([`Expected::group`]).
    Ffdhe2048,
}

impl NamedGroup {
    /// Every group, for lookups.
    pub const ALL: [NamedGroup; 4] = [
        NamedGroup::Secp256r1,
        NamedGroup::X25519,
        NamedGroup::X25519MlKem768,
        NamedGroup::Ffdhe2048,
    ];

    /// Its TLS name, as s2n-tls and OpenSSL report it.
    pub const fn name(self) -> &'static str {
        match self {
            NamedGroup::Secp256r1 => "secp256r1",
            NamedGroup::X25519 => "x25519",
            NamedGroup::X25519MlKem768 => "X25519MLKEM768",
            NamedGroup::Ffdhe2048 => "ffdhe2048",
        }
    }

    /// How path names carry it: `secp256r1`, `x25519`, `x25519mlkem768`.
    pub const fn label(self) -> &'static str {
        match self {
            NamedGroup::Secp256r1 => "secp256r1",
            NamedGroup::X25519 => "x25519",
            NamedGroup::X25519MlKem768 => "x25519mlkem768",
            NamedGroup::Ffdhe2048 => "ffdhe2048",
        }
    }

    /// Its IANA code point (what rustls reports).
    pub const fn iana(self) -> u16 {
        match self {
            NamedGroup::Secp256r1 => 23,
            NamedGroup::X25519 => 29,
            NamedGroup::X25519MlKem768 => 0x11ec,
            NamedGroup::Ffdhe2048 => 0x0100,
        }
    }

    /// Whether it is a finite-field (DHE) group.
    pub const fn is_finite_field(self) -> bool {
        matches!(self, NamedGroup::Ffdhe2048)
    }

    /// The PKCS#3 DH parameters a server of this group is configured with
    /// (finite-field groups only).
    pub const fn dh_params_pem(self) -> Option<&'static [u8]> {
        match self {
            NamedGroup::Ffdhe2048 => Some(include_bytes!("../../../certs/ffdhe2048.pem")),
            _ => None,
        }
    }

    /// Whether it is a post-quantum hybrid.
    pub const fn is_post_quantum(self) -> bool {
        matches!(self, NamedGroup::X25519MlKem768)
    }

    /// A library's report, by name (OpenSSL writes X25519 in capitals).
    pub fn from_name(name: &str) -> Seen<NamedGroup> {
        Seen::find(
            NamedGroup::ALL,
            |group| group.name().eq_ignore_ascii_case(name),
            name,
        )
    }

    /// A library's report, by IANA code point.
    pub fn from_iana(code: u16) -> Seen<NamedGroup> {
        Seen::find(NamedGroup::ALL, |group| group.iana() == code, code)
    }
}
