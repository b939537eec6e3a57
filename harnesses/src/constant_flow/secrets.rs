//! The secrets the constant-flow operations run under. **Test-only,
//! published on purpose.**
//!
//! Each is a constant (or a file made by
//! `scripts/generate-constant-flow-certs.sh`), so every process derives the
//! same keys and the counts of one variant repeat. The variants are chosen
//! to exercise what leaks classically depend on: two unremarkable scalars
//! and one whose top 64 bits are zero (Minerva-style leaks show in the
//! length of the scalar), three RSA keys of the same size.

/// Bytes of an elliptic-curve scalar (P-256 and X25519).
pub const SCALAR_LEN: usize = 32;

/// A named private scalar, big-endian for P-256, little-endian bytes as
/// given for X25519 (which clamps them).
#[derive(Debug, Clone, Copy)]
pub struct Scalar {
    pub name: &'static str,
    pub bytes: [u8; SCALAR_LEN],
}

/// The private scalars every ECDSA and ECDH operation runs under.
pub const SCALARS: [Scalar; 3] = [
    Scalar {
        name: "scalar_a",
        bytes: [
            0x28, 0xab, 0xdb, 0x88, 0x79, 0xb3, 0xbf, 0xe0, 0xc1, 0x46, 0xd8, 0x44, 0x18, 0x22,
            0xf7, 0x56, 0x22, 0xff, 0x7b, 0x7c, 0x80, 0xf2, 0x48, 0x16, 0x1b, 0xf7, 0x81, 0x08,
            0x30, 0xbe, 0x3c, 0x13,
        ],
    },
    Scalar {
        name: "scalar_b",
        bytes: [
            0xa0, 0x2f, 0x9b, 0x07, 0x31, 0x3a, 0xb2, 0x56, 0x61, 0x8a, 0xd8, 0x48, 0xfb, 0x97,
            0x48, 0x47, 0xa9, 0xd4, 0x68, 0xe4, 0x8f, 0x2a, 0x2b, 0xd7, 0x58, 0xe3, 0xac, 0x7d,
            0xe6, 0x77, 0x31, 0xe1,
        ],
    },
    // The top 64 bits zero: a scalar 2^64 times smaller than usual.
    Scalar {
        name: "scalar_short",
        bytes: [
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x81, 0x4c, 0x60, 0xd2, 0x5d, 0x1f,
            0x81, 0xb4, 0x83, 0xc8, 0xc1, 0xdd, 0x12, 0x0f, 0x71, 0xb0, 0x53, 0x61, 0x85, 0xf4,
            0x7f, 0x39, 0xf8, 0x9c,
        ],
    },
];

/// The peer's private scalar of every key agreement: its public key is
/// what each variant agrees with (public, the same for every variant).
pub const PEER_SCALAR: [u8; SCALAR_LEN] = [
    0x2b, 0xf1, 0x61, 0xec, 0x68, 0x5f, 0xc9, 0xcd, 0x5b, 0x88, 0x96, 0xd4, 0x30, 0xa5, 0xa9, 0xc2,
    0x94, 0x98, 0xbf, 0x75, 0x1a, 0x16, 0x37, 0x26, 0x86, 0x35, 0x1a, 0x7c, 0x11, 0x88, 0x9b, 0x04,
];

/// The AEAD key (AES-128 uses the first 16 bytes).
pub const AEAD_KEY: [u8; 32] = [
    0x35, 0x70, 0xda, 0x47, 0x78, 0xc3, 0x5a, 0x63, 0x8a, 0xfd, 0x08, 0xd2, 0xeb, 0xc5, 0x85, 0x19,
    0xf4, 0xe3, 0x52, 0x17, 0xde, 0x61, 0x77, 0x23, 0x58, 0x82, 0xd0, 0xbd, 0x55, 0x09, 0xf1, 0x32,
];

/// The nonce of every AEAD operation (public).
pub const AEAD_NONCE: [u8; 12] = [
    0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88,
];

/// The additional data of every AEAD operation (public): a TLS 1.3 record
/// header.
pub const AEAD_AAD: [u8; 5] = [0x17, 0x03, 0x03, 0x00, 0x50];

/// The message every signature signs (public): its SHA-256 digest is what
/// is signed, computed outside the count.
pub const MESSAGE: &[u8] = b"regress constant-flow: the message every variant signs";

/// A named RSA-2048 key, with the server chain issued for it.
#[derive(Debug, Clone, Copy)]
pub struct RsaKey {
    pub name: &'static str,
    /// `RSAPrivateKey` (RFC 8017), DER.
    pub rsa_der: &'static [u8],
    /// PKCS#8, PEM.
    pub key_pem: &'static [u8],
    /// The leaf for `localhost` signed by the RSA-4096 test CA, then the CA.
    pub chain_pem: &'static [u8],
}

/// Three RSA-2048 keys of the same size, each with a chain of the same
/// length and shape (`scripts/generate-constant-flow-certs.sh`).
pub const RSA_KEYS: [RsaKey; 3] = [
    RsaKey {
        name: "key_a",
        rsa_der: include_bytes!("../../certs/constant-flow/server-a.der"),
        key_pem: include_bytes!("../../certs/constant-flow/server-a.key"),
        chain_pem: include_bytes!("../../certs/constant-flow/server-a.pem"),
    },
    RsaKey {
        name: "key_b",
        rsa_der: include_bytes!("../../certs/constant-flow/server-b.der"),
        key_pem: include_bytes!("../../certs/constant-flow/server-b.key"),
        chain_pem: include_bytes!("../../certs/constant-flow/server-b.pem"),
    },
    RsaKey {
        name: "key_c",
        rsa_der: include_bytes!("../../certs/constant-flow/server-c.der"),
        key_pem: include_bytes!("../../certs/constant-flow/server-c.key"),
        chain_pem: include_bytes!("../../certs/constant-flow/server-c.pem"),
    },
];

/// A deterministic plaintext of `len` bytes.
pub fn plaintext(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ 0x5a)
        .collect()
}

/// Each of `secrets` as a plain variant, then the first again as the
/// `control` variant (see [`super::Control`]).
pub fn with_control<T: Copy>(
    secrets: &[T],
    control: super::Control,
) -> impl Iterator<Item = (T, super::Control)> + '_ {
    secrets
        .iter()
        .map(|secret| (*secret, super::Control::None))
        .chain(secrets.first().map(|secret| (*secret, control)))
}
