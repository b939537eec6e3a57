//! Record paths: a cipher, a protocol version and a write size.

use std::fmt;

use crate::common::payload::RECORD_BYTES;
use crate::common::pins::{Cipher, CipherSuite, SignatureScheme, TlsVersion};
use crate::common::pki::Pki;

use super::handshake::{version_prefix, Handshake};
use super::profile::Profile;
use super::InvalidPath;

/// A record path: [`RECORD_BYTES`] from client to server in writes of
/// `write_size` bytes, each one record, after a [`Handshake::RSA4096`]-like
/// handshake (outside the count) that pins the record's suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    pub cipher: Cipher,
    pub version: TlsVersion,
    /// Plaintext bytes per write, and per record: 1 KiB to 16 KiB.
    pub write_size: usize,
}

impl Record {
    /// The largest plaintext of one TLS record.
    pub const MAX_FRAGMENT: usize = 16 * 1024;

    /// The write sizes every record path is measured with: full-size
    /// records, where the cipher's per-byte cost dominates, and 1 KiB
    /// records, where the per-record cost weighs sixteen times more.
    pub const WRITE_SIZES: [usize; 2] = [16 * 1024, 1024];

    /// The suite both sides pin.
    pub const fn suite(&self) -> CipherSuite {
        CipherSuite::new(self.version, self.cipher)
    }

    /// The handshake's profile, with the record's suite. A CBC path's
    /// peers are of the suite's era: they sign with PKCS#1 v1.5
    /// (s2n-tls's policies that prefer ECDHE-RSA-AES128-SHA offer no PSS
    /// scheme).
    pub const fn profile(&self) -> Profile {
        let mut profile = Handshake::full(Pki::Rsa4096, self.version).profile();
        profile.pins.suite = self.suite();
        if !self.cipher.is_aead() {
            profile.pins.scheme = SignatureScheme::RsaPkcs1Sha256;
        }
        profile
    }

    /// Records one run sends.
    pub const fn records(&self) -> usize {
        RECORD_BYTES.div_ceil(self.write_size)
    }

    /// Bytes one record of `plaintext` bytes takes on the wire, its 5-byte
    /// header included. An AEAD adds its 16-byte tag (and TLS 1.3 its inner
    /// content type). AES-128-CBC with HMAC-SHA1 adds a 16-byte explicit IV,
    /// a 20-byte MAC and 1 to 16 bytes of padding, which pads the MAC too
    /// unless the peers negotiated `encrypt_then_mac` (RFC 7366).
    pub const fn record_len(&self, plaintext: usize, encrypt_then_mac: bool) -> usize {
        const HEADER: usize = 5;
        const TAG: usize = 16;
        const IV: usize = 16;
        const MAC: usize = 20;
        const BLOCK: usize = 16;
        // Padding always adds 1 to 16 bytes: at least its length byte.
        const fn padded(len: usize) -> usize {
            (len / BLOCK + 1) * BLOCK
        }
        HEADER
            + match (self.cipher.is_aead(), self.version, encrypt_then_mac) {
                (true, TlsVersion::Tls12, _) => plaintext + TAG,
                (true, TlsVersion::Tls13, _) => plaintext + 1 + TAG,
                (false, _, false) => IV + padded(plaintext + MAC),
                (false, _, true) => IV + padded(plaintext) + MAC,
            }
    }

    pub(super) fn validate(&self) -> Result<(), InvalidPath> {
        if !self.cipher.is_aead() && self.version != TlsVersion::Tls12 {
            return Err(InvalidPath::RecordVersion {
                cipher: self.cipher,
            });
        }
        if self.write_size == 0
            || self.write_size > Record::MAX_FRAGMENT
            || !self.write_size.is_multiple_of(1024)
        {
            return Err(InvalidPath::RecordWriteSize {
                write_size: self.write_size,
            });
        }
        Ok(())
    }
}

/// `record_[tls12_]<cipher>_<KiB>k`.
impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record_{}{}_{}k",
            version_prefix(self.version),
            self.cipher.label(),
            self.write_size / 1024
        )
    }
}

/// What an [`Aead`] path does to each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Encrypt and authenticate.
    Seal,
    /// Verify and decrypt.
    Open,
}
