//! The record layer: 1 MiB of application data over an established TLS 1.3
//! connection, one harness per cipher suite and write size.
//!
//! All six share one implementation and differ only in the suite both sides
//! pin (`set_ciphersuites`) and in the size of the client's writes:
//!
//! - **16 KiB writes**: each `SSL_write` fills one full-size record (16,384
//!   bytes of plaintext, the TLS maximum), 64 records in all. This is bulk
//!   transfer, where the cipher's per-byte cost dominates.
//! - **1 KiB writes**: 1,024 records of 1 KiB. The per-record cost (record
//!   header, nonce, AEAD setup, `SSL_write`/`SSL_read` bookkeeping) weighs
//!   sixteen times more, as it does for chatty protocols.
//!
//! The client writes one chunk, then the server reads until it has caught up,
//! so exactly one record is in flight at a time and the transport never grows.

use openssl::ssl::SslVersion;
use regress_measure::{Harness, HarnessError};

use super::transport::Pair;
use super::{
    check_negotiated, ensure, new_pair, payload, runtime_libraries, Context, Contexts, Expect,
    Profile, Protocol, RSA,
};

/// Application bytes every record harness moves per run.
pub const RECORD_BYTES: usize = 1 << 20;

/// Bytes a TLS 1.3 AEAD record adds to its plaintext: a 5-byte header, the
/// 1-byte inner content type and a 16-byte tag. The same for all three
/// suites.
pub const TLS13_RECORD_OVERHEAD: usize = 22;

/// Room for the one record in flight (at most 16 KiB + overhead), twice
/// over.
const RECORD_PIPE_CAPACITY: usize = 2 * (16 * 1024 + 256);

/// What every run of a record harness shares: contexts pinned to its suite
/// and the payload.
#[derive(Debug)]
pub struct RecordSetup {
    contexts: Contexts,
    payload: Vec<u8>,
}

/// A connected pair and the server's receive buffer: the input of one run,
/// and (filled) its output.
#[derive(Debug)]
pub struct Transfer {
    pair: Pair,
    received: Vec<u8>,
}

/// A record profile: [`super::HandshakeRsa4096`]'s, with `suite`.
const fn record_profile(suite: &'static str) -> Profile {
    Profile {
        protocol: Protocol::Tls13 { suite },
        ..Profile::tls13(&RSA)
    }
}

fn setup(profile: Profile) -> Result<RecordSetup, HarnessError> {
    Ok(RecordSetup {
        contexts: Contexts::new(profile)?,
        payload: payload(RECORD_BYTES),
    })
}

fn prepare(setup: &RecordSetup) -> Result<Transfer, HarnessError> {
    let mut pair = new_pair(&setup.contexts, RECORD_PIPE_CAPACITY, None)?;
    pair.handshake()
        .context("the handshake before the transfer")?;
    check_negotiated(&pair, &setup.contexts.profile, Expect::Full)?;
    let in_flight = pair.in_flight();
    ensure(in_flight == (0, 0), || {
        format!("bytes left in the transport after the handshake: {in_flight:?}")
    })?;
    Ok(Transfer {
        pair,
        received: vec![0; RECORD_BYTES],
    })
}

/// The counted transfer: `chunk`-byte writes by the client, each read in
/// full by the server before the next.
fn run(
    setup: &RecordSetup,
    mut transfer: Transfer,
    chunk: usize,
) -> Result<Transfer, HarnessError> {
    let payload = &setup.payload[..];
    let Transfer { pair, received } = &mut transfer;
    let mut sent = 0;
    let mut got = 0;
    while sent < payload.len() {
        let end = (sent + chunk).min(payload.len());
        let n = pair
            .client
            .ssl_write(&payload[sent..end])
            .context("client write failed")?;
        if n != end - sent {
            return Err(format!("client wrote {n} of {} bytes", end - sent).into());
        }
        sent = end;
        while got < sent {
            let n = pair
                .server
                .ssl_read(&mut received[got..])
                .context("server read failed")?;
            if n == 0 {
                return Err("server read 0 bytes".into());
            }
            got += n;
        }
    }
    Ok(transfer)
}

fn check(setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
    let Protocol::Tls13 { suite } = setup.contexts.profile.protocol else {
        return Err("record harnesses run TLS 1.3".into());
    };
    for (side, stream) in [
        ("client", &transfer.pair.client),
        ("server", &transfer.pair.server),
    ] {
        let ssl = stream.ssl();
        ensure(ssl.version2() == Some(SslVersion::TLS1_3), || {
            format!("{side}: negotiated {}, expected TLS 1.3", ssl.version_str())
        })?;
        let cipher = ssl.current_cipher().map(|c| c.name());
        ensure(cipher == Some(suite), || {
            format!("{side}: cipher {cipher:?}, pinned {suite}")
        })?;
    }
    let received = &transfer.received;
    ensure(received.len() == setup.payload.len(), || {
        format!(
            "received {} bytes, sent {}",
            received.len(),
            setup.payload.len()
        )
    })?;
    if let Some(at) = received
        .iter()
        .zip(&setup.payload)
        .position(|(a, b)| a != b)
    {
        return Err(format!("received data differs from what was sent at byte {at}").into());
    }
    let in_flight = transfer.pair.in_flight();
    ensure(in_flight == (0, 0), || {
        format!("bytes left in the transport after the transfer: {in_flight:?}")
    })
}

/// Declares a record harness for `$suite` and `$chunk`-byte writes.
macro_rules! record_harness {
    ($(#[$doc:meta])* $name:ident, $suite:literal, $chunk:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl $name {
            /// What this harness's contexts negotiate.
            pub const PROFILE: Profile = record_profile($suite);
            /// Plaintext bytes per `SSL_write` (and so per record).
            pub const WRITE_SIZE: usize = $chunk;
        }

        impl Harness for $name {
            type Setup = RecordSetup;
            type Input = Transfer;
            type Output = Transfer;

            fn bytes_per_run(&self) -> Option<u64> {
                Some(RECORD_BYTES as u64)
            }

            fn runtime_libraries(&self) -> Vec<(String, String)> {
                runtime_libraries()
            }

            fn setup(&self) -> Result<RecordSetup, HarnessError> {
                setup(Self::PROFILE)
            }

            fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
                prepare(setup)
            }

            fn run(&self, setup: &RecordSetup, transfer: Transfer) -> Result<Transfer, HarnessError> {
                run(setup, transfer, Self::WRITE_SIZE)
            }

            fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
                check(setup, transfer)
            }
        }
    };
}

record_harness!(
    /// 1 MiB from client to server over TLS 1.3 with TLS_AES_128_GCM_SHA256,
    /// in 16 KiB writes (64 full-size records).
    ///
    /// **Counted:** the client's `SSL_write` calls, each sealing one record
    /// (copying the plaintext into OpenSSL's write buffer, the per-record
    /// nonce and AEAD setup, AES-128-GCM encryption), the server's
    /// `SSL_read` calls, each opening one record (header, AES-128-GCM
    /// decryption and tag check, the copy into the receive buffer), and the
    /// transport's copies between them. [`Harness::bytes_per_run`] reports
    /// 1 MiB, so results also read as instructions per byte.
    ///
    /// **Not counted:** the contexts and payload (`setup`); the connections,
    /// their full handshake (measured by [`super::HandshakeRsa4096`]), the
    /// 1 MiB receive buffer and the transport's reservation (`prepare`).
    ///
    /// **Check:** the server received exactly the bytes sent, nothing is left
    /// in the transport, and both sides run the pinned suite.
    RecordAes128Gcm16k,
    "TLS_AES_128_GCM_SHA256",
    16 * 1024
);

record_harness!(
    /// 1 MiB over TLS 1.3 with TLS_AES_128_GCM_SHA256, in 1 KiB writes (1,024
    /// records).
    ///
    /// **Counted / Not counted / Check:** as [`RecordAes128Gcm16k`], with
    /// sixteen times as many `SSL_write`/`SSL_read` calls and records, each
    /// a sixteenth of the size: this is the per-record cost.
    RecordAes128Gcm1k,
    "TLS_AES_128_GCM_SHA256",
    1024
);

record_harness!(
    /// 1 MiB over TLS 1.3 with TLS_AES_256_GCM_SHA384, in 16 KiB writes.
    ///
    /// **Counted / Not counted / Check:** as [`RecordAes128Gcm16k`], with
    /// AES-256-GCM (14 AES rounds instead of 10).
    RecordAes256Gcm16k,
    "TLS_AES_256_GCM_SHA384",
    16 * 1024
);

record_harness!(
    /// 1 MiB over TLS 1.3 with TLS_AES_256_GCM_SHA384, in 1 KiB writes.
    ///
    /// **Counted / Not counted / Check:** as [`RecordAes128Gcm1k`], with
    /// AES-256-GCM.
    RecordAes256Gcm1k,
    "TLS_AES_256_GCM_SHA384",
    1024
);

record_harness!(
    /// 1 MiB over TLS 1.3 with TLS_CHACHA20_POLY1305_SHA256, in 16 KiB
    /// writes.
    ///
    /// **Counted / Not counted / Check:** as [`RecordAes128Gcm16k`], with
    /// ChaCha20-Poly1305.
    RecordChacha20Poly1305_16k,
    "TLS_CHACHA20_POLY1305_SHA256",
    16 * 1024
);

record_harness!(
    /// 1 MiB over TLS 1.3 with TLS_CHACHA20_POLY1305_SHA256, in 1 KiB writes.
    ///
    /// **Counted / Not counted / Check:** as [`RecordAes128Gcm1k`], with
    /// ChaCha20-Poly1305.
    RecordChacha20Poly1305_1k,
    "TLS_CHACHA20_POLY1305_SHA256",
    1024
);

#[cfg(test)]
mod tests {
    use super::super::transport::RECORD_HEADER_LEN;
    use super::*;
    use regress_measure::harness::run_natively;

    fn runs_natively<H: Harness>(harness: &H) {
        run_natively(harness).expect("runs natively");
        assert_eq!(harness.bytes_per_run(), Some(1_048_576));
    }

    #[test]
    fn record_aes128gcm_16k_runs_natively() {
        runs_natively(&RecordAes128Gcm16k);
    }

    #[test]
    fn record_aes128gcm_1k_runs_natively() {
        runs_natively(&RecordAes128Gcm1k);
    }

    #[test]
    fn record_aes256gcm_16k_runs_natively() {
        runs_natively(&RecordAes256Gcm16k);
    }

    #[test]
    fn record_aes256gcm_1k_runs_natively() {
        runs_natively(&RecordAes256Gcm1k);
    }

    #[test]
    fn record_chacha20poly1305_16k_runs_natively() {
        runs_natively(&RecordChacha20Poly1305_16k);
    }

    #[test]
    fn record_chacha20poly1305_1k_runs_natively() {
        runs_natively(&RecordChacha20Poly1305_1k);
    }

    #[test]
    fn record_check_rejects_a_flipped_byte() {
        let harness = RecordAes128Gcm16k;
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        let mut output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("intact transfer");
        output.received[RECORD_BYTES / 2] ^= 0x01;
        let error = harness
            .check(&setup, &output)
            .expect_err("a flipped byte must fail the check");
        assert!(error.to_string().contains("524288"), "{error}");
    }

    #[test]
    fn record_check_rejects_another_suite() {
        let setup = setup(RecordAes256Gcm16k::PROFILE).expect("setup");
        let transfer = prepare(&setup).expect("prepare");
        let transfer = run(&setup, transfer, 16 * 1024).expect("run");
        let other = RecordSetup {
            contexts: Contexts::new(RecordAes128Gcm16k::PROFILE).expect("contexts"),
            payload: payload(RECORD_BYTES),
        };
        let error = check(&other, &transfer).expect_err("AES-256 is not AES-128");
        assert!(
            error.to_string().contains("TLS_AES_256_GCM_SHA384"),
            "{error}"
        );
    }

    /// One write is one record of exactly the write's size: full-size
    /// (16 KiB) records for the 16k harnesses, 1 KiB for the 1k ones.
    #[test]
    fn one_write_is_one_record() {
        for (profile, size) in [
            (RecordAes128Gcm16k::PROFILE, RecordAes128Gcm16k::WRITE_SIZE),
            (RecordAes128Gcm1k::PROFILE, RecordAes128Gcm1k::WRITE_SIZE),
            (RecordAes256Gcm16k::PROFILE, RecordAes256Gcm16k::WRITE_SIZE),
            (
                RecordChacha20Poly1305_1k::PROFILE,
                RecordChacha20Poly1305_1k::WRITE_SIZE,
            ),
        ] {
            let setup = setup(profile).expect("setup");
            let mut transfer = prepare(&setup).expect("prepare");
            let n = transfer
                .pair
                .client
                .ssl_write(&setup.payload[..size])
                .expect("write");
            assert_eq!(n, size);
            assert_eq!(
                transfer.pair.pending_client_records(),
                Some(vec![size + TLS13_RECORD_OVERHEAD - RECORD_HEADER_LEN]),
                "{profile:?}"
            );
        }
        assert_eq!(RecordAes128Gcm16k::WRITE_SIZE, 16_384);
        assert_eq!(RecordChacha20Poly1305_1k::WRITE_SIZE, 1_024);
    }
}
