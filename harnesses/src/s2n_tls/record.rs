//! [`Records`]: the record layer, 1 MiB of application data client to
//! server, for each pinned cipher and write size.

use std::task::Poll;

use regress_measure::{Harness, HarnessError};

use super::check::{both_sides, check_handshake};
use super::config::Configs;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::payload::{check_received, payload, RECORD_BYTES};
use crate::paths::Record;

/// 1 MiB of application data from client to server over an established
/// connection, as its [`Record`] path says: `write_size` bytes per
/// `poll_send`, protected by the pinned suite. AES-GCM records are TLS 1.3;
/// ChaCha20-Poly1305 ones are **TLS 1.2** ECDHE-RSA-CHACHA20-POLY1305 (see
/// the module documentation of `s2n_tls`).
///
/// **Counted:** the client's `poll_send` calls, each given the next
/// `write_size` bytes of the payload, which s2n-tls turns into exactly one
/// record each and encrypts (s2n-tls sends a write as soon as it is made, so
/// a 1 KiB write is a 1 KiB record), and the server's `poll_recv` calls that
/// decrypt them into the receive buffer, plus the transport's copies in
/// between (s2n-tls reads a record's header and its body with two receive
/// calls). The two alternate, one write then one read. This is the
/// steady-state record layer, the cost that scales with bytes
/// ([`Harness::bytes_per_run`] reports 1 MiB, so results read as
/// instructions per byte).
///
/// **Not counted:** configs and the payload (`setup`); the connections, their
/// full handshake and the receive buffer (`prepare`). The handshake is
/// outside the count because the handshake paths measure it; buffers are
/// allocated outside so the count is the library's, not the allocator's.
///
/// **Check:** `prepare` checked the whole handshake (version, suite,
/// secp256r1, rsa_pss_rsae_sha256, RSA-4096); after the run both sides
/// still report the pinned parameters, the server received exactly the
/// bytes sent, and nothing is left in the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Records(pub Record);

/// What [`Records`] runs share: configs and the payload.
#[derive(Debug)]
pub struct RecordSetup {
    configs: Configs,
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

    fn setup(&self) -> Result<RecordSetup, HarnessError> {
        Ok(RecordSetup {
            configs: Configs::new(&self.0.profile())?,
            payload: payload(),
        })
    }

    fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
        let mut pair = Pair::new(&setup.configs, None)?;
        pair.handshake()
            .context("the handshake before the transfer")?;
        check_handshake(&pair, &setup.configs.profile, false)?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
            got: 0,
        })
    }

    fn run(&self, setup: &RecordSetup, mut transfer: Transfer) -> Result<Transfer, HarnessError> {
        let payload = &setup.payload[..];
        let write_size = self.0.write_size;
        let Transfer {
            pair,
            received,
            got: total,
        } = &mut transfer;
        let mut sent = 0;
        let mut got = 0;
        while got < payload.len() {
            let mut progressed = false;
            if sent < payload.len() {
                let end = payload.len().min(sent + write_size);
                match pair.client.poll_send(&payload[sent..end]) {
                    Poll::Ready(Ok(n)) => {
                        sent += n;
                        progressed |= n > 0;
                    }
                    Poll::Ready(Err(e)) => return Err(e).context("client send failed"),
                    Poll::Pending => {}
                }
            }
            match pair.server.poll_recv(&mut received[got..]) {
                Poll::Ready(Ok(0)) => return Err("server saw the connection close".into()),
                Poll::Ready(Ok(n)) => {
                    got += n;
                    progressed = true;
                }
                Poll::Ready(Err(e)) => return Err(e).context("server receive failed"),
                Poll::Pending => {}
            }
            if !progressed {
                return Err(format!("transfer stalled after {sent} sent, {got} received").into());
            }
        }
        *total = got;
        Ok(transfer)
    }

    fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
        let expected = self.0.profile().expected(false);
        expected.check(&both_sides(&transfer.pair)?)?;
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

    const AES128_16K: Record = Record {
        cipher: Cipher::Aes128Gcm,
        version: TlsVersion::Tls13,
        write_size: 16 * 1024,
    };

    /// The records s2n-tls is measured with (ChaCha20 in TLS 1.2).
    fn all() -> Vec<Record> {
        let mut all = Vec::new();
        for cipher in Cipher::ALL {
            for write_size in Record::WRITE_SIZES {
                let version = match cipher {
                    Cipher::ChaCha20Poly1305 => TlsVersion::Tls12,
                    _ => TlsVersion::Tls13,
                };
                all.push(Record {
                    cipher,
                    version,
                    write_size,
                });
            }
        }
        all
    }

    #[test]
    fn record_check_rejects_a_flipped_byte() {
        let harness = Records(AES128_16K);
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

    /// Each cipher's check rejects a transfer made with another cipher.
    #[test]
    fn record_check_rejects_another_cipher() {
        let [aes128, _, aes256, _, chacha, _] = all().try_into().expect("six records");
        let harness = Records(aes128);
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        let output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("aes128");
        for other in [aes256, chacha] {
            assert!(Records(other).check(&setup, &output).is_err(), "{other:?}");
        }
    }

    /// One write of `write_size` bytes is exactly one record of that size:
    /// the client's output after each write is one record of the plaintext
    /// plus the record's overhead.
    #[test]
    fn each_write_is_one_record() {
        for record in all() {
            let harness = Records(record);
            let setup = harness.setup().expect("setup");
            let mut transfer = harness.prepare(&setup).expect("prepare");
            let body = record.write_size + record.overhead() - 5;
            let mut sent = 0;
            while sent < RECORD_BYTES {
                let end = RECORD_BYTES.min(sent + record.write_size);
                match transfer.pair.client.poll_send(&setup.payload[sent..end]) {
                    Poll::Ready(Ok(n)) => {
                        assert_eq!(n, end - sent, "{record:?}: a partial write");
                        sent += n;
                    }
                    other => panic!("{record:?}: send did not complete: {other:?}"),
                }
                assert_eq!(
                    transfer.pair.client_records(),
                    Some(vec![body]),
                    "{record:?}"
                );
                transfer.pair.discard_client_records();
            }
        }
    }
}
