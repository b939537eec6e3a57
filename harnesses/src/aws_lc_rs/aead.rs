//! [`AeadCalls`]: raw AEAD calls with aws-lc-rs, without TLS around them.

use ::aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, Tag, UnboundKey, NONCE_LEN};
use regress_measure::{Harness, HarnessError};

use crate::common::pins::Cipher;
use crate::paths::{Aead, Direction};

/// Bytes of authentication tag every AEAD here appends.
pub const TAG_LEN: usize = 16;

/// The additional authenticated data of every operation: 5 bytes, the size
/// of the TLS 1.3 record header that is the AAD of a TLS 1.3 record. (The
/// value is arbitrary; only its length affects the count.)
const AAD: [u8; 5] = [0x17, 0x03, 0x03, 0x40, 0x11];

/// The nonce of every operation, the same in every run.
///
/// Reusing a nonce with one key is catastrophic for real traffic (it reveals
/// the XOR of plaintexts and allows tag forgery). Here it is deliberate and
/// harmless: nothing secret is protected, the key is a published constant,
/// and sealing the same plaintext under the same nonce makes every run
/// execute exactly the same instructions and produce the same ciphertext,
/// which `check` compares against.
const NONCE: [u8; NONCE_LEN] = [
    0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88,
];

/// Key material: a fixed, published pattern. AES-128 uses the first 16 bytes.
const KEY: [u8; 32] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
];

/// The aws-lc-rs algorithm of an AEAD (an error for CBC, which is not one).
pub fn algorithm(cipher: Cipher) -> Result<&'static aead::Algorithm, HarnessError> {
    match cipher {
        Cipher::Aes128Gcm => Ok(&aead::AES_128_GCM),
        Cipher::Aes256Gcm => Ok(&aead::AES_256_GCM),
        Cipher::ChaCha20Poly1305 => Ok(&aead::CHACHA20_POLY1305),
        Cipher::Aes128CbcSha => Err(cipher.not_an_aead().into()),
    }
}

/// A key of `cipher` from `key_bytes`.
pub fn key(cipher: Cipher, key_bytes: &[u8]) -> Result<LessSafeKey, HarnessError> {
    let algorithm = algorithm(cipher)?;
    let key = UnboundKey::new(algorithm, key_bytes)
        .map_err(|_| format!("{cipher:?} rejected a {}-byte key", key_bytes.len()))?;
    Ok(LessSafeKey::new(key))
}

/// Seals or opens of `message_len` bytes each with aws-lc-rs, as its
/// [`Aead`] path says.
///
/// **Counted:** [`Aead::operations`] independent calls (`RUN_BYTES /
/// message_len`:
/// 1,024 for 16-byte messages, 1 for 16 KiB), each a
/// `seal_in_place_separate_tag` (which encrypts one message in place and
/// returns its tag) or an `open_in_place` (which checks the tag at the end of
/// one message and decrypts it in place), with the fixed 12-byte nonce and
/// 5-byte AAD. That is aws-lc's AES-CTR and GHASH over `message_len` bytes plus the
/// per-call cost (counter setup, the tag's AES block, length block, and for
/// open the constant-time tag comparison), `operations` times, and a few
/// instructions of loop per call. [`Harness::bytes_per_run`] reports
/// `operations * message_len` and [`Harness::operations_per_run`] `operations`, so
/// the reports give instructions per byte and per call.
///
/// **Not counted:** building the key (`setup`: `UnboundKey::new`, which
/// expands the AES key schedule and the GHASH key, wrapped in a
/// `LessSafeKey`), the plaintext and the reference ciphertext (`setup`, one
/// seal outside any run), and filling a fresh buffer with the messages:
/// plaintexts (seal) or ciphertext-and-tag pairs (open), back to back
/// (`prepare`). The buffer and the vector of tags are allocated with their
/// final size, so the run allocates nothing.
///
/// **Check:** seal: every message and tag equal the reference ciphertext
/// and tag, and they open back to the plaintext; open: every call returned
/// exactly `message_len` bytes equal to the plaintext. Correctness of aws-lc-rs
/// itself against published GCM vectors is a unit test, not part of the
/// check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AeadCalls(pub Aead);

/// What [`Aead`] runs share.
pub struct AeadSetup {
    key: LessSafeKey,
    /// The plaintext every seal encrypts and every open must recover.
    plaintext: Vec<u8>,
    /// The plaintext sealed under [`NONCE`] and [`AAD`]: ciphertext, then tag.
    sealed: Vec<u8>,
}

impl std::fmt::Debug for AeadSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AeadSetup")
            .field("key", &self.key.algorithm())
            .field("plaintext", &self.plaintext.len())
            .field("sealed", &self.sealed.len())
            .finish()
    }
}

/// The input of one run: the messages, back to back, each the plaintext
/// (seal) or the ciphertext followed by its tag (open), and room for the
/// tags a seal returns.
pub struct AeadInput {
    messages: Vec<u8>,
    tags: Vec<Tag>,
}

/// What one run produced.
pub enum AeadOutput {
    /// The messages, each encrypted in place, and their tags in order.
    Sealed { messages: Vec<u8>, tags: Vec<Tag> },
    /// The messages, each now its plaintext followed by its (checked) tag,
    /// and the plaintext bytes the calls returned, summed.
    Opened { messages: Vec<u8>, opened: usize },
}

/// A deterministic plaintext of `len` bytes (a simple linear congruential
/// sequence), distinct from its ciphertext and from all-zero data.
fn plaintext(len: usize) -> Vec<u8> {
    let mut state: u32 = 0x1234_5678;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state.to_be_bytes()[0]
        })
        .collect()
}

impl AeadCalls {
    /// Bytes one message occupies in the run's buffer.
    fn stride(&self) -> usize {
        match self.0.direction {
            Direction::Seal => self.0.message_len,
            Direction::Open => self.0.message_len + TAG_LEN,
        }
    }
}

impl Harness for AeadCalls {
    type Setup = AeadSetup;
    type Input = AeadInput;
    type Output = AeadOutput;

    fn bytes_per_run(&self) -> Option<u64> {
        Some((self.0.operations() * self.0.message_len) as u64)
    }

    fn operations_per_run(&self) -> u64 {
        self.0.operations() as u64
    }

    fn setup(&self) -> Result<AeadSetup, HarnessError> {
        let key_len = algorithm(self.0.cipher)?.key_len();
        let key = key(self.0.cipher, &KEY[..key_len])?;
        let plaintext = plaintext(self.0.message_len);
        let mut sealed = Vec::with_capacity(self.0.message_len + TAG_LEN);
        sealed.extend_from_slice(&plaintext);
        let tag = key
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(NONCE),
                Aad::from(AAD),
                &mut sealed,
            )
            .map_err(|_| "sealing the reference ciphertext failed")?;
        sealed.extend_from_slice(tag.as_ref());
        Ok(AeadSetup {
            key,
            plaintext,
            sealed,
        })
    }

    fn prepare(&self, setup: &AeadSetup) -> Result<AeadInput, HarnessError> {
        let message = match self.0.direction {
            Direction::Seal => &setup.plaintext,
            Direction::Open => &setup.sealed,
        };
        let operations = self.0.operations();
        let mut messages = Vec::with_capacity(operations * message.len());
        for _ in 0..operations {
            messages.extend_from_slice(message);
        }
        let tags = match self.0.direction {
            Direction::Seal => Vec::with_capacity(operations),
            Direction::Open => Vec::new(),
        };
        Ok(AeadInput { messages, tags })
    }

    fn run(&self, setup: &AeadSetup, input: AeadInput) -> Result<AeadOutput, HarnessError> {
        let AeadInput {
            mut messages,
            mut tags,
        } = input;
        let key = &setup.key;
        let stride = self.stride();
        match self.0.direction {
            Direction::Seal => {
                for message in messages.chunks_exact_mut(stride) {
                    let nonce = Nonce::assume_unique_for_key(NONCE);
                    match key.seal_in_place_separate_tag(nonce, Aad::from(AAD), message) {
                        Ok(tag) => tags.push(tag),
                        Err(_) => return Err("seal_in_place_separate_tag failed".into()),
                    }
                }
                Ok(AeadOutput::Sealed { messages, tags })
            }
            Direction::Open => {
                let mut opened = 0;
                for message in messages.chunks_exact_mut(stride) {
                    let nonce = Nonce::assume_unique_for_key(NONCE);
                    match key.open_in_place(nonce, Aad::from(AAD), message) {
                        Ok(plaintext) => opened += plaintext.len(),
                        Err(_) => return Err("open_in_place failed: the tag did not verify".into()),
                    }
                }
                Ok(AeadOutput::Opened { messages, opened })
            }
        }
    }

    fn check(&self, setup: &AeadSetup, output: &AeadOutput) -> Result<(), HarnessError> {
        let operations = self.0.operations();
        match (self.0.direction, output) {
            (Direction::Seal, AeadOutput::Sealed { messages, tags }) => {
                if messages.len() != operations * self.0.message_len || tags.len() != operations {
                    return Err(format!(
                        "sealed {} bytes and {} tags, expected {operations} messages of {} bytes",
                        messages.len(),
                        tags.len(),
                        self.0.message_len
                    )
                    .into());
                }
                let (ciphertext, reference_tag) = setup.sealed.split_at(self.0.message_len);
                for (index, tag) in tags.iter().enumerate() {
                    let message =
                        &messages[index * self.0.message_len..(index + 1) * self.0.message_len];
                    if message != ciphertext || tag.as_ref() != reference_tag {
                        return Err(format!(
                            "message {index}: seal produced another ciphertext or tag than the reference"
                        )
                        .into());
                    }
                }
                if ciphertext == &setup.plaintext[..] && self.0.message_len > 0 {
                    return Err("seal left the plaintext unencrypted".into());
                }
                let mut reopened = messages[..self.0.message_len].to_vec();
                reopened.extend_from_slice(tags[0].as_ref());
                let opened = setup
                    .key
                    .open_in_place(
                        Nonce::assume_unique_for_key(NONCE),
                        Aad::from(AAD),
                        &mut reopened,
                    )
                    .map_err(|_| "the sealed output does not open")?;
                if opened[..] != setup.plaintext[..] {
                    return Err("the sealed output opens to another plaintext".into());
                }
                Ok(())
            }
            (Direction::Open, AeadOutput::Opened { messages, opened }) => {
                if *opened != operations * self.0.message_len {
                    return Err(format!(
                        "open returned {opened} bytes, expected {operations} x {}",
                        self.0.message_len
                    )
                    .into());
                }
                let stride = self.stride();
                for (index, message) in messages.chunks_exact(stride).enumerate() {
                    if message[..self.0.message_len] != setup.plaintext[..] {
                        return Err(format!(
                            "message {index}: open returned another plaintext than was sealed"
                        )
                        .into());
                    }
                }
                Ok(())
            }
            _ => Err("the output does not match the harness's direction".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(cipher: Cipher, direction: Direction, message_len: usize) -> AeadCalls {
        AeadCalls(Aead {
            cipher,
            direction,
            message_len,
        })
    }

    /// A run really makes `operations` calls: one tag per sealed message,
    /// and every opened message is the plaintext.
    #[test]
    fn a_run_makes_one_call_per_message() {
        let seal = calls(Cipher::Aes256Gcm, Direction::Seal, 64);
        assert_eq!(seal.operations_per_run(), 256);
        assert_eq!(seal.bytes_per_run(), Some(Aead::RUN_BYTES as u64));
        let setup = seal.setup().expect("setup");
        let output = seal
            .run(&setup, seal.prepare(&setup).expect("prepare"))
            .expect("run");
        let AeadOutput::Sealed { messages, tags } = &output else {
            panic!("a seal harness must seal");
        };
        assert_eq!(tags.len(), 256);
        assert_eq!(messages.len(), Aead::RUN_BYTES);

        let open = calls(Cipher::Aes256Gcm, Direction::Open, 64);
        let output = open
            .run(&setup, open.prepare(&setup).expect("prepare"))
            .expect("run");
        let AeadOutput::Opened { messages, opened } = &output else {
            panic!("an open harness must open");
        };
        assert_eq!(*opened, Aead::RUN_BYTES);
        assert_eq!(messages.len(), 256 * (64 + TAG_LEN));
        open.check(&setup, &output).expect("check");
    }

    #[test]
    fn seal_check_rejects_a_flipped_ciphertext_or_tag_byte() {
        let harness = calls(Cipher::Aes128Gcm, Direction::Seal, 64);
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        let output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("intact");
        let AeadOutput::Sealed { mut messages, tags } = output else {
            panic!("a seal harness must seal");
        };
        // A byte of the last message, not only the first, is checked.
        let last = messages.len() - 1;
        messages[last] ^= 1;
        let flipped = AeadOutput::Sealed { messages, tags };
        assert!(harness.check(&setup, &flipped).is_err());
    }

    #[test]
    fn open_fails_on_a_flipped_tag_and_check_rejects_wrong_plaintext() {
        let harness = calls(Cipher::Aes256Gcm, Direction::Open, 256);
        let setup = harness.setup().expect("setup");
        let mut input = harness.prepare(&setup).expect("prepare");
        let last = input.messages.len() - 1;
        input.messages[last] ^= 0x80;
        assert!(
            harness.run(&setup, input).is_err(),
            "a forged tag must not open"
        );

        let input = harness.prepare(&setup).expect("prepare");
        let output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("intact");
        let AeadOutput::Opened {
            mut messages,
            opened,
        } = output
        else {
            panic!("an open harness must open");
        };
        let last_message = messages.len() - (256 + TAG_LEN);
        messages[last_message] ^= 1;
        let wrong = AeadOutput::Opened { messages, opened };
        assert!(harness.check(&setup, &wrong).is_err());
        let seal = calls(Cipher::Aes256Gcm, Direction::Seal, 256);
        assert!(seal.check(&setup, &wrong).is_err(), "direction mismatch");
    }

    /// The two algorithms really differ: the same plaintext, nonce and key
    /// bytes give different ciphertexts.
    #[test]
    fn algorithms_differ() {
        let aes128 = calls(Cipher::Aes128Gcm, Direction::Seal, 64)
            .setup()
            .expect("128");
        let aes256 = calls(Cipher::Aes256Gcm, Direction::Seal, 64)
            .setup()
            .expect("256");
        assert_eq!(aes128.plaintext, aes256.plaintext);
        assert_ne!(aes128.sealed, aes256.sealed);
        assert_eq!(aes128.sealed.len(), 64 + TAG_LEN);
    }

    #[test]
    fn plaintext_is_deterministic_and_varied() {
        let a = plaintext(16384);
        assert_eq!(a, plaintext(16384));
        assert!(a.iter().any(|&b| b != a[0]));
        assert_ne!(a[..16], a[16..32]);
    }

    #[test]
    fn key_of_the_wrong_length_is_an_error() {
        assert!(key(Cipher::Aes128Gcm, &KEY).is_err());
        assert!(key(Cipher::Aes256Gcm, &KEY[..16]).is_err());
    }
}
