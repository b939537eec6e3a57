//! aws-lc-rs harnesses: one raw AEAD operation, without TLS around it.
//!
//! aws-lc-rs wraps the same aws-lc that s2n-tls (and rustls's default
//! provider) use, so these counts are the floor under the record harnesses:
//! what one AES-GCM seal or open of a given size costs before any record
//! layer, buffering or I/O is added.
//!
//! One generic harness, [`Aead`], parameterised by algorithm
//! ([`AeadAlgorithm`]), direction ([`Direction`]) and plaintext size;
//! `tests/perf.rs` registers it 24 times, as `aead_<algorithm>_<direction>_<size>`
//! for AES-128-GCM and AES-256-GCM, seal and open, and every size in
//! [`SIZES`].
//!
//! The harnesses' correctness against published known answers is tested
//! below (`tests/vectors/gcm.txt`): aws-lc-rs seals every vector to its
//! ciphertext and tag and opens it back.

use ::aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, Tag, UnboundKey, NONCE_LEN};
use regress_measure::{Harness, HarnessError};

/// The plaintext sizes the harnesses are registered for, in bytes: from a
/// tiny message to a full TLS record (16 KiB).
pub const SIZES: [usize; 6] = [16, 64, 256, 1024, 8192, 16384];

/// Plaintext bytes one run processes, whatever the size of one operation: a
/// run of a `size`-byte harness makes `RUN_BYTES / size` operations.
///
/// One 16-byte seal is about 900 instructions of aws-lc. Around a single
/// call, the harness's own glue (moving the buffer and tag in and out of
/// `run`, the measurement loop) was 30-45 instructions, 1-3.4 % of the
/// region, too much to call the count aws-lc's. Repeating the call over 16
/// KiB of independent messages spreads that fixed glue over many calls and
/// leaves the few instructions of loop per call (under 1 %; `regress
/// compare` prints the measured share). Every operation is the same call on
/// the same bytes, so the count is exactly `operations * per-call cost`
/// plus the glue, and instructions per operation and per byte are reported.
pub const RUN_BYTES: usize = 16384;

/// Bytes of authentication tag every AES-GCM seal appends.
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

/// The AEAD algorithm of an [`Aead`] harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AeadAlgorithm {
    /// AES-128-GCM (`aws_lc_rs::aead::AES_128_GCM`).
    Aes128Gcm,
    /// AES-256-GCM (`aws_lc_rs::aead::AES_256_GCM`).
    Aes256Gcm,
}

impl AeadAlgorithm {
    /// The aws-lc-rs algorithm.
    pub fn algorithm(self) -> &'static aead::Algorithm {
        match self {
            AeadAlgorithm::Aes128Gcm => &aead::AES_128_GCM,
            AeadAlgorithm::Aes256Gcm => &aead::AES_256_GCM,
        }
    }

    /// The algorithm of a key of `len` bytes, if it is one of these.
    pub fn for_key_len(len: usize) -> Option<AeadAlgorithm> {
        [AeadAlgorithm::Aes128Gcm, AeadAlgorithm::Aes256Gcm]
            .into_iter()
            .find(|algorithm| algorithm.algorithm().key_len() == len)
    }

    /// A key of this algorithm from `key_bytes`.
    pub fn key(self, key_bytes: &[u8]) -> Result<LessSafeKey, HarnessError> {
        let key = UnboundKey::new(self.algorithm(), key_bytes)
            .map_err(|_| format!("{self:?} rejected a {}-byte key", key_bytes.len()))?;
        Ok(LessSafeKey::new(key))
    }
}

/// What an [`Aead`] harness does to its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Encrypt and authenticate: `LessSafeKey::seal_in_place_separate_tag`.
    Seal,
    /// Verify and decrypt: `LessSafeKey::open_in_place`.
    Open,
}

/// AES-GCM seals or opens of `size` bytes each with aws-lc-rs.
///
/// **Counted:** [`Aead::operations`] independent calls (`RUN_BYTES / size`:
/// 1,024 for 16-byte messages, 1 for 16 KiB), each a
/// `seal_in_place_separate_tag` (which encrypts one message in place and
/// returns its tag) or an `open_in_place` (which checks the tag at the end of
/// one message and decrypts it in place), with the fixed 12-byte nonce and
/// 5-byte AAD. That is aws-lc's AES-CTR and GHASH over `size` bytes plus the
/// per-call cost (counter setup, the tag's AES block, length block, and for
/// open the constant-time tag comparison), `operations` times, and a few
/// instructions of loop per call. [`Harness::bytes_per_run`] reports
/// `operations * size` and [`Harness::operations_per_run`] `operations`, so
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
/// exactly `size` bytes equal to the plaintext. Correctness of aws-lc-rs
/// itself against published GCM vectors is a unit test, not part of the
/// check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aead {
    /// AES-128-GCM or AES-256-GCM.
    pub algorithm: AeadAlgorithm,
    /// Seal or open.
    pub direction: Direction,
    /// Plaintext bytes per operation.
    pub size: usize,
}

impl Aead {
    /// A harness sealing `size` bytes with `algorithm`.
    pub const fn seal(algorithm: AeadAlgorithm, size: usize) -> Aead {
        Aead {
            algorithm,
            direction: Direction::Seal,
            size,
        }
    }

    /// A harness opening `size` bytes (plus the tag) with `algorithm`.
    pub const fn open(algorithm: AeadAlgorithm, size: usize) -> Aead {
        Aead {
            algorithm,
            direction: Direction::Open,
            size,
        }
    }

    /// `aead_aes128gcm_seal_<size>`.
    pub const fn aes128gcm_seal(size: usize) -> Aead {
        Aead::seal(AeadAlgorithm::Aes128Gcm, size)
    }

    /// `aead_aes128gcm_open_<size>`.
    pub const fn aes128gcm_open(size: usize) -> Aead {
        Aead::open(AeadAlgorithm::Aes128Gcm, size)
    }

    /// `aead_aes256gcm_seal_<size>`.
    pub const fn aes256gcm_seal(size: usize) -> Aead {
        Aead::seal(AeadAlgorithm::Aes256Gcm, size)
    }

    /// `aead_aes256gcm_open_<size>`.
    pub const fn aes256gcm_open(size: usize) -> Aead {
        Aead::open(AeadAlgorithm::Aes256Gcm, size)
    }

    /// Every registered harness: both algorithms, both directions, every size.
    pub fn all() -> Vec<Aead> {
        let mut all = Vec::with_capacity(2 * 2 * SIZES.len());
        for algorithm in [AeadAlgorithm::Aes128Gcm, AeadAlgorithm::Aes256Gcm] {
            for direction in [Direction::Seal, Direction::Open] {
                for size in SIZES {
                    all.push(Aead {
                        algorithm,
                        direction,
                        size,
                    });
                }
            }
        }
        all
    }
}

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

impl Aead {
    /// Calls one run makes: as many messages as fit in [`RUN_BYTES`], at
    /// least one.
    pub const fn operations(&self) -> usize {
        if self.size == 0 || self.size >= RUN_BYTES {
            1
        } else {
            RUN_BYTES / self.size
        }
    }

    /// Bytes one message occupies in the run's buffer.
    fn message_len(&self) -> usize {
        match self.direction {
            Direction::Seal => self.size,
            Direction::Open => self.size + TAG_LEN,
        }
    }
}

impl Harness for Aead {
    type Setup = AeadSetup;
    type Input = AeadInput;
    type Output = AeadOutput;

    fn bytes_per_run(&self) -> Option<u64> {
        Some((self.operations() * self.size) as u64)
    }

    fn operations_per_run(&self) -> u64 {
        self.operations() as u64
    }

    fn setup(&self) -> Result<AeadSetup, HarnessError> {
        let key_len = self.algorithm.algorithm().key_len();
        let key = self.algorithm.key(&KEY[..key_len])?;
        let plaintext = plaintext(self.size);
        let mut sealed = Vec::with_capacity(self.size + TAG_LEN);
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
        let message = match self.direction {
            Direction::Seal => &setup.plaintext,
            Direction::Open => &setup.sealed,
        };
        let operations = self.operations();
        let mut messages = Vec::with_capacity(operations * message.len());
        for _ in 0..operations {
            messages.extend_from_slice(message);
        }
        let tags = match self.direction {
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
        let message_len = self.message_len();
        match self.direction {
            Direction::Seal => {
                for message in messages.chunks_exact_mut(message_len) {
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
                for message in messages.chunks_exact_mut(message_len) {
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
        let operations = self.operations();
        match (self.direction, output) {
            (Direction::Seal, AeadOutput::Sealed { messages, tags }) => {
                if messages.len() != operations * self.size || tags.len() != operations {
                    return Err(format!(
                        "sealed {} bytes and {} tags, expected {operations} messages of {} bytes",
                        messages.len(),
                        tags.len(),
                        self.size
                    )
                    .into());
                }
                let (ciphertext, reference_tag) = setup.sealed.split_at(self.size);
                for (index, tag) in tags.iter().enumerate() {
                    let message = &messages[index * self.size..(index + 1) * self.size];
                    if message != ciphertext || tag.as_ref() != reference_tag {
                        return Err(format!(
                            "message {index}: seal produced another ciphertext or tag than the reference"
                        )
                        .into());
                    }
                }
                if ciphertext == &setup.plaintext[..] && self.size > 0 {
                    return Err("seal left the plaintext unencrypted".into());
                }
                let mut reopened = messages[..self.size].to_vec();
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
                if *opened != operations * self.size {
                    return Err(format!(
                        "open returned {opened} bytes, expected {operations} x {}",
                        self.size
                    )
                    .into());
                }
                let message_len = self.message_len();
                for (index, message) in messages.chunks_exact(message_len).enumerate() {
                    if message[..self.size] != setup.plaintext[..] {
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
    use regress_measure::harness::run_natively;

    #[test]
    fn every_aead_harness_runs_natively() {
        let all = Aead::all();
        assert_eq!(all.len(), 24);
        for harness in all {
            run_natively(&harness).unwrap_or_else(|e| panic!("{harness:?}: {e}"));
            let operations = harness.operations_per_run();
            assert_eq!(
                harness.bytes_per_run(),
                Some(RUN_BYTES as u64),
                "{harness:?}: every size fills one run's bytes"
            );
            assert_eq!(operations * harness.size as u64, RUN_BYTES as u64);
        }
        assert_eq!(Aead::aes128gcm_seal(16).operations(), 1024);
        assert_eq!(Aead::aes128gcm_seal(16384).operations(), 1);
        assert_eq!(Aead::aes128gcm_seal(65536).operations(), 1);
    }

    /// A run really makes `operations` calls: one tag per sealed message,
    /// and every opened message is the plaintext.
    #[test]
    fn a_run_makes_one_call_per_message() {
        let seal = Aead::aes256gcm_seal(64);
        let setup = seal.setup().expect("setup");
        let output = seal
            .run(&setup, seal.prepare(&setup).expect("prepare"))
            .expect("run");
        let AeadOutput::Sealed { messages, tags } = &output else {
            panic!("a seal harness must seal");
        };
        assert_eq!(tags.len(), 256);
        assert_eq!(messages.len(), RUN_BYTES);

        let open = Aead::aes256gcm_open(64);
        let output = open
            .run(&setup, open.prepare(&setup).expect("prepare"))
            .expect("run");
        let AeadOutput::Opened { messages, opened } = &output else {
            panic!("an open harness must open");
        };
        assert_eq!(*opened, RUN_BYTES);
        assert_eq!(messages.len(), 256 * (64 + TAG_LEN));
        open.check(&setup, &output).expect("check");
    }

    #[test]
    fn seal_check_rejects_a_flipped_ciphertext_or_tag_byte() {
        let harness = Aead::seal(AeadAlgorithm::Aes128Gcm, 64);
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
        let harness = Aead::open(AeadAlgorithm::Aes256Gcm, 256);
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
        let seal = Aead::seal(AeadAlgorithm::Aes256Gcm, 256);
        assert!(seal.check(&setup, &wrong).is_err(), "direction mismatch");
    }

    /// The two algorithms really differ: the same plaintext, nonce and key
    /// bytes give different ciphertexts.
    #[test]
    fn algorithms_differ() {
        let aes128 = Aead::seal(AeadAlgorithm::Aes128Gcm, 64)
            .setup()
            .expect("128");
        let aes256 = Aead::seal(AeadAlgorithm::Aes256Gcm, 64)
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

    // -----------------------------------------------------------------------
    // Known answers: tests/vectors/gcm.txt
    // -----------------------------------------------------------------------

    /// One known-answer vector.
    #[derive(Debug, Default)]
    struct Vector {
        name: String,
        key: Vec<u8>,
        iv: Vec<u8>,
        pt: Vec<u8>,
        aad: Vec<u8>,
        ct: Vec<u8>,
        tag: Vec<u8>,
    }

    fn unhex(text: &str) -> Vec<u8> {
        assert!(text.len().is_multiple_of(2), "odd hex length: {text:?}");
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
            .collect()
    }

    /// Parses the vector file: `Field = hex` blocks separated by blank lines,
    /// `#` comments.
    fn vectors() -> Vec<Vector> {
        let text = include_str!("../../tests/vectors/gcm.txt");
        let mut out = Vec::new();
        let mut current: Option<Vector> = None;
        for line in text.lines().map(str::trim) {
            if line.starts_with('#') {
                continue;
            }
            if line.is_empty() {
                out.extend(current.take());
                continue;
            }
            let (field, value) = line.split_once('=').expect("a `Field = value` line");
            let (field, value) = (field.trim(), value.trim());
            let vector = current.get_or_insert_with(Vector::default);
            match field {
                "Name" => vector.name = value.to_owned(),
                "Key" => vector.key = unhex(value),
                "IV" => vector.iv = unhex(value),
                "PT" => vector.pt = unhex(value),
                "AAD" => vector.aad = unhex(value),
                "CT" => vector.ct = unhex(value),
                "Tag" => vector.tag = unhex(value),
                other => panic!("unknown field {other:?}"),
            }
        }
        out.extend(current);
        out
    }

    #[test]
    fn vector_file_has_the_promised_vectors() {
        let vectors = vectors();
        assert_eq!(vectors.len(), 12);
        for v in &vectors {
            assert!(!v.name.is_empty());
            assert_eq!(v.iv.len(), NONCE_LEN, "{}: 96-bit IVs only", v.name);
            assert_eq!(v.tag.len(), TAG_LEN, "{}", v.name);
            assert_eq!(v.pt.len(), v.ct.len(), "{}", v.name);
            assert!(
                AeadAlgorithm::for_key_len(v.key.len()).is_some(),
                "{}",
                v.name
            );
        }
        for key_len in [16, 32] {
            let with_aad_and_text = vectors
                .iter()
                .filter(|v| v.key.len() == key_len && !v.aad.is_empty() && !v.pt.is_empty())
                .count();
            assert!(
                with_aad_and_text >= 2,
                "{key_len}-byte keys: {with_aad_and_text}"
            );
        }
    }

    /// aws-lc-rs seals every vector's plaintext to its ciphertext and tag, and
    /// opens ciphertext and tag back to the plaintext; a flipped tag or AAD
    /// byte does not open.
    #[test]
    fn aws_lc_rs_matches_the_gcm_vectors() {
        for v in vectors() {
            let algorithm = AeadAlgorithm::for_key_len(v.key.len()).expect("algorithm");
            let key = algorithm.key(&v.key).expect("key");
            let nonce = || Nonce::try_assume_unique_for_key(&v.iv).expect("96-bit nonce");

            let mut buffer = v.pt.clone();
            let tag = key
                .seal_in_place_separate_tag(nonce(), Aad::from(&v.aad), &mut buffer)
                .expect("seal");
            assert_eq!(buffer, v.ct, "{}: ciphertext", v.name);
            assert_eq!(tag.as_ref(), &v.tag[..], "{}: tag", v.name);

            let mut sealed = [&v.ct[..], &v.tag[..]].concat();
            let opened = key
                .open_in_place(nonce(), Aad::from(&v.aad), &mut sealed)
                .expect("open");
            assert_eq!(opened, &v.pt[..], "{}: plaintext", v.name);

            let mut forged = [&v.ct[..], &v.tag[..]].concat();
            forged[v.ct.len()] ^= 1;
            assert!(
                key.open_in_place(nonce(), Aad::from(&v.aad), &mut forged)
                    .is_err(),
                "{}: a flipped tag byte opened",
                v.name
            );
            let mut other_aad = v.aad.clone();
            other_aad.push(0);
            let mut sealed = [&v.ct[..], &v.tag[..]].concat();
            assert!(
                key.open_in_place(nonce(), Aad::from(&other_aad), &mut sealed)
                    .is_err(),
                "{}: another AAD opened",
                v.name
            );
        }
    }

    #[test]
    fn key_of_the_wrong_length_is_an_error() {
        assert!(AeadAlgorithm::Aes128Gcm.key(&KEY).is_err());
        assert!(AeadAlgorithm::Aes256Gcm.key(&KEY[..16]).is_err());
        assert_eq!(AeadAlgorithm::for_key_len(24), None);
    }
}
