//! The protocol version, what protects records, and the cipher suite.

use super::Seen;

/// A protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl TlsVersion {
    /// `TLS 1.2`, `TLS 1.3`.
    pub const fn name(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "TLS 1.2",
            TlsVersion::Tls13 => "TLS 1.3",
        }
    }
}

/// What protects records: an AEAD, whatever the protocol version, or
/// TLS 1.2's AES-CBC with HMAC-SHA1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cipher {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
    /// AES-128 in CBC mode with an HMAC-SHA1 tag (TLS 1.2 only): what old
    /// clients, embedded stacks and the 2017-era policies still in service
    /// negotiate. Not an AEAD: the MAC is computed over the plaintext and
    /// encrypted with it (MAC-then-encrypt), unless both peers agree on
    /// encrypt-then-MAC (RFC 7366), as two OpenSSL peers do.
    Aes128CbcSha,
}

impl Cipher {
    /// Every AEAD, in the order paths list them.
    pub const AEADS: [Cipher; 3] = [
        Cipher::Aes128Gcm,
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
    ];

    /// How paths name it: `aes128gcm`, `aes256gcm`, `chacha20poly1305`,
    /// `aes128cbc_sha`.
    pub const fn label(self) -> &'static str {
        match self {
            Cipher::Aes128Gcm => "aes128gcm",
            Cipher::Aes256Gcm => "aes256gcm",
            Cipher::ChaCha20Poly1305 => "chacha20poly1305",
            Cipher::Aes128CbcSha => "aes128cbc_sha",
        }
    }

    /// Whether it is an AEAD (every cipher but CBC).
    pub const fn is_aead(self) -> bool {
        !matches!(self, Cipher::Aes128CbcSha)
    }

    /// What a path or library says when it needs an AEAD and was given
    /// this cipher (one wording for every caller).
    pub fn not_an_aead(self) -> String {
        format!("{} is not an AEAD", self.label())
    }
}

/// A cipher suite a path can pin. TLS 1.2 suites are the ECDHE-RSA ones:
/// TLS 1.2 paths authenticate with the RSA-4096 PKI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CipherSuite {
    Tls13Aes128GcmSha256,
    Tls13Aes256GcmSha384,
    Tls13ChaCha20Poly1305Sha256,
    EcdheRsaAes128GcmSha256,
    EcdheRsaAes256GcmSha384,
    EcdheRsaChaCha20Poly1305Sha256,
    EcdheRsaAes128CbcSha,
    /// TLS 1.2's finite-field Diffie-Hellman counterpart of
    /// ECDHE-RSA-AES128-GCM-SHA256.
    DheRsaAes128GcmSha256,
}

impl CipherSuite {
    /// Every suite, for lookups.
    pub const ALL: [CipherSuite; 8] = [
        CipherSuite::Tls13Aes128GcmSha256,
        CipherSuite::Tls13Aes256GcmSha384,
        CipherSuite::Tls13ChaCha20Poly1305Sha256,
        CipherSuite::EcdheRsaAes128GcmSha256,
        CipherSuite::EcdheRsaAes256GcmSha384,
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256,
        CipherSuite::EcdheRsaAes128CbcSha,
        CipherSuite::DheRsaAes128GcmSha256,
    ];

    /// The suite of `version` that protects records with `cipher`. CBC has
    /// a TLS 1.2 suite only, which this gives for either version (a path
    /// pinning TLS 1.3 with it fails `Record::validate`, and would fail the
    /// check: the suite's version is not the pinned one).
    pub const fn new(version: TlsVersion, cipher: Cipher) -> CipherSuite {
        match (version, cipher) {
            (_, Cipher::Aes128CbcSha) => CipherSuite::EcdheRsaAes128CbcSha,
            (TlsVersion::Tls13, Cipher::Aes128Gcm) => CipherSuite::Tls13Aes128GcmSha256,
            (TlsVersion::Tls13, Cipher::Aes256Gcm) => CipherSuite::Tls13Aes256GcmSha384,
            (TlsVersion::Tls13, Cipher::ChaCha20Poly1305) => {
                CipherSuite::Tls13ChaCha20Poly1305Sha256
            }
            (TlsVersion::Tls12, Cipher::Aes128Gcm) => CipherSuite::EcdheRsaAes128GcmSha256,
            (TlsVersion::Tls12, Cipher::Aes256Gcm) => CipherSuite::EcdheRsaAes256GcmSha384,
            (TlsVersion::Tls12, Cipher::ChaCha20Poly1305) => {
                CipherSuite::EcdheRsaChaCha20Poly1305Sha256
            }
        }
    }

    /// Its code point in the IANA registry (what rustls reports).
    pub const fn iana(self) -> u16 {
        match self {
            CipherSuite::Tls13Aes128GcmSha256 => 0x1301,
            CipherSuite::Tls13Aes256GcmSha384 => 0x1302,
            CipherSuite::Tls13ChaCha20Poly1305Sha256 => 0x1303,
            CipherSuite::EcdheRsaAes128GcmSha256 => 0xc02f,
            CipherSuite::EcdheRsaAes256GcmSha384 => 0xc030,
            CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => 0xcca8,
            CipherSuite::EcdheRsaAes128CbcSha => 0xc013,
            CipherSuite::DheRsaAes128GcmSha256 => 0x009e,
        }
    }

    /// Its OpenSSL name, which s2n-tls reports too: the IANA name for
    /// TLS 1.3 suites, OpenSSL's own for TLS 1.2 ones.
    pub const fn name(self) -> &'static str {
        match self {
            CipherSuite::Tls13Aes128GcmSha256 => "TLS_AES_128_GCM_SHA256",
            CipherSuite::Tls13Aes256GcmSha384 => "TLS_AES_256_GCM_SHA384",
            CipherSuite::Tls13ChaCha20Poly1305Sha256 => "TLS_CHACHA20_POLY1305_SHA256",
            CipherSuite::EcdheRsaAes128GcmSha256 => "ECDHE-RSA-AES128-GCM-SHA256",
            CipherSuite::EcdheRsaAes256GcmSha384 => "ECDHE-RSA-AES256-GCM-SHA384",
            CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => "ECDHE-RSA-CHACHA20-POLY1305",
            CipherSuite::EcdheRsaAes128CbcSha => "ECDHE-RSA-AES128-SHA",
            CipherSuite::DheRsaAes128GcmSha256 => "DHE-RSA-AES128-GCM-SHA256",
        }
    }

    /// The protocol version the suite belongs to.
    pub const fn version(self) -> TlsVersion {
        match self {
            CipherSuite::Tls13Aes128GcmSha256
            | CipherSuite::Tls13Aes256GcmSha384
            | CipherSuite::Tls13ChaCha20Poly1305Sha256 => TlsVersion::Tls13,
            _ => TlsVersion::Tls12,
        }
    }

    /// A library's report, by OpenSSL name.
    pub fn from_name(name: &str) -> Seen<CipherSuite> {
        Seen::find(CipherSuite::ALL, |suite| suite.name() == name, name)
    }

    /// A library's report, by IANA code point.
    pub fn from_iana(code: u16) -> Seen<CipherSuite> {
        Seen::find(CipherSuite::ALL, |suite| suite.iana() == code, code)
    }
}
