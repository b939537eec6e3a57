//! Application data over an established TLS 1.3 connection: the record
//! layer, per cipher suite and write size.

use std::io::{Read as _, Write as _};

use ::rustls::crypto::aws_lc_rs::cipher_suite;
use ::rustls::{HandshakeKind, SupportedCipherSuite};
use regress_measure::{Harness, HarnessError};

use super::transport::Pair;
use super::{ensure, with_context, Configs, Context as _, Pins, RSA4096};

/// Application bytes every record harness moves per run (1 MiB).
pub const RECORD_BYTES: usize = 1 << 20;

/// A full-size TLS record's plaintext, and the large write size.
pub const WRITE_16K: usize = 16 * 1024;

/// The small write size.
pub const WRITE_1K: usize = 1024;

/// What a record harness's runs share: configs pinned to one suite, the
/// payload, and the write size.
#[derive(Debug)]
pub struct RecordSetup {
    configs: Configs,
    payload: Vec<u8>,
    write_size: usize,
}

/// A connected pair and the server's receive buffer: the input of one run,
/// and (filled) its output.
#[derive(Debug)]
pub struct Transfer {
    pair: Pair,
    received: Vec<u8>,
    got: usize,
}

/// The error of a failed step in the counted loop, built out of line so
/// that the loop itself stays small.
#[cold]
#[inline(never)]
fn failed(what: &'static str, error: impl Into<HarnessError>) -> HarnessError {
    with_context(what, error.into())
}

/// A deterministic, non-repeating-looking payload (xorshift64, the same as
/// the s2n-tls harness's), so a lost, duplicated or reordered record cannot
/// go unnoticed by the check.
fn payload(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let take = (len - out.len()).min(8);
        out.extend_from_slice(&state.to_le_bytes()[..take]);
    }
    out
}

impl RecordSetup {
    fn new(suite: SupportedCipherSuite, write_size: usize) -> Result<RecordSetup, HarnessError> {
        let pins = Pins::new(&::rustls::version::TLS13, suite, &RSA4096);
        Ok(RecordSetup {
            configs: Configs::build(&pins, false, None)?,
            payload: payload(RECORD_BYTES),
            write_size,
        })
    }

    /// A connection after its full handshake, and a zeroed receive buffer.
    fn prepare(&self) -> Result<Transfer, HarnessError> {
        let pair = self
            .configs
            .handshake()
            .context("the handshake before the transfer")?;
        self.configs.check(&pair, HandshakeKind::Full)?;
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
        ensure(
            !pair.client.wants_write() && !pair.server.wants_write(),
            || "a side has data queued after the handshake".into(),
        )?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
            got: 0,
        })
    }

    /// The counted transfer: for each write, the client encrypts it into
    /// one record, the record goes through the pipe, and the server reads,
    /// decrypts and copies out the plaintext.
    ///
    /// Written for a small footprint: with 1 KiB writes the loop runs 1,024
    /// times, so each of its own instructions is 0.01 % of the region. Error
    /// paths are out of line.
    fn transfer(&self, mut transfer: Transfer) -> Result<Transfer, HarnessError> {
        let payload = &self.payload[..];
        let write_size = self.write_size;
        let Transfer {
            pair,
            received,
            got: total,
        } = &mut transfer;
        let received = &mut received[..];
        let (client, server, pipe) = pair.client_to_server();
        let mut sent = 0;
        let mut got = *total;
        while sent < payload.len() {
            let end = payload.len().min(sent + write_size);
            match client.writer().write(&payload[sent..end]) {
                Ok(n) => sent += n,
                Err(e) => return Err(failed("client write", e)),
            }
            // One call moves every queued record (rustls hands them all to
            // one vectored write); anything left behind would show up as an
            // incomplete transfer in `check`.
            if let Err(e) = client.write_tls(pipe) {
                return Err(failed("client write_tls", e));
            }
            while !pipe.is_empty() {
                if let Err(e) = server.read_tls(pipe) {
                    return Err(failed("server read_tls", e));
                }
                match server.process_new_packets() {
                    Ok(state) if state.plaintext_bytes_to_read() == 0 => {}
                    Ok(_) => match server.reader().read(&mut received[got..]) {
                        Ok(n) => got += n,
                        Err(e) => return Err(failed("server read", e)),
                    },
                    Err(e) => return Err(failed("server process_new_packets", e)),
                }
            }
        }
        *total = got;
        Ok(transfer)
    }

    /// The data arrived byte-exact, over the pinned suite, and nothing is
    /// left anywhere.
    fn check(&self, transfer: &Transfer) -> Result<(), HarnessError> {
        self.configs
            .check_parameters(&transfer.pair, HandshakeKind::Full)?;
        ensure(transfer.got == self.payload.len(), || {
            format!(
                "server received {} bytes, client sent {}",
                transfer.got,
                self.payload.len()
            )
        })?;
        if let Some(at) = transfer
            .received
            .iter()
            .zip(&self.payload)
            .position(|(a, b)| a != b)
        {
            return Err(format!("received data differs from what was sent at byte {at}").into());
        }
        let in_flight = transfer.pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the transfer: {in_flight:?}")
        })?;
        ensure(!transfer.pair.client.wants_write(), || {
            "the client has records it never sent".into()
        })
    }
}

/// The part of every record harness's documentation that does not depend on
/// the suite or the write size.
macro_rules! record_doc {
    () => {
        "\n\n**Counted:** for each write, the client's `writer().write` \
         (rustls encrypts the plaintext into one TLS 1.3 record at once), \
         `write_tls` into the in-memory pipe, and the server's `read_tls` \
         (rustls reads at most 4 KiB per call, growing its buffer to a \
         record's size), `process_new_packets` (decryption) and \
         `reader().read` into the receive buffer; until all 1,048,576 bytes \
         have arrived. One write is delivered and read before the next is \
         made, the pattern of a server that keeps up with its peer. This is \
         the steady-state record layer, the cost that scales with bytes \
         ([`Harness::bytes_per_run`] reports 1 MiB, so results read as \
         instructions per byte).\
         \n\n**Not counted:** configs and the payload (`setup`); the \
         connection, its full TLS 1.3 handshake (secp256r1, RSA-4096 server, \
         the pinned suite only) and the zeroed 1 MiB receive buffer \
         (`prepare`). The handshake is outside the count because the \
         handshake harnesses measure it; the buffers are allocated outside so \
         the count is the library's.\
         \n\n**The transport's share:** the harness's own code (this loop and \
         the pipe's bookkeeping, about 100 instructions per record) is about \
         0.2 % of the region with 16 KiB writes and 0.6 % with 1 KiB writes \
         (AES-128-GCM, the cheapest suite; up to 1.0 % when standard-library \
         code inlined into it is counted too). Not in that figure: the pipe \
         copies every byte twice, in and out, with glibc's `memcpy` (what a \
         socket would do in the kernel, where Valgrind does not count it): \
         about 200 K instructions per run with 16 KiB records and 270 K with \
         1 KiB records, measured apart under the runner's glibc settings. The \
         s2n-tls and OpenSSL record harnesses also copy every byte into and \
         out of a pipe.\
         \n\n**Check:** the connection runs TLS 1.3 with the pinned suite and \
         secp256r1, the server received exactly the bytes sent, byte for \
         byte, and nothing is left in the pipes or the client's send queue."
    };
}

/// Defines a record harness for one suite and write size.
macro_rules! record_harness {
    ($(#[$doc:meta])* $name:ident, suite: $suite:expr, write: $write:expr) => {
        $(#[$doc])*
        #[doc = record_doc!()]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl Harness for $name {
            type Setup = RecordSetup;
            type Input = Transfer;
            type Output = Transfer;

            fn bytes_per_run(&self) -> Option<u64> {
                Some(RECORD_BYTES as u64)
            }

            fn setup(&self) -> Result<RecordSetup, HarnessError> {
                RecordSetup::new($suite, $write)
            }

            fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
                setup.prepare()
            }

            fn run(&self, setup: &RecordSetup, transfer: Transfer) -> Result<Transfer, HarnessError> {
                setup.transfer(transfer)
            }

            fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
                setup.check(transfer)
            }
        }
    };
}

record_harness!(
    /// 1 MiB of application data from client to server in 64 writes of
    /// 16 KiB (64 full-size records), TLS_AES_128_GCM_SHA256.
    RecordAes128Gcm16k,
    suite: cipher_suite::TLS13_AES_128_GCM_SHA256,
    write: WRITE_16K
);

record_harness!(
    /// 1 MiB of application data from client to server in 1,024 writes of
    /// 1 KiB (1,024 records), TLS_AES_128_GCM_SHA256: the per-record cost
    /// weighs 16 times more than in [`RecordAes128Gcm16k`].
    RecordAes128Gcm1k,
    suite: cipher_suite::TLS13_AES_128_GCM_SHA256,
    write: WRITE_1K
);

record_harness!(
    /// 1 MiB of application data from client to server in 64 writes of
    /// 16 KiB (64 full-size records), TLS_AES_256_GCM_SHA384.
    RecordAes256Gcm16k,
    suite: cipher_suite::TLS13_AES_256_GCM_SHA384,
    write: WRITE_16K
);

record_harness!(
    /// 1 MiB of application data from client to server in 1,024 writes of
    /// 1 KiB (1,024 records), TLS_AES_256_GCM_SHA384.
    RecordAes256Gcm1k,
    suite: cipher_suite::TLS13_AES_256_GCM_SHA384,
    write: WRITE_1K
);

record_harness!(
    /// 1 MiB of application data from client to server in 64 writes of
    /// 16 KiB (64 full-size records), TLS_CHACHA20_POLY1305_SHA256.
    RecordChaCha20Poly1305_16k,
    suite: cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
    write: WRITE_16K
);

record_harness!(
    /// 1 MiB of application data from client to server in 1,024 writes of
    /// 1 KiB (1,024 records), TLS_CHACHA20_POLY1305_SHA256.
    RecordChaCha20Poly1305_1k,
    suite: cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
    write: WRITE_1K
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rustls::transport::flush;
    use ::rustls::CipherSuite;
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
        runs_natively(&RecordChaCha20Poly1305_16k);
    }

    #[test]
    fn record_chacha20poly1305_1k_runs_natively() {
        runs_natively(&RecordChaCha20Poly1305_1k);
    }

    #[test]
    fn each_record_harness_negotiates_its_suite() {
        let cases: [(RecordSetup, CipherSuite); 3] = [
            (
                RecordAes128Gcm1k.setup().expect("setup"),
                CipherSuite::TLS13_AES_128_GCM_SHA256,
            ),
            (
                RecordAes256Gcm1k.setup().expect("setup"),
                CipherSuite::TLS13_AES_256_GCM_SHA384,
            ),
            (
                RecordChaCha20Poly1305_1k.setup().expect("setup"),
                CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            ),
        ];
        for (setup, suite) in cases {
            let transfer = setup.prepare().expect("prepare");
            let negotiated = transfer.pair.client.negotiated_cipher_suite();
            assert_eq!(negotiated.map(|s| s.suite()), Some(suite));
        }
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
    fn record_check_rejects_a_short_transfer() {
        let harness = RecordAes128Gcm1k;
        let setup = harness.setup().expect("setup");
        let mut output = harness.prepare(&setup).expect("prepare");
        output.got = RECORD_BYTES - 1;
        output.received.copy_from_slice(&setup.payload);
        assert!(harness.check(&setup, &output).is_err());
    }

    /// One write is one record: 16 KiB (a full-size record) or 1 KiB of
    /// plaintext plus TLS 1.3's 22 bytes (5 header, 1 content type, 16 tag).
    #[test]
    fn each_write_is_one_record() {
        for (setup, size) in [
            (RecordAes128Gcm16k.setup().expect("setup"), WRITE_16K),
            (RecordAes128Gcm1k.setup().expect("setup"), WRITE_1K),
        ] {
            let mut transfer = setup.prepare().expect("prepare");
            let (client, _, pipe) = transfer.pair.client_to_server();
            let written = client
                .writer()
                .write(&setup.payload[..size])
                .expect("write");
            assert_eq!(written, size);
            flush(client, pipe).expect("flush");
            assert_eq!(pipe.len(), size + 22);
            let header = &pipe.unread()[..5];
            assert_eq!(header[0], 0x17, "application data");
            assert_eq!(
                usize::from(u16::from_be_bytes([header[3], header[4]])),
                size + 17
            );
        }
    }

    #[test]
    fn payload_is_deterministic_and_not_constant() {
        let a = payload(RECORD_BYTES);
        assert_eq!(a.len(), RECORD_BYTES);
        assert_eq!(a, payload(RECORD_BYTES));
        assert_ne!(a[..16384], a[16384..32768]);
    }
}
