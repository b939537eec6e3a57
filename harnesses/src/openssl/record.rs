//! [`Records`]: the record layer, 1 MiB of application data over an
//! established connection, per cipher suite and write size.

use regress_measure::{Harness, HarnessError};

use super::check::{both_sides, check_handshake};
use super::context::Contexts;
use super::library::runtime_libraries;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::payload::{check_received, payload, RECORD_BYTES};
use crate::paths::Record;

/// 1 MiB from client to server, as its [`Record`] path says: `write_size`
/// bytes per `SSL_write`, each one record of the pinned suite (both sides
/// pin it with `set_ciphersuites`).
///
/// With 16 KiB writes each `SSL_write` fills one full-size record (16,384
/// bytes of plaintext, the TLS maximum), 64 records in all: bulk transfer,
/// where the cipher's per-byte cost dominates. With 1 KiB writes, 1,024
/// records of 1 KiB: the per-record cost (record header, nonce, AEAD setup,
/// `SSL_write`/`SSL_read` bookkeeping) weighs sixteen times more, as it does
/// for chatty protocols. The client writes one chunk, then the server reads
/// until it has caught up, so exactly one record is in flight at a time.
///
/// **Counted:** the client's `SSL_write` calls, each sealing one record
/// (copying the plaintext into OpenSSL's write buffer, the per-record nonce
/// and AEAD setup, the encryption), the server's `SSL_read` calls, each
/// opening one record (header, decryption and tag check, the copy into the
/// receive buffer), and the transport's copies between them.
/// [`Harness::bytes_per_run`] reports 1 MiB, so results also read as
/// instructions per byte.
///
/// **Not counted:** the contexts and payload (`setup`); the connections,
/// their full handshake (measured by the handshake paths) and the 1 MiB
/// receive buffer (`prepare`).
///
/// **Check:** `prepare` checked the whole handshake; after the run both
/// sides still report the pinned parameters, the server received exactly
/// the bytes sent, and nothing is left in the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Records(pub Record);

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
    got: usize,
}

impl Harness for Records {
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
        Ok(RecordSetup {
            contexts: Contexts::new(&self.0.profile())?,
            payload: payload(),
        })
    }

    fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
        let mut pair = Pair::new(&setup.contexts, None)?;
        pair.handshake()
            .context("the handshake before the transfer")?;
        check_handshake(&pair, &setup.contexts.profile, false)?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
            got: 0,
        })
    }

    /// The counted transfer: `write_size`-byte writes by the client, each
    /// read in full by the server before the next.
    fn run(&self, setup: &RecordSetup, mut transfer: Transfer) -> Result<Transfer, HarnessError> {
        let payload = &setup.payload[..];
        let chunk = self.0.write_size;
        let Transfer {
            pair,
            received,
            got: total,
        } = &mut transfer;
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
        *total = got;
        Ok(transfer)
    }

    fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
        let expected = self.0.profile().expected(false);
        expected.check(&both_sides(&transfer.pair))?;
        check_received(&setup.payload, &transfer.received, transfer.got)?;
        let in_flight = transfer.pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the transfer: {in_flight:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pins::{Cipher, TlsVersion};

    fn record(cipher: Cipher, write_size: usize) -> Records {
        Records(Record {
            cipher,
            version: TlsVersion::Tls13,
            write_size,
        })
    }

    #[test]
    fn record_check_rejects_a_flipped_byte() {
        let harness = record(Cipher::Aes128Gcm, 16 * 1024);
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
        let aes256 = record(Cipher::Aes256Gcm, 16 * 1024);
        let setup = aes256.setup().expect("setup");
        let transfer = aes256.prepare(&setup).expect("prepare");
        let transfer = aes256.run(&setup, transfer).expect("run");
        let error = record(Cipher::Aes128Gcm, 16 * 1024)
            .check(&setup, &transfer)
            .expect_err("AES-256 is not AES-128");
        assert!(
            error.to_string().contains("TLS_AES_256_GCM_SHA384"),
            "{error}"
        );
    }

    /// One write is one record of exactly the write's size: full-size
    /// (16 KiB) records for the 16k paths, 1 KiB for the 1k ones.
    #[test]
    fn one_write_is_one_record() {
        for (cipher, size) in [
            (Cipher::Aes128Gcm, 16 * 1024),
            (Cipher::Aes128Gcm, 1024),
            (Cipher::Aes256Gcm, 16 * 1024),
            (Cipher::ChaCha20Poly1305, 1024),
        ] {
            let harness = record(cipher, size);
            let setup = harness.setup().expect("setup");
            let mut transfer = harness.prepare(&setup).expect("prepare");
            let n = transfer
                .pair
                .client
                .ssl_write(&setup.payload[..size])
                .expect("write");
            assert_eq!(n, size);
            assert_eq!(
                transfer.pair.client_records(),
                Some(vec![size + harness.0.overhead() - 5]),
                "{harness:?}"
            );
        }
    }
}
