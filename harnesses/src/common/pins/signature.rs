//! The handshake signature scheme.

use super::Seen;

/// A handshake signature scheme (CertificateVerify, TLS 1.2
/// ServerKeyExchange). Each PKI's keys sign with exactly one
/// (`Pki::signature_scheme`), except on the CBC record paths, whose
/// 2017-era peers sign with PKCS#1 v1.5 (`Record::profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureScheme {
    RsaPssRsaeSha256,
    EcdsaSecp256r1Sha256,
    RsaPkcs1Sha256,
}

impl SignatureScheme {
    /// Its TLS 1.3 name, as s2n-tls reports it and OpenSSL takes it.
    pub const fn name(self) -> &'static str {
        match self {
            SignatureScheme::RsaPssRsaeSha256 => "rsa_pss_rsae_sha256",
            SignatureScheme::EcdsaSecp256r1Sha256 => "ecdsa_secp256r1_sha256",
            SignatureScheme::RsaPkcs1Sha256 => "rsa_pkcs1_sha256",
        }
    }

    /// Its IANA code point (what rustls reports).
    pub const fn iana(self) -> u16 {
        match self {
            SignatureScheme::RsaPssRsaeSha256 => 0x0804,
            SignatureScheme::EcdsaSecp256r1Sha256 => 0x0403,
            SignatureScheme::RsaPkcs1Sha256 => 0x0401,
        }
    }

    pub(super) const ALL: [SignatureScheme; 3] = [
        SignatureScheme::RsaPssRsaeSha256,
        SignatureScheme::EcdsaSecp256r1Sha256,
        SignatureScheme::RsaPkcs1Sha256,
    ];

    /// A library's report, by name.
    pub fn from_name(name: &str) -> Seen<SignatureScheme> {
        Seen::find(SignatureScheme::ALL, |scheme| scheme.name() == name, name)
    }

    /// A library's report, by IANA code point.
    pub fn from_iana(code: u16) -> Seen<SignatureScheme> {
        Seen::find(SignatureScheme::ALL, |scheme| scheme.iana() == code, code)
    }
}
