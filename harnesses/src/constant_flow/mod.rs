//! Constant-flow operations: secret-dependent operations, each under
//! several secrets, for `regress constant-flow`.
//!
//! Timing side channels (Lucky Thirteen, Raccoon, Minerva, leaky RSA and
//! ECDSA) come from control flow or work that depends on a secret. Run under
//! Callgrind, the same operation under two secrets must execute the same
//! instructions, function by function; the runner compares them
//! (`crates/regress/src/constant_flow/`). This module is the data: which
//! operations, which secrets.
//!
//! # Names
//!
//! Every (operation, variant) is a [`Harness`](regress_measure::Harness)
//! named `constant_flow::<library>::<operation>::<group>::<variant>`:
//!
//! - the **group** is the variant's *public* outcome: `accepted` or
//!   `rejected` for an AEAD open (whether the tag verified is public: a TLS
//!   peer sees the alert), `ok` for operations that always succeed. Variants
//!   of one group must count the same instructions in every function;
//!   variants of different groups may differ after the verdict, and the
//!   runner checks that they differ only where the committed allowlist says
//!   why.
//! - the **variant** names the secret: `key_a`, `tag_last_byte`, ...
//!
//! These entries are served by the measured program beside the perf
//! harnesses ([`crate::registry`]) but are not perf harnesses: no baseline,
//! no perf test, not in `regress run`. The runner tells them apart by
//! [`PREFIX`].
//!
//! # What is counted
//!
//! `setup` and `prepare` build keys, ciphertexts and connections outside the
//! count; `run` is only the secret-dependent operation (repeated
//! [`Harness::operations_per_run`](regress_measure::Harness::operations_per_run)
//! times when it is small). The server's processing of a ClientHello
//! ([`handshake`]) is a whole handshake whose sides are marked
//! ([`crate::tls::sides`]); the runner compares only its `server_flight`
//! part, the server's first stage (reading the ClientHello and writing its
//! flight, signed with the secret key).

pub mod aws_lc_rs;
pub mod cbc;
pub mod handshake;
pub mod openssl;
pub mod secrets;

use regress_measure::program::{AnyHarness, Entry};

use crate::common::pins::Cipher;
use secrets::{RsaKey, Scalar};

/// The first part of every constant-flow entry's name.
pub const PREFIX: &str = "constant_flow";

/// The public outcome of an AEAD open whose tag verified.
pub const ACCEPTED: &str = "accepted";
/// The public outcome of an AEAD open whose tag did not verify.
pub const REJECTED: &str = "rejected";
/// The one outcome of an operation that always succeeds (a signature, a key
/// agreement, a handshake).
pub const OK: &str = "ok";

/// How an AEAD open's input is changed: the variants of the AEAD
/// operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// The tag as sealed: the open succeeds.
    None,
    /// The tag's first byte flipped: the open fails.
    TagFirstByte,
    /// The tag's last byte flipped: the open fails. An early-exit tag
    /// comparison fails sooner on the first byte than on the last.
    TagLastByte,
}

impl Tamper {
    /// Every variant, the valid one first.
    pub const ALL: [Tamper; 3] = [Tamper::None, Tamper::TagFirstByte, Tamper::TagLastByte];

    /// The variant's name.
    pub const fn name(self) -> &'static str {
        match self {
            Tamper::None => "valid_tag",
            Tamper::TagFirstByte => "tag_first_byte",
            Tamper::TagLastByte => "tag_last_byte",
        }
    }

    /// The public outcome: [`ACCEPTED`] or [`REJECTED`].
    pub const fn group(self) -> &'static str {
        match self {
            Tamper::None => ACCEPTED,
            _ => REJECTED,
        }
    }

    /// Applies the change to `sealed`, ciphertext then a `tag_len`-byte tag.
    pub fn apply(self, sealed: &mut [u8], tag_len: usize) {
        let len = sealed.len();
        let index = match self {
            Tamper::None => return,
            Tamper::TagFirstByte => len - tag_len,
            Tamper::TagLastByte => len - 1,
        };
        sealed[index] ^= 0x01;
    }
}

/// What a control variant changes besides the secret: nothing secret. A
/// control runs under the *same* secret as the operation's first variant,
/// with something public changed, so that a difference it shows is one
/// that does not depend on the secret (what the allowlist may name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A plain variant.
    None,
    /// The deterministic RNG stream advanced by 64 bytes in `setup`: the
    /// same key signs with another nonce (and salt, blinding), so the
    /// public signature differs.
    NonceShifted,
    /// An extra 1 KiB and a few small blocks allocated (and leaked) before
    /// `setup` builds anything: the same key, another heap layout.
    HeapShifted,
}

impl Control {
    /// The suffix of the control's variant name.
    pub const fn suffix(self) -> &'static str {
        match self {
            Control::None => "",
            Control::NonceShifted => "_nonce_shifted",
            Control::HeapShifted => "_heap_shifted",
        }
    }

    /// Shifts the heap, for [`Control::HeapShifted`]; call first in `setup`.
    pub fn shift_heap(self) {
        if self == Control::HeapShifted {
            for size in [1024usize, 24, 40, 72, 136] {
                std::mem::forget(std::hint::black_box(vec![0u8; size]));
            }
        }
    }
}

/// AEAD opens per counted run: one open of a 64-byte record is a few
/// thousand instructions, of which the harness's loop would otherwise be a
/// visible share.
pub const OPENS_PER_RUN: usize = 8;

/// Bytes of plaintext each AEAD open recovers.
pub const MESSAGE_LEN: usize = 64;

/// The name of one constant-flow entry.
pub fn name(library: &str, operation: &str, group: &str, variant: &str) -> String {
    format!("{PREFIX}::{library}::{operation}::{group}::{variant}")
}

/// Every constant-flow entry of the measured program, in a fixed order.
pub fn entries() -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut add = |library: &str,
                   operation: &str,
                   group: &str,
                   variant: &str,
                   harness: Box<dyn AnyHarness>| {
        entries.push(Entry {
            name: name(library, operation, group, variant),
            harness,
        });
    };
    primitives::<aws_lc_rs::AwsLcRs>(&mut add);
    primitives::<openssl::OpenSsl>(&mut add);
    handshake::operations(&mut add);
    cbc::operations(&mut add);
    entries
}

/// A curve of a key agreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    P256,
    X25519,
}

/// The primitive operations aws-lc-rs and OpenSSL both offer. The list of
/// operations and variants is one ([`primitives`]); each library supplies
/// its harness of each.
pub trait Primitives {
    /// The library's name in entry names.
    const LIBRARY: &'static str;
    /// [`OPENS_PER_RUN`] opens of a [`MESSAGE_LEN`]-byte message, tampered
    /// with as `tamper` says.
    fn aead_open(cipher: Cipher, tamper: Tamper) -> Box<dyn AnyHarness>;
    /// One ECDSA P-256 signature under `scalar`.
    fn ecdsa_p256_sign(scalar: Scalar, control: Control) -> Box<dyn AnyHarness>;
    /// One RSA-PSS-SHA256 signature under `key`.
    fn rsa2048_pss_sign(key: RsaKey, control: Control) -> Box<dyn AnyHarness>;
    /// One key agreement of `scalar` with a fixed peer.
    fn ecdh(curve: Curve, scalar: Scalar) -> Box<dyn AnyHarness>;
}

/// Every primitive operation of `P` and its variants: AEAD open (valid and
/// tampered tags), ECDSA P-256 and RSA-PSS signing (with a control each),
/// ECDH P-256 and X25519.
pub fn primitives<P: Primitives>(add: &mut Add<'_>) {
    for (cipher, operation) in [
        (Cipher::Aes128Gcm, "aes128gcm_open"),
        (Cipher::ChaCha20Poly1305, "chacha20poly1305_open"),
    ] {
        for tamper in Tamper::ALL {
            add(
                P::LIBRARY,
                operation,
                tamper.group(),
                tamper.name(),
                P::aead_open(cipher, tamper),
            );
        }
    }
    for (scalar, control) in secrets::with_control(&secrets::SCALARS, Control::NonceShifted) {
        let variant = format!("{}{}", scalar.name, control.suffix());
        add(
            P::LIBRARY,
            "ecdsa_p256_sign",
            OK,
            &variant,
            P::ecdsa_p256_sign(scalar, control),
        );
    }
    for (key, control) in secrets::with_control(&secrets::RSA_KEYS, Control::HeapShifted) {
        let variant = format!("{}{}", key.name, control.suffix());
        add(
            P::LIBRARY,
            "rsa2048_pss_sign",
            OK,
            &variant,
            P::rsa2048_pss_sign(key, control),
        );
    }
    for (curve, operation) in [(Curve::P256, "ecdh_p256"), (Curve::X25519, "x25519")] {
        for scalar in secrets::SCALARS {
            add(
                P::LIBRARY,
                operation,
                OK,
                scalar.name,
                P::ecdh(curve, scalar),
            );
        }
    }
}

/// What a library module calls for each of its (operation, variant)s:
/// library, operation, group, variant, harness.
pub type Add<'a> = dyn FnMut(&str, &str, &str, &str, Box<dyn AnyHarness>) + 'a;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_harness_names_and_unique() {
        let entries = entries();
        assert!(entries.len() >= 40, "{}", entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let parts: Vec<&str> = entry.name.split("::").collect();
            assert_eq!(parts.len(), 5, "{}", entry.name);
            assert_eq!(parts[0], PREFIX);
            assert!(entry.name.len() <= 128);
            assert!(entry
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b':'));
            assert!(
                entries[..index]
                    .iter()
                    .all(|other| other.name != entry.name),
                "{} twice",
                entry.name
            );
        }
    }

    #[test]
    fn tampering_flips_the_named_byte() {
        let mut sealed = vec![0u8; 20];
        Tamper::TagFirstByte.apply(&mut sealed, 16);
        assert_eq!(sealed[4], 1);
        Tamper::TagLastByte.apply(&mut sealed, 16);
        assert_eq!(sealed[19], 1);
        Tamper::None.apply(&mut sealed, 16);
        assert_eq!(sealed.iter().map(|b| u32::from(*b)).sum::<u32>(), 2);
    }
}
