//! A deterministic "random" number generator for rustls.
//!
//! # NOT RANDOM. TEST ONLY. NEVER USE THIS OUTSIDE A MEASUREMENT.
//!
//! [`DeterministicRandom`] produces the ChaCha20 keystream of a key that is a
//! constant in this file ([`SEED`]), block after block, for the whole process.
//! Everything rustls draws from its provider's `secure_random` (client and
//! server randoms, the TLS 1.3 legacy session id, ticket `age_add` values,
//! TLS 1.2 session ids) is therefore the same in every process: anyone can
//! predict it. That is the point: the instruction count of a path must not
//! depend on fresh entropy.
//!
//! It covers only rustls's own draws. Key generation, RSA blinding, PSS salts
//! and ticket keys are drawn inside aws-lc, which `.cargo/config.toml` builds
//! in its (equally unsafe) deterministic mode.
//!
//! The stream is shared by every connection in the process behind a
//! [`Mutex`], so the n-th draw of a process is always the same bytes; an
//! uncontended lock costs the same few instructions every time.

use std::sync::Mutex;

use super::api::{GetRandomFailed, SecureRandom};

/// The ChaCha20 key of the stream: a constant, visibly not a secret.
pub const SEED: [u8; 32] = *b"regress: NOT RANDOM, test only!!";

/// The generator every harness provider uses.
pub static DETERMINISTIC_RANDOM: DeterministicRandom = DeterministicRandom::new(SEED);

/// A ChaCha20 keystream (RFC 8439 block function, 64-bit block counter, zero
/// nonce) behind a lock. See the module documentation: not random.
#[derive(Debug)]
pub struct DeterministicRandom {
    stream: Mutex<Keystream>,
}

impl DeterministicRandom {
    /// A generator at the start of `seed`'s keystream.
    pub const fn new(seed: [u8; 32]) -> DeterministicRandom {
        DeterministicRandom {
            stream: Mutex::new(Keystream::new(seed)),
        }
    }
}

impl SecureRandom for DeterministicRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        let mut stream = self.stream.lock().map_err(|_| GetRandomFailed)?;
        stream.fill(buf);
        Ok(())
    }
}

/// The keystream's state: key, next block number and the unread rest of the
/// current block.
#[derive(Debug)]
struct Keystream {
    key: [u32; 8],
    counter: u64,
    block: [u8; 64],
    used: usize,
}

impl Keystream {
    const fn new(seed: [u8; 32]) -> Keystream {
        let mut key = [0u32; 8];
        let mut i = 0;
        while i < 8 {
            key[i] = u32::from_le_bytes([
                seed[4 * i],
                seed[4 * i + 1],
                seed[4 * i + 2],
                seed[4 * i + 3],
            ]);
            i += 1;
        }
        Keystream {
            key,
            counter: 0,
            block: [0; 64],
            used: 64,
        }
    }

    fn fill(&mut self, mut out: &mut [u8]) {
        while !out.is_empty() {
            if self.used == self.block.len() {
                let counter = self.counter;
                self.block =
                    chacha20_block(&self.key, [counter as u32, (counter >> 32) as u32, 0, 0]);
                self.counter = counter.wrapping_add(1);
                self.used = 0;
            }
            let n = (self.block.len() - self.used).min(out.len());
            let (head, rest) = out.split_at_mut(n);
            head.copy_from_slice(&self.block[self.used..self.used + n]);
            self.used += n;
            out = rest;
        }
    }
}

/// The ChaCha20 block function (RFC 8439 section 2.3): `tail` is state words
/// 12 to 15 (block counter and nonce).
fn chacha20_block(key: &[u32; 8], tail: [u32; 4]) -> [u8; 64] {
    let mut initial = [0u32; 16];
    initial[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    initial[4..12].copy_from_slice(key);
    initial[12..].copy_from_slice(&tail);
    let mut s = initial;
    for _ in 0..10 {
        quarter_round(&mut s, 0, 4, 8, 12);
        quarter_round(&mut s, 1, 5, 9, 13);
        quarter_round(&mut s, 2, 6, 10, 14);
        quarter_round(&mut s, 3, 7, 11, 15);
        quarter_round(&mut s, 0, 5, 10, 15);
        quarter_round(&mut s, 1, 6, 11, 12);
        quarter_round(&mut s, 2, 7, 8, 13);
        quarter_round(&mut s, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
        chunk.copy_from_slice(&s[i].wrapping_add(initial[i]).to_le_bytes());
    }
    out
}

fn quarter_round(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// RFC 8439 section 2.3.2 (also what `openssl enc -chacha20` produces).
    #[test]
    fn block_function_matches_rfc_8439() {
        let key: [u8; 32] = std::array::from_fn(|i| i as u8);
        let key = Keystream::new(key).key;
        let block = chacha20_block(&key, [1, 0x0900_0000, 0x4a00_0000, 0]);
        assert_eq!(
            hex(&block),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e\
             d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        );
    }

    #[test]
    fn stream_is_the_same_however_it_is_cut() {
        let one = DeterministicRandom::new(SEED);
        let mut whole = [0u8; 300];
        one.fill(&mut whole).expect("fill");

        let two = DeterministicRandom::new(SEED);
        let mut pieces = [0u8; 300];
        let mut at = 0;
        for len in [1, 31, 32, 64, 65, 7, 100] {
            two.fill(&mut pieces[at..at + len]).expect("fill");
            at += len;
        }
        assert_eq!(at, 300);
        assert_eq!(whole, pieces);
        assert_ne!(whole[..64], whole[64..128], "blocks differ");
        assert_ne!(whole, [0u8; 300]);
    }

    #[test]
    fn stream_starts_with_block_zero_of_the_seed() {
        let rng = DeterministicRandom::new(SEED);
        let mut first = [0u8; 64];
        rng.fill(&mut first).expect("fill");
        assert_eq!(first, chacha20_block(&Keystream::new(SEED).key, [0; 4]));
    }
}
