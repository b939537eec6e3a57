//! A deterministic random-number generator for OpenSSL. **TEST ONLY.**
//!
//! # Never use this outside measurement
//!
//! Once [`install`]ed, every random byte OpenSSL produces in this process
//! (TLS randoms, ephemeral ECDHE keys, RSA blinding factors, RSA-PSS salts,
//! ECDSA nonces, session-ticket keys) comes from a fixed-seed stream that
//! anyone can reproduce. A process running with it has **no security at
//! all**. It exists so that two processes running the same path execute the
//! same instructions: OpenSSL's own DRBG seeds itself from the OS (and from
//! RDRAND, which Valgrind passes through), and the values it draws decide
//! how often rejection sampling loops and how blinding is refreshed, which
//! moved the RSA-4096 handshake by about 1.1 K instructions between runs
//! (`shared/FIELD-NOTES.md`).
//!
//! # How it works
//!
//! OpenSSL 3.x (3.0 and 3.5 checked) still supports the deprecated
//! `RAND_METHOD` interface:
//! `RAND_bytes_ex` and `RAND_priv_bytes_ex` (which everything in libssl and
//! the default provider draws from) first ask `RAND_get_rand_method()`, and
//! when that is not OpenSSL's own method they call its `bytes` callback
//! instead of a DRBG (`crypto/rand/rand_lib.c`). [`install`] sets
//! [`METHOD`], whose `bytes` reads a SplitMix64 stream over a counter that
//! starts at [`SEED`]. The same order of draws therefore yields the same
//! bytes in every process. `seed` and `add` ignore their input, so nothing
//! (such as OpenSSL mixing in the time) can perturb the stream.
//!
//! The stream is process-wide and shared by all threads (under a mutex): in
//! a measured child only one harness runs, on one thread, so the draws happen
//! in the same order every time. Native `cargo test` runs tests on parallel
//! threads, which interleaves draws differently from run to run; that is
//! harmless there, since nothing is counted.
//!
//! Generating bytes costs a few instructions per 8 bytes, less than OpenSSL's
//! CTR-DRBG would; a handshake draws a few hundred bytes, so the difference
//! is negligible next to its tens of millions of instructions.

use std::ffi::{c_double, c_int, c_void};
use std::sync::{Mutex, OnceLock, PoisonError};

use regress_measure::HarnessError;

extern "C" {
    // From OpenSSL 3.0's `rand.h`; `openssl-sys` 0.9 does not declare them.
    fn RAND_set_rand_method(meth: *const RandMethod) -> c_int;
    fn RAND_get_rand_method() -> *const RandMethod;
}

/// Where the stream starts ("REGRESS!" in ASCII). Any constant works.
pub const SEED: u64 = 0x5245_4752_4553_5321;

/// The SplitMix64 increment (2^64 / golden ratio).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// OpenSSL's `RAND_METHOD` (`struct rand_meth_st` in 3.0's `rand.h`).
#[repr(C)]
#[derive(Debug)]
pub struct RandMethod {
    seed: Option<unsafe extern "C" fn(buf: *const c_void, num: c_int) -> c_int>,
    bytes: Option<unsafe extern "C" fn(buf: *mut u8, num: c_int) -> c_int>,
    cleanup: Option<unsafe extern "C" fn()>,
    add:
        Option<unsafe extern "C" fn(buf: *const c_void, num: c_int, randomness: c_double) -> c_int>,
    pseudorand: Option<unsafe extern "C" fn(buf: *mut u8, num: c_int) -> c_int>,
    status: Option<unsafe extern "C" fn() -> c_int>,
}

/// The deterministic method. `static` because OpenSSL keeps the pointer for
/// the life of the process.
pub static METHOD: RandMethod = RandMethod {
    seed: Some(ignore_seed),
    bytes: Some(fill_bytes),
    cleanup: None,
    add: Some(ignore_add),
    pseudorand: Some(fill_bytes),
    status: Some(always_ready),
};

/// A SplitMix64 stream: a counter advanced by the golden-ratio increment,
/// each value mixed into 8 output bytes.
#[derive(Debug)]
pub struct Stream {
    counter: u64,
}

impl Stream {
    /// A stream starting at `seed`.
    pub const fn new(seed: u64) -> Stream {
        Stream { counter: seed }
    }

    /// Fills `out` with the next bytes. A request that is not a multiple of
    /// 8 bytes discards the rest of its last word.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            self.counter = self.counter.wrapping_add(GAMMA);
            let mut z = self.counter;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let bytes = z.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

static STREAM: Mutex<Stream> = Mutex::new(Stream::new(SEED));

#[cfg(test)]
thread_local! {
    /// Calls of [`fill_bytes`] made on this thread (tests only: proves
    /// that OpenSSL's public and private generators both come here).
    static DRAWS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// `RAND_METHOD.bytes` and `.pseudorand`: the next `num` bytes of the stream.
///
/// # Safety
///
/// `buf` must point to `num` writable bytes (OpenSSL's contract).
unsafe extern "C" fn fill_bytes(buf: *mut u8, num: c_int) -> c_int {
    let Ok(len) = usize::try_from(num) else {
        return 0;
    };
    if len == 0 {
        return 1;
    }
    if buf.is_null() {
        return 0;
    }
    // SAFETY: OpenSSL passes a buffer of `num` writable bytes that nothing
    // else touches during the call.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    // A poisoned lock only means another thread panicked while holding it;
    // the counter is still a valid state. Never panic across FFI.
    STREAM
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .fill(out);
    #[cfg(test)]
    DRAWS.with(|draws| draws.set(draws.get() + 1));
    1
}

/// `RAND_METHOD.seed`: ignored, so the stream stays a function of the draws.
unsafe extern "C" fn ignore_seed(_buf: *const c_void, _num: c_int) -> c_int {
    1
}

/// `RAND_METHOD.add`: ignored, as [`ignore_seed`].
unsafe extern "C" fn ignore_add(_buf: *const c_void, _num: c_int, _randomness: c_double) -> c_int {
    1
}

/// `RAND_METHOD.status`: always seeded.
unsafe extern "C" fn always_ready() -> c_int {
    1
}

/// Makes [`METHOD`] OpenSSL's random method, once per process.
///
/// Call it before anything in the process draws randomness from OpenSSL
/// ([`super::system::init`] does, first thing in every harness's `setup`). Fails if
/// OpenSSL refuses the method or reports another one afterwards.
pub fn install() -> Result<(), HarnessError> {
    static INSTALLED: OnceLock<Result<(), &'static str>> = OnceLock::new();
    let result = INSTALLED.get_or_init(|| {
        // SAFETY: `METHOD` is a `static` with the C layout of `RAND_METHOD`
        // and callbacks of the right signatures; OpenSSL only reads it and
        // keeps the pointer, which stays valid for the whole process.
        let set = unsafe { RAND_set_rand_method(&METHOD) };
        if set != 1 {
            return Err("RAND_set_rand_method refused the deterministic method");
        }
        // SAFETY: a plain getter; the result is only compared.
        let current = unsafe { RAND_get_rand_method() };
        if !std::ptr::eq(current, &METHOD) {
            return Err("OpenSSL does not report the deterministic RAND method as current");
        }
        Ok(())
    });
    result.map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_deterministic_and_not_constant() {
        let mut a = [0u8; 64];
        let mut b = [0u8; 64];
        Stream::new(SEED).fill(&mut a);
        Stream::new(SEED).fill(&mut b);
        assert_eq!(a, b);
        assert_ne!(a[..8], a[8..16]);
        let mut c = [0u8; 64];
        Stream::new(SEED + 1).fill(&mut c);
        assert_ne!(a, c);
    }

    #[test]
    fn odd_lengths_are_filled() {
        let mut out = [0u8; 13];
        Stream::new(SEED).fill(&mut out);
        assert!(out[8..].iter().any(|&b| b != 0));
    }

    /// Both of OpenSSL's generators (public and private) draw from the
    /// stream once it is installed.
    #[test]
    fn openssl_draws_from_the_stream() {
        super::super::system::init().expect("init");
        let before = DRAWS.with(|d| d.get());
        let mut public = [0u8; 32];
        openssl::rand::rand_bytes(&mut public).expect("RAND_bytes");
        let mut private = [0u8; 32];
        openssl::rand::rand_priv_bytes(&mut private).expect("RAND_priv_bytes");
        assert_eq!(DRAWS.with(|d| d.get()), before + 2);
        assert_ne!(public, private);
    }

    #[test]
    fn callback_rejects_bad_arguments() {
        // SAFETY: a negative length or a null buffer must be refused without
        // touching memory; a zero length is a successful no-op.
        unsafe {
            assert_eq!(fill_bytes(std::ptr::null_mut(), 4), 0);
            assert_eq!(fill_bytes(std::ptr::null_mut(), -1), 0);
            assert_eq!(fill_bytes(std::ptr::null_mut(), 0), 1);
        }
    }
}
